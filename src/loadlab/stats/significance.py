"""Two-sided Mann-Whitney U test and Holm's correction for a family of tests."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import scipy.stats
from numpy.typing import ArrayLike

from ._samples import as_sample

# scipy's exact U distribution costs ~0.01 s at 100 per group and grows
# quickly after; beyond that the normal approximation is excellent anyway.
EXACT_MAXIMUM_GROUP_SIZE = 100
# With ties the exact null distribution is the conditional permutation
# distribution; enumerating C(n1+n2, n1) splits is affordable up to here
# (8 vs 8 = 12,870 splits; 10 vs 10 = 184,756 would take seconds).
PERMUTATION_MAXIMUM_SPLITS = 20_000

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


def mann_whitney(baseline: ArrayLike, candidate: ArrayLike) -> MannWhitneyResult:
    """Two-sided Mann-Whitney U test of candidate vs baseline (any unit; only order matters).

    Tests whether values of one group tend to be larger than the other's
    (H0: P(candidate > baseline) = P(candidate < baseline) for exchangeable
    samples). The p-value method:

    - ``"exact"``: no ties and both groups <= 100 values: scipy's exact null
      distribution of U (method='exact'). Small samples are exactly what the
      normal approximation gets wrong.
    - ``"exact-permutation"``: ties, and at most 20,000 ways to split the
      pooled values: scipy's exact permutation distribution (method=
      PermutationMethod), which accounts for ties exactly where scipy's
      'exact' would ignore them.
    - ``"asymptotic"``: otherwise; normal approximation with tie and
      continuity corrections.
    """
    baseline_sample = as_sample(baseline, "baseline")
    candidate_sample = as_sample(candidate, "candidate")
    n_baseline, n_candidate = baseline_sample.size, candidate_sample.size
    pooled = np.concatenate([baseline_sample, candidate_sample])
    has_ties = np.unique(pooled).size < pooled.size
    if np.ptp(pooled) == 0:
        # Every value equal: every split of the pooled values is alike, so the
        # permutation p-value is exactly 1 (the normal approximation would divide by 0).
        return MannWhitneyResult(n_baseline * n_candidate / 2, 1.0, METHOD_PERMUTATION, n_baseline, n_candidate)
    if not has_ties and max(n_baseline, n_candidate) <= EXACT_MAXIMUM_GROUP_SIZE:
        method, scipy_method = METHOD_EXACT, "exact"
    elif has_ties and math.comb(n_baseline + n_candidate, n_baseline) <= PERMUTATION_MAXIMUM_SPLITS:
        method, scipy_method = METHOD_PERMUTATION, scipy.stats.PermutationMethod(n_resamples=np.inf)
    else:
        method, scipy_method = METHOD_ASYMPTOTIC, "asymptotic"
    result = scipy.stats.mannwhitneyu(
        candidate_sample, baseline_sample, alternative="two-sided", method=scipy_method
    )
    return MannWhitneyResult(float(result.statistic), float(result.pvalue), method, n_baseline, n_candidate)


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
