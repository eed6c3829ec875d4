"""The verdict rule (loadlab.judgements.rule): each defect the review found, written as a case first."""

import math

import numpy as np
import pytest

from loadlab import stats
from loadlab.judgements import rule
from loadlab.judgements.rule import (
    CONTRADICTED, DIRECTION_ONLY, HOLDS, INCONCLUSIVE, NO_DIFFERENCE, Family, decide, judge_ratio,
)

TOLERANCE = rule.CLAIM_TOLERANCE


@pytest.mark.parametrize(
    "claimed, ratio, low, high, margin, expected",
    [
        # S1-cpu-user java/go under rule v2: ×1.030 [1.027, 1.033] against a claimed ×0.946 was called "holds"
        # because the claim sat inside the A/A band. The interval lies on the other side of 1: contradicted.
        (0.946, 1.030, 1.027, 1.033, 0.094, CONTRADICTED),
        # A claimed difference the size of the noise band's outside, measured on the claimed side but far smaller.
        (1.5, 1.030, 1.027, 1.033, 0.094, DIRECTION_ONLY),
        # ... and measured inside the noise band without a direction: not seen.
        (1.5, 1.0, 0.98, 1.03, 0.094, NO_DIFFERENCE),
        # Absence of evidence is not evidence: claimed 1.0 against a wide, non-significant 1.10 [0.50, 2.00].
        (1.0, 1.10, 0.50, 2.00, 0.05, INCONCLUSIVE),
        # Direction from the interval, never the point: 0.995 [0.969, 2.86] is no direction at all.
        (1.5, 0.995, 0.969, 2.86, 0.05, INCONCLUSIVE),
        # A ratio of exactly 1.0 with an interval around it is not "down".
        (0.5, 1.0, 0.98, 1.02, None, CONTRADICTED),  # the interval rules out 0.5 ± 25%
        (0.9, 1.0, 0.80, 1.25, None, INCONCLUSIVE),
        # A precise measurement near the claim is not punished: 1.13 claimed, 1.20 [1.19, 1.21] measured.
        (1.13, 1.20, 1.19, 1.21, 0.02, HOLDS),
        (1.13, 2.00, 1.90, 2.10, 0.02, DIRECTION_ONLY),
        (1.13, 0.80, 0.75, 0.85, 0.02, CONTRADICTED),
        (0.5, 0.45, 0.40, 0.55, 0.02, HOLDS),
        # The claimed direction with an interval wider than the claim's band: the size is not confirmed.
        (0.00173, 0.00139, 0.00104, 0.00329, None, DIRECTION_ONLY),
        # A claimed size ruled out by an interval that still contains 1.
        (5.0, 1.0, 0.80, 1.30, 0.02, CONTRADICTED),
        # No interval: inconclusive.
        (1.5, 1.2, math.nan, math.nan, 0.02, INCONCLUSIVE),
        # A claim of no difference, measured far from it.
        (1.0, 1.5, 1.4, 1.6, 0.05, CONTRADICTED),
        (1.0, 1.02, 0.97, 1.06, 0.05, HOLDS),
    ],
)
def test_the_decision(claimed, ratio, low, high, margin, expected):
    verdict, reason = decide(claimed, ratio, low, high, margin, max(TOLERANCE, margin or 0))
    assert verdict == expected, reason
    assert f"×{claimed:.3g}" in reason


def test_the_noise_band_is_symmetric_on_the_log_scale():
    low, high = rule.noise_band(0.1)
    assert low == pytest.approx(1 / 1.1) and high == pytest.approx(1.1)
    assert rule.noise_band(None) == (1.0, 1.0)


def test_the_family_sets_the_confidence():
    assert Family("S1", 9).confidence == pytest.approx(1 - 0.05 / 9)
    with pytest.raises(ValueError):
        Family("S0", 0)


def test_a_clear_effect_holds_and_its_opposite_is_contradicted():
    rng = np.random.default_rng(1)
    baseline = 100 * np.exp(rng.normal(0, 0.02, 8))
    candidate = 150 * np.exp(rng.normal(0, 0.02, 8))
    judged = judge_ratio(baseline, candidate, 1.5, Family("S", 3), noise_margin=0.05)
    assert judged.verdict == HOLDS and judged.ci_low > 1 and judged.confidence == pytest.approx(1 - 0.05 / 3)
    assert judge_ratio(baseline, candidate, 0.7, Family("S", 3), noise_margin=0.05).verdict == CONTRADICTED


def test_ties_the_recorded_p_and_the_interval_agree_on_integer_data():
    # The example 2: under rule v2 the record said p_family 0.032 while the interval [1.0, 1.67] kept 1.
    baseline = [6, 6, 6, 6, 9, 6, 6, 5]
    candidate = [6, 9, 7, 10, 8, 10, 8, 9, 10, 6]
    judged = judge_ratio(baseline, candidate, 3.0, Family("S", 4))
    keeps_one = judged.ci_low <= 1 <= judged.ci_high
    assert keeps_one and judged.p_family >= rule.FAMILY_ALPHA
    assert judged.verdict == CONTRADICTED and "rules out" in judged.explanation


def test_ties_on_a_grid_of_small_integer_samples():
    # Integer metrics (threads, goroutines, counts): on every case the interval excludes 1 exactly when the
    # recorded family p is below the family's alpha, whatever the ties.
    rng = np.random.default_rng(3)
    family = Family("S", 4)
    disagreements = 0
    for _ in range(600):
        n_baseline, n_candidate = rng.integers(4, 11, 2)
        baseline = rng.integers(5, 9, n_baseline)
        candidate = rng.integers(5, 11, n_candidate)
        judged = judge_ratio(baseline, candidate, 1.5, family)
        if not math.isfinite(judged.ci_low):
            continue
        excludes = judged.ci_low > 1 or judged.ci_high < 1
        disagreements += excludes != (judged.p_value <= 1 - judged.confidence + 1e-12)
    assert disagreements == 0


def test_on_untied_data_the_recorded_p_is_the_exact_mann_whitney_p():
    rng = np.random.default_rng(4)
    baseline, candidate = rng.lognormal(0, 0.1, 7), rng.lognormal(0.1, 0.1, 6)
    judged = judge_ratio(baseline, candidate, 1.1, Family("S", 1))
    assert judged.p_value == pytest.approx(stats.mann_whitney(baseline, candidate).p_value)


def test_too_few_trials_is_inconclusive_with_the_count():
    judged = judge_ratio([1.0, 1.1, 1.2], [2.0, 2.1, 2.2], 2.0, Family("S1", 9))
    assert judged.verdict == INCONCLUSIVE
    assert "3+3 usable trials" in judged.explanation and "per side are needed" in judged.explanation


def test_one_trial_does_not_crash():
    judged = judge_ratio([12.0], [12.0, 13.0], 1.5, Family("S", 1))
    assert judged.verdict == INCONCLUSIVE


def test_no_usable_trials_is_inconclusive():
    assert judge_ratio([], [1.0, 2.0], 1.5, Family("S", 1)).verdict == INCONCLUSIVE


def test_zeros_give_no_ratio():
    judged = judge_ratio([0.0] * 6, [1.0] * 6, 1.5, Family("S", 1))
    assert judged.verdict == INCONCLUSIVE and "positive" in judged.explanation


def _error_rates(true_ratio, claimed, n, spread, simulations, rng, two_level=False):
    family = Family("sim", 4)
    margin = 0.05
    outcomes = {}
    for _ in range(simulations):
        if two_level:
            levels = np.array([0.95, 1.05])
            baseline = 100 * rng.choice(levels, n) * np.exp(rng.normal(0, spread, n))
            candidate = 100 * true_ratio * rng.choice(levels, n) * np.exp(rng.normal(0, spread, n))
        else:
            baseline = 100 * np.exp(rng.normal(0, spread, n))
            candidate = 100 * true_ratio * np.exp(rng.normal(0, spread, n))
        verdict = judge_ratio(baseline, candidate, claimed, family, noise_margin=margin).verdict
        outcomes[verdict] = outcomes.get(verdict, 0) + 1
    return {k: v / simulations for k, v in outcomes.items()}


@pytest.mark.parametrize("two_level", [False, True])
def test_on_aa_data_a_claimed_difference_is_rarely_upheld(two_level):
    # The same server twice: a claimed ×1.5 must not "hold" (nor "hold in direction only") more than 5% of the time.
    rates = _error_rates(1.0, 1.5, 6, 0.03, 300, np.random.default_rng(7), two_level)
    assert rates.get(HOLDS, 0) + rates.get(DIRECTION_ONLY, 0) <= 0.05


def test_a_true_claim_is_rarely_contradicted():
    rates = _error_rates(1.5, 1.5, 6, 0.05, 300, np.random.default_rng(8))
    assert rates.get(CONTRADICTED, 0) + rates.get(NO_DIFFERENCE, 0) <= 0.05
    assert rates.get(HOLDS, 0) >= 0.9  # and the effect is found


def test_a_claimed_absolute_figure_is_weighed_by_the_same_band():
    measured = [49.1, 49.8, 50.5, 47.9, 50.2, 49.5]
    assert rule.judge_value(measured, 92.0, 0.95).size == rule.RULED_OUT  # S1-cpu-user's Go: 92% claimed
    assert rule.judge_value(measured, 52.0, 0.95).size == rule.CONFIRMED
    assert rule.judge_value([30.0, 40.0, 50.0, 60.0, 70.0, 80.0], 60.0, 0.95).size == rule.OPEN
    # Too few trials for the interval: no size, never a guess.
    assert rule.judge_value(measured, 92.0, 0.9944).size is None
