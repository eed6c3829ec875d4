"""A per-trial metric (throughput, memory, threads, CPU per request) against the load level.

With several levels the level is a numeric axis with a tick at each level
measured (and nothing in between, so "999.9 ... 1.0001k" cannot appear).
With a single level the servers themselves are the categories on x: a
numeric axis with one value means nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, NullLocator

from loadlab import metrics
from loadlab.stats.median import median_ci

from ._common import KEY_COLOUR, draw_trials, excluded_label, exclusion_reasons, finish_figure, key_handles
from ._common import median_summary
from ._common import require_columns, series_handle
from .palette import runtime_order, series_style
from .style import (
    LEVEL_UNITS,
    axis_label,
    count_formatter,
    display_values,
    format_log_axis,
    new_figure,
    plain_formatter,
    plain_number,
    spans_decades,
    style_context,
)

# Horizontal offset between servers' trial points, so they do not hide each
# other: a fraction of a decade on a log axis, of the smallest x step otherwise.
_DODGE_DECADES = 0.012
_DODGE_FRACTION = 0.04
# Half the width of the jitter of trial points on a category axis, in category widths.
_JITTER = 0.12
REFERENCE_COLOUR = "0.4"


class ReferenceLine(NamedTuple):
    """A line that is not data (a bound, a ceiling): its legend label and its points."""

    label: str
    x: Sequence[float]
    y: Sequence[float]


def _y_axis(axes: Axes, values: pd.Series) -> None:
    if spans_decades(values):
        axes.set_yscale("log")
        format_log_axis(axes.yaxis, values, count_formatter())
    else:
        axes.set_ylim(bottom=0)
        axes.yaxis.set_major_formatter(count_formatter())


def _single_level_figure(frame, servers, group_column, level_text, confidence, reasons, group_name="server"):
    figure, axes = new_figure(6.0, 3.8)
    rng = np.random.default_rng(0)  # jitter only; fixed so figures are reproducible
    for position, server in enumerate(servers):
        rows = frame[frame[group_column] == server]
        y = rows["_y"].to_numpy(dtype=float)
        excluded = (reasons.loc[rows.index] != "").to_numpy()
        draw_trials(axes, position + rng.uniform(-_JITTER, _JITTER, len(rows)), y, excluded, server)
        evidence = y[~excluded & np.isfinite(y)]
        if evidence.size == 0:
            continue  # every trial excluded: no median to draw, the hollow points say why
        colour = series_style(server).colour
        estimate = median_ci(evidence, confidence)
        axes.hlines(estimate.median, position - 0.28, position + 0.28, color=colour, linewidth=2, zorder=4)
        if np.isfinite(estimate.ci_low):
            axes.vlines(position + 0.33, estimate.ci_low, estimate.ci_high, color=colour, linewidth=1.6, zorder=4)
    long_names = len(servers) > 4 or max(len(str(s)) for s in servers) > 12
    axes.set_xticks(range(len(servers)), [str(s) for s in servers], rotation=30 if long_names else 0,
                    ha="right" if long_names else "center", rotation_mode="anchor")  # fmt: skip
    axes.set_xlim(-0.6, len(servers) - 0.4)
    axes.grid(axis="x", visible=False)
    axes.set_xlabel(f"{group_name}, all at {level_text}")
    _y_axis(axes, frame["_y"])
    handles = [
        Line2D([], [], color=KEY_COLOUR, marker="_", markersize=12, linestyle="none", label="median of included trials"),
        Line2D([], [], color=KEY_COLOUR, marker="|", markersize=12, linestyle="none", label=f"{confidence:.0%} CI of the median"),
        Line2D([], [], color=KEY_COLOUR, marker="o", markersize=4, linestyle="none", label="one trial"),
    ]  # fmt: skip
    label = excluded_label(reasons, frame["_y"])
    if label:
        handles.append(Line2D([], [], color=KEY_COLOUR, marker="o", markersize=4, markerfacecolor="none",
                              linestyle="none", label=label))  # fmt: skip
    return figure, axes, handles


def _several_levels_figure(frame, servers, group_column, x_column, confidence, reasons, reference_lines,
                           ticks_at_levels=True):
    figure, axes = new_figure(6.0, 4.0)
    levels = np.unique(frame["_x"].to_numpy(dtype=float)[np.isfinite(frame["_x"].to_numpy(dtype=float))])
    log_x = spans_decades(levels)
    smallest_step = np.min(np.diff(levels)) if levels.size > 1 else 1.0
    evidence = frame[reasons == ""]
    summary = median_summary(evidence, group_column, "_x", "_y", confidence)
    for index, server in enumerate(servers):
        style = series_style(server)
        offset = index - (len(servers) - 1) / 2
        rows = frame[frame[group_column] == server]
        x = rows["_x"].to_numpy(dtype=float)
        x = x * 10 ** (offset * _DODGE_DECADES) if log_x else x + offset * _DODGE_FRACTION * smallest_step
        draw_trials(axes, x, rows["_y"].to_numpy(dtype=float), (reasons.loc[rows.index] != "").to_numpy(), server)
        line = summary[summary[group_column] == server].sort_values("_x")
        axes.plot(line["_x"], line["median"], color=style.colour, marker=style.marker, linestyle=style.linestyle,
                  markersize=4, zorder=4)  # fmt: skip
        axes.fill_between(line["_x"].to_numpy(dtype=float), line["ci_low"].to_numpy(dtype=float),
                          line["ci_high"].to_numpy(dtype=float), color=style.colour, alpha=0.2, linewidth=0, zorder=2)  # fmt: skip
    handles = [series_handle(server) for server in servers]
    for reference in reference_lines:
        axes.plot(reference.x, reference.y, color=REFERENCE_COLOUR, linestyle=":", linewidth=1.4, zorder=1)
        handles.append(Line2D([], [], color=REFERENCE_COLOUR, linestyle=":", linewidth=1.4, label=reference.label))
    if log_x:
        axes.set_xscale("log")
        # A log axis has no place for 0 (a trial whose server held no connection at its level): the limits are the
        # positive levels', which matplotlib would otherwise refuse with a warning printed on the page.
        positive = levels[levels > 0]
        if len(positive):
            axes.set_xlim(positive.min() / 1.6, positive.max() * 1.6)
    else:
        margin = 0.08 * (levels.max() - levels.min())
        axes.set_xlim(levels.min() - margin, levels.max() + margin)
    if ticks_at_levels:
        # A tick at each measured level and none in between: the levels are the experiment's design.
        axes.xaxis.set_major_locator(FixedLocator(levels))
        axes.xaxis.set_minor_locator(NullLocator())
        axes.xaxis.set_major_formatter(plain_formatter())
    elif log_x:
        # Measured x (connections held): each server sits at its own, so ticks are the axis's decades.
        format_log_axis(axes.xaxis, levels, plain_formatter())
    else:
        axes.xaxis.set_major_formatter(plain_formatter())
    axes.set_xlabel(axis_label(x_column))
    _y_axis(axes, pd.concat([frame["_y"], pd.Series([y for r in reference_lines for y in r.y], dtype=float)]))
    return figure, axes, handles + key_handles(confidence, reasons, values=frame["_y"])


def throughput_figure(
    data: pd.DataFrame,
    x_column: str = "concurrency",
    y_column: str = "throughput_rps",
    group_column: str = "server",
    confidence: float = 0.95,
    title: str | None = None,
    reference_lines: Sequence[ReferenceLine] = (),
    group_name: str = "server",
    ticks_at_levels: bool = True,
) -> Figure:
    """A per-trial metric per server against the load level (connections, or offered rate).

    `data`: one row per trial with `group_column` (server or label),
    `x_column` (``concurrency`` in connections, or ``offered_rps``) and
    `y_column` (``throughput_rps``, ``memory_peak_mib``, ...; ``*_bytes``
    columns are drawn in MiB). Optional ``status``, ``failure_reason`` and
    ``loadgen_saturated`` columns mark trials that are not evidence: they
    are drawn hollow, named with their count in the legend, and left out of
    the medians. Each trial is a point; the median across included trials
    is a line (a bar with one level) and its `confidence` CI
    (loadlab.stats.median_ci) a band (a vertical line with one level), drawn
    only where enough trials exist. `reference_lines` are drawn dotted and
    named in the legend (several levels only). The y axis is logarithmic
    when values span a decade. `group_name` is what the groups are, for the
    axis of a single level ("server"; notebook 00 draws isolation modes).
    `ticks_at_levels` False: x is measured (connections each server held),
    not the design's levels, and gets the axis's own ticks.
    """
    require_columns(data, [group_column, x_column, y_column], "throughput_figure")
    frame = data.assign(_x=pd.to_numeric(data[x_column], errors="coerce"),
                        _y=display_values(y_column, data[y_column]).to_numpy())  # fmt: skip
    reasons = exclusion_reasons(frame)
    servers = runtime_order(frame[group_column].unique())
    levels = frame["_x"].dropna().unique()

    with style_context():
        if len(levels) == 1:
            level_text = f"{plain_number(float(levels[0]))} {LEVEL_UNITS.get(x_column, axis_label(x_column))}"
            figure, axes, handles = _single_level_figure(frame, servers, group_column, level_text, confidence, reasons,
                                                         group_name)
        else:
            figure, axes, handles = _several_levels_figure(frame, servers, group_column, x_column, confidence,
                                                           reasons, reference_lines, ticks_at_levels)  # fmt: skip
        axes.set_ylabel(axis_label(y_column))
        finish_figure(figure, title, handles)
    return figure


def cpu_per_request_figure(
    data: pd.DataFrame,
    x_column: str = "concurrency",
    group_column: str = "server",
    confidence: float = 0.95,
    title: str | None = None,
) -> Figure:
    """Server CPU time per request (µs) per server against the load level: `loadlab.metrics`' cpu_us_per_request.

    Under a closed loop every server on its pinned core runs flat out, so
    CPU share says little; CPU seconds divided by requests served is the
    cost of one request. A trial that served no request has no value.
    """
    require_columns(data, [group_column, x_column, "server_cpu_seconds", "requests"], "cpu_per_request_figure")
    return throughput_figure(metrics.with_derived(data), x_column, "cpu_us_per_request", group_column, confidence,
                             title)
