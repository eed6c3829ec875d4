"""The programs' output (pure): JSON lines into a DataFrame, and per-task columns."""

from __future__ import annotations

import json

import pandas as pd

from loadlab.errors import LoadlabError

REQUIRED_FIELDS = ("runtime", "model", "bench", "tasks")
# <measure>_delta_bytes -> <measure>_per_task_bytes
_PER_TASK_BYTES = (
    "rss", "peak_rss", "vm_size", "heap", "stack_inuse", "total_alloc", "sys",
)
_CTXT_PREFIXES = ("", "live_threads_", "self_status_", "background_")


class MicrobenchOutputError(LoadlabError, ValueError):
    """A program's output is not the JSON lines it should be; the message quotes the line."""


def parse_lines(text: str) -> list[dict]:
    """Every non-blank line of `text` as a JSON object; raises MicrobenchOutputError otherwise."""
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise MicrobenchOutputError(f"line {number} is not JSON ({error.msg}): {line[:200]!r}") from None
        if not isinstance(record, dict):
            raise MicrobenchOutputError(f"line {number} is not a JSON object: {line[:200]!r}")
        missing = [name for name in REQUIRED_FIELDS if name not in record]
        if missing:
            raise MicrobenchOutputError(f"line {number} lacks {', '.join(missing)}: {line[:200]!r}")
        records.append(record)
    return records


def parse_output(text: str) -> pd.DataFrame:
    """The JSON lines as a DataFrame, one row per line, columns as the programs name them."""
    records = parse_lines(text)
    frame = pd.DataFrame.from_records(records)
    if frame.empty:
        return pd.DataFrame(columns=list(REQUIRED_FIELDS))
    return frame


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` plus derived columns (a copy): per-task bytes, total context switches, ...

    Added where the inputs exist: condition (go, java-platform, java-virtual),
    <m>_per_task_bytes for every <m>_delta_bytes, <prefix>ctxt_switches_delta
    (voluntary + nonvoluntary) and ctxt_switches_per_task, threads_delta,
    spawn_per_task_s, elapsed_ms, ctxt_switches_net_of_background_delta.
    """
    out = frame.copy()
    if out.empty:
        return out
    if "runtime" in out and "model" in out:
        out["condition"] = [
            "go" if runtime == "go" else f"{runtime}-{model}" for runtime, model in zip(out["runtime"], out["model"])
        ]
    tasks = pd.to_numeric(out["tasks"])
    for measure in _PER_TASK_BYTES:
        column = f"{measure}_delta_bytes"
        if column in out:
            out[f"{measure}_per_task_bytes"] = pd.to_numeric(out[column]) / tasks
    for prefix in _CTXT_PREFIXES:
        voluntary = f"{prefix}voluntary_ctxt_switches_delta"
        nonvoluntary = f"{prefix}nonvoluntary_ctxt_switches_delta"
        if voluntary in out and nonvoluntary in out:
            out[f"{prefix}ctxt_switches_delta"] = pd.to_numeric(out[voluntary]) + pd.to_numeric(out[nonvoluntary])
    if "ctxt_switches_delta" in out:
        out["ctxt_switches_per_task"] = out["ctxt_switches_delta"] / tasks
        if "background_ctxt_switches_delta" in out:
            out["ctxt_switches_net_of_background_delta"] = (
                out["ctxt_switches_delta"] - out["background_ctxt_switches_delta"]
            )
    if "threads" in out and "threads_before" in out:
        out["threads_delta"] = pd.to_numeric(out["threads"]) - pd.to_numeric(out["threads_before"])
    if "spawn_s" in out:
        out["spawn_per_task_s"] = pd.to_numeric(out["spawn_s"]) / tasks
    if "elapsed_s" in out:
        out["elapsed_ms"] = pd.to_numeric(out["elapsed_s"]) * 1000.0
    return out
