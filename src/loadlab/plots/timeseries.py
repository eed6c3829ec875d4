"""Memory in use (MiB) and OS threads over the measured window, one colour per runtime.

Each trial is a thin line; the median across a server's included trials,
per sampling instant, is a thick line, so that six trials per server do not
turn into a tangle. The median is drawn only where at least half of the
server's included trials still have a sample: past that it would follow one
trial and claim to be a median. No CI band: translucent bands of four
servers overlapped until none could be told apart, and the thin trial lines
already show the spread. Excluded trials (saturated loadgen, stalled) are
drawn dashed and left out of the median.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ._common import exclusion_reasons, finish_figure, key_handles, median_summary, trial_line_handles
from ._common import require_columns, series_handle
from .palette import runtime_order, series_style
from .style import (
    axis_label,
    count_formatter,
    display_values,
    format_log_axis,
    new_figure,
    plain_formatter,
    spans_decades,
    style_context,
)

# The sampler reads 4 times a second; samples of different trials are matched to the nearest quarter second.
SAMPLE_PERIOD_S = 0.25
# The median is drawn only at instants where at least this share of a server's included trials has a sample.
MEDIAN_MIN_TRIAL_SHARE = 0.5


def _held_median(evidence: pd.DataFrame, summary: pd.DataFrame, group_column: str, trial_column: str) -> pd.DataFrame:
    """`summary` with its median blanked (NaN, a gap in the line) where fewer than MEDIAN_MIN_TRIAL_SHARE of the
    group's included trials have a sample."""
    trials = evidence.groupby(group_column)[trial_column].nunique()
    needed = summary[group_column].map(trials).fillna(0) * MEDIAN_MIN_TRIAL_SHARE
    held = summary.copy()
    held.loc[held["n"] < needed, "median"] = np.nan
    return held


def resources_over_time_figure(
    data: pd.DataFrame,
    time_column: str = "t_s",
    memory_column: str = "memory_in_use_bytes",
    tasks_column: str | None = "tasks",
    group_column: str = "server",
    trial_column: str = "trial",
    confidence: float = 0.95,
    title: str | None = None,
    panels: list[str] | None = None,
    linear_panels: tuple[str, ...] = (),
) -> Figure:
    """Memory in use (top, MiB) and, unless `tasks_column` is None or absent, tasks (bottom) over time.

    `data`: the sampler's tidy table, one row per sample, with
    `group_column` (server or label), `time_column` in seconds since the
    measured window started, `memory_column` in bytes (``usage -
    inactive_file``) and the task count (the pids cgroup counts threads).
    Optional ``status`` / ``failure_reason`` / ``loadgen_saturated`` columns
    mark excluded trials. Each y axis is logarithmic when its values span a
    decade (Java platform threads against Rust easily span four).

    `panels` names the columns to draw instead, one panel each, top to
    bottom; series sampled at other instants (the kernel's connection count
    once a second beside the sampler's memory) can share `data`, each panel
    drawing only the rows that hold its column. A column in `linear_panels`
    keeps a linear axis from 0 even across decades: a log axis would drop
    its zeros (a server that stopped answering).
    """
    require_columns(data, [group_column, time_column, *(panels or [memory_column])], "resources_over_time_figure")
    with_tasks = tasks_column is not None and tasks_column in data.columns
    frame = data.copy()
    if trial_column not in frame.columns:
        frame[trial_column] = 0
    frame["_t"] = (pd.to_numeric(frame[time_column], errors="coerce") / SAMPLE_PERIOD_S).round() * SAMPLE_PERIOD_S
    reasons = exclusion_reasons(frame)
    servers = runtime_order(frame[group_column].unique())
    if panels is None:
        panels = [memory_column] + ([tasks_column] if with_tasks else [])

    with style_context():
        figure, axes_array = new_figure(6.0, 2.4 + 1.7 * len(panels), nrows=len(panels), sharex=True, squeeze=False)
        axes_list = list(axes_array[:, 0])
        for axes, column in zip(axes_list, panels):
            frame["_y"] = display_values(column, frame[column]).to_numpy()
            drawn = frame["_y"].notna()
            evidence = frame[(reasons == "") & drawn]
            summary = _held_median(evidence, median_summary(evidence, group_column, "_t", "_y", confidence),
                                   group_column, trial_column)  # fmt: skip
            for server in servers:
                style = series_style(server)
                rows = frame[(frame[group_column] == server) & drawn]
                for _, trial in rows.groupby(trial_column):
                    trial = trial.sort_values("_t")
                    excluded = bool((reasons.loc[trial.index] != "").any())
                    axes.plot(trial["_t"], trial["_y"], color=style.colour, alpha=0.35, linewidth=0.7,
                              linestyle="--" if excluded else "-")  # fmt: skip
                line = summary[summary[group_column] == server].sort_values("_t")
                axes.plot(line["_t"], line["median"], color=style.colour, linestyle=style.linestyle, linewidth=1.8)
            if column not in linear_panels and spans_decades(frame.loc[drawn, "_y"]):
                axes.set_yscale("log")
                format_log_axis(axes.yaxis, frame.loc[drawn, "_y"], plain_formatter())
            else:
                axes.set_ylim(bottom=0)
                axes.yaxis.set_major_formatter(count_formatter())
            axes.set_ylabel(axis_label(column))
        axes_list[-1].set_xlabel(axis_label(time_column))
        axes_list[-1].set_xlim(left=min(0.0, float(np.nanmin(frame["_t"]))))
        handles = [series_handle(server, marker=False) for server in servers]
        handles += key_handles(None, None, median="median of included trials (where \N{GREATER-THAN OR EQUAL TO} half have data)",
                               points=None)
        handles += trial_line_handles(reasons, frame[trial_column], one_width=0.7, excluded_width=0.7)
        finish_figure(figure, title, handles)
    return figure


def memory_over_time_figure(
    data: pd.DataFrame,
    time_column: str = "t_s",
    memory_column: str = "memory_in_use_bytes",
    group_column: str = "server",
    trial_column: str = "trial",
    confidence: float = 0.95,
    title: str | None = None,
) -> Figure:
    """Memory in use (MiB) over the measured window: `resources_over_time_figure` without the threads panel."""
    return resources_over_time_figure(data, time_column, memory_column, None, group_column, trial_column,
                                      confidence, title)  # fmt: skip
