"""JDK Flight Recorder events from `jfr print --json` into tables.

The JSON is `{"recording": {"events": [{"type": "jdk.X", "values": {...}}, ...]}}`.
Field names are JFR's (see `jfr metadata` or the JDK's event docs):

- jdk.GarbageCollection: gcId, name (collector: G1New, G1Old, G1Full, ...),
  cause, startTime, duration, sumOfPauses, longestPause.
- jdk.GCHeapSummary: gcId, when ("Before GC" / "After GC"), heapUsed (bytes).
- jdk.GCPhasePause: gcId, name ("GC Pause", "GC Pause Remark", ...), startTime, duration.
- jdk.JavaThreadStatistics (periodic): activeCount, daemonCount,
  accumulatedCount (threads started since JVM start), peakCount.
- jdk.ExecutionSample: sampledThread, state, stackTrace {truncated, frames
  leaf first: method {type {name "java/lang/String"}, name}, lineNumber, type}}.
- jdk.VirtualThreadPinned (JDK 21+): eventThread, startTime, duration, stackTrace.

`jfr print` cuts every stack trace to 5 frames unless given --stack-depth
(and still says "truncated": false), so print with `--stack-depth 64` (the
recorder's own default depth; more if recorded with a larger
-XX:FlightRecorderOptions:stackdepth). jfr_stacks warns when every stack
is at most 5 frames deep and some are exactly 5.

Times are ISO-8601 instants ("2026-11-21T10:11:02.112914803Z") and
durations ISO-8601 ("PT0.003696475S"). t_s is seconds since `origin`: an
instant you pass (the trial's start), by default the earliest startTime
among the events given (which depends on which events were printed, so pass
the trial's start when comparing recordings).
"""

from __future__ import annotations

import gc
import json
import math
import re
import warnings
from collections.abc import Iterable, Mapping
from datetime import datetime

import numpy as np
import pandas as pd

from ._sources import PathLike, read_bytes
from .folded import clean_frame
from .jfr_recording import read_jfr_recording, read_jfr_stack_counts
from .schema import gc_events_frame, stacks_frame, thread_counts_frame

_DURATION = re.compile(r"^(?P<sign>-)?PT(?:(?P<h>-?\d+)H)?(?:(?P<m>-?\d+)M)?(?:(?P<s>-?[0-9.]+)S)?$")

# thread_counts metric name -> jdk.JavaThreadStatistics field.
THREAD_STATISTICS = {
    "java_threads_active": "activeCount",
    "java_threads_daemon": "daemonCount",
    "java_threads_peak": "peakCount",
    "java_threads_started": "accumulatedCount",
}

TRUNCATED_FRAME = "[truncated]"
PRINT_DEFAULT_STACK_DEPTH = 5  # `jfr print` keeps this many frames unless given --stack-depth

Origin = datetime | pd.Timestamp | str | float | None


def parse_jfr_json(data: bytes | str) -> list[dict]:
    """The list of events from `jfr print --json` output (bytes or text)."""
    # A 200 MB print makes millions of small dicts; the cyclic garbage
    # collector would rescan them all again and again while they are being
    # built (none of them is garbage), so it is paused during the load.
    enabled = gc.isenabled()
    gc.disable()
    try:
        document = json.loads(data)
    finally:
        if enabled:
            gc.enable()
    try:
        return document["recording"]["events"]
    except (KeyError, TypeError):
        raise ValueError("not `jfr print --json` output: no recording.events") from None


def read_jfr_json(path: PathLike) -> list[dict]:
    """parse_jfr_json on a file (plain, gzip or xz)."""
    return parse_jfr_json(read_bytes(path))


def event_counts(events: Iterable[Mapping]) -> pd.Series:
    """Events per type, largest first (compare with `jfr summary`)."""
    counts: dict[str, int] = {}
    for event in events:
        counts[event["type"]] = counts.get(event["type"], 0) + 1
    return pd.Series(counts, dtype="int64").sort_values(ascending=False, kind="stable")


def events_of(events: Iterable[Mapping], event_type: str) -> list[dict]:
    """The `values` of every event of one type, in file order."""
    return [event["values"] for event in events if event["type"] == event_type]


def duration_s(text: str | None) -> float:
    """Seconds in an ISO-8601 duration as java.time.Duration prints it ("PT1M2.5S"); NaN if absent."""
    if text is None:
        return math.nan
    match = _DURATION.match(text)
    if match is None:
        raise ValueError(f"not an ISO-8601 duration: {text!r}")
    seconds = 3600 * float(match["h"] or 0) + 60 * float(match["m"] or 0) + float(match["s"] or 0)
    return -seconds if match["sign"] else seconds


def _instants_ns(texts: list[str]) -> np.ndarray:
    if not texts:
        return np.array([], dtype=np.int64)
    # pandas 3 picks the resolution from the text (microseconds when no
    # instant has more digits), so the unit is fixed before taking integers.
    instants = pd.to_datetime(pd.Series(texts), format="ISO8601", utc=True)
    return instants.dt.as_unit("ns").astype("int64").to_numpy()


def _origin_ns(origin: Origin, events: Iterable[Mapping]) -> int:
    if origin is None:
        starts = [event["values"]["startTime"] for event in events if "startTime" in event["values"]]
        if not starts:
            return 0
        return int(_instants_ns(starts).min())
    if isinstance(origin, (int, float)):
        return int(round(origin * 1e9))
    instant = pd.Timestamp(origin)
    if instant.tzinfo is None:
        instant = instant.tz_localize("UTC")
    return int(instant.value)  # .value is nanoseconds whatever the Timestamp's unit


def _seconds_since(texts: list[str], origin_ns: int) -> list[float]:
    return ((_instants_ns(texts) - origin_ns) / 1e9).tolist()


def jfr_gc_events(
    events: list[Mapping], runtime: str = "java", trial: int | None = None, origin: Origin = None
) -> pd.DataFrame:
    """gc_events (schema.py): one "cycle" row per jdk.GarbageCollection.

    pause_s is sumOfPauses (all stop-the-world pauses of the collection);
    heap before/after are jdk.GCHeapSummary's heapUsed "Before GC" / "After GC"
    with the same gcId (<NA> if not recorded); cause and collector are JFR's.
    """
    collections = events_of(events, "jdk.GarbageCollection")
    heap: dict[tuple[int, str], int] = {}
    for summary in events_of(events, "jdk.GCHeapSummary"):
        heap[(summary["gcId"], summary["when"])] = summary["heapUsed"]
    origin_ns = _origin_ns(origin, events)
    rows = len(collections)
    return _jfr_gc_frame(
        runtime, trial, rows, "cycle",
        {
            "t_s": _seconds_since([c["startTime"] for c in collections], origin_ns),
            "pause_s": [duration_s(c.get("sumOfPauses")) for c in collections],
            "heap_before_bytes": [heap.get((c["gcId"], "Before GC")) for c in collections],
            "heap_after_bytes": [heap.get((c["gcId"], "After GC")) for c in collections],
            "cause": [c.get("cause") for c in collections],
            "gc_id": [c["gcId"] for c in collections],
            "collector": [c.get("name") for c in collections],
        },
    )


def jfr_gc_pauses(
    events: list[Mapping], runtime: str = "java", trial: int | None = None, origin: Origin = None
) -> pd.DataFrame:
    """gc_events (schema.py): one "pause" row per jdk.GCPhasePause.

    A concurrent collector (G1 old/mixed, ZGC) pauses several times per
    cycle; these rows are the individual pauses. cause and collector come
    from the jdk.GarbageCollection with the same gcId; heap columns are <NA>.
    """
    pauses = events_of(events, "jdk.GCPhasePause")
    cycles = {c["gcId"]: c for c in events_of(events, "jdk.GarbageCollection")}
    origin_ns = _origin_ns(origin, events)
    rows = len(pauses)
    return _jfr_gc_frame(
        runtime, trial, rows, "pause",
        {
            "t_s": _seconds_since([p["startTime"] for p in pauses], origin_ns),
            "pause_s": [duration_s(p.get("duration")) for p in pauses],
            "heap_before_bytes": [None] * rows,
            "heap_after_bytes": [None] * rows,
            "cause": [cycles.get(p["gcId"], {}).get("cause") for p in pauses],
            "gc_id": [p["gcId"] for p in pauses],
            "collector": [cycles.get(p["gcId"], {}).get("name") for p in pauses],
        },
    )


def _jfr_gc_frame(runtime: str, trial: int | None, rows: int, kind: str, columns: dict) -> pd.DataFrame:
    """gc_events rows from JFR: `columns` between the runtime and trial and the kind ("cycle", "pause") and source."""
    return gc_events_frame({"runtime": [runtime] * rows, "trial": [trial] * rows, **columns,
                            "kind": [kind] * rows, "source": ["jfr"] * rows})


def jfr_thread_counts(
    events: list[Mapping], runtime: str = "java", trial: int | None = None, origin: Origin = None
) -> pd.DataFrame:
    """thread_counts (schema.py) from jdk.JavaThreadStatistics: four rows per reading.

    Metrics: java_threads_active, java_threads_daemon, java_threads_peak and
    java_threads_started (cumulative). Virtual threads are not platform
    threads and are not in these counts.
    """
    readings = events_of(events, "jdk.JavaThreadStatistics")
    t_s = _seconds_since([r["startTime"] for r in readings], _origin_ns(origin, events))
    return thread_counts_frame(
        [
            {"runtime": runtime, "trial": trial, "t_s": when, "metric": metric,
             "count": reading[field], "source": "jfr"}
            for reading, when in zip(readings, t_s)
            for metric, field in THREAD_STATISTICS.items()
            if field in reading
        ]
    )


def _thread_name(thread: Mapping | None) -> str:
    if not thread:
        return "[unknown thread]"
    name = thread.get("javaName") or thread.get("osName")
    if name:
        return name
    return "[virtual thread]" if thread.get("virtual") else "[unnamed thread]"


CUT_STACKS_MIN_SAMPLES = 20


def jfr_stacks(
    events: Iterable[Mapping],
    event_type: str = "jdk.ExecutionSample",
    line_numbers: bool = False,
    thread_root: bool = False,
) -> pd.DataFrame:
    """Folded stacks (schema.py) from the stack traces of one event type.

    Frames are "package.Class.method" (":line" appended with
    `line_numbers`), root first. `thread_root` puts the thread's name as
    the root frame. A stack JFR cut at its depth limit (truncated: true,
    -XX:FlightRecorderOptions stackdepth, default 64) gets a "[truncated]"
    root, since its real root is unknown. Each event counts 1. Use
    event_type="jdk.VirtualThreadPinned" for where virtual threads pinned.
    """
    names: dict[tuple, str] = {}
    # A recording read from the binary file shares one dict per distinct frame; naming it once by its id is
    # safe while `events` keeps every frame alive, which it does for the whole call.
    names_by_frame: dict[int, str] = {}
    folded_by_trace: dict[int, str] = {}
    counts: dict[str, int] = {}
    deepest = 0
    for event in events:
        if event["type"] != event_type:
            continue
        values = event["values"]
        trace = values.get("stackTrace")
        if not trace:
            continue
        trace_frames = trace["frames"]
        deepest = max(deepest, len(trace_frames))
        if not thread_root:
            # The binary reader shares one trace dict between the events that recorded the same stack.
            folded = folded_by_trace.get(id(trace))
            if folded is not None:
                counts[folded] = counts.get(folded, 0) + 1
                continue
        frames = list(map(names_by_frame.get, map(id, reversed(trace_frames))))
        if None in frames:
            for index, frame in enumerate(reversed(trace_frames)):
                if frames[index] is not None:
                    continue
                method = frame["method"]
                key = (method["type"]["name"], method["name"], frame.get("lineNumber") if line_numbers else None)
                name = names.get(key)
                if name is None:
                    name = names[key] = _frame_name(key[0], key[1], key[2], line_numbers)
                frames[index] = names_by_frame[id(frame)] = name
        if trace.get("truncated"):
            frames.insert(0, TRUNCATED_FRAME)
        if thread_root:
            frames.insert(0, clean_frame(_thread_name(values.get("sampledThread") or values.get("eventThread"))))
        stack = ";".join(frames)
        if not thread_root:
            folded_by_trace[id(trace)] = stack
        counts[stack] = counts.get(stack, 0) + 1
    _warn_if_cut(deepest, counts, event_type)
    return stacks_frame(counts)


def _frame_name(type_name: str, method_name: str, line_number, line_numbers: bool) -> str:
    """One folded frame: "package.Class.method", with ":line" when line_numbers."""
    name = clean_frame(type_name.replace("/", ".") + "." + method_name)
    if line_numbers:
        name += f":{line_number}"
    return name


def _warn_if_cut(deepest: int, counts: Mapping[str, int], event_type: str) -> None:
    # A handful of samples can all be shallow by chance (a window cut to a few samples); many cannot.
    if deepest == PRINT_DEFAULT_STACK_DEPTH and sum(counts.values()) >= CUT_STACKS_MIN_SAMPLES:
        warnings.warn(
            f"every {event_type} stack has at most {PRINT_DEFAULT_STACK_DEPTH} frames: `jfr print` cut them "
            "(its default --stack-depth); print with --stack-depth 64 to get whole stacks",
            stacklevel=3,
        )


def events_in_window(events: list[Mapping], window_unix_s: tuple[float, float] | None) -> list[Mapping]:
    """The events whose startTime, in Unix seconds, lies inside (start, end), ends included (all when None).

    An event without a startTime is outside every window.
    """
    if window_unix_s is None or not events:
        return list(events)
    starts = pd.to_datetime(pd.Series([event["values"].get("startTime") for event in events], dtype="object"),
                            format="ISO8601", utc=True)
    seconds = starts.dt.as_unit("ns").astype("int64") / 1e9
    keep = ((seconds >= window_unix_s[0]) & (seconds <= window_unix_s[1])).to_numpy()
    return [event for event, kept in zip(events, keep) if kept]


def read_jfr_stacks(
    path_or_bytes: PathLike | bytes,
    event_type: str = "jdk.ExecutionSample",
    line_numbers: bool = False,
    window_unix_s: tuple[float, float] | None = None,
) -> pd.DataFrame:
    """Folded stacks (schema.py) of one event type straight from a binary .jfr recording (plain or gzip).

    The same table as jfr_stacks(events_in_window(read_jfr_recording(path,
    [event_type]), window_unix_s), event_type, line_numbers) (frames root
    first, "[truncated]" root for a stack JFR cut, each event counts 1),
    without building an event or frame dict per sample: on a 40 s
    recording at a 1 ms sampling period that is ~3 times faster
    (benchmarks/bench_profiles.py). window_unix_s = (start, end), Unix
    seconds, keeps the events whose startTime lies inside it.
    """

    def frame_name(frame: Mapping) -> str:
        method = frame["method"]
        return _frame_name(method["type"]["name"], method["name"], frame.get("lineNumber"), line_numbers)

    result = read_jfr_stack_counts(path_or_bytes, frame_name, event_type, window_unix_s, TRUNCATED_FRAME)
    if result is None:  # a layout the fast path does not read: the general reader
        events = events_in_window(read_jfr_recording(path_or_bytes, [event_type]), window_unix_s)
        return jfr_stacks(events, event_type, line_numbers)
    counts, deepest = result
    _warn_if_cut(deepest, counts, event_type)
    return stacks_frame(counts)


def jfr_pinned(
    events: list[Mapping], runtime: str = "java", trial: int | None = None, origin: Origin = None
) -> pd.DataFrame:
    """jdk.VirtualThreadPinned as rows: runtime, trial, t_s, duration_s, java_thread_id, frame.

    `frame` is the innermost frame outside java.lang/jdk.internal (where the
    application blocked while pinned), or the top frame when all are JDK.
    """
    pinned = events_of(events, "jdk.VirtualThreadPinned")
    frames = []
    for values in pinned:
        trace = (values.get("stackTrace") or {}).get("frames") or []
        chosen = None
        for frame in trace:
            type_name = frame["method"]["type"]["name"]
            if not type_name.startswith(("java/", "jdk/", "sun/")):
                chosen = frame
                break
        chosen = chosen or (trace[0] if trace else None)
        frames.append(
            None if chosen is None
            else chosen["method"]["type"]["name"].replace("/", ".") + "." + chosen["method"]["name"]
        )
    return pd.DataFrame(
        {
            "runtime": pd.array([runtime] * len(pinned), dtype="string"),
            "trial": pd.array([trial] * len(pinned), dtype="Int64"),
            "t_s": _seconds_since([v["startTime"] for v in pinned], _origin_ns(origin, events)),
            "duration_s": [duration_s(v.get("duration")) for v in pinned],
            "java_thread_id": pd.array([(v.get("eventThread") or {}).get("javaThreadId") for v in pinned],
                                       dtype="Int64"),
            "frame": pd.array(frames, dtype="string"),
        }
    )
