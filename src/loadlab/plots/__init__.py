"""Publication figures in one style (docs/architecture.md, "Figures and report").

Every figure function takes tidy DataFrames with unit-carrying column names
and returns a matplotlib Figure (not registered with pyplot, so a notebook
shows it once); `save_figure` writes it as SVG and 300 dpi PNG.
"""

from .forest import forest_figure
from .gc import gc_pause_figure
from .latency import latency_spectrum_figure, percentile_to_nines
from .style import (
    RUNTIME_COLOURS,
    SavedFigure,
    axis_label,
    runtime_colour,
    runtime_marker,
    runtime_order,
    save_figure,
    spans_decades,
    style_context,
    style_rc,
)
from .throughput import throughput_figure
from .timeseries import resources_over_time_figure

__all__ = [
    "RUNTIME_COLOURS",
    "SavedFigure",
    "axis_label",
    "forest_figure",
    "gc_pause_figure",
    "latency_spectrum_figure",
    "percentile_to_nines",
    "resources_over_time_figure",
    "runtime_colour",
    "runtime_marker",
    "runtime_order",
    "save_figure",
    "spans_decades",
    "style_context",
    "style_rc",
    "throughput_figure",
]
