"""Go expvar (/debug/vars) parsing against real captures from gofixture."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from loadlab.profiles import gctrace, go_metrics
from loadlab.profiles.schema import GC_EVENT_COLUMNS, THREAD_COUNT_COLUMNS

FIXTURES = Path(__file__).parent / "fixtures" / "profiles"


@pytest.fixture(scope="module")
def mid():
    return go_metrics.read_expvar(FIXTURES / "go-expvar-mid.json")


@pytest.fixture(scope="module")
def end():
    return go_metrics.read_expvar(FIXTURES / "go-expvar-end.json")


def _cycles(expvars) -> int:
    return int(go_metrics.scalar_metrics(expvars)["/gc/cycles/total:gc-cycles"])


def test_histogram_shape_and_infinite_bounds(end):
    buckets = go_metrics.histogram(end)
    raw = end["gc"]["/sched/pauses/total/gc:seconds"]
    assert len(buckets) == len(raw["counts"]) == len(raw["buckets"]) - 1
    assert buckets["lower"].iloc[0] == -math.inf and buckets["upper"].iloc[-1] == math.inf
    assert (buckets["upper"] > buckets["lower"]).all()
    assert buckets["count"].tolist() == raw["counts"]


def test_deprecated_and_new_pause_metric_agree(end):
    new = go_metrics.histogram(end, "/sched/pauses/total/gc:seconds")
    old = go_metrics.histogram(end, "/gc/pauses:seconds")
    assert new.equals(old)


def test_two_stop_the_world_pauses_per_cycle(mid, end):
    # The end snapshot was taken after the forced GC, with no cycle running.
    assert go_metrics.histogram(end)["count"].sum() == 2 * _cycles(end)
    # Mid-run a cycle may have had its first pause only.
    assert 0 <= go_metrics.histogram(mid)["count"].sum() - 2 * _cycles(mid) <= 1
    delta = go_metrics.histogram_delta(mid, end)
    assert abs(delta["count"].sum() - 2 * (_cycles(end) - _cycles(mid))) <= 1


def test_pause_rows_lie_in_their_buckets(mid, end):
    events = go_metrics.go_metrics_gc_events(end, before=mid, trial=1)
    delta = go_metrics.histogram_delta(mid, end)
    assert tuple(events.columns) == GC_EVENT_COLUMNS
    assert len(events) == delta["count"].sum()
    assert set(events["kind"]) == {"pause"} and events["t_s"].isna().all()
    nonempty = delta[delta["count"] > 0]
    expected = np.repeat(go_metrics.bucket_midpoints(nonempty), nonempty["count"])
    assert np.allclose(np.sort(events["pause_s"].to_numpy()), np.sort(expected))
    assert (events["pause_s"] > 0).all() and (events["pause_s"] < 1).all()


def test_snapshots_from_different_processes_are_refused(mid, end):
    with pytest.raises(ValueError, match="different processes"):
        go_metrics.histogram_delta(end, mid)


def test_memstats_cycles_are_the_gctrace_cycles(end):
    # go-expvar-end.json and gctrace-go1.26.txt come from the same run.
    memstats = go_metrics.go_memstats_gc_events(end, trial=1)
    traced = gctrace.read_gctrace(FIXTURES / "gctrace-go1.26.txt")
    assert tuple(memstats.columns) == GC_EVENT_COLUMNS
    assert len(memstats) == min(256, end["memstats"]["NumGC"])
    assert memstats["gc_id"].tolist() == traced["gc_id"].tolist()[-len(memstats):]
    assert memstats["t_s"].is_monotonic_increasing and memstats["t_s"].iloc[0] == 0
    # Same pauses measured twice (MemStats in ns, gctrace in truncated ms):
    # a unit mistake would be off by 1000x, rounding by a few percent.
    ratio = memstats["pause_s"].to_numpy() / traced["pause_s"].to_numpy()[-len(memstats):]
    assert 0.8 < np.median(ratio) < 1.25


def test_thread_counts(mid, end):
    counts = go_metrics.go_thread_counts([(0.0, mid), (1.8, end)], trial=3)
    assert tuple(counts.columns) == THREAD_COUNT_COLUMNS
    assert set(counts["metric"]) == {"goroutines", "os_threads", "gomaxprocs"}
    goroutines = counts[counts["metric"] == "goroutines"]
    # gofixture parks 8 goroutines beside main and the HTTP server's.
    assert (goroutines["count"] >= 10).all()
    assert counts[counts["metric"] == "gomaxprocs"]["count"].tolist() == [2, 2]


def test_a_missing_gc_key_says_what_to_publish():
    with pytest.raises(KeyError, match="CONTRACT.md"):
        go_metrics.scalar_metrics({"memstats": {}, "cmdline": []})
