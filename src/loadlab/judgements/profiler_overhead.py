"""Notebook 06: what a profiler costs the throughput it measures, and which way each interval points."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from loadlab.judgements.evidence import evidence_trials
from loadlab.stats import shift_ratio_interval

# Which way a with/without ratio's interval points (`overhead_effect`).
COSTS, FASTER, NOT_TOLD_APART = "costs", "faster", "~"


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
            interval = shift_ratio_interval(baseline, candidate, confidence)
            row.update(ratio=interval.ratio, ci_low=interval.ci_low, ci_high=interval.ci_high)
        rows.append(row)
    table = pd.DataFrame(rows)
    table["overhead_pct"] = 100 * (1 - table["ratio"])
    return table


def overhead_effect(ci_low: float, ci_high: float) -> str:
    """COSTS when the with/without ratio's interval lies below 1, FASTER above 1, NOT_TOLD_APART when it holds 1
    (or is missing: too few trials for an interval tell nothing apart)."""
    if ci_high < 1:
        return COSTS
    if ci_low > 1:
        return FASTER
    return NOT_TOLD_APART
