"""The verdict records the notebooks save, and the verdict names.

Each notebook saves its verdicts to reports/verdicts/<notebook>.json
(`save_verdicts`), and the summary notebook and the report read them all
(`load_verdicts`). A record carries the rule's version, the verdict and why,
the ratio with its interval, confidence and family, the p-values, the noise
margin used, and the trials used and left out (with reasons and trial ids).
The rule that decides a verdict is `loadlab.judgements.rule` (its docstring,
and `RULE_TEXT`, which the summary report prints); each claim's judgement is
a function in a source module (`s1` ... `s5`).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from loadlab import paths
from loadlab.claims import Claim
from loadlab.errors import LoadlabError
from loadlab.judgements.rule import (  # noqa: F401  (the verdict names, re-exported)
    CONTRADICTED, DIRECTION_ONLY, HOLDS, IMPOSSIBLE, INCONCLUSIVE, NO_DIFFERENCE, NOT_REPRODUCED, NOT_TESTABLE,
    RULE_VERSION, VERDICTS, RatioJudgement,
)
from loadlab.rundir import write_json_atomic


@dataclass
class Verdict:
    """One claim's verdict. Ratios are candidate / baseline; values carry the claim's unit."""

    claim_id: str
    verdict: str
    explanation: str
    notebook: str
    run_id: str | None = None
    baseline: str | None = None
    candidate: str | None = None
    claimed_ratio: float | None = None
    measured_ratio: float | None = None
    ratio_ci_low: float | None = None
    ratio_ci_high: float | None = None
    confidence: float | None = None
    family: str | None = None
    family_size: int | None = None
    p_value: float | None = None
    p_family: float | None = None
    noise_margin: float | None = None
    noise_margin_source: str | None = None
    tolerance: float | None = None
    n_baseline: int | None = None
    n_candidate: int | None = None
    excluded: list = field(default_factory=list)
    trial_ids: dict = field(default_factory=dict)
    context: str | None = None
    measured: dict = field(default_factory=dict)
    direction: str | None = None
    size: str | None = None
    rule_version: int = RULE_VERSION

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")


def claimed_ratio(claim: Claim, baseline_key: str, candidate_key: str) -> float:
    baseline, candidate = float(claim.values[baseline_key]), float(claim.values[candidate_key])
    return candidate / baseline


def ratio_verdict(claim_id: str, judgement: RatioJudgement, notebook: str, run_id: str | None, baseline: str,
                  candidate: str, metric: str, *, excluded: list | None = None, trial_ids: dict | None = None,
                  context: str | None = None, extra_explanation: str = "", measured: dict | None = None,
                  noise_margin_source: str | None = None) -> Verdict:
    """The record of one ratio judgement (`loadlab.judgements.rule.judge_ratio`)."""
    explanation = judgement.explanation + (f"; {extra_explanation}" if extra_explanation else "")
    return Verdict(
        claim_id=claim_id, verdict=judgement.verdict, explanation=explanation, notebook=notebook, run_id=run_id,
        baseline=baseline, candidate=candidate, claimed_ratio=judgement.claimed_ratio,
        measured_ratio=_number(judgement.ratio), ratio_ci_low=_number(judgement.ci_low),
        ratio_ci_high=_number(judgement.ci_high), confidence=judgement.confidence, family=judgement.family,
        family_size=judgement.family_size, p_value=_number(judgement.p_value), p_family=_number(judgement.p_family),
        noise_margin=judgement.noise_margin, noise_margin_source=noise_margin_source, tolerance=judgement.tolerance,
        n_baseline=judgement.n_baseline, direction=judgement.direction, size=judgement.size,
        n_candidate=judgement.n_candidate, excluded=list(excluded or []), trial_ids=dict(trial_ids or {}),
        context=context,
        measured={"metric": metric, "baseline_median": _number(judgement.baseline_median),
                  "candidate_median": _number(judgement.candidate_median),
                  "ratio_of_medians": _number(judgement.ratio_of_medians), **(measured or {})},
    )


def _number(value) -> float | None:
    """JSON has no NaN: a missing number is recorded as null."""
    return float(value) if value is not None and math.isfinite(value) else None


def save_verdicts(verdicts: list[Verdict], notebook: str, directory: Path = paths.VERDICTS_DIR) -> Path:
    path = Path(directory) / f"{notebook}.json"
    write_json_atomic(path, [asdict(v) for v in verdicts])
    return path


def load_verdicts(directory: Path = paths.VERDICTS_DIR) -> list[Verdict]:
    verdicts = []
    for path in sorted(Path(directory).glob("*.json")):
        for item in json.loads(path.read_text()):
            if item.get("rule_version") != RULE_VERSION:
                raise LoadlabError(f"{path} holds verdicts of rule version {item.get('rule_version', 1)}, not "
                                   f"{RULE_VERSION}: re-judge them with `make report` (re-analysis, no measuring)")
            verdicts.append(Verdict(**item))
    return verdicts
