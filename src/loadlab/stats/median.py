"""The median across trials and a confidence interval for it.

Four interval methods are offered. The default is the exact order-statistic
interval: it is the only one whose coverage holds on the data this machine
gives, where a server's throughput settles at one of two levels per
container (~58k or ~65k req/s). On a 50/50 two-level sample the interpolated
interval covers 87-90 % and the percentile bootstrap 87 %, while the exact
interval keeps its binomial coverage (>= 95 %) for any continuous
distribution; benchmarks/median_ci_coverage.py measures all four.

``"interpolated-order-statistic"``
    Hettmansperger & Sheather (1986), "Confidence intervals based on
    interpolated order statistics", Statistics & Probability Letters 4(2),
    75-79; the same method as NIST Dataplot's MEDIAN CONFIDENCE LIMITS and
    Wilcox's ``sint``. The sign-test interval ``[x(d), x(n-d+1)]`` is exact
    and distribution-free, but its confidence jumps in steps (n = 10 offers
    only 97.9 % or 89.1 %); interpolating between adjacent order statistics
    lands on the requested level, and Hettmansperger & Sheather show that the
    result depends only slightly on the underlying distribution.
    Deterministic: no resampling, no seed.
    On lognormal data it lands near nominal (94.3-95.7 % for n = 6..30), but
    interpolating between two order statistics that sit in different
    clusters of a two-level sample puts a bound in the empty gap between
    them, and coverage falls below 90 %.
``"order-statistic"`` (default)
    The exact sign-test interval with the smallest confidence >= the
    requested level (what `scipy.stats.quantile_test` reports). Guaranteed
    coverage for any continuous distribution, two-level ones included, at
    the price of being conservative: 97.9 % at n = 10 for a nominal 95 %.
``"bootstrap-percentile"``
    scipy.stats.bootstrap, percentile method. The bootstrap distribution of
    a median lives on a handful of order statistics, and the interval
    under-covers: for a nominal 95 % on lognormal data we measured 93.5,
    92.5, 94.5, 93.9, 93.3 and 93.0 % at n = 6, 8, 10, 12, 15, 20 (4,000
    samples each, 10,000 resamples); tests/test_stats_median.py re-checks
    n = 8.
``"bootstrap-bca"``
    scipy.stats.bootstrap, BCa. Offered for completeness only: for a median
    the jackknife values take at most two distinct values and many bootstrap
    medians tie with the observed one, so the acceleration and bias
    corrections are unstable, and scipy often returns NaN with a
    DegenerateDataWarning on tiny samples.

Below `minimum_trials_for_median_ci(confidence)` values (6 for 95 %), even
the widest distribution-free interval ``[min, max]`` covers the median with
probability ``1 - 2 * 0.5**n`` < 95 % (93.8 % at n = 5), so no method can
honestly claim the requested confidence: the bounds are returned as NaN.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import numpy as np
import scipy.stats
from numpy.typing import ArrayLike

from ._samples import as_sample, check_confidence

METHOD_INTERPOLATED = "interpolated-order-statistic"
METHOD_ORDER_STATISTIC = "order-statistic"
METHOD_BOOTSTRAP_PERCENTILE = "bootstrap-percentile"
METHOD_BOOTSTRAP_BCA = "bootstrap-bca"
MEDIAN_CI_METHODS = (
    METHOD_INTERPOLATED,
    METHOD_ORDER_STATISTIC,
    METHOD_BOOTSTRAP_PERCENTILE,
    METHOD_BOOTSTRAP_BCA,
)
DEFAULT_MEDIAN_CI_METHOD = METHOD_ORDER_STATISTIC
DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 0


class MedianEstimate(NamedTuple):
    """A sample median with its confidence interval, in the unit of the input.

    `ci_low` and `ci_high` are NaN when `n` is too small for any interval to
    reach `confidence` (see `minimum_trials_for_median_ci`).
    """

    median: float
    ci_low: float
    ci_high: float
    n: int
    confidence: float
    method: str


def minimum_trials_for_median_ci(confidence: float = 0.95) -> int:
    """Smallest sample size for which a distribution-free `confidence` interval on a median exists.

    The widest interval, [min, max], misses the median only when all values
    fall on one side of it: probability ``2 * 0.5**n``. Returns the smallest
    n with ``1 - 2 * 0.5**n >= confidence``: 6 for 0.95, 8 for 0.99.
    """
    confidence = check_confidence(confidence)
    return max(1, math.ceil(math.log2(2.0 / (1.0 - confidence)) - 1e-12))


def sign_test_coverage(n: int, depth: int) -> float:
    """Exact coverage of the interval [x(depth), x(n-depth+1)] for the median of n continuous values.

    ``P(depth <= W <= n - depth)`` for W ~ Binomial(n, 1/2); 0 when `depth`
    is past the middle, where the interval would be empty.
    """
    if depth < 1 or depth > n - depth + 1:
        return 0.0
    return float(max(0.0, 1.0 - 2.0 * scipy.stats.binom.cdf(depth - 1, n, 0.5)))


@functools.lru_cache(maxsize=1024)
def _sign_test_depth(n: int, confidence: float) -> int:
    """Largest depth d whose interval [x(d), x(n-d+1)] still has coverage >= confidence (>= 1)."""
    depths = np.arange(1, n // 2 + 2)
    coverages = 1.0 - 2.0 * scipy.stats.binom.cdf(depths - 1, n, 0.5)
    eligible = depths[coverages >= confidence]
    return int(eligible.max())


@functools.lru_cache(maxsize=1024)
def _interpolation(n: int, confidence: float) -> tuple[int, float]:
    """(depth d, weight lambda) of the Hettmansperger-Sheather interval; depends on n and level only."""
    depth = _sign_test_depth(n, confidence)
    coverage_at_depth = sign_test_coverage(n, depth)
    coverage_next = sign_test_coverage(n, depth + 1)
    # I: where the requested level sits between the two achievable levels;
    # lambda: Hettmansperger & Sheather's nonlinear weight.
    fraction = (coverage_at_depth - confidence) / (coverage_at_depth - coverage_next)
    weight = (n - depth) * fraction / (depth + (n - 2 * depth) * fraction)
    return depth, float(weight)


def _interpolated_interval(sorted_values: np.ndarray, confidence: float) -> tuple[float, float]:
    n = sorted_values.size
    depth, weight = _interpolation(n, confidence)
    # 0-based: x(d) is sorted_values[d - 1].
    low = (1.0 - weight) * sorted_values[depth - 1] + weight * sorted_values[depth]
    high = (1.0 - weight) * sorted_values[n - depth] + weight * sorted_values[n - depth - 1]
    return float(low), float(high)


def _order_statistic_interval(sorted_values: np.ndarray, confidence: float) -> tuple[float, float]:
    n = sorted_values.size
    depth = _sign_test_depth(n, confidence)
    return float(sorted_values[depth - 1]), float(sorted_values[n - depth])


def _bootstrap_interval(
    values: np.ndarray, confidence: float, method: str, resamples: int, seed: int
) -> tuple[float, float]:
    result = scipy.stats.bootstrap(
        (values,),
        np.median,
        n_resamples=resamples,
        vectorized=True,
        confidence_level=confidence,
        method="percentile" if method == METHOD_BOOTSTRAP_PERCENTILE else "BCa",
        rng=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def median_ci(
    values: ArrayLike,
    confidence: float = 0.95,
    method: str = DEFAULT_MEDIAN_CI_METHOD,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> MedianEstimate:
    """Median of `values` with a two-sided `confidence` interval, in the unit of `values`.

    Assumes the values are independent trials of one condition (one value
    per trial, e.g. each trial's throughput in req/s). `method` is one of
    `MEDIAN_CI_METHODS` (see the module docstring for why the default is the
    exact order-statistic interval). `resamples` and
    `seed` only matter for the bootstrap methods, which are seeded so that a
    re-run gives the same interval. Bounds are NaN below
    `minimum_trials_for_median_ci(confidence)` values.
    """
    sample = as_sample(values, "values")
    confidence = check_confidence(confidence)
    if method not in MEDIAN_CI_METHODS:
        raise ValueError(f"method={method!r} is not allowed: method must be one of {', '.join(MEDIAN_CI_METHODS)}")
    n = sample.size
    median = float(np.median(sample))
    if n < minimum_trials_for_median_ci(confidence):
        return MedianEstimate(median, math.nan, math.nan, n, confidence, method)
    sorted_values = np.sort(sample)
    if method == METHOD_INTERPOLATED:
        low, high = _interpolated_interval(sorted_values, confidence)
    elif method == METHOD_ORDER_STATISTIC:
        low, high = _order_statistic_interval(sorted_values, confidence)
    else:
        low, high = _bootstrap_interval(sample, confidence, method, resamples, seed)
    return MedianEstimate(median, low, high, n, confidence, method)


def median_interval(values: ArrayLike, confidence: float = 0.95) -> MedianEstimate:
    """The median with the widest-coverage distribution-free interval the trials allow, up to `confidence`.

    With enough values, `median_ci` at `confidence`. With fewer (but at least
    2), the sample's range [min, max]: the median of the population lies in
    it with probability exactly 1 - 2 * 0.5**n (75% for 3 trials, 87.5% for
    4), whatever the distribution, and that coverage is returned as the
    estimate's `confidence`. For values drawn beside the judged ones in fewer
    trials (`plans.Scale.shown_trials`), a page then prints an interval with
    its true, lower coverage instead of no interval at all.
    """
    estimate = median_ci(values, confidence)
    if estimate.n < 2 or math.isfinite(estimate.ci_low):
        return estimate
    sample = np.sort(as_sample(values, "values"))
    return MedianEstimate(estimate.median, float(sample[0]), float(sample[-1]), estimate.n,
                          1.0 - 2.0 * 0.5 ** estimate.n, "range")
