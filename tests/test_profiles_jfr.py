"""JFR `jfr print --json` parsing against a real OpenJDK 21 recording and `jfr summary` of it."""

from __future__ import annotations

import gzip
import json
import math
import re
from pathlib import Path

import pytest

from loadlab.profiles import jfr
from loadlab.profiles.folded import leaf_counts, total_count
from loadlab.profiles.schema import GC_EVENT_COLUMNS, GC_EVENT_DTYPES, THREAD_COUNT_COLUMNS

FIXTURES = Path(__file__).parent / "fixtures" / "profiles"
PRINTED = [
    "jdk.GarbageCollection",
    "jdk.GCHeapSummary",
    "jdk.GCPhasePause",
    "jdk.ExecutionSample",
    "jdk.JavaThreadStatistics",
    "jdk.VirtualThreadPinned",
]


@pytest.fixture(scope="module")
def events():
    return jfr.read_jfr_json(FIXTURES / "jfr-jdk21.json.gz")


@pytest.fixture(scope="module")
def raw():
    """The same JSON read by the standard library alone, for independent expectations."""
    return json.loads(gzip.decompress((FIXTURES / "jfr-jdk21.json.gz").read_bytes()))["recording"]["events"]


def _summary_counts() -> dict[str, int]:
    counts = {}
    for line in (FIXTURES / "jfr-jdk21-summary.txt").read_text().splitlines():
        match = re.match(r"^\s*(jdk\.\w+)\s+(\d+)\s+\d+\s*$", line)
        if match:
            counts[match[1]] = int(match[2])
    return counts


def _seconds(duration: str) -> float:
    assert duration.startswith("PT") and duration.endswith("S")
    return float(duration[2:-1])


def test_event_counts_match_jfr_summary(events):
    summary = _summary_counts()
    counts = jfr.event_counts(events)
    assert {name: int(counts.get(name, 0)) for name in PRINTED} == {name: summary[name] for name in PRINTED}


def test_gc_events_match_the_events(events, raw):
    gc = jfr.jfr_gc_events(events, trial=5)
    collections = [e["values"] for e in raw if e["type"] == "jdk.GarbageCollection"]
    heap = {(e["values"]["gcId"], e["values"]["when"]): e["values"]["heapUsed"]
            for e in raw if e["type"] == "jdk.GCHeapSummary"}
    assert tuple(gc.columns) == GC_EVENT_COLUMNS
    assert {column: str(dtype) for column, dtype in gc.dtypes.items()} == GC_EVENT_DTYPES
    assert len(gc) == len(collections) == _summary_counts()["jdk.GarbageCollection"]
    for row, values in zip(gc.itertuples(), collections):
        assert row.gc_id == values["gcId"]
        assert row.pause_s == pytest.approx(_seconds(values["sumOfPauses"]))
        assert row.heap_before_bytes == heap[(values["gcId"], "Before GC")]
        assert row.heap_after_bytes == heap[(values["gcId"], "After GC")]
        assert row.cause == values["cause"] and row.collector == values["name"]
    # JfrFixture ends with System.gc(): one full collection with that cause.
    assert gc[gc["cause"] == "System.gc()"]["collector"].tolist() == ["G1Full"]
    assert gc["t_s"].min() >= 0 and gc["t_s"].is_monotonic_increasing


def test_pause_rows_add_up_to_each_collections_pauses(events):
    pauses = jfr.jfr_gc_pauses(events)
    cycles = jfr.jfr_gc_events(events)
    assert len(pauses) == _summary_counts()["jdk.GCPhasePause"]
    assert set(pauses["kind"]) == {"pause"}
    per_cycle = pauses.groupby("gc_id")["pause_s"].sum()
    for row in cycles.itertuples():
        assert per_cycle[row.gc_id] == pytest.approx(row.pause_s)


def test_origin_moves_t_s(events):
    default = jfr.jfr_gc_events(events)
    first = min(e["values"]["startTime"] for e in events)
    assert jfr.jfr_gc_events(events, origin=first)["t_s"].tolist() == pytest.approx(default["t_s"].tolist())
    shifted = jfr.jfr_gc_events(events, origin=jfr.pd.Timestamp(first) - jfr.pd.Timedelta(seconds=10))
    assert (shifted["t_s"] - default["t_s"]).tolist() == pytest.approx([10.0] * len(default))


def test_thread_counts(events, raw):
    counts = jfr.jfr_thread_counts(events, trial=1)
    readings = [e["values"] for e in raw if e["type"] == "jdk.JavaThreadStatistics"]
    assert tuple(counts.columns) == THREAD_COUNT_COLUMNS
    assert len(counts) == 4 * len(readings)
    active = counts[counts["metric"] == "java_threads_active"]["count"].tolist()
    assert active == [r["activeCount"] for r in readings]
    assert min(active) >= 3  # main and JfrFixture's two platform workers, at least


def test_execution_samples_fold_with_the_hot_method_on_top(events):
    stacks = jfr.jfr_stacks(events)
    assert total_count(stacks) == _summary_counts()["jdk.ExecutionSample"]
    leaves = leaf_counts(stacks)
    assert leaves.index[0] == "JfrFixture.hotXorshift" and leaves.iloc[0] > total_count(stacks) / 2
    # Root first: the worker threads start in Thread.run.
    hot = stacks[stacks["stack"].str.endswith("JfrFixture.hotXorshift")]
    assert hot["stack"].str.startswith("java.lang.Thread.run").any()


def test_stack_options(events):
    plain = jfr.jfr_stacks(events)
    with_lines = jfr.jfr_stacks(events, line_numbers=True)
    with_threads = jfr.jfr_stacks(events, thread_root=True)
    assert total_count(with_lines) == total_count(with_threads) == total_count(plain)
    assert with_lines["stack"].str.contains(r"hotXorshift:\d+$").any()
    roots = set(with_threads["stack"].str.split(";").str[0])
    assert roots & {"pool-1-thread-1", "pool-1-thread-2"}


def test_pinned_virtual_threads(events):
    pinned = jfr.jfr_pinned(events, trial=2)
    assert len(pinned) == _summary_counts()["jdk.VirtualThreadPinned"] > 0
    assert set(pinned["frame"]) == {"JfrFixture.pinnedSleep"}
    # JFR's default threshold for this event is 20 ms; JfrFixture sleeps 50 ms.
    assert (pinned["duration_s"] >= 0.02).all()
    where = jfr.jfr_stacks(events, event_type="jdk.VirtualThreadPinned")
    assert total_count(where) == len(pinned)
    assert where["stack"].str.contains("JfrFixture.pinnedSleep").all()


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("PT0.003696475S", 0.003696475), ("PT1M2.5S", 62.5), ("PT2H", 7200.0), ("PT0S", 0.0), ("PT-0.5S", -0.5)],
)
def test_iso_durations(text, seconds):
    assert jfr.duration_s(text) == pytest.approx(seconds)


def test_absent_duration_is_nan_and_garbage_is_an_error():
    assert math.isnan(jfr.duration_s(None))
    with pytest.raises(ValueError):
        jfr.duration_s("3 ms")


def test_not_a_jfr_print():
    with pytest.raises(ValueError, match="recording.events"):
        jfr.parse_jfr_json('{"events": []}')


def test_stacks_cut_by_jfr_print_are_reported():
    # The same recording printed without --stack-depth: jfr print keeps 5 frames.
    depth5 = jfr.read_jfr_json(FIXTURES / "jfr-jdk21-depth5.json.gz")
    with pytest.warns(UserWarning, match="--stack-depth"):
        stacks = jfr.jfr_stacks(depth5)
    assert total_count(stacks) == _summary_counts()["jdk.ExecutionSample"]
    assert stacks["stack"].str.count(";").max() == 4


def test_whole_stacks_give_no_warning(events, recwarn):
    jfr.jfr_stacks(events)
    assert not [w for w in recwarn if "stack-depth" in str(w.message)]
