"""The open dataset's data dictionary: every column's unit and meaning, and how it was measured, in one place.

A column of the trials table that is a metric is described by its entry in
`loadlab.metrics.REGISTRY` (unit and how measured), so the dictionary cannot
drift from what the pages compute. Every other column of every table is
declared here, once: `TABLE_COLUMNS` for a column whose meaning belongs to one
table, `SHARED_COLUMNS` for the identifiers every table carries,
`MICROBENCH_COLUMNS` for the fields the microbenchmark programs print
(microbench-programs/README.md, "Fields"), and `PREFIXED` for families named
by a prefix (a server's knob settings). `describe` returns None for a column
declared nowhere; tests/test_dataset.py fails on one.

Units are written as `loadlab.units` writes them ("s", "B", "req/s", "%",
"MiB"); "1" is a count or a fraction with no unit; None, a column that is not
a quantity (a name, an id, a flag, a time stamp).
"""

from __future__ import annotations

from dataclasses import dataclass

from loadlab import metrics


@dataclass(frozen=True)
class Column:
    """A column's `unit` (None: not a quantity) and `description` (what it is and how it was measured)."""

    unit: str | None
    description: str


def _c(unit: str | None, description: str) -> Column:
    return Column(unit, description)


COUNT = "1"
TABLES = {
    "trials": "One row per trial (a fresh server container, a verify, a discarded warm-up, one measured window) of "
              "every run of trials behind the pages, failed trials included with their reason: the recorded columns "
              "(loadlab.tables) and every metric of loadlab.metrics derived from them. Open-loop trials' HdrHistograms "
              "stay in the raw run folders.",
    "verdicts": "One row per verdict on a claim (reports/verdicts/*.json): the word, the measured and claimed ratios "
                "with the interval, the test, the noise margin and the trials used.",
    "margins": "The A/A noise margin of each metric (reports/noise-floor.json): how far apart two fresh instances of "
               "one server land in the A/A run's sitting (loadlab.judgements.margins).",
    "runs": "One row per run behind the pages: when it ran, on which machine, from which commit, its trials and "
            "failures (each run's manifest.json).",
}
# What each microbenchmark measures, for its table's description (loadlab.microbench_plans says how it is sized).
MICROBENCH_PURPOSE = {
    "01-microbench-spawn": "Go's spawn and join of 10,000 and 100,000 goroutines, a fresh container each (S1-spawn, "
                           "S4-stack).",
    "01-microbench-spawn-exit": "S1-spawn as the source ran it: a go test benchmark of 100,000 goroutines.",
    "01-microbench-switches": "The context switches of 10,000 platform or virtual threads sleeping 1 ms, JDK 21 "
                              "(S1-vthread-switches).",
    "02-microbench-parked-select": "runtime.gopark's calls with 32 and 127 goroutines parked in select{}, counted with "
                                   "uprobes, one row per second (S2-gopark).",
    "02-s2-inprocess": "S2 in one process, no HTTP: 2,000 req/s of 10 ms CPU and 5 ms sleep, to a goroutine per "
                       "request or to 12 workers; one row per line the program printed (S2's claims).",
    "00-isolation-noise": "The A/A noise of one server in Docker against a plain cgroup: fresh instances per mode, "
                          "consecutive windows per instance (00's isolation study).",
    "05-microbench-parked": "10,000 parked platform or virtual threads: what each holds (S5-stack).",
    "05-microbench-sqrt-latch": "S5's 10,000 threads, a square root each and a latch, on JDK 21 and 25, warm "
                                "iterations in several JVMs (S5-time, S5-memory).",
    "05-microbench-sqrt-latch-fresh": "The same program once per fresh JVM (JDK 21), no warm-up: what a first run "
                                      "costs.",
}
MICROBENCH_TABLE = ("One row per record the microbenchmark printed (a repetition, an iteration or a second of it), "
                    "as the program wrote it plus loadlab's per-task columns, for every run of {name} behind the pages "
                    "(data/raw/{name}-<scale>/<run>/results.parquet in the repository).")
SHARED_COLUMNS = {
    "run_id": _c(None, "the run (one execution of an experiment) the row belongs to: data/raw/<experiment>/<run_id>/ "
                       "in the repository holds its raw files"),
    "experiment": _c(None, "the experiment the run executed (experiments/*.yaml or a notebook's plan), scale included"),
    "condition": _c(None, "the condition a row measured: a server (and setting) at a level, or a microbenchmark's "
                          "runtime and thread model"),
    "notebook": _c(None, "the notebook (report page) that judged or used the row"),
}
TRIAL_COLUMNS = {
    "trial": _c(None, "the trial's number in its run (a fresh container, a verify, a discarded warm-up, one window)"),
    "label": _c(None, "the server as the figures name it (servers.RUNTIMES), e.g. go, java-virtual"),
    "level": _c(COUNT, "the condition's load level: connections held (closed loop) or the fraction of capacity / "
                       "the rate offered (open loop)"),
    "block": _c(COUNT, "the randomized block the trial ran in (every condition once per block, order shuffled); "
                       "empty for a spare"),
    "spare": _c(None, "true for a spare trial: run after the blocks, in place of a trial of the same judged "
                      "condition whose loadgen was saturated or fell behind its schedule (harness.spares)"),
    "server": _c(None, "the server folder under servers/ the container was built from"),
    "variant": _c(None, "the server's image variant (e.g. jdk21, jdk25)"),
    "route": _c(None, "the HTTP route the loadgen requested (servers/CONTRACT.md)"),
    "load_mode": _c(None, "closed (wrk, a fixed number of connections) or open (a constant offered rate)"),
    "connection_mode": _c(None, "keep-alive, or per-request (a new connection per request)"),
    "connections": _c(COUNT, "connections the loadgen opened (closed loop) or could use (open loop)"),
    "image_build_hash": _c(None, "hash of the server image's build inputs (Dockerfile and sources)"),
    "duration_s": _c("s", "length of the measured window, as the loadgen timed it"),
    "latency_kind": _c(None, "which latency the percentiles are: closed-loop service time (wrk, stalls hidden) or "
                             "open-loop latency from each request's intended send time"),
    "errors_connect": _c(COUNT, "connect errors the loadgen counted in the window"),
    "errors_read": _c(COUNT, "socket read errors the loadgen counted in the window"),
    "errors_write": _c(COUNT, "socket write errors the loadgen counted in the window"),
    "errors_status": _c(COUNT, "answers with a status other than 2xx/3xx in the window"),
    "errors_timeout": _c(COUNT, "requests the loadgen gave up on (timeout) in the window"),
    "server_cpu_system_seconds": _c("s", "the server cgroup's kernel-mode CPU time over the measured window"),
    "loadgen_cpu_seconds": _c("s", "the loadgen container's CPU time over the measured window"),
    "loadgen_saturated": _c(None, "true when the loadgen's core was at least 95% busy: the trial measured the loadgen"),
    "samples": _c(COUNT, "resource samples (4 Hz) taken in the window"),
    "runtime_version": _c(None, "the runtime's version as the server's /health answered"),
    "status": _c(None, "ok or failed, by the outcome rule (loadlab.outcome) applied when the tables were built"),
    "status_recorded": _c(None, "the status the harness recorded when the trial ended"),
    "failure_reason": _c(None, "why a failed trial failed (crash, oom, stalled, verify, loadgen error, ...)"),
    "failure_detail": _c(None, "the failure's details as recorded (a message, the numbers behind a stall)"),
    "measured_unix_s": _c("s", "when the measured window started, in seconds since 1970-01-01 UTC"),
    "server_started_unix_s": _c("s", "when the server container started, in seconds since 1970-01-01 UTC"),
    "cpu_allowance_cores": _c(COUNT, "CPU cores the server could use: its CPU quota, else its pinned CPUs "
                                     "(tables.cpu_allowance_cores)"),
    "connections_accepted": _c(COUNT, "TCP connections the server's port accepted in the window (kernel count)"),
    "connections_accepted_per_request": _c(COUNT, "connections accepted per request answered (1: a new connection "
                                                  "per request)"),
    "server_cpu_steal_share": _c(COUNT, "share of the server core's time stolen by the hypervisor in the window "
                                        "(/proc/stat steal)"),
    "loadgen_cpu_steal_share": _c(COUNT, "share of the loadgen core's time stolen by the hypervisor in the window"),
    "server_cpu_periods": _c(COUNT, "CFS periods the server's CPU quota ran in, over the window (cpu.stat)"),
    "server_cpu_throttled_period_share": _c(COUNT, "share of those periods in which the quota throttled the server"),
    "server_cpu_throttled_s": _c("s", "time the quota held the server back in the window (cpu.stat throttled)"),
    "rate_offered_rps": _c("req/s", "open loop: the constant request rate offered"),
    "open_loop_generator": _c(None, "open loop: the generator that offered it (openloop or vegeta)"),
    "listen_overflows": _c(COUNT, "connections the kernel dropped in the window because the server's listen queue "
                                  "was full (TcpExt ListenOverflows in its network namespace)"),
    "connections_established_median": _c(COUNT, "TCP connections established on the server's port, median of the "
                                                "socket-diagnostic readings taken once a second while the loadgen ran, "
                                                "a quarter second clear of its start and end (accept queue included)"),
    "connections_established_max": _c(COUNT, "the largest of those readings"),
    "connections_queued_median": _c(COUNT, "connections established but not yet accepted by the server (its accept "
                                           "queue), median of the window's readings"),
    "connections_established_samples": _c(COUNT, "socket-diagnostic readings counted: those taken while the loadgen "
                                                 "ran"),
    "server_sampling": _c(None, "how the server's processes were sampled: from the host, or from a sidecar in the "
                                "server's namespaces (the second host's setup)"),
    "server_sampling_note": _c(None, "why a sampling path gave fewer readings than asked, when it did"),
    "server_sampling_rate_hz": _c("Hz", "resource samples per second actually taken in the window"),
    "process_rss_peak_bytes": _c("B", "the largest process RSS (VmRSS summed over the server's processes) sampled "
                                      "in the window"),
    "rate_sent_rps": _c("req/s", "open loop: requests the generator sent per second of the window"),
    "errors_unsent": _c(COUNT, "open loop: requests due in the window but never sent (no connection free before "
                               "its end)"),
    "loadgen_connections_open_max": _c(COUNT, "open loop: the most connections the generator held open at once"),
    "loadgen_late": _c(COUNT, "open loop: requests that left later than their intended send time (any cause)"),
    "loadgen_late_own": _c(COUNT, "open loop: requests late by the generator's own doing (its loop, not a busy "
                                  "connection): the instrument's fault, not the server's"),
    "loadgen_preconnected": _c(COUNT, "open loop, keep-alive: connections the generator opened and connected before the "
                                      "window's first request was due (as wrk2 does); empty in windows measured before"),
    "loadgen_send_wait_p99_s": _c("s", "open loop: 99th percentile of the wait for a free connection before a send"),
    "loadgen_own_delay_p50_s": _c("s", "open loop: median of how late the generator's loop sent a request"),
    "loadgen_own_delay_p99_s": _c("s", "open loop: 99th percentile of that own delay"),
    "loadgen_own_delay_max_s": _c("s", "open loop: the largest own delay in the window"),
    "loadgen_self_busy_share": _c(COUNT, "open loop: share of its core the generator's thread was busy, as it "
                                         "measured itself (the headroom rule reads it)"),
    "loadgen_behind": _c(None, "open loop: why the generator counts as behind in the window (then loadgen_saturated "
                               "is true): its core 95% busy, or more than 1% of requests late by its own doing, with "
                               "its own delay's mean or p99 at least 5% of the latency's mean or p99; empty when it "
                               "kept up. A verdict leaves such "
                               "a trial out as 'loadgen behind its schedule' when its core was not busy, 'loadgen "
                               "saturated' when it was"),
    "loadgen_cgroup_cpu_utilization": _c(COUNT, "the loadgen container's CPU over the window as a share of its core "
                                                "(cgroup), beside its own busy share"),
    "server_ended_unix_s": _c("s", "when a failed trial's server ended (crash, OOM kill), seconds since 1970-01-01 UTC"),
}
VERDICT_COLUMNS = {
    "claim_id": _c(None, "the claim in data/external/claims.yaml (S<source>-<name>)"),
    "verdict": _c(None, "the word of the rule (loadlab.judgements.rule): holds, holds in direction only, contradicted, "
                        "no difference (within noise), not reproduced, inconclusive, not testable here, impossible as "
                        "stated"),
    "explanation": _c(None, "why, in a sentence, with the numbers the rule used"),
    "baseline": _c(None, "the denominator's side of the ratio (a runtime or setting)"),
    "candidate": _c(None, "the numerator's side of the ratio"),
    "claimed_ratio": _c(COUNT, "the ratio candidate / baseline the source's own numbers imply"),
    "measured_ratio": _c(COUNT, "the Hodges-Lehmann ratio candidate / baseline over the trials used"),
    "ratio_ci_low": _c(COUNT, "lower end of the measured ratio's exact distribution-free interval, at `confidence`"),
    "ratio_ci_high": _c(COUNT, "upper end of that interval"),
    "confidence": _c(COUNT, "the interval's level: 1 - 0.05 / family_size (Bonferroni across the source's claims)"),
    "family": _c(None, "the family of comparisons the correction covers (one per source)"),
    "family_size": _c(COUNT, "comparisons in the family"),
    "p_value": _c(COUNT, "exact two-sided Mann-Whitney p-value, ties handled"),
    "p_family": _c(COUNT, "the p-value corrected for the family (Bonferroni)"),
    "noise_margin": _c(COUNT, "the A/A noise margin m used (a fraction: 0.07 is 7%); empty: none applied"),
    "noise_margin_source": _c(None, "where the margin came from (the A/A run of the same sitting), or why there is none"),
    "tolerance": _c(COUNT, "the band around the claimed ratio within which the claim counts as met (a fraction)"),
    "n_baseline": _c(COUNT, "trials (or repetitions) used on the baseline's side"),
    "n_candidate": _c(COUNT, "trials (or repetitions) used on the candidate's side"),
    "direction": _c(None, "the direction the interval shows: above, below, or neither (spans 1)"),
    "size": _c(None, "how the measured size compares with the claimed one, where the rule says"),
    "rule_version": _c(COUNT, "the version of the verdict rule the record was judged by"),
    "context": _c(None, "the setup the claim was judged under, in a sentence"),
    "measured_metric": _c(None, "the metric the ratio is of (loadlab.metrics; its unit is that of the medians)"),
    "measured_baseline_median": _c(None, "the baseline's median of measured_metric, in that metric's unit"),
    "measured_candidate_median": _c(None, "the candidate's median of measured_metric, in that metric's unit"),
    "measured_json": _c(None, "everything the verdict recorded as measured, as JSON"),
    "excluded_json": _c(None, "the trials left out and why, as JSON (evidence policy: judgements.evidence)"),
    "trial_ids_json": _c(None, "{side: [trial numbers used]}, as JSON: the trials behind the interval"),
}
MARGIN_COLUMNS = {
    "aa_run_id": _c(None, "the A/A control run (one server as two conditions) the margins come from"),
    "metric": _c(None, "the metric (loadlab.metrics) the margin is for"),
    "margin": _c(COUNT, "the noise margin m = exp(1.96 * sqrt(2) * s) - 1, a fraction: 95% of pairs of fresh "
                        "instances of one server land within a factor 1 + m (judgements.margins)"),
    "instance_spread": _c(COUNT, "s: the between-instance spread on the log scale (Shamos estimator over every pair "
                                 "of A/A trials)"),
}
RUN_COLUMNS = {
    "kind": _c(None, "trials (servers under load, one row per trial in `trials`) or microbenchmark (its own table)"),
    "table": _c(None, "the dataset table holding the run's rows"),
    "notebooks": _c(None, "the report pages that used the run, separated by ';'"),
    "scale": _c(None, "smoke, quick or full: how long and how often the plan measures"),
    "status": _c(None, "the run's status as its manifest recorded it (complete, interrupted, ...)"),
    "created_utc": _c(None, "when the run started (ISO 8601, UTC)"),
    "updated_utc": _c(None, "when its manifest was last written (ISO 8601, UTC)"),
    "git_commit": _c(None, "the loadlab commit that measured the run"),
    "git_dirty": _c(None, "true when that checkout had uncommitted changes"),
    "cpu_model": _c(None, "the measuring machine's CPU model"),
    "cpu_count": _c(COUNT, "CPUs the measuring machine had"),
    "kernel": _c(None, "the measuring machine's Linux kernel release"),
    "docker_version": _c(None, "the Docker engine's version"),
    "trials_planned": _c(COUNT, "trials the run planned (empty for a microbenchmark)"),
    "trials_ok": _c(COUNT, "trials the harness recorded ok"),
    "trials_failed": _c(COUNT, "trials the harness recorded failed"),
    "raw_path": _c(None, "the run's raw folder in the repository (not part of this dataset)"),
}
_CTXT = "the process's context switches over the measured interval"
MICROBENCH_COLUMNS = {
    "repetition": _c(COUNT, "the fresh process (container) the row came from, numbered from 0"),
    "iteration": _c(COUNT, "the measured iteration inside that process"),
    "warmup": _c(None, "true for a warm-up iteration (not measured)"),
    "runtime": _c(None, "go or java"),
    "version": _c(None, "the runtime's version as the program read it (runtime.Version(), Runtime.version())"),
    "model": _c(None, "the thread model: goroutine, platform or virtual"),
    "bench": _c(None, "the program's benchmark (sleepers, sqrt_latch, switches, spawn_exit, s2 ...)"),
    "tasks": _c(COUNT, "tasks (goroutines, threads, requests) the measurement started"),
    "jdk": _c(None, "the JDK of the microbenchmark image the program ran in"),
    "image": _c(None, "the image the program ran in (loadlab/microbench:jdkNN)"),
    "microbench_run_id": _c(None, "the harness's own id for the containers of this measurement"),
    "gomaxprocs": _c(COUNT, "Go's GOMAXPROCS in the process"),
    "available_processors": _c(COUNT, "the JVM's Runtime.availableProcessors()"),
    "max_heap_bytes": _c("B", "the JVM's maximum heap"),
    "gc": _c(None, "the JVM's garbage collectors (MXBean names)"),
    "thread_stack_size_kb": _c("KiB", "-XX:ThreadStackSize: the platform-thread stack reservation"),
    "spawn_s": _c("s", "wall time from the first task's start to the last one's 'running' signal (monotonic clock)"),
    "join_s": _c("s", "wall time from the release until every task finished"),
    "elapsed_s": _c("s", "wall time of the measured interval (monotonic clock; on a shared core it includes other "
                         "processes' turns)"),
    "elapsed_ms": _c("ms", "elapsed_s in milliseconds"),
    "spawn_cpu_s": _c("s", "CPU time (user + system) of every thread of the process during spawn_s (getrusage)"),
    "join_cpu_s": _c("s", "CPU time of every thread of the process during join_s (getrusage)"),
    "cpu_s": _c("s", "CPU time of every thread of the process over the measured interval (getrusage)"),
    "spawn_per_task_s": _c("s", "spawn_s divided by tasks"),
    "minor_faults_delta": _c(COUNT, "minor page faults over the interval (getrusage ru_minflt): first touches of memory"),
    "rss_delta_bytes": _c("B", "VmRSS with the tasks parked (or at the latch's release) minus before"),
    "peak_rss_delta_bytes": _c("B", "the iteration's peak RSS (VmHWM, reset first) minus the RSS before"),
    "vm_size_delta_bytes": _c("B", "VmSize after minus before: address space reserved (thread stacks show here)"),
    "heap_delta_bytes": _c("B", "heap in use after minus before (Go MemStats.HeapAlloc; Java heap used, after a GC)"),
    "stack_inuse_delta_bytes": _c("B", "Go MemStats.StackInuse after minus before"),
    "total_alloc_delta_bytes": _c("B", "Go MemStats.TotalAlloc after minus before: bytes allocated"),
    "sys_delta_bytes": _c("B", "Go MemStats.Sys after minus before: memory obtained from the OS"),
    "gc_cycles_delta": _c(COUNT, "Go GC cycles completed over the interval (MemStats.NumGC)"),
    "rss_per_task_bytes": _c("B", "rss_delta_bytes divided by tasks"),
    "peak_rss_per_task_bytes": _c("B", "peak_rss_delta_bytes divided by tasks"),
    "vm_size_per_task_bytes": _c("B", "vm_size_delta_bytes divided by tasks"),
    "heap_per_task_bytes": _c("B", "heap_delta_bytes divided by tasks"),
    "stack_inuse_per_task_bytes": _c("B", "stack_inuse_delta_bytes divided by tasks"),
    "total_alloc_per_task_bytes": _c("B", "total_alloc_delta_bytes divided by tasks"),
    "sys_per_task_bytes": _c("B", "sys_delta_bytes divided by tasks"),
    "threads_before": _c(COUNT, "OS threads of the process before the tasks started (/proc/self/status Threads)"),
    "threads": _c(COUNT, "OS threads of the process with the tasks running or parked"),
    "threads_delta": _c(COUNT, "threads minus threads_before"),
    "live_platform_threads_before": _c(COUNT, "platform threads alive before the iteration (ThreadMXBean)"),
    "peak_live_platform_threads": _c(COUNT, "the most platform threads alive at once during the iteration"),
    "voluntary_ctxt_switches_delta": _c(COUNT, f"voluntary {_CTXT}, every thread, exited ones too (getrusage): the "
                                               "headline"),
    "nonvoluntary_ctxt_switches_delta": _c(COUNT, f"involuntary {_CTXT}, every thread (getrusage)"),
    "ctxt_switches_delta": _c(COUNT, "voluntary + involuntary context switches (getrusage)"),
    "ctxt_switches_per_task": _c(COUNT, "ctxt_switches_delta divided by tasks"),
    "ctxt_switches_source": _c(None, "where the headline counts came from (getrusage(RUSAGE_SELF))"),
    "ctxt_switches_net_of_background_delta": _c(COUNT, "ctxt_switches_delta minus the idle JVM's over as long "
                                                       "(background_ctxt_switches_delta)"),
    "background_s": _c("s", "how long the idle JVM was counted after the tasks (as long as the measured interval)"),
    "sleep_ms": _c("ms", "how long each task slept (Thread.sleep)"),
    "checksum": _c(COUNT, "the sum of the tasks' square roots, kept so the JIT cannot drop the work"),
    "allocs_per_op": _c(COUNT, "go test -benchmem: allocations per benchmark operation (one spawn and join of all tasks)"),
    "bytes_per_op": _c("B", "go test -benchmem: bytes allocated per operation"),
    "ns_per_op": _c("ns", "go test: wall time per operation"),
    "n": _c(COUNT, "go test: operations the benchmark ran to fill its benchtime"),
    "mem_profile_rate": _c("B", "runtime.MemProfileRate during the benchmark (go test -memprofilerate)"),
    # 00's isolation study (harness.isolation): the same server in Docker or in a plain cgroup, window by window.
    "mode": _c(None, "how the server was isolated: docker (a container) or cgroup (a plain cgroup, no container)"),
    "instance": _c(COUNT, "the fresh server instance (container or process) the window ran against, from 1"),
    "window": _c(COUNT, "the consecutive measured window on that instance, from 1"),
    "window_s": _c("s", "the window's length"),
    "throughput_rps": _c("req/s", "requests completed in the window divided by its length (wrk, closed loop)"),
    "errors_total": _c(COUNT, "wrk's errors in the window (connect, read, write, timeout, non-2xx)"),
    "server_cpu_steal_share": _c(COUNT, "share of the server core's time stolen by the hypervisor in the window"),
    "loadgen_cpu_steal_share": _c(COUNT, "share of the loadgen core's time stolen by the hypervisor in the window"),
}
# Families of the context-switch counts: the same count read another way (microbench-programs/README.md).
for _prefix, _how in (("live_threads_", "summed over /proc/self/task/*/status: live threads only (exited threads' "
                                        "switches are lost)"),
                      ("self_status_", "from /proc/self/status alone: the thread-group leader only"),
                      ("background_", "of the idle JVM over background_s (GC, JIT and timer threads), getrusage"),
                      ("background_live_threads_", "of the idle JVM, live threads only"),
                      ("background_self_status_", "of the idle JVM, the leader thread only")):
    for _kind in ("voluntary_", "nonvoluntary_", ""):
        MICROBENCH_COLUMNS[f"{_prefix}{_kind}ctxt_switches_delta"] = _c(
            COUNT, f"{_kind.rstrip('_') or 'all'} context switches {_how}")
TABLE_COLUMNS = {
    "trials": TRIAL_COLUMNS,
    "verdicts": VERDICT_COLUMNS,
    "margins": MARGIN_COLUMNS,
    "runs": RUN_COLUMNS,
    "02-microbench-parked-select": {
        "goroutines": _c(COUNT, "goroutines parked in select{}"),
        "second": _c(COUNT, "the second of perf's clock the count is for"),
        "t_from_spawn_s": _c("s", "end of that second, from the moment every goroutine was started"),
        "phase": _c(None, "spawning, parked or after, by where the second falls"),
        "function": _c(None, "the Go runtime function counted (runtime.gopark, ...) with a uprobe"),
        "calls": _c(COUNT, "calls of that function in the second (perf stat -I over the uprobe)"),
        "interval_s": _c("s", "the second's actual length as perf timed it"),
    },
    "02-s2-inprocess": {
        "design": _c(None, "spawn (a goroutine per request) or pool (workers fed by a bounded channel)"),
        "event": _c(None, "the program's line: calibrated, second (one per second) or done (the totals)"),
        "process": _c(COUNT, "the fresh process the line came from, numbered from 0 in run order"),
        "oom_killed": _c(None, "true when the kernel OOM-killed the process (its lines until then are kept)"),
        "rounds_per_ms": _c(COUNT, "loop rounds per millisecond of CPU on this core (calibrated before the load)"),
        "rounds_per_request": _c(COUNT, "loop rounds each request runs: its CPU work"),
        "second": _c(COUNT, "the second of the run the line is for"),
        "t_s": _c("s", "time of the line from the generator's start"),
        "due": _c(COUNT, "requests due so far on the fixed schedule (open loop)"),
        "started": _c(COUNT, "requests started so far"),
        "completed": _c(COUNT, "requests completed so far"),
        "late": _c(COUNT, "requests that waited for a place in the pool's full channel"),
        "goroutines": _c(COUNT, "goroutines alive (runtime.NumGoroutine)"),
        "rss_bytes": _c("B", "the process's VmRSS"),
        "heap_live_bytes": _c("B", "live heap after the last GC (runtime/metrics)"),
        "heap_objects_bytes": _c("B", "heap occupied by objects (runtime/metrics /gc/heap/objects:bytes)"),
        "gc_cycles": _c(COUNT, "GC cycles completed so far"),
        "gc_pause_total_s": _c("s", "stop-the-world GC pause time so far (runtime/metrics)"),
        "rate_offered_rps": _c("req/s", "the rate the generator offered"),
        "duration_s": _c("s", "the offered window's length"),
        "scheduled": _c(COUNT, "requests the schedule holds over the window"),
        "not_offered": _c(COUNT, "requests never offered: the pool's full channel held the generator past the window"),
        "completed_in_window": _c(COUNT, "requests completed inside the offered window"),
        "throughput_rps": _c("req/s", "completed_in_window divided by duration_s"),
        "rss_peak_bytes": _c("B", "the highest RSS the per-second lines saw"),
        "goroutines_peak": _c(COUNT, "the most goroutines alive at once"),
        "heap_live_peak_bytes": _c("B", "the highest live heap"),
        "workers": _c(COUNT, "pool: worker goroutines"),
        "queue": _c(COUNT, "pool: the channel's places"),
    },
}
# A server's knob as its condition set it: setting_<KNOB> (servers/<name>/loadlab.yaml, knobs).
PREFIXED = {"setting_": "the server's {rest} setting for this condition (an environment variable; servers/<name>/"
                        "loadlab.yaml lists the knobs)"}


def microbench_table(name: str) -> bool:
    """Whether the dataset table `name` is a microbenchmark's (named after its experiment, scale dropped)."""
    return name not in TABLES


def table_description(name: str) -> str:
    if name in TABLES:
        return TABLES[name]
    return " ".join(part for part in (MICROBENCH_PURPOSE.get(name), MICROBENCH_TABLE.format(name=name)) if part)


def describe(table: str, column: str) -> Column | None:
    """The column's unit and description in the dataset's table `table`; None where the dictionary has none."""
    own = TABLE_COLUMNS.get(table, {})
    if column in own:
        return own[column]
    if column in SHARED_COLUMNS:
        return SHARED_COLUMNS[column]
    if table == "trials" and column in metrics.REGISTRY:
        entry = metrics.REGISTRY[column]
        how = "derived from recorded columns when the trials are loaded" if entry.derived else "recorded"
        return Column(entry.unit or COUNT, f"{entry.description} ({how}; loadlab.metrics)")
    if microbench_table(table) and column in MICROBENCH_COLUMNS:
        return MICROBENCH_COLUMNS[column]
    for prefix, text in PREFIXED.items():
        if column.startswith(prefix):
            return Column(None, text.format(rest=column[len(prefix):]))
    return None
