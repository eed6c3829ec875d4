"""The figure lint: its rules catch what a reviewer saw, and every figure function passes it on the reference data.

The figures are built as the notebooks build them, from the committed
processed reference data (data/processed, via `study.measure_or_load(...,
run_id="latest")`), and linted at their saved size. The figures the
notebooks themselves save are linted when the notebooks are executed
(tests/test_exported_pages.py runs them with LOADLAB_STRICT_FIGURES=1, so
`save_figure` raises on any problem).
"""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from conftest import committed_study  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from loadlab import judgements, pages, plans, plots, stats, study  # noqa: E402

LINTED_FIGURES: list[str] = []  # names of the figures checked, for the terminal summary (conftest)


# --- the rules catch what they are meant to ------------------------------------------------------


def test_overlapping_tick_labels_are_found():
    figure = Figure(figsize=(2.0, 2.0))
    axes = figure.subplots()
    axes.set_xticks(range(8), [f"{10**k:,}" for k in range(8)])
    problems = plots.lint_figure(figure).problems
    assert any("overlaps x tick label" in p for p in problems), problems


def test_a_legend_over_the_title_or_the_data_is_found():
    figure = Figure(figsize=(4.0, 3.0))
    axes = figure.subplots()
    axes.plot([0, 1], [0, 1], label="a rather long series name")
    axes.legend(loc="center")
    figure.suptitle("title")
    figure.legend(handles=axes.get_lines(), loc="upper center")
    problems = plots.lint_figure(figure).problems
    assert any("legend" in p and "plot area" in p for p in problems), problems
    assert any("legend" in p and "title 'title'" in p for p in problems), problems


def test_a_percentile_tick_at_every_measured_percentile_is_found():
    # What 03's latency spectrum used to do: a labelled tick at each of about 1,179 percentiles.
    figure = Figure(figsize=(6.0, 3.6))
    axes = figure.subplots()
    percentiles = np.linspace(0.1, 99.99, 1179)
    axes.set_xticks(percentiles, [f"p{p:g}" for p in percentiles])
    problems = plots.lint_figure(figure).problems
    assert any("1179 labelled ticks" in p for p in problems), problems[:3]


def test_the_old_forest_axis_is_found():
    # 99's forest plot before: ×0.001 to ×1000 on a narrow axis, every decade labelled.
    figure = Figure(figsize=(6.0, 4.0), layout="constrained")
    axes = figure.subplots()
    axes.plot([1e-3, 1e3], [0, 19], label="measured (CI)")
    figure.legend(loc="outside right upper")
    axes.set_xscale("log")
    axes.set_xlim(1e-3, 1e3)
    axes.set_yticks(range(20), [f"S{k}-claim-with-a-long-name (java-platform / go)" for k in range(20)])
    axes.set_xticks([10.0**k for k in range(-3, 4)], [f"{10.0**k:g}\N{MULTIPLICATION SIGN}" for k in range(-3, 4)])
    problems = plots.lint_figure(figure).problems
    assert any("overlaps x tick label" in p for p in problems), problems


def test_a_legible_figure_has_no_problems_and_its_ticks_are_counted():
    figure = Figure(figsize=(6.0, 3.6), layout="constrained")
    axes = figure.subplots()
    axes.plot([1, 2, 3], [3, 1, 2])
    figure.suptitle("fine")
    report = plots.lint_figure(figure)
    assert report.problems == [] and report.tick_labels_checked >= 6


def test_an_axis_label_in_seconds_over_ticks_in_milliseconds_is_found():
    # 02's GC pauses before: "(s)" on the axis, "100 µs" and "1 ms" on the ticks.
    figure = Figure(figsize=(6.0, 3.6), layout="constrained")
    axes = figure.subplots()
    axes.plot([1e-4, 3e-3], [0, 1])
    axes.xaxis.set_major_formatter(plots.style.seconds_formatter())
    axes.set_xlabel("single GC pause (s)")
    assert any("labelled 'single GC pause (s)' but its ticks are in" in p for p in plots.lint_figure(figure).problems)
    axes.set_xlabel("single GC pause")  # the ticks carry the unit: nothing contradicts them
    assert not any("ticks are in" in p for p in plots.lint_figure(figure).problems)


def test_an_interval_in_the_legend_without_its_estimator_is_found():
    figure = Figure(figsize=(4, 3))
    axes = figure.add_subplot()
    axes.errorbar([1, 2], [1, 2], yerr=[0.1, 0.2], label="95% CI")
    axes.legend(loc="upper left", bbox_to_anchor=(0, -0.2))
    assert any("estimator" in p for p in plots.lint.estimator_legend_problems(figure))
    axes.legend(["Hodges-Lehmann ratio, 97.5% CI"], loc="upper left", bbox_to_anchor=(0, -0.2))
    assert plots.lint.estimator_legend_problems(figure) == []


def test_a_figure_without_alt_text_or_with_the_default_is_found():
    assert plots.lint.alt_text_problems("") and plots.lint.alt_text_problems(None)
    assert plots.lint.alt_text_problems("No description has been provided for this image")
    assert plots.lint.alt_text_problems("Go held 10,000 connections in 41 MiB.") == []


def test_the_median_over_time_stops_where_fewer_than_half_the_trials_have_data():
    # Four trials of one server; after t = 1 s only one trial goes on (the others ended): its median line must stop.
    rows = [{"server": "go", "trial": trial, "t_s": t, "memory_in_use_bytes": (10 + trial) * 2**20}
            for trial in range(4) for t in np.arange(0, 1.01 if trial else 3.01, 0.25)]  # fmt: skip
    figure = plots.memory_over_time_figure(pd.DataFrame(rows))
    median = max(figure.axes[0].get_lines(), key=lambda line: line.get_linewidth())
    x, y = (np.asarray(v, dtype=float) for v in median.get_data())
    assert np.isfinite(y[x <= 1.0]).all() and not np.isfinite(y[x > 1.0]).any()
    assert not figure.axes[0].collections  # no CI bands to overlap


def test_gc_pauses_are_in_milliseconds_with_horizontal_server_names():
    events = pd.DataFrame({"server": ["go", "go", "go-workerpool-reject"], "trial": [1, 2, 1],
                           "pause_s": [2e-4, 3e-3, 5e-4]})  # fmt: skip
    figure = plots.gc_pause_figure(events)
    ecdf, totals = figure.axes[:2]
    assert ecdf.get_xlabel() == "single GC pause (ms)" and totals.get_xlabel() == "total GC pause per trial (ms)"
    assert [t.get_rotation() for t in totals.get_yticklabels()] == [0.0, 0.0]
    assert plots.lint_figure(figure).problems == []


# --- every figure function on the committed reference data --------------------------------------


def _run(plan):
    return committed_study(plan)  # data/raw's run, or the last quick one of a run quick leaves out (tests/fixtures)


def _with_outcome(table: pd.DataFrame, trials: pd.DataFrame) -> pd.DataFrame:
    columns = ["trial", "label", "level", "status", "failure_reason", "loadgen_saturated"]
    return table.merge(trials[[c for c in columns if c in trials]], on="trial")


def _top_level_series(s) -> pd.DataFrame:
    series = _with_outcome(s.timeseries, s.trials)
    series = series[series["level"] == series["level"].max()]
    return series.rename(columns={"server_memory_in_use_bytes": "memory_in_use_bytes", "server_tasks": "tasks"})


def _aa():
    aa = _run(plans.noise("quick"))
    return plots.throughput_figure(pages.with_concurrency(aa.trials), group_column="label", title="A/A control")


def _ceiling():
    ceiling, capacity = _run(plans.loadgen_ceiling("quick")), _run(plans.server_capacity("quick"))
    return plots.loadgen_ceiling_figure({"one request per round trip": ceiling.trials,
                                         f"pipelined {plans.CAPACITY_PIPELINE_DEPTH} deep": capacity.trials},
                                        **pages.CEILING_LINES, title="00: the loadgen's ceiling")


def _overhead(metric):
    s = _run(plans.runtime_overhead("quick"))
    trials = pages.with_concurrency(s.trials)  # memory_peak_mib: derived on load (loadlab.metrics)
    return plots.throughput_figure(trials, y_column=metric, group_column="label", title=f"01: {metric}")


def _overhead_cpu():
    s = _run(plans.runtime_overhead("quick"))
    return plots.cpu_per_request_figure(pages.with_concurrency(s.trials), group_column="label", title="01: CPU")


def _memory_over_time(plan):
    return lambda: plots.memory_over_time_figure(_top_level_series(_run(plan)), group_column="label", title="memory")


def _worker_pool():
    s = _run(plans.worker_pool("quick", 1, [50.0, 150.0]))
    return plots.throughput_figure(s.trials.assign(offered_rps=s.trials["level"]), x_column="offered_rps",
                                   group_column="label", title="02: served vs offered")  # fmt: skip


def _worker_pool_gc():
    s = _run(plans.worker_pool("quick", 1, [50.0, 150.0]))
    level = s.trials["level"].max()
    events = _with_outcome(s.tables["gc_events"], s.trials)
    events = events[(events["in_window"] == True) & (events["level"] == level)]  # noqa: E712 (a column of bools)
    ran = s.trials[(s.trials["status"] == "ok") & (s.trials["level"] == level)][["trial", "label"]]
    return plots.gc_pause_figure(events, group_column="label", trials=ran, title=f"02: GC pauses at {level:g} req/s")


def _worker_pool_over_time():
    s = _run(plans.worker_pool("quick", 1, [500.0]))
    level = s.trials["level"].max()
    over_time = pages.overload_over_time(s.trials, s.timeseries, s.tables["thread_counts"],
                                            s.tables["throughput_timeline"], level)
    return plots.resources_over_time_figure(
        over_time, group_column="label", panels=["memory_in_use_bytes", "established_connections", "successful_rps"],
        linear_panels=("memory_in_use_bytes", "established_connections", "successful_rps"), title=f"02: {level:g} req/s over the window")


def _json_api_latency():
    s = _run(plans.json_api("quick"))
    spectrum = _with_outcome(s.latency, s.trials)
    return plots.latency_spectrum_figure(spectrum[spectrum["level"] == spectrum["level"].max()], group_column="label",
                                         title="03: latency spectrum")  # fmt: skip


def _latency_knee():
    from loadlab import latency_curve
    from loadlab.judgements import open_loop as open_loop_judging

    s = _run(plans.runtime_overhead_latency("quick", {"java-platform": 1.0}))  # the capacity only names the run
    curve = latency_curve.latency_curve(s.trials, open_loop_judging.offered_rates_by_condition(s.manifest))
    return plots.latency_knee_figure(s.trials, curve, latency_curve.knee_levels(curve), latency_curve.KNEE_SERVED_SHARE,
                                     x_label="offered load (fraction of Java's capacity)", title="01: open loop")


def _atlas():
    latency = _run(plans.runtime_overhead_latency("quick", {"java-platform": 1.0}))  # the capacity only names the run
    table = pages.atlas_table(_run(plans.runtime_overhead("quick")), latency, _run(plans.server_capacity("quick")),
                              "quick")
    return plots.atlas_figure(table, pages.atlas_panels(latency), pages.ATLAS_RUNTIMES, title="07: the atlas")


def _json_api_forest():
    s = _run(plans.json_api("quick"))
    trials = s.trials  # server_cpu_pct and memory_peak_mib: derived on load (loadlab.metrics)
    level = trials["level"].max()
    comparison = stats.compare_at_level(trials, [("go", "rust")], ["throughput_rps", "server_cpu_pct", "memory_peak_mib"], level)
    from loadlab.judgements.margins import margins_from_aa

    aa = _run(plans.noise("quick")).trials
    margins = margins_from_aa(aa, ["throughput_rps", "server_cpu_pct", "memory_peak_mib"])
    rows = pages.noise_band_columns(comparison.assign(label=comparison["metric"],
                                                      noise_margin=comparison["metric"].map(margins)))
    return plots.forest_figure(rows, group_column="candidate", noise_low_column="noise_low",
                               noise_high_column="noise_high", title="03: ratios")  # fmt: skip


def _io_bound():
    s = _run(plans.io_coroutines("quick"))
    levels = sorted(s.trials["level"].unique())
    bound = plots.ReferenceLine("Little's law bound", levels, [level / 0.010 for level in levels])
    return plots.throughput_figure(pages.with_concurrency(s.trials), group_column="label", reference_lines=[bound],
                                   title="04: throughput vs the bound")  # fmt: skip


def _virtual_threads_resources():
    s = _run(plans.virtual_threads("quick"))
    return plots.resources_over_time_figure(_top_level_series(s), group_column="label", title="05: memory and threads")


def _pinning():
    p = _run(plans.pinning("quick"))
    return plots.throughput_figure(pages.with_concurrency(p.trials), group_column="label", title="05: pinning")


def _every_verdict_forest():
    records = judgements.load_verdicts()
    verdicts = pd.DataFrame([vars(v) for v in records])
    verdicts["label"] = [f"{c} ({cand} / {base})" if isinstance(cand, str) else c
                         for c, cand, base in zip(verdicts["claim_id"], verdicts["candidate"], verdicts["baseline"])]  # fmt: skip
    verdicts["metric"] = [m.get("metric") if isinstance(m, dict) else None for m in verdicts["measured"]]
    rows = pages.noise_band_columns(verdicts)
    return plots.forest_figure(rows, ratio_column="measured_ratio", claimed_column="claimed_ratio",
                               group_column="candidate", verdict_column="verdict", noise_low_column="noise_low",
                               noise_high_column="noise_high", title="99: every verdict")  # fmt: skip


FIGURE_CASES = {
    "00 A/A throughput (one level, twins)": (plots.throughput_figure, _aa),
    "00 the loadgen's ceiling (saturated trials, two panels)": (plots.loadgen_ceiling_figure, _ceiling),
    "01 throughput (one level, saturated trials)": (plots.throughput_figure, lambda: _overhead("throughput_rps")),
    "01 peak memory (MiB)": (plots.throughput_figure, lambda: _overhead("memory_peak_mib")),
    "01 OS threads": (plots.throughput_figure, lambda: _overhead("tasks_peak")),
    "01 CPU per request": (plots.cpu_per_request_figure, _overhead_cpu),
    "01 memory over time": (plots.memory_over_time_figure, _memory_over_time(plans.runtime_overhead("quick"))),
    "02 served vs offered": (plots.throughput_figure, _worker_pool),
    "02 GC pauses at the table's rate": (plots.gc_pause_figure, _worker_pool_gc),
    "02 memory, connections and answers over the window": (plots.resources_over_time_figure, _worker_pool_over_time),
    "01 open-loop latency against offered load, knees ringed": (plots.latency_knee_figure, _latency_knee),
    "03 latency spectrum": (plots.latency_spectrum_figure, _json_api_latency),
    "03 memory over time": (plots.memory_over_time_figure, _memory_over_time(plans.json_api("quick"))),
    "03 forest": (plots.forest_figure, _json_api_forest),
    "04 throughput vs Little's bound": (plots.throughput_figure, _io_bound),
    "04 memory over time": (plots.memory_over_time_figure, _memory_over_time(plans.io_coroutines("quick"))),
    "05 memory and threads over time": (plots.resources_over_time_figure, _virtual_threads_resources),
    "05 pinning (stalled trials)": (plots.throughput_figure, _pinning),
    "07 the atlas (every runtime, six panels, runtimes not measured)": (plots.atlas_figure, _atlas),
    "99 forest of every verdict": (plots.forest_figure, _every_verdict_forest),
}


@pytest.mark.parametrize("name", list(FIGURE_CASES))
def test_every_figure_of_the_collection_is_legible_on_the_reference_data(name):
    figure = FIGURE_CASES[name][1]()
    report = plots.lint_figure(figure)
    LINTED_FIGURES.append(name)
    assert report.problems == [], f"{name}: " + "; ".join(report.problems)
    assert report.tick_labels_checked > 0


def test_every_figure_function_is_exercised_on_the_reference_data():
    exercised = {function.__name__ for function, _ in FIGURE_CASES.values()}
    public = {name for name in plots.__all__ if name.endswith("_figure")} - {"lint_figure", "save_figure", "describe_figure"}
    assert public == exercised, f"not linted on the reference data: {sorted(public - exercised)}"


def test_saturated_and_stalled_trials_are_drawn_hollow_and_counted_in_the_legend():
    p = _run(plans.pinning("quick"))
    trials = p.trials.copy()
    if not (trials["failure_reason"] == "stalled").any():
        # JDK 21's pinned trials stall on I/O in some sittings only: mark one as the harness would.
        first = trials.index[0]
        trials.loc[first, ["status", "failure_reason"]] = ["failed", "stalled"]
    figure = plots.throughput_figure(pages.with_concurrency(trials), group_column="label", title="05: pinning")
    axes = figure.axes[0]
    scatters = [c for c in axes.collections if isinstance(c, PathCollection)]
    hollow = sum(len(c.get_offsets()) for c in scatters if len(c.get_facecolors()) == 0)
    stalled = int((trials["failure_reason"] == "stalled").sum())
    assert stalled > 0 and hollow == stalled
    legend = [t.get_text() for t in figure.legends[0].get_texts()]
    assert f"excluded (hollow): stalled {stalled}" in legend
    assert [t.get_text() for t in axes.get_xticklabels()] == ["java-virtual-jdk21-pinned", "java-virtual-jdk25-pinned"]


def test_one_level_is_a_category_axis_and_memory_is_in_mib():
    s = _run(plans.runtime_overhead("quick"))
    trials = pages.with_concurrency(s.trials)  # memory_peak_mib: derived on load (loadlab.metrics)
    level = int(trials["level"].max())  # the reference run may sweep several levels: keep one
    top = trials[trials["level"] == level]
    figure = plots.throughput_figure(top, y_column="memory_peak_mib", group_column="label", title="01: one level")
    axes = figure.axes[0]
    assert axes.get_xscale() == "linear" and axes.get_xlabel() == f"server, all at {level:,} connections"
    assert axes.get_ylabel() == "peak memory in use (MiB)"
    assert not any(math.isclose(tick, level) for tick in axes.get_xticks())
