"""The verdict rule's properties (rule v3), checked on a grid of claims, intervals and margins.

The grid holds claims above and below 1, claims within ×1.25 of 1 (whose band contains 1), a claim of no
difference (c = 1), margins from none to past 25%, and every interval whose ends lie on a log-spaced grid that
reaches past each claim's band and the noise band. The issue's example inputs are named cases below.
"""

import itertools
import math

import numpy as np
import pytest

from loadlab.judgements import rule
from loadlab.judgements.rule import (
    CONTRADICTED, DIRECTION_ONLY, HOLDS, INCONCLUSIVE, NO_DIFFERENCE, REFINEMENTS, claim_band, decide, noise_band,
)

CLAIMS = (0.00173, 0.126, 0.5, 0.802, 0.905, 0.946, 0.96, 1.0, 1.02, 1.08, 1.15, 1.38, 4.43, 11.5)
MARGINS = (None, 0.0, 0.035, 0.05, 0.118, 0.228, 0.30)
ENDS = tuple(float(x) for x in np.exp(np.linspace(math.log(0.5), math.log(2.0), 15)))


def _ends_for(claimed):
    """The grid of interval ends around 1 and around the claim (log-spaced, with both bands' edges)."""
    around_claim = [claimed * x for x in ENDS]
    edges = [*claim_band(claimed, 0.25), *noise_band(0.05), 1.0]
    return sorted(set(ENDS) | set(around_claim) | set(edges))


def _word(claimed, low, high, margin):
    return decide(claimed, math.sqrt(low * high), low, high, margin, max(rule.CLAIM_TOLERANCE, margin or 0.0))[0]


def _cases():
    for claimed, margin in itertools.product(CLAIMS, MARGINS):
        ends = _ends_for(claimed)
        intervals = [(low, high) for low, high in itertools.combinations_with_replacement(ends, 2)]
        yield claimed, margin, intervals


@pytest.mark.parametrize("claimed, margin, intervals", list(_cases()),
                         ids=[f"c{c:g}-m{m}" for c, m, _ in _cases()])
def test_a_nested_interval_never_gets_a_weaker_word(claimed, margin, intervals):
    words = {interval: _word(claimed, *interval, margin) for interval in intervals}
    for (outer_low, outer_high), outer in words.items():
        for (low, high), inner in words.items():
            if outer_low <= low and high <= outer_high:
                assert inner in REFINEMENTS[outer], (claimed, margin, (outer_low, outer_high), outer, (low, high), inner)


@pytest.mark.parametrize("claimed, margin, intervals", list(_cases()),
                         ids=[f"c{c:g}-m{m}" for c, m, _ in _cases()])
def test_swapping_the_sides_never_changes_the_word(claimed, margin, intervals):
    for low, high in intervals:
        assert _word(claimed, low, high, margin) == _word(1 / claimed, 1 / high, 1 / low, margin), (claimed, low, high)


@pytest.mark.parametrize("claimed, margin, intervals", list(_cases()),
                         ids=[f"c{c:g}-m{m}" for c, m, _ in _cases()])
def test_direction_first_and_the_claim_band_decides_size(claimed, margin, intervals):
    tolerance = max(rule.CLAIM_TOLERANCE, margin or 0.0)
    band_low, band_high = claim_band(claimed, tolerance)
    for low, high in intervals:
        word = _word(claimed, low, high, margin)
        ruled_out = high < band_low or low > band_high
        if ruled_out:
            assert word != HOLDS, (claimed, low, high, margin)
        if claimed != 1 and (low > 1 or high < 1):
            claimed_side = (low > 1) == (claimed > 1)
            assert word == ((HOLDS if band_low <= low and high <= band_high else DIRECTION_ONLY)
                            if claimed_side else CONTRADICTED), (claimed, low, high, margin)


def _readme_definition(word, claimed, low, high, margin):
    """The README's sentence for each word, written independently of the rule's code."""
    tolerance = max(0.25, margin or 0.0)
    inside_band = claimed / (1 + tolerance) <= low and high <= claimed * (1 + tolerance)
    misses_band = high < claimed / (1 + tolerance) or low > claimed * (1 + tolerance)
    contains_one = low <= 1 <= high
    claimed_side = (low > 1 and claimed > 1) or (high < 1 and claimed < 1)
    other_side = (low > 1 and claimed < 1) or (high < 1 and claimed > 1)
    inside_noise = margin is not None and 1 / (1 + margin) <= low and high <= 1 + margin
    if claimed == 1:
        return {HOLDS: inside_band, CONTRADICTED: misses_band, INCONCLUSIVE: not inside_band and not misses_band}[word]
    return {
        HOLDS: claimed_side and inside_band,
        DIRECTION_ONLY: claimed_side and not inside_band,
        CONTRADICTED: other_side or (contains_one and misses_band and not inside_noise),
        NO_DIFFERENCE: contains_one and misses_band and inside_noise,
        INCONCLUSIVE: contains_one and not misses_band,
    }[word]


@pytest.mark.parametrize("claimed, margin, intervals", list(_cases()),
                         ids=[f"c{c:g}-m{m}" for c, m, _ in _cases()])
def test_the_readme_definition_of_each_word_is_true_on_the_grid(claimed, margin, intervals):
    for low, high in intervals:
        word = _word(claimed, low, high, margin)
        assert _readme_definition(word, claimed, low, high, margin), (word, claimed, low, high, margin)


@pytest.mark.parametrize(
    "claimed, low, high, margin, expected",
    [
        # 1. The noise band no longer overrides direction: ×0.96 and ×0.95 against [1.10, 1.20] alike.
        (0.96, 1.10, 1.20, 0.05, CONTRADICTED),
        (0.95, 1.10, 1.20, 0.05, CONTRADICTED),
        # the old test's case: 0.946 claimed, [1.027, 1.033] measured, is the other side of 1.
        (0.946, 1.027, 1.033, 0.094, CONTRADICTED),
        # S1-p99's own claim and margin, an interval that rules the claim out.
        (0.905, 1.14, 1.22, 0.228, CONTRADICTED),
        # S4-throughput as committed: [1.05, 1.16] against a claimed ×0.892.
        (0.892, 1.05, 1.16, 0.125, CONTRADICTED),
        # 3. The claim band before "no difference": a precise interval on the claimed side, inside the band.
        (1.15, 1.01, 1.04, 0.05, HOLDS),
        (1.15, 1.01, 1.20, 0.05, HOLDS),
        # A claimed difference outside the noise, measured inside it without direction: not seen.
        (1.5, 0.99, 1.03, 0.05, NO_DIFFERENCE),
        # The same without a margin from this sitting: the claim is still ruled out.
        (1.5, 0.99, 1.03, None, CONTRADICTED),
    ],
)
def test_the_issue_examples(claimed, low, high, margin, expected):
    assert _word(claimed, low, high, margin) == expected


def test_the_band_is_a_factor_either_way():
    # The README says "within a factor of 1.25 either way": -20% / +25%, symmetric on the log scale.
    low, high = claim_band(2.0, 0.25)
    assert low == pytest.approx(1.6) and high == pytest.approx(2.5)
