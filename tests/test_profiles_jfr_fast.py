"""The fast path from a .jfr recording's bytes to the harness's tables equals the general one.

read_jfr_stacks (and captured_jfr_stacks, what profile_tables.cpu_stacks
calls) folds stacks straight from the bytes; jfr_stacks on the events of
read_jfr_recording (and on the JDK's own `jfr print --json` of the same
file) is the reference: same rows, same counts, whatever the window, line
numbers or event type. Fixtures: tests/fixtures/profiles/README.md
(jfr-jdk21-events.jfr.gz, an OpenJDK 21 recording, and its JSON print).
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pandas as pd
import pytest

from loadlab import profile_tables, profiles
from loadlab.profiles import jfr, jfr_captures, jfr_recording
from loadlab.profiles.jfr_recording import read_jfr_recording

FIXTURES = Path(__file__).parent / "fixtures" / "profiles"
RECORDING = FIXTURES / "jfr-jdk21-events.jfr.gz"
PRINTED = FIXTURES / "jfr-jdk21-events.json.gz"
STACK_EVENTS = ("jdk.ExecutionSample", "jdk.VirtualThreadPinned", "jdk.ThreadSleep")


@pytest.fixture(scope="module")
def events():
    return read_jfr_recording(RECORDING)


@pytest.fixture(scope="module")
def printed_events():
    return jfr.read_jfr_json(PRINTED)


def _start_seconds(events, event_type):
    """Unix seconds of every startTime of one type, as the general path computes them, sorted."""
    chosen = [event for event in events if event["type"] == event_type]
    starts = pd.to_datetime(pd.Series([event["values"]["startTime"] for event in chosen]), format="ISO8601", utc=True)
    return sorted((starts.dt.as_unit("ns").astype("int64") / 1e9).tolist())


def _windows(events, event_type):
    """None, everything, nothing, and windows whose ends are exactly some events' startTimes (ends included)."""
    seconds = _start_seconds(events, event_type)
    windows = [None, (0.0, 4e9), (0.0, 1.0)]
    if seconds:
        third = len(seconds) // 3
        windows += [(seconds[third], seconds[2 * third]), (seconds[0], seconds[0]), (seconds[-1], seconds[-1] + 1)]
    return windows


@pytest.mark.parametrize("event_type", STACK_EVENTS)
@pytest.mark.parametrize("line_numbers", [False, True])
def test_fast_stacks_equal_jfr_stacks_of_the_events(events, event_type, line_numbers):
    assert any(event["type"] == event_type for event in events), f"the fixture has no {event_type}"
    for window in _windows(events, event_type):
        fast = jfr.read_jfr_stacks(RECORDING, event_type, line_numbers=line_numbers, window_unix_s=window)
        general = jfr.jfr_stacks(jfr.events_in_window(events, window), event_type, line_numbers=line_numbers)
        pd.testing.assert_frame_equal(fast, general)
    whole = jfr.read_jfr_stacks(RECORDING, event_type, line_numbers=line_numbers)
    assert whole["count"].sum() == sum(event["type"] == event_type and bool(event["values"].get("stackTrace"))
                                       for event in events)


@pytest.mark.parametrize("line_numbers", [False, True])
def test_fast_stacks_equal_those_from_jfr_print(printed_events, line_numbers):
    for window in _windows(printed_events, "jdk.ExecutionSample"):
        fast = jfr.read_jfr_stacks(RECORDING, line_numbers=line_numbers, window_unix_s=window)
        printed = jfr.jfr_stacks(jfr.events_in_window(printed_events, window), line_numbers=line_numbers)
        pd.testing.assert_frame_equal(fast, printed)


def test_the_harness_cpu_stacks_are_the_same_from_the_recording_and_from_its_print(tmp_path, events):
    binary_dir, printed_dir = tmp_path / "binary", tmp_path / "printed"
    binary_dir.mkdir()
    printed_dir.mkdir()
    shutil.copy(RECORDING, binary_dir / jfr_captures.RECORDING_FILE)
    shutil.copy(PRINTED, printed_dir / "jfr-samples.json.gz")
    seconds = _start_seconds(events, "jdk.ExecutionSample")
    for window in (None, (seconds[len(seconds) // 4], seconds[3 * len(seconds) // 4])):
        ours = profile_tables.cpu_stacks(binary_dir, 3, window)
        theirs = profile_tables.cpu_stacks(printed_dir, 3, window)
        # What cpu_stacks computed before the fast path: every event read, cut to the window, then folded.
        before = jfr.jfr_stacks(jfr.events_in_window(profiles.read_captured_jfr(binary_dir, "samples"), window))
        assert len(ours) > 0 and (ours["source"] == "jfr").all()
        pd.testing.assert_frame_equal(ours, theirs)
        pd.testing.assert_frame_equal(ours[["stack", "samples"]].reset_index(drop=True),
                                      before.rename(columns={"count": "samples"}), check_dtype=False)
        pd.testing.assert_frame_equal(ours["stack"].reset_index(drop=True).to_frame(), before[["stack"]])


def test_runtime_tables_do_not_need_every_stack_trace(events):
    """The runtime read (GC, threads, pinning) decodes only the stack traces its events name, and its tables
    equal those of the full read."""
    runtime = read_jfr_recording(RECORDING, jfr_captures.RUNTIME_EVENTS)
    full = [event for event in events if event["type"] in jfr_captures.RUNTIME_EVENTS]
    assert len(runtime) == len(full) > 0
    for table in (jfr.jfr_gc_events, jfr.jfr_gc_pauses, jfr.jfr_thread_counts, jfr.jfr_pinned):
        pd.testing.assert_frame_equal(table(runtime, origin="2000-01-01T00:00:00Z"),
                                      table(full, origin="2000-01-01T00:00:00Z"))
    pinned = [event for event in runtime if event["type"] == "jdk.VirtualThreadPinned"]
    assert pinned and all(event["values"]["stackTrace"]["frames"] for event in pinned)
    chunk = jfr_recording._Chunk(gzip.decompress(RECORDING.read_bytes()), 0)
    stack_type = chunk.by_name["jdk.types.StackTrace"].type_id
    assert isinstance(chunk.pools[stack_type], jfr_recording._LazyPool)
    assert len(chunk.pools[stack_type]) > 0 and dict.__len__(chunk.pools[stack_type]) == 0  # nothing decoded yet


def test_the_regular_expression_fallback_gives_the_same_stacks(monkeypatch):
    """Where a stack ends is told by numpy (_value_ends) unless the bytes do not allow it; the per-stack
    regular-expression match used then gives the same table."""
    fast = jfr.read_jfr_stacks(RECORDING, line_numbers=True)
    monkeypatch.setattr(jfr_recording, "_value_ends", lambda data, start, end: None)
    pd.testing.assert_frame_equal(jfr.read_jfr_stacks(RECORDING, line_numbers=True), fast)


def test_a_layout_the_fast_path_does_not_read_falls_back_to_the_general_reader(monkeypatch):
    fast = jfr.read_jfr_stacks(RECORDING)
    monkeypatch.setattr(jfr_recording._Chunk, "stack_counts", lambda self, *arguments: None)
    pd.testing.assert_frame_equal(jfr.read_jfr_stacks(RECORDING), fast)


def test_every_chunk_of_a_recording_is_counted():
    data = gzip.decompress(RECORDING.read_bytes())
    twice = data + data  # a file is chunks, each self-contained: two copies are a valid two-chunk recording
    once = jfr.read_jfr_stacks(data)
    doubled = jfr.read_jfr_stacks(twice)
    pd.testing.assert_frame_equal(doubled, jfr.jfr_stacks(read_jfr_recording(twice, ["jdk.ExecutionSample"])))
    assert doubled["stack"].tolist() == once["stack"].tolist()
    assert (doubled["count"] == 2 * once["count"]).all()


def test_captured_stacks_when_nothing_was_captured(tmp_path):
    assert profiles.captured_jfr_stacks(tmp_path) is None


def test_stacks_jfr_cut_get_the_truncated_root_on_both_paths():
    """The fixture's stacks are whole; with every stack trace's truncated flag set in the bytes, both paths
    put "[truncated]" at the root of every stack, and agree."""
    data = bytearray(gzip.decompress(RECORDING.read_bytes()))
    chunk = jfr_recording._Chunk(bytes(data), 0)
    stack_type = chunk.by_name["jdk.types.StackTrace"]
    assert stack_type.fields[0].name == "truncated"
    for offset, _end in chunk.pool_spans(stack_type.type_id).values():
        data[offset] = 1
    cut = bytes(data)
    fast = jfr.read_jfr_stacks(cut)
    assert len(fast) > 0 and fast["stack"].str.startswith(jfr.TRUNCATED_FRAME + ";").all()
    pd.testing.assert_frame_equal(fast, jfr.jfr_stacks(read_jfr_recording(cut, ["jdk.ExecutionSample"])))
