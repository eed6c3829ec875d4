"""The atlas (notebook 07): its table read from the committed runs, a runtime a run lacks, few trials, the figure."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from loadlab import plans, rundir, tables
from loadlab.judgements import s1
from loadlab.judgements.capacity import capacity_ranking
from loadlab.pages import atlas
from loadlab.plots import atlas_figure, lint_figure
from loadlab.plots.lint import alt_text_problems


@pytest.fixture(scope="module")
def committed(tmp_path_factory):
    """The newest committed quick runs of the three experiments the atlas reads, as the notebook loads them."""
    processed = tmp_path_factory.mktemp("processed")  # never the committed processed folder
    runs = {}
    for name in (atlas.OVERHEAD, atlas.LATENCY, atlas.CAPACITY):
        run_dir = rundir.latest_run(f"{name}-quick")
        if run_dir is None:
            pytest.skip(f"no committed run of {name}-quick")
        loaded = tables.load_run(run_dir, processed_root=processed)
        manifest = loaded["manifest"]
        runs[name] = SimpleNamespace(trials=loaded["trials"], run_id=manifest.run_id, manifest=manifest,
                                     missing=dict(manifest.missing_servers or {}))
    return runs


def _without(run, label):
    """`run` as if it had never measured `label`."""
    return SimpleNamespace(trials=run.trials[run.trials["label"] != label], run_id=run.run_id, manifest=run.manifest,
                           missing={})


def test_every_runtime_has_one_row_per_axis_and_the_values_are_the_pages_own(committed):
    # The committed 01 run held its connections (keep-alive, an earlier plan), as today's keep-alive run does: it
    # stands in for the run the memory and threads axes read.
    table = atlas.atlas_table(committed[atlas.OVERHEAD], committed[atlas.LATENCY], committed[atlas.CAPACITY], "quick",
                              held=committed[atlas.OVERHEAD])
    for axis in atlas.AXES:
        rows = table[table["axis"] == axis.key]
        assert set(atlas.ATLAS_RUNTIMES) <= set(rows["runtime"]) and rows["runtime"].is_unique
    assert "nginx-baseline" not in set(table["runtime"])  # the ceiling, not a runtime
    # Memory per held connection is S1's per-connection rule (judgements.s1), not a second copy of it.
    overhead = committed[atlas.OVERHEAD]
    per = s1.per_connection_at_top_level(s1.with_memory_columns(overhead.trials))
    go = table[(table["axis"] == "memory") & (table["runtime"] == "go")].iloc[0]
    assert go["median"] == pytest.approx(per.loc[per["label"] == "go", "cgroup_per_connection_kib"].median())
    assert go["run"] == overhead.run_id and "held at the top" in go["condition"]
    # Capacity is 00's ranking's median and interval, trials with loadgen headroom.
    ranking = capacity_ranking(committed[atlas.CAPACITY].trials).set_index("label")
    measured = table[(table["axis"] == "capacity") & (table["n"] > 0)]
    assert not measured.empty
    for row in measured.itertuples():
        assert row.median == pytest.approx(ranking.at[row.runtime, "throughput_rps"])
        assert row.ci_low <= row.median <= row.ci_high
        assert "pipelined 16 deep" in row.condition and "a whole core" in row.condition
    # Every measured value names its run and condition; every row without one says which run lacks it.
    assert (table.loc[table["n"] > 0, "condition"] != "").all()
    assert table.loc[table["n"] == 0, "note"].str.startswith("not measured").all()


def test_a_runtime_missing_from_a_run_is_named_not_failed(committed):
    latency = _without(committed[atlas.LATENCY], "go")
    table = atlas.atlas_table(committed[atlas.OVERHEAD], latency, committed[atlas.CAPACITY], "quick")
    go = table[table["runtime"] == "go"].set_index("axis")
    for key in ("p99-0.5", "p99-0.8"):
        assert go.at[key, "n"] == 0 and math.isnan(go.at[key, "median"])
        assert go.at[key, "note"] == f"not measured in run {latency.run_id}"
    assert go.at["cpu", "n"] > 0  # the other runs still have it
    assert go.at["memory", "note"] == "not measured: no complete run of 01-runtime-overhead-keepalive-quick yet"
    text = atlas.not_measured_text(table)
    assert f"not measured in run {latency.run_id}" in text and "**go" in text
    # The display leaves the empty rows to that list; the figure keeps go's row and writes "not measured" in it.
    assert ("p99 at 0.5 of capacity (ms)", "go") not in atlas.atlas_display(table).index
    figure = atlas_figure(table, atlas.panels(latency), atlas.ATLAS_RUNTIMES, title="atlas")
    assert any(text.get_text() == "not measured" for text in figure.axes[2].texts)


def test_a_runtime_whose_trials_were_no_evidence_at_the_condition_says_why(committed):
    # The reference's node at 10,000 connections asked, a connection per request: its 3 trials stalled (2026-11-29).
    overhead = committed[atlas.OVERHEAD]
    trials = overhead.trials.copy()
    level = trials["level"].max()
    node = (trials["level"] == level) & (trials["label"] == "node")
    if not node.any():
        pytest.skip("the committed 01 run has no node trial at its top level")
    trials.loc[node, "status"] = "failed"
    trials.loc[node, "failure_reason"] = "stalled: window throughput 1,705 req/s fell below 50% of its warm-up's"
    run = SimpleNamespace(trials=trials, run_id=overhead.run_id, manifest=overhead.manifest, missing={})
    table = atlas.atlas_table(run, None, None, "quick").set_index(["axis", "runtime"])
    n = int(node.sum())
    assert table.at[("cpu", "node"), "note"] == (
        f"not measured in run {overhead.run_id} (its {n} trials at {int(level):,} connections asked: {n} failed "
        f"(stalled))")
    # An open-loop fraction whose trials' generator fell behind says that, and a runtime whose trials there leave
    # nothing to count keeps the general words.
    latency = pd.DataFrame({"label": "go", "level": 0.8, "status": "ok", "loadgen_saturated": True,
                            "loadgen_behind": "1.2% of requests left more than 1000 µs after they could have",
                            "loadgen_cpu_utilization": [0.6, 0.62, 0.64]})
    assert atlas.no_evidence_text(latency, atlas.AXIS_BY_KEY["p99-0.8"], "go") == (
        "its 3 trials at 0.8 of its capacity: 3 loadgen behind its schedule")
    assert atlas.no_evidence_text(latency, atlas.AXIS_BY_KEY["p99-0.5"], "go") == "no evidence trial at this condition"
    # A runtime the run never planned says so: where full measures it (java-virtual, swoole and python in 01's open
    # loop), with the command that does; a run read as another scale's, as not in its plan.
    open_loop = committed[atlas.LATENCY]
    planned = {entry.get("label") for entry in open_loop.manifest.parameters.get("servers", [])}
    unplanned = [label for label in atlas.ATLAS_RUNTIMES if label not in planned]
    if unplanned:
        assert set(unplanned) <= plans.measured_only_at_full(atlas.LATENCY)
        table = atlas.atlas_table(None, open_loop, None, "quick", full_only=plans.measured_only_at_full)
        table = table.set_index(["axis", "runtime"])
        assert table.at[("p99-0.5", unplanned[0]), "note"] == (
            f"not measured in run {open_loop.run_id} (measured at full only, make reproduce SCALE=full: quick's "
            "100-minute budget has no room for it)")
        table = atlas.atlas_table(None, open_loop, None, "full", full_only=plans.measured_only_at_full)
        table = table.set_index(["axis", "runtime"])
        assert table.at[("p99-0.5", unplanned[0]), "note"] == f"not measured in run {open_loop.run_id} (not in its plan)"


def test_the_open_loop_offers_load_to_every_atlas_runtime_at_full_and_judges_only_s1s():
    capacities = {label: 1000.0 for label in atlas.ATLAS_RUNTIMES}
    quick = {entry.label: entry for entry in plans.runtime_overhead_latency("quick", capacities).servers}
    full = {entry.label: entry for entry in plans.runtime_overhead_latency("full", capacities).servers}
    assert set(full) == set(atlas.ATLAS_RUNTIMES)
    assert set(full) - set(quick) == plans.measured_only_at_full(atlas.LATENCY) == {"java-virtual", "swoole", "python"}
    assert {label for label, entry in full.items() if not entry.shown} == {"go", "java-platform", "rust"}


def test_a_run_that_does_not_exist_yet_is_named_by_its_experiment(committed):
    table = atlas.atlas_table(committed[atlas.OVERHEAD], None, committed[atlas.CAPACITY], "quick")
    p99 = table[table["axis"] == "p99-0.5"]
    assert (p99["n"] == 0).all()
    assert set(p99["note"]) == {"not measured: no complete run of 01-open-loop-latency-quick yet"}
    assert atlas.basis_text(None) == ""


def _trials(label, values, level=10, **columns):
    return pd.DataFrame({"label": label, "level": level, "status": "ok", "loadgen_saturated": False,
                         "tasks_peak": values, **columns})


def test_few_trials_give_their_range_with_the_coverage_it_has_and_a_warning():
    """A runtime drawn in 3 trials (plans.Scale.shown_trials) gets [min, max], a 75% interval, said as such."""
    trials = pd.concat([_trials("node", [7.0, 8.0, 9.0]), _trials("go", [3.0, 3.0, 4.0, 3.0, 3.0, 4.0])])
    rows = pd.DataFrame(atlas.threads_rows(trials, "run-x")).set_index("runtime")
    assert rows.at["node", "median"] == 8.0 and rows.at["node", "n"] == 3
    assert (rows.at["node", "ci_low"], rows.at["node", "ci_high"], rows.at["node", "coverage"]) == (7.0, 9.0, 0.75)
    assert rows.at["node", "note"] == "n=3: the range of 3 trials, a 75.0% interval (95% needs 6)"
    assert math.isfinite(rows.at["go", "ci_low"]) and rows.at["go", "note"] == "" and rows.at["go", "coverage"] == 0.95
    table = pd.DataFrame(atlas.threads_rows(trials, "run-x"), columns=atlas.COLUMNS)
    assert "3 trials (their range, a 75.0% interval): node (OS threads at the top level)" in atlas.few_trials_text(table)
    shown = atlas.atlas_display(table)
    column = "median [95% CI, or the coverage marked]"
    assert shown.loc[("OS threads at the top level (count)", "node"), column] == "8 [7, 9] (75.0%)"
    assert shown.loc[("OS threads at the top level (count)", "go"), column] == "3 [3, 4]"


def test_latency_rows_read_the_fractions_and_name_the_capacity_basis():
    trials = pd.concat([_trials("go", [np.nan] * 6, level=fraction, latency_p99_s=[0.001 * fraction] * 6)
                        for fraction in (0.5, 0.8, 1.2)])
    rows = pd.DataFrame(atlas.latency_rows(trials, "run-y", basis="slowest")).set_index("axis")
    assert list(rows.index) == ["p99-0.5", "p99-0.8"]  # 1.2, past the knee, is not an atlas axis
    assert rows.at["p99-0.8", "median"] == pytest.approx(0.8)  # ms
    assert "of the slowest server's capacity" in rows.at["p99-0.5", "condition"]
    older = SimpleNamespace(run_id="run-y", manifest=SimpleNamespace(parameters={"load": {"capacity_basis": "slowest"}}))
    assert "slowest" in atlas.basis_text(older) and "slowest" in dict((k, l) for k, l, _ in atlas.panels(older))["p99-0.5"]
    today = SimpleNamespace(run_id="run-z", manifest=SimpleNamespace(parameters={"load": {"capacity_basis": "own"}}))
    assert atlas.basis_text(today) == "" and atlas.panels(today) == atlas.PANELS


def test_the_figure_passes_the_lint_and_its_finding_makes_alt_text(committed):
    table = atlas.atlas_table(committed[atlas.OVERHEAD], committed[atlas.LATENCY], committed[atlas.CAPACITY], "quick")
    figure = atlas_figure(table, atlas.panels(committed[atlas.LATENCY]), atlas.ATLAS_RUNTIMES,
                          title="Every runtime on the same axes")
    assert lint_figure(figure).problems == []
    assert len([axes for axes in figure.axes if axes.get_visible()]) == len(atlas.AXES)
    finding = atlas.atlas_finding(table)
    assert alt_text_problems(finding) == [] and "capacity on one core: from" in finding
    # Nothing measured at all still draws (every row "not measured") and lints clean.
    empty = atlas.atlas_table(None, None, None, "quick")
    assert lint_figure(atlas_figure(empty, atlas.PANELS, atlas.ATLAS_RUNTIMES, title="nothing yet")).problems == []
    assert "Not measured on any axis" in atlas.atlas_finding(empty)


def test_a_capacity_panel_labels_thousands_compactly_so_its_ticks_do_not_collide():
    # The reference of 2026-11-29 drew capacity from about 5,000 to 130,000 req/s: "100,000" beside "200,000" on a
    # panel a sixth of the figure wide overlapped (the page check caught it).
    from loadlab.plots.style import compact_number

    assert [compact_number(v) for v in (5000, 10_000, 20_000, 150_000, 200_000)] == \
        ["5,000", "10k", "20k", "150k", "200k"]
    assert compact_number(0.5) == "0.5" and compact_number(2_000_000) == "2,000k"


def _held_trials(rows):
    """Keep-alive trials at a low and a top level: (label, level, held median, queued median, listen overflows)."""
    return pd.DataFrame([{"label": label, "level": level, "status": "ok", "loadgen_saturated": False,
                          "connections_held_median": held, "connections_queued_median": queued,
                          "listen_overflows": dropped} for label, level, held, queued, dropped in rows])


def test_the_runtimes_that_held_fewer_than_asked_are_named_with_what_the_kernel_queued_and_dropped():
    trials = _held_trials([("go", 10, 10, 0, 0), ("go", 10_000, 10_000, 0, 0), ("go", 10_000, 9_999, 0, 12),
                           ("node", 10, 10, 0, 0), ("node", 10_000, 4_932, 4_096, 13_359),
                           ("node", 10_000, 3_152, 4_095, 24_663), ("python", 10_000, 6_453, 3_547, 0),
                           ("python", 10_000, 10_000, 0, 0)])
    text = atlas.held_short_text(SimpleNamespace(trials=trials, run_id="run-k"))
    assert "at 10,000 connections (keep-alive run run-k)" in text
    assert ("- **node**: 2 of its 2 trials held 3,152-4,932 connections; a median of 4,095-4,096 more waited in its "
            "accept queue over the window, and the kernel dropped 13,359-24,663 handshakes on the full queue") in text
    assert "- **python**: 1 of its 2 trials held 6,453 connections" in text and "dropped no handshake" in text
    assert "**go**" not in text  # one short of 10,000 is a reconnect, not a shortfall
    every = _held_trials([("go", 10, 10, 0, 0), ("go", 10_000, 10_000, 0, 0)])
    assert atlas.held_short_text(SimpleNamespace(trials=every, run_id="run-k")) == ""
    assert atlas.held_short_text(None) == ""


def test_cpu_per_request_keeps_a_saturated_loadgens_trial_only_where_the_server_was_cpu_bound():
    # CPU time per request is the server's cost per answered request: where the server used its whole allowance the
    # loadgen's limit left it no idle time, so the trial counts; where it idled below the regime's CPU-bound mark it
    # does not, and the page says why.
    trials = pd.DataFrame({
        "label": ["python"] * 4 + ["node"] * 2, "level": 10000, "status": ["ok", "ok", "ok", "failed", "ok", "ok"],
        "failure_reason": [None, None, None, "stalled", None, None],
        "loadgen_saturated": [True, True, False, False, True, True],
        "server_cpu_pct_of_allowance": [111.3, 93.1, 80.0, 120.0, 60.0, 89.9],
        "server_cpu_seconds": [5.0, 4.0, 3.0, 1.0, 2.0, 2.0], "requests": [25000, 20000, 10000, 1, 1000, 1000],
        "cpu_allowance_cores": [1.0] * 4 + [0.5] * 2, "connection_mode": "per-request", "route": "/plaintext200",
    })
    kept = atlas.cpu_trials(trials)
    assert list(kept.index) == [0, 1, 2]  # python's two CPU-bound saturated trials, its unsaturated one; not node's
    rows = {row["runtime"]: row for row in atlas.cpu_rows(trials, "run")}
    assert set(rows) == {"python"} and rows["python"]["n"] == 3
    assert rows["python"]["median"] == pytest.approx(200.0)  # 5 s / 25,000, 4 s / 20,000, 3 s / 10,000 in µs
    assert "2 of its 3 trials with the loadgen saturated" in rows["python"]["condition"]
    assert "at 90% of its CPU allowance or more" in rows["python"]["condition"]
    # Node's saturated trials idled below the mark: left out, and named as the loadgen's.
    assert atlas.no_evidence_text(trials, atlas.AXIS_BY_KEY["cpu"], "node") == (
        "its 2 trials at 10,000 connections asked: 2 loadgen saturated")
    # Python's stalled trial is still named when nothing else is left.
    only_failed = trials[(trials["label"] == "python") & (trials["status"] == "failed")]
    assert atlas.no_evidence_text(only_failed, atlas.AXIS_BY_KEY["cpu"], "python") == (
        "its 1 trial at 10,000 connections asked: 1 failed (stalled)")
