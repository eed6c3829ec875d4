"""Tidy tables from committed raw runs: GC pauses reach a table, open-loop percentiles use one definition."""

import json

import pytest
from conftest import committed_manifests, no_committed_run

from loadlab import paths
from loadlab.loadgen import vegeta
from loadlab.tables import TABLES, process_run

WORKER_POOL_RUNS = committed_manifests("02-worker-pool-quick")
VIRTUAL_THREAD_RUNS = committed_manifests("05-virtual-threads-quick")


@pytest.mark.skipif(not WORKER_POOL_RUNS, reason=no_committed_run("02-worker-pool-quick"))
def test_go_pauses_come_from_runtime_metrics_and_agree_with_gctrace(tmp_path):
    tables = process_run(WORKER_POOL_RUNS[-1].parent, processed_root=tmp_path)
    assert set(TABLES) <= set(tables)
    pauses, cycles = tables["gc_pauses"], tables["gc_events"]
    assert set(pauses["source"]) == {"go_metrics"} and pauses["in_window"].all() and (pauses["kind"] == "pause").all()
    # A Go cycle has two stop-the-world pauses: two views of the same window agree.
    by_pauses = pauses.groupby("trial")["pause_s"].sum()
    by_cycles = cycles[cycles["in_window"] == True].groupby("trial")["pause_s"].sum()  # noqa: E712
    both = by_pauses.index.intersection(by_cycles.index)
    # 02's windows are overloaded: /debug/vars answers through only some of them, and only those have both views.
    assert len(both) >= 3
    pause_count = pauses.groupby("trial").size()
    cycle_count = cycles[cycles["in_window"] == True].groupby("trial").size()  # noqa: E712
    for trial in both:  # runtime/metrics buckets are within ~6 %
        if pause_count[trial] == 2 * cycle_count[trial]:
            assert by_pauses[trial] == pytest.approx(by_cycles[trial], rel=0.5, abs=50e-6)
        else:  # a cycle straddled the window's edge: one view counts one or both of its pauses, the other not
            assert abs(int(pause_count[trial]) - 2 * int(cycle_count[trial])) in (1, 2), trial
    # Most windows have no cycle on an edge (9 trials: 8 in one reference, 6 in the next).
    assert sum(pause_count[trial] == 2 * cycle_count[trial] for trial in both) > len(both) / 2


@pytest.mark.skipif(not VIRTUAL_THREAD_RUNS, reason=no_committed_run("05-virtual-threads-quick"))
def test_jfr_pauses_sum_to_their_collections(tmp_path):
    tables = process_run(VIRTUAL_THREAD_RUNS[-1].parent, processed_root=tmp_path)
    pauses, cycles = tables["gc_pauses"], tables["gc_events"]
    assert set(pauses["source"]) == {"jfr"} and pauses["in_window"].any() and not pauses["in_window"].all()
    per_cycle = pauses.groupby(["trial", "gc_id"])["pause_s"].sum()
    recorded = cycles.set_index(["trial", "gc_id"])["pause_s"]
    common = per_cycle.index.intersection(recorded.index)
    assert len(common) > 20
    assert per_cycle[common].to_numpy() == pytest.approx(recorded[common].to_numpy(), rel=1e-6, abs=1e-9)


@pytest.mark.skipif(not WORKER_POOL_RUNS, reason=no_committed_run("02-worker-pool-quick"))
def test_open_loop_percentiles_are_read_off_the_histogram_with_the_one_definition(tmp_path):
    run = WORKER_POOL_RUNS[-1].parent
    tables = process_run(run, processed_root=tmp_path)
    trials = tables["trials"].set_index("trial")
    latency = tables["latency"]
    for trial in trials.index[trials["latency_histogram_hdr"].notna()][:4]:
        expected = vegeta.latency_summary_columns(trials.loc[trial, "latency_histogram_hdr"])
        for column, seconds in expected.items():
            assert trials.loc[trial, column] == seconds
        recorded = json.loads((run / "trials" / str(trial) / "result.json").read_text())
        assert trials.loc[trial, "latency_p99_s"] == pytest.approx(recorded["latency_p99_s"], rel=2e-3)
        spectrum = latency[latency["trial"] == trial].set_index("percentile")["latency_s"]
        assert spectrum[99.0] == trials.loc[trial, "latency_p99_s"] and spectrum.is_monotonic_increasing


@pytest.mark.skipif(not WORKER_POOL_RUNS, reason=no_committed_run("02-worker-pool-quick"))
def test_go_scheduler_series_read_the_same_gzip_or_plain(tmp_path):
    import gzip
    import shutil

    import pandas as pd

    run = WORKER_POOL_RUNS[-1].parent
    series = sorted(run.glob("trials/*/profiles/expvar-series.jsonl*"))
    assert series, "the 02 reference run captured the Go scheduler series"
    copies = {}
    for compress in (True, False):
        copy = tmp_path / ("gz" if compress else "plain") / run.name
        shutil.copytree(run, copy)
        for path in sorted(copy.glob("trials/*/profiles/expvar-series.jsonl*")):
            data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
            path.unlink()
            target = path.with_name("expvar-series.jsonl" + (".gz" if compress else ""))
            target.write_bytes(gzip.compress(data) if compress else data)
        copies[compress] = process_run(copy, processed_root=tmp_path / ("processed-gz" if compress else "processed"))["thread_counts"]
    assert not copies[True].empty
    pd.testing.assert_frame_equal(copies[True], copies[False])
