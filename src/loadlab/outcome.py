"""Did a trial measure the server? The rule that turns a finished window into `ok` or `stalled`.

A server that answered nothing, or almost nothing, in its measured window did
no work: its zeros are not a measurement of the server and must never reach a
table as an "ok" trial (a JDK 21 server pinned on I/O once gave six "ok"
trials with 0 requests). The same rule runs in the harness, when a trial
ends, and in `loadlab.tables`, when a recorded run is processed, so runs
recorded before the rule existed are judged the same way.
"""

from __future__ import annotations

import statistics

import numpy as np

STALLED = "stalled"
# A window whose successful throughput fell below this fraction of the same
# container's steady warm-up throughput stalled. Within one container,
# consecutive windows vary by about 2% (CV, measured on go-nethttp), and a
# JIT only speeds a server up after warm-up; a drop to under half is over 20
# such standard deviations, so it is a server that stopped working (pinned
# carriers, a thrashing heap), not noise.
STALL_FRACTION_OF_WARMUP = 0.5
# Profilers that start with the window (pprof's CPU profile, `perf record`, py-spy, uprobes): the window runs
# a changed server, slower than its warm-up by the profiler's cost, which for uprobes on Go's scheduler
# functions is over half (every gopark and mcall traps into the kernel; notebook 06 measures it). For their
# trials only the no-successful-request test applies.
WINDOW_PROFILERS = frozenset({"pprof", "perf", "py-spy", "uprobes"})
# The warm-up's steady throughput is the median of its last slices (the
# slices the steady-state test looked at).
STEADY_WARMUP_SLICES = 3


def _count(value) -> int:
    return int(value) if value is not None and value == value else 0  # missing or NaN counts nothing


def is_open_loop(row: dict) -> bool:
    """Whether the row is an open-loop (vegeta) window: it carries the rate it offered."""
    rate = row.get("rate_offered_rps")
    return rate is not None and rate == rate


def successful_requests(row: dict) -> int | None:
    """Requests answered with a 2xx/3xx status in the window (None when the row has no count).

    The two loadgens count differently. wrk's `requests` are completed
    responses, so only its non-2xx/3xx answers (`errors_status`) are taken
    off; its timeouts and socket errors were never counted as requests.
    vegeta's `requests` are every request it sent, timeouts and refused
    connections included, so everything in `errors_total` is taken off: a
    server that let every request time out served nothing.
    """
    requests = row.get("requests")
    if requests is None or requests != requests:  # missing or NaN
        return None
    failed = _count(row.get("errors_total")) if is_open_loop(row) else _count(row.get("errors_status"))
    return max(0, int(requests) - failed)


def steady_warmup_throughput_rps(warmup_timeline: list[dict] | None) -> float | None:
    """Median throughput of the warm-up's last slices, or None without a timeline."""
    if not warmup_timeline:
        return None
    tail = [float(s["throughput_rps"]) for s in warmup_timeline[-STEADY_WARMUP_SLICES:]]
    return statistics.median(tail)


def stall_detail(row: dict, warmup_timeline: list[dict] | None = None, profilers=()) -> str | None:
    """Why a finished window is `stalled`, or None when the server did work.

    `row` is the trial's result (requests, errors_status, duration_s);
    `warmup_timeline` the closed-loop warm-up slices, when there were any
    (an open-loop row is judged on its successful requests alone);
    `profilers` the trial's (one in WINDOW_PROFILERS skips the warm-up test).
    """
    successful = successful_requests(row)
    if successful is None:
        return None
    if successful == 0:
        duration_s = row.get("duration_s")
        window = f"{float(duration_s):.1f} s" if duration_s else "measured"
        return f"no successful request in the {window} window ({row.get('requests', 0)} answered, none 2xx/3xx)"
    if WINDOW_PROFILERS.intersection(profilers or ()):
        return None
    if is_open_loop(row):
        # An open-loop warm-up's answers per second count what was sent at the trial's rate, not what the server
        # can serve; past its capacity a server answers a shrinking share in the window (S2's 5x overload served
        # 36-40 of 500 req/s while its backlog grew), which is the measurement, not a server that did no work.
        return None
    duration_s = row.get("duration_s")
    warmup_rps = steady_warmup_throughput_rps(warmup_timeline)
    if duration_s and warmup_rps and warmup_rps > 0:
        window_rps = successful / float(duration_s)
        if window_rps < STALL_FRACTION_OF_WARMUP * warmup_rps:
            return (f"window throughput {window_rps:.0f} successful req/s fell below {STALL_FRACTION_OF_WARMUP:.0%} "
                    f"of the same server's steady warm-up ({warmup_rps:.0f} req/s)" + _timeouts_text(row))
    return None


def _timeouts_text(row: dict) -> str:
    """What the loadgen's timeouts say of a stall: a server whose queue outgrew the client's wait (node at 10,000
    connections, about 2.2 s of queue against wrk's 2 s) keeps working while the client gives up and reconnects,
    which is not a server that stopped answering. Empty when nothing timed out."""
    timeouts = _count(row.get("errors_timeout"))
    if not timeouts:
        return ""
    longest = row.get("latency_max_s")
    waited = f", the longest answer {float(longest):.2f} s" if longest is not None and longest == longest else ""
    return (f"; the loadgen gave up on {timeouts:,} requests at its timeout{waited}: a queue longer than the client "
            "waits, the server still answering")


def spoiled_by_loadgen(row) -> bool:
    """Whether a finished window (a trial's row, from a table or its result.json) measured its loadgen, not the
    server: ok, with the loadgen saturated or behind its schedule (the trial marks both `loadgen_saturated`, read
    here as Python's or numpy's True). `judgements.evidence` leaves such a trial out of every verdict, and
    `harness.spares` makes it up where a verdict reads its condition."""
    saturated = row.get("loadgen_saturated")
    return row.get("status", "ok") == "ok" and isinstance(saturated, (bool, np.bool_)) and bool(saturated)
