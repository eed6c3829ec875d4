"""Statistical power: the smallest ratio a number of trials can detect at a spread, and its inverse."""

from __future__ import annotations

import math


def minimum_detectable_ratio(cv: float, trials_per_side: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest ratio of two conditions' medians that `trials_per_side` trials a side detect with `power`.

    Normal approximation for two groups whose trials vary with coefficient of
    variation `cv` (each trial a fresh instance, so `cv` is the between-instance
    spread): (z_{1-alpha/2} + z_power) * cv * sqrt(2 / n), scaled by 1/0.955
    for the Mann-Whitney test's efficiency against the t test, returned as
    1 + that relative difference.
    """
    from scipy.stats import norm

    if trials_per_side < 2 or not cv > 0:
        return math.nan
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    return 1 + z * cv * math.sqrt(2 / trials_per_side) / math.sqrt(0.955)


def trials_for_detectable_ratio(cv: float, ratio: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """The fewest trials a side with which minimum_detectable_ratio(cv, n) is at most `ratio` (its inverse)."""
    from scipy.stats import norm

    if not cv > 0 or not ratio > 1:
        raise ValueError(f"cv must be > 0 and ratio > 1, got cv={cv!r}, ratio={ratio!r}")
    z = norm.ppf(1 - alpha / 2) + norm.ppf(power)
    return max(2, math.ceil(2 * (z * cv / ((ratio - 1) * math.sqrt(0.955))) ** 2))
