"""S2's scheduler claims (notebook 02), judged on calls counted with uprobes.

- S2-gopark: 127 (32) goroutines blocked in select{} make runtime.gopark run
  42.8k (8.1k) times a second. Measured by `loadlab.harness.scheduler_calls`:
  the calls in the second the goroutines start (the positive control: each
  parks once) and the rate while they sit parked.
- S2-mcall: over 2.1 million runtime.mcall calls a second in the
  goroutine-per-request mode. Measured on go-nethttp under 02's load
  (experiment 02-scheduler-calls): calls per second and per request.

These are rates of events, not ratios between runtimes: the rule's ratio
machinery does not apply. A verdict is "contradicted" only when the claimed
rate is more than CLAIM_FACTOR times every measured one (and the positive
control saw the calls it must), "holds" when a measured rate reaches
the claimed one within the same factor, else "inconclusive".
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from loadlab.claims import Claim
from loadlab.judgements import evidence as evidence_policy
from loadlab.judgements.rule import CONTRADICTED, HOLDS, INCONCLUSIVE
from loadlab.judgements.s2 import SOURCE_CORES, SOURCE_CPU_S, SOURCE_OFFERED_RPS
from loadlab.judgements.verdicts import Verdict

# A counted rate this many times below (or within) the claimed one decides; between, it is inconclusive.
CLAIM_FACTOR = 10.0
UNBOUNDED = "go-nethttp"


def parked_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (goroutines, repetition, function) of a `harness.scheduler_calls.parked_select` frame: the calls in
    the second the goroutines started (spawn_second_calls) and the calls per second while they sat parked
    (parked_calls_per_s, over parked_seconds)."""
    keys = ["goroutines", "repetition", "function"]
    spawn = frame[frame["phase"] == "spawn"].groupby(keys)["calls"].sum()
    parked = frame[frame["phase"] == "parked"].groupby(keys)
    return pd.DataFrame({"spawn_second_calls": spawn, "parked_calls_per_s": parked["calls"].sum() / parked["interval_s"].sum(),
                         "parked_seconds": parked["interval_s"].sum()}).reset_index()


def gopark(rates: pd.DataFrame, claim: Claim, notebook: str, run_id: str, context: str = "") -> Verdict:
    """S2-gopark from `parked_rates(frame)` (one row per goroutines, repetition, function)."""
    claimed = {int(key[1:]): float(value) for key, value in (claim.values.get("gopark_per_s") or {}).items()}
    park = rates[rates["function"] == "runtime.gopark"]
    if park.empty:
        return Verdict(claim.id, INCONCLUSIVE, "no runtime.gopark counts (the probe could not be added)", notebook,
                       run_id, context=context)
    measured, lines, control_ok = {}, [], True
    for goroutines, rows in park.groupby("goroutines"):
        spawn_calls = float(rows["spawn_second_calls"].median())
        per_s = float(rows["parked_calls_per_s"].median())
        high = float(rows["parked_calls_per_s"].max())
        measured[int(goroutines)] = {"spawn_second_calls_median": spawn_calls, "parked_calls_per_s_median": per_s,
                                     "parked_calls_per_s_max": high, "repetitions": int(len(rows))}
        control_ok &= spawn_calls >= goroutines
        lines.append(f"{goroutines} goroutines: {spawn_calls:,.0f} calls in the second they started, then "
                     f"{per_s:,.1f}/s while parked (max of {len(rows)} runs {high:,.1f}/s; claimed "
                     f"{claimed.get(int(goroutines), math.nan):,.0f}/s)")
    finder = rates[rates["function"].isin(["runtime.findRunnable", "runtime.findrunnable"])]
    finder_text = ""
    if not finder.empty:
        finder_text = ("; runtime.findRunnable while parked: " + ", ".join(
            f"{g} goroutines {rows['parked_calls_per_s'].median():,.1f}/s" for g, rows in finder.groupby("goroutines"))
            + ". Its time per call is not measured: a return probe (uretprobe) is unsafe on Go functions (the "
            "runtime moves goroutine stacks that hold the probe's return address), and a function that is not "
            "called has no time per call to compare with 1.7 us")
    compared = [(claimed[g], m["parked_calls_per_s_max"]) for g, m in measured.items() if g in claimed]
    if not control_ok:
        verdict, why = INCONCLUSIVE, "the probe did not see one call per goroutine when they started, so its zeros prove nothing"
    elif compared and all(claim_rate > CLAIM_FACTOR * max(rate, 1.0) for claim_rate, rate in compared):
        verdict, why = CONTRADICTED, ("a goroutine blocked in select{} parks once and is never woken: the probe "
                                      "counted each park when they started and almost none afterwards, far from the "
                                      "claimed rates at either count")
    elif compared and any(rate * CLAIM_FACTOR >= claim_rate for claim_rate, rate in compared):
        verdict, why = HOLDS, "a counted rate reaches the claimed one"
    else:
        verdict, why = INCONCLUSIVE, "no count compares with the claim"
    return Verdict(claim.id, verdict, f"{why}. " + "; ".join(lines) + finder_text, notebook, run_id,
                   context=context, measured={"gopark": measured})


def with_probe_counts(trials: pd.DataFrame, probe_counts: pd.DataFrame) -> pd.DataFrame:
    """The trials with `<function>_per_s` and `<function>_per_request` columns from the probe counts."""
    out = trials.copy()
    if probe_counts is None or probe_counts.empty:
        return out
    for function, rows in probe_counts.groupby("function"):
        name = function.split(".")[-1]
        per_s = rows.set_index("trial")["calls_per_s"]
        out[f"{name}_per_s"] = out["trial"].map(per_s)
        # throughput_rps: successful responses per second of the window.
        out[f"{name}_per_request"] = out[f"{name}_per_s"] / out["throughput_rps"].replace(0, np.nan)
    return out


# A trial's calls per request count only where its server kept up (answered this share of the offered rate): in
# overload most counted calls belong to requests still in flight, and per answered request they grow without bound.
KEPT_UP_SHARE = 0.95


def mcall(trials: pd.DataFrame, claim: Claim, notebook: str, run_id: str, context: str = "",
          source_rate_rps: float = SOURCE_OFFERED_RPS) -> Verdict:
    """S2-mcall from 02-scheduler-calls trials carrying `mcall_per_s` and `mcall_per_request` (with_probe_counts).

    The probes slow the server (each call traps into the kernel), so the rate
    they count is the probed server's, on one core. What transfers to S2's
    machine is the calls per request, counted where the server kept up
    (KEPT_UP_SHARE); times the requests S2's 4 cores complete a second (at
    most SOURCE_CORES / SOURCE_CPU_S, below the 2,000 offered), it is the
    rate S2's mode would run at there.
    """
    claimed = float(claim.values["mcall_per_s"])
    rows = evidence_policy.evidence_rows(trials[trials["label"] == UNBOUNDED])
    if "mcall_per_s" not in rows or rows["mcall_per_s"].notna().sum() == 0:
        return Verdict(claim.id, INCONCLUSIVE, "no runtime.mcall count from a goroutine-per-request trial",
                       notebook, run_id, context=context)
    rows = rows.assign(kept_up=rows["throughput_rps"] >= KEPT_UP_SHARE * rows["level"])
    by_level = rows.groupby("level").agg(mcall_per_s=("mcall_per_s", "median"), per_request=("mcall_per_request", "median"),
                                         served_rps=("throughput_rps", "median"), trials=("trial", "size"),
                                         kept_up=("kept_up", "all"))
    levels = "; ".join(f"{level:g} req/s offered: {row.mcall_per_s:,.0f} calls/s, {row.served_rps:,.1f} req/s "
                       f"answered ({int(row.trials)} trials)" + (f", {row.per_request:,.0f} calls per request"
                                                                 if row.kept_up else ", behind its load")
                       for level, row in by_level.iterrows())
    completed_rps = min(source_rate_rps, SOURCE_CORES / SOURCE_CPU_S)
    kept = by_level[by_level["kept_up"]]
    measured = {"by_level": {str(level): dict(row) for level, row in by_level.iterrows()},
                "source_completed_rps": completed_rps}
    tail = f". Counted with a uprobe on go-nethttp's binary: {levels}"
    if kept.empty:
        return Verdict(claim.id, INCONCLUSIVE, "the probed server kept up with no offered rate, so no count per "
                       "request transfers to S2's machine" + tail, notebook, run_id, context=context,
                       measured=measured)
    per_request = float(kept["per_request"].median())
    at_source_rate = per_request * completed_rps
    measured.update({"per_request": per_request, "at_source_rate_per_s": at_source_rate})
    how = (f"{per_request:,.0f} calls per request, where the server kept up, times the {completed_rps:,.0f} requests "
           f"a second S2's {SOURCE_CORES} cores complete at {SOURCE_CPU_S * 1e3:g} ms of CPU each is "
           f"{at_source_rate:,.0f} calls/s against the claimed {claimed:,.0f}/s. Nearly every call is a yield of the "
           "request's CPU loop (runtime.Gosched, which S2's loop called; go-nethttp yields every 1,024 rounds of "
           "its hash, about 2.5 us of work), so the rate follows how often the loop yields, which S2 does not state")
    if claimed > CLAIM_FACTOR * at_source_rate:
        verdict = CONTRADICTED
    elif at_source_rate * CLAIM_FACTOR >= claimed:
        verdict = HOLDS
    else:
        verdict = INCONCLUSIVE
    return Verdict(claim.id, verdict, how + tail, notebook, run_id, context=context, measured=measured)
