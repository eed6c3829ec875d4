"""Memory in use and tasks over time within a trial, one line per runtime."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from ._common import legend_outside, require_columns
from .style import (
    axis_label,
    bytes_formatter,
    count_formatter,
    new_figure,
    runtime_colour,
    runtime_order,
    spans_decades,
    style_context,
)


def resources_over_time_figure(
    data: pd.DataFrame,
    time_column: str = "t_s",
    memory_column: str = "memory_in_use_bytes",
    tasks_column: str | None = "tasks",
    group_column: str = "server",
    trial_column: str = "trial",
    title: str | None = None,
) -> Figure:
    """Memory in use (top) and tasks (bottom) against time since the trial started.

    `data`: the sampler's tidy table, one row per sample, with
    `group_column` (server), `time_column` in seconds, `memory_column` in
    bytes (``usage - inactive_file``) and, unless `tasks_column` is None or
    absent, the task count (the pids cgroup counts threads). Several trials
    per server (`trial_column`) are drawn as separate thin lines of the same
    colour. Each y axis is logarithmic when its values span a decade (Java
    platform threads against Rust easily span four).
    """
    require_columns(data, [group_column, time_column, memory_column], "resources_over_time_figure")
    with_tasks = tasks_column is not None and tasks_column in data.columns
    servers = runtime_order(data[group_column].unique())
    panels = [(memory_column, bytes_formatter())]
    if with_tasks:
        panels.append((tasks_column, count_formatter()))

    with style_context():
        figure, axes_array = new_figure(6.0, 2.2 + 1.6 * len(panels), nrows=len(panels), sharex=True, squeeze=False)
        axes_list = list(axes_array[:, 0])
        for axes, (column, formatter) in zip(axes_list, panels):
            for server in servers:
                rows = data[data[group_column] == server]
                groups = rows.groupby(trial_column) if trial_column in rows.columns else [(None, rows)]
                several = trial_column in rows.columns and rows[trial_column].nunique() > 1
                for _, trial in groups:
                    trial = trial.sort_values(time_column)
                    axes.plot(
                        trial[time_column],
                        trial[column],
                        color=runtime_colour(server),
                        linewidth=0.8 if several else 1.2,
                        alpha=0.8 if several else 1.0,
                        label=server,
                    )
            values = pd.to_numeric(data[column], errors="coerce")
            if spans_decades(values):
                axes.set_yscale("log")
            else:
                axes.set_ylim(bottom=0)
            axes.yaxis.set_major_formatter(formatter)
            axes.set_ylabel(axis_label(column))
        axes_list[-1].set_xlabel(axis_label(time_column))
        axes_list[-1].set_xlim(left=min(0.0, float(pd.to_numeric(data[time_column]).min())))
        if title:
            figure.suptitle(title)
        legend_outside(figure, axes_list[0])
    return figure
