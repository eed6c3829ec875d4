"""Publication figures in one style (docs/architecture.md).

Every figure function takes tidy DataFrames with unit-carrying column names
and returns a matplotlib Figure (not registered with pyplot, so a notebook
shows it once); `save_figure` lints it (`lint_figure`) and writes it as SVG
and 300 dpi PNG. Colours, markers and line styles per runtime and variant
come from `palette`; trials that are not evidence are drawn hollow.
"""

from .atlas import atlas_figure
from .ceiling import loadgen_ceiling_figure
from loadlab.units import MIB

from .describe import FigureImage, describe_figure
from .forest import forest_figure
from .gc import gc_pause_figure
from .knee import latency_knee_figure
from .latency import latency_spectrum_figure, percentile_label, percentile_to_nines
from .lint import LintReport, lint_figure
from .palette import RUNTIME_COLOURS, SeriesStyle, runtime_colour, runtime_marker, runtime_order
from .palette import series_style
from .save import SavedFigure, save_figure
from .style import axis_label, display_values, spans_decades, style_context, style_rc
from .throughput import ReferenceLine, cpu_per_request_figure, throughput_figure
from .timeseries import memory_over_time_figure, resources_over_time_figure

__all__ = [
    "MIB",
    "RUNTIME_COLOURS",
    "FigureImage",
    "LintReport",
    "ReferenceLine",
    "SavedFigure",
    "SeriesStyle",
    "atlas_figure",
    "axis_label",
    "cpu_per_request_figure",
    "describe_figure",
    "display_values",
    "forest_figure",
    "gc_pause_figure",
    "latency_knee_figure",
    "latency_spectrum_figure",
    "loadgen_ceiling_figure",
    "lint_figure",
    "memory_over_time_figure",
    "percentile_label",
    "percentile_to_nines",
    "resources_over_time_figure",
    "runtime_colour",
    "runtime_marker",
    "runtime_order",
    "save_figure",
    "series_style",
    "spans_decades",
    "style_context",
    "style_rc",
    "throughput_figure",
]
