"""S1 (notebook 01): resource cost of goroutines, Java threads and Tokio under many connections.

The claims were made at 100,000 concurrent short-lived requests on a 4-core
machine with each server pinned to one core; this machine's runs are much
smaller (each verdict's context says how), so every numeric claim is judged
as a ratio against Go, in one family of `FAMILY.size` ratio verdicts.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from loadlab.claims import Claim, Verdict
from loadlab.judgements import evidence as evidence_policy
from loadlab.judgements._common import MIB, cpu_pct, judge_claimed_ratio, setup_text
from loadlab.judgements.rule import INCONCLUSIVE, NOT_TESTABLE, Family

# rss, cpu-user, p99 and threads for two pairs, and the context-switch ratio.
FAMILY = Family("S1", 9)
PAIRS = (("go", "java-platform"), ("go", "rust"))


def per_connection(trials: pd.DataFrame, metric: str, low_level, high_level) -> pd.Series:
    """Each top-level trial's `metric` above its server's low-level median, per extra connection.

    The low level's median comes from its evidence trials only; its own
    uncertainty is left out (memory at few connections varies by well under
    1% between trials here, against tens of per cent at the top).
    """
    low = evidence_policy.evidence_rows(trials[trials["level"] == low_level])
    baseline = low.groupby("label")[metric].median()
    span = float(high_level - low_level)
    per = (trials[metric] - trials["label"].map(baseline)) / span
    return per.where(trials["level"] == high_level)


def runtime_overhead(trials: pd.DataFrame, manifest: dict, claims: dict[str, Claim], margins: dict[str, float],
                     notebook: str, run_id: str) -> list[Verdict]:
    """S1-rss, S1-cpu-user, S1-p99 and S1-threads for java-platform/go and rust/go at the run's top level.

    With two or more connection levels, S1-rss is judged on memory per extra
    connection between the lowest and the highest level: the claim's 2,100 MB
    at 100,000 connections is a per-connection cost, which one level far
    below it cannot show.
    """
    level = trials["level"].max()
    context = f"{setup_text(manifest, level)}; the source: 100,000 short-lived requests, wrk -t4 -c100000, 4 cores"
    data = trials.assign(memory_peak_mib=trials["memory_peak_bytes"] / MIB, server_cpu_pct=cpu_pct(trials))
    low_level = trials["level"].min()
    memory_metric = "memory_peak_mib"
    if low_level < level:
        data = data.assign(memory_kib_per_connection=1024 * per_connection(data, "memory_peak_mib", low_level, level))
        memory_metric = "memory_kib_per_connection"
    has_user_cpu = "server_cpu_user_seconds" in data.columns and data["server_cpu_user_seconds"].notna().any()
    if has_user_cpu:
        data = data.assign(server_cpu_user_pct=cpu_pct(data, "server_cpu_user_seconds"))
    open_loop = (manifest.get("parameters") or {}).get("load", {}).get("mode") == "open"
    verdicts = []
    for baseline, candidate in PAIRS:
        labels, keys = (baseline, candidate), (baseline, candidate)
        verdicts.append(judge_claimed_ratio(
            claims["S1-rss"], data, memory_metric, labels, keys, FAMILY, margins, notebook, run_id, level, context,
            extra=(f"memory per extra connection between {low_level} and {level} connections" if memory_metric != "memory_peak_mib"
                   else "peak memory at one level")))
        if has_user_cpu:
            verdicts.append(judge_claimed_ratio(claims["S1-cpu-user"], data, "server_cpu_user_pct", labels, keys,
                                                FAMILY, margins, notebook, run_id, level, context))
        else:
            verdicts.append(Verdict(
                "S1-cpu-user", INCONCLUSIVE,
                "the claim names user-mode CPU; this run recorded total CPU (user + system) only, and a server "
                "busy in the kernel's network stack spends much of its time in system mode, so total CPU cannot "
                "stand in for it", notebook, run_id, baseline=baseline, candidate=candidate, family=FAMILY.name,
                family_size=FAMILY.size, context=context))
        if open_loop:
            verdicts.append(judge_claimed_ratio(claims["S1-p99"], data, "latency_p99_s", labels, keys, FAMILY,
                                                margins, notebook, run_id, level, context))
        else:
            verdicts.append(Verdict(
                "S1-p99", INCONCLUSIVE,
                "this run is closed loop (wrk): its p99 hides stalls (coordinated omission) and, near saturation, "
                "measures the loadgen's own queue; a latency claim is judged only from an open-loop run below each "
                "server's capacity", notebook, run_id, baseline=baseline, candidate=candidate, family=FAMILY.name,
                family_size=FAMILY.size, context=context))
        verdicts.append(judge_claimed_ratio(claims["S1-threads"], data, "tasks_peak", labels, keys, FAMILY, margins,
                                            notebook, run_id, level, context))
    return verdicts


def context_switches(switches: pd.DataFrame, claim: Claim, notebook: str, run_id: str) -> Verdict:
    """S1-vthread-switches: kernel context switches of 10,000 short blocking tasks, virtual / platform (JDK 21)."""
    return judge_claimed_ratio(
        claim, switches, "ctxt_switches_delta", ("java-platform", "java-virtual"), ("platform", "virtual"), FAMILY,
        {}, notebook, run_id, context="microbenchmark: 10,000 tasks that each sleep 1 ms, in one JVM per repetition",
        label_column="condition")


def spawn(spawn_runs: pd.DataFrame, claim: Claim, notebook: str, run_id: str) -> Verdict:
    """S1-spawn, on what the committed microbenchmark measured.

    The source's benchmark starts 100,000 goroutines that run `defer wg.Done()`
    and exit at once, in a `b.N` loop with `-benchmem`; this microbenchmark
    parks 100,000 goroutines in a fresh process. The two measure different
    things (a parked goroutine keeps its 2 KiB stack; one that exits returns
    it to the stack cache), so the numbers are shown and not judged.
    """
    go = spawn_runs[spawn_runs["tasks"] == 100_000]
    measured = {
        "spawn_join_ms": float(1000 * (go["spawn_s"] + go["join_s"]).median()),
        "total_alloc_mb": float(go["total_alloc_delta_bytes"].median() / 1e6) if "total_alloc_delta_bytes" in go else None,
        "stack_per_goroutine_bytes": float(go["stack_inuse_per_task_bytes"].median()),
    }
    return Verdict(
        "S1-spawn", INCONCLUSIVE,
        "not yet replicated as written: this microbenchmark parks 100,000 goroutines in a fresh process "
        f"(spawn + join {measured['spawn_join_ms']:.0f} ms, {measured['stack_per_goroutine_bytes']:.0f} B of stack "
        "each), while the source's go test benchmark lets every goroutine exit at once and reports heap "
        "allocations per b.N iteration (-benchmem), where exited goroutines' stacks come back from the stack cache",
        notebook, run_id, measured=measured)


def numa(notebook: str, run_id: str, node_dir: Path = Path("/sys/devices/system/node")) -> Verdict:
    """S1-numa: needs two NUMA nodes; says how many this machine has."""
    nodes = len(sorted(node_dir.glob("node[0-9]*"))) or 1
    return Verdict(
        "S1-numa", NOT_TESTABLE if nodes < 2 else INCONCLUSIVE,
        f"this machine has {nodes} NUMA node(s); the claim needs two sockets. Also, no Go release notes describe a "
        "'per-P scheduler' change in Go 1.22 (Go's scheduler has had per-P run queues since Go 1.1, 2013)",
        notebook, run_id, measured={"numa_nodes": nodes})

