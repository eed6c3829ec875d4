"""One look for every figure: seaborn "paper" context, units, tick formats.

Colours, markers and line styles per runtime live in `palette`. Every
figure function draws inside `style_context()`, so figures look the same
whatever the caller's rcParams, and the caller's global state is left
alone. Memory is shown in MiB everywhere (the tables use MiB too): a
``*_bytes`` column is divided by 2**20 before it is drawn (`display_values`)
and labelled "(MiB)" (`axis_label`); the unit facts and a metric's label come
from `loadlab.units` and `loadlab.metrics`. Saving is `save` (`save_figure`),
which lints every figure at its saved size (`lint`) before writing it;
this module imports neither.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator

import matplotlib
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter, FuncFormatter, LogLocator, NullFormatter

from loadlab import metrics, units

PNG_DPI = 300


def style_rc() -> dict:
    """rcParams of the collection: seaborn paper context on a white grid, 300 dpi output."""
    rc: dict = {}
    rc.update(sns.axes_style("whitegrid"))
    rc.update(sns.plotting_context("paper"))
    rc.update(
        {
            # Ticks on: a log axis without them is hard to read.
            "xtick.bottom": True,
            "ytick.left": True,
            "axes.edgecolor": ".3",
            "grid.color": ".88",
            "legend.frameon": False,
            "savefig.dpi": PNG_DPI,
            "figure.dpi": 100,
            # Stable element ids, so that re-rendered SVGs diff cleanly.
            "svg.hashsalt": "loadlab",
            "pdf.fonttype": 42,
        }
    )
    return rc


@contextlib.contextmanager
def style_context() -> Iterator[None]:
    """Apply `style_rc()` for the duration of a with-block."""
    with matplotlib.rc_context(style_rc()):
        yield


def new_figure(width_in: float = 6.0, height_in: float = 3.6, **subplots) -> tuple[Figure, np.ndarray | object]:
    """A Figure (not registered with pyplot, so notebooks show it once) and its axes.

    Call inside `style_context()`.
    """
    figure = Figure(figsize=(width_in, height_in), layout="constrained")
    axes = figure.subplots(**subplots)
    return figure, axes


def spans_decades(values: Iterable[float], decades: float = 1.0) -> bool:
    """True if positive `values` span at least `decades` orders of magnitude (use a log axis)."""
    array = np.asarray(list(values), dtype=float)
    array = array[np.isfinite(array) & (array > 0)]
    if array.size < 2:
        return False
    return bool(np.log10(array.max() / array.min()) >= decades)


# Axes that are not metrics (loadlab.metrics labels those): load levels, time, per-second series.
_KNOWN_LABELS = {
    "established_connections": "TCP connections (kernel)",
    "successful_rps": "successful answers (req/s)",
    "concurrency": "concurrency (connections)",
    "connections": "concurrency (connections)",
    "connections_held_at_level": "connections held (kernel count, median at each level asked)",
    "level": "load level",
    "offered_rps": "offered rate (req/s)",
    "offered_rate_rps": "offered rate (req/s)",
    "rate_rps": "offered rate (req/s)",
    "t_s": "time in the measured window (s)",
    "memory_in_use_bytes": "memory in use (MiB)",
    "tasks": "OS threads (pids cgroup)",
    "pause_s": "GC pause (s)",
    "latency_s": "latency (s)",
}
# Where the level axis comes from, by the column the figure was given: what one level is called.
LEVEL_UNITS = {"concurrency": "connections", "connections": "connections", "offered_rps": "req/s offered",
               "offered_rate_rps": "req/s offered", "rate_rps": "req/s offered"}  # fmt: skip


def axis_label(column: str) -> str:
    """Human axis label with unit: a metric's label (`loadlab.metrics`), else one from a unit-carrying column name
    (``latency_p99_s`` -> "latency p99 (s)", bytes in MiB: `loadlab.units.axis_text`)."""
    return _KNOWN_LABELS.get(column) or metrics.label(column)


def display_values(column: str, values) -> pd.Series:
    """`values` in the unit `axis_label(column)` names: bytes become MiB, everything else is unchanged."""
    return units.axis_values(column, values)


def seconds_formatter() -> EngFormatter:
    """Tick labels like "250 µs", "1 ms", "2 s"."""
    return EngFormatter(unit="s", places=None, sep="\N{NO-BREAK SPACE}")


def count_formatter() -> EngFormatter:
    """Tick labels like "500", "20k", "1.5M"."""
    return EngFormatter(unit="", sep="")


def format_log_axis(axis, values, formatter) -> None:
    """Tick labels of a log axis: decades, plus 2, 3 and 5 times them on a short axis.

    Values spanning under 1.5 decades get labels at 2, 3 and 5 times each
    decade, under 2 decades at 2 and 5 times, so that a short axis has
    enough labels to read a value from; longer axes label decades only.
    Without this, matplotlib labels the minor ticks of a short log axis in
    scientific notation ("4×10^4") beside the formatter's "10k".
    """
    array = np.asarray(pd.to_numeric(pd.Series(values), errors="coerce"), dtype=float)
    array = array[np.isfinite(array) & (array > 0)]
    span = np.log10(array.max() / array.min()) if array.size else np.inf
    axis.set_major_locator(LogLocator(base=10))
    axis.set_major_formatter(formatter)
    if span < 2:
        axis.set_minor_locator(LogLocator(base=10, subs=(2.0, 3.0, 5.0) if span < 1.5 else (2.0, 5.0)))
        axis.set_minor_formatter(formatter)
    else:
        axis.set_minor_locator(LogLocator(base=10, subs=tuple(range(2, 10))))
        axis.set_minor_formatter(NullFormatter())


def plain_number(value: float) -> str:
    """A tick or level as a reader writes it: 1000 -> "1,000", 0.5 -> "0.5", 150.0 -> "150"."""
    if not np.isfinite(value):
        return ""
    if abs(value) >= 1000 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:.3g}"


def compact_number(value: float) -> str:
    """A tick on a narrow axis: as plain_number below 10,000, in whole thousands above (20000 -> "20k", 150000 ->
    "150k"; a log axis's ticks there are whole thousands). Not count_formatter: its SI prefixes would label a
    panel's values under 1 in milli ("500m")."""
    if np.isfinite(value) and abs(value) >= 10_000:
        return f"{value / 1000:,.0f}k"
    return plain_number(value)


def compact_formatter() -> FuncFormatter:
    """Tick labels of compact_number: for panels too narrow for "100,000" beside "200,000"."""
    return FuncFormatter(lambda value, _position: compact_number(value))


def plain_formatter() -> FuncFormatter:
    """Tick labels with thousands separators and at most 3 significant digits below 1,000."""
    return FuncFormatter(lambda value, _position: plain_number(value))
