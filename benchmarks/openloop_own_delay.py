"""Benchmark (not a test): how much of a window's latency openloop's own delay could be, against the rule that calls
the window the loadgen's, and how many keep-alive connections it opened before
the window's first request was due (reports from before issue 28's change opened
them inside the window).

Reads every openloop.json under the folders given (an open-loop run, or a
whole data/raw/) and prints, by the rate asked: the share of requests sent that
left over 1 ms late by the generator's doing, how many of all late requests
fell in the window's first second (when a keep-alive window opens its
connections afresh), the own delay's mean and p99 beside the window's mean and
p99 latency, and what the harness's rule (`OpenLoopReport.behind_detail`)
called the window. A late send adds at most its own delay to a latency counted
from the intended time, so the own delay's mean bounds what it adds to a mean
latency, and its p99 what it adds to a p99. Windows past a server's knee
(more than half their requests late) are left out: there lateness is the
server's.

    .venv/bin/python benchmarks/openloop_own_delay.py data/raw/04-open-loop-latency-quick
    .venv/bin/python benchmarks/openloop_own_delay.py data/raw/01-open-loop-latency-quick
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

from loadlab.loadgen import openloop

PAST_THE_KNEE_LATE_SHARE = 0.5


def window_rows(roots: list[Path]) -> list[dict]:
    """One row per window below the knee: its rate and the generator's delay against the window's latency."""
    rows = []
    for root in roots:
        for path in sorted(root.rglob("openloop.json")):
            if "warmup" in path.parts:
                continue
            report = openloop.read_report(path)
            document = report.document
            scheduled = report.scheduled
            per_second = document.get("per_second") or []
            late = sum(second.get("late", 0) for second in per_second)
            if not scheduled or late > PAST_THE_KNEE_LATE_SHARE * scheduled:
                continue
            rows.append({
                "rate": document["rate_asked_rps"],
                "own_late_share": report.own_delay_share,
                "late_first_second_share": per_second[0].get("late", 0) / late if late else 0.0,
                # The statistics the behind rule compares (`OpenLoopReport.material_delays`), read as it reads them.
                "own_mean_over_latency_mean": report.own_delay_mean_s / report.latency_s("mean"),
                "own_p99_over_latency_p99": report.own_delay_p99_s / report.latency_s("p99"),
                "own_max_ms": document["generator_delay_us"]["max"] / 1e3,
                "behind": report.behind_detail() is not None,
                # Keep-alive connections opened before the first request was due (None: a report from before).
                "preconnected": document.get("preconnected"),
            })
    return rows


def _span(values: list[float], scale: float = 100.0, digits: int = 2) -> str:
    return f"{min(values) * scale:.{digits}f}-{max(values) * scale:.{digits}f}"


def _preconnected(rows: list[dict]) -> str:
    """The keep-alive connections opened before the window, as a span; "-" for reports without the count."""
    counts = [r["preconnected"] for r in rows if r["preconnected"] is not None]
    return f"{min(counts)}-{max(counts)}" if counts else "-"


def main(argv: list[str]) -> int:
    roots = [Path(arg) for arg in argv] or [Path("data/raw")]
    by_rate: dict[float, list[dict]] = defaultdict(list)
    for row in window_rows(roots):
        by_rate[row["rate"]].append(row)
    if not by_rate:
        print("no openloop windows below a knee under", ", ".join(map(str, roots)))
        return 1
    print(f"{'rate asked':>11} {'windows':>7} {'own late %':>12} {'late in 1st s %':>16} "
          f"{'own mean/mean %':>16} {'own p99/p99 %':>14} {'own max ms':>12} {'behind (rule)':>13} {'preconnected':>13}")
    for rate in sorted(by_rate):
        rows = by_rate[rate]
        print(f"{rate:>11,.0f} {len(rows):>7} {_span([r['own_late_share'] for r in rows]):>12} "
              f"{_span([r['late_first_second_share'] for r in rows], digits=0):>16} "
              f"{_span([r['own_mean_over_latency_mean'] for r in rows]):>16} "
              f"{_span([r['own_p99_over_latency_p99'] for r in rows], digits=1):>14} "
              f"{_span([r['own_max_ms'] for r in rows], scale=1.0, digits=1):>12} "
              f"{sum(r['behind'] for r in rows):>6} of {len(rows)} {_preconnected(rows):>13}")
    every = [row for rows in by_rate.values() for row in rows]
    print(f"all {len(every)} windows: the own delay's mean was a median "
          f"{statistics.median(r['own_mean_over_latency_mean'] for r in every):.2%} of the mean latency; "
          f"the rule called {sum(r['behind'] for r in every)} the loadgen's")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
