"""Two-sided Mann-Whitney U test and Holm's correction for a family of tests."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.stats
from numpy.typing import ArrayLike

from ._samples import as_sample

# Up to this many values per group the p-value is exact, ties or not: the
# conditional permutation distribution of the rank sum given the pooled
# midranks, counted by dynamic programming (about 40 x 20 x 1,640 cells at
# 20 + 20, milliseconds). Beyond it the normal approximation is excellent.
EXACT_MAXIMUM_GROUP_SIZE = 20
METHOD_EXACT = "exact"
METHOD_PERMUTATION = "exact-permutation"
METHOD_ASYMPTOTIC = "asymptotic"


class MannWhitneyResult(NamedTuple):
    """Result of a two-sided Mann-Whitney U test.

    `u_candidate` counts the (baseline, candidate) pairs where the candidate
    is larger, ties counting one half: ``u_candidate / (n_baseline *
    n_candidate)`` estimates P(candidate > baseline) + P(tie) / 2.
    `method` says how the p-value was computed (see `mann_whitney`).
    """

    u_candidate: float
    p_value: float
    method: str
    n_baseline: int
    n_candidate: int


def minimum_two_sided_p_value(n_baseline: int, n_candidate: int) -> float:
    """Smallest two-sided exact p-value a Mann-Whitney U test can reach with these group sizes.

    The most extreme arrangement (every candidate above every baseline, or
    below) has probability ``1 / C(n1 + n2, n1)`` under the null, on each
    side: 2/20 = 0.100 for 3 vs 3, 2/70 = 0.029 for 4 vs 4. If this exceeds
    the significance level, no data can give a significant result.
    """
    if n_baseline < 1 or n_candidate < 1:
        raise ValueError("both groups need at least one value")
    return min(1.0, 2.0 / math.comb(n_baseline + n_candidate, n_baseline))


def _exact_rank_sum_p_value(pooled_doubled_ranks: np.ndarray, n_candidate: int, observed_doubled_sum: int) -> float:
    """Two-sided p for the candidate's doubled rank sum r: twice the smaller tail, P(R <= r) or P(R >= r).

    Doubling the smaller tail is scipy's convention for a two-sided
    permutation test; with ties the null distribution need not be symmetric.

    `pooled_doubled_ranks` are 2 x the midranks of all values (integers, ties
    sharing one); every way to choose `n_candidate` of them is equally likely
    under the null, which is the exact conditional distribution with ties.
    """
    total = int(pooled_doubled_ranks.sum())
    # ways[k][s]: the number of k-subsets of the items seen so far whose doubled ranks sum to s.
    ways = np.zeros((n_candidate + 1, total + 1))
    ways[0, 0] = 1.0
    for rank in pooled_doubled_ranks.astype(int):
        ways[1:, rank:] = ways[1:, rank:] + ways[:-1, : total + 1 - rank]
    distribution = ways[n_candidate]
    distribution = distribution / distribution.sum()
    lower = distribution[: observed_doubled_sum + 1].sum()
    upper = distribution[observed_doubled_sum:].sum()
    return float(min(1.0, 2.0 * min(lower, upper)))


def mann_whitney(baseline: ArrayLike, candidate: ArrayLike) -> MannWhitneyResult:
    """Two-sided Mann-Whitney U test of candidate vs baseline (any unit; only order matters).

    Tests whether values of one group tend to be larger than the other's
    (H0: P(candidate > baseline) = P(candidate < baseline) for exchangeable
    samples). The p-value method:

    - ``"exact"``: no ties and both groups <= 20 values: the exact null
      distribution of U.
    - ``"exact-permutation"``: ties and both groups <= 20 values: the exact
      conditional distribution given the tied midranks (every split of the
      pooled values equally likely), which the normal approximation gets up
      to 2.3x wrong at 9-15 per side.
    - ``"asymptotic"``: larger groups; normal approximation with tie and
      continuity corrections.

    A group of one value is allowed: the test then cannot reject, and says so
    through its p-value.
    """
    baseline_sample = as_sample(baseline, "baseline")
    candidate_sample = as_sample(candidate, "candidate")
    n_baseline, n_candidate = baseline_sample.size, candidate_sample.size
    pooled = np.concatenate([baseline_sample, candidate_sample])
    ranks = scipy.stats.rankdata(pooled)
    rank_sum = float(ranks[n_baseline:].sum())
    u_candidate = rank_sum - n_candidate * (n_candidate + 1) / 2
    if np.ptp(pooled) == 0:
        # Every value equal: every split is alike, so the permutation p-value is exactly 1.
        return MannWhitneyResult(n_baseline * n_candidate / 2, 1.0, METHOD_PERMUTATION, n_baseline, n_candidate)
    if max(n_baseline, n_candidate) <= EXACT_MAXIMUM_GROUP_SIZE:
        has_ties = np.unique(pooled).size < pooled.size
        doubled = np.rint(2 * ranks).astype(int)
        p_value = _exact_rank_sum_p_value(doubled, n_candidate, int(round(2 * rank_sum)))
        return MannWhitneyResult(u_candidate, p_value, METHOD_PERMUTATION if has_ties else METHOD_EXACT,
                                 n_baseline, n_candidate)
    result = scipy.stats.mannwhitneyu(candidate_sample, baseline_sample, alternative="two-sided", method="asymptotic")
    return MannWhitneyResult(float(result.statistic), float(result.pvalue), METHOD_ASYMPTOTIC, n_baseline, n_candidate)


def holm_adjust(p_values: ArrayLike) -> np.ndarray:
    """Holm (1979) step-down adjusted p-values, in the order given.

    Holm, S. (1979). A simple sequentially rejective multiple test
    procedure. Scandinavian Journal of Statistics 6(2), 65-70. With the m
    p-values sorted ascending, the i-th (1-based) is multiplied by
    ``m - i + 1``, a running maximum keeps the adjusted values monotone, and
    they are capped at 1. Rejecting every hypothesis whose adjusted p is
    below alpha controls the family-wise error rate at alpha under any
    dependence between the tests. (scipy.stats.false_discovery_control
    offers Benjamini-Hochberg/Yekutieli, which control the FDR instead.)
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError(f"p_values must be one-dimensional, got shape {p.shape}")
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p_values must all be finite numbers in [0, 1]")
    m = p.size
    order = np.argsort(p, kind="stable")
    multipliers = m - np.arange(m)
    adjusted_sorted = np.minimum(1.0, np.maximum.accumulate(p[order] * multipliers))
    adjusted = np.empty(m)
    adjusted[order] = adjusted_sorted
    return adjusted
