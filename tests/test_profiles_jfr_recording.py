"""The binary .jfr reader against the JDK's own tools on one real recording.

Fixtures (tests/fixtures/profiles/README.md, programs/capture-jfr-recording.sh):
jfr-jdk21-events.jfr.gz is an OpenJDK 21 recording of JfrFixture cut by
`jfr scrub` to the events the capture keeps; jfr-jdk21-events.json.gz is
`jfr print --json --stack-depth 64` of that same file and
jfr-jdk21-events-summary.txt its `jfr summary`. Every check compares what
read_jfr_recording gives with what the JDK printed.
"""

from __future__ import annotations

import gzip
import lzma
import math
import re
import shutil
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from loadlab import profile_tables, profiles
from loadlab.profiles import jfr, jfr_captures
from loadlab.profiles.jfr_recording import JfrFormatError, _duration, read_jfr_recording

FIXTURES = Path(__file__).parent / "fixtures" / "profiles"
RECORDING = FIXTURES / "jfr-jdk21-events.jfr.gz"
PRINTED = FIXTURES / "jfr-jdk21-events.json.gz"
SUMMARY = FIXTURES / "jfr-jdk21-events-summary.txt"
ORIGIN = "2000-01-01T00:00:00Z"
NO_DURATION = "PT-2562047788015215H-30M-8S"  # java.time.Duration.ofSeconds(Long.MIN_VALUE)


@pytest.fixture(scope="module")
def binary_events():
    return read_jfr_recording(RECORDING)


@pytest.fixture(scope="module")
def printed_events():
    return jfr.read_jfr_json(PRINTED)


def summary_counts() -> dict[str, int]:
    """Event type -> count from `jfr summary`'s table ("jdk.X   count   bytes")."""
    counts = {}
    for line in SUMMARY.read_text().splitlines():
        match = re.match(r"^\s*(jdk\.\w+)\s+(\d+)\s+\d+\s*$", line)
        if match:
            counts[match[1]] = int(match[2])
    return counts


def test_every_event_jfr_summary_counts_is_read(binary_events):
    counts = Counter(event["type"] for event in binary_events)
    expected = {name: count for name, count in summary_counts().items()
                if count and name not in ("jdk.Metadata", "jdk.Checkpoint")}
    assert expected, "the summary fixture lists no events"
    assert dict(counts) == expected


def test_the_same_events_as_jfr_print(binary_events, printed_events):
    assert Counter(e["type"] for e in binary_events) == Counter(e["type"] for e in printed_events)


def _comparable(value):
    """A value as both sources give it, with instants and durations as numbers (the texts may differ in form)."""
    if isinstance(value, dict):
        return {key: _comparable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_comparable(item) for item in value]
    if isinstance(value, str):
        # JFR's "no value" (Long.MIN_VALUE): jfr print shows Instant.MIN and a Duration of Long.MIN_VALUE
        # seconds, the reader None.
        if value.startswith("-999999999-") or value == NO_DURATION:
            return None
        if re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$", value):
            return ("instant", pd.Timestamp(value).value)
        if re.match(r"^-?PT", value):
            return ("duration", round(jfr.duration_s(value) * 1e9))
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def _by_key(events):
    """(type, start) -> the events' values: jfr print and the file need not list events in the same order."""
    keyed = {}
    for event in events:
        keyed.setdefault((event["type"], _comparable(event["values"].get("startTime"))), []).append(
            _comparable(event["values"]))
    return {key: sorted(values, key=repr) for key, values in keyed.items()}


def test_every_field_of_every_event_matches_jfr_print(binary_events, printed_events):
    assert _by_key(binary_events) == _by_key(printed_events)


def _in_order(table: pd.DataFrame) -> pd.DataFrame:
    return table.sort_values([c for c in ("t_s", "gc_id", "metric", "frame") if c in table.columns], ignore_index=True)


def test_the_tables_match_those_from_jfr_print(binary_events, printed_events):
    for line_numbers in (False, True):
        ours = jfr.jfr_stacks(binary_events, line_numbers=line_numbers, thread_root=True)
        theirs = jfr.jfr_stacks(printed_events, line_numbers=line_numbers, thread_root=True)
        pd.testing.assert_frame_equal(ours.sort_values("stack", ignore_index=True),
                                      theirs.sort_values("stack", ignore_index=True))
    for table in (jfr.jfr_gc_events, jfr.jfr_gc_pauses, jfr.jfr_thread_counts, jfr.jfr_pinned):
        # Row order follows event order, which jfr print does not keep (it sorts by time).
        ours = _in_order(table(binary_events, origin=ORIGIN))
        theirs = _in_order(table(printed_events, origin=ORIGIN))
        pd.testing.assert_frame_equal(ours, theirs, check_like=True)
    assert len(jfr.jfr_stacks(binary_events)) > 0
    assert len(jfr.jfr_gc_events(binary_events, origin=ORIGIN)) > 0


def test_the_fixture_programs_own_functions_are_sampled(binary_events):
    stacks = jfr.jfr_stacks(binary_events)
    on_top = Counter()
    for stack, count in zip(stacks["stack"], stacks["count"]):
        on_top[stack.split(";")[-1]] += int(count)
    assert any("JfrFixture.hotXorshift" in stack for stack in stacks["stack"])
    assert on_top.most_common(1)[0][0].startswith("JfrFixture.")


def test_event_types_keeps_only_those_asked_for(binary_events):
    only = read_jfr_recording(RECORDING, ["jdk.GarbageCollection"])
    assert only and {event["type"] for event in only} == {"jdk.GarbageCollection"}
    assert len(only) == sum(event["type"] == "jdk.GarbageCollection" for event in binary_events)
    assert read_jfr_recording(RECORDING, ["jdk.NoSuchEvent"]) == []


def test_not_a_recording_is_a_clear_error(tmp_path):
    path = tmp_path / "x.jfr"
    path.write_bytes(b"PK\x03\x04 not a recording")
    with pytest.raises(JfrFormatError, match="FLR"):
        read_jfr_recording(path)


def test_a_recording_cut_short_is_a_clear_error():
    data = gzip.decompress(RECORDING.read_bytes())
    with pytest.raises(JfrFormatError, match="cut short"):
        read_jfr_recording(data[: len(data) // 2])


@pytest.mark.parametrize("nanos, text", [
    (0, "PT0S"), (3_696_475, "PT0.003696475S"), (2_500_000_000, "PT2.5S"), (62_500_000_000, "PT1M2.5S"),
    (3_600_000_000_000, "PT1H"), (-1_500_000_000, "PT-1.5S"),
])
def test_durations_print_as_java_time_duration_does(nanos, text):
    assert _duration(nanos) == text
    assert round(jfr.duration_s(text) * 1e9) == nanos


def test_captured_events_come_from_the_recording_when_both_forms_are_there(tmp_path, binary_events):
    assert profiles.read_captured_jfr(tmp_path, "samples") is None
    shutil.copy(PRINTED, tmp_path / "jfr-samples.json.gz")
    assert profiles.captured_jfr_file(tmp_path, "samples").name == "jfr-samples.json.gz"
    shutil.copy(RECORDING, tmp_path / jfr_captures.RECORDING_FILE)
    assert profiles.captured_jfr_file(tmp_path, "samples").name == jfr_captures.RECORDING_FILE
    samples = profiles.read_captured_jfr(tmp_path, "samples")
    assert {event["type"] for event in samples} == {"jdk.ExecutionSample"}
    runtime = profiles.read_captured_jfr(tmp_path, "runtime")
    assert {event["type"] for event in runtime} <= set(jfr_captures.RUNTIME_EVENTS)
    with pytest.raises(ValueError, match="kind must be one of"):
        profiles.read_captured_jfr(tmp_path, "everything")


def test_a_printed_capture_recompressed_with_xz_reads_as_its_gzip_original(tmp_path):
    # The committed runs before 2026-11-25 keep their JSON prints as .json.xz (the data budget).
    gzip_dir, xz_dir = tmp_path / "gzip", tmp_path / "xz"
    gzip_dir.mkdir()
    xz_dir.mkdir()
    shutil.copy(PRINTED, gzip_dir / "jfr-samples.json.gz")
    (xz_dir / "jfr-samples.json.xz").write_bytes(lzma.compress(gzip.decompress(PRINTED.read_bytes())))
    assert profiles.captured_jfr_file(xz_dir, "samples").name == "jfr-samples.json.xz"
    assert profiles.read_captured_jfr(xz_dir, "samples") == profiles.read_captured_jfr(gzip_dir, "samples")
    pd.testing.assert_frame_equal(profiles.captured_jfr_stacks(xz_dir), profiles.captured_jfr_stacks(gzip_dir))


def test_blocking_events_read_the_same_from_either_form(tmp_path):
    binary_dir, printed_dir = tmp_path / "binary", tmp_path / "printed"
    binary_dir.mkdir()
    printed_dir.mkdir()
    shutil.copy(RECORDING, binary_dir / jfr_captures.LOCK_RECORDING_FILE)
    shutil.copy(PRINTED, printed_dir / "jfr-locks.json.gz")
    ours = profile_tables.blocking_events(binary_dir, 1)
    theirs = profile_tables.blocking_events(printed_dir, 1)
    theirs = theirs[theirs["type"].isin(jfr_captures.LOCK_EVENTS)].reset_index(drop=True)
    assert len(ours) > 0, "the fixture program sleeps 50 ms in a virtual thread: jdk.ThreadSleep events"
    pd.testing.assert_frame_equal(ours.sort_values(["start_unix_s", "stack"], ignore_index=True),
                                  theirs.sort_values(["start_unix_s", "stack"], ignore_index=True))
