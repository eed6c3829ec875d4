"""wrk: the command line and the JSON report its Lua `done()` hook writes.

The report (servers/loadgen/report.lua) holds the summary, errors by kind
and a dense latency percentile spectrum in microseconds. Everything this
module returns is in seconds, bytes and counts.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path

from loadlab.stats import latency

REPORT_LUA = "/opt/loadlab/report.lua"
PIPELINE_LUA = "/opt/loadlab/pipeline.lua"
REPORT_NAME = "wrk.json"  # what report.lua writes
# What a trial keeps: the spectrum's 1,000-odd points made wrk.json 17 KB, 5 MB of the reference data's budget.
STORED_REPORT_NAME = "wrk.json.gz"
ERROR_KINDS = ("connect", "read", "write", "status", "timeout")
# The percentiles a tidy trial row carries (the whole spectrum stays in raw): loadlab.stats.latency's.
SUMMARY_PERCENTILES = latency.SUMMARY_PERCENTILES


@dataclass(frozen=True)
class WrkReport:
    """One wrk run. Latencies in seconds; `spectrum_s` maps percentile -> latency."""

    requests: int
    duration_s: float
    bytes_read: int
    errors: dict[str, int]
    latency_min_s: float
    latency_max_s: float
    latency_mean_s: float
    latency_stdev_s: float
    spectrum_s: dict[float, float]

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    def latency_percentile_s(self, percentile: float) -> float:
        """The latency at `percentile` (0-100], from the nearest grid point at or above it."""
        grid = sorted(self.spectrum_s)
        for point in grid:
            if point >= percentile - 1e-9:
                return self.spectrum_s[point]
        return self.latency_max_s


def parse_report(text: str) -> WrkReport:
    document = json.loads(text)
    if document.get("format") != "loadlab-wrk-report/1":
        raise ValueError(f"not a loadlab wrk report (format {document.get('format')!r})")
    latency = document["latency_us"]
    return WrkReport(
        requests=int(document["requests"]),
        duration_s=document["duration_us"] / 1e6,
        bytes_read=int(document["bytes"]),
        errors={kind: int(document["errors"][kind]) for kind in ERROR_KINDS},
        latency_min_s=latency["min"] / 1e6,
        latency_max_s=latency["max"] / 1e6,
        latency_mean_s=(latency["mean"] or 0) / 1e6,
        latency_stdev_s=(latency["stdev"] or 0) / 1e6,
        spectrum_s={float(p): value / 1e6 for p, value in document["spectrum_us"]},
    )


def read_report(path: Path) -> WrkReport:
    """The report in a wrk.json or a wrk.json.gz (runs before 2026-11-25 kept it plain)."""
    data = Path(path).read_bytes()
    return parse_report((gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode())


def stored_report(directory: Path) -> Path | None:
    """The wrk report a trial folder keeps, compressed or plain; None when it has none."""
    for name in (STORED_REPORT_NAME, REPORT_NAME):
        if (Path(directory) / name).exists():
            return Path(directory) / name
    return None


def command(
    url: str,
    connections: int,
    duration_s: int,
    threads: int = 1,
    timeout_s: int = 2,
    pipeline_depth: int = 1,
    connection_per_request: bool = False,
) -> tuple[list[str], dict[str, str]]:
    """The wrk argv and environment for one run writing /out/wrk.json.

    wrk takes whole seconds for -d and --timeout; callers validate that.
    `connection_per_request` sends `Connection: close`: the server closes
    after each answer and wrk reconnects, one TCP connection per request.
    """
    script = PIPELINE_LUA if pipeline_depth > 1 else REPORT_LUA
    argv = [
        "wrk", f"-t{threads}", f"-c{connections}", f"-d{duration_s}s", f"--timeout={timeout_s}s",
        *(["-H", "Connection: close"] if connection_per_request else []),
        "-s", script, url,
    ]
    environment = {"WRK_REPORT": f"/out/{REPORT_NAME}"}
    if pipeline_depth > 1:
        environment["PIPELINE_DEPTH"] = str(pipeline_depth)
    return argv, environment
