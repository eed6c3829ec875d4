"""Which file of a trial's profiles/ folder holds which JFR events, and reading them from either form.

Since 2026-11-25 the capture keeps the recording itself, cut down by `jfr
scrub --include-events` to the events the tables use and gzip-compressed:
jfr-events.jfr.gz (GC, heap, threads, pinning and execution samples) and,
with the jfr-locks profiler, jfr-locks.jfr.gz (lock, park and sleep
events). Before that it kept `jfr print --json` of the same events
(jfr.json.gz, jfr-samples.json.gz, jfr-locks.json.gz); the committed runs
of that time still hold those, recompressed with xz (jfr.json.xz, ...: the
same bytes inside, a tenth of the size), and both forms give the same events.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .jfr import events_in_window, jfr_stacks, read_jfr_json, read_jfr_stacks
from .jfr_recording import read_jfr_recording

# GC, heap, thread counts and pinning: small, and read by tables.py for every Java trial.
RUNTIME_EVENTS = ("jdk.GarbageCollection", "jdk.GCPhasePause", "jdk.GCHeapSummary", "jdk.JavaThreadStatistics",
                  "jdk.VirtualThreadPinned", "jdk.VirtualThreadSubmitFailed")
SAMPLE_EVENTS = ("jdk.ExecutionSample",)
# Where threads blocked (S1-flame-java). Its own profiler: a server that sleeps per request (05's /io) would
# write an event per request.
LOCK_EVENTS = ("jdk.ThreadPark", "jdk.JavaMonitorEnter", "jdk.ThreadSleep")

RECORDING_FILE = "jfr-events.jfr.gz"
LOCK_RECORDING_FILE = "jfr-locks.jfr.gz"

# kind -> (recording file, its event types to keep, the JSON print of earlier captures, without its suffix)
_KINDS = {
    "runtime": (RECORDING_FILE, RUNTIME_EVENTS, "jfr.json"),
    "samples": (RECORDING_FILE, SAMPLE_EVENTS, "jfr-samples.json"),
    "locks": (LOCK_RECORDING_FILE, LOCK_EVENTS, "jfr-locks.json"),
}
# As the harness wrote them, then as the committed runs keep them.
PRINTED_SUFFIXES = (".gz", ".xz")


def captured_jfr_file(directory: Path, kind: str) -> Path | None:
    """The file that holds a trial's JFR events of one kind ("runtime", "samples", "locks"), or None."""
    recording, _types, printed = _kind(kind)
    for name in (recording, *(printed + suffix for suffix in PRINTED_SUFFIXES)):
        if (Path(directory) / name).exists():
            return Path(directory) / name
    return None


def read_captured_jfr(directory: Path, kind: str) -> list[dict] | None:
    """A trial's JFR events of one kind, shaped as `jfr print --json` gives them; None when not captured."""
    _recording, types, _printed = _kind(kind)
    path = captured_jfr_file(directory, kind)
    if path is None:
        return None
    if path.name.endswith(".jfr.gz"):
        return read_jfr_recording(path, types)
    return read_jfr_json(path)


def captured_jfr_stacks(directory: Path, window_unix_s: tuple[float, float] | None = None) -> pd.DataFrame | None:
    """A trial's folded CPU stacks (jdk.ExecutionSample, schema.py's stacks) or None when not captured.

    window_unix_s = (start, end), Unix seconds: only samples whose
    startTime lies inside it count (the recording runs from the JVM's
    start). From a recording this is jfr.read_jfr_stacks, which reads the
    bytes straight into the counts; from an earlier capture's JSON print,
    jfr_stacks on the events inside the window: the same table either way.
    """
    path = captured_jfr_file(directory, "samples")
    if path is None:
        return None
    if path.name.endswith(".jfr.gz"):
        return read_jfr_stacks(path, SAMPLE_EVENTS[0], window_unix_s=window_unix_s)
    return jfr_stacks(events_in_window(read_jfr_json(path), window_unix_s), SAMPLE_EVENTS[0])


def _kind(kind: str) -> tuple[str, tuple[str, ...], str]:
    try:
        return _KINDS[kind]
    except KeyError:
        raise ValueError(f"kind must be one of {sorted(_KINDS)}, not {kind!r}") from None
