"""The runtime-independent tables every profile parser produces.

gc_events: one row per garbage collection cycle or per stop-the-world pause.

| column | dtype | meaning |
| --- | --- | --- |
| runtime | string | "go", "java", ... (the caller says; parsers default to their runtime) |
| trial | Int64 | trial number from the run folder, <NA> when not given |
| t_s | float64 | seconds from the source's origin to the start of the event (each parser documents its origin; NaN when the source has no time) |
| pause_s | float64 | stop-the-world time in seconds (for a cycle: the sum of its pauses) |
| heap_before_bytes | Int64 | heap in use when the collection started, bytes |
| heap_after_bytes | Int64 | heap in use after it: Go's marked live heap, JFR's "After GC" heapUsed |
| cause | string | why it ran: Go "automatic"/"forced", JFR's cause ("G1 Evacuation Pause", "System.gc()", ...) |
| gc_id | Int64 | the runtime's collection number (gctrace "gc N", JFR gcId) |
| collector | string | "go", or JFR's collector name ("G1New", "G1Old", ...) |
| kind | string | "cycle": the row is one collection and pause_s its total pause; "pause": the row is one stop-the-world pause |
| source | string | "gctrace", "go_metrics", "go_memstats", "jfr" |

thread_counts: one row per reading of a thread / goroutine / task count.

| column | dtype | meaning |
| --- | --- | --- |
| runtime, trial | as above | |
| t_s | float64 | seconds from the source's origin to the reading |
| metric | string | what was counted, e.g. "goroutines", "os_threads", "java_threads_active" |
| count | Int64 | the count |
| source | string | "go_metrics", "pprof_goroutine", "jfr" |

stacks (folded stacks): one row per distinct stack.

| column | dtype | meaning |
| --- | --- | --- |
| stack | string | frames root first, joined by ";" (frame names never contain ";") |
| count | int64 | samples (or the chosen sample value) with exactly this stack |
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

GC_EVENT_DTYPES: dict[str, str] = {
    "runtime": "string",
    "trial": "Int64",
    "t_s": "float64",
    "pause_s": "float64",
    "heap_before_bytes": "Int64",
    "heap_after_bytes": "Int64",
    "cause": "string",
    "gc_id": "Int64",
    "collector": "string",
    "kind": "string",
    "source": "string",
}
GC_EVENT_COLUMNS: tuple[str, ...] = tuple(GC_EVENT_DTYPES)

THREAD_COUNT_DTYPES: dict[str, str] = {
    "runtime": "string",
    "trial": "Int64",
    "t_s": "float64",
    "metric": "string",
    "count": "Int64",
    "source": "string",
}
THREAD_COUNT_COLUMNS: tuple[str, ...] = tuple(THREAD_COUNT_DTYPES)

STACK_DTYPES: dict[str, str] = {"stack": "string", "count": "int64"}
STACK_COLUMNS: tuple[str, ...] = tuple(STACK_DTYPES)


def _frame(rows: Iterable[Mapping[str, object]] | Mapping[str, list], dtypes: dict[str, str]) -> pd.DataFrame:
    if isinstance(rows, Mapping):
        frame = pd.DataFrame({column: rows.get(column, []) for column in dtypes})
    else:
        frame = pd.DataFrame.from_records(list(rows), columns=list(dtypes))
    for column, dtype in dtypes.items():
        if dtype in ("Int64", "int64"):
            # Through float first would lose precision above 2**53; pandas'
            # nullable integer conversion keeps exact integers and None -> <NA>.
            frame[column] = pd.array(frame[column].tolist(), dtype=dtype)
        else:
            frame[column] = frame[column].astype(dtype)
    return frame


def gc_events_frame(rows: Iterable[Mapping[str, object]] | Mapping[str, list] = ()) -> pd.DataFrame:
    """A gc_events DataFrame (columns and dtypes above) from row dicts or columns."""
    return _frame(rows, GC_EVENT_DTYPES)


def thread_counts_frame(rows: Iterable[Mapping[str, object]] | Mapping[str, list] = ()) -> pd.DataFrame:
    """A thread_counts DataFrame (columns and dtypes above) from row dicts or columns."""
    return _frame(rows, THREAD_COUNT_DTYPES)


def stacks_frame(counts: Mapping[str, int] | Iterable[tuple[str, int]] = ()) -> pd.DataFrame:
    """A stacks DataFrame from {stack: count} or (stack, count) pairs.

    Equal stacks are summed, rows with count 0 dropped, and rows sorted by
    stack so that the same profile always gives the same table (and the
    same flame graph: flamegraph.pl also sorts before merging).
    """
    if isinstance(counts, Mapping):
        merged = counts  # keys are already distinct
    else:
        merged = {}
        for stack, count in counts:
            merged[stack] = merged.get(stack, 0) + int(count)
    stacks = sorted(stack for stack, count in merged.items() if count != 0)
    return pd.DataFrame(
        {
            "stack": pd.array(stacks, dtype="string"),
            "count": np.fromiter((merged[stack] for stack in stacks), dtype=np.int64, count=len(stacks)),
        }
    )


# The fewest samples a profile share, a profile-based verdict or a flame graph is drawn from (per trial for a
# verdict, in all for a graph). Below 100, one sample is a whole percentage point or more of every share, a third
# of the smallest threshold a claim names (S1-flame-go's 3%), and a share's binomial standard error at a 5% hot
# spot is over 2 points: the graph would show noise as structure. JFR samples only threads running Java code, so
# an I/O-bound Java server can give fewer (06's java-platform gave 7 in a window): that is "not testable here".
MIN_PROFILE_SAMPLES = 100
