"""The verdict rule: one function that turns two groups of trials and a claimed ratio into a verdict.

A numeric claim compares two runtimes (candidate / baseline). Absolute numbers
came from other hardware, so the claim is judged by its ratio. The rule, in
the words the summary report prints (`RULE_TEXT`):

1. **Evidence.** Only trials that are ok, not stalled and whose loadgen had
   headroom enter (`loadlab.judgements.evidence`); each verdict records what
   it used and what it left out, and why.
2. **One interval decides.** The measured ratio is the Hodges-Lehmann shift
   on the log scale, with its exact distribution-free interval
   (`loadlab.stats.shift_ratio_interval`). That interval excludes 1 exactly
   when the exact Mann-Whitney test rejects, so direction, significance and
   size all come from it, never from a point estimate.
3. **One family per source.** The intervals of a source's ratio verdicts are
   simultaneous: each is computed at 1 - 0.05 / k for a family of k ratio
   verdicts (Bonferroni), so "holds" and "contradicted" rest on the same
   strength of evidence and the family errs with probability at most 5%.
   Too few trials for such an interval gives "inconclusive", with the count.
4. **The noise margin.** The A/A control (the same server twice) bounds how
   far apart two identical servers land: margin m per metric. A measured
   interval wholly inside [1/(1+m), 1+m] is "no difference (within noise)":
   that supports a claim of no difference and contradicts a claimed one.
5. **A tolerance around the claim.** A claimed ratio c counts as matched
   when the interval meets [c/(1+t), c(1+t)], with t = max(25%, m): a claim
   from other hardware is not punished because the measurement here is
   precise.
6. **Verdicts.** Interval wholly above (or below) 1 in the claimed direction:
   "holds" when it meets the tolerance band, else "holds in direction only".
   Wholly on the other side of 1: "contradicted". Containing 1: "contradicted"
   when it misses the tolerance band (the claimed size is ruled out), else
   "inconclusive". A claim of no difference (c inside the noise band) holds
   when the interval lies inside the noise band or inside the tolerance band,
   and is contradicted when the interval misses the tolerance band.

Other verdicts come from the judgement functions, each with its reason: "not
reproduced" (the effect did not appear here, and why), "not testable here",
"impossible as stated" (with the arithmetic).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from loadlab import stats

RULE_VERSION = 2
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

RULE_TEXT = (
    f"Verdict rule, version {RULE_VERSION}. "
    "Evidence: only trials that are ok, not stalled, and whose loadgen had headroom; each verdict lists what it used "
    "and what it left out. The measured ratio (candidate / baseline) is the Hodges-Lehmann estimate with its exact "
    "distribution-free interval, which excludes 1 exactly when the exact Mann-Whitney test rejects; direction, "
    "significance and size all come from this interval. The ratio verdicts of one source form one family: each "
    f"interval is computed at 1 - {FAMILY_ALPHA:g}/k for k verdicts (Bonferroni), so 'holds' and 'contradicted' need the "
    "same evidence and the family errs with probability at most 5%; too few trials for such an interval is "
    "'inconclusive'. The A/A control gives each metric a noise margin m: an interval inside [1/(1+m), 1+m] is "
    "'no difference (within noise)', which contradicts a claimed difference. A claimed ratio c is matched when "
    f"the interval meets [c/(1+t), c(1+t)], t = max({CLAIM_TOLERANCE:.0%}, m). Interval above (or below) 1 in the "
    "claimed direction: 'holds' if it meets that band, else 'holds in direction only'; on the other side of 1: "
    "'contradicted'; containing 1: 'contradicted' if it misses the band, else 'inconclusive'. A claim of no "
    "difference holds when the interval lies inside the noise band or the tolerance band."
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


def noise_band(margin: float | None) -> tuple[float, float]:
    """The interval of ratios two identical servers reach: [1/(1+m), 1+m]; (1, 1) without a margin."""
    if margin is None or not math.isfinite(margin) or margin <= 0:
        return (1.0, 1.0)
    return (1.0 / (1.0 + margin), 1.0 + margin)


def margin_from_band(low: float, high: float) -> float:
    """A symmetric margin m (on the log scale) that covers an A/A ratio interval [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)) or low <= 0:
        return math.nan
    return math.exp(max(abs(math.log(low)), abs(math.log(high)))) - 1.0


def _text(value: float) -> str:
    return f"{value:.3g}" if math.isfinite(value) else "n/a"


def judge_ratio(baseline, candidate, claimed_ratio: float, family: Family, noise_margin: float | None = None,
                tolerance: float = CLAIM_TOLERANCE) -> RatioJudgement:
    """Judge a claimed candidate/baseline ratio on two groups of evidence trials (values in any one unit)."""
    baseline = np.asarray(baseline, dtype=float)
    candidate = np.asarray(candidate, dtype=float)
    if not (math.isfinite(claimed_ratio) and claimed_ratio > 0):
        raise ValueError(f"claimed_ratio must be a positive number, got {claimed_ratio!r}")
    margin = noise_margin if noise_margin is not None and math.isfinite(noise_margin) and noise_margin > 0 else None
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
    test = stats.mann_whitney(baseline, candidate)
    p_family = min(1.0, test.p_value * family.size)
    if not (np.all(baseline > 0) and np.all(candidate > 0)):
        return RatioJudgement(INCONCLUSIVE, "a ratio needs positive values in every trial (some are zero or negative)",
                              ratio=ratio_of_medians, ci_low=math.nan, ci_high=math.nan, p_value=test.p_value,
                              p_family=p_family, baseline_median=baseline_median, candidate_median=candidate_median,
                              ratio_of_medians=ratio_of_medians, **common)
    interval = stats.shift_ratio_interval(baseline, candidate, confidence)
    values = dict(ratio=interval.ratio, ci_low=interval.ci_low, ci_high=interval.ci_high, p_value=test.p_value,
                  p_family=p_family, baseline_median=baseline_median, candidate_median=candidate_median,
                  ratio_of_medians=ratio_of_medians, **common)
    verdict, why = decide(claimed_ratio, interval.ratio, interval.ci_low, interval.ci_high, margin, tolerance)
    if verdict == INCONCLUSIVE and not math.isfinite(interval.ci_low):
        need = stats.minimum_trials_for_shift_interval(confidence)
        why = (f"{n_baseline}+{n_candidate} usable trials: no {confidence:.4g} interval exists "
               f"(family {family.name} of {family.size}); at least {need} per side are needed")
    return RatioJudgement(verdict, why, **values)


def decide(claimed: float, ratio: float, low: float, high: float, margin: float | None,
           tolerance: float) -> tuple[str, str]:
    """The decision of the module docstring on an interval already computed; returns (verdict, reason)."""
    numbers = f"measured ×{_text(ratio)} [{_text(low)}, {_text(high)}], claimed ×{_text(claimed)}"
    if not (math.isfinite(low) and math.isfinite(high)):
        return INCONCLUSIVE, f"no interval ({numbers})"
    noise_low, noise_high = noise_band(margin)
    tolerance_low, tolerance_high = claimed / (1 + tolerance), claimed * (1 + tolerance)
    inside_noise = margin is not None and noise_low <= low and high <= noise_high
    meets_claim = low <= tolerance_high and high >= tolerance_low
    inside_claim = tolerance_low <= low and high <= tolerance_high
    band = f"noise band [{_text(noise_low)}, {_text(noise_high)}]" if margin is not None else "no noise margin for this metric"
    claimed_no_difference = noise_low <= claimed <= noise_high
    if claimed_no_difference:
        if inside_noise:
            return HOLDS, f"no difference beyond the A/A noise, as claimed ({numbers}; {band})"
        if inside_claim:
            return HOLDS, f"within ×{1 + tolerance:.3g} of the claimed ratio ({numbers})"
        if not meets_claim:
            return CONTRADICTED, f"the interval rules out the claimed ratio ±{tolerance:.0%} ({numbers}; {band})"
        return INCONCLUSIVE, f"the interval is too wide to confirm the claimed ratio ({numbers}; {band})"
    claimed_up = claimed > 1
    if inside_noise:
        return NO_DIFFERENCE, (f"the interval lies inside the A/A noise, so the claimed difference is not seen "
                               f"({numbers}; {band})")
    if low > 1 or high < 1:
        measured_up = low > 1
        if measured_up != claimed_up:
            return CONTRADICTED, f"the interval lies on the other side of 1 ({numbers})"
        if meets_claim:
            return HOLDS, f"the claimed direction, and the claimed size within ±{tolerance:.0%} ({numbers})"
        return DIRECTION_ONLY, f"the claimed direction, but not the claimed size ±{tolerance:.0%} ({numbers})"
    if not meets_claim:
        return CONTRADICTED, f"no direction established, and the interval rules out the claimed ratio ±{tolerance:.0%} ({numbers})"
    return INCONCLUSIVE, f"the interval contains 1 and the claimed ratio: the data cannot tell ({numbers}; {band})"
