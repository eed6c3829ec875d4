"""The Hodges-Lehmann ratio and its exact interval (loadlab.stats.shift)."""

import itertools
import math

import numpy as np
import pytest
import scipy.stats

from loadlab.stats import minimum_trials_for_shift_interval, shift_ratio_interval
from loadlab.stats.shift import _u_distribution


def test_the_u_distribution_matches_brute_force():
    m, n = 4, 5
    counts = np.zeros(m * n + 1)
    for chosen in itertools.combinations(range(m + n), m):
        # U = pairs (baseline, candidate) with the candidate larger: ranks of the chosen baseline values.
        u = sum(sum(1 for j in range(m + n) if j not in chosen and j > i) for i in chosen)
        counts[u] += 1
    assert np.allclose(_u_distribution(m, n), counts / counts.sum())


def _inverted_interval(baseline, candidate, alpha):
    """Every log-shift s at which scipy's exact two-sided U test on (log c - s) vs log b does not reject."""
    log_b, log_c = np.log(baseline), np.log(candidate)
    differences = np.sort((log_c[None, :] - log_b[:, None]).ravel())
    # Between consecutive pairwise differences U is constant: test one point inside each gap.
    points = np.concatenate([[differences[0] - 1], (differences[:-1] + differences[1:]) / 2, [differences[-1] + 1]])
    kept = [s for s in points
            if scipy.stats.mannwhitneyu(log_c - s, log_b, method="exact").pvalue > alpha]
    return math.exp(min(kept)), math.exp(max(kept))


@pytest.mark.parametrize("seed", range(5))
def test_the_interval_is_the_inverted_exact_test(seed):
    rng = np.random.default_rng(seed)
    baseline = np.exp(rng.normal(0, 0.1, 7))
    candidate = 1.2 * np.exp(rng.normal(0, 0.1, 6))
    interval = shift_ratio_interval(baseline, candidate, 0.95)
    low, high = _inverted_interval(baseline, candidate, 0.05)
    # The test is constant between pairwise differences; the interval's ends are the differences that bound
    # the gaps whose midpoints the test keeps.
    differences = np.sort((np.log(candidate)[None, :] - np.log(baseline)[:, None]).ravel())
    lowest = int(np.argmin(np.abs(differences - math.log(interval.ci_low))))
    highest = int(np.argmin(np.abs(differences - math.log(interval.ci_high))))
    assert math.log(low) == pytest.approx((differences[lowest] + differences[lowest + 1]) / 2)
    assert math.log(high) == pytest.approx((differences[highest - 1] + differences[highest]) / 2)
    assert interval.achieved_confidence >= 0.95
    assert interval.ci_low <= interval.ratio <= interval.ci_high


def test_no_interval_below_the_size_that_allows_one():
    assert math.isnan(shift_ratio_interval([1, 2, 3], [4, 5, 6], 0.95).ci_low)
    assert math.isnan(shift_ratio_interval([1, 2, 3, 4, 5], [6, 7, 8, 9, 10], 0.995).ci_high)
    assert minimum_trials_for_shift_interval(0.95) == 4
    assert minimum_trials_for_shift_interval(1 - 0.05 / 9) == 6


def test_scaling_the_candidate_scales_every_number():
    baseline, candidate = [1.0, 1.2, 0.9, 1.1, 1.05], [2.0, 2.4, 1.9, 2.2, 2.1]
    once = shift_ratio_interval(baseline, candidate)
    twice = shift_ratio_interval(baseline, 2 * np.asarray(candidate))
    assert [2 * x for x in once[:3]] == pytest.approx(list(twice[:3]))


def test_coverage_on_log_normal_data_meets_the_nominal_level():
    rng = np.random.default_rng(11)
    covered = 0
    simulations = 1000
    for _ in range(simulations):
        interval = shift_ratio_interval(np.exp(rng.normal(0, 0.2, 6)), 1.5 * np.exp(rng.normal(0, 0.2, 6)), 0.95)
        covered += interval.ci_low <= 1.5 <= interval.ci_high
    assert covered / simulations >= 0.94  # nominal 0.959 at 6 + 6; 1,000 runs give a standard error of 0.6%


def test_values_must_be_positive():
    with pytest.raises(ValueError, match="baseline"):
        shift_ratio_interval([0.0, 1.0], [1.0, 2.0])
