"""pprof decoding against real Go profiles and `go tool pprof` on the same files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loadlab.profiles import pprof
from loadlab.profiles.folded import EMPTY_STACK_FRAME, inclusive_counts, leaf_counts, total_count
from loadlab.profiles.schema import STACK_COLUMNS

FIXTURES = Path(__file__).parent / "fixtures" / "profiles"


def _raw_totals(name: str) -> list[int]:
    """Per-type sums of the sample lines of `go tool pprof -raw` ("  14  140000000: 1 2 3")."""
    totals = None
    text = (FIXTURES / name).read_text()
    samples = text[text.index("Samples:"):text.index("Locations")]
    for line in samples.splitlines():
        match = re.match(r"^\s+((?:\d+\s+)*\d+):", line)
        if match:
            values = [int(value) for value in match[1].split()]
            totals = values if totals is None else [a + b for a, b in zip(totals, values)]
    return totals


def _traces(name: str) -> dict[str, str]:
    """Folded stacks from `go tool pprof -traces`: value text -> stack, summed by the caller."""
    stacks: dict[str, list[str]] = {}
    text = (FIXTURES / name).read_text()
    for block in text.split("-----------+-------------------------------------------------------")[1:]:
        lines = [line for line in block.splitlines() if line.strip()]
        if not lines:
            continue  # after the closing separator
        value, leaf = lines[0].split(None, 1)
        frames = [leaf.strip()] + [line.strip() for line in lines[1:]]
        frames = [frame.removesuffix(" (inline)") for frame in frames]
        stacks.setdefault(";".join(reversed(frames)), []).append(value)
    return stacks


def _milliseconds(value: str) -> float:
    if value.endswith("ms"):
        return float(value[:-2])
    if value.endswith("s"):
        return float(value[:-1]) * 1000
    raise ValueError(value)


@pytest.fixture(scope="module")
def cpu():
    return pprof.read_pprof(FIXTURES / "go-cpu.pb.gz")


def test_cpu_totals_match_go_tool_pprof_raw(cpu):
    assert [t.type for t in pprof.sample_types(cpu)] == ["samples", "cpu"]
    totals = pprof.pprof_totals(cpu)
    assert [totals["samples"], totals["cpu"]] == _raw_totals("go-cpu.pprof-raw.txt")
    assert total_count(pprof.pprof_stacks(cpu)) == totals["samples"]
    assert total_count(pprof.pprof_stacks(cpu, sample_type="cpu")) == totals["cpu"]


def test_cpu_stacks_match_go_tool_pprof_traces(cpu):
    stacks = pprof.pprof_stacks(cpu)
    assert tuple(stacks.columns) == STACK_COLUMNS
    ours = dict(zip(stacks["stack"], stacks["count"]))
    period_ms = cpu.period / 1e6
    theirs = {stack: round(sum(_milliseconds(v) for v in values) / period_ms)
              for stack, values in _traces("go-cpu.pprof-traces.txt").items()}
    assert ours == theirs


def test_the_hot_function_has_most_samples(cpu):
    stacks = pprof.pprof_stacks(cpu)
    # On a busy machine many samples land in runtime.asyncPreempt, called
    # from the hot loop when the GC preempts it: the hot function is then
    # the leaf's caller, so "most samples" is counted inclusively.
    assert inclusive_counts(stacks)["main.hotXorshift"] > total_count(stacks) / 2
    leaves = leaf_counts(stacks)
    assert leaves[leaves.index.str.startswith("main.")].index[0] == "main.hotXorshift"
    above_hot = stacks[stacks["stack"].str.contains("main.hotXorshift;")]
    assert set(above_hot["stack"].str.rsplit(";", n=1).str[-1]) <= {"runtime.asyncPreempt"}


def test_profile_metadata(cpu):
    assert pprof.pprof_duration_s(cpu) == pytest.approx(2.0, abs=0.1)  # gofixture -duration 2s
    assert cpu.period == 10_000_000  # 100 Hz, in cpu nanoseconds
    assert pprof.pprof_start_s(cpu) > 1.7e9


def test_goroutine_profile_count_and_stacks():
    profile = pprof.read_pprof(FIXTURES / "go-goroutine.pb.gz")
    stacks = pprof.pprof_stacks(profile)
    theirs = {stack: sum(int(v) for v in values) for stack, values in _traces("go-goroutine.pprof-traces.txt").items()}
    ours = dict(zip(stacks["stack"], stacks["count"]))
    # -traces leaves out samples without a stack; pprof's totals (and ours) count them.
    empty = ours.pop(EMPTY_STACK_FRAME, 0)
    assert ours == theirs
    assert pprof.goroutine_count(profile) == sum(theirs.values()) + empty
    sleepers = [count for stack, count in ours.items() if stack.endswith("main.sleepingWorker;runtime.chanrecv1;runtime.chanrecv;runtime.gopark")]
    assert sleepers == [8]  # gofixture -sleepers 8
    counts = pprof.goroutine_thread_counts([profile], trial=1)
    assert counts["count"].tolist() == [pprof.goroutine_count(profile)] and counts["t_s"].tolist() == [0.0]


def test_goroutine_count_refuses_other_profiles(cpu):
    with pytest.raises(ValueError, match="not a goroutine profile"):
        pprof.goroutine_count(cpu)


def test_unknown_sample_type_names_the_ones_there(cpu):
    with pytest.raises(ValueError, match="samples"):
        pprof.pprof_stacks(cpu, sample_type="inuse_space")


def test_uncompressed_bytes_parse_the_same(cpu):
    import gzip

    plain = gzip.decompress((FIXTURES / "go-cpu.pb.gz").read_bytes())
    assert pprof.parse_pprof(plain) == cpu
