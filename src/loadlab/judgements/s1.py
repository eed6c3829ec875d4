"""S1 (notebook 01): resource cost of goroutines, Java threads and Tokio under many connections.

The claims were made at 100,000 concurrent short-lived requests on a 4-core
machine with each server pinned to one core; this machine's runs are much
smaller (each verdict's context says how), so every numeric claim is judged
as a ratio against Go, in one family of `FAMILY.size` ratio verdicts.
"""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import pandas as pd

from loadlab import metrics, profiles, stats, units
from loadlab.claims import Claim
from loadlab.judgements import evidence as evidence_policy
from loadlab.judgements import margins as noise_margins
from loadlab.judgements import open_loop as open_loop_judging
from loadlab.judgements._common import cpu_pct_of_allowance, judge_claimed_ratio
from loadlab.judgements._common import connection_mode_text, quota_text, setup_text
from loadlab.judgements.rule import CONTRADICTED, HOLDS, INCONCLUSIVE, NOT_TESTABLE, RULED_OUT, Family, judge_value
from loadlab.judgements.verdicts import Verdict
from loadlab.manifest import Manifest

# rss, cpu-user, p99 and threads for two pairs, and the context-switch ratio.
FAMILY = Family("S1", 9)
PAIRS = (("go", "java-platform"), ("go", "rust"))


# A trial is evidence for a per-connection quantity only when its server held at least this share of the
# connections asked: below it, the level was not reached (the rest waited in the listen queue or failed to
# connect), and the trial measured another level than the one the verdict names.
LEVEL_REACHED_SHARE = 0.95
LEVEL_NOT_HELD = f"level not held (under {LEVEL_REACHED_SHARE:.0%} of the connections asked)"


def connections_held(trials: pd.DataFrame, low_level) -> pd.Series:
    """Connections each trial's server held, as the kernel counted them.

    Where the run counted them through the window, once a second: the
    connections the server had accepted and not yet closed
    (`connections_held_median`: established less those still in its accept
    queue, which cost it nothing yet), or, in runs that did not read the
    queue, every established one (`connections_established_median`). Either
    is the level held under short-lived connections as under keep-alive.
    Otherwise the TCP connections it accepted in the window
    (`connections_accepted`, passive opens) less the harness's own few (the
    low level's median excess over the connections asked), which counts held
    connections under keep-alive only. The level asked where a run counted
    none.
    """
    level = trials["level"].astype(float)
    for column in ("connections_held_median", "connections_established_median"):
        if column in trials and trials[column].notna().any():
            return pd.to_numeric(trials[column], errors="coerce").fillna(level).clip(upper=level)
    if "connections_accepted" not in trials or trials["connections_accepted"].isna().all():
        return level
    accepted = pd.to_numeric(trials["connections_accepted"], errors="coerce")
    low = trials["level"] == low_level
    harness = float((accepted[low] - trials.loc[low, "level"]).median()) if low.any() else 0.0
    held = accepted - (harness if np.isfinite(harness) and harness > 0 else 0.0)
    # A server that closes connections is reconnected to (passive opens then exceed the level); no more than the
    # level asked is ever held at once.
    return held.fillna(level).clip(upper=level)


def held_at_level(trials: pd.DataFrame, low_level) -> pd.Series:
    """Per trial, the median of `connections_held` over its server's trials at its level (connections): where a
    figure places a server's trials, so that a server that held 1,200 of 10,000 connections asked is drawn at
    1,200, not at 10,000."""
    held = trials.assign(_held=connections_held(trials, low_level))
    return held.groupby(["label", "level"])["_held"].transform("median").rename("connections_held_at_level")


def held_memory_finding(trials: pd.DataFrame, metric: str, low_level) -> str:
    """A figure's finding: at the top level asked, each server's median `metric` (MiB) and the connections it held
    (`connections_held`, evidence trials only), largest memory first."""
    top = evidence_policy.evidence_trials(trials[trials["level"] == trials["level"].max()])
    if top.empty or metric not in top:
        return ""
    medians = top.assign(_held=connections_held(top, low_level)).groupby("label")[[metric, "_held"]].median()
    medians = medians.dropna().sort_values(metric, ascending=False)
    return (f"At {trials['level'].max():,} connections asked: " + "; ".join(
        f"{label} used {row[metric]:,.0f} MiB holding {row['_held']:,.0f}" for label, row in medians.iterrows()) + ".")


def level_shortfall(trials: pd.DataFrame, low_level) -> pd.Series:
    """Per trial: why it is no evidence for a per-connection quantity ("java-platform held 4,881 of 10,000
    connections"), or None where its server held at least LEVEL_REACHED_SHARE of the level.

    Under keep-alive a server that reached its level holds every connection
    for the whole window. Under a connection per request it holds only those
    whose request is in its hands, and the client
    the rest, between a close and the next handshake: a fast server holds
    few, a slow one many. There the share held is the server's speed,
    not a level missed, so no trial is excluded for it; per-connection
    quantities still divide by the connections it held (`per_connection`).
    """
    held = connections_held(trials, low_level)
    per_request = (trials["connection_mode"] == "per-request" if "connection_mode" in trials
                   else pd.Series(False, index=trials.index))
    reasons = [evidence_policy.with_detail(LEVEL_NOT_HELD, f"{label} held {value:,.0f} of {level:,}")
               if value < LEVEL_REACHED_SHARE * level and not short else None
               for label, level, value, short in zip(trials["label"], trials["level"], held, per_request)]
    return pd.Series(reasons, index=trials.index, dtype=object)


def per_connection(trials: pd.DataFrame, metric: str, low_level, high_level) -> pd.Series:
    """Each top-level trial's `metric` above its server's low-level median, per connection it held beyond those
    held at the low level (`connections_held`: counted, not assumed).

    The low level's median comes from its evidence trials only; its own
    uncertainty is left out (memory at few connections varies by well under
    1% between trials here, against tens of per cent at the top).
    """
    held = connections_held(trials, low_level)
    low_rows = trials["level"] == low_level
    low = evidence_policy.evidence_rows(trials[low_rows].assign(held=held[low_rows]))
    baseline = low.groupby("label")[metric].median()
    baseline_held = low.groupby("label")["held"].median()
    span = held - trials["label"].map(baseline_held)
    per = (trials[metric] - trials["label"].map(baseline)) / span.where(span > 0)
    return per.where(trials["level"] == high_level)


def with_level_shortfall(trials: pd.DataFrame, low_level) -> pd.DataFrame:
    """`trials` with the evidence policy's shortfall column set: trials that did not reach their level are no
    evidence for the per-connection verdicts judged on this copy (judgements.evidence.SHORTFALL_COLUMN)."""
    return trials.assign(**{evidence_policy.SHORTFALL_COLUMN: level_shortfall(trials, low_level)})


def threads_per_connection_text(trials: pd.DataFrame, labels, low_level, high_level) -> str:
    """"OS threads per extra connection from 10 to 10,000: go 0, java-platform 0.07": S1's 100,017 threads at
    100,000 connections is one a connection, a slope one level alone cannot show (medians of evidence trials)."""
    if low_level >= high_level:
        return ""
    per = per_connection(trials, "tasks_peak", low_level, high_level)
    slopes = _top_level_medians(with_level_shortfall(trials, low_level).assign(threads_per_connection=per),
                                high_level, ["threads_per_connection"])["threads_per_connection"]
    parts = [f"{label} {slopes[label]:.2g}" for label in labels if label in slopes and np.isfinite(slopes[label])]
    if not parts:
        return ""
    return (f"OS threads per extra connection from {low_level:,} to {high_level:,} connections (median): "
            + ", ".join(parts) + "; the claim's 100,017 threads at 100,000 connections is one a connection")


def latency_p99(open_loop: pd.DataFrame, claim: Claim, labels: tuple[str, str], notebook: str, run_id: str,
                manifest: Manifest) -> Verdict:
    """S1-p99 on an open-loop run at fractions of a closed-loop capacity: the trials' p99 at the highest fraction
    below both servers' knees (`open_loop.latency_fraction`), against the noise margin of that load itself (the
    two servers' own trials there: `margins.margins_from_replicates`), not the closed-loop A/A's."""
    fraction, judged = open_loop_judging.judged_at(open_loop, labels, manifest, FAMILY)
    margins = noise_margins.margins_from_replicates(open_loop, labels, fraction, ["latency_p99_s"], run_id,
                                                    "open loop, a connection per request")
    load = manifest.parameter("load")
    duration = manifest.parameter("durations").get("duration_s", "?")
    context = (f"{judged}, on {load.get('route', '?')}{connection_mode_text(load)}, {duration} s windows"
               f"{quota_text(manifest)}{open_loop_judging.throttled_text(open_loop, labels, fraction)}; "
               "each trial's p99 from all its requests (HdrHistogram), never averaged; the source: closed-loop wrk "
               "at 100,000 connections")
    return judge_claimed_ratio(claim, open_loop, "latency_p99_s", labels, labels, FAMILY, margins, notebook, run_id,
                               fraction, context)


def runtime_overhead(trials: pd.DataFrame, manifest: Manifest, claims: dict[str, Claim], margins: dict[str, float],
                     notebook: str, run_id: str, open_loop: tuple[pd.DataFrame, dict, str] | None = None) -> list[Verdict]:
    """S1-rss, S1-cpu-user, S1-p99 and S1-threads for java-platform/go and rust/go at the run's top level.

    S1-rss is judged on the quantity S1 names, process RSS, at the top level
    (10,000 connections asked here, 100,000 in S1, said in its record). The
    memory per extra connection held between the lowest and the top level is
    written beside it, not judged: under a connection per request a server
    holds only the requests in its hands, so the count it divides by is the
    server's speed that day. In two sittings of one commit, three hours
    apart, java-platform's median held count went from 2,620 to 101 of
    10,000 (rust's 3,486 to 499), so java-platform/go's quotient went from
    x0.96 to x22 while each server's RSS moved under 15% (x6.5 and x7.1).
    S1-p99 is judged only on an open-loop run (`open_loop`: its trials,
    manifest and run id; see `latency_p99`).
    """
    level = trials["level"].max()
    context = (f"{setup_text(manifest, level)}; the source: 100,000 short-lived requests with a 200-byte answer, "
               "wrk -t4 -c100000, 4 cores")
    data = metrics.with_derived(with_memory_columns(trials))  # server_cpu_pct
    low_level = trials["level"].min()
    memory_metric, memory_name = memory_quantity(data)
    # Under keep-alive a trial whose server did not hold its level is no evidence of memory at that level.
    memory_data = with_level_shortfall(data, low_level) if low_level < level else data
    has_user_cpu = "server_cpu_user_seconds" in data.columns and data["server_cpu_user_seconds"].notna().any()
    if has_user_cpu:
        # Of what each server was given: a server capped by a quota is judged on its share of the quota.
        data = data.assign(server_cpu_user_pct_of_allowance=cpu_pct_of_allowance(data, manifest, "server_cpu_user_seconds"))
    verdicts = []
    for baseline, candidate in PAIRS:
        labels, keys = (baseline, candidate), (baseline, candidate)
        verdicts.append(unheld_level(judge_claimed_ratio(
            claims["S1-rss"], memory_data, memory_metric, labels, keys, FAMILY, margins, notebook, run_id, level, context,
            extra=rss_text(memory_data, manifest, memory_name, labels, low_level, level))))
        if has_user_cpu:
            verdicts.append(weigh_absolutes(judge_claimed_ratio(
                claims["S1-cpu-user"], data, "server_cpu_user_pct_of_allowance", labels, keys, FAMILY, margins,
                notebook, run_id, level, context, extra="user-mode CPU as a share of the CPU each server was given"),
                data, claims["S1-cpu-user"], "server_cpu_user_pct_of_allowance", level, "%"))
        else:
            verdicts.append(Verdict(
                "S1-cpu-user", INCONCLUSIVE,
                "the claim names user-mode CPU; this run recorded total CPU (user + system) only, and a server "
                "busy in the kernel's network stack spends much of its time in system mode, so total CPU cannot "
                "stand in for it", notebook, run_id, baseline=baseline, candidate=candidate, family=FAMILY.name,
                family_size=FAMILY.size, context=context))
        if open_loop is not None and {baseline, candidate} <= set(open_loop[0]["label"]):
            open_trials, open_manifest, open_run_id = open_loop
            verdicts.append(latency_p99(open_trials, claims["S1-p99"], labels, notebook, open_run_id, open_manifest))
        else:
            absent = sorted({baseline, candidate} - set(open_loop[0]["label"])) if open_loop is not None else []
            why = (f"no open-loop trials of {', '.join(absent)}: it had no measured capacity (no evidence trial at the "
                   "top level of the closed loop), so no rate could be offered" if absent else "no open-loop run")
            verdicts.append(Verdict(
                "S1-p99", INCONCLUSIVE,
                why + "; a closed loop's p99 hides stalls (coordinated omission) and, near saturation, measures the "
                "loadgen's own queue, so a latency claim is judged only from an open-loop run below each server's "
                "capacity", notebook, run_id, baseline=baseline, candidate=candidate,
                family=FAMILY.name, family_size=FAMILY.size, context=context))
        threads = judge_claimed_ratio(claims["S1-threads"], data, "tasks_peak", labels, keys, FAMILY, margins,
                                      notebook, run_id, level, context,
                                      extra=threads_per_connection_text(data, labels, low_level, level))
        verdicts.append(label_configured_threads(threads, labels))
    return verdicts


def memory_quantity(trials: pd.DataFrame) -> tuple[str, str]:
    """(column, what it is) of the memory S1-rss is judged on: process RSS, S1's quantity, where the run recorded
    it (VmRSS summed over the server's processes, mean over the window as S1 averaged seconds 15-25); the
    cgroup's peak memory in use in runs before it was recorded."""
    if "process_rss_mean_bytes" in trials and trials["process_rss_mean_bytes"].notna().any():
        return "process_rss_mib", "process RSS (VmRSS summed over the server's processes, mean over the window)"
    return "memory_peak_mib", "peak cgroup memory in use (this run did not record process RSS, S1's quantity)"


def with_memory_columns(trials: pd.DataFrame) -> pd.DataFrame:
    """`trials` with S1's memory figures in MiB: `process_rss_mib` (mean VmRSS over the window), `rss_shared_mib`
    (its RssShmem part), `cgroup_memory_mib` (the cgroup's mean memory in use) and `memory_peak_mib`; NaN where a
    run did not record one."""
    data = metrics.with_derived(trials)
    unrecorded = {name: np.nan for name in ("process_rss_mib", "rss_shared_mib", "cgroup_memory_mib", "memory_peak_mib")
                  if name not in data}
    return data.assign(**unrecorded) if unrecorded else data


def per_connection_columns(trials: pd.DataFrame, low_level, high_level) -> pd.DataFrame:
    """`trials` (`with_memory_columns`) with the connections each held (`connections_held`) and, at `high_level`,
    process RSS and cgroup memory per extra connection held (`rss_per_connection_kib`,
    `cgroup_per_connection_kib`; `per_connection`). Which trials count is the caller's choice."""
    data = with_memory_columns(trials)
    return data.assign(held=connections_held(data, low_level),
                       rss_per_connection_kib=1024 * per_connection(data, "process_rss_mib", low_level, high_level),
                       cgroup_per_connection_kib=1024 * per_connection(data, "cgroup_memory_mib", low_level, high_level))


def rss_text(trials: pd.DataFrame, manifest: Manifest, memory_name: str, labels, low_level, high_level) -> str:
    """What S1-rss's record says it judged: the memory figure at the top level against S1's 100,000 connections,
    then, with a lower level, the connections held, memory per extra connection held (shown, not judged) and the
    cgroup's figure beside it."""
    text = f"{memory_name} at {high_level:,} connections asked (S1: 100,000)"
    if low_level >= high_level:
        return text
    return (text + "; " + held_rule_text(manifest) + held_text(trials, labels, low_level, high_level)
            + per_connection_beside_text(trials, labels, low_level, high_level)
            + memory_beside_text(trials, labels, low_level, high_level))


def per_connection_beside_text(trials: pd.DataFrame, labels, low_level, high_level) -> str:
    """"; beside it, process RSS per extra connection held from 10 to 10,000: go 127 KiB, java-platform 3,086 KiB
    (medians of evidence trials; not judged: ...)". Under a connection per request the connections a server holds
    are its speed that day, so the quotient is shown, never judged (`runtime_overhead`)."""
    top = _top_level_medians(per_connection_columns(trials, low_level, high_level), high_level,
                             ["rss_per_connection_kib"])["rss_per_connection_kib"]
    parts = [f"{label} {top[label]:,.1f} KiB" for label in labels if label in top and np.isfinite(top[label])]
    if not parts:
        return ""
    return (f"; beside it, process RSS per extra connection held from {low_level:,} to {high_level:,} (medians): "
            + ", ".join(parts) + " (not judged: it divides by the connections a server happened to hold, which under "
            "a connection per request is its speed that day)")


def _top_level_medians(trials: pd.DataFrame, high_level, columns: list[str]) -> pd.DataFrame:
    """Per label, the median of each of `columns` over the evidence trials at `high_level` (one pass of the evidence
    policy for all of them)."""
    evidence = evidence_policy.evidence_rows(trials)
    return evidence[evidence["level"] == high_level].groupby("label")[columns].median()


def held_rule_text(manifest: Manifest) -> str:
    """Which trials the connections they held exclude, as `level_shortfall` decides it for the run's load."""
    load = manifest.parameter("load")
    if load.get("connection_mode") == "per-request":
        return ("under a connection per request a server holds only the connections whose request is in its hands, "
                "so no trial is excluded for the share it held")
    return f"a trial whose server held under {LEVEL_REACHED_SHARE:.0%} of its level is no evidence"


def held_text(trials: pd.DataFrame, labels, low_level, high_level) -> str:
    """"; connections held at 10,000 asked (the kernel's count, median): go 6,405, java-platform 4,334"
    (`connections_held`)."""
    held = trials.assign(held=connections_held(trials, low_level))
    top = held[(held["level"] == high_level) & (held["status"] == "ok")].groupby("label")["held"].median()
    parts = [f"{label} {top[label]:,.0f}" for label in labels if label in top and np.isfinite(top[label])]
    return f"; connections held at {high_level:,} asked (the kernel's count, median): " + ", ".join(parts) if parts else ""


def memory_beside_text(trials: pd.DataFrame, labels, low_level, high_level) -> str:
    """"; the cgroup's memory in use per extra connection beside it: go 31 KiB, java-platform 22 KiB; RSS's
    shared-memory part at 10,000: java-platform 1,020 MiB": the other figure, and the part of RSS that is one page
    counted once per mapping (ZGC maps its heap three times in JDK 21), medians of evidence trials."""
    if "memory_mean_bytes" not in trials or "process_rss_shmem_mean_bytes" not in trials:
        return ""
    medians = _top_level_medians(per_connection_columns(trials, low_level, high_level), high_level,
                                 ["cgroup_per_connection_kib", "process_rss_shmem_mean_bytes"])
    cgroup = medians["cgroup_per_connection_kib"]
    shmem = units.bytes_to_mib(medians["process_rss_shmem_mean_bytes"])
    parts = [f"{label} {cgroup[label]:,.1f} KiB" for label in labels if label in cgroup and np.isfinite(cgroup[label])]
    shared = [f"{label} {shmem[label]:,.0f} MiB" for label in labels if label in shmem and np.isfinite(shmem[label])]
    text = "; the cgroup's memory in use per extra connection beside it: " + ", ".join(parts) if parts else ""
    if shared:
        text += (f"; RSS's shared-memory part (RssShmem) at {high_level:,} connections: " + ", ".join(shared) +
                 " (a page mapped several times, as ZGC maps its heap, counts once per mapping in RSS)")
    return text


# Servers whose thread count is set by configuration, not by the load: one P (GOMAXPROCS=1 on one core) and
# one Tokio worker thread, each beside a runtime's few service threads. Their thread counts say what was set.
CONFIGURED_THREADS = {
    "go": "one P on its one pinned core (GOMAXPROCS defaults to the cpuset's 1 CPU; Go adds a few service threads)",
    "rust": "one Tokio worker thread (WORKER_THREADS defaults to the cpuset's 1 CPU) beside the main thread",
}


def label_configured_threads(verdict: Verdict, labels) -> Verdict:
    """S1-threads between two servers whose thread counts are both configured: the record says the counts follow
    from the settings, not from the load (the word stays the rule's)."""
    if all(label in CONFIGURED_THREADS for label in labels):
        verdict.explanation = ("configured, not measured behaviour: " + "; ".join(
            f"{label}: {CONFIGURED_THREADS[label]}" for label in labels) + "; so the ratio of thread counts follows "
            "from the settings of this machine's one-core placement. " + verdict.explanation)
        verdict.measured = {**verdict.measured, "configured": True}
    return verdict


ABSOLUTE_CONFIDENCE = 0.95


def _interval_text(low: float, high: float) -> str:
    """"[55.5, 61.7]", or "(too few trials for an interval)" where none exists."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "(too few trials for an interval)"
    return f"[{low:.3g}, {high:.3g}]"


def weigh_absolutes(verdict: Verdict, trials: pd.DataFrame, claim: Claim, metric: str, level, unit: str) -> Verdict:
    """A claim that gives absolute figures is weighed on them too, by the same rule (`rule.judge_value`): a side
    whose claimed figure the interval of its trials rules out contradicts the claim, whatever the ratio says; each
    side's figure and interval are recorded.

    The intervals are at ABSOLUTE_CONFIDENCE, not the ratio family's 99.4%: an exact interval of a median needs
    9 trials at 99.4%, and 6 give one at 95% ([min, max], 96.9%), so a claimed figure outside the range of every
    trial is ruled out, and the page says at which level."""
    # S1's labels are its claim's keys (go, java-platform, rust).
    labels = (verdict.baseline, verdict.candidate)
    evidence = evidence_policy.gather(trials, labels, metric, level=level)
    judged = {label: judge_value(evidence.values[label], float(claim.values[label]), ABSOLUTE_CONFIDENCE)
              for label in labels if label in claim.values}
    verdict.measured = {**verdict.measured, "absolute": {
        label: {"claimed": j.claimed, "median": j.median, "ci_low": j.ci_low, "ci_high": j.ci_high, "size": j.size}
        for label, j in judged.items()}}
    text = (f"; absolute figures, each a median with its exact {ABSOLUTE_CONFIDENCE:.0%} interval against the claimed "
            "figure's band (a factor 1.25 either way): ") + ", ".join(
        f"{label} {j.median:.3g}{unit} {_interval_text(j.ci_low, j.ci_high)} against {j.claimed:g}{unit} claimed "
        f"({j.size or 'no interval'})" for label, j in judged.items())
    ruled_out = [label for label, j in judged.items() if j.size == RULED_OUT]
    if ruled_out:
        verdict.explanation = (f"the claimed absolute figures are ruled out for {', '.join(ruled_out)}, so the claim "
                               f"is contradicted whatever its ratio ({verdict.verdict} on the ratio alone); "
                               + verdict.explanation + text)
        verdict.verdict = CONTRADICTED
    else:
        verdict.explanation += text
    return verdict


def unheld_level(verdict: Verdict) -> Verdict:
    """A memory verdict one of whose servers held its level in no trial is "not testable here" with the counts:
    that server cannot hold the level on this machine, a finding for its row, not a measurement at that level."""
    for side, used in ((verdict.baseline, verdict.n_baseline), (verdict.candidate, verdict.n_candidate)):
        held = evidence_policy.details(verdict.excluded, side, LEVEL_NOT_HELD)
        if used == 0 and held:
            verdict.verdict = NOT_TESTABLE
            verdict.explanation = (f"{side} did not hold the level in any trial ({'; '.join(held)}): on this machine "
                                   "it cannot hold so many connections, so its memory at that level cannot be "
                                   "measured; " + verdict.explanation)
            break
    return verdict


def context_switches(switches: pd.DataFrame, claim: Claim, notebook: str, run_id: str) -> Verdict:
    """S1-vthread-switches: kernel context switches of 10,000 short blocking tasks, virtual / platform (JDK 21)."""
    return judge_claimed_ratio(
        claim, switches, "ctxt_switches_delta", ("java-platform", "java-virtual"), ("platform", "virtual"), FAMILY,
        {}, notebook, run_id, context="microbenchmark: 10,000 tasks that each sleep 1 ms, in one JVM per repetition",
        label_column="condition")


# The claim's figures are per b.N iteration of 100,000 goroutines.
SPAWN_TASKS = 100_000
# Allocation per iteration depends on the Go version and the program, not on the CPU: a measured figure
# outside this factor of the claimed one contradicts it. Time per iteration depends on the machine, so it is
# reported beside the claim and not judged.
ALLOCATION_FACTOR = 2.0
# A claimed share of allocated space is matched within this many percentage points of the measured range.
SHARE_TOLERANCE_POINTS = 10.0


def spawn(benchmark: pd.DataFrame, claim: Claim, notebook: str, run_id: str) -> Verdict:
    """S1-spawn on the source's benchmark as written (`loadlab.harness.microbench.spawn_benchmark`)."""
    rows = benchmark[benchmark["tasks"] == SPAWN_TASKS]
    if rows.empty:
        return Verdict("S1-spawn", INCONCLUSIVE, f"no run of the benchmark at {SPAWN_TASKS:,} goroutines", notebook, run_id)
    ms_per_op = rows["ns_per_op"].astype(float) / 1e6
    mb_per_op = rows["bytes_per_op"].astype(float) / 1e6
    allocation = stats.median_ci(mb_per_op.to_numpy(), method="order-statistic") if len(rows) >= 6 else None
    claimed_ms, claimed_mb = float(claim.values["go_spawn_ms"]), float(claim.values["go_spawn_alloc_mb"])
    median_mb = float(mb_per_op.median())
    factor = claimed_mb / median_mb if median_mb > 0 else float("inf")
    versions = ", ".join(sorted(set(map(str, rows["version"])))) if "version" in rows else "?"
    measured = {"ms_per_op": float(ms_per_op.median()), "mb_per_op": median_mb,
                "allocs_per_op": float(rows["allocs_per_op"].astype(float).median()), "runs": int(len(rows))}
    interval = (f" [{allocation.ci_low:.3g}, {allocation.ci_high:.3g}]" if allocation is not None
                and np.isfinite(allocation.ci_low) else "")
    text = (f"the source's benchmark as written ({versions}, {len(rows)} runs of go test's b.N machinery): "
            f"{median_mb:.3g} MB{interval} and {measured['allocs_per_op']:,.0f} heap allocations per iteration, "
            f"{measured['ms_per_op']:.3g} ms per iteration on one core here (claimed {claimed_ms:g} ms on the source's 4 "
            f"cores: time depends on the machine and is not judged). ")
    if factor > ALLOCATION_FACTOR or factor < 1 / ALLOCATION_FACTOR:
        return Verdict(
            "S1-spawn", CONTRADICTED,
            text + f"The claimed {claimed_mb:g} MB per iteration is {factor:.3g}x what was measured: goroutines that "
            "exit at once return their g structs to the scheduler's free lists and are reused by the next "
            "iteration, so a steady iteration allocates about one closure per goroutine, not a g struct",
            notebook, run_id, context="go test -bench equivalent, -benchmem; one fresh process per repetition",
            measured=measured)
    return Verdict("S1-spawn", HOLDS, text + f"within x{ALLOCATION_FACTOR:g} of the claimed {claimed_mb:g} MB",
                   notebook, run_id, measured=measured)


def allocation_shares(profile_gzip_b64: str) -> pd.Series:
    """Per cent of allocated space (alloc_space) by function, flat (the allocating frame), from an allocs profile."""
    stacks = profiles.pprof_stacks(profiles.parse_pprof(base64.b64decode(profile_gzip_b64)), "alloc_space")
    flat = profiles.leaf_counts(stacks)
    return 100.0 * flat / flat.sum()


def spawn_heap(benchmark: pd.DataFrame, claim: Claim, notebook: str, run_id: str) -> Verdict:
    """S1-spawn-heap: the claimed shares of allocated space against each process's real allocs profile."""
    profiles_b64 = [p for p in benchmark.get("allocs_profile_gzip_b64", pd.Series(dtype=object)) if isinstance(p, str)]
    if not profiles_b64:
        return Verdict("S1-spawn-heap", INCONCLUSIVE, "no allocs profile was recorded", notebook, run_id)
    shares = pd.DataFrame([allocation_shares(p) for p in profiles_b64]).fillna(0.0)
    measured = {}
    off = []
    for function, claimed in claim.values.items():
        values = shares[function] if function in shares else pd.Series([0.0] * len(shares))
        low, high, median = float(values.min()), float(values.max()), float(values.median())
        measured[function] = {"median_pct": median, "min_pct": low, "max_pct": high}
        if not (low - SHARE_TOLERANCE_POINTS <= float(claimed) <= high + SHARE_TOLERANCE_POINTS):
            off.append(f"{function} {float(claimed):g}% claimed, {median:.1f}% measured")
    top = shares.median().sort_values(ascending=False).head(3)
    measured["top_functions_pct"] = {name: float(value) for name, value in top.items()}
    top_text = ", ".join(f"{name} {value:.1f}%" for name, value in top.items())
    if off:
        return Verdict(
            "S1-spawn-heap", CONTRADICTED,
            f"in {len(shares)} allocs profiles of the benchmark as written: " + "; ".join(off) +
            f". The largest shares of allocated space (flat): {top_text}. runtime.goready allocates nothing, so it "
            "cannot hold a share of allocated space", notebook, run_id, measured=measured)
    return Verdict("S1-spawn-heap", HOLDS, f"every claimed share within ±{SHARE_TOLERANCE_POINTS:g} points of the "
                   f"measured range ({top_text})", notebook, run_id, measured=measured)


def numa(notebook: str, run_id: str, node_dir: Path = Path("/sys/devices/system/node")) -> Verdict:
    """S1-numa: needs two NUMA nodes; says how many this machine has."""
    nodes = len(sorted(node_dir.glob("node[0-9]*"))) or 1
    return Verdict(
        "S1-numa", NOT_TESTABLE if nodes < 2 else INCONCLUSIVE,
        f"this machine has {nodes} NUMA node(s); the claim needs two sockets. Also, no Go release notes describe a "
        "'per-P scheduler' change in Go 1.22 (Go's scheduler has had per-P run queues since Go 1.1, 2013)",
        notebook, run_id, measured={"numa_nodes": nodes})



def per_connection_at_top_level(trials: pd.DataFrame) -> pd.DataFrame:
    """`per_connection_columns` of the evidence trials at the run's highest level, from its lowest; empty with fewer
    than two levels (nothing to divide by)."""
    levels = sorted(trials["level"].unique())
    if len(levels) < 2:
        return pd.DataFrame()
    per = per_connection_columns(evidence_policy.evidence_trials(trials), levels[0], levels[-1])
    return per[per["level"] == levels[-1]]
