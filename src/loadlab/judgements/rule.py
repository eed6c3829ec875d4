"""The verdict rule: one function that turns two groups of trials and a claimed ratio into a verdict.

A numeric claim compares two runtimes (candidate / baseline). Absolute numbers
came from other hardware, so the claim is judged by its ratio. The rule, in
the words the summary report prints (`RULE_TEXT`):

1. **Evidence.** Only trials that are ok, not stalled and whose loadgen had
   headroom enter (`loadlab.judgements.evidence`); each verdict records what
   it used and what it left out, and why.
2. **One interval decides.** The measured ratio is the Hodges-Lehmann shift
   on the log scale, with its exact distribution-free interval
   (`loadlab.stats.shift_ratio_interval`, closed ends). The recorded p-value
   is that interval's own exact level (`interval_p_value`): the interval
   excludes 1 exactly when p < 1 - confidence, ties included (a tie counts
   against a difference), so the record and the decision never disagree.
3. **One family per source.** Each interval of a source's k ratio verdicts is
   computed at 1 - 0.05 / k (Bonferroni). Too few trials for such an
   interval gives "inconclusive", with the count.
4. **Three facts, each read off the interval by containment.**
   - *direction*: as claimed, opposite, or not established (the interval
     wholly above 1, wholly below 1, or containing 1), whatever the margin;
   - *size*: confirmed (the interval inside the claim's band
     [c/(1+t), c(1+t)], t = max(25%, m)), ruled out (no point in common), or
     open;
   - *noise*: inside the band [1/(1+m), 1+m] two fresh instances of one
     server land in (m from this sitting's A/A control,
     `loadlab.judgements.margins`), or not.
5. **The word is a function of the facts.** For a claimed ratio c != 1:
   opposite direction: "contradicted"; claimed direction and size confirmed:
   "holds"; claimed direction otherwise: "holds in direction only"; no
   direction and size ruled out: "no difference (within noise)" when the
   interval lies in the noise band, else "contradicted"; no direction
   otherwise: "inconclusive". For c = 1 (a claim of no difference): size
   confirmed is "holds", ruled out is "contradicted", open is "inconclusive".

Why this shape: an interval nested inside another keeps every fact the wider
one established (containment is inherited), so a more precise measurement
never gets a weaker word (`REFINEMENTS` lists the moves a word can make);
inverting the ratio (c -> 1/c, [L, H] -> [1/H, 1/L]) maps every band onto
itself, so swapping the sides never changes the word; and "holds" needs the
interval inside the claim's band, so a claim the interval rules out never
holds. tests/test_judgements_rule_properties.py checks these on a grid.

Other verdicts come from the judgement functions, each with its reason: "not
reproduced" (the effect did not appear here, and why), "not testable here",
"impossible as stated" (with the arithmetic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from loadlab import stats

RULE_VERSION = 3
FAMILY_ALPHA = 0.05
CLAIM_TOLERANCE = 0.25

HOLDS = "holds"
DIRECTION_ONLY = "holds in direction only"
CONTRADICTED = "contradicted"
NO_DIFFERENCE = "no difference (within noise)"
NOT_REPRODUCED = "not reproduced"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable here"
IMPOSSIBLE = "impossible as stated"
VERDICTS = (HOLDS, DIRECTION_ONLY, CONTRADICTED, NO_DIFFERENCE, NOT_REPRODUCED, INCONCLUSIVE, NOT_TESTABLE, IMPOSSIBLE)

# The facts an interval establishes (step 4 of the rule).
AS_CLAIMED, OPPOSITE, NOT_ESTABLISHED = "as claimed", "opposite", "not established"
CONFIRMED, RULED_OUT, OPEN = "confirmed", "ruled out", "open"

# The words a ratio verdict can move to when its interval is replaced by one nested inside it: a more precise
# measurement only adds facts, so it never loses a word's decision. "contradicted" and "no difference" rule the
# claim out; a nested interval can add the claimed direction while the size stays ruled out ("holds in direction
# only"), never "holds".
REFINEMENTS = {
    INCONCLUSIVE: frozenset({INCONCLUSIVE, HOLDS, DIRECTION_ONLY, CONTRADICTED, NO_DIFFERENCE}),
    HOLDS: frozenset({HOLDS}),
    DIRECTION_ONLY: frozenset({DIRECTION_ONLY, HOLDS}),
    CONTRADICTED: frozenset({CONTRADICTED, NO_DIFFERENCE, DIRECTION_ONLY}),
    NO_DIFFERENCE: frozenset({NO_DIFFERENCE, CONTRADICTED, DIRECTION_ONLY}),
}

RULE_TEXT = (
    f"Verdict rule, version {RULE_VERSION}. "
    "Evidence: only trials that are ok, not stalled, whose loadgen had headroom and that reached the level asked; "
    "each verdict lists what it used and what it left out. The measured ratio (candidate / baseline) is the "
    "Hodges-Lehmann estimate with its exact distribution-free interval; the recorded p is that interval's own exact "
    "level (ties count against a difference), so the interval excludes 1 exactly when p is below its level. The "
    f"ratio verdicts of one source form one family: each interval is at 1 - {FAMILY_ALPHA:g}/k for k verdicts "
    "(Bonferroni); too few trials for such an interval is 'inconclusive'. Three facts are read off the interval: "
    "its direction (wholly above or below 1, whatever the margin), whether it lies inside the claim's band "
    f"[c/(1+t), c(1+t)] (t = max({CLAIM_TOLERANCE:.0%}, m)) or misses it, and whether it lies inside the noise band "
    "[1/(1+m), 1+m], where m is the ratio within which two fresh instances of one server land 95% of the time in "
    "this sitting's A/A control. Words: the other side of 1 from the claim: 'contradicted'; the claimed side and "
    "inside the band: 'holds'; the claimed side otherwise: 'holds in direction only'; containing 1 and missing the "
    "band: 'no difference (within noise)' when inside the noise band, else 'contradicted'; containing 1 otherwise: "
    "'inconclusive'. A claim of no difference (c = 1) holds inside its band and is contradicted outside it. A "
    "nested (more precise) interval never gets a weaker word, and swapping the two sides never changes it."
)


@dataclass(frozen=True)
class Family:
    """The multiple-comparison family a ratio verdict belongs to (one per source)."""

    name: str
    size: int

    def __post_init__(self):
        if self.size < 1:
            raise ValueError(f"family {self.name!r}: size must be >= 1, got {self.size}")

    @property
    def confidence(self) -> float:
        return 1.0 - FAMILY_ALPHA / self.size


@dataclass(frozen=True)
class Facts:
    """What one interval establishes about one claim (step 4 of the rule)."""

    direction: str
    size: str
    within_noise: bool | None  # None: no noise margin measured in this sitting for the metric


@dataclass(frozen=True)
class RatioJudgement:
    """What the rule decided for one ratio, with everything a record needs."""

    verdict: str
    explanation: str
    claimed_ratio: float
    ratio: float
    ci_low: float
    ci_high: float
    confidence: float
    p_value: float
    p_family: float
    family: str
    family_size: int
    noise_margin: float | None
    tolerance: float
    n_baseline: int
    n_candidate: int
    baseline_median: float
    candidate_median: float
    ratio_of_medians: float
    direction: str | None = None
    size: str | None = None


def noise_band(margin: float | None) -> tuple[float, float]:
    """The interval of ratios two identical servers reach: [1/(1+m), 1+m]; (1, 1) without a margin."""
    if margin is None or not math.isfinite(margin) or margin <= 0:
        return (1.0, 1.0)
    return (1.0 / (1.0 + margin), 1.0 + margin)


def claim_band(claimed: float, tolerance: float) -> tuple[float, float]:
    """The ratios that match a claimed ratio c: [c/(1+t), c(1+t)], a factor 1+t either way."""
    return claimed / (1.0 + tolerance), claimed * (1.0 + tolerance)


def usable_margin(margin: float | None) -> float | None:
    """A measured margin (0 included: identical counts in every A/A trial), or None when there is none."""
    return float(margin) if margin is not None and math.isfinite(margin) and margin >= 0 else None


def _text(value: float) -> str:
    return f"{value:.3g}" if math.isfinite(value) else "n/a"


def judge_ratio(baseline, candidate, claimed_ratio: float, family: Family, noise_margin: float | None = None,
                tolerance: float = CLAIM_TOLERANCE) -> RatioJudgement:
    """Judge a claimed candidate/baseline ratio on two groups of evidence trials (values in any one unit)."""
    baseline = np.asarray(baseline, dtype=float)
    candidate = np.asarray(candidate, dtype=float)
    if not (math.isfinite(claimed_ratio) and claimed_ratio > 0):
        raise ValueError(f"claimed_ratio must be a positive number, got {claimed_ratio!r}")
    margin = usable_margin(noise_margin)
    tolerance = max(tolerance, margin or 0.0)
    confidence = family.confidence
    n_baseline, n_candidate = baseline.size, candidate.size
    common = dict(claimed_ratio=float(claimed_ratio), confidence=confidence, family=family.name,
                  family_size=family.size, noise_margin=margin, tolerance=tolerance,
                  n_baseline=n_baseline, n_candidate=n_candidate)
    if n_baseline == 0 or n_candidate == 0:
        return RatioJudgement(INCONCLUSIVE, f"no usable trials ({n_baseline} baseline, {n_candidate} candidate)",
                              ratio=math.nan, ci_low=math.nan, ci_high=math.nan, p_value=math.nan, p_family=math.nan,
                              baseline_median=math.nan, candidate_median=math.nan, ratio_of_medians=math.nan, **common)
    baseline_median, candidate_median = float(np.median(baseline)), float(np.median(candidate))
    ratio_of_medians = candidate_median / baseline_median if baseline_median > 0 else math.nan
    if not (np.all(baseline > 0) and np.all(candidate > 0)):
        return RatioJudgement(INCONCLUSIVE, "a ratio needs positive values in every trial (some are zero or negative)",
                              ratio=ratio_of_medians, ci_low=math.nan, ci_high=math.nan, p_value=math.nan,
                              p_family=math.nan, baseline_median=baseline_median, candidate_median=candidate_median,
                              ratio_of_medians=ratio_of_medians, **common)
    interval = stats.shift_ratio_interval(baseline, candidate, confidence)
    p_value = stats.interval_p_value(baseline, candidate)
    values = dict(ratio=interval.ratio, ci_low=interval.ci_low, ci_high=interval.ci_high, p_value=p_value,
                  p_family=min(1.0, p_value * family.size), baseline_median=baseline_median,
                  candidate_median=candidate_median, ratio_of_medians=ratio_of_medians, **common)
    verdict, why, facts = _decide(claimed_ratio, interval.ratio, interval.ci_low, interval.ci_high, margin, tolerance)
    if verdict == INCONCLUSIVE and not math.isfinite(interval.ci_low):
        need = stats.minimum_trials_for_shift_interval(confidence)
        why = (f"{n_baseline}+{n_candidate} usable trials: no {confidence:.4g} interval exists "
               f"(family {family.name} of {family.size}); at least {need} per side are needed")
    return RatioJudgement(verdict, why, direction=facts.direction if facts else None,
                          size=facts.size if facts else None, **values)


@dataclass(frozen=True)
class ValueJudgement:
    """A claimed absolute value against one side's trials: the median, its exact interval, and the size fact."""

    claimed: float
    median: float
    ci_low: float
    ci_high: float
    confidence: float
    size: str | None  # CONFIRMED, RULED_OUT, OPEN; None without an interval
    n: int


def judge_value(values, claimed: float, confidence: float, tolerance: float = CLAIM_TOLERANCE) -> ValueJudgement:
    """A claimed absolute figure (a share in %, say) weighed by the same rule as a ratio: the median of the trials
    with its exact order-statistic interval at `confidence`, against the claim's band [c/(1+t), c(1+t)]."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return ValueJudgement(claimed, math.nan, math.nan, math.nan, confidence, None, 0)
    estimate = stats.median_ci(values, confidence, method="order-statistic")
    size = None
    if math.isfinite(estimate.ci_low) and math.isfinite(estimate.ci_high):
        band_low, band_high = claim_band(claimed, tolerance)
        if _inside(estimate.ci_low, estimate.ci_high, band_low, band_high):
            size = CONFIRMED
        elif estimate.ci_high < band_low * (1 - _EDGE) or estimate.ci_low > band_high * (1 + _EDGE):
            size = RULED_OUT
        else:
            size = OPEN
    return ValueJudgement(claimed, float(estimate.median), float(estimate.ci_low), float(estimate.ci_high), confidence,
                          size, int(values.size))


def establish(claimed: float, low: float, high: float, margin: float | None, tolerance: float) -> Facts | None:
    """The three facts an interval [low, high] establishes about claimed ratio c (None without an interval)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    if low > 1 or high < 1:
        measured_up = low > 1
        # A claim of no difference (c = 1) has no direction to confirm: any established direction opposes it.
        direction = AS_CLAIMED if claimed != 1 and measured_up == (claimed > 1) else OPPOSITE
    else:
        direction = NOT_ESTABLISHED
    band_low, band_high = claim_band(claimed, tolerance)
    if _inside(low, high, band_low, band_high):
        size = CONFIRMED
    elif high < band_low * (1 - _EDGE) or low > band_high * (1 + _EDGE):
        size = RULED_OUT
    else:
        size = OPEN
    margin = usable_margin(margin)
    within_noise = None if margin is None else _inside(low, high, *noise_band(margin))
    return Facts(direction, size, within_noise)


# Band edges are products and quotients of the claim: an end that sits on an edge counts as inside it, on either
# side of the ratio (1/x and x/c round differently in the last bit), so the mirror property holds to the bit.
_EDGE = 1e-12


def _inside(low: float, high: float, band_low: float, band_high: float) -> bool:
    return band_low * (1 - _EDGE) <= low and high <= band_high * (1 + _EDGE)


def decide(claimed: float, ratio: float, low: float, high: float, margin: float | None,
           tolerance: float) -> tuple[str, str]:
    """The decision of the module docstring on an interval already computed; returns (verdict, reason)."""
    verdict, why, _ = _decide(claimed, ratio, low, high, margin, tolerance)
    return verdict, why


def _decide(claimed: float, ratio: float, low: float, high: float, margin: float | None,
            tolerance: float) -> tuple[str, str, Facts | None]:
    facts = establish(claimed, low, high, margin, tolerance)
    verdict, why = _word(claimed, ratio, low, high, margin, tolerance, facts)
    return verdict, why, facts


def _word(claimed: float, ratio: float, low: float, high: float, margin: float | None, tolerance: float,
          facts: Facts | None) -> tuple[str, str]:
    numbers = f"measured ×{_text(ratio)} [{_text(low)}, {_text(high)}], claimed ×{_text(claimed)}"
    if facts is None:
        return INCONCLUSIVE, f"no interval ({numbers})"
    band_low, band_high = claim_band(claimed, tolerance)
    band = f"the claim's band [{_text(band_low)}, {_text(band_high)}]"
    margin = usable_margin(margin)
    noise = (f"noise band [{_text(noise_band(margin)[0])}, {_text(noise_band(margin)[1])}]" if margin is not None
             else "no A/A noise margin from this sitting")
    if claimed == 1:
        if facts.size == CONFIRMED:
            return HOLDS, f"no difference beyond a factor {1 + tolerance:.3g}, as claimed ({numbers}; {band})"
        if facts.size == RULED_OUT:
            return CONTRADICTED, f"a difference beyond a factor {1 + tolerance:.3g} ({numbers}; {band})"
        return INCONCLUSIVE, f"the interval reaches beyond {band}: the data cannot tell ({numbers})"
    if facts.direction == OPPOSITE:
        return CONTRADICTED, f"the interval lies on the other side of 1 from the claim ({numbers})"
    if facts.direction == AS_CLAIMED:
        if facts.size == CONFIRMED:
            return HOLDS, f"the claimed direction, and the interval lies inside {band} ({numbers})"
        if facts.size == RULED_OUT:
            return DIRECTION_ONLY, f"the claimed direction, but the interval rules out {band} ({numbers})"
        return DIRECTION_ONLY, (f"the claimed direction; the claimed size is consistent but not confirmed: the "
                                f"interval reaches beyond {band} ({numbers})")
    if facts.size == RULED_OUT:
        if facts.within_noise:
            return NO_DIFFERENCE, (f"the interval lies inside the A/A {noise} and rules out {band}: the claimed "
                                   f"difference is not seen ({numbers})")
        return CONTRADICTED, f"no direction established, and the interval rules out {band} ({numbers}; {noise})"
    if facts.size == CONFIRMED:
        return INCONCLUSIVE, (f"the interval lies inside {band} but contains 1: the claimed direction is not "
                              f"established ({numbers}; {noise})")
    return INCONCLUSIVE, f"the interval contains 1 and meets {band}: the data cannot tell ({numbers}; {noise})"
