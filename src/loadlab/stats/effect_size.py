"""Cliff's delta: an ordinal effect size that needs no distributional assumption.

Cliff, N. (1993). Dominance statistics: Ordinal analyses to answer ordinal
questions. Psychological Bulletin 114(3), 494-509.

Magnitude labels use the thresholds of Romano, J., Kromrey, J. D., Coraggio,
J., & Skowronek, J. (2006). Appropriate statistics for ordinal level data:
Should we really be using t-test and Cohen's d for evaluating group
differences on the NSSE and other surveys? Annual meeting of the Florida
Association of Institutional Research: |d| < 0.147 negligible, < 0.33
small, < 0.474 medium, otherwise large (the same as R's effsize package).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._samples import as_sample

NEGLIGIBLE_BELOW = 0.147
SMALL_BELOW = 0.33
MEDIUM_BELOW = 0.474


class CliffsDelta(NamedTuple):
    """Cliff's delta in [-1, 1] and its magnitude label (negligible/small/medium/large)."""

    delta: float
    magnitude: str


def cliffs_delta_magnitude(delta: float) -> str:
    """Romano et al. (2006) label for |delta|: negligible, small, medium or large."""
    size = abs(float(delta))
    if size < NEGLIGIBLE_BELOW:
        return "negligible"
    if size < SMALL_BELOW:
        return "small"
    if size < MEDIUM_BELOW:
        return "medium"
    return "large"


def cliffs_delta(baseline: ArrayLike, candidate: ArrayLike) -> CliffsDelta:
    """P(candidate > baseline) - P(candidate < baseline) over all pairs (dimensionless).

    +1: every candidate value exceeds every baseline value; 0: neither
    dominates; ties count for neither side. Equals ``2 U / (n1 n2) - 1`` with
    U the Mann-Whitney statistic of the candidate. O((n1 + n2) log n1).
    """
    baseline_sorted = np.sort(as_sample(baseline, "baseline"))
    candidate_sample = as_sample(candidate, "candidate")
    # For each candidate value: how many baseline values are strictly below / above it.
    below = np.searchsorted(baseline_sorted, candidate_sample, side="left")
    above = baseline_sorted.size - np.searchsorted(baseline_sorted, candidate_sample, side="right")
    delta = float((below.sum() - above.sum()) / (baseline_sorted.size * candidate_sample.size))
    return CliffsDelta(delta, cliffs_delta_magnitude(delta))
