"""Notebook 02's reading of an open-loop overload, in sentences drawn from its trials."""

from __future__ import annotations

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
