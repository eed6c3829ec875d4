"""openloop: the project's own open-loop generator (servers/loadgen/openloop), its command line and report.

Every request has an intended send time on a fixed schedule (constant rate,
or Poisson); its latency runs from that time to the last byte of its answer,
so a server that stalls cannot hide its stall (coordinated omission). At
most `connections` requests are in flight, one per connection; requests that
find no connection free wait in order, their clocks running, and those still
waiting when the window ends are counted as `unsent` (errors), never dropped.

The generator checks itself: for every request it records how long after it
could have gone it went (its own delay, as opposed to waiting for a free
connection, which is the server's doing), and the CPU it used less the time
it spent polling for a request about to fall due. A window in which it fell
behind (`behind`) is the loadgen's fault, and the trial is not evidence, as a
saturated wrk's is not.

The report is one JSON document (REPORT_NAME); its latency histogram is the
standard HdrHistogram encoding in microseconds, the unit the tables already
merge (loadlab.stats.latency).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from loadlab.config import LOADGEN_SATURATION_UTILIZATION
from loadlab.stats.latency import summary_columns

NAME = "openloop"
REPORT_NAME = "openloop.json"
HISTOGRAM_UNIT_S = 1e-6  # the latency histogram counts microseconds
# A request that left more than this after it could have (its intended time, or when a connection came free) was
# late by the generator's own doing: its loop was busy elsewhere. Microseconds.
LATE_AFTER_US = 1000
# More than this share of a window's requests late by the generator's own doing, and the window may have measured
# the generator: 1% is what moves a p99.
BEHIND_SHARE = 0.01
# ... unless those delays are too small to move a latency the pages read from the window: the generator's own delay
# under this share of the same statistic of the window's latency, its mean against the mean (S4-latency judges a
# mean) and its p99 against the p99 (S1-p99, the knees and the atlas read the p99). A request's latency runs from its
# intended time, so a late send adds at most its own delay to it. The rule first compared the own delay's p99 with
# the window's median, a statistic no page reads: in the fourth sitting's 04 open loop it called 9 of 31 windows
# below the knees the loadgen's where the own delay's mean was 0.19-1.05% of the mean latency S4-latency judges
# (its noise margin: 11%), and 7 spare trials were run for them (issue 28). In the reference before, S2's windows
# at 50 and 500 req/s had 1-6% of requests late by 1-6 ms against latencies of 0.1-7 s. A fast server's window
# (latency about 1 ms, own delays of milliseconds) stays behind.
MATERIAL_DELAY_SHARE = 0.05


def command(url: str, rate_rps: float, duration_s: float, timeout_s: float, connections: int,
            connection_per_request: bool = False, report_path: str = f"/out/{REPORT_NAME}",
            arrivals: str = "constant", seed: int = 1) -> list[str]:
    """The argv that runs one window and writes its report to `report_path` (inside the loadgen container)."""
    argv = ["openloop", "--url", url, "--rate", f"{rate_rps:.6g}", "--duration", f"{duration_s:g}",
            "--connections", str(int(connections)), "--timeout", f"{timeout_s:g}", "--arrivals", arrivals,
            "--seed", str(int(seed)), "--late-after-us", str(LATE_AFTER_US), "--report", report_path]
    if connection_per_request:
        argv.append("--connection-per-request")
    return argv


@dataclass(frozen=True)
class OpenLoopReport:
    """One window. Rates in requests per second, times in seconds, counts of requests."""

    document: dict

    @property
    def scheduled(self) -> int:
        return int(self.document["scheduled"])

    @property
    def duration_s(self) -> float:
        return float(self.document["duration_s"])

    @property
    def own_delay_share(self) -> float:
        """The share of sent requests that left more than LATE_AFTER_US after they could have."""
        dispatched = int(self.document["dispatched"])
        return int(self.document["late_generator"]) / dispatched if dispatched else 0.0

    @property
    def busy_share(self) -> float:
        """The generator's CPU time in the window, less its polling for due requests, over the window's wall time."""
        return float(self.document["cpu_busy_share"])

    @property
    def own_delay_p99_s(self) -> float | None:
        """The generator's own delay at its 99th percentile (seconds), None when the report has none."""
        return _us_to_s((self.document.get("generator_delay_us") or {}).get("p99"))

    @property
    def own_delay_mean_s(self) -> float | None:
        """The generator's own delay's mean (seconds), None when the report has none."""
        return _us_to_s((self.document.get("generator_delay_us") or {}).get("mean"))

    def latency_s(self, statistic: str) -> float | None:
        """The window's latency `statistic` ("p50", "p99", "mean"; seconds, from each request's intended time),
        None without answers."""
        value = (self.document.get("latency_us") or {}).get(statistic)
        return _us_to_s(value) if value else None

    def material_delays(self) -> list[str]:
        """The statistics of the window's latency its own delay may have moved: for each of the mean and the p99,
        a note when the own delay's same statistic reaches MATERIAL_DELAY_SHARE of it (or either is missing)."""
        notes = []
        for statistic, own in (("mean", self.own_delay_mean_s), ("p99", self.own_delay_p99_s)):
            latency = self.latency_s(statistic)
            if own is None or latency is None:
                notes.append(f"no {statistic} to compare its own delay with")
            elif own >= MATERIAL_DELAY_SHARE * latency:
                notes.append(f"its own delay's {statistic} {own * 1e3:.2f} ms against a {statistic} latency of "
                             f"{latency * 1e3:.2f} ms")
        return notes

    def behind_detail(self) -> str | None:
        """Why the generator, not the server, limited this window; None when it kept its schedule.

        Behind: its core was busy (LOADGEN_SATURATION_UTILIZATION), or more
        than BEHIND_SHARE of the requests left late by its own doing by enough
        to matter: its own delay's mean or p99 at least MATERIAL_DELAY_SHARE
        of the window's latency's mean or p99 (`material_delays`).
        """
        reasons = []
        material = self.material_delays()
        if self.own_delay_share > BEHIND_SHARE and material:
            reasons.append(f"{self.own_delay_share:.1%} of requests left more than {LATE_AFTER_US} µs after they could "
                           f"have (more than {BEHIND_SHARE:.0%}), by enough to move its latency: " + "; ".join(material))
        if self.busy_share >= LOADGEN_SATURATION_UTILIZATION:
            reasons.append(f"its core was {self.busy_share:.0%} busy")
        return "; ".join(reasons) or None


def read_report(path: Path | str) -> OpenLoopReport:
    return OpenLoopReport(json.loads(Path(path).read_text()))


def _us_to_s(value) -> float | None:
    return None if value is None else float(value) * 1e-6


def trial_columns(report: OpenLoopReport) -> dict:
    """A trial row's load, latency and error columns (as vegeta's rows have them), and the generator's own check.

    `requests` counts every scheduled request (sent or not) and `errors_total`
    every one that did not get a 2xx/3xx answer, unsent ones included.
    """
    document = report.document
    errors = document.get("errors") or {}
    latency = document.get("latency_us") or {}
    own = document.get("generator_delay_us") or {}
    waited = document.get("send_delay_us") or {}
    encoded = document["latency_histogram_hdr"]
    row = {
        "requests": report.scheduled,
        "duration_s": report.duration_s,
        "rate_offered_rps": float(document["rate_asked_rps"]),
        "rate_sent_rps": float(document["dispatched_rate_rps"]),
        "throughput_rps": float(document["throughput_rps"]),
        "latency_mean_s": _us_to_s(latency.get("mean")),
        "latency_max_s": _us_to_s(latency.get("max")),
        "latency_kind": f"open-loop ({document['arrivals']} rate, from each request's intended send time)",
        "latency_histogram_hdr": encoded if int(document["answered"]) else None,
        "errors_status": int(errors.get("status", 0)),
        "errors_timeout": int(errors.get("timeout", 0)),
        "errors_connect": int(errors.get("connect", 0)),
        "errors_read": int(errors.get("read", 0)) + int(errors.get("parse", 0)),
        "errors_write": int(errors.get("write", 0)),
        "errors_unsent": int(document.get("unsent", 0)),
        "errors_total": int(document["errors_total"]),
        "open_loop_generator": NAME,
        "loadgen_connections_open_max": int(document["connections_open_max"]),
        # Keep-alive connections opened before the schedule's first instant (absent from reports before issue 28's
        # change, which opened them inside the window).
        "loadgen_preconnected": document.get("preconnected"),
        "loadgen_late": int(document["late"]),
        "loadgen_late_own": int(document["late_generator"]),
        "loadgen_send_wait_p99_s": _us_to_s(waited.get("p99")),
        "loadgen_own_delay_p50_s": _us_to_s(own.get("p50")),
        "loadgen_own_delay_p99_s": _us_to_s(own.get("p99")),
        "loadgen_own_delay_max_s": _us_to_s(own.get("max")),
        "loadgen_self_busy_share": report.busy_share,
        "loadgen_behind": report.behind_detail(),
    }
    if row["latency_histogram_hdr"] is not None:
        row.update(summary_columns(encoded, value_unit_s=HISTOGRAM_UNIT_S))
    return row


def throughput_timeline(report: OpenLoopReport) -> pd.DataFrame:
    """Successful answers per second, by the second each request was due (as vegeta's timeline is)."""
    seconds = report.document.get("per_second") or []
    return pd.DataFrame({"second": [int(s["second"]) for s in seconds],
                         "throughput_rps": [float(s["ok"]) for s in seconds]})


def has_report(directory: Path | str) -> bool:
    return (Path(directory) / REPORT_NAME).exists()
