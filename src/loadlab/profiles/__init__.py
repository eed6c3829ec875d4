"""Profiles and GC behaviour from every runtime, in one shape (docs/architecture.md, "Profiles and GC").

Tables (columns and units in schema.py):

- gc_events: one row per GC cycle or pause, from Go gctrace (gctrace),
  Go runtime/metrics and MemStats via expvar (go_metrics), and JFR (jfr).
- thread_counts: goroutines / threads over time (go_metrics, pprof, jfr).
- stacks: folded stacks from pprof (pprof), JFR execution samples (jfr),
  `perf script` (perf) and py-spy raw output (pyspy); text form in folded.

Views: flamegraph.flamegraph_svg (interactive SVG for HTML reports),
flamefigure.flame_figure (matplotlib), both differential with `baseline=`.

JFR comes from the binary recording (jfr_recording, no JVM needed) or from
`jfr print --json` (jfr); jfr_captures knows which file of a trial holds
which events.

Each module has parse_* functions taking the file's content and read_*
functions taking a path (gzip-compressed files are read transparently).
"""

from .flamefigure import flame_figure
from .flamegraph import flamegraph_svg
from .folded import (
    format_folded,
    inclusive_counts,
    leaf_counts,
    merge_stacks,
    parse_folded,
    read_folded,
    total_count,
    write_folded,
)
from .gctrace import gctrace_gc_events, parse_gctrace, read_gctrace
from .go_metrics import (
    go_memstats_gc_events,
    go_metrics_gc_events,
    go_thread_counts,
    histogram,
    histogram_delta,
    parse_expvar,
    read_expvar,
    scalar_metrics,
)
from .jfr import (
    event_counts,
    events_in_window,
    jfr_gc_events,
    jfr_gc_pauses,
    jfr_pinned,
    jfr_stacks,
    jfr_thread_counts,
    parse_jfr_json,
    read_jfr_json,
    read_jfr_stacks,
)
from .jfr_captures import captured_jfr_file, captured_jfr_stacks, read_captured_jfr
from .jfr_recording import JfrFormatError, read_jfr_recording
from .perf import parse_perf_script, read_perf_script
from .pprof import (
    goroutine_count,
    goroutine_thread_counts,
    parse_pprof,
    pprof_stacks,
    pprof_totals,
    read_pprof,
    read_pprof_stacks,
)
from .pyspy import read_pyspy_raw
from .schema import (
    GC_EVENT_COLUMNS,
    MIN_PROFILE_SAMPLES,
    STACK_COLUMNS,
    THREAD_COUNT_COLUMNS,
    gc_events_frame,
    stacks_frame,
    thread_counts_frame,
)

__all__ = [
    "MIN_PROFILE_SAMPLES",
    "flame_figure",
    "GC_EVENT_COLUMNS",
    "STACK_COLUMNS",
    "THREAD_COUNT_COLUMNS",
    "event_counts",
    "flamegraph_svg",
    "format_folded",
    "gc_events_frame",
    "gctrace_gc_events",
    "go_memstats_gc_events",
    "go_metrics_gc_events",
    "go_thread_counts",
    "goroutine_count",
    "goroutine_thread_counts",
    "histogram",
    "histogram_delta",
    "inclusive_counts",
    "jfr_gc_events",
    "jfr_gc_pauses",
    "jfr_pinned",
    "jfr_stacks",
    "jfr_thread_counts",
    "leaf_counts",
    "merge_stacks",
    "parse_expvar",
    "parse_folded",
    "parse_gctrace",
    "parse_jfr_json",
    "parse_perf_script",
    "parse_pprof",
    "pprof_stacks",
    "pprof_totals",
    "read_expvar",
    "read_folded",
    "read_gctrace",
    "read_jfr_json",
    "read_jfr_recording",
    "read_jfr_stacks",
    "events_in_window",
    "read_captured_jfr",
    "captured_jfr_stacks",
    "captured_jfr_file",
    "JfrFormatError",
    "read_perf_script",
    "read_pprof",
    "read_pprof_stacks",
    "read_pyspy_raw",
    "scalar_metrics",
    "stacks_frame",
    "thread_counts_frame",
    "total_count",
    "write_folded",
]
