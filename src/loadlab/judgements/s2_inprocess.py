"""S2 judged as S2 ran it: in one process, no HTTP (`loadlab.harness.microbench.s2_in_process`).

S2 drove its two designs with an in-process generator (2,000 requests a second
for 60 s, each 10 ms of CPU with runtime.Gosched() in the loop, then 5 ms of
sleep), so a request it could not serve became a goroutine that held memory.
These verdicts are taken on fresh processes of that program, one per trial:
S2-throughput, -rss, -gc-pause and -gc-mark as ratios pool / a goroutine per
request (one family, as in `s2`), S2-goroutines on the counts, S2-oom on the
kernel's OOM kills under the stated memory limit. The HTTP experiment
(`s2`) stays as the extension: what the same designs do behind a listen queue.
"""

from __future__ import annotations

import pandas as pd

from loadlab.claims import Claim
from loadlab.judgements import evidence as evidence_policy
from loadlab.judgements._common import judge_claimed_ratio, margin_source
from loadlab.units import MIB
from loadlab.judgements.rule import CONTRADICTED, HOLDS, INCONCLUSIVE, NOT_REPRODUCED, judge_ratio
from loadlab.judgements.s2 import (FAMILY, GC_MARK_CLAIMED_RATIO, KEYS, POOL_WORKERS, SOURCE_SECONDS_TO_OOM,
                                   feasibility_verdict)
from loadlab.judgements.verdicts import Verdict, ratio_verdict

DESIGN_LABELS = {"spawn": "unbounded", "pool": "pool12"}  # claims.yaml's sides
LABELS = ("unbounded", "pool12")
# The goroutines a pool process runs beside its workers: main, the generator, and the runtime's own few.
POOL_OVERHEAD_GOROUTINES = 4


def processes(frame: pd.DataFrame, duration_s: float) -> pd.DataFrame:
    """One row per process (a trial): its design's claim label, throughput over the offered window, peak RSS
    (MiB), GC pause total (s), peak live heap (MiB), peak goroutines, whether it was OOM-killed and when.

    An OOM-killed process printed no "done" line: its peaks are those of its last second, its throughput the
    requests completed by then over the offered window (what a client of it got), and `oom_second` its last
    printed second. `duration_s` is the offered window the run asked for (seconds).
    """
    rows = []
    for process, lines in frame.groupby("process"):
        seconds = lines[lines["event"] == "second"]
        done = lines[lines["event"] == "done"]
        design = str(lines["design"].iloc[0])
        killed = bool(lines["oom_killed"].iloc[0]) if "oom_killed" in lines else False
        last = seconds.iloc[-1] if len(seconds) else None
        row = {
            "trial": int(process), "process": int(process), "design": design, "label": DESIGN_LABELS[design],
            "status": "ok", "oom_killed": killed,
            "oom_second": float(last["second"]) if killed and last is not None else float("nan"),
            "rss_peak_mib": float(pd.to_numeric(seconds["rss_bytes"]).max()) / MIB if len(seconds) else float("nan"),
            "goroutines_peak": float(pd.to_numeric(seconds["goroutines"]).max()) if len(seconds) else float("nan"),
            "heap_live_peak_mib": float(pd.to_numeric(seconds["heap_live_bytes"]).max()) / MIB if len(seconds) else float("nan"),
            "gc_pause_total_s": float(last["gc_pause_total_s"]) if last is not None else float("nan"),
            "gc_cycles": float(last["gc_cycles"]) if last is not None else float("nan"),
        }
        if len(done):
            end = done.iloc[0]
            row.update(throughput_rps=float(end["throughput_rps"]), rss_peak_mib=float(end["rss_peak_bytes"]) / MIB,
                       goroutines_peak=float(end["goroutines_peak"]),
                       heap_live_peak_mib=float(end["heap_live_peak_bytes"]) / MIB,
                       gc_pause_total_s=float(end["gc_pause_total_s"]), gc_cycles=float(end["gc_cycles"]))
        else:
            completed = float(last["completed"]) if last is not None else 0.0
            row["throughput_rps"] = completed / duration_s
        rows.append(row)
    return pd.DataFrame(rows)


def verdicts(frame: pd.DataFrame, claims: dict[str, Claim], margins: dict[str, float], notebook: str, run_id: str,
             parameters: dict) -> list[Verdict]:
    """S2-throughput, -rss, -gc-pause, -gc-mark, -goroutines and -oom on the in-process run."""
    table = processes(frame, float(parameters["duration_s"]))
    limit_mib = parameters.get("memory_limit_mib")
    context = (f"S2 in-process as S2 ran it (microbench-programs/s2inprocess): {parameters.get('rate_rps', '?'):g} requests "
               f"a second for {parameters.get('duration_s', '?'):g} s, each {parameters.get('cpu_ms', '?'):g} ms of "
               f"CPU yielding with runtime.Gosched() then {parameters.get('sleep_ms', '?'):g} ms of sleep; a goroutine "
               f"per request vs {parameters.get('workers', POOL_WORKERS)} workers on a channel of "
               f"{parameters.get('queue', '?')} places; one fresh process per trial on one pinned core under a "
               f"{limit_mib} MiB memory limit; the source: 4 cores, its limit not stated (it crashed at 1.24 GB)")
    served = table.groupby("label")["throughput_rps"].median()
    out = [
        judge_claimed_ratio(claims[claim_id], table, metric, LABELS, KEYS, FAMILY, margins, notebook, run_id,
                            context=context, extra=extra)
        for claim_id, metric, extra in (
            ("S2-throughput", "throughput_rps", "requests completed within the offered window per second (median "
             "of processes: " + ", ".join(f"{label} {served.get(label, float('nan')):,.1f}" for label in LABELS)
             + "); a goroutine per request that yields shares the core among every request in flight, so while the "
             "backlog grows none of them finishes its 10 ms; an OOM-killed process counts what it completed before "
             "the kill"),
            ("S2-rss", "rss_peak_mib", "peak RSS of the process (/proc/self/statm, once a second)"),
            ("S2-gc-pause", "gc_pause_total_s", "total GC pause over the process's run (debug.ReadGCStats); "
             + gc_pause_parts_text(table)),
        )
    ]
    out.append(_gc_mark(table, margins, notebook, run_id, context))
    out.append(goroutines(table, notebook, run_id, context))
    out.append(out_of_memory(table, limit_mib, notebook, run_id, context))
    return out


def gc_pause_parts_text(table: pd.DataFrame) -> str:
    """The total GC pause's two factors per design, medians of the processes: GC cycles, and pause per cycle (µs).

    The total S2 names is cycles times pause per cycle. The cycles follow the
    heap each design builds and are nearly fixed; a stop-the-world pause on a
    process's one core took tens of microseconds in one sitting and up to a
    millisecond in the next, with the same cycles, so the ratio of totals moved
    ten times (the reference's two sittings of 2026-11-29: ×0.104 and ×0.953).
    Said beside the verdict so that a reader sees which factor moved it.
    """
    parts = []
    for label in LABELS:
        rows = table[table["label"] == label]
        cycles = pd.to_numeric(rows["gc_cycles"], errors="coerce")
        per_cycle_us = 1e6 * pd.to_numeric(rows["gc_pause_total_s"], errors="coerce") / cycles.where(cycles > 0)
        if cycles.notna().any():
            per = per_cycle_us.median()
            parts.append(f"{label} {cycles.median():,.0f} cycles, {per:,.0f} µs a cycle" if pd.notna(per)
                         else f"{label} no GC cycle")
    if not parts:
        return "no GC cycle recorded"
    return ("its factors (median of processes): " + "; ".join(parts) + ". The cycles follow each design's heap; the "
            "pause per cycle is a stop-the-world on the process's one core, the factor that moved between the "
            "reference's sittings while the cycles stayed")


def feasibility(frame: pd.DataFrame, notebook: str, run_id: str, parameters: dict) -> Verdict:
    """S2-feasibility by arithmetic, with what S2's own program did on one core here: the most requests a process
    completed a second over the offered window, and the CPU each request was given (the program's calibration:
    loop rounds per request over rounds per ms)."""
    table = processes(frame, float(parameters["duration_s"]))
    served = table.groupby("label")["throughput_rps"].max()
    calibrated = frame[frame["event"] == "calibrated"] if "event" in frame else frame.iloc[0:0]
    cpu_ms = (pd.to_numeric(calibrated["rounds_per_request"]) / pd.to_numeric(calibrated["rounds_per_ms"])).median() \
        if len(calibrated) else float(parameters.get("cpu_ms", float("nan")))
    best = float(served.max()) if len(served) else float("nan")
    here = (f"Here S2's own program, on one core, completed at most {best:,.1f} req/s of the "
            f"{float(parameters.get('rate_rps', float('nan'))):,.0f} offered ("
            + ", ".join(f"{label} {served.get(label, float('nan')):,.1f}" for label in LABELS)
            + f"), each request {cpu_ms:.3g} ms of CPU as the program calibrated it: one core finishes at most "
            f"{1000 / cpu_ms:,.0f} such requests a second")
    measured = {"max_served_rps": best, "cpu_ms_per_request": float(cpu_ms),
                **{f"served_rps_{label}": float(value) for label, value in served.items()}}
    context = (f"S2 in-process (microbench-programs/s2inprocess), {len(table)} fresh processes pinned to one core, "
               f"{float(parameters.get('duration_s', float('nan'))):g} s each")
    return feasibility_verdict(here, measured, notebook, run_id, context=context)


def _gc_mark(table, margins, notebook, run_id, context) -> Verdict:
    evidence = evidence_policy.gather(table, LABELS, "heap_live_peak_mib")
    judgement = judge_ratio(evidence.values[LABELS[0]], evidence.values[LABELS[1]], GC_MARK_CLAIMED_RATIO, FAMILY,
                            margins.get("heap_live_peak_mib"))
    return ratio_verdict("S2-gc-mark", judgement, notebook, run_id, LABELS[0], LABELS[1], "heap_live_peak_mib",
                         excluded=evidence.excluded, trial_ids=evidence.trial_ids, context=context,
                         extra_explanation=(f"{evidence.summary(LABELS)}; judged on the peak live heap the GC marked "
                                            "(runtime/metrics /gc/heap/live:bytes), the measurable stand-in for "
                                            "objects scanned; claimed 63% fewer = x0.37"),
                         noise_margin_source=margin_source(margins))


def goroutines(table: pd.DataFrame, notebook: str, run_id: str, context: str) -> Verdict:
    """S2-goroutines: the pool's process runs its 12 workers and a few of its own; the goroutine-per-request
    process runs one per request in flight (claimed 127 ± 32)."""
    peaks = table.groupby("label")["goroutines_peak"].median().to_dict()
    pool, unbounded = peaks.get("pool12"), peaks.get("unbounded")
    if pool is None or unbounded is None:
        return Verdict("S2-goroutines", INCONCLUSIVE, "a design has no process with a goroutine count", notebook,
                       run_id, context=context, measured=peaks)
    pool_ok = pool <= POOL_WORKERS + POOL_OVERHEAD_GOROUTINES
    unbounded_ok = 127 - 32 <= unbounded <= 127 + 32
    text = (f"peak goroutines (median of processes): pool {pool:,.0f}, a goroutine per request {unbounded:,.0f}; "
            f"claimed pool 12, unbounded 127 ± 32. The pool's count is its {POOL_WORKERS} workers plus at most "
            f"{POOL_OVERHEAD_GOROUTINES} of its own (main, the generator, the runtime's)")
    if pool_ok and unbounded_ok:
        return Verdict("S2-goroutines", HOLDS, text, notebook, run_id, context=context, measured=peaks)
    why = [] if pool_ok else ["the pool ran more than its workers"]
    if not unbounded_ok:
        why.append(f"a goroutine per request ran {unbounded:,.0f}, not 127 ± 32: at 2,000 requests a second of 10 ms "
                   "CPU on one core every request not yet served is a goroutine, so the count grows with the backlog")
    return Verdict("S2-goroutines", CONTRADICTED, text + "; " + "; ".join(why), notebook, run_id, context=context,
                   measured=peaks)


def out_of_memory(table: pd.DataFrame, limit_mib, notebook: str, run_id: str, context: str) -> Verdict:
    """S2-oom: the goroutine-per-request process OOM-killed under the limit, the pool's never."""
    kills = table.groupby("label")["oom_killed"].agg(["sum", "size"]).to_dict("index")
    seconds = table.loc[table["oom_killed"] & (table["label"] == "unbounded"), "oom_second"].dropna()
    unbounded, pool = kills.get("unbounded", {"sum": 0, "size": 0}), kills.get("pool12", {"sum": 0, "size": 0})
    when = (f", the last second each printed before the kill: {seconds.min():.0f} to {seconds.max():.0f} "
            f"(the source: second {SOURCE_SECONDS_TO_OOM})") if len(seconds) else ""
    text = (f"under a {limit_mib} MiB limit, OOM-killed: a goroutine per request in {int(unbounded['sum'])} of "
            f"{int(unbounded['size'])} processes{when}; the pool in {int(pool['sum'])} of {int(pool['size'])}")
    measured = {"oom_kills": {k: int(v["sum"]) for k, v in kills.items()},
                "processes": {k: int(v["size"]) for k, v in kills.items()},
                "oom_seconds": [float(s) for s in seconds]}
    if unbounded["sum"] and not pool["sum"]:
        return Verdict("S2-oom", HOLDS, text, notebook, run_id, context=context, measured=measured)
    if pool["sum"]:
        return Verdict("S2-oom", CONTRADICTED, text + ": the pool ran out of memory too", notebook, run_id,
                       context=context, measured=measured)
    peak = table.groupby("label")["rss_peak_mib"].median()
    measured["rss_peak_mib"] = {label: float(value) for label, value in peak.items()}
    return Verdict("S2-oom", NOT_REPRODUCED, text + f": the backlog's goroutines stayed under the limit over the "
                   f"run, at a median peak RSS of {peak.get('unbounded', float('nan')):,.0f} MiB for a goroutine per "
                   f"request ({int(table.loc[table['label'] == 'unbounded', 'goroutines_peak'].median()):,} goroutines, "
                   "about 2.6 KiB each with the request's state) against the source's 1.24 GB at its crash",
                   notebook, run_id, context=context, measured=measured)


def seconds(rows: pd.DataFrame) -> pd.DataFrame:
    """The in-process program's once-a-second rows (RSS, goroutines), each labelled with its design's side
    (`DESIGN_LABELS`), for the over-time figure."""
    per_second = rows[rows["event"] == "second"]
    return per_second.assign(label=per_second["design"].map(DESIGN_LABELS))
