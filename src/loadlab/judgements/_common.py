"""What every source's judgements share: judging one claimed ratio on one run's trials, and the run's setup."""

from __future__ import annotations

import pandas as pd

from loadlab import metrics
from loadlab.claims import Claim
from loadlab.judgements import evidence as evidence_policy
from loadlab.judgements.rule import Family, judge_ratio
from loadlab.judgements.verdicts import Verdict, claimed_ratio, ratio_verdict
from loadlab.tables import cpu_allowance_cores, with_metrics  # noqa: F401  (the judgement modules import them here)
from loadlab.experiment import trials_text
from loadlab.manifest import Manifest

# A closed loop keeps a pinned server busy: at or above this share of its CPU
# allowance, CPU share measures the load, not the runtime.
CPU_SATURATION_SHARE = 0.95


def judge_claimed_ratio(claim: Claim, trials: pd.DataFrame, metric: str, labels: tuple[str, str],
                        keys: tuple[str, str], family: Family, margins: dict[str, float], notebook: str,
                        run_id: str | None, level=None, context: str | None = None, extra: str = "",
                        label_column: str = "label") -> Verdict:
    """One ratio verdict: `claim`'s candidate/baseline on `metric` between labels (baseline, candidate).

    `keys` are the claim's value keys for the same two sides (claims.yaml's
    names, e.g. ("unbounded", "pool12")); `margins` the A/A noise margin per
    metric from the A/A run of this run's sitting (`loadlab.judgements.margins.noise_margins`), whose source the
    record names.
    """
    baseline_label, candidate_label = labels
    evidence = evidence_policy.gather(trials, labels, metric, level=level, label_column=label_column)
    judgement = judge_ratio(evidence.values[baseline_label], evidence.values[candidate_label],
                            claimed_ratio(claim, *keys), family, margins.get(metric))
    used = evidence.summary(labels)
    return ratio_verdict(
        claim.id, judgement, notebook, run_id, baseline_label, candidate_label, metric,
        excluded=evidence.excluded, trial_ids=evidence.trial_ids, context=context,
        extra_explanation="; ".join(part for part in (used, extra) if part),
        noise_margin_source=margin_source(margins),
    )


def margin_source(margins) -> str | None:
    """Where a verdict's noise margins came from (`margins.NoiseMargins.source_text`), or None for a plain dict."""
    source = getattr(margins, "source_text", None)
    return source() if source else None


def quota_text(manifest: Manifest) -> str:
    """", rust and swoole capped at 0.5 core by a quota" (servers with their own quota), or the run's quota."""
    parameters = manifest.parameters
    capped = [(entry.get("label") or entry.get("server"), entry["cpu_quota"])
              for entry in parameters.get("servers") or [] if entry.get("cpu_quota")]
    period = (parameters.get("placement") or {}).get("cpu_period_ms")
    granted = f" granted in {period:g} ms CFS periods" if period else ""
    if capped:
        return ", " + ", ".join(f"{label} capped at {quota:g} core" for label, quota in capped) + f" by a quota{granted}"
    quota = (parameters.get("placement") or {}).get("cpu_quota")
    return f", a CPU quota of {quota:g} core{granted}" if quota else ""


def basis_text(load: dict) -> str:
    """Whose capacity an open loop's fraction is of (`load.capacity_basis`)."""
    if load.get("capacity_basis") == "slowest":
        return "the slowest server's capacity, the same rate for every server"
    return "each server's own capacity"


def open_loop_text(load: dict) -> str:
    """"open loop (openloop, latency from each request's intended send time)", or vegeta's for a run before it."""
    if (load.get("open_loop_generator") or "vegeta") == "vegeta":  # runs recorded before openloop used vegeta
        return "open loop (vegeta, constant rate)"
    return "open loop (openloop, constant rate, latency from each request's intended send time)"


def connection_mode_text(load: dict) -> str:
    """", a new connection per request" for a recorded load that ran one (keep-alive, the default, goes unsaid)."""
    return ", a new connection per request" if load.get("connection_mode") == "per-request" else ""


def setup_text(manifest: Manifest, level=None) -> str:
    """One line on how the run measured: load, level, window, placement (for a verdict's context)."""
    parameters = manifest.parameters
    load, durations, placement = parameters.get("load") or {}, parameters.get("durations") or {}, parameters.get("placement") or {}
    mode = load.get("mode")
    if mode == "open" and load.get("capacity_fractions"):
        what = f"{open_loop_text(load)} at {level:g} of {basis_text(load)}" if level is not None else open_loop_text(load)
    elif mode == "open":
        what = f"{open_loop_text(load)} at {level:g} req/s" if level is not None else open_loop_text(load)
    else:
        what = f"closed loop (wrk) at {level} connections" if level is not None else "closed loop (wrk)"
    return (f"{what}{connection_mode_text(load)} on {load.get('route', '?')}, "
            f"{durations.get('duration_s', '?')} s windows, "
            f"{trials_text(parameters)}; server on CPU "
            f"{placement.get('server_cpus', '?')}{quota_text(manifest)}, loadgen on CPU {placement.get('loadgen_cpus', '?')}")


def cpu_pct_of_allowance(trials: pd.DataFrame, manifest: Manifest, column: str = "server_cpu_seconds") -> pd.Series:
    """CPU share of what each trial's server was given (its quota or its cores), in per cent: `loadlab.metrics`'
    `server_cpu_pct_of_allowance` (or `server_cpu_user_pct_of_allowance` for the user-mode `column`)."""
    name = {"server_cpu_seconds": "server_cpu_pct_of_allowance",
            "server_cpu_user_seconds": "server_cpu_user_pct_of_allowance"}[column]
    return metrics.derive(name, with_metrics(trials, manifest))


def both_at_allowance(trials: pd.DataFrame, labels, level, manifest: Manifest) -> dict[str, float] | None:
    """{label: median CPU share of its allowance} when every side ran at its whole allowance, else None."""
    shares = {}
    for label in labels:
        rows = trials[(trials["label"] == label) & (trials["status"] == "ok")]
        if level is not None:
            rows = rows[rows["level"] == level]
        if rows.empty:
            return None
        shares[label] = float((rows["server_cpu_seconds"] / rows["duration_s"]).median() / cpu_allowance_cores(manifest, label))
    return shares if all(share >= CPU_SATURATION_SHARE for share in shares.values()) else None
