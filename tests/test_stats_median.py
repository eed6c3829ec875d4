"""Median confidence intervals: agreement with scipy, known answers, and measured coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats

from loadlab.stats import (
    DEFAULT_MEDIAN_CI_METHOD,
    MEDIAN_CI_METHODS,
    median_ci,
    minimum_trials_for_median_ci,
    sign_test_coverage,
)

LOGNORMAL_TRUE_MEDIAN = 1.0  # median of lognormal(mu=0, sigma=1) is exp(0)


def coverage(method: str, n: int, simulations: int, seed: int, confidence: float = 0.95, **options) -> float:
    """Fraction of seeded lognormal samples of size n whose CI contains the true median."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(simulations):
        estimate = median_ci(rng.lognormal(0.0, 1.0, n), confidence=confidence, method=method, **options)
        hits += estimate.ci_low <= LOGNORMAL_TRUE_MEDIAN <= estimate.ci_high
    return hits / simulations


# --- coverage: the reason for the default method ------------------------------------------


def two_level_coverage(method: str, n: int, simulations: int, seed: int) -> float:
    """Coverage on this machine's throughput shape: each trial at ~58k or ~65k req/s (50/50, 1.5% spread)."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(simulations):
        levels = rng.choice([58_000.0, 65_000.0], n)
        estimate = median_ci(levels * np.exp(rng.normal(0, 0.015, n)), method=method)
        hits += estimate.ci_low <= 61_500.0 <= estimate.ci_high  # the mixture's median, by symmetry
    return hits / simulations


@pytest.mark.parametrize("n", [6, 10, 15])
def test_default_interval_keeps_its_coverage_on_two_level_throughput(n):
    assert two_level_coverage(DEFAULT_MEDIAN_CI_METHOD, n, 2_000, seed=n) >= 0.94


def test_the_interpolated_interval_falls_short_on_two_level_throughput():
    # Why it is no longer the default: its bounds land in the empty gap between the two levels.
    assert two_level_coverage("interpolated-order-statistic", 10, 2_000, seed=10) < 0.93


def test_interpolated_interval_covers_the_median_of_skewed_data_95_percent_of_the_time_at_n_10():
    # 10,000 simulations: Monte Carlo standard error 0.22 points, so the
    # 93-97 % window is about +-9 standard errors around a correct 95 %.
    measured = coverage("interpolated-order-statistic", n=10, simulations=10_000, seed=20240601)
    assert 0.93 <= measured <= 0.97, f"coverage {measured:.4f}"


@pytest.mark.parametrize("n", [6, 15, 30])
def test_interpolated_interval_stays_near_nominal_at_other_small_sizes(n):
    measured = coverage("interpolated-order-statistic", n=n, simulations=5_000, seed=n)
    assert 0.93 <= measured <= 0.97, f"n={n}: coverage {measured:.4f}"


def test_the_coverage_check_can_fail_an_interval_that_is_too_narrow():
    # The same harness measuring an 80 % interval must see ~80 %, not "pass".
    measured = coverage("interpolated-order-statistic", n=10, simulations=5_000, seed=7, confidence=0.80)
    assert not 0.93 <= measured <= 0.97
    assert measured == pytest.approx(0.80, abs=0.02)


def test_exact_order_statistic_interval_over_covers_as_binomial_theory_says():
    # At n = 10 the sign-test interval [x(2), x(9)] has exact coverage
    # 1 - 2 * 11/1024 = 0.9785: conservative on smooth data, the price of holding on two-level data.
    measured = coverage("order-statistic", n=10, simulations=10_000, seed=3)
    assert measured == pytest.approx(1 - 2 * 11 / 1024, abs=0.006)
    assert measured > 0.97


def test_percentile_bootstrap_under_covers_the_median_at_n_8():
    # Documented in loadlab.stats.median: ~92.5 % for a nominal 95 %.
    # 1,000 simulations (standard error ~0.8 points) with 1,000 resamples keep this quick.
    measured = coverage("bootstrap-percentile", n=8, simulations=1_000, seed=11, resamples=1_000)
    assert 0.88 < measured < 0.95, f"coverage {measured:.4f}"


# --- agreement with scipy ---------------------------------------------------------------


@pytest.mark.parametrize(("method", "scipy_method"), [("bootstrap-percentile", "percentile"), ("bootstrap-bca", "BCa")])
def test_bootstrap_methods_are_scipy_bootstrap_with_the_same_seed(method, scipy_method):
    values = np.random.default_rng(5).lognormal(0.0, 0.5, 25)
    ours = median_ci(values, method=method, resamples=2_000, seed=42)
    reference = scipy.stats.bootstrap(
        (values,), np.median, n_resamples=2_000, method=scipy_method, rng=np.random.default_rng(42)
    ).confidence_interval
    assert ours.ci_low == pytest.approx(reference.low)
    assert ours.ci_high == pytest.approx(reference.high)
    assert ours.median == pytest.approx(np.median(values))


def test_bootstrap_intervals_are_reproducible_for_a_seed():
    values = np.random.default_rng(8).normal(10, 2, 12)
    first = median_ci(values, method="bootstrap-percentile", seed=1)
    second = median_ci(values, method="bootstrap-percentile", seed=1)
    assert first == second


@pytest.mark.parametrize("n", [6, 7, 10, 13, 20, 51])
def test_order_statistic_interval_matches_scipy_quantile_test(n):
    values = np.random.default_rng(n).lognormal(0.0, 1.0, n)
    ours = median_ci(values, method="order-statistic")
    reference = scipy.stats.quantile_test(values, p=0.5).confidence_interval(0.95)
    assert (ours.ci_low, ours.ci_high) == pytest.approx((reference.low, reference.high))


# --- known answers ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "depth", "published_percent"),
    # Classic table of sign-test confidence levels for [x(d), x(n-d+1)] (e.g. "Table A.7:
    # Confidence Intervals for the Population Median"): n=5 [x(1),x(5)] 93.8 %, n=6 [x(1),x(6)]
    # 96.9 %, n=10 [x(2),x(9)] 97.9 % and [x(3),x(8)] 89.1 %, n=15 [x(4),x(12)] 96.5 %,
    # n=20 [x(6),x(15)] 95.9 %.
    [(5, 1, 93.8), (6, 1, 96.9), (10, 2, 97.9), (10, 3, 89.1), (15, 4, 96.5), (20, 6, 95.9)],
)
def test_sign_test_coverage_matches_the_published_table_and_direct_counting(n, depth, published_percent):
    # Independent check: count the subsets. The interval misses the median
    # when fewer than `depth` values fall below it, or fewer than `depth` above.
    misses = 2 * sum(math.comb(n, k) for k in range(depth)) / 2**n
    assert sign_test_coverage(n, depth) == pytest.approx(1 - misses)
    assert 100 * sign_test_coverage(n, depth) == pytest.approx(published_percent, abs=0.05)


def test_interpolated_interval_of_1_to_10_by_hand():
    # n = 10: d = 2, gamma_2 = 0.978516, gamma_3 = 0.890625, I = (gamma_2 - 0.95) / (gamma_2 - gamma_3)
    # = 0.324444, lambda = (10 - 2) I / (2 + (10 - 4) I) = 0.657658; for x(i) = i the bounds
    # are 2 + lambda and 9 - lambda (Hettmansperger & Sheather 1986; NIST Dataplot's description).
    gamma_2 = 1 - 2 * 11 / 1024
    gamma_3 = 1 - 2 * 56 / 1024
    fraction = (gamma_2 - 0.95) / (gamma_2 - gamma_3)
    weight = 8 * fraction / (2 + 6 * fraction)
    estimate = median_ci(np.arange(1.0, 11.0), method="interpolated-order-statistic")
    assert estimate.median == 5.5
    assert estimate.ci_low == pytest.approx(2 + weight)
    assert estimate.ci_high == pytest.approx(9 - weight)
    assert weight == pytest.approx(0.657658, abs=1e-6)


def test_interpolated_interval_lies_inside_the_conservative_one_and_contains_the_median():
    values = np.random.default_rng(2).lognormal(0.0, 1.0, 17)
    interpolated = median_ci(values, method="interpolated-order-statistic")
    exact = median_ci(values, method="order-statistic")
    assert exact.ci_low <= interpolated.ci_low <= interpolated.median <= interpolated.ci_high <= exact.ci_high


# --- small samples and bad input -----------------------------------------------------------


def test_minimum_trials_follow_from_order_statistics():
    assert minimum_trials_for_median_ci(0.95) == 6  # 1 - 2/32 = 0.9375 < 0.95 <= 1 - 2/64
    assert minimum_trials_for_median_ci(0.99) == 8
    assert minimum_trials_for_median_ci(0.90) == 5


@pytest.mark.parametrize("method", MEDIAN_CI_METHODS)
def test_no_interval_below_six_trials(method):
    estimate = median_ci([3.0, 1.0, 2.0, 5.0, 4.0], method=method)
    assert estimate.median == 3.0
    assert math.isnan(estimate.ci_low) and math.isnan(estimate.ci_high)
    assert estimate.n == 5


def test_ties_are_fine_for_the_order_statistic_methods():
    estimate = median_ci([5.0] * 8)
    assert (estimate.ci_low, estimate.median, estimate.ci_high) == (5.0, 5.0, 5.0)


@pytest.mark.parametrize("bad", [[], [1.0, float("nan"), 2.0], [[1.0, 2.0], [3.0, 4.0]]])
def test_bad_samples_are_refused_with_a_clear_message(bad):
    with pytest.raises(ValueError, match="values"):
        median_ci(bad)


def test_unknown_method_is_refused():
    with pytest.raises(ValueError, match="method"):
        median_ci(np.arange(10.0), method="jackknife")


def test_median_interval_gives_few_trials_their_range_with_its_exact_coverage():
    """Below the trials a 95% interval needs, the range [min, max] covers the median with probability 1 - 2 * 0.5**n."""
    from loadlab.stats import median_interval

    three = median_interval([9.0, 7.0, 8.0])
    assert (three.median, three.ci_low, three.ci_high, three.confidence, three.method) == (8.0, 7.0, 9.0, 0.75, "range")
    assert median_interval([1.0, 2.0, 3.0, 4.0]).confidence == 0.875
    enough = median_interval([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    assert enough.confidence == 0.95 and enough.method != "range"
    single = median_interval([5.0])
    assert single.median == 5.0 and math.isnan(single.ci_low)
    # The coverage is a fact, not a hope: simulate it on a skewed distribution.
    rng = np.random.default_rng(1)
    samples = rng.lognormal(0.0, 1.0, size=(20_000, 3))
    covered = (samples.min(axis=1) <= 1.0) & (samples.max(axis=1) >= 1.0)  # the lognormal's median is exp(0) = 1
    assert abs(covered.mean() - 0.75) < 0.015
