"""Helpers shared by the figure modules: input checks, excluded trials, medians with CIs, legends."""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from loadlab.judgements.evidence import loadgen_reason, saturated
from loadlab.stats.median import median_ci

from .palette import series_style
from .style import format_log_axis, seconds_formatter, spans_decades

# Colour of the legend's explanatory entries (what a line, a band or a hollow point means).
KEY_COLOUR = "0.35"


def require_columns(data: pd.DataFrame, columns: Sequence[str], figure: str) -> None:
    """Raise KeyError naming the figure and the missing columns."""
    missing = [column for column in columns if column not in data.columns]
    if missing:
        raise KeyError(
            f"{figure} needs column(s) {', '.join(missing)}; the data has {', '.join(map(str, data.columns))}"
        )
    if data.empty:
        raise ValueError(f"{figure}: the data is empty")


def exclusion_reasons(data: pd.DataFrame) -> pd.Series:
    """Why each row (trial) is not evidence, or "" when it is.

    The design's evidence rule: only trials that are ok, not stalled, and whose
    loadgen was not saturated. A failed trial reads its `failure_reason`
    ("stalled", "oom-killed", ...); a trial whose loadgen core was saturated
    measured the loadgen, not the server. Rows without `status` or
    `loadgen_saturated` columns are all evidence.
    """
    reasons = pd.Series("", index=data.index, dtype=object)
    if "loadgen_saturated" in data.columns:
        spoiled = saturated(data)
        # An open-loop generator that fell behind with its core not busy is named so (evidence.LOADGEN_BEHIND).
        reasons[spoiled] = [loadgen_reason(row) for row in data[spoiled].to_dict("records")]
    if "status" in data.columns:
        failed = data["status"].astype(str) != "ok"
        if "failure_reason" in data.columns:
            why = data["failure_reason"].where(data["failure_reason"].notna(), data["status"]).astype(str)
        else:
            why = data["status"].astype(str)
        reasons[failed] = why[failed]
    return reasons


def draw_trials(axes: Axes, x: np.ndarray, y: np.ndarray, excluded: np.ndarray, name: str, size: float = 14,
                alpha: float = 0.6) -> None:
    """One point per trial in the series' colour and marker (area `size` in pt², opacity `alpha`); hollow where
    `excluded` (not evidence)."""
    style = series_style(name)
    axes.scatter(x[~excluded], y[~excluded], s=size, color=style.colour, marker=style.marker, alpha=alpha,
                 linewidths=0, zorder=3)  # fmt: skip
    # Hollow: the trial is shown but is not evidence (see exclusion_reasons); its edge grows with the point.
    axes.scatter(x[excluded], y[excluded], s=size * 1.15, facecolors="none", edgecolors=style.colour,
                 marker=style.marker, linewidths=0.9 if size <= 16 else 1.3, zorder=3)  # fmt: skip


def median_summary(
    data: pd.DataFrame, group_column: str, x_column: str, y_column: str, confidence: float
) -> pd.DataFrame:
    """Per (group, x): median of y across rows (trials) with its CI (loadlab.stats.median_ci), and n.

    CI bounds are NaN below the minimum number of trials for the confidence,
    so a band simply is not drawn there. Pass evidence rows only.
    """
    rows = []
    for (group, x), block in data.groupby([group_column, x_column], sort=True):
        values = pd.to_numeric(block[y_column], errors="coerce").to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        if values.size == 0:
            continue
        estimate = median_ci(values, confidence)
        rows.append(
            {
                group_column: group,
                x_column: x,
                "median": estimate.median,
                "ci_low": estimate.ci_low,
                "ci_high": estimate.ci_high,
                "n": estimate.n,
            }
        )
    return pd.DataFrame(rows, columns=[group_column, x_column, "median", "ci_low", "ci_high", "n"])


def series_handle(name: str, marker: bool = True, marker_size: float = 5) -> Line2D:
    """A legend entry for one runtime or variant, drawn as the figure draws it (lines only: marker=False)."""
    style = series_style(name)
    return Line2D([], [], color=style.colour, marker=style.marker if marker else None, markersize=marker_size,
                  linestyle=style.linestyle, label=str(name))  # fmt: skip


def excluded_label(reasons: pd.Series, values: pd.Series | None = None, trials: pd.Series | None = None) -> str | None:
    """"excluded (hollow): loadgen saturated 11, stalled 6" (counts of trials), or None when none was excluded.

    With `values` (the plotted y per row, one row per trial), a reason whose
    trials have no value to draw (a stalled trial's CPU per request) says
    so, so that the count in the legend never promises points the reader
    cannot find. With `trials` (a trial id per row, for tables with many rows
    per trial, such as samples or percentiles), trials are counted, not rows.
    """
    counts = Counter(reason for reason in reasons if reason)
    if not counts:
        return None
    parts = []
    for reason, count in sorted(counts.items()):
        if trials is not None:
            count = trials[reasons == reason].nunique()
            parts.append(f"{reason} {count}")
            continue
        drawn = count if values is None else int(np.isfinite(values[reasons == reason].to_numpy(dtype=float)).sum())
        parts.append(f"{reason} {count}" + ("" if drawn == count else f" ({count - drawn} with no value to draw)"))
    return "excluded (hollow): " + ", ".join(parts)


def key_handles(
    confidence: float | None, reasons: pd.Series | None, median: str | None = "median of included trials",
    points: str | None = "one trial", values: pd.Series | None = None, marker_size: float = 4,
) -> list[Artist]:
    """Legend entries that say what the marks mean: median line, CI band, a trial, an excluded trial."""
    handles: list[Artist] = []
    if median:
        handles.append(Line2D([], [], color=KEY_COLOUR, linewidth=1.5, label=median))
    if confidence is not None:
        handles.append(Patch(color=KEY_COLOUR, alpha=0.25, linewidth=0, label=f"{confidence:.0%} CI of the median"))
    if points:
        handles.append(Line2D([], [], color=KEY_COLOUR, marker="o", markersize=4, linestyle="none", label=points))
    label = excluded_label(reasons, values) if reasons is not None else None
    if label:
        handles.append(Line2D([], [], color=KEY_COLOUR, marker="o", markersize=marker_size, markerfacecolor="none",
                              markeredgewidth=1.0 if marker_size <= 4 else 1.3, linestyle="none", label=label))  # fmt: skip
    return handles


def finish_figure(figure: Figure, title: str | None, handles: Sequence[Artist]) -> None:
    """The figure's title, when it has one, and its legend below the axes: how every figure ends."""
    if title:
        figure.suptitle(title)
    legend_below(figure, handles)


LEGEND_WRAP_CHARACTERS = 40


def legend_below(figure: Figure, handles: Sequence[Artist]) -> None:
    """One legend under the plotting area, never over a title or the data.

    As many columns as fit the figure's width: the legend is measured and
    narrowed one column at a time until it fits. A long entry (the excluded
    trials' reasons) is wrapped at LEGEND_WRAP_CHARACTERS, so that one entry
    cannot force a single column that pushes the axes off the figure.
    """
    if not handles:
        return
    # A label's own line breaks stand (where a break falls decides how an entry reads); each line wraps alone.
    labels = ["\n".join(textwrap.fill(line, LEGEND_WRAP_CHARACTERS) for line in str(handle.get_label()).split("\n"))
              for handle in handles]
    renderer = FigureCanvasAgg(figure).get_renderer()
    for columns in range(len(handles), 0, -1):
        legend = figure.legend(handles=list(handles), labels=labels, loc="outside lower center", ncols=columns)
        if legend.get_window_extent(renderer).width <= 0.97 * figure.bbox.width or columns == 1:
            return
        legend.remove()


def seconds_y_axis(axes: Axes, values: pd.Series, log_allowed: bool = True) -> None:
    """A y axis in seconds: logarithmic when `values` span a decade (and `log_allowed`), else linear from zero."""
    if log_allowed and spans_decades(values):
        axes.set_yscale("log")
        format_log_axis(axes.yaxis, values, seconds_formatter())
    else:
        axes.set_ylim(bottom=0)
        axes.yaxis.set_major_formatter(seconds_formatter())


def trial_line_handles(reasons: pd.Series, trials: pd.Series, one_width: float, excluded_width: float) -> list[Line2D]:
    """The legend's key for figures that draw each trial as a thin line: "one trial", and the excluded ones dashed
    (a line cannot be hollow) when there are any."""
    handles = [Line2D([], [], color=KEY_COLOUR, linewidth=one_width, alpha=0.6, label="one trial")]
    label = excluded_label(reasons, trials=trials)
    if label:
        handles.append(Line2D([], [], color=KEY_COLOUR, linewidth=excluded_width, linestyle="--",
                              label=label.replace("(hollow)", "(dashed)")))  # fmt: skip
    return handles
