"""A loadgen container that lives for one trial; each load is a `docker exec` in it.

One container per trial (not per invocation) makes warm-up in one-second
slices cheap: the slices give a throughput timeline and let the warm-up run
until throughput is steady (a JIT needs seconds), while the measured window
stays one uninterrupted wrk or vegeta run. Every invocation is wrapped in
`timeout`, so a hung load generator cannot hang the trial.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from loadlab.errors import TrialFailure
from loadlab.harness import container
from loadlab.harness.phases import PhaseClock
from loadlab.loadgen import openloop, vegeta, wrk
from loadlab.rundir import write_bytes_atomic, write_text_atomic

# Beyond the load itself: process start, wrk's final report, vegeta's encode.
DEADLINE_MARGIN_S = 30.0


@dataclass
class LoadgenContainer:
    """The trial's loadgen: started idle, used through `run`, removed by `close`."""

    handle: object
    output_dir: Path

    @classmethod
    def start(cls, client, image: str, run_id: str, name: str, output_dir: Path, cpuset: str) -> LoadgenContainer:
        output_dir.mkdir(parents=True, exist_ok=True)
        handle = container.run_loadgen(client, image, run_id, name, ["sleep", "infinity"], output_dir, cpuset)
        return cls(handle, output_dir)

    def run(self, argv: list[str], environment: dict[str, str], deadline_s: float, log_path: Path) -> None:
        """Run argv in the container; its output goes to `log_path`. Raises TrialFailure."""
        command = ["timeout", "--signal=KILL", f"{deadline_s:.0f}", *argv]
        try:
            result = self.handle.exec_run(command, environment=environment, workdir="/out")
        except Exception as error:  # the container died under us
            raise TrialFailure("loadgen-error", f"{self.handle.name}: {error}") from error
        output = result.output.decode(errors="replace") if result.output else ""
        write_text_atomic(log_path, output)
        if result.exit_code == 137:
            raise TrialFailure("loadgen-timeout", f"{argv[0]} did not finish within {deadline_s:.0f} s", output)
        if result.exit_code != 0:
            raise TrialFailure("loadgen-error", f"{argv[0]} exited with code {result.exit_code}", output[-4000:])

    def close(self) -> None:
        container.remove(self.handle)


def run_wrk(loadgen: LoadgenContainer, subdir: str, url: str, connections: int, duration_s: int,
            threads: int, timeout_s: int, pipeline_depth: int, connection_per_request: bool = False) -> wrk.WrkReport:
    """One wrk run writing `<subdir>/wrk.json`, kept as wrk.json.gz (subdir relative to the trial folder)."""
    argv, environment = wrk.command(url, connections, duration_s, threads, timeout_s, pipeline_depth,
                                    connection_per_request)
    relative = f"{subdir}/{wrk.REPORT_NAME}" if subdir else wrk.REPORT_NAME
    environment["WRK_REPORT"] = f"/out/{relative}"
    (loadgen.output_dir / subdir).mkdir(parents=True, exist_ok=True)
    log_path = loadgen.output_dir / subdir / "wrk.log"
    loadgen.run(argv, environment, duration_s + timeout_s + DEADLINE_MARGIN_S, log_path)
    report = loadgen.output_dir / relative
    if not report.exists():
        raise TrialFailure("loadgen-error", "wrk wrote no report", log_path.read_text(errors="replace")[-4000:])
    parsed = wrk.read_report(report)
    write_bytes_atomic(report.with_name(wrk.STORED_REPORT_NAME), gzip.compress(report.read_bytes(), compresslevel=9))
    report.unlink()
    return parsed


def run_vegeta(loadgen: LoadgenContainer, subdir: str, url: str, rate_rps: float, duration_s: float,
               timeout_s: float, max_workers: int = 10_000, connection_per_request: bool = False) -> vegeta.VegetaSummary:
    """One vegeta attack writing its files into `<subdir>/` of the trial folder."""
    argv = vegeta.attack_command(url, rate_rps, duration_s, timeout_s, max_workers, f"/out/{subdir}".rstrip("/"),
                                 connection_per_request)
    (loadgen.output_dir / subdir).mkdir(parents=True, exist_ok=True)
    log_path = loadgen.output_dir / subdir / "vegeta.log"
    loadgen.run(argv, {}, duration_s + timeout_s + DEADLINE_MARGIN_S, log_path)
    report = loadgen.output_dir / subdir / vegeta.REPORT_JSON
    if not report.exists():
        raise TrialFailure("loadgen-error", "vegeta wrote no report", log_path.read_text(errors="replace")[-4000:])
    return vegeta.parse_report(report.read_text())


def run_openloop(loadgen: LoadgenContainer, subdir: str, url: str, rate_rps: float, duration_s: float,
                 timeout_s: float, connections: int, connection_per_request: bool = False) -> openloop.OpenLoopReport:
    """One window of the project's open-loop generator, writing `<subdir>/openloop.json` in the trial folder."""
    relative = f"{subdir}/{openloop.REPORT_NAME}" if subdir else openloop.REPORT_NAME
    argv = openloop.command(url, rate_rps, duration_s, timeout_s, connections, connection_per_request,
                            report_path=f"/out/{relative}")
    (loadgen.output_dir / subdir).mkdir(parents=True, exist_ok=True)
    log_path = loadgen.output_dir / subdir / "openloop.log"
    loadgen.run(argv, {}, duration_s + timeout_s + DEADLINE_MARGIN_S, log_path)
    report = loadgen.output_dir / relative
    if not report.exists():
        raise TrialFailure("loadgen-error", "openloop wrote no report", log_path.read_text(errors="replace")[-4000:])
    return openloop.read_report(report)


def run_open_loop(loadgen: LoadgenContainer, generator: str, subdir: str, url: str, rate_rps: float,
                  duration_s: float, timeout_s: float, max_in_flight: int, connection_per_request: bool = False):
    """One open-loop window by `generator` ("openloop" or "vegeta"): its report (OpenLoopReport or VegetaSummary)."""
    if generator == openloop.NAME:
        return run_openloop(loadgen, subdir, url, rate_rps, duration_s, timeout_s, max_in_flight,
                            connection_per_request)
    return run_vegeta(loadgen, subdir, url, rate_rps, duration_s, timeout_s, max_workers=max_in_flight,
                      connection_per_request=connection_per_request)


def steady(throughputs_rps: list[float], window: int, tolerance: float) -> bool:
    """True when the last `window` slices vary by at most `tolerance` (relative range)."""
    if len(throughputs_rps) < window:
        return False
    tail = throughputs_rps[-window:]
    mean = sum(tail) / window
    return mean > 0 and (max(tail) - min(tail)) / mean <= tolerance


# From this many connections a closed-loop warm-up is one wrk run of its longest length, not one-second slices:
# each slice opens every connection again, which at 10,000 took 3-10 s a slice here (several slices counted no
# answer at all within their second), so the steady rule never held and the warm-up ran 18-137 s to its maximum
# (issue 32's phase measurements, 2026-11-28). One run warms the server for the same seconds of load.
ONE_RUN_WARMUP_CONNECTIONS = 5_000


def warm_up(loadgen: LoadgenContainer, url: str, connections: int, threads: int, timeout_s: int,
            pipeline_depth: int, min_s: int, max_s: int, window: int = 3, tolerance: float = 0.05,
            connection_per_request: bool = False) -> list[dict]:
    """Closed-loop warm-up in one-second slices until steady (or `max_s`); returns the timeline.

    At least `min_s` slices run; then warm-up stops as soon as the last
    `window` slices' throughputs lie within `tolerance` of their mean. From
    ONE_RUN_WARMUP_CONNECTIONS connections it is one run of `max_s` seconds,
    and the timeline one entry for it (`run_s`: its length).
    """
    timeline, runs = [], []
    if connections >= ONE_RUN_WARMUP_CONNECTIONS:
        runs.append("one-run")
        report = run_wrk(loadgen, "warmup/one-run", url, connections, max_s, threads, timeout_s, pipeline_depth,
                         connection_per_request)
        timeline.append({"second": max_s, "throughput_rps": report.requests_per_s, "errors_total": report.error_count,
                         "run_s": max_s})
    else:
        for second in range(1, max_s + 1):
            runs.append(f"{second:03d}")
            report = run_wrk(loadgen, f"warmup/{runs[-1]}", url, connections, 1, threads, timeout_s, pipeline_depth,
                             connection_per_request)
            timeline.append({"second": second, "throughput_rps": report.requests_per_s,
                             "errors_total": report.error_count})
            if second >= min_s and steady([t["throughput_rps"] for t in timeline], window, tolerance):
                break
    write_text_atomic(loadgen.output_dir / "warmup" / "timeline.json", json.dumps(timeline, indent=1))
    # The runs' own reports (a full latency spectrum each) served only the timeline
    # just written; warm-up is discarded, so they are not kept.
    for run in runs:
        shutil.rmtree(loadgen.output_dir / "warmup" / run, ignore_errors=True)
    return timeline


def open_loop_warm_up(loadgen: LoadgenContainer, url: str, rate_rps: float, duration_s: float, timeout_s: float,
                      max_workers: int, connection_per_request: bool = False, generator: str = "openloop") -> list[dict]:
    """Open-loop warm-up at the trial's rate; keeps its answers per second (warmup/timeline.json), not every request.

    Warm-up is discarded by design, and at thousands of requests a second
    its per-request results were most of a run's raw data (47 of 68 MB in
    the first run of 01's latency sweep).
    """
    result = run_open_loop(loadgen, generator, "warmup", url, rate_rps, duration_s, timeout_s, max_workers,
                           connection_per_request)
    directory = loadgen.output_dir / "warmup"
    # openloop counts its answers per second in its report (kept beside); vegeta's come from every request.
    frame = (openloop.throughput_timeline(result) if generator == openloop.NAME
             else vegeta.throughput_timeline(vegeta.read_results(directory)))
    timeline = [{"second": int(row["second"]), "throughput_rps": float(row["throughput_rps"])}
                for row in frame.to_dict("records")]
    write_text_atomic(directory / "timeline.json", json.dumps(timeline, indent=1))
    (directory / vegeta.RESULTS_CSV_GZ).unlink(missing_ok=True)
    return timeline


@contextlib.contextmanager
def loadgen_for_trial(client, image, run_id, name, output_dir: Path, cpuset: str, clock: PhaseClock | None = None):
    """The trial's loadgen container, removed on exit; `clock` (trial.json's phases) times its start and removal."""
    clock = clock or PhaseClock()
    with clock.phase("loadgen_start"):
        loadgen = LoadgenContainer.start(client, image, run_id, name, output_dir, cpuset)
    try:
        yield loadgen
    finally:
        with clock.phase("loadgen_remove"):
            loadgen.close()
