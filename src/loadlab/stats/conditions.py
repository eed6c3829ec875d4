"""Per-condition statistics of a run's trials: each condition's medians with CIs, and comparisons at one level.

A condition is one (label, level). Percentiles are never averaged across
trials: a condition's p99 is the median of its trials' p99s, with a CI over
trials (`loadlab.stats.median_ci`); the open loop's p99 over every request
is `loadlab.latency_curve.merged_latency`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .compare import COMPARISON_COLUMNS, compare_conditions
from .median import median_ci


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
            estimate = median_ci(values)
            row.update({metric: estimate.median, f"{metric}_ci_low": estimate.ci_low, f"{metric}_ci_high": estimate.ci_high})
        rows.append(row)
    return pd.DataFrame(rows)


def compare_at_level(trials: pd.DataFrame, pairs: Sequence[tuple[str, str]], metrics: Sequence[str], level) -> pd.DataFrame:
    """benchstat-style comparisons (label vs label) among the ok trials at one load level."""
    subset = trials[(trials["status"] == "ok") & (trials["level"] == level)]
    present = set(subset["label"])
    usable = [(a, b) for a, b in pairs if a in present and b in present]
    if not usable:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS) + ["level"])
    table = compare_conditions(subset, usable, list(metrics), condition_column="label")
    table["level"] = level
    return table
