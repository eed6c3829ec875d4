"""GC pauses: the distribution of single pauses (ECDF) and the total pause per trial."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from loadlab.stats.median import median_ci

from ._common import KEY_COLOUR, finish_figure, require_columns, seconds_y_axis, series_handle
from .palette import runtime_order, series_style
from .style import format_log_axis, new_figure, seconds_formatter, spans_decades, style_context


def _pause_totals(
    events: pd.DataFrame, trials: pd.DataFrame | None, group_column: str, trial_column: str, pause_column: str
) -> pd.DataFrame:
    totals = events.groupby([group_column, trial_column], as_index=False)[pause_column].sum()
    if trials is None:
        return totals
    # A trial with no collection at all paused 0 s; it must count, not vanish.
    every_trial = trials[[group_column, trial_column]].drop_duplicates()
    merged = every_trial.merge(totals, on=[group_column, trial_column], how="left")
    merged[pause_column] = merged[pause_column].fillna(0.0)
    return merged


def gc_pause_figure(
    events: pd.DataFrame,
    pause_column: str = "pause_s",
    group_column: str = "server",
    trial_column: str = "trial",
    trials: pd.DataFrame | None = None,
    confidence: float = 0.95,
    title: str | None = None,
) -> Figure:
    """Left: ECDF of single GC pauses per server. Right: total pause per trial, with median and CI.

    `events`: the ``gc_events`` table, one row per pause, with
    `group_column`, `trial_column` and `pause_column` in seconds. `trials`
    (optional): one row per (server, trial) that ran, so that trials without
    any pause count as 0 s in the totals instead of disappearing. The ECDF's
    x axis is logarithmic when pauses span a decade (ZGC's sub-millisecond
    pauses next to a stop-the-world collector's tens of milliseconds).
    """
    require_columns(events, [group_column, trial_column, pause_column], "gc_pause_figure")
    if trials is not None:
        require_columns(trials, [group_column, trial_column], "gc_pause_figure (trials)")
    totals = _pause_totals(events, trials, group_column, trial_column, pause_column)
    servers = runtime_order(list(events[group_column].unique()) + list(totals[group_column].unique()))

    with style_context():
        # The right panel puts one column per server: more servers, or longer names, need more room for their
        # tick labels (three Go servers in 02, "go-workerpool-reject" among them).
        room = max(1.0, 0.3 * len(servers)) if servers else 1.0
        figure, (ecdf_axes, total_axes) = new_figure(6.0 + room, 3.8, ncols=2, width_ratios=[1.4, room])
        _pause_ecdf(ecdf_axes, events, servers, group_column, pause_column)
        _pause_totals_panel(total_axes, totals, servers, group_column, pause_column, confidence)
        handles = [series_handle(server) for server in servers] + [
            Line2D([], [], color=KEY_COLOUR, marker="o", markersize=4, linestyle="none", label="right: one trial"),
            Line2D([], [], color=KEY_COLOUR, marker="_", markersize=12, linestyle="none", label="right: median"),
            Line2D([], [], color=KEY_COLOUR, marker="|", markersize=12, linestyle="none",
                   label=f"right: {confidence:.0%} CI of the median"),
        ]  # fmt: skip
        finish_figure(figure, title, handles)
    return figure


def _pause_ecdf(axes, events: pd.DataFrame, servers: list[str], group_column: str, pause_column: str) -> None:
    """Left panel: the ECDF of single pauses per server, x in seconds (log when they span a decade)."""
    for server in servers:
        pauses = np.sort(events.loc[events[group_column] == server, pause_column].to_numpy(dtype=float))
        pauses = pauses[np.isfinite(pauses)]
        if pauses.size:
            fraction = np.arange(1, pauses.size + 1) / pauses.size
            style = series_style(server)
            axes.step(pauses, fraction, where="post", color=style.colour, linestyle=style.linestyle)
    if spans_decades(events[pause_column]):
        axes.set_xscale("log")
        format_log_axis(axes.xaxis, events[pause_column], seconds_formatter())
    else:
        axes.xaxis.set_major_formatter(seconds_formatter())
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("single GC pause (s)")
    axes.set_ylabel("fraction of pauses \N{LESS-THAN OR EQUAL TO} x")


def _pause_totals_panel(axes, totals: pd.DataFrame, servers: list[str], group_column: str, pause_column: str,
                        confidence: float) -> None:
    """Right panel: each trial's total pause per server (jittered), the median and its CI."""
    rng = np.random.default_rng(0)  # jitter only; fixed so figures are reproducible
    for position, server in enumerate(servers):
        values = totals.loc[totals[group_column] == server, pause_column].to_numpy(dtype=float)
        if values.size == 0:
            continue
        style = series_style(server)
        jitter = rng.uniform(-0.12, 0.12, values.size)
        axes.scatter(position + jitter, values, s=12, color=style.colour, marker=style.marker, alpha=0.6, linewidths=0)
        estimate = median_ci(values, confidence)
        axes.hlines(estimate.median, position - 0.25, position + 0.25, color=style.colour, linewidth=2)
        if np.isfinite(estimate.ci_low):
            axes.vlines(position + 0.3, estimate.ci_low, estimate.ci_high, color=style.colour, linewidth=1.5)
    # Long names at a shallow angle reach under their neighbour's label: steeper the longer they are.
    angle = 40 if max((len(str(server)) for server in servers), default=0) <= 12 else 65
    axes.set_xticks(range(len(servers)), servers, rotation=angle, ha="right", rotation_mode="anchor")
    axes.set_xlim(-0.6, len(servers) - 0.4)
    # Log only if no trial paused 0 s: a log axis cannot show zero.
    seconds_y_axis(axes, totals[pause_column], log_allowed=bool((totals[pause_column] > 0).all()))
    axes.set_ylabel("total GC pause per trial (s)")
    axes.grid(axis="x", visible=False)
