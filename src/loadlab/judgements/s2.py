"""S2 (notebook 02): a goroutine per request vs a 12-worker pool, open loop on /mixed.

claims.yaml names the sides `unbounded` (go-nethttp: a goroutine per
request) and `pool12` (go-workerpool with WORKERS=12). The ratio claims
(throughput, peak RSS, GC pause total, marked heap) form one family.
The scheduler claims (S2-gopark, S2-mcall) are counts of calls, judged on
uprobe counts (loadlab.harness.uprobes) from their own trials.
"""

from __future__ import annotations

import pandas as pd

from loadlab.claims import Claim, Verdict, ratio_verdict
from loadlab.judgements import evidence as evidence_policy
from loadlab.judgements._common import MIB, judge_claimed_ratio, setup_text
from loadlab.judgements.rule import CONTRADICTED, HOLDS, IMPOSSIBLE, INCONCLUSIVE, NOT_REPRODUCED, Family, judge_ratio

FAMILY = Family("S2", 4)
LABELS = ("go-nethttp", "go-workerpool")
KEYS = ("unbounded", "pool12")
POOL_WORKERS = 12
# The goroutine series is sampled once a second; a trial's peak counts only if this share of its window's
# seconds answered (an overloaded Go server serves /debug/vars behind its backlog, or not at all).
SERIES_MIN_SHARE = 0.5
SOURCE_SETUP = "the source: 2,000 req/s offered for 60 s, 4 cores"
# S2-gc-mark: "63% fewer objects" scanned by the pool.
GC_MARK_CLAIMED_RATIO = 0.37


def with_gc_mark(trials: pd.DataFrame, gc_cycles: pd.DataFrame) -> pd.DataFrame:
    """The trials with what gctrace says of each trial's GC cycles inside its window.

    marked_heap_mib: the live heap marked per cycle (gctrace's third heap
    number, MiB, printed rounded down), mean over the window's cycles;
    mark_cpu_ms_per_cycle: mark CPU (assist + background + idle workers)
    per cycle, ms; gc_cycles_in_window. NaN where a trial had no cycle in
    its window.
    """
    if gc_cycles is None or gc_cycles.empty:
        return trials.assign(marked_heap_mib=float("nan"), mark_cpu_ms_per_cycle=float("nan"), gc_cycles_in_window=0)
    window = gc_cycles[gc_cycles["in_window"] == True]  # noqa: E712  (a nullable column)
    mark_cpu_s = window["cpu_mark_assist_s"] + window["cpu_mark_background_s"] + window["cpu_mark_idle_s"]
    by_trial = window.assign(mark_cpu_s=mark_cpu_s).groupby("trial")
    return trials.assign(
        marked_heap_mib=trials["trial"].map(by_trial["heap_live_bytes"].mean() / MIB),
        mark_cpu_ms_per_cycle=trials["trial"].map(1000 * by_trial["mark_cpu_s"].mean()),
        gc_cycles_in_window=trials["trial"].map(by_trial.size()).fillna(0).astype(int),
    )


def gc_mark(trials: pd.DataFrame, margins: dict[str, float], notebook: str, run_id: str, level,
            context: str) -> Verdict:
    """S2-gc-mark on the marked live heap per GC cycle (`with_gc_mark`), pool / unbounded.

    gctrace gives the heap the mark phase marked (bytes, MiB resolution) and
    its CPU time, not a count of objects; the marked heap is the nearest
    measurable quantity to "objects scanned" (each object marked is scanned
    once), and the mark CPU per cycle is reported beside it.
    """
    evidence = evidence_policy.gather(trials, LABELS, "marked_heap_mib", level=level)
    judgement = judge_ratio(evidence.values[LABELS[0]], evidence.values[LABELS[1]], GC_MARK_CLAIMED_RATIO, FAMILY,
                            margins.get("memory_peak_mib"))
    ok = evidence_policy.evidence_rows(trials[trials["level"] == level])
    mark_cpu = {label: float(ok.loc[ok["label"] == label, "mark_cpu_ms_per_cycle"].median()) for label in LABELS}
    cycles = {label: int(ok.loc[ok["label"] == label, "gc_cycles_in_window"].sum()) for label in LABELS}
    extra = (f"{evidence.summary(LABELS)}; judged on the live heap marked per GC cycle (gctrace, MiB rounded down; "
             "gctrace reports marked bytes and mark CPU, not objects); claimed 63% fewer = x0.37; mark CPU per cycle "
             "(median of trials): " + ", ".join(f"{label} {value:.2f} ms" for label, value in mark_cpu.items())
             + "; cycles in the windows: " + ", ".join(f"{label} {n}" for label, n in cycles.items()))
    return ratio_verdict("S2-gc-mark", judgement, notebook, run_id, LABELS[0], LABELS[1], "marked_heap_mib",
                         excluded=evidence.excluded, trial_ids=evidence.trial_ids, context=context,
                         extra_explanation=extra, measured={"mark_cpu_ms_per_cycle": mark_cpu, "gc_cycles": cycles})


def with_runtime_metrics(tables: dict) -> pd.DataFrame:
    """The run's trials with `gc_pause_total_s` (gctrace pauses inside the window), `goroutines_peak` and the
    marked heap and mark CPU of `with_gc_mark`."""
    trials, gc, threads = tables["trials"], tables["gc_events"], tables["thread_counts"]
    window_gc = gc[gc["in_window"] == True] if not gc.empty else gc  # noqa: E712  (a nullable column)
    pause_total = window_gc.groupby("trial")["pause_s"].sum() if not window_gc.empty else pd.Series(dtype=float)
    goroutine_rows = threads[threads["metric"] == "goroutines"] if not threads.empty else threads
    peaks = goroutine_rows.groupby("trial")["count"].max() if not goroutine_rows.empty else pd.Series(dtype=float)
    samples = goroutine_rows.groupby("trial")["count"].size() if not goroutine_rows.empty else pd.Series(dtype=float)
    samples_per_trial = trials["trial"].map(samples).fillna(0).astype(int)
    # A series that answered in fewer than half the window's seconds has no peak worth the name.
    covered = samples_per_trial >= SERIES_MIN_SHARE * trials["duration_s"].astype(float)
    connection_rows = threads[threads["metric"] == "connections"] if not threads.empty else threads
    connections = connection_rows.groupby("trial")["count"].max() if not connection_rows.empty else pd.Series(dtype=float)
    trials = with_gc_mark(trials, tables.get("gc_cycles"))
    return trials.assign(gc_pause_total_s=trials["trial"].map(pause_total).fillna(0.0),
                         connections_peak=trials["trial"].map(connections),
                         goroutine_samples=samples_per_trial,
                         goroutines_peak=trials["trial"].map(peaks).where(covered))


def worker_pool(trials: pd.DataFrame, manifest: dict, claims: dict[str, Claim], margins: dict[str, float],
                notebook: str, run_id: str) -> list[Verdict]:
    """Every S2 verdict, at the highest offered rate of the run.

    `trials` must carry `gc_pause_total_s` (window GC pauses per trial) and
    `goroutines_peak`: `with_runtime_metrics` adds both from the run's tables;
    and `marked_heap_mib`, `mark_cpu_ms_per_cycle`, `gc_cycles_in_window`
    (`with_gc_mark`).
    """
    level = trials["level"].max()
    context = f"{setup_text(manifest, level)}; {SOURCE_SETUP}"
    data = trials.assign(memory_peak_mib=trials["memory_peak_bytes"] / MIB)
    verdicts = [
        judge_claimed_ratio(claims[claim_id], data, metric, LABELS, KEYS, FAMILY, margins, notebook, run_id, level, context)
        for claim_id, metric in (("S2-throughput", "throughput_rps"), ("S2-rss", "memory_peak_mib"),
                                 ("S2-gc-pause", "gc_pause_total_s"))
    ]
    verdicts.append(gc_mark(data, margins, notebook, run_id, level, context))
    verdicts.append(goroutines(data, level, notebook, run_id, context))
    verdicts.append(out_of_memory(data, manifest, level, notebook, run_id, context))
    verdicts.append(feasibility(data, notebook, run_id))
    return verdicts


def goroutines(trials: pd.DataFrame, level, notebook: str, run_id: str, context: str) -> Verdict:
    ok = trials[(trials["status"] == "ok") & (trials["level"] == level)]
    peaks = {label: float(ok.loc[ok["label"] == label, "goroutines_peak"].median()) for label in LABELS
             if ok.loc[ok["label"] == label, "goroutines_peak"].notna().any()}
    if set(LABELS) - set(peaks):
        missing = sorted(set(LABELS) - set(peaks))
        answered = ok.loc[ok["label"].isin(missing), "goroutine_samples"] if "goroutine_samples" in ok else pd.Series(dtype=int)
        window_s = float(ok["duration_s"].median()) if len(ok) else float("nan")
        below = trials[(trials["status"] == "ok") & (trials["level"] < level)]
        lower = {label: float(below.loc[below["label"] == label, "goroutines_peak"].median()) for label in LABELS
                 if below.loc[below["label"] == label, "goroutines_peak"].notna().any()}
        lower_text = (f"; below capacity ({below['level'].max():g} req/s) the peaks were "
                      + ", ".join(f"{label} {value:,.0f}" for label, value in lower.items())
                      + ", which say nothing of the claim's overload") if lower else ""
        unanswered = (f"at {level:g} req/s offered, {', '.join(missing)}'s /debug/vars answered in at most "
                      f"{int(answered.max()) if len(answered) else 0} of the {window_s:.0f} seconds of a window (an "
                      "overloaded Go server serves it behind its backlog)")
        connections = {label: float(ok.loc[ok["label"] == label, "connections_peak"].median()) for label in LABELS
                       if "connections_peak" in ok and ok.loc[ok["label"] == label, "connections_peak"].notna().any()}
        if "go-workerpool" in connections:
            # net/http runs a goroutine per accepted connection; the pool adds its workers to those.
            at_least = {label: value + (POOL_WORKERS if label == "go-workerpool" else 0) for label, value in connections.items()}
            verdict = CONTRADICTED if at_least["go-workerpool"] > 2 * POOL_WORKERS else INCONCLUSIVE
            return Verdict(
                "S2-goroutines", verdict,
                f"{unanswered}; the kernel's socket table, read once a second, counted their established "
                "connections instead (peak, median of trials): "
                + ", ".join(f"{label} {value:,.0f}" for label, value in connections.items())
                + ". net/http serves each connection on a goroutine of its own, so the processes ran at least "
                + ", ".join(f"{label} {value:,.0f}" for label, value in at_least.items())
                + f" goroutines (the pool's {POOL_WORKERS} workers added); the pool's process never runs on "
                f"{POOL_WORKERS} goroutines under overload", notebook, run_id, context=context,
                measured={"goroutines_at_least": at_least, "connections_peak": connections})
        return Verdict(
            "S2-goroutines", INCONCLUSIVE,
            f"{unanswered}, so no goroutine count covers the overload{lower_text}",
            notebook, run_id, context=context,
            measured={**({"goroutines_peak": peaks} if peaks else {}), "below_capacity": lower})
    text = ", ".join(f"{label} {value:,.0f}" for label, value in peaks.items())
    verdict = CONTRADICTED if peaks["go-workerpool"] > 2 * POOL_WORKERS else HOLDS
    return Verdict(
        "S2-goroutines", verdict,
        f"peak goroutines of the process (median of trials; sampled once a second from /debug/vars, which an "
        f"overloaded server answers late, so a peak can be missed but never inflated): {text}. net/http serves each "
        f"connection on its own "
        f"goroutine in both servers, so the pool's process never runs on {POOL_WORKERS} goroutines; its "
        f"{POOL_WORKERS} workers are a part of the count", notebook, run_id, context=context, measured=peaks)


def out_of_memory(trials: pd.DataFrame, manifest: dict, level, notebook: str, run_id: str, context: str) -> Verdict:
    kills = trials[trials["failure_reason"] == "oom-killed"]["label"].value_counts().to_dict()
    limit_mib = ((manifest.get("parameters") or {}).get("placement") or {}).get("memory_limit_mib")
    peak = trials[trials["status"] == "ok"].groupby("label")["memory_peak_mib"].max().to_dict()
    measured = {"oom_kills": {label: int(kills.get(label, 0)) for label in sorted(set(trials["label"]))},
                "memory_peak_mib": peak}
    if kills.get("go-nethttp") and not kills.get("go-workerpool"):
        return Verdict("S2-oom", HOLDS, f"the unbounded server was OOM-killed in {kills['go-nethttp']} trial(s) "
                       f"at a {limit_mib} MiB limit, the pool never", notebook, run_id, context=context, measured=measured)
    peaks = ", ".join(f"{label} {value:.0f} MiB" for label, value in peak.items())
    if kills.get("go-workerpool"):
        why = (f"the pool, not the unbounded server, was OOM-killed ({kills['go-workerpool']} trial(s)); "
               f"highest peaks of the surviving trials: {peaks}")
    else:
        why = (f"no OOM kill in any trial: at {level:g} req/s offered the highest peaks were {peaks} of a {limit_mib} MiB "
               "limit, in windows far shorter than the source's 37 s to its crash")
    return Verdict("S2-oom", NOT_REPRODUCED, why, notebook, run_id, context=context, measured=measured)


def feasibility(trials: pd.DataFrame, notebook: str, run_id: str) -> Verdict:
    ok = trials[trials["status"] == "ok"]
    cpu_per_request_s = float((ok["server_cpu_seconds"] / ok["requests"]).median()) if len(ok) else float("nan")
    served = float(ok["throughput_rps"].max()) if len(ok) else float("nan")
    return Verdict(
        "S2-feasibility", IMPOSSIBLE,
        "2,000 req/s x 10 ms of CPU = 20 CPU-seconds of work per second, but 4 cores give 4 CPU-seconds per second: "
        f"at most 400 req/s. Here one core served at most {served:,.0f} req/s at {1000 * cpu_per_request_s:.1f} ms "
        "of CPU per request", notebook, run_id,
        measured={"cpu_ms_per_request": 1000 * cpu_per_request_s, "max_served_rps": served})
