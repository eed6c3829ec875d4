"""gctrace parsing against real captures (tests/fixtures/profiles/README.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from loadlab.profiles import gctrace, go_metrics
from loadlab.profiles.schema import GC_EVENT_COLUMNS, GC_EVENT_DTYPES

FIXTURES = Path(__file__).parent / "fixtures" / "profiles"
CLEAN_CAPTURES = ["gctrace-go1.15.txt", "gctrace-go1.24.txt", "gctrace-go1.26.txt"]


def _whole_lines(name: str) -> list[str]:
    """The capture's uncut gctrace lines, found by the simplest rule (not the parser's)."""
    return [
        line for line in (FIXTURES / name).read_text().splitlines()
        if line.startswith("gc ") and (line.endswith(" P") or line.endswith(" P (forced)"))
    ]


def _fields_by_splitting(line: str) -> dict:
    """An independent reading of one whole line: split on ", " and spaces, no regular expressions."""
    sections = line.split(", ")
    head = sections[0].split(" ")  # ["gc", N, "@Ts", "P%:", "a+b+c", "ms", "clock"]
    clock_ms = [float(value) for value in head[4].split("+")]
    heap = sections[2].split(" ")[0].split("->")
    return {
        "gc_id": int(head[1]),
        "t_s": float(head[2][1:-1]),
        "pause_s": (clock_ms[0] + clock_ms[2]) / 1e3,
        "heap_before_bytes": int(heap[0]) << 20,
        "heap_after_bytes": int(heap[2]) << 20,
        "forced": line.endswith("(forced)"),
    }


@pytest.mark.parametrize("name", CLEAN_CAPTURES)
def test_one_row_per_line_with_the_lines_values(name):
    lines = _whole_lines(name)
    detail = gctrace.read_gctrace(FIXTURES / name)
    events = gctrace.gctrace_gc_events(detail, trial=4)
    # The Go 1.24 capture (stdout and stderr in one file) ends with a line
    # cut by the "sink" print and the program's exit: it cannot be read.
    assert len(detail) == len(lines) + detail["repaired"].sum()
    assert len(lines) > 10 and detail["complete"].all()
    whole = events[~detail["repaired"].to_numpy()]
    for line, (_, row) in zip(lines, whole.iterrows(), strict=True):
        expected = _fields_by_splitting(line)
        assert row["gc_id"] == expected["gc_id"]
        assert row["t_s"] == pytest.approx(expected["t_s"])
        assert row["pause_s"] == pytest.approx(expected["pause_s"])
        assert row["heap_before_bytes"] == expected["heap_before_bytes"]
        assert row["heap_after_bytes"] == expected["heap_after_bytes"]
        assert row["cause"] == ("forced" if expected["forced"] else "automatic")


@pytest.mark.parametrize("name", CLEAN_CAPTURES)
def test_gc_events_shape(name):
    events = gctrace.gctrace_gc_events(gctrace.read_gctrace(FIXTURES / name), trial=2)
    assert tuple(events.columns) == GC_EVENT_COLUMNS
    assert {column: str(dtype) for column, dtype in events.dtypes.items()} == GC_EVENT_DTYPES
    assert (events["runtime"] == "go").all() and (events["trial"] == 2).all()
    assert set(events["kind"]) == {"cycle"} and set(events["source"]) == {"gctrace"}
    assert events["t_s"].is_monotonic_increasing
    assert (events["pause_s"] >= 0).all()
    # Both programs end with runtime.GC(); whether its line is printed before
    # the program exits is a race (the Go 1.15 capture lost it), so count the file.
    forced_lines = sum(line.endswith("(forced)") for line in _whole_lines(name))
    assert (events["cause"] == "forced").sum() == forced_lines


def test_forms_with_and_without_stacks_and_globals():
    old = gctrace.read_gctrace(FIXTURES / "gctrace-go1.15.txt")
    new = gctrace.read_gctrace(FIXTURES / "gctrace-go1.26.txt")
    assert old["stacks_bytes"].isna().all() and old["globals_bytes"].isna().all()
    assert old["procs"].notna().all()
    assert new["stacks_bytes"].notna().all() and new["globals_bytes"].notna().all()
    assert (new["procs"] == 2).all()


def test_cycle_count_matches_the_same_process_runtime_metrics():
    # gctrace-go1.26.txt and go-expvar-end.json come from one run of gofixture.
    detail = gctrace.read_gctrace(FIXTURES / "gctrace-go1.26.txt")
    expvars = go_metrics.read_expvar(FIXTURES / "go-expvar-end.json")
    scalars = go_metrics.scalar_metrics(expvars)
    assert len(detail) == scalars["/gc/cycles/total:gc-cycles"] == expvars["memstats"]["NumGC"]
    assert detail["forced"].sum() == scalars["/gc/cycles/forced:gc-cycles"]


def test_lines_cut_by_other_output_are_rejoined():
    # Captured with stdout and stderr in one file while the program printed
    # every 20 us; the capture script retried until a gctrace line was cut.
    name = "gctrace-go1.26-interleaved.txt"
    text = (FIXTURES / name).read_text()
    cut = [line for line in text.splitlines()
           if re.search(r"gc \d+ @", line) and not re.search(r" P( \(forced\))?$", line)]
    assert cut, "the fixture must hold at least one cut gctrace line"
    detail = gctrace.read_gctrace(FIXTURES / name)
    assert detail["gc_id"].tolist() == list(range(1, len(detail) + 1))
    assert detail["complete"].all()
    assert detail["repaired"].sum() >= 1
    assert detail["forced"].sum() == 1 and detail["forced"].iloc[-1]


def test_a_line_cut_for_good_keeps_what_it_has():
    # A real line, cut in the test after "MB goal": the core fields survive, the rest is <NA>.
    line = _whole_lines("gctrace-go1.26.txt")[5]
    cut_at = line.index(" MB goal") + len(" MB goal")
    detail = gctrace.parse_gctrace(line[:cut_at] + "garbage\nnot a continuation\n")
    assert len(detail) == 1
    row = detail.iloc[0]
    assert not row["complete"] and pd.isna(row["procs"]) and pd.isna(row["forced"])
    assert row["heap_live_bytes"] == _fields_by_splitting(line)["heap_after_bytes"]
    events = gctrace.gctrace_gc_events(detail)
    assert pd.isna(events["cause"].iloc[0])


def test_prefixes_before_the_line_are_ignored():
    line = _whole_lines("gctrace-go1.24.txt")[0]
    detail = gctrace.parse_gctrace("2026-11-21T10:15:00.000000000Z " + line)
    assert detail["gc_id"].tolist() == [1] and detail["complete"].all()


def test_no_lines_gives_empty_tables_with_the_columns():
    detail = gctrace.parse_gctrace("hello\nsink 1\n")
    events = gctrace.gctrace_gc_events(detail)
    assert len(events) == 0 and tuple(events.columns) == GC_EVENT_COLUMNS
