"""Mann-Whitney U (two-sided) and Holm's correction: scipy agreement and published answers."""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np
import pytest
import scipy.stats

from loadlab.stats import holm_adjust, mann_whitney, minimum_two_sided_p_value

# --- Mann-Whitney ---------------------------------------------------------------------------


@lru_cache(maxsize=None)
def _arrangements(n1: int, n2: int, u: int) -> int:
    """Number of orderings of n1 + n2 distinct values giving the first group statistic U = u.

    Mann & Whitney's (1947) recursion, independent of scipy: the largest value
    belongs to group 1 (it then beats all n2 values) or to group 2.
    """
    if u < 0:
        return 0
    if n1 == 0 or n2 == 0:
        return 1 if u == 0 else 0
    return _arrangements(n1 - 1, n2, u - n2) + _arrangements(n1, n2 - 1, u)


def exact_two_sided_p(n1: int, n2: int, u: int) -> float:
    u_small = min(u, n1 * n2 - u)
    tail = sum(_arrangements(n1, n2, k) for k in range(u_small + 1)) / math.comb(n1 + n2, n1)
    return min(1.0, 2 * tail)


def critical_u(n1: int, n2: int, alpha: float = 0.05) -> int | None:
    """Largest U whose exact two-sided p is <= alpha (None if no U qualifies)."""
    best = None
    for u in range(n1 * n2 // 2 + 1):
        if exact_two_sided_p(n1, n2, u) <= alpha:
            best = u
        else:
            break
    return best


@pytest.mark.parametrize(
    ("n1", "n2", "published_critical_u"),
    # Critical values of U, two-tailed alpha = 0.05, reject when U <= value, as printed in the
    # standard table (e.g. numeracy-bank.net "Table of Critical Values ... alpha of 0.05 for
    # the U statistic"): n1 = n2 = 5..10, 15, 20 and a few unequal pairs.
    [(5, 5, 2), (6, 6, 5), (7, 7, 8), (8, 8, 13), (9, 9, 17), (10, 10, 23), (15, 15, 64), (20, 20, 127),
     (5, 10, 8), (6, 9, 10), (8, 12, 22), (13, 16, 59)],
)  # fmt: skip
def test_exact_p_values_reproduce_the_published_table_of_critical_u(n1, n2, published_critical_u):
    assert critical_u(n1, n2) == published_critical_u
    # Through our function: an arrangement giving exactly the critical U is significant,
    # one more is not.
    for u, significant in ((published_critical_u, True), (published_critical_u + 1, False)):
        baseline, candidate = _samples_with_u(n1, n2, u)
        result = mann_whitney(baseline, candidate)
        assert result.method == "exact"
        assert result.u_candidate == u
        assert result.p_value == pytest.approx(exact_two_sided_p(n1, n2, u))
        assert (result.p_value <= 0.05) is significant


def _samples_with_u(n1: int, n2: int, u: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct values where exactly u (baseline, candidate) pairs have the candidate larger."""
    # Start with every candidate below every baseline (U = 0), then raise candidates one
    # baseline at a time.
    candidate_positions = [0] * n2  # how many baseline values each candidate exceeds
    remaining = u
    for index in range(n2):
        step = min(n1, remaining)
        candidate_positions[index] = step
        remaining -= step
    baseline = np.arange(n1, dtype=float) * 10.0
    candidate = np.array([position * 10.0 - 5.0 + index * 0.01 for index, position in enumerate(candidate_positions)])
    return baseline, candidate


def test_three_trials_each_can_never_reach_five_percent():
    result = mann_whitney([1.0, 2.0, 3.0], [4.0, 5.0, 6.0])
    assert result.p_value == pytest.approx(0.1)  # 2 / C(6, 3)
    assert minimum_two_sided_p_value(3, 3) == pytest.approx(0.1)
    assert minimum_two_sided_p_value(4, 4) == pytest.approx(2 / 70)
    assert minimum_two_sided_p_value(3, 4) > 0.05 > minimum_two_sided_p_value(3, 5)


@pytest.mark.parametrize("seed", range(5))
def test_agrees_with_scipy_on_seeded_data_without_ties(seed):
    rng = np.random.default_rng(seed)
    baseline, candidate = rng.lognormal(0, 1, 9), rng.lognormal(0.5, 1, 12)
    ours = mann_whitney(baseline, candidate)
    reference = scipy.stats.mannwhitneyu(candidate, baseline, alternative="two-sided", method="exact")
    assert ours.method == "exact"
    assert ours.u_candidate == reference.statistic
    assert ours.p_value == pytest.approx(reference.pvalue)


def test_ties_in_small_samples_use_the_exact_permutation_distribution():
    baseline, candidate = [1.0, 2.0, 2.0, 3.0, 4.0], [2.0, 3.0, 4.0, 4.0, 5.0, 6.0]
    ours = mann_whitney(baseline, candidate)
    assert ours.method == "exact-permutation"
    # Independent: enumerate every split of the pooled values and count U at least as extreme.
    pooled = np.array(baseline + candidate)
    observed = ours.u_candidate
    splits = list(itertools.combinations(range(pooled.size), len(candidate)))
    statistics = []
    for chosen in splits:
        mask = np.zeros(pooled.size, bool)
        mask[list(chosen)] = True
        statistics.append(scipy.stats.mannwhitneyu(pooled[mask], pooled[~mask], method="asymptotic").statistic)
    statistics = np.array(statistics)
    centre = len(baseline) * len(candidate) / 2
    less = np.mean(statistics <= observed + 1e-9)
    greater = np.mean(statistics >= observed - 1e-9)
    assert observed > centre
    assert ours.p_value == pytest.approx(min(1.0, 2 * min(less, greater)))


def test_large_samples_with_ties_fall_back_to_the_normal_approximation():
    rng = np.random.default_rng(3)
    baseline, candidate = rng.integers(0, 20, 40).astype(float), rng.integers(2, 22, 40).astype(float)
    ours = mann_whitney(baseline, candidate)
    reference = scipy.stats.mannwhitneyu(candidate, baseline, method="asymptotic")
    assert ours.method == "asymptotic"
    assert ours.p_value == pytest.approx(reference.pvalue)


# --- Holm -----------------------------------------------------------------------------------


def test_holm_reproduces_the_worked_example_of_the_wikipedia_article():
    # Wikipedia, "Holm-Bonferroni method", Example: p = 0.01, 0.04, 0.03, 0.005 at alpha 0.05;
    # "hypotheses one and four are rejected while hypotheses two and three are not".
    adjusted = holm_adjust([0.01, 0.04, 0.03, 0.005])
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert list(adjusted < 0.05) == [True, False, False, True]


def closed_bonferroni(p_values: list[float]) -> list[float]:
    """Holm by definition: the closed testing procedure over Bonferroni intersection tests.

    Holm (1979) is the shortcut of this procedure; the adjusted p of H_i is
    the largest Bonferroni p, min(1, |S| * min p_S), over every subset S
    containing i. Exponential, so only for small families.
    """
    m = len(p_values)
    adjusted = []
    for i in range(m):
        worst = 0.0
        others = [j for j in range(m) if j != i]
        for size in range(m):
            for subset in itertools.combinations(others, size):
                members = (i, *subset)
                worst = max(worst, min(1.0, len(members) * min(p_values[j] for j in members)))
        adjusted.append(worst)
    return adjusted


@pytest.mark.parametrize("seed", range(10))
def test_holm_equals_closed_testing_with_bonferroni(seed):
    rng = np.random.default_rng(seed)
    p_values = list(rng.uniform(0, 0.2, rng.integers(1, 8)))
    if seed % 3 == 0:
        p_values[0] = p_values[-1]  # ties must be handled too
    assert holm_adjust(p_values) == pytest.approx(closed_bonferroni(p_values))


def test_holm_keeps_order_and_caps_at_one():
    adjusted = holm_adjust([0.9, 0.5, 0.001])
    assert adjusted == pytest.approx([1.0, 1.0, 0.003])


@pytest.mark.parametrize("bad", [[0.5, float("nan")], [1.2], [-0.1]])
def test_holm_refuses_values_that_are_not_p_values(bad):
    with pytest.raises(ValueError):
        holm_adjust(bad)


def test_identical_groups_give_p_one_even_when_large():
    result = mann_whitney([7.0] * 50, [7.0] * 60)
    assert result.p_value == 1.0
    assert result.u_candidate == 50 * 60 / 2


def test_ties_at_twelve_a_side_are_exact_against_a_seeded_permutation_run():
    # Two-level throughput, as measured here: many exact ties at 12 + 12, where the normal approximation strays.
    baseline = np.array([58, 58, 58, 65, 65, 58, 58, 65, 58, 58, 65, 58], dtype=float)
    candidate = np.array([65, 65, 58, 65, 65, 65, 58, 65, 65, 65, 58, 65], dtype=float)
    exact = mann_whitney(baseline, candidate)
    assert exact.method == "exact-permutation"
    rng = np.random.default_rng(0)
    pooled = np.concatenate([baseline, candidate])
    ranks = scipy.stats.rankdata(pooled)
    observed = ranks[12:].sum()
    sums = np.array([ranks[rng.permutation(24)[:12]].sum() for _ in range(200_000)])
    monte_carlo = min(1.0, 2 * min(np.mean(sums <= observed + 1e-9), np.mean(sums >= observed - 1e-9)))
    assert exact.p_value == pytest.approx(monte_carlo, abs=0.005)


def test_one_value_in_a_group_gives_a_p_value_not_an_error():
    result = mann_whitney([12.0], [12.0, 13.0])
    assert result.p_value == 1.0 and result.n_baseline == 1
