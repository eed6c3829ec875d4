"""The blog posts' claims and the verdicts the measurements give them.

Absolute numbers in the claims came from other hardware, so a numeric claim
is judged by its *ratio* between two runtimes: the claimed ratio against the
measured ratio of medians with its 95% CI and a Holm-corrected Mann-Whitney
test (rows of `loadlab.stats.compare_conditions`). Verdicts:

- holds: the difference is significant, in the claimed direction, and the
  claimed ratio lies inside the measured CI;
- holds in direction only: significant and in the claimed direction, but the
  claimed ratio lies outside the CI (the size is wrong);
- contradicted: significant in the opposite direction, or no significant
  difference while the CI excludes the claimed ratio;
- inconclusive: too few trials, or no significant difference and a CI wide
  enough to contain the claimed ratio;
- not testable here / impossible as stated: set by the notebook with its
  reason or its arithmetic.

Each notebook saves its verdicts to reports/verdicts/<notebook>.json; the
summary notebook reads them all.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from loadlab import paths
from loadlab.rundir import write_json_atomic

HOLDS = "holds"
DIRECTION_ONLY = "holds in direction only"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable here"
IMPOSSIBLE = "impossible as stated"
VERDICTS = (HOLDS, DIRECTION_ONLY, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE, IMPOSSIBLE)


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    metric: str | None = None
    unit: str | None = None
    values: dict = field(default_factory=dict)
    claim: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Source:
    id: str
    title: str
    setup: str


def load_claims(path: Path = paths.CLAIMS_YAML) -> tuple[dict[str, Source], dict[str, Claim]]:
    document = yaml.safe_load(Path(path).read_text())
    sources = {key: Source(key, value["title"], " ".join(value["setup"].split())) for key, value in document["sources"].items()}
    claims = {}
    for raw in document["claims"]:
        claims[raw["id"]] = Claim(
            id=raw["id"], source=raw["source"], metric=raw.get("metric"), unit=raw.get("unit"),
            values=dict(raw.get("values") or {}), claim=raw.get("claim"), note=raw.get("note"),
        )
    return sources, claims


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
    p_holm: float | None = None
    n_baseline: int | None = None
    n_candidate: int | None = None
    measured: dict = field(default_factory=dict)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")


def claimed_ratio(claim: Claim, baseline_key: str, candidate_key: str) -> float:
    baseline, candidate = float(claim.values[baseline_key]), float(claim.values[candidate_key])
    return candidate / baseline


def judge(claimed: float, ratio: float, ci_low: float, ci_high: float, significant: bool,
          too_few_trials: bool) -> tuple[str, str]:
    """The verdict rule of this module's docstring; returns (verdict, one-line reason)."""
    interval = f"measured ×{ratio:.3g} [{ci_low:.3g}, {ci_high:.3g}], claimed ×{claimed:.3g}"
    if too_few_trials or not all(math.isfinite(v) for v in (ratio, ci_low, ci_high)):
        return INCONCLUSIVE, f"too few trials for a test or an interval ({interval})"
    claimed_up = claimed > 1
    inside = ci_low <= claimed <= ci_high
    if significant:
        measured_up = ratio > 1
        if claimed == 1:
            return CONTRADICTED, f"claimed no difference, found one ({interval})"
        if measured_up == claimed_up:
            if inside:
                return HOLDS, f"significant, in the claimed direction and size ({interval})"
            return DIRECTION_ONLY, f"significant and in the claimed direction, but not the claimed size ({interval})"
        return CONTRADICTED, f"significant in the opposite direction ({interval})"
    if not inside:
        return CONTRADICTED, f"no significant difference (~), and the interval excludes the claimed ratio ({interval})"
    if claimed == 1:
        return HOLDS, f"no significant difference, as claimed ({interval})"
    return INCONCLUSIVE, f"no significant difference (~); the interval still allows the claimed ratio ({interval})"


def verdict_from_comparison(
    claim: Claim, row, baseline_key: str, candidate_key: str, notebook: str, run_id: str | None = None,
) -> Verdict:
    """Judge `claim` on one row of `loadlab.stats.compare_conditions` (candidate vs baseline)."""
    claimed = claimed_ratio(claim, baseline_key, candidate_key)
    warnings = row.get("warnings") or ""
    too_few = "no U test can reach" in str(warnings)
    verdict, reason = judge(claimed, float(row["ratio"]), float(row["ratio_ci_low"]), float(row["ratio_ci_high"]),
                            bool(row["significant"]), too_few)
    return Verdict(
        claim_id=claim.id, verdict=verdict, explanation=reason, notebook=notebook, run_id=run_id,
        baseline=str(row["baseline"]), candidate=str(row["candidate"]), claimed_ratio=claimed,
        measured_ratio=float(row["ratio"]), ratio_ci_low=float(row["ratio_ci_low"]),
        ratio_ci_high=float(row["ratio_ci_high"]), p_holm=float(row["p_holm"]),
        n_baseline=int(row["n_baseline"]), n_candidate=int(row["n_candidate"]),
        measured={"baseline_median": float(row["baseline_median"]), "candidate_median": float(row["candidate_median"]),
                  "metric": str(row["metric"])},
    )


def save_verdicts(verdicts: list[Verdict], notebook: str, directory: Path = paths.VERDICTS_DIR) -> Path:
    path = Path(directory) / f"{notebook}.json"
    write_json_atomic(path, [asdict(v) for v in verdicts])
    return path


def load_verdicts(directory: Path = paths.VERDICTS_DIR) -> list[Verdict]:
    verdicts = []
    for path in sorted(Path(directory).glob("*.json")):
        verdicts += [Verdict(**item) for item in json.loads(path.read_text())]
    return verdicts
