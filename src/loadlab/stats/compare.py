"""A benchstat-style comparison table: medians with CIs, delta with CI, Holm-adjusted p.

One row per (metric, baseline, candidate). All rows of one table form the
Holm family; to correct across several tables (docs/architecture.md,
"Statistics": the family is every comparison in one notebook), concatenate them and call `holm_adjust_table`.

A difference is called significant when the Holm-adjusted Mann-Whitney p is
below alpha; otherwise the delta column shows "~", as benchstat does. The
delta's bootstrap CI is still reported either way: it says how large a
difference the data cannot rule out. (The two can disagree near the edge: the
U test asks whether one group tends to be larger, the CI is about medians.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from loadlab import metrics
from loadlab.units import NOT_A_NUMBER, format_number, scale_for, with_unit

from ._samples import check_confidence
from .effect_size import cliffs_delta
from .median import DEFAULT_MEDIAN_CI_METHOD, DEFAULT_RESAMPLES, DEFAULT_SEED, median_ci, minimum_trials_for_median_ci
from .outliers import tukey_outliers
from .ratio import ratio_of_medians_ci
from .significance import holm_adjust, mann_whitney, minimum_two_sided_p_value

NOT_SIGNIFICANT = "~"
_DIGITS = 3  # significant digits of a median and its CI in the rendered table, as benchstat prints them

COMPARISON_COLUMNS = (
    "metric", "baseline", "candidate", "n_baseline", "n_candidate",
    "baseline_median", "baseline_ci_low", "baseline_ci_high",
    "candidate_median", "candidate_ci_low", "candidate_ci_high",
    "ratio", "ratio_ci_low", "ratio_ci_high",
    "delta_pct", "delta_ci_low_pct", "delta_ci_high_pct",
    "u_candidate", "p_value", "p_method", "p_holm", "significant",
    "cliffs_delta", "cliffs_magnitude",
    "baseline_outliers", "candidate_outliers", "confidence", "median_ci_method", "warnings",
)  # fmt: skip


def _group_values(data: pd.DataFrame, condition_column: str, condition: str, metric: str) -> tuple[np.ndarray, int]:
    """Finite values of `metric` for one condition, and how many were missing (NaN/inf)."""
    column = pd.to_numeric(data.loc[data[condition_column] == condition, metric], errors="coerce")
    values = column.to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    return finite, values.size - finite.size


def _sample_size_warnings(n_baseline: int, n_candidate: int, confidence: float, alpha: float) -> list[str]:
    warnings: list[str] = []
    smallest_p = minimum_two_sided_p_value(n_baseline, n_candidate)
    if smallest_p >= alpha:
        warnings.append(
            f"n={n_baseline}+{n_candidate}: no U test can reach p<{alpha:g} "
            f"(smallest possible two-sided p is {smallest_p:.3f}); run more trials"
        )
    minimum = minimum_trials_for_median_ci(confidence)
    if min(n_baseline, n_candidate) < minimum:
        warnings.append(
            f"fewer than {minimum} trials in a group: no {confidence:.0%} CI on a median exists "
            f"(even [min, max] covers it with probability 1 - 2 * 0.5^n)"
        )
    return warnings


def compare_conditions(
    data: pd.DataFrame,
    comparisons: Sequence[tuple[str, str]],
    value_columns: str | Sequence[str],
    condition_column: str = "server",
    confidence: float = 0.95,
    alpha: float = 0.05,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    median_method: str = DEFAULT_MEDIAN_CI_METHOD,
) -> pd.DataFrame:
    """Compare conditions trial by trial, benchstat style; returns one row per (metric, comparison).

    `data` is tidy: one row per trial, a `condition_column` naming the
    condition (e.g. ``server``) and one column per metric, unit in the name
    (``throughput_rps``, ``latency_p99_s``, ``memory_in_use_bytes``).
    `comparisons` lists (baseline, candidate) condition pairs. Medians and
    their CIs are in the metric's unit; `ratio` = candidate median / baseline
    median and ``delta_pct = 100 * (ratio - 1)``, with bootstrap CIs
    (`ratio_of_medians_ci`, seeded with `seed`). ``p_value`` is the two-sided
    Mann-Whitney U test; ``p_holm`` is Holm-adjusted over every row of the
    table; ``significant`` is ``p_holm < alpha``. Outliers (Tukey's 1.5 IQR
    fences) are counted, never removed. ``warnings`` explains rows that
    cannot be trusted: too few trials for a U test to reach alpha or for a
    median CI, missing values dropped, outliers present. Ratio columns are
    NaN when a metric is not strictly positive in the baseline.
    """
    confidence = check_confidence(confidence)
    metrics = [value_columns] if isinstance(value_columns, str) else list(value_columns)
    for column in [condition_column, *metrics]:
        if column not in data.columns:
            raise KeyError(f"column {column!r} is not in the data (columns: {', '.join(map(str, data.columns))})")
    known_conditions = set(data[condition_column].unique())
    rows = []
    for metric in metrics:
        for baseline_name, candidate_name in comparisons:
            for name in (baseline_name, candidate_name):
                if name not in known_conditions:
                    raise KeyError(f"condition {name!r} has no rows in column {condition_column!r}")
            baseline, baseline_missing = _group_values(data, condition_column, baseline_name, metric)
            candidate, candidate_missing = _group_values(data, condition_column, candidate_name, metric)
            rows.append(
                _compare_pair(
                    metric, baseline_name, candidate_name, baseline, candidate,
                    baseline_missing + candidate_missing, confidence, alpha, resamples, seed, median_method,
                )  # fmt: skip
            )
    table = pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))
    return holm_adjust_table(table, alpha)


def _compare_pair(
    metric: str,
    baseline_name: str,
    candidate_name: str,
    baseline: np.ndarray,
    candidate: np.ndarray,
    missing: int,
    confidence: float,
    alpha: float,
    resamples: int,
    seed: int,
    median_method: str,
) -> dict:
    if baseline.size == 0 or candidate.size == 0:
        empty = baseline_name if baseline.size == 0 else candidate_name
        raise ValueError(f"{metric}: condition {empty!r} has no finite values")
    warnings = _sample_size_warnings(baseline.size, candidate.size, confidence, alpha)
    if missing:
        warnings.append(f"{missing} missing value(s) dropped")
    baseline_estimate = median_ci(baseline, confidence, median_method, resamples, seed)
    candidate_estimate = median_ci(candidate, confidence, median_method, resamples, seed)
    if np.all(baseline > 0) and np.all(candidate >= 0):
        ratio = ratio_of_medians_ci(baseline, candidate, confidence, resamples, seed)
        ratio_values = (ratio.ratio, ratio.ci_low, ratio.ci_high)
    else:
        ratio_values = (math.nan, math.nan, math.nan)
        warnings.append("no ratio: baseline values must be > 0 and candidate values >= 0")
    test = mann_whitney(baseline, candidate)
    effect = cliffs_delta(baseline, candidate)
    baseline_outliers = int(tukey_outliers(baseline).sum())
    candidate_outliers = int(tukey_outliers(candidate).sum())
    if baseline_outliers or candidate_outliers:
        warnings.append(
            f"Tukey outliers kept: {baseline_outliers} in baseline, {candidate_outliers} in candidate"
        )
    return {
        "metric": metric,
        "baseline": baseline_name,
        "candidate": candidate_name,
        "n_baseline": baseline.size,
        "n_candidate": candidate.size,
        "baseline_median": baseline_estimate.median,
        "baseline_ci_low": baseline_estimate.ci_low,
        "baseline_ci_high": baseline_estimate.ci_high,
        "candidate_median": candidate_estimate.median,
        "candidate_ci_low": candidate_estimate.ci_low,
        "candidate_ci_high": candidate_estimate.ci_high,
        "ratio": ratio_values[0],
        "ratio_ci_low": ratio_values[1],
        "ratio_ci_high": ratio_values[2],
        "delta_pct": 100.0 * (ratio_values[0] - 1.0),
        "delta_ci_low_pct": 100.0 * (ratio_values[1] - 1.0),
        "delta_ci_high_pct": 100.0 * (ratio_values[2] - 1.0),
        "u_candidate": test.u_candidate,
        "p_value": test.p_value,
        "p_method": test.method,
        "p_holm": math.nan,
        "significant": False,
        "cliffs_delta": effect.delta,
        "cliffs_magnitude": effect.magnitude,
        "baseline_outliers": baseline_outliers,
        "candidate_outliers": candidate_outliers,
        "confidence": confidence,
        "median_ci_method": baseline_estimate.method,
        "warnings": "; ".join(warnings),
    }


def holm_adjust_table(table: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """Recompute ``p_holm`` and ``significant`` treating every row of `table` as one family.

    Use after concatenating the tables of one notebook. Returns a copy.
    """
    adjusted = table.copy()
    if len(adjusted):
        adjusted["p_holm"] = holm_adjust(adjusted["p_value"].to_numpy(dtype=float))
        adjusted["significant"] = adjusted["p_holm"] < alpha
    return adjusted


def _format_estimate(median: float, low: float, high: float, unit: str) -> str:
    """ "72,150 req/s [71,100, 73,900]": the CI shares the median's prefix so that it reads at a glance."""
    if not math.isfinite(median):
        return NOT_A_NUMBER
    factor, printed = scale_for(median, unit)
    text = with_unit(format_number(median / factor, _DIGITS), printed)
    if math.isnan(low) or math.isnan(high):
        return f"{text} [no CI]"
    return f"{text} [{format_number(low / factor, _DIGITS)}, {format_number(high / factor, _DIGITS)}]"


def _format_percent(value: float) -> str:
    return "n/a" if not math.isfinite(value) else f"{value:+.1f}%"


def _format_p_value(p: float) -> str:
    if not math.isfinite(p):
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def render_comparison_table(table: pd.DataFrame) -> str:
    """Plain-text rendering of a `compare_conditions` table, benchstat style.

    Columns: metric, comparison, baseline and candidate median [CI], delta
    ("~" when not significant after Holm), delta CI, Holm-adjusted p and
    n per side. Warnings follow as numbered footnotes, referenced from the
    comparison column.
    """
    headers = ["metric", "baseline → candidate", "baseline median [CI]", "candidate median [CI]",
               "delta", "delta CI", "p (Holm)", "n"]  # fmt: skip
    lines_out: list[list[str]] = []
    footnotes: list[str] = []
    for row in table.itertuples(index=False):
        unit = metrics.unit(row.metric)
        comparison = f"{row.baseline} → {row.candidate}"
        if row.warnings:
            if row.warnings not in footnotes:
                footnotes.append(row.warnings)
            comparison += f" [{footnotes.index(row.warnings) + 1}]"
        delta = _format_percent(row.delta_pct) if row.significant else NOT_SIGNIFICANT
        if math.isnan(row.delta_ci_low_pct):
            delta_ci = "no CI"
        else:
            delta_ci = f"[{_format_percent(row.delta_ci_low_pct)}, {_format_percent(row.delta_ci_high_pct)}]"
        lines_out.append([
            row.metric,
            comparison,
            _format_estimate(row.baseline_median, row.baseline_ci_low, row.baseline_ci_high, unit),
            _format_estimate(row.candidate_median, row.candidate_ci_low, row.candidate_ci_high, unit),
            delta,
            delta_ci,
            _format_p_value(row.p_holm),
            f"{row.n_baseline}+{row.n_candidate}",
        ])  # fmt: skip
    widths = [max([len(headers[i])] + [len(line[i]) for line in lines_out]) for i in range(len(headers))]
    text = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip()]
    text += ["  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines_out]
    if footnotes:
        text.append("")
        text += [f"[{i}] {note}" for i, note in enumerate(footnotes, start=1)]
    if len(table):
        confidence = ", ".join(sorted({f"{c:.0%}" for c in table["confidence"]}))
        methods = ", ".join(sorted(set(table["median_ci_method"])))
        text.append("")
        text.append(
            f"{confidence} CIs; medians: {methods}; delta = ratio of medians - 1, percentile bootstrap; "
            f"p: two-sided Mann-Whitney U, Holm-adjusted over {len(table)} comparisons; "
            f"{NOT_SIGNIFICANT} = not significant after correction."
        )
    return "\n".join(text)
