"""Input checks shared by the statistics modules.

Every public function takes "array-like of numbers" and funnels it through
`as_sample`, so that a stray NaN or an empty list fails loudly with the
argument's name instead of surfacing later as a NaN confidence interval.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def as_sample(values: ArrayLike, name: str = "values", minimum_size: int = 1) -> np.ndarray:
    """Return `values` as a 1-D float64 array of finite numbers.

    Raises ValueError naming `name` when the input is not one-dimensional,
    holds NaN or infinity, or has fewer than `minimum_size` elements.
    """
    array = np.asarray(values, dtype=float)
    if array.ndim == 0:
        array = array.reshape(1)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds NaN or infinite values; drop or explain them first")
    if array.size < minimum_size:
        raise ValueError(f"{name} needs at least {minimum_size} value(s), got {array.size}")
    return array


def check_confidence(confidence: float) -> float:
    """Return `confidence` if it is strictly between 0 and 1, else raise ValueError."""
    confidence = float(confidence)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return confidence
