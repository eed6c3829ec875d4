"""S2 (notebook 02): a goroutine per request vs a 12-worker pool, open loop on /mixed.

claims.yaml names the sides `unbounded` (go-nethttp: a goroutine per
request) and `pool12` (go-workerpool with WORKERS=12). The ratio claims
(throughput, peak RSS, GC pause total, marked heap) form one family.
The scheduler claims (S2-gopark, S2-mcall) are counts of calls, judged on
uprobe counts (loadlab.harness.uprobes) from their own trials.
"""

from __future__ import annotations

import pandas as pd

from loadlab import metrics, units
from loadlab.claims import Claim
from loadlab.judgements import evidence as evidence_policy
from loadlab.judgements._common import judge_claimed_ratio, margin_source, setup_text
from loadlab.judgements.rule import CONTRADICTED, HOLDS, IMPOSSIBLE, INCONCLUSIVE, NOT_REPRODUCED, Family, judge_ratio
from loadlab.judgements.verdicts import Verdict, ratio_verdict
from loadlab.manifest import Manifest

FAMILY = Family("S2", 4)
LABELS = ("go-nethttp", "go-workerpool")
KEYS = ("unbounded", "pool12")
POOL_WORKERS = 12
# The goroutine series is sampled once a second; a trial's peak counts only if this share of its window's
# seconds answered (an overloaded Go server serves /debug/vars behind its backlog, or not at all).
SERIES_MIN_SHARE = 0.5
SOURCE_SETUP = "the source: 2,000 req/s offered for 60 s, 4 cores"
# S2's machine and work: 4 cores, 10 ms of CPU a request. However many requests are offered, it completes at most
# SOURCE_CORES / SOURCE_CPU_S (400) a second (S2-feasibility; S2-mcall scales its counts per request by it).
SOURCE_OFFERED_RPS = 2000
SOURCE_CORES = 4
SOURCE_CPU_S = 0.010
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
        marked_heap_mib=trials["trial"].map(units.bytes_to_mib(by_trial["heap_live_bytes"].mean())),
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
    # The A/A run records no marked heap, so this metric has no margin (the peak memory's would be another quantity).
    judgement = judge_ratio(evidence.values[LABELS[0]], evidence.values[LABELS[1]], GC_MARK_CLAIMED_RATIO, FAMILY,
                            margins.get("marked_heap_mib"))
    ok = evidence_policy.evidence_rows(trials[trials["level"] == level])
    mark_cpu = {label: float(ok.loc[ok["label"] == label, "mark_cpu_ms_per_cycle"].median()) for label in LABELS}
    cycles = {label: int(ok.loc[ok["label"] == label, "gc_cycles_in_window"].sum()) for label in LABELS}
    extra = (f"{evidence.summary(LABELS)}; judged on the live heap marked per GC cycle (gctrace, MiB rounded down; "
             "gctrace reports marked bytes and mark CPU, not objects); claimed 63% fewer = x0.37; mark CPU per cycle "
             "(median of trials): " + ", ".join(f"{label} {value:.2f} ms" for label, value in mark_cpu.items())
             + "; cycles in the windows: " + ", ".join(f"{label} {n}" for label, n in cycles.items()))
    return ratio_verdict("S2-gc-mark", judgement, notebook, run_id, LABELS[0], LABELS[1], "marked_heap_mib",
                         excluded=evidence.excluded, trial_ids=evidence.trial_ids, context=context,
                         extra_explanation=extra, measured={"mark_cpu_ms_per_cycle": mark_cpu, "gc_cycles": cycles},
                         noise_margin_source=margin_source(margins))


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
    # A series that answered in fewer than half the window's seconds has no peak worth the name. The window is the
    # one the run asked for: an open loop's duration_s also counts vegeta's wait for answers still in flight.
    window_s = tables["manifest"].parameter("durations").get("duration_s") if "manifest" in tables else None
    window = pd.Series(float(window_s), index=trials.index) if window_s else trials["duration_s"].astype(float)
    covered = samples_per_trial >= SERIES_MIN_SHARE * window
    connection_rows = threads[threads["metric"] == "connections"] if not threads.empty else threads
    connections = connection_rows.groupby("trial")["count"].max() if not connection_rows.empty else pd.Series(dtype=float)
    trials = with_gc_mark(trials, tables.get("gc_cycles"))
    return trials.assign(gc_pause_total_s=trials["trial"].map(pause_total).fillna(0.0),
                         connections_peak=trials["trial"].map(connections),
                         goroutine_samples=samples_per_trial,
                         goroutines_peak=trials["trial"].map(peaks).where(covered))


def accept_backlog(manifest: Manifest) -> int | None:
    """The host's listen-queue size when the run was measured (its recorded connection limits), or None for runs
    recorded before the limits were."""
    return (manifest.provenance.get("connection_limits") or {}).get("accept_backlog")


def worker_pool(trials: pd.DataFrame, manifest: Manifest, claims: dict[str, Claim], margins: dict[str, float],
                notebook: str, run_id: str) -> list[Verdict]:
    """Every S2 verdict, at the highest offered rate of the run.

    `trials` must carry `gc_pause_total_s` (window GC pauses per trial) and
    `goroutines_peak`: `with_runtime_metrics` adds both from the run's tables;
    and `marked_heap_mib`, `mark_cpu_ms_per_cycle`, `gc_cycles_in_window`
    (`with_gc_mark`).
    """
    level = trials["level"].max()
    context = f"{setup_text(manifest, level)}; {SOURCE_SETUP}"
    data = metrics.with_derived(trials)  # memory_peak_mib
    verdicts = [
        judge_claimed_ratio(claims[claim_id], data, metric, LABELS, KEYS, FAMILY, margins, notebook, run_id, level, context)
        for claim_id, metric in (("S2-throughput", "throughput_rps"), ("S2-rss", "memory_peak_mib"),
                                 ("S2-gc-pause", "gc_pause_total_s"))
    ]
    verdicts.append(gc_mark(data, margins, notebook, run_id, level, context))
    verdicts.append(goroutines(data, level, notebook, run_id, context, accept_backlog=accept_backlog(manifest)))
    verdicts.append(out_of_memory(data, manifest, level, notebook, run_id, context))
    verdicts.append(feasibility(data, notebook, run_id))
    verdicts[0] = inherit_infeasibility(verdicts[0], verdicts[-1])
    return verdicts


def inherit_infeasibility(throughput: Verdict, feasible: Verdict) -> Verdict:
    """S2-throughput at a load S2's own numbers make impossible is judged once, by S2-feasibility: it takes that
    word and says so, keeping the ratio it measured for the record."""
    if feasible.verdict != IMPOSSIBLE:
        return throughput
    throughput.verdict = IMPOSSIBLE
    throughput.explanation = (
        "judged by S2-feasibility: the claimed 1,842 and 1,987 req/s of 10 ms CPU work each are impossible on the "
        "source's 4 cores (at most 400 req/s), so no ratio of them can hold or fail; measured here for the record: "
        + throughput.explanation)
    return throughput


def goroutines(trials: pd.DataFrame, level, notebook: str, run_id: str, context: str,
               accept_backlog: int | None = None) -> Verdict:
    """S2-goroutines: the pool process's goroutines under overload, from /debug/vars where its series answered,
    else from the kernel's count of established connections.

    An established connection may still wait in the listen queue, where no goroutine serves it yet; so the
    floor under the goroutine count is the connections less the accept backlog (the host's, recorded in the
    run's connection limits), plus the pool's workers. Without a recorded backlog nothing is taken off, and
    the text says so.
    """
    ok = trials[(trials["status"] == "ok") & (trials["level"] == level)]
    peaks = {label: float(ok.loc[ok["label"] == label, "goroutines_peak"].median()) for label in LABELS
             if ok.loc[ok["label"] == label, "goroutines_peak"].notna().any()}
    pool = ok[ok["label"] == "go-workerpool"]
    pool_counted = pool["goroutines_peak"].dropna()
    if set(LABELS) - set(peaks) and len(pool_counted) and pool_counted.max() > 2 * POOL_WORKERS:
        # The claim is the pool's own count: one window that the runtime counted through is enough to refute it.
        return Verdict(
            "S2-goroutines", CONTRADICTED,
            f"at {level:g} req/s offered, /debug/vars answered through {len(pool_counted)} of the pool's {len(pool)} "
            f"windows, and the pool's process then ran up to {pool_counted.max():,.0f} goroutines (peaks "
            + ", ".join(f"{value:,.0f}" for value in sorted(pool_counted)) + "): net/http serves each accepted "
            f"connection on a goroutine of its own in front of the {POOL_WORKERS} workers. The other windows, and "
            f"the unbounded server's, answered too rarely to count (an overloaded Go server serves /debug/vars "
            f"behind its backlog)", notebook, run_id, context=context,
            measured={"goroutines_peak_pool_max": int(pool_counted.max()), "pool_windows_counted": int(len(pool_counted)),
                      "pool_windows": int(len(pool))})
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
            queued = accept_backlog or 0
            at_least = {label: max(0.0, value - queued) + (POOL_WORKERS if label == "go-workerpool" else 0)
                        for label, value in connections.items()}
            verdict = CONTRADICTED if at_least["go-workerpool"] > 2 * POOL_WORKERS else INCONCLUSIVE
            backlog_text = (f"less the {queued:,} that the listen queue can hold before they are accepted"
                            if accept_backlog else "(the run recorded no accept backlog, so none is taken off "
                            "for connections still in the listen queue)")
            return Verdict(
                "S2-goroutines", verdict,
                f"{unanswered}; the kernel's socket table, read once a second, counted their established "
                "connections instead (peak, median of trials): "
                + ", ".join(f"{label} {value:,.0f}" for label, value in connections.items())
                + f". net/http serves each accepted connection on a goroutine of its own, so, {backlog_text}, "
                "the processes ran at least "
                + ", ".join(f"{label} {value:,.0f}" for label, value in at_least.items())
                + f" goroutines (the pool's {POOL_WORKERS} workers added); "
                + (f"the pool's process never runs on {POOL_WORKERS} goroutines under overload"
                   if verdict == CONTRADICTED else "that floor cannot tell the pool's count from its workers'"),
                notebook, run_id, context=context,
                measured={"goroutines_at_least": at_least, "connections_peak": connections,
                          "accept_backlog": accept_backlog})
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


# S2's unbounded server ran out of memory at second 37 of its 60 s run.
SOURCE_SECONDS_TO_OOM = 37


def seconds_to_oom(trials: pd.DataFrame) -> pd.Series:
    """Seconds from the start of the measured window to the OOM kill, per OOM-killed trial (the engine's
    FinishedAt against the window's start; NaN where a trial recorded neither)."""
    killed = trials[trials["failure_reason"] == "oom-killed"]
    if "server_ended_unix_s" not in killed or "measured_unix_s" not in killed:
        return pd.Series(float("nan"), index=killed.index)
    return killed["server_ended_unix_s"] - killed["measured_unix_s"]


def out_of_memory(trials: pd.DataFrame, manifest: Manifest, level, notebook: str, run_id: str, context: str) -> Verdict:
    """S2-oom at `level`: was the unbounded server OOM-killed under the run's memory limit, and the pool not?

    Every server of the run is counted (the rejecting pool too); the time to each kill is measured from the
    window's start, against the source's 37 s.
    """
    at_level = trials[trials["level"] == level]
    labels = sorted(set(at_level["label"]))
    kills = at_level[at_level["failure_reason"] == "oom-killed"]["label"].value_counts().to_dict()
    times = seconds_to_oom(at_level)
    killed_after = {label: [round(float(t), 1) for t in times[at_level.loc[times.index, "label"] == label] if t == t]
                    for label in labels}
    parameters = manifest.parameters
    limit_mib = (parameters.get("placement") or {}).get("memory_limit_mib")
    # The measured window as planned: a trial's duration_s also counts the loadgen's wait for requests in flight.
    window_s = float((parameters.get("durations") or {}).get("duration_s")
                     or (at_level["duration_s"].median() if len(at_level) else float("nan")))
    peak = at_level[at_level["status"] == "ok"].groupby("label")["memory_peak_mib"].max().to_dict()
    trial_counts = at_level["label"].value_counts().to_dict()
    measured = {"oom_kills": {label: int(kills.get(label, 0)) for label in labels},
                "trials": {label: int(trial_counts.get(label, 0)) for label in labels},
                "memory_peak_mib": peak, "memory_limit_mib": limit_mib, "window_s": window_s}
    if any(killed_after.values()):
        measured["seconds_to_oom"] = {label: values for label, values in killed_after.items() if values}

    def kill_text(label: str) -> str:
        seconds = killed_after.get(label) or []
        when = (f", {min(seconds):.0f} to {max(seconds):.0f} s into the window" if len(seconds) > 1
                else f", {seconds[0]:.0f} s into the window" if seconds else "")
        return f"{label} in {kills.get(label, 0)} of {trial_counts.get(label, 0)} trials{when}"

    peaks = ", ".join(f"{label} {value:.0f} MiB" for label, value in peak.items())
    setting = f"at {level:g} req/s offered for {window_s:.0f} s under a {limit_mib} MiB limit"
    if kills.get("go-nethttp") and not kills.get("go-workerpool"):
        return Verdict("S2-oom", HOLDS, f"{setting}, the unbounded server was OOM-killed ({kill_text('go-nethttp')}; "
                       f"the source: second {SOURCE_SECONDS_TO_OOM}), S2's pool never"
                       + (f"; highest peaks of the surviving trials: {peaks}" if peaks else ""),
                       notebook, run_id, context=context, measured=measured)
    killed = [label for label in labels if kills.get(label)]
    if killed:
        why = (f"{setting}, OOM-killed: " + "; ".join(kill_text(label) for label in killed)
               + (f"; highest peaks of the surviving trials: {peaks}" if peaks else ""))
    else:
        why = (f"no OOM kill in any trial {setting}: the highest peaks were {peaks}, "
               f"over windows {window_s / SOURCE_SECONDS_TO_OOM:.1f} times the source's {SOURCE_SECONDS_TO_OOM} s "
               "to its crash")
    why += "; " + oom_differences(at_level, manifest)
    return Verdict("S2-oom", NOT_REPRODUCED, why, notebook, run_id, context=context, measured=measured)


def oom_differences(at_level: pd.DataFrame, manifest: Manifest) -> str:
    """Why S2's crash cannot happen as it did in an HTTP run here: where the backlog waited, and the client's
    timeout. S2 queued its backlog as goroutines inside one process (an in-process generator); here it waits in
    the kernel's listen queue and the client gives up."""
    backlog = accept_backlog(manifest)
    load = manifest.parameter("load")
    timeout = load.get("request_timeout_s")
    ok = at_level[at_level["status"] == "ok"]
    parts = ["S2 drove its two designs in-process, so every request it could not serve became a goroutine holding "
             "memory; here they are HTTP requests"]
    if backlog and "connections_peak" in ok and ok["connections_peak"].notna().any():
        held = int((ok["connections_peak"] >= 0.95 * backlog).sum())
        parts.append(f"in {held} of {len(ok)} windows the connections peaked at the kernel's listen queue "
                     f"({backlog:,}), which held the backlog outside the process, where it costs the server nothing")
    if timeout:
        parts.append(f"the client gave up on a request after {timeout:g} s, so the backlog stopped growing")
    return "; ".join(parts)


def feasibility(trials: pd.DataFrame, notebook: str, run_id: str) -> Verdict:
    """S2-feasibility by arithmetic, with what one core here did: the most it served, and its CPU per request
    where that can be read (trials in which every request was answered: under overload the CPU also goes to
    requests whose client had already given up, so CPU per request sent or served is not the work's cost)."""
    ok = trials[trials["status"] == "ok"]
    served = float(ok["throughput_rps"].max()) if len(ok) else float("nan")
    busy = float((ok["server_cpu_seconds"] / ok["duration_s"]).max()) if len(ok) else float("nan")
    complete = ok[ok["errors_total"].fillna(0) == 0]
    cpu_per_request_s = float((complete["server_cpu_seconds"] / complete["requests"]).median()) if len(complete) \
        else float("nan")
    here = f"Here one core served at most {served:,.0f} req/s"
    if cpu_per_request_s == cpu_per_request_s:
        here += f", at {1000 * cpu_per_request_s:.1f} ms of CPU per request where it answered every request"
    else:
        here += (f" (offered {ok['level'].max():g} req/s, its CPU at most {busy:.0%} busy; every window was "
                 "overloaded, so no trial gives the CPU cost of one request)")
    measured = {"max_served_rps": served, "server_cpu_busy_max": busy}
    if cpu_per_request_s == cpu_per_request_s:
        measured["cpu_ms_per_request"] = 1000 * cpu_per_request_s
    return feasibility_verdict(here, measured, notebook, run_id)


def feasibility_verdict(here: str, measured: dict, notebook: str, run_id: str, context: str | None = None) -> Verdict:
    """S2-feasibility: S2's own numbers, which make its claim impossible, and `here`, what one core here did."""
    return Verdict(
        "S2-feasibility", IMPOSSIBLE,
        f"{SOURCE_OFFERED_RPS:,} req/s x {SOURCE_CPU_S * 1e3:g} ms of CPU = {SOURCE_OFFERED_RPS * SOURCE_CPU_S:g} "
        f"CPU-seconds of work per second, but {SOURCE_CORES} cores give {SOURCE_CORES} CPU-seconds per second: "
        f"at most {SOURCE_CORES / SOURCE_CPU_S:,.0f} req/s. {here}", notebook, run_id, context=context,
        measured=measured)


def window_gc_events(gc_events: pd.DataFrame, trials: pd.DataFrame, level) -> pd.DataFrame:
    """The GC events inside the measured windows of the trials at offered `level`, with each trial's label."""
    if gc_events.empty:
        return gc_events
    window_gc = gc_events[gc_events["in_window"] == True]  # noqa: E712  (a nullable column)
    events = window_gc.merge(trials[["trial", "label", "level"]], on="trial")
    return events[events["level"] == level]
