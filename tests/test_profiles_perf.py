"""`perf script` folding against a real capture (perf record -e cpu-clock -g on gofixture)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loadlab.profiles import perf
from loadlab.profiles.folded import inclusive_counts, leaf_counts, total_count
from loadlab.profiles.schema import STACK_COLUMNS

FIXTURES = Path(__file__).parent / "fixtures" / "profiles"


def _perf_report_samples() -> int:
    match = re.search(r"SAMPLE events:\s+(\d+)", (FIXTURES / "perf-report-stats.txt").read_text())
    return int(match[1])


@pytest.fixture(scope="module")
def text():
    return (FIXTURES / "perf-script.txt").read_text()


def test_total_matches_perf_report(text):
    stacks = perf.parse_perf_script(text)
    assert tuple(stacks.columns) == STACK_COLUMNS
    assert total_count(stacks) == _perf_report_samples()


def test_the_hot_function_has_most_samples(text):
    stacks = perf.parse_perf_script(text)
    leaves = leaf_counts(stacks)
    assert leaves.index[0] == "main.hotXorshift"
    assert inclusive_counts(stacks)["main.hotXorshift"] > total_count(stacks) / 2


def test_root_is_the_command_and_offsets_are_gone(text):
    stacks = perf.parse_perf_script(text)
    frames = {frame for stack in stacks["stack"] for frame in stack.split(";")}
    assert set(stacks["stack"].str.split(";").str[0]) == {"gofixture"}
    assert not any(re.search(r"\+0x[0-9a-f]+$", frame) for frame in frames)
    # Root first: the goroutine entry is next to the command, the hot loop at the end.
    hot = stacks[stacks["stack"].str.endswith("main.hotXorshift")]
    assert hot["stack"].str.startswith("gofixture;runtime.goexit").all()
    without_root = perf.parse_perf_script(text, process_root=False)
    assert not without_root["stack"].str.startswith("gofixture").any()
    assert total_count(without_root) == total_count(stacks)


def test_kernel_frames_can_be_marked(text):
    plain = perf.parse_perf_script(text)
    marked = perf.parse_perf_script(text, annotate_kernel=True)
    kernel_frames = {line.split()[1].split("+")[0] for line in text.splitlines()
                     if line.endswith("([kernel.kallsyms])")}
    assert kernel_frames, "the capture has kernel frames (page faults, futex)"
    marked_frames = {frame for stack in marked["stack"] for frame in stack.split(";")}
    assert {f"{name}_[k]" for name in kernel_frames} <= marked_frames
    assert total_count(marked) == total_count(plain)


def test_period_weight(text):
    periods = [int(match[1]) for match in re.finditer(r"^\S.*?\s(\d+) cpu-clock:", text, re.MULTILINE)]
    assert len(periods) == _perf_report_samples()
    assert total_count(perf.parse_perf_script(text, weight="period")) == sum(periods)


def test_event_filter(text):
    assert total_count(perf.parse_perf_script(text, event="cpu-clock")) == _perf_report_samples()
    assert total_count(perf.parse_perf_script(text, event="task-clock")) == 0


def test_bad_weight_is_refused(text):
    with pytest.raises(ValueError, match="weight"):
        perf.parse_perf_script(text, weight="cycles")
