"""Run one load-generator invocation in the loadgen container and wait for it.

The container writes its files into `output_dir` (mounted at /out); its
stdout/stderr are saved beside them. A loadgen that fails, hangs past its
deadline or writes no report is a TrialFailure with reason `loadgen-error`
or `loadgen-timeout`.
"""

from __future__ import annotations

from pathlib import Path

from .. import container
from ..errors import TrialFailure
from ..rundir import write_text_atomic
from . import vegeta, wrk

# Beyond the load itself: container start, wrk's final report, vegeta's encode.
DEADLINE_MARGIN_S = 30.0


def start(client, image, run_id, name, argv, environment, output_dir: Path, cpuset: str):
    output_dir.mkdir(parents=True, exist_ok=True)
    return container.run_loadgen(client, image, run_id, name, argv, output_dir, cpuset, environment)


def finish(loadgen, output_dir: Path, deadline_s: float, log_name: str) -> None:
    """Wait for the loadgen, save its output, raise TrialFailure if it failed."""
    try:
        exit_code = container.wait_for_exit(loadgen, deadline_s)
    finally:
        write_text_atomic(output_dir / log_name, container.log_tail(loadgen, lines=2000))
        container.remove(loadgen)
    if exit_code != 0:
        raise TrialFailure(
            "loadgen-error", f"{loadgen.name} exited with code {exit_code}", (output_dir / log_name).read_text()
        )


def wrk_report(output_dir: Path) -> wrk.WrkReport:
    path = output_dir / wrk.REPORT_NAME
    if not path.exists():
        raise TrialFailure("loadgen-error", "wrk wrote no report", (output_dir / "wrk.log").read_text(errors="replace"))
    return wrk.read_report(path)


def run_wrk(
    client, image, run_id, name, url, connections, duration_s, output_dir: Path, cpuset: str,
    threads: int = 1, timeout_s: int = 2, pipeline_depth: int = 1,
) -> wrk.WrkReport:
    argv, environment = wrk.command(url, connections, duration_s, threads, timeout_s, pipeline_depth)
    loadgen = start(client, image, run_id, name, argv, environment, output_dir, cpuset)
    finish(loadgen, output_dir, duration_s + timeout_s + DEADLINE_MARGIN_S, "wrk.log")
    return wrk_report(output_dir)


def run_vegeta(
    client, image, run_id, name, url, rate_rps, duration_s, output_dir: Path, cpuset: str,
    timeout_s: float = 2.0, max_workers: int = 10_000,
) -> vegeta.VegetaSummary:
    argv = vegeta.attack_command(url, rate_rps, duration_s, timeout_s, max_workers)
    loadgen = start(client, image, run_id, name, argv, {}, output_dir, cpuset)
    finish(loadgen, output_dir, duration_s + timeout_s + DEADLINE_MARGIN_S, "vegeta.log")
    report = output_dir / vegeta.REPORT_JSON
    if not report.exists():
        raise TrialFailure("loadgen-error", "vegeta wrote no report", (output_dir / "vegeta.log").read_text(errors="replace"))
    return vegeta.parse_report(report.read_text())
