"""Cliff's delta: published examples, an independent brute force, and the link to U."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from loadlab.stats import cliffs_delta, cliffs_delta_magnitude


def brute_force_delta(baseline, candidate) -> float:
    """Cliff (1993): mean over all pairs of sign(candidate - baseline)."""
    return float(np.mean(np.sign(np.subtract.outer(np.asarray(candidate), np.asarray(baseline)))))


@pytest.mark.parametrize(
    ("treatment", "control", "expected_delta", "expected_magnitude"),
    # R package effsize (Torchiano), tests/testthat/testCliff.R: "Small differences"
    # -> delta -0.25 "small"; "Negligible differences" -> -0.06666 "negligible".
    # effsize's delta is P(treatment > control) - P(treatment < control), i.e. ours with
    # baseline = control and candidate = treatment.
    [
        ([10, 10, 20, 20, 20, 30, 30, 30, 40, 50], [10, 20, 30, 40, 40, 50], -0.25, "small"),
        ([10, 20, 20, 20, 30, 30, 30, 40, 50, 100], [10, 20, 30, 40, 40, 50], -0.06666, "negligible"),
    ],
)
def test_reproduces_the_effsize_package_examples(treatment, control, expected_delta, expected_magnitude):
    result = cliffs_delta(baseline=control, candidate=treatment)
    assert result.delta == pytest.approx(expected_delta, abs=1e-5)
    assert result.magnitude == expected_magnitude
    assert result.delta == pytest.approx(brute_force_delta(control, treatment))


def test_disjoint_groups_are_a_large_effect_of_plus_or_minus_one():
    low, high = [10, 20, 20, 20, 30, 30, 30, 40, 50, 100], [120, 130, 140, 150, 150, 160]
    assert cliffs_delta(low, high) == (1.0, "large")
    assert cliffs_delta(high, low) == (-1.0, "large")


@pytest.mark.parametrize("seed", range(6))
def test_equals_brute_force_and_two_u_over_n1_n2_minus_one_with_ties(seed):
    rng = np.random.default_rng(seed)
    baseline, candidate = rng.integers(0, 8, 9).astype(float), rng.integers(1, 9, 13).astype(float)
    delta = cliffs_delta(baseline, candidate).delta
    assert delta == pytest.approx(brute_force_delta(baseline, candidate))
    u_candidate = scipy.stats.mannwhitneyu(candidate, baseline).statistic
    assert delta == pytest.approx(2 * u_candidate / (baseline.size * candidate.size) - 1)


@pytest.mark.parametrize(
    ("delta", "label"),
    # Romano et al. (2006) thresholds 0.147 / 0.33 / 0.474, on |delta|.
    [(0.0, "negligible"), (0.146, "negligible"), (-0.147, "small"), (0.329, "small"), (0.33, "medium"),
     (-0.473, "medium"), (0.474, "large"), (-1.0, "large")],
)  # fmt: skip
def test_magnitude_labels_follow_romano_2006(delta, label):
    assert cliffs_delta_magnitude(delta) == label
