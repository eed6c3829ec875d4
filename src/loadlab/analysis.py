"""Tables the notebooks show, computed from a run's tidy tables (never from Docker).

Every summary is per condition across trials: the median with its 95% CI
(`loadlab.stats.median_ci`), the trial count, and how many trials failed.
Percentiles are never averaged across trials: a condition's p99 is the
median of its trials' p99s, with a CI over trials, or, in open loop where
every request's latency is kept, the p99 of all its requests together
(`merged_latency`: the trials' histograms merged).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from loadlab import stats
from loadlab.loadgen import vegeta
from loadlab.stats.compare import COMPARISON_COLUMNS
from loadlab.units import MIB  # noqa: F401  (re-exported: the notebooks import analysis.MIB, until they read loadlab.units)


def condition_summary(trials: pd.DataFrame, metrics: Sequence[str], by: Sequence[str] = ("label", "level")) -> pd.DataFrame:
    """One row per condition: n ok trials, failures, and median [CI] of each metric."""
    rows = []
    for keys, group in trials.groupby(list(by), sort=True):
        keys = keys if isinstance(keys, tuple) else (keys,)
        ok = group[group["status"] == "ok"]
        row = dict(zip(by, keys))
        row["trials_ok"] = len(ok)
        row["trials_failed"] = int((group["status"] != "ok").sum())
        for metric in metrics:
            values = pd.to_numeric(ok[metric], errors="coerce").dropna().to_numpy(dtype=float) if metric in ok else np.array([])
            if len(values) == 0:
                row.update({metric: math.nan, f"{metric}_ci_low": math.nan, f"{metric}_ci_high": math.nan})
                continue
            estimate = stats.median_ci(values)
            row.update({metric: estimate.median, f"{metric}_ci_low": estimate.ci_low, f"{metric}_ci_high": estimate.ci_high})
        rows.append(row)
    return pd.DataFrame(rows)


def recorded_metrics(trials: pd.DataFrame, metrics: Sequence[str]) -> list[str]:
    """The `metrics` a run recorded (a column with at least one value), in order: a run measured before a column
    existed is re-analysed without it, and its page shows what it has."""
    return [metric for metric in metrics if metric in trials and trials[metric].notna().any()]


def with_milliseconds(trials: pd.DataFrame, columns_s: Sequence[str]) -> pd.DataFrame:
    """`trials` with a `<name>_ms` column (milliseconds) next to each `<name>_s` column (seconds).

    A column the trials lack (no trial answered, so no loadgen report) becomes
    NaN: a run whose every trial failed still gets its tables drawn.
    """
    added = {}
    for column in columns_s:
        if not column.endswith("_s"):
            raise ValueError(f"{column}: expected a column in seconds, named *_s")
        seconds = pd.to_numeric(trials[column], errors="coerce") if column in trials else pd.Series(math.nan, index=trials.index)
        added[column[:-2] + "_ms"] = 1000 * seconds
    return trials.assign(**added)


def merged_latency(trials: pd.DataFrame, by: Sequence[str] = ("label", "level")) -> pd.DataFrame:
    """Open loop: per condition, the latency of every request of its ok trials together.

    The trials' HdrHistograms (`latency_histogram_hdr`) are merged, counts
    added, and read once (loadlab.stats.latency's percentile definition):
    latency_p50_s ... latency_p99_99_s, latency_max_s, with requests and
    trials_ok. A stalled trial's tail then counts for what it is, which a
    median of per-trial p99s hides. Conditions without histograms (closed
    loop: wrk keeps none) are left out.
    """
    columns = [*by, *(stats.percentile_column(p) for p in stats.SUMMARY_PERCENTILES), "latency_max_s", "requests", "trials_ok"]
    if trials.empty or "latency_histogram_hdr" not in trials:
        return pd.DataFrame(columns=columns)
    rows = []
    for keys, group in trials[trials["status"] == "ok"].groupby(list(by), sort=True):
        histograms = [h for h in group["latency_histogram_hdr"] if isinstance(h, str)]
        if not histograms:
            continue
        spectrum = stats.hdr_latency_spectrum(histograms, value_unit_s=vegeta.HISTOGRAM_UNIT_S)
        row = dict(zip(by, keys if isinstance(keys, tuple) else (keys,)))
        row.update({stats.percentile_column(p): value for p, value in zip(stats.SUMMARY_PERCENTILES, spectrum)})
        row.update(latency_max_s=spectrum.max_s, requests=spectrum.count, trials_ok=len(histograms))
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def format_summary(summary: pd.DataFrame, metrics: Sequence[str], scale: dict[str, float] | None = None,
                   digits: int = 3) -> pd.DataFrame:
    """`median [low, high]` strings for display; `scale` divides a metric (e.g. bytes -> MiB)."""
    scale = scale or {}
    shown = summary.drop(columns=[c for c in summary if c.endswith(("_ci_low", "_ci_high"))]).copy()

    def text(value: float) -> str:
        if not math.isfinite(value):
            return "n/a"
        # Whole numbers past the shown digits keep their digits ("27,200", not "2.72e+04").
        return f"{value:,.0f}" if abs(value) >= 10 ** digits else f"{value:.{digits}g}"

    for metric in metrics:
        factor = scale.get(metric, 1.0)
        shown[metric] = [
            f"{text(m / factor)} [{text(lo / factor)}, {text(hi / factor)}]"
            for m, lo, hi in zip(summary[metric], summary[f"{metric}_ci_low"], summary[f"{metric}_ci_high"])
        ]
    return shown


def compare_at_level(trials: pd.DataFrame, pairs: Sequence[tuple[str, str]], metrics: Sequence[str], level) -> pd.DataFrame:
    """benchstat-style comparisons (label vs label) among the ok trials at one load level."""
    subset = trials[(trials["status"] == "ok") & (trials["level"] == level)]
    present = set(subset["label"])
    usable = [(a, b) for a, b in pairs if a in present and b in present]
    if not usable:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS) + ["level"])
    table = stats.compare_conditions(subset, usable, list(metrics), condition_column="label")
    table["level"] = level
    return table


def noise_floor(trials: pd.DataFrame, metric: str = "throughput_rps") -> dict:
    """A/A control: coefficient of variation per condition and the ratio of medians with its CI."""
    ok = trials[trials["status"] == "ok"]
    labels = sorted(ok["label"].unique())
    cv = {label: float(ok.loc[ok["label"] == label, metric].std(ddof=1) / ok.loc[ok["label"] == label, metric].mean())
          for label in labels}
    pooled = ok[metric].to_numpy(dtype=float)
    result = {"cv_by_condition": cv, "cv_pooled": float(np.std(pooled, ddof=1) / np.mean(pooled)) if len(pooled) > 1 else math.nan}
    if len(labels) == 2:
        a = ok.loc[ok["label"] == labels[0], metric].to_numpy(dtype=float)
        b = ok.loc[ok["label"] == labels[1], metric].to_numpy(dtype=float)
        if len(a) >= 2 and len(b) >= 2:
            ratio = stats.ratio_of_medians_ci(a, b)
            result.update({"ratio": ratio.ratio, "ratio_ci_low": ratio.ci_low, "ratio_ci_high": ratio.ci_high,
                           "p_value": stats.mann_whitney(a, b).p_value, "labels": labels})
    return result


def with_concurrency(trials: pd.DataFrame) -> pd.DataFrame:
    """Trials with the load level as `concurrency` (closed loop) for the throughput figure."""
    return trials.assign(concurrency=trials["level"])


def spread_note(n_ok: int) -> str:
    if n_ok < 4:
        return f"only {n_ok} trials per condition: no test can reach p<0.05 and no 95% CI exists; read as a smoke test"
    if n_ok < 6:
        return f"{n_ok} trials per condition: tests possible, but no 95% CI on a median exists"
    return ""


def evidence_trials(trials: pd.DataFrame) -> pd.DataFrame:
    """The trials a verdict may use: ok, and a loadgen with headroom (loadlab.judgements.evidence's policy)."""
    saturated = trials["loadgen_saturated"].astype("boolean").fillna(False).astype(bool) if "loadgen_saturated" in trials else False
    return trials[(trials["status"] == "ok") & ~saturated]


def profiler_overhead(trials: pd.DataFrame, pairs: Sequence[tuple[str, str]], metric: str = "throughput_rps",
                      confidence: float = 0.95) -> pd.DataFrame:
    """Per (label without, label with) profiler: the Hodges-Lehmann ratio with / without of `metric` and its exact
    interval, on evidence trials (ok, loadgen not saturated); `overhead_pct` = 100 * (1 - ratio)."""
    evidence = evidence_trials(trials)
    rows = []
    for without, with_profiler in pairs:
        baseline = evidence.loc[evidence["label"] == without, metric].astype(float).to_numpy()
        candidate = evidence.loc[evidence["label"] == with_profiler, metric].astype(float).to_numpy()
        row = {"without": without, "with": with_profiler, "n_without": baseline.size, "n_with": candidate.size,
               "ratio": math.nan, "ci_low": math.nan, "ci_high": math.nan}
        if baseline.size and candidate.size and (baseline > 0).all() and (candidate > 0).all():
            interval = stats.shift_ratio_interval(baseline, candidate, confidence)
            row.update(ratio=interval.ratio, ci_low=interval.ci_low, ci_high=interval.ci_high)
        rows.append(row)
    table = pd.DataFrame(rows)
    table["overhead_pct"] = 100 * (1 - table["ratio"])
    return table


# A capacity is the server's only when the loadgen had room to spare: below this share of its core(s) busy.
# Saturation (config.LOADGEN_SATURATION_UTILIZATION, 95%) is where a trial stops being evidence at all; between
# the two, the loadgen's own queueing already shapes the answer (issue: headroom for every comparison).
CAPACITY_HEADROOM_UTILIZATION = 0.80


def capacity_ranking(trials: pd.DataFrame, headroom: float = CAPACITY_HEADROOM_UTILIZATION,
                     confidence: float = 0.95) -> pd.DataFrame:
    """Servers ranked by throughput measured with loadgen headroom, each against the next one down.

    Only ok trials whose loadgen stayed below `headroom` of its CPU count.
    One row per label: trials ok and with headroom, the loadgen's highest
    utilization, the median throughput (req/s) with its CI, and the rank
    with the Hodges-Lehmann ratio to the next-ranked server and its exact
    interval. `versus_next` is "~" when that interval holds 1 (the two
    cannot be told apart: they share a rank) and "" for the last. A label
    with fewer trials with headroom than a CI needs is listed, not ranked.
    """
    ok = trials[trials["status"] == "ok"]
    utilization = pd.to_numeric(ok["loadgen_cpu_utilization"], errors="coerce")
    with_headroom = ok[utilization < headroom]
    needed = stats.minimum_trials_for_median_ci(confidence)
    rows = []
    for label, block in ok.groupby("label", sort=False):
        kept = with_headroom.loc[with_headroom["label"] == label, "throughput_rps"].to_numpy(dtype=float)
        estimate = stats.median_ci(kept, confidence) if kept.size else None
        rows.append({
            "label": label, "trials_ok": len(block), "trials_with_headroom": int(kept.size),
            "loadgen_utilization_max": float(pd.to_numeric(block["loadgen_cpu_utilization"], errors="coerce").max()),
            "throughput_rps": estimate.median if estimate else math.nan,
            "throughput_ci_low_rps": estimate.ci_low if estimate else math.nan,
            "throughput_ci_high_rps": estimate.ci_high if estimate else math.nan,
            "_values": kept,
        })
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    rankable = table["trials_with_headroom"] >= needed
    table = pd.concat([table[rankable].sort_values("throughput_rps", ascending=False), table[~rankable]],
                      ignore_index=True)
    table["rank"] = pd.array([None] * len(table), dtype="Int64")
    table["ratio_to_next"] = math.nan
    table["ratio_to_next_ci_low"] = math.nan
    table["ratio_to_next_ci_high"] = math.nan
    table["versus_next"] = ""
    rank = 0
    ranked = int(rankable.sum())
    for position in range(ranked):
        if position == 0 or table.at[position - 1, "versus_next"] != "~":
            rank = position + 1
        table.at[position, "rank"] = rank
        if position + 1 < ranked:
            interval = stats.shift_ratio_interval(table.at[position + 1, "_values"], table.at[position, "_values"],
                                                  confidence)
            table.loc[position, ["ratio_to_next", "ratio_to_next_ci_low", "ratio_to_next_ci_high"]] = \
                [interval.ratio, interval.ci_low, interval.ci_high]
            # No interval (too few trials for it) cannot tell the two apart either.
            apart = math.isfinite(interval.ci_low) and not interval.ci_low <= 1 <= interval.ci_high
            table.at[position, "versus_next"] = "faster" if apart else "~"
    return table.drop(columns="_values")


def minimum_detectable_ratio(cv: float, trials_per_side: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest ratio of two conditions' medians that `trials_per_side` trials a side detect with `power`.

    Normal approximation for two groups whose trials vary with coefficient of
    variation `cv` (each trial a fresh instance, so `cv` is the between-instance
    spread): (z_{1-alpha/2} + z_power) * cv * sqrt(2 / n), scaled by 1/0.955
    for the Mann-Whitney test's efficiency against the t test, returned as
    1 + that relative difference.
    """
    from scipy.stats import norm

    if trials_per_side < 2 or not cv > 0:
        return math.nan
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    return 1 + z * cv * math.sqrt(2 / trials_per_side) / math.sqrt(0.955)


def trials_for_detectable_ratio(cv: float, ratio: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """The fewest trials a side with which minimum_detectable_ratio(cv, n) is at most `ratio` (its inverse)."""
    from scipy.stats import norm

    if not cv > 0 or not ratio > 1:
        raise ValueError(f"cv must be > 0 and ratio > 1, got cv={cv!r}, ratio={ratio!r}")
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    return max(2, math.ceil(2 * (z * cv / ((ratio - 1) * math.sqrt(0.955))) ** 2))


def isolation_noise(windows: pd.DataFrame, trials_per_side: int = 6) -> pd.DataFrame:
    """Within- and between-instance spread of throughput per isolation mode (harness.isolation rows).

    Per mode: instances, windows per instance, the median throughput (req/s),
    the within-instance CV (the median over instances of the CV of their
    windows), the between-instance CV (the CV of the instances' medians) with
    a 95% interval (bootstrap over instances, percentile), and the minimum
    detectable ratio a comparison of `trials_per_side` fresh instances a side
    has at that between-instance CV.

    Where the windows carry `server_cpu_steal_share` (runs from 2026-11-26
    on): the median share of the server's CPU the hypervisor stole in a
    window, the largest, and Spearman's rho between an instance's median
    throughput and its mean steal (negative: the instances that lost more
    CPU to neighbours served less).
    """
    from scipy.stats import spearmanr

    rng = np.random.default_rng(0)
    rows = []
    for mode, block in windows.groupby("mode", sort=False):
        per_instance = block.groupby("instance")["throughput_rps"]
        medians = per_instance.median().to_numpy(dtype=float)
        within = (per_instance.std(ddof=1) / per_instance.mean()).median()
        between = float(np.std(medians, ddof=1) / np.mean(medians))
        resampled = rng.choice(medians, size=(4000, medians.size), replace=True)
        cvs = resampled.std(axis=1, ddof=1) / resampled.mean(axis=1)
        row = {
            "mode": mode, "instances": int(medians.size), "windows_per_instance": int(per_instance.size().median()),
            "throughput_rps": float(np.median(medians)), "within_instance_cv": float(within),
            "between_instance_cv": between, "between_instance_cv_ci_low": float(np.quantile(cvs, 0.025)),
            "between_instance_cv_ci_high": float(np.quantile(cvs, 0.975)),
            f"minimum_detectable_ratio_at_{trials_per_side}_trials": minimum_detectable_ratio(between, trials_per_side),
        }
        if "server_cpu_steal_share" in block and block["server_cpu_steal_share"].notna().any():
            steal = block.groupby("instance")["server_cpu_steal_share"].mean()
            row.update({"server_steal_share_median": float(block["server_cpu_steal_share"].median()),
                        "server_steal_share_max": float(block["server_cpu_steal_share"].max()),
                        "steal_throughput_spearman": float(spearmanr(steal.to_numpy(), per_instance.median().loc[
                            steal.index].to_numpy()).statistic) if steal.nunique() > 1 else float("nan")})
        rows.append(row)
    return pd.DataFrame(rows)


def isolation_spread_test(windows: pd.DataFrame, first: str, second: str) -> float:
    """p of the Brown-Forsythe test that the instances of two modes spread alike (their instance medians)."""
    from scipy.stats import levene

    medians = windows.groupby(["mode", "instance"])["throughput_rps"].median()
    return float(levene(medians.loc[first].to_numpy(), medians.loc[second].to_numpy(), center="median").pvalue)


def overload_over_time(trials: pd.DataFrame, timeseries: pd.DataFrame, thread_counts: pd.DataFrame,
                       throughput_timeline: pd.DataFrame, level) -> pd.DataFrame:
    """One tidy frame of what an open-loop overload did over each window, for `plots.resources_over_time_figure`.

    Rows from three clocks, each holding one of the value columns:
    `memory_in_use_bytes` (the sampler, 4 times a second),
    `established_connections` (the kernel's socket table, once a second:
    accepted connections and those still waiting in the listen queue) and
    `successful_rps` (2xx/3xx answers per second, by the second the request
    was sent, from the loadgen's per-request results). `t_s` is seconds since
    the window began; the trials' label, status, failure reason and loadgen
    saturation ride along so excluded trials are drawn as such.
    """
    at_level = trials[trials["level"] == level][["trial", "label", "status", "failure_reason", "loadgen_saturated"]]
    memory = timeseries.merge(at_level, on="trial")[["trial", "t_s", "server_memory_in_use_bytes"]]
    parts = [memory.rename(columns={"server_memory_in_use_bytes": "memory_in_use_bytes"})]
    if thread_counts is not None and not thread_counts.empty:
        connections = thread_counts[thread_counts["metric"] == "connections"]
        parts.append(connections.drop(columns="t_s").rename(columns={"t_window_s": "t_s", "count": "established_connections"})
                     [["trial", "t_s", "established_connections"]].astype({"established_connections": float}))
    if throughput_timeline is not None and not throughput_timeline.empty:
        window = throughput_timeline[throughput_timeline["phase"] != "warmup"] if "phase" in throughput_timeline \
            else throughput_timeline
        # The timeline lists only the seconds in which some request succeeded; a second in which none did is a
        # 0, not a gap (a gap would leave the median to the trials that still answered).
        seconds = range(1, int(np.ceil(window["second"].max())) + 1) if len(window) else range(0)
        filled = (window.pivot_table(index="second", columns="trial", values="throughput_rps", aggfunc="sum")
                  .reindex(seconds).fillna(0.0).reindex(columns=at_level["trial"], fill_value=0.0))
        answered = filled.reset_index().melt(id_vars="second", var_name="trial", value_name="successful_rps")
        # "second" n counts the requests sent in [n - 1, n): drawn at the middle of that second.
        parts.append(answered.assign(t_s=answered["second"] - 0.5)[["trial", "t_s", "successful_rps"]])
    frame = pd.concat(parts, ignore_index=True)
    return frame.merge(at_level, on="trial").sort_values(["trial", "t_s"]).reset_index(drop=True)
