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

MIB = 1024**2


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
        return "n/a" if not math.isfinite(value) else f"{value:.{digits}g}"

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
