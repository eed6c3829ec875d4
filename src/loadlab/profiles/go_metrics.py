"""Go's expvar /debug/vars: runtime/metrics under "gc", and "memstats".

The shape (servers/go-nethttp and the fixture program publish it):

    {"cmdline": [...],
     "memstats": {... runtime.MemStats, including NumGC, PauseNs[256], PauseEnd[256] ...},
     "gc": {"/gc/cycles/total:gc-cycles": 149,                      # Uint64 -> number
            "/gc/heap/goal:bytes": 9654882,
            "/gc/pauses:seconds": {"buckets": ["-Inf", 0, 6.4e-08, ..., "+Inf"],
                                   "counts": [0, 12, ...]},         # Float64Histogram
            ...}}

Under "gc" are all runtime/metrics whose names start with /gc/, /sched/ or
/memory/classes/heap/, plus /memory/classes/total:bytes. A histogram has
len(buckets) == len(counts) + 1: counts[i] falls in [buckets[i], buckets[i+1]).
JSON has no infinities, so infinite bounds are the strings "-Inf" and
"+Inf" (and NaN "NaN"). Counts are cumulative since the process started:
take the difference of two snapshots for a measurement window.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from ._sources import PathLike, read_text
from .schema import gc_events_frame, thread_counts_frame

EXPVAR_KEY = "gc"
# Go 1.22 renamed /gc/pauses:seconds (now deprecated, same data) to
# /sched/pauses/total/gc:seconds; we read the new name first.
PAUSE_METRICS = ("/sched/pauses/total/gc:seconds", "/gc/pauses:seconds")

_SPECIAL_FLOATS = {"+Inf": math.inf, "Inf": math.inf, "-Inf": -math.inf, "NaN": math.nan}

# thread_counts metric name -> runtime/metrics name.
THREAD_METRICS = {
    "goroutines": "/sched/goroutines:goroutines",
    "os_threads": "/sched/threads/total:threads",
    "gomaxprocs": "/sched/gomaxprocs:threads",
}


def parse_expvar(text: str) -> dict:
    """The /debug/vars JSON document as a dict."""
    return json.loads(text)


def read_expvar(path: PathLike) -> dict:
    """parse_expvar on a saved /debug/vars response."""
    return parse_expvar(read_text(path))


def runtime_metrics(expvars: Mapping) -> dict:
    """The runtime/metrics samples under the "gc" key, by metric name."""
    if EXPVAR_KEY not in expvars:
        raise KeyError(
            f"/debug/vars has no {EXPVAR_KEY!r} key (keys: {sorted(expvars)}); "
            "the server must publish runtime/metrics there (servers/CONTRACT.md, Profiling hooks)"
        )
    return expvars[EXPVAR_KEY]


def _number(value) -> float:
    return _SPECIAL_FLOATS[value] if isinstance(value, str) else value


def scalar_metrics(expvars: Mapping) -> pd.Series:
    """Every non-histogram runtime/metrics value, indexed by metric name (units in the name)."""
    metrics = runtime_metrics(expvars)
    values = {name: _number(value) for name, value in metrics.items() if not isinstance(value, Mapping)}
    return pd.Series(values, dtype=object).sort_index()


def histogram(expvars: Mapping, name: str | None = None) -> pd.DataFrame:
    """A runtime/metrics Float64Histogram as rows (lower, upper, count).

    `lower`/`upper` are the bucket bounds in the metric's unit (seconds for
    pauses), -inf/+inf at the ends; count is cumulative since the process
    started. `name` defaults to the GC pause histogram (PAUSE_METRICS).
    """
    metrics = runtime_metrics(expvars)
    if name is None:
        name = next((candidate for candidate in PAUSE_METRICS if candidate in metrics), PAUSE_METRICS[0])
    if name not in metrics:
        raise KeyError(f"runtime metric {name!r} is not in the expvar 'gc' map")
    value = metrics[name]
    bounds = np.array([_number(bound) for bound in value["buckets"]], dtype=float)
    counts = np.array(value["counts"], dtype=np.int64)
    if len(bounds) != len(counts) + 1:
        raise ValueError(f"{name}: {len(bounds)} bucket bounds for {len(counts)} counts (need one more bound)")
    return pd.DataFrame({"lower": bounds[:-1], "upper": bounds[1:], "count": counts})


def histogram_delta(before: Mapping, after: Mapping, name: str | None = None) -> pd.DataFrame:
    """histogram(after) minus histogram(before): what happened between two snapshots."""
    first, second = histogram(before, name), histogram(after, name)
    if not (
        np.array_equal(first["lower"], second["lower"], equal_nan=True)
        and np.array_equal(first["upper"], second["upper"], equal_nan=True)
    ):
        raise ValueError("the two snapshots have different bucket bounds (different Go versions?)")
    delta = second.copy()
    delta["count"] = second["count"] - first["count"]
    if (delta["count"] < 0).any():
        raise ValueError("counts went down between the snapshots: they come from different processes")
    return delta


def bucket_midpoints(buckets: pd.DataFrame) -> np.ndarray:
    """A representative value per bucket: the midpoint, or the finite bound of an open-ended bucket."""
    lower, upper = buckets["lower"].to_numpy(), buckets["upper"].to_numpy()
    middle = (lower + upper) / 2
    middle = np.where(np.isinf(lower), upper, middle)
    return np.where(np.isinf(upper), lower, middle)


def go_metrics_gc_events(
    after: Mapping,
    before: Mapping | None = None,
    runtime: str = "go",
    trial: int | None = None,
    name: str | None = None,
) -> pd.DataFrame:
    """gc_events (schema.py) from the pause histogram: one "pause" row per stop-the-world pause.

    Counts pauses since `before` (a snapshot taken earlier in the same
    process) or since the process started. Each GC cycle has two
    stop-the-world pauses (sweep termination and mark termination), so
    there are about twice as many rows as cycles. pause_s is the bucket's
    midpoint: Go's time histogram has 8 sub-buckets per power of two, so it
    is within about 6% of the true pause. t_s, heap and cause are unknown.
    """
    buckets = histogram(after, name) if before is None else histogram_delta(before, after, name)
    pause_s = np.repeat(bucket_midpoints(buckets), buckets["count"].to_numpy())
    rows = len(pause_s)
    return gc_events_frame(
        {
            "runtime": [runtime] * rows,
            "trial": [trial] * rows,
            "t_s": [math.nan] * rows,
            "pause_s": pause_s.tolist(),
            "heap_before_bytes": [None] * rows,
            "heap_after_bytes": [None] * rows,
            "cause": [None] * rows,
            "gc_id": [None] * rows,
            "collector": ["go"] * rows,
            "kind": ["pause"] * rows,
            "source": ["go_metrics"] * rows,
        }
    )


def go_memstats_gc_events(
    expvars: Mapping, runtime: str = "go", trial: int | None = None, origin_unix_s: float | None = None
) -> pd.DataFrame:
    """gc_events (schema.py) from expvar's "memstats": one "cycle" row per recent GC.

    runtime.MemStats keeps the last 256 cycles in circular buffers: PauseNs
    (the cycle's total stop-the-world time) and PauseEnd (when its last
    pause ended, Unix ns). So t_s here is the end of the cycle's last pause,
    in seconds since `origin_unix_s` (default: the earliest such end in the
    buffer). Heap sizes and causes are not recorded per cycle.
    """
    memstats = expvars["memstats"]
    last = int(memstats["NumGC"])
    gc_ids = list(range(max(1, last - 255), last + 1))
    pause_ns = [memstats["PauseNs"][(gc_id + 255) % 256] for gc_id in gc_ids]
    end_s = [memstats["PauseEnd"][(gc_id + 255) % 256] / 1e9 for gc_id in gc_ids]
    origin = (min(end_s) if end_s else 0.0) if origin_unix_s is None else origin_unix_s
    rows = len(gc_ids)
    return gc_events_frame(
        {
            "runtime": [runtime] * rows,
            "trial": [trial] * rows,
            "t_s": [end - origin for end in end_s],
            "pause_s": [ns / 1e9 for ns in pause_ns],
            "heap_before_bytes": [None] * rows,
            "heap_after_bytes": [None] * rows,
            "cause": [None] * rows,
            "gc_id": gc_ids,
            "collector": ["go"] * rows,
            "kind": ["cycle"] * rows,
            "source": ["go_memstats"] * rows,
        }
    )


def go_thread_counts(
    snapshots: Iterable[tuple[float, Mapping]], runtime: str = "go", trial: int | None = None
) -> pd.DataFrame:
    """thread_counts (schema.py) from (t_s, /debug/vars) pairs taken over a trial.

    The caller gives each snapshot's time (expvar carries none). Metrics:
    "goroutines", "os_threads" (Go 1.25+), "gomaxprocs", those present.
    """
    rows = []
    for t_s, expvars in snapshots:
        metrics = runtime_metrics(expvars)
        for metric, name in THREAD_METRICS.items():
            if name in metrics:
                rows.append(
                    {"runtime": runtime, "trial": trial, "t_s": float(t_s), "metric": metric,
                     "count": int(metrics[name]), "source": "go_metrics"}
                )
    return thread_counts_frame(rows)
