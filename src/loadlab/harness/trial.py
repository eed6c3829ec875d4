"""One trial: a fresh server container, verify, warm-up, one measured window.

    start -> healthy -> verify -> warm up (discarded) -> measure (+ sampler) -> collect -> remove

The trial's files go to the folder it is given (see rundir.py for how runs
make that atomic). A trial that fails records why in trial.json and keeps the
server's log tail; only programming errors escape as exceptions.
"""

from __future__ import annotations

import dataclasses
import datetime
import gzip
import json
import time
from pathlib import Path

import pandas as pd

from loadlab import hostfacts, outcome, rundir
from loadlab.config import LOADGEN_SATURATION_UTILIZATION, TrialConfig, parse_cpuset
from loadlab.contract import verify
from loadlab.errors import TrialFailure
from loadlab.harness import capture, container, images, priority, sampler, sidecar, tcp_diag
from loadlab.harness import loadgen as loadgen_run
from loadlab.harness.phases import PhaseClock
from loadlab.harness.session import ServerSession
from loadlab.loadgen import openloop, vegeta, wrk
from loadlab.rundir import write_bytes_atomic, write_json_atomic, write_text_atomic
from loadlab.servers import loadgen_image, recorder_settings
from loadlab.stats.latency import percentile_column

# The longest wait between warm-up and window for the server to get through the warm-up's leftover connections
# (tcp_diag.wait_for_leftovers); a trial that has not settled by then starts anyway, and trial.json says so.
SETTLE_MAX_S = 10.0


def _timeseries(samples: dict[str, list[sampler.ResourceSample]]) -> pd.DataFrame:
    server = pd.DataFrame([dataclasses.asdict(s) for s in samples["server"]])
    loadgen = pd.DataFrame([dataclasses.asdict(s) for s in samples["loadgen"]])
    frame = server.rename(columns={"cpu_seconds": "server_cpu_seconds", "tasks": "server_tasks",
                                    "memory_in_use_bytes": "server_memory_in_use_bytes",
                                    "cpu_user_seconds": "server_cpu_user_seconds",
                                    "cpu_system_seconds": "server_cpu_system_seconds",
                                    "process_rss_bytes": "server_process_rss_bytes",
                                    "process_rss_shmem_bytes": "server_process_rss_shmem_bytes"})
    frame["loadgen_cpu_seconds"] = loadgen["cpu_seconds"].reindex(frame.index).to_numpy() if not loadgen.empty else None
    return frame


def summarize_resources(timeseries: pd.DataFrame, window_s: float, loadgen_cpu_count: int) -> dict:
    """CPU seconds, peak/mean memory (the cgroup's, and process RSS), peak tasks and loadgen utilization over the
    window."""
    def sampled(column: str) -> pd.Series:
        """A column's readings, none where this sampler did not record it."""
        return timeseries[column].dropna() if column in timeseries else pd.Series(dtype=float)

    def delta(column: str) -> float | None:
        values = sampled(column)
        return float(values.iloc[-1] - values.iloc[0]) if len(values) >= 2 else None

    memory = sampled("server_memory_in_use_bytes")
    rss, shmem = sampled("server_process_rss_bytes"), sampled("server_process_rss_shmem_bytes")
    tasks = sampled("server_tasks")
    loadgen_cpu_s = delta("loadgen_cpu_seconds")
    utilization = loadgen_cpu_s / window_s / loadgen_cpu_count if loadgen_cpu_s is not None and window_s > 0 else None
    return {
        "server_cpu_seconds": delta("server_cpu_seconds"),
        "server_cpu_user_seconds": delta("server_cpu_user_seconds"),
        "server_cpu_system_seconds": delta("server_cpu_system_seconds"),
        "memory_peak_bytes": int(memory.max()) if len(memory) else None,
        "memory_mean_bytes": float(memory.mean()) if len(memory) else None,
        "process_rss_peak_bytes": int(rss.max()) if len(rss) else None,
        "process_rss_mean_bytes": float(rss.mean()) if len(rss) else None,
        "process_rss_shmem_mean_bytes": float(shmem.mean()) if len(shmem) else None,
        "tasks_peak": int(tasks.max()) if len(tasks) else None,
        "loadgen_cpu_seconds": loadgen_cpu_s,
        "loadgen_cpu_utilization": utilization,
        "loadgen_saturated": bool(utilization is not None and utilization >= LOADGEN_SATURATION_UTILIZATION),
        "samples": int(len(timeseries)),
    }


def _closed_loop_row(report: wrk.WrkReport) -> dict:
    row = {
        "requests": report.requests,
        "duration_s": report.duration_s,
        "throughput_rps": report.requests_per_s,
        "latency_mean_s": report.latency_mean_s,
        "latency_max_s": report.latency_max_s,
        "latency_kind": "closed-loop (coordinated omission: stalls are hidden)",
    }
    for percentile in wrk.SUMMARY_PERCENTILES:
        row[percentile_column(percentile)] = report.latency_percentile_s(percentile)
    row.update({f"errors_{kind}": count for kind, count in report.errors.items()})
    row["errors_total"] = report.error_count
    return row


def _open_loop_row(result, output_dir: Path) -> dict:
    """The window's row from openloop's report, or from vegeta's per-request results."""
    if isinstance(result, openloop.OpenLoopReport):
        return openloop.trial_columns(result)
    return _vegeta_row(result, output_dir)


def _vegeta_row(summary: vegeta.VegetaSummary, output_dir: Path) -> dict:
    # Re-encoded here, after the sampled window: zstd at its highest level is seconds of CPU at thousands of
    # requests a second, and the window's samples must not see it.
    vegeta.keep_as_parquet(output_dir)
    results = vegeta.read_results(output_dir)
    histogram = vegeta.latency_histogram(results["latency_s"].to_numpy())
    counts = vegeta.summarize_results(results)
    row = {
        "requests": summary.requests,
        "duration_s": summary.duration_s,
        "rate_offered_rps": summary.rate_offered_rps,
        "throughput_rps": summary.throughput_rps,
        "latency_mean_s": float(results["latency_s"].mean()) if len(results) else None,
        "latency_max_s": histogram.get_max_value() / 1e6,
        "latency_kind": "open-loop (constant rate)",
        "latency_histogram_hdr": histogram.encode().decode(),
        "open_loop_generator": "vegeta",
    }
    row.update(vegeta.latency_summary_columns(histogram))
    row.update({
        "errors_status": counts["non_2xx_3xx"], "errors_timeout": counts["timeouts"],
        "errors_connect": counts["connect_errors"], "errors_total": counts["requests"] - counts["ok"],
    })
    return row


def _generator_headroom(row: dict) -> dict:
    """openloop judges its own headroom: its busy share (less its polling for due requests, which the cgroup counts
    as work) and whether it kept its schedule. A window it fell behind in is the loadgen's fault, as a saturated
    wrk's is. The cgroup's figure stays beside it."""
    if row.get("open_loop_generator") != openloop.NAME:
        return {}
    busy = row.get("loadgen_self_busy_share")
    return {"loadgen_cgroup_cpu_utilization": row.get("loadgen_cpu_utilization"), "loadgen_cpu_utilization": busy,
            "loadgen_saturated": bool(row.get("loadgen_behind"))}


def _connection_columns(config: TrialConfig, accepted: int | None, requests: int | None) -> dict:
    """How the load used connections: its mode, and the TCP connections the host accepted in the window
    (the server's, plus the few the harness opens) in all and per request sent."""
    per_request = accepted / requests if accepted is not None and requests else None
    return {"connection_mode": config.connection_mode, "connections_accepted": accepted,
            "connections_accepted_per_request": per_request}


def _unix_s(instant: str | None) -> float | None:
    """Seconds since the epoch of the engine's ISO 8601 instant ("2026-11-25T17:50:01.123456789Z"); None if unset."""
    if not instant or instant.startswith("0001-"):  # Docker's zero time: the process has not ended
        return None
    whole, _, fraction = instant.rstrip("Z").partition(".")
    stamp = datetime.datetime.fromisoformat(whole).replace(tzinfo=datetime.UTC)
    return stamp.timestamp() + (float("0." + fraction.split("+")[0]) if fraction else 0.0)


def _warm_up(config: TrialConfig, loadgen: loadgen_run.LoadgenContainer, url: str) -> list[dict]:
    """Run the discarded warm-up; returns the closed loop's one-second slices (empty otherwise)."""
    if config.warmup_s <= 0:
        return []
    if config.load_mode == "closed":
        return loadgen_run.warm_up(
            loadgen, url, config.connections, config.loadgen_threads, config.request_timeout_s, config.pipeline_depth,
            int(config.warmup_s), int(config.warmup_max_s or config.warmup_s),
            connection_per_request=config.connection_per_request,
        )
    loadgen_run.open_loop_warm_up(loadgen, url, config.rate_rps, config.warmup_s, config.request_timeout_s,
                                  config.max_in_flight, connection_per_request=config.connection_per_request,
                                  generator=config.open_loop_generator)
    return []


def _measure(config: TrialConfig, session: ServerSession, loadgen: loadgen_run.LoadgenContainer, url: str,
             profiling: capture.Capture | None, sidecar_name: str, clock: PhaseClock):
    """The measured window with the sampler (and any profilers) running.

    Returns (loadgen result, samples, facts of the window): the TCP
    connections accepted in it and those the server held (established, once
    a second: `tcp_diag.EstablishedCounter`, or the sidecar's count beside a
    server elsewhere; None where neither can be read), the share of the
    server's and loadgen's CPU time stolen by the hypervisor (None off this
    host), how often the server's CPU quota ran out
    (`sampler.throttling_columns`), and where the server was sampled
    (`sidecar.ServerReadings.columns`). `clock` gets the window's set-up,
    its load (the loadgen's exec: the window plus its process's start and
    end) and its tear-down (samplers and counters stopped and read).
    """
    started = time.monotonic()
    readings = sidecar.ServerReadings(config.server_sampling, session.container, int(session.port),
                                      session.container.labels.get(container.RUN_LABEL, ""), sidecar_name,
                                      images.BASE_IMAGE)
    pid = container.host_pid(session.container)
    if profiling is not None:
        profiling.start()
    accepted_before = capture.tcp_passive_opens(pid)
    overflows_before = capture.listen_overflows(pid)
    # CPU steal (a neighbour on the hypervisor taking our vCPUs) is read on this host only.
    cpu_times_before = hostfacts.cpu_times() if config.check_host_cpus else {}
    throttling_before = readings.throttling_source.cpu_throttling()
    readings.start()
    sources = {"loadgen": sampler.source_for(loadgen.handle),
               **({"server": readings.source} if readings.source is not None else {})}
    running = sampler.Sampler(sources)
    try:
        # Entered first, so the sampler's and the counter's threads start under the window's priority.
        with priority.harness_priority(config.harness_priority), running, \
                tcp_diag.EstablishedCounter(int(session.port), pid or None) as held:
            load_began = time.monotonic()
            clock.add("window_set_up", load_began - started)
            try:
                result = _run_load(config, loadgen, url)
            finally:
                load_ended = time.monotonic()
                clock.add("window_load", load_ended - load_began)
    finally:
        readings.finish(running.samples)
    accepted_after = capture.tcp_passive_opens(pid)
    overflows_after = capture.listen_overflows(pid)
    cpu_times_after = hostfacts.cpu_times() if config.check_host_cpus else {}
    throttling = sampler.throttling_columns(throttling_before, readings.throttling_source.cpu_throttling())
    accepted = None if accepted_before is None or accepted_after is None else accepted_after - accepted_before
    overflows = None if overflows_before is None or overflows_after is None else overflows_after - overflows_before
    # Only readings taken while the loadgen ran count (tcp_diag.WINDOW_EDGE_S).
    load_span = (load_began, load_ended)
    held_summary = (held.summary(load_span) if readings.counts is None
                    else tcp_diag.summarize_counts(readings.counts, readings.count_times, load_span))
    window = {"connections_accepted": accepted, "listen_overflows": overflows, **held_summary,
              **_steal_columns(config, cpu_times_before, cpu_times_after), **throttling,
              **readings.columns(running.samples.get("server", []))}
    clock.add("window_tear_down", time.monotonic() - load_ended)
    return result, running.samples, window


def _run_load(config: TrialConfig, loadgen: loadgen_run.LoadgenContainer, url: str):
    """The measured window's load: wrk (closed loop) or the open-loop generator; returns its report."""
    if config.load_mode == "closed":
        return loadgen_run.run_wrk(
            loadgen, "", url, config.connections, int(config.duration_s), config.loadgen_threads,
            config.request_timeout_s, config.pipeline_depth, config.connection_per_request,
        )
    return loadgen_run.run_open_loop(loadgen, config.open_loop_generator, "", url, config.rate_rps,
                                     config.duration_s, config.request_timeout_s, config.max_in_flight,
                                     config.connection_per_request)


def _steal_columns(config: TrialConfig, before: dict, after: dict) -> dict:
    """The share of the server's and the loadgen's CPUs' time that the hypervisor stole during the window."""
    return hostfacts.steal_columns(before, after, {"server": parse_cpuset(config.server_cpus, "server_cpus"),
                                                   "loadgen": parse_cpuset(config.loadgen_cpus, "loadgen_cpus")})


def _raise_if_exited(session: ServerSession) -> None:
    exited = container.describe_exit(session.container)
    if exited is not None:
        raise exited


def _refusing_server(session: ServerSession) -> TrialFailure | None:
    """A `stalled` failure when the server's process runs but its port refuses connections."""
    if not container.refuses_connections(session.host, session.port):
        return None
    return TrialFailure(outcome.STALLED, f"the server process runs but {session.host}:{session.port} refuses connections",
                        container.log_tail(session.container))


def _root_cause(failure: TrialFailure, session: ServerSession) -> TrialFailure:
    """The failure to record for a loadgen failure, asked while the server's container still exists."""
    if not failure.reason.startswith("loadgen") or session.container is None:
        return failure
    return container.describe_exit_within(session.container) or _refusing_server(session) or failure


def _server_log(session: ServerSession | None) -> str:
    """The server's log tail, from its container while it exists, else what it printed before removal."""
    if session is None:
        return ""
    if session.container is not None and not session.last_log_tail:
        return container.log_tail(session.container, lines=5000)
    return session.last_log_tail


def _failure_log(failure: TrialFailure, server_log: str) -> str:
    """failure.log: the reason and detail always, then the logs (or a line saying there were none)."""
    logs = failure.logs or server_log
    return (f"reason: {failure.reason}\ndetail: {failure.detail}\n\n"
            + (logs if logs.strip() else "(the server printed nothing before it failed)\n"))


@dataclasses.dataclass
class _Trial:
    """What one trial has so far: its record (trial.json), its row (result.json), and what must be closed."""

    config: TrialConfig
    trial_dir: Path
    run_id: str
    number: int
    record: dict
    row: dict
    session: ServerSession | None = None
    profiling: capture.Capture | None = None
    measured_at: float | None = None  # when the measured window began, seconds since the epoch
    clock: PhaseClock = dataclasses.field(default_factory=PhaseClock)  # trial.json's phases_s

    @property
    def name(self) -> str:
        return f"loadlab-{self.run_id}-t{self.number}"


def _begin(config: TrialConfig, trial_dir: Path, run_id: str, trial_number: int) -> _Trial:
    """The trial's record and row before anything runs."""
    # Whatever built the config (an experiment, `loadlab trial`), a trial without a recorder's profiler runs
    # without the recorder; the settings the server ran with are what the record keeps.
    config = dataclasses.replace(config, settings=recorder_settings(config.server, config.settings, config.profilers))
    record = {
        "trial": trial_number, "run_id": run_id, "condition": config.label(),
        "config": dataclasses.asdict(config), "started_unix_s": time.time(), "status": "running",
    }
    row = {"trial": trial_number, "run_id": run_id, "server": config.server, "variant": config.variant,
           "route": config.route, "load_mode": config.load_mode, "connections": config.connections,
           "condition": config.label(), **{f"setting_{k}": v for k, v in config.settings.items()}}
    return _Trial(config, Path(trial_dir), run_id, trial_number, record, row)


def _start_server(trial: _Trial, client, loadgen_client, log) -> ServerSession:
    """A healthy server container (and the loadgen's image), its image recorded."""
    config = trial.config
    clock = trial.clock
    if config.check_host_cpus:
        # A previous trial's loadgen may still hold most local ports in TIME-WAIT: this trial's loadgen would
        # then measure its own shortage of ports. Not where the kernel hands those ports back to connect()
        # (hostfacts.time_wait_reuse): there the wait cost the quick reference 5 of its 137 minutes and protected
        # no trial, so the ports are only counted. What was seen is kept in trial.json.
        with clock.phase("local_ports_wait"):
            reuse = hostfacts.time_wait_reuse(config.target_host)
            seen = hostfacts.wait_for_local_ports(0.0 if reuse else container.PORTS_FREE_WAIT_S,
                                                  count=tcp_diag.time_wait_counts)
            trial.record["local_ports"] = seen | {"no_wait": reuse} if reuse else seen
    with clock.phase("images_check"):
        images.ensure_image(loadgen_client, None, log=log)
        trial.session = session = ServerSession.start(
            server=config.server, variant=config.variant, settings=config.settings, cpuset=config.server_cpus,
            memory_limit_bytes=config.memory_limit_bytes, cpu_quota=config.cpu_quota,
            cpu_period_ms=config.cpu_period_ms, run_id=trial.run_id, name=f"{trial.name}-server", client=client,
            host=config.target_host, check_host_cpus=config.check_host_cpus, health_timeout_s=config.health_timeout_s,
        )
        session.clock = clock
        trial.record["image"] = session.image
        trial.record["image_id"] = images.image_digest(client, session.image)
        trial.record["image_build_hash"] = trial.row["image_build_hash"] = images.image_build_hash(client, session.image)
    return session


def _verify(trial: _Trial, session: ServerSession) -> None:
    """The contract's checks before the load; a server that fails one is a failed trial (`verify-failed`)."""
    checks = verify.verify_server(session.host, session.port, session.spec.name, session.spec.routes, thorough=False,
                                  listen_backlog=session.listen_backlog())
    summary = verify.summarize(checks)
    # gzip: the same 70 passed checks in every trial were 2.6 MB of the reference data, plain.
    write_bytes_atomic(trial.trial_dir / rundir.VERIFY_REPORT, gzip.compress(json.dumps(summary, indent=1).encode()))
    if not summary["passed"]:
        failed = [c.name + ": " + c.detail for c in checks if not c.passed]
        raise TrialFailure("verify-failed", "; ".join(failed[:5]), container.log_tail(session.container))


def _load(trial: _Trial, session: ServerSession, loadgen_client):
    """Warm-up and the measured window from a fresh loadgen; returns (warm-up slices, result, window, timeseries)."""
    config, url, clock = trial.config, session.url(trial.config.route), trial.clock
    try:
        with loadgen_run.loadgen_for_trial(loadgen_client, loadgen_image(), trial.run_id, f"{trial.name}-loadgen",
                                           trial.trial_dir, config.loadgen_cpus, clock) as loadgen:
            with clock.phase("warm_up"):
                warmup_timeline = _warm_up(config, loadgen, url)
                _raise_if_exited(session)
            with clock.phase("settle"):
                # The window starts once the server is through what the warm-up left (tcp_diag.leftover_counts),
                # so it measures the level asked, not that level on top of the warm-up's abandoned connections.
                trial.record["settle"] = tcp_diag.wait_for_leftovers(
                    int(session.port), container.host_pid(session.container) or None, int(config.connections or 1),
                    SETTLE_MAX_S)
            trial.measured_at = time.time()
            trial.profiling = capture.capture_for(config, session, trial.trial_dir / "profiles")
            result, samples, window = _measure(config, session, loadgen, url, trial.profiling, f"{trial.name}-sidecar",
                                               clock)
            with clock.phase("timeseries"):
                # Kept before the exit check: a server killed mid-window (OOM) leaves its memory curve.
                timeseries = _timeseries(samples)
                timeseries.to_csv(trial.trial_dir / "timeseries.csv", index=False)
                _raise_if_exited(session)
            if trial.profiling is not None:
                with clock.phase("captures_after_window"):
                    trial.record["captures"] = trial.profiling.finish()
    except TrialFailure as failure:
        # Asked while the server's container still exists (leaving `with session` removes it, and a removed server
        # refuses every connection): a loadgen that failed because the server died reports the death, its root
        # cause; one whose server runs but refuses every connection measured a server that did no work; otherwise
        # the loadgen's own failure stands.
        raise _root_cause(failure, session) from None
    return warmup_timeline, result, window, timeseries


def _measured_columns(trial: _Trial, result, window: dict, timeseries: pd.DataFrame) -> dict:
    """The row's columns from the window: the loadgen's numbers, connections, resources, the runtime's version."""
    config, row = trial.config, {}
    row.update(_closed_loop_row(result) if config.load_mode == "closed" else _open_loop_row(result, trial.trial_dir))
    row.update(_connection_columns(config, window["connections_accepted"], row.get("requests")))
    row.update({key: value for key, value in window.items() if key != "connections_accepted"})
    loadgen_cpu_count = len(parse_cpuset(config.loadgen_cpus, "loadgen_cpus"))
    row.update(summarize_resources(timeseries, config.duration_s, loadgen_cpu_count))
    row.update(_generator_headroom(row))
    row.update({"runtime_version": trial.session.health.get("runtime_version"), "status": "ok",
                "failure_reason": None, "measured_unix_s": trial.measured_at,
                "server_started_unix_s": trial.session.started_unix_s})
    return row


def _record_failure(trial: _Trial, failure: TrialFailure, log) -> None:
    """The one failure path: the row and trial.json say failed and why; server.log and failure.log keep the logs.

    A window that ran to its end already wrote server.log from the container; otherwise it is what the server
    printed before it failed. The row keeps any numbers measured (a stalled window's show what happened).
    """
    trial.row.update({"status": "failed", "failure_reason": failure.reason,
                      "measured_unix_s": trial.measured_at, "server_ended_unix_s": _unix_s(failure.ended_utc)})
    trial.record.update({"status": "failed", "failure_reason": failure.reason, "failure_detail": failure.detail})
    server_log_path = trial.trial_dir / "server.log"
    if server_log_path.exists():
        server_log = server_log_path.read_text()
    else:
        server_log = _server_log(trial.session)
        write_text_atomic(server_log_path, server_log)
    write_text_atomic(trial.trial_dir / "failure.log", _failure_log(failure, server_log))
    log(f"trial {trial.number} failed: {failure}")


def _end(trial: _Trial) -> None:
    """Finish any capture, remove the server, and write trial.json, whatever happened."""
    if trial.profiling is not None and not trial.profiling.finished:
        trial.record["captures"] = trial.profiling.finish(failure_reason=trial.record.get("failure_reason")
                                                          or "interrupted")
    if trial.session is not None:
        trial.session.close()  # times itself (server_log_tail, server_remove) on trial.clock
    trial.record["phases_s"] = trial.clock.record()
    trial.record["ended_unix_s"] = time.time()
    write_json_atomic(trial.trial_dir / "trial.json", trial.record)


def run_trial(config: TrialConfig, trial_dir: Path, run_id: str, client, trial_number: int = 1, log=print,
              loadgen_client=None) -> dict:
    """Run one validated trial into `trial_dir`; returns its tidy row (also saved as result.json).

    `client` runs the server; `loadgen_client` (default: the same) runs the
    loadgen, so the two can sit on different engines. The row has `status`
    'ok' or 'failed' and, when failed, `failure_reason`. A window in which the
    server did no work is failed with reason `stalled` (loadlab.outcome), its
    numbers kept for the record. Every failed trial keeps server.log and
    failure.log.
    """
    loadgen_client = loadgen_client or client
    trial = _begin(config, trial_dir, run_id, trial_number)
    try:
        session = _start_server(trial, client, loadgen_client, log)
        with session:
            with trial.clock.phase("server_facts"):
                write_json_atomic(trial.trial_dir / "health.json", session.health)
                trial.record["open_file_limit"] = container.open_file_limit(session.container)
            if trial.config.verify:
                with trial.clock.phase("verify"):
                    _verify(trial, session)
            warmup_timeline, result, window, timeseries = _load(trial, session, loadgen_client)
            with trial.clock.phase("server_log"):
                # Kept on the session too, so removing the container does not ask the engine for it again.
                session.last_log_tail = container.log_tail(session.container, lines=5000)
                write_text_atomic(trial.trial_dir / "server.log", session.last_log_tail)
        with trial.clock.phase("row"):
            trial.row.update(_measured_columns(trial, result, window, timeseries))
        trial.record["status"] = "ok"
        stalled = outcome.stall_detail(trial.row, warmup_timeline, trial.config.profilers)
        if stalled is not None:
            # The numbers stay in the row (they show what happened); the status says they measured nothing.
            raise TrialFailure(outcome.STALLED, stalled)
    except TrialFailure as failure:
        _record_failure(trial, failure, log)
    finally:
        _end(trial)
    write_json_atomic(trial.trial_dir / "result.json", trial.row)
    return trial.row
