"""Tukey fences flag values; they never remove them."""

from __future__ import annotations

import numpy as np
import pytest

from loadlab.stats import tukey_fences, tukey_outliers


def test_fences_use_the_type_7_quartiles():
    values = np.arange(1.0, 12.0)  # 1..11: Q1 = 3.5, Q3 = 8.5, IQR = 5
    fences = tukey_fences(values)
    assert fences == pytest.approx((3.5, 8.5, 3.5 - 7.5, 8.5 + 7.5))


def test_flags_only_values_outside_the_fences_and_keeps_every_value():
    values = np.array([10.0, 11.0, 10.5, 9.8, 10.2, 10.1, 30.0])
    mask = tukey_outliers(values)
    assert mask.tolist() == [False, False, False, False, False, False, True]
    assert values.size == 7  # nothing dropped, the mask is the same length


def test_a_value_on_a_fence_is_not_an_outlier():
    values = np.array([0.0, 1.0, 1.0, 1.0, 3.0, 3.0, 3.0, 6.0])  # Q1 = 1, Q3 = 3, fences -2 and 6
    assert tukey_fences(values).high == 6.0
    assert not tukey_outliers(values).any()
    assert tukey_outliers(np.append(values, 6.5))[-1]
