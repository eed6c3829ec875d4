"""Ratio of medians with an independent-resampling bootstrap CI."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from loadlab.stats import ratio_of_medians_ci


def test_point_estimate_is_the_ratio_of_the_sample_medians():
    estimate = ratio_of_medians_ci([10.0, 11.0, 12.0, 13.0, 14.0, 15.0], [20.0, 22.0, 24.0, 26.0, 28.0, 30.0])
    assert estimate.ratio == pytest.approx(2.0)
    assert estimate.ci_low <= 2.0 <= estimate.ci_high


def test_agrees_with_scipy_two_sample_bootstrap_with_the_same_seed():
    rng = np.random.default_rng(1)
    baseline, candidate = rng.lognormal(0, 0.3, 9), rng.lognormal(0.2, 0.3, 11)
    ours = ratio_of_medians_ci(baseline, candidate, resamples=3_000, seed=9)

    def statistic(b, c, axis=-1):
        return np.median(c, axis=axis) / np.median(b, axis=axis)

    reference = scipy.stats.bootstrap(
        (baseline, candidate), statistic, n_resamples=3_000, paired=False, method="percentile",
        rng=np.random.default_rng(9),
    ).confidence_interval  # fmt: skip
    assert (ours.ci_low, ours.ci_high) == pytest.approx((reference.low, reference.high))


def test_groups_are_resampled_independently_so_unequal_sizes_work():
    estimate = ratio_of_medians_ci(np.arange(1.0, 7.0), np.arange(1.0, 21.0))
    assert (estimate.n_baseline, estimate.n_candidate) == (6, 20)
    assert np.isfinite(estimate.ci_low) and np.isfinite(estimate.ci_high)


def test_coverage_at_ten_trials_per_group_on_skewed_data():
    # True ratio of medians: 2 * exp(0) / exp(0) = 2. 2,000 simulations
    # (standard error ~0.5 points) with 1,000 resamples each.
    rng = np.random.default_rng(20240602)
    hits = 0
    simulations = 2_000
    for index in range(simulations):
        baseline = rng.lognormal(0.0, 1.0, 10)
        candidate = 2.0 * rng.lognormal(0.0, 0.5, 10)
        estimate = ratio_of_medians_ci(baseline, candidate, resamples=1_000, seed=index)
        hits += estimate.ci_low <= 2.0 <= estimate.ci_high
    assert 0.93 <= hits / simulations <= 0.975, f"coverage {hits / simulations:.4f}"


def test_no_interval_below_six_trials_in_either_group():
    estimate = ratio_of_medians_ci(np.arange(1.0, 11.0), [1.0, 2.0, 3.0, 4.0, 5.0])
    assert estimate.ratio == pytest.approx(3.0 / 5.5)
    assert math.isnan(estimate.ci_low) and math.isnan(estimate.ci_high)


def test_a_baseline_that_can_be_zero_is_refused():
    with pytest.raises(ValueError, match="baseline"):
        ratio_of_medians_ci([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], np.arange(1.0, 7.0))
