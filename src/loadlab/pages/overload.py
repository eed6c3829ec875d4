"""Notebook 02's open-loop overload: what it did over each window (`overload_over_time`), and its reading in sentences."""

from __future__ import annotations

import numpy as np
import pandas as pd

from loadlab.units import MIB

from .numbers import format_number

# A window whose connection count peaked within this share above the listen queue's size held at that queue:
# what the kernel counted were connections waiting to be accepted (and the few the server had taken), not a
# backlog inside the process. Measured peaks sit either at 3,980-4,232 for a 4,096-place queue or at 4,790 and
# beyond.
QUEUE_SLACK_SHARE = 0.05


def overload_reading(trials: pd.DataFrame, level, accept_backlog: int | None) -> str:
    """Where an overload's backlog waited, per server, at offered `level` (req/s).

    `trials` carries label, level, status, throughput_rps, memory_peak_bytes
    and connections_peak (judgements.s2.with_runtime_metrics). A window whose
    peak of established connections stayed within QUEUE_SLACK_SHARE above
    `accept_backlog` (the host's listen-queue size, recorded in the run's
    connection limits) is one whose backlog waited in the kernel; one that
    went past it is one whose server kept accepting.
    """
    ok = trials[(trials["level"] == level) & (trials["status"] == "ok")]
    if ok.empty:
        return f"No window at {level:g} req/s offered finished: nothing to read."
    parts = []
    for label, rows in ok.groupby("label", sort=True):
        served = rows["throughput_rps"]
        memory = rows["memory_peak_bytes"] / MIB
        parts.append(f"{label} served {format_number(float(served.median()))} req/s (median; "
                     f"{format_number(float(served.min()))} to {format_number(float(served.max()))}) and peaked at "
                     f"{format_number(float(memory.median()))} MiB (at most {format_number(float(memory.max()))})")
    text = f"**Reading.** At {level:g} req/s offered, " + "; ".join(parts) + "."
    if not accept_backlog or "connections_peak" not in ok or ok["connections_peak"].isna().all():
        return text
    peaks = ok["connections_peak"].astype(float)
    at_queue = peaks <= accept_backlog * (1 + QUEUE_SLACK_SHARE)
    held, past = ok[at_queue], ok[~at_queue]
    text += (f" In {len(held)} of {len(ok)} windows the kernel's count of established connections stopped at the "
             f"listen queue's {accept_backlog:,} places (peaks {format_number(float(held['connections_peak'].min()))} "
             f"to {format_number(float(held['connections_peak'].max()))}): the server took few of the load's "
             "connections, so most of the backlog waited in the kernel, in front of every goroutine; those "
             f"windows' memory peaked at {format_number(float(held['memory_peak_bytes'].median() / MIB))} MiB "
             f"(median; at most {format_number(float(held['memory_peak_bytes'].max() / MIB))})." if len(held) else "")
    if len(past):
        text += (f" In {len(past)} ({', '.join(f'{label} {count}' for label, count in past['label'].value_counts().sort_index().items())})"
                 f" the server kept accepting, up to {format_number(float(past['connections_peak'].max()))} connections, "
                 f"and its memory reached {format_number(float(past['memory_peak_bytes'].max() / MIB))} MiB.")
    return text


def overload_over_time(trials: pd.DataFrame, timeseries: pd.DataFrame, thread_counts: pd.DataFrame,
                       throughput_timeline: pd.DataFrame, level) -> pd.DataFrame:
    """One tidy frame of what an open-loop overload did over each window, for `plots.resources_over_time_figure`.

    Rows from three clocks, each holding one of the value columns:
    `memory_in_use_bytes` (the sampler, 4 times a second),
    `established_connections` (the kernel's socket table, once a second:
    accepted connections and those still waiting in the listen queue) and
    `successful_rps` (2xx/3xx answers per second, by the second the request
    was sent, from the loadgen's per-request results). `t_s` is seconds since
    the window began; the trials' label, status, failure reason and loadgen
    saturation ride along so excluded trials are drawn as such.
    """
    at_level = trials[trials["level"] == level][["trial", "label", "status", "failure_reason", "loadgen_saturated"]]
    memory = timeseries.merge(at_level, on="trial")[["trial", "t_s", "server_memory_in_use_bytes"]]
    parts = [memory.rename(columns={"server_memory_in_use_bytes": "memory_in_use_bytes"})]
    if thread_counts is not None and not thread_counts.empty:
        connections = thread_counts[thread_counts["metric"] == "connections"]
        parts.append(connections.drop(columns="t_s").rename(columns={"t_window_s": "t_s", "count": "established_connections"})
                     [["trial", "t_s", "established_connections"]].astype({"established_connections": float}))
    if throughput_timeline is not None and not throughput_timeline.empty:
        window = throughput_timeline[throughput_timeline["phase"] != "warmup"] if "phase" in throughput_timeline \
            else throughput_timeline
        # The timeline lists only the seconds in which some request succeeded; a second in which none did is a
        # 0, not a gap (a gap would leave the median to the trials that still answered).
        seconds = range(1, int(np.ceil(window["second"].max())) + 1) if len(window) else range(0)
        filled = (window.pivot_table(index="second", columns="trial", values="throughput_rps", aggfunc="sum")
                  .reindex(seconds).fillna(0.0).reindex(columns=at_level["trial"], fill_value=0.0))
        answered = filled.reset_index().melt(id_vars="second", var_name="trial", value_name="successful_rps")
        # "second" n counts the requests sent in [n - 1, n): drawn at the middle of that second.
        parts.append(answered.assign(t_s=answered["second"] - 0.5)[["trial", "t_s", "successful_rps"]])
    frame = pd.concat(parts, ignore_index=True)
    return frame.merge(at_level, on="trial").sort_values(["trial", "t_s"]).reset_index(drop=True)


def peak_counts_by_ten_seconds(thread_counts: pd.DataFrame, trials: pd.DataFrame, level) -> pd.DataFrame:
    """At offered `level`: the peak goroutine and connection counts in each 10 s of the window, per server, printed
    with thousands separators ("–" where the series did not answer)."""
    counted = thread_counts[thread_counts["metric"].isin(["goroutines", "connections"])].merge(
        trials[["trial", "label", "level"]], on="trial")
    counted = counted[counted["level"] == level]
    by_ten_seconds = counted.assign(seconds=(counted["t_window_s"] // 10 * 10).astype(int))
    return (by_ten_seconds.pivot_table(index="seconds", columns=["metric", "label"], values="count", aggfunc="max")
            .astype(float).map(_count_text)
            .rename_axis(index="window seconds (from)", columns=["peak in each 10 s of the window", ""]))


def _count_text(count: float) -> str:
    return "–" if pd.isna(count) else f"{count:,.0f}"
