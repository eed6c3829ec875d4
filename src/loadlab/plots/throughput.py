"""Throughput against concurrency (closed loop) or offered rate (open loop)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ._common import band_caption, legend_outside, median_summary, require_columns
from .style import (
    axis_label,
    count_formatter,
    new_figure,
    runtime_colour,
    runtime_marker,
    runtime_order,
    spans_decades,
    style_context,
)

# Horizontal offset between servers' trial points, so they do not hide each
# other: a fraction of a decade on a log axis, of the smallest x step otherwise.
_DODGE_DECADES = 0.012
_DODGE_FRACTION = 0.04


def throughput_figure(
    data: pd.DataFrame,
    x_column: str = "concurrency",
    y_column: str = "throughput_rps",
    group_column: str = "server",
    confidence: float = 0.95,
    title: str | None = None,
) -> Figure:
    """Throughput per server against concurrency or offered rate.

    `data`: one row per trial, with `group_column` (server name),
    `x_column` (e.g. ``concurrency`` in connections, or ``offered_rate_rps``)
    and `y_column` (e.g. ``throughput_rps``, requests per second). Draws each
    trial as a point, the median across trials at each x as a line and its
    `confidence` CI (loadlab.stats.median_ci) as a band; no band where fewer
    than 6 trials exist at 95 %. Axes become logarithmic when the values
    span a decade or more.
    """
    require_columns(data, [group_column, x_column, y_column], "throughput_figure")
    summary = median_summary(data, group_column, x_column, y_column, confidence)
    servers = runtime_order(data[group_column].unique())
    x_values = pd.to_numeric(data[x_column], errors="coerce").to_numpy(dtype=float)
    log_x = spans_decades(x_values)
    distinct_x = np.unique(x_values[np.isfinite(x_values)])
    smallest_step = np.min(np.diff(distinct_x)) if distinct_x.size > 1 else 1.0

    with style_context():
        figure, axes = new_figure(6.0, 3.6)
        for index, server in enumerate(servers):
            colour, marker = runtime_colour(server), runtime_marker(server)
            offset = index - (len(servers) - 1) / 2
            trials = data[data[group_column] == server]
            trial_x = pd.to_numeric(trials[x_column], errors="coerce").to_numpy(dtype=float)
            if log_x:
                trial_x = trial_x * 10 ** (offset * _DODGE_DECADES)
            else:
                trial_x = trial_x + offset * _DODGE_FRACTION * smallest_step
            axes.scatter(
                trial_x, trials[y_column], s=10, color=colour, marker=marker, alpha=0.55, linewidths=0, zorder=3
            )
            line = summary[summary[group_column] == server].sort_values(x_column)
            axes.plot(
                line[x_column], line["median"], color=colour, marker=marker, markersize=4, label=server, zorder=4
            )
            axes.fill_between(
                line[x_column].to_numpy(dtype=float),
                line["ci_low"].to_numpy(dtype=float),
                line["ci_high"].to_numpy(dtype=float),
                color=colour,
                alpha=0.2,
                linewidth=0,
                zorder=2,
            )
        if log_x:
            axes.set_xscale("log")
        if spans_decades(pd.to_numeric(data[y_column], errors="coerce")):
            axes.set_yscale("log")
        else:
            axes.set_ylim(bottom=0)
        axes.xaxis.set_major_formatter(count_formatter())
        axes.yaxis.set_major_formatter(count_formatter())
        axes.set_xlabel(axis_label(x_column))
        axes.set_ylabel(axis_label(y_column))
        if title:
            figure.suptitle(title)
        legend_outside(figure, axes, title=band_caption(confidence))
    return figure
