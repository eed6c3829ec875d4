"""Tukey's fences: flag unusual trials for a human to look at, never drop them.

A trial outside the fences is a question (a noisy neighbour? a JIT that had
not warmed up?), not an error. The comparison table counts them; the data
stay in every statistic, which are medians and ranks and so resist them.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from ._samples import as_sample

TUKEY_K = 1.5


class TukeyFences(NamedTuple):
    """Quartiles and fences, in the unit of the input. Values outside [low, high] are flagged."""

    first_quartile: float
    third_quartile: float
    low: float
    high: float


def tukey_fences(values: ArrayLike, k: float = TUKEY_K) -> TukeyFences:
    """Tukey's fences ``Q1 - k IQR`` and ``Q3 + k IQR`` (k = 1.5: Tukey's "outside" values).

    Quartiles are numpy's default linear interpolation (Hyndman & Fan type 7,
    as R's quantile default).
    """
    sample = as_sample(values, "values")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k!r}")
    first, third = np.percentile(sample, [25.0, 75.0])
    spread = third - first
    return TukeyFences(float(first), float(third), float(first - k * spread), float(third + k * spread))


def tukey_outliers(values: ArrayLike, k: float = TUKEY_K) -> np.ndarray:
    """Boolean mask, True where a value lies strictly outside Tukey's fences. Nothing is removed."""
    sample = as_sample(values, "values")
    fences = tukey_fences(sample, k)
    return (sample < fences.low) | (sample > fences.high)
