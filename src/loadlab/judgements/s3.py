"""S3 (notebook 03): Go net/http vs Rust axum on GET /api/users (rust / go ratios, one family)."""

from __future__ import annotations

import pandas as pd

from loadlab.claims import Claim
from loadlab.judgements._common import (
    both_at_allowance, cpu_allowance_cores, judge_claimed_ratio, setup_text, with_metrics,
)
from loadlab.judgements.rule import CONTRADICTED, DIRECTION_ONLY, HOLDS, INCONCLUSIVE, NO_DIFFERENCE, NOT_TESTABLE, Family
from loadlab.judgements.verdicts import Verdict
from loadlab.manifest import Manifest

FAMILY = Family("S3", 3)
LABELS = ("go", "rust")
SOURCE_SETUP = "the source: hey -n 100000 -c 256 on 4 cores"
PARTS = ("S3-throughput", "S3-cpu", "S3-memory")


def json_api(trials: pd.DataFrame, manifest: Manifest, claims: dict[str, Claim], margins: dict[str, float],
             notebook: str, run_id: str) -> list[Verdict]:
    """S3-throughput, S3-cpu, S3-memory at the run's top level, and S3-headline from the three."""
    level = trials["level"].max()
    context = f"{setup_text(manifest, level)}; {SOURCE_SETUP}"
    data = with_metrics(trials, manifest)  # memory_peak_mib, server_cpu_pct, cpu_us_per_request (loadlab.metrics)
    verdicts = [judge_claimed_ratio(claims["S3-throughput"], data, "throughput_rps", LABELS, LABELS, FAMILY, margins,
                                    notebook, run_id, level, context)]
    allowance = cpu_allowance_cores(manifest, LABELS[0])
    saturated = both_at_allowance(data, LABELS, level, manifest)
    if saturated:
        per_request = data[(data["status"] == "ok") & (data["level"] == level)].groupby("label")["cpu_us_per_request"].median()
        verdicts.append(Verdict(
            "S3-cpu", NOT_TESTABLE,
            "under a closed loop both servers used their whole CPU allowance (" +
            ", ".join(f"{label} {share:.0%}" for label, share in saturated.items()) +
            f" of {allowance:g} core), so their CPU shares cannot differ here; the source's 92.4% vs 86.1% came from "
            "4 cores. CPU time per request, which can differ, is shown: " +
            ", ".join(f"{label} {value:.1f} µs" for label, value in per_request.items()),
            notebook, run_id, baseline="go", candidate="rust", family=FAMILY.name, family_size=FAMILY.size,
            context=context, measured={"cpu_share_of_allowance": saturated,
                                       "cpu_us_per_request": per_request.to_dict()}))
    else:
        verdicts.append(judge_claimed_ratio(claims["S3-cpu"], data, "server_cpu_pct", LABELS, LABELS, FAMILY, margins,
                                            notebook, run_id, level, context))
    verdicts.append(judge_claimed_ratio(claims["S3-memory"], data, "memory_peak_mib", LABELS, LABELS, FAMILY, margins,
                                        notebook, run_id, level, context))
    verdicts.append(headline(verdicts, notebook, run_id, context))
    return verdicts


def headline(parts: list[Verdict], notebook: str, run_id: str, context: str) -> Verdict:
    """"Rust leads on throughput and CPU, but uses more memory": holds only if every decidable part does."""
    by_id = {v.claim_id: v for v in parts}
    labels = {claim_id: by_id[claim_id].verdict for claim_id in PARTS if claim_id in by_id}
    summary = "; ".join(f"{claim_id}: {verdict}" for claim_id, verdict in labels.items())
    against = [k for k, v in labels.items() if v in (CONTRADICTED, NO_DIFFERENCE)]
    decided = {k: v for k, v in labels.items() if v != NOT_TESTABLE}
    if against:
        return Verdict("S3-headline", CONTRADICTED, f"contradicted on {', '.join(against)} ({summary})", notebook, run_id,
                       context=context)
    if decided and all(v in (HOLDS, DIRECTION_ONLY) for v in decided.values()):
        verdict = HOLDS if len(decided) == len(labels) else DIRECTION_ONLY
        return Verdict("S3-headline", verdict, f"every part that could be judged goes the claimed way ({summary})",
                       notebook, run_id, context=context)
    return Verdict("S3-headline", INCONCLUSIVE, f"parts could not be decided ({summary})", notebook, run_id, context=context)
