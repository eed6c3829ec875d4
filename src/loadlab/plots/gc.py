"""GC pauses: the distribution of single pauses (ECDF) and the total pause per trial.

Both panels in milliseconds (`loadlab.units.seconds_to_ms`), ticks as plain
numbers, so the axis label's "(ms)" is the ticks' unit: an EngFormatter's
"100 µs" and "1 ms" under a "(s)" label said two units at once.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from loadlab import units
from loadlab.stats.median import median_ci

from ._common import KEY_COLOUR, finish_figure, require_columns, series_handle
from .palette import runtime_order, series_style
from .style import format_log_axis, new_figure, plain_formatter, spans_decades, style_context


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
    events = events.assign(**{pause_column: units.seconds_to_ms(events[pause_column])})
    totals = _pause_totals(events, trials, group_column, trial_column, pause_column)
    servers = runtime_order(list(events[group_column].unique()) + list(totals[group_column].unique()))

    with style_context():
        # The right panel puts one row per server, names horizontal: rotated names ("go-workerpool-reject" in 02)
        # took half the panel's height.
        height = max(3.8, 1.6 + 0.35 * len(servers))
        figure, (ecdf_axes, total_axes) = new_figure(7.6, height, ncols=2, width_ratios=[1.3, 1])
        _pause_ecdf(ecdf_axes, events, servers, group_column, pause_column)
        _pause_totals_panel(total_axes, totals, servers, group_column, pause_column, confidence)
        handles = [series_handle(server) for server in servers] + [
            Line2D([], [], color=KEY_COLOUR, marker="o", markersize=4, linestyle="none", label="right: one trial"),
            Line2D([], [], color=KEY_COLOUR, marker="|", markersize=12, linestyle="none", label="right: median"),
            Line2D([], [], color=KEY_COLOUR, marker="_", markersize=12, linestyle="none",
                   label=f"right: {confidence:.0%} CI of the median"),
        ]  # fmt: skip
        finish_figure(figure, title, handles)
    return figure


def _pause_ecdf(axes, events: pd.DataFrame, servers: list[str], group_column: str, pause_column: str) -> None:
    """Left panel: the ECDF of single pauses per server, x in milliseconds (log when they span a decade)."""
    for server in servers:
        pauses = np.sort(events.loc[events[group_column] == server, pause_column].to_numpy(dtype=float))
        pauses = pauses[np.isfinite(pauses)]
        if pauses.size:
            fraction = np.arange(1, pauses.size + 1) / pauses.size
            style = series_style(server)
            axes.step(pauses, fraction, where="post", color=style.colour, linestyle=style.linestyle)
    if spans_decades(events[pause_column]):
        axes.set_xscale("log")
        format_log_axis(axes.xaxis, events[pause_column], plain_formatter())
    else:
        axes.xaxis.set_major_formatter(plain_formatter())
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("single GC pause (ms)")
    axes.set_ylabel("fraction of pauses \N{LESS-THAN OR EQUAL TO} x")


def _pause_totals_panel(axes, totals: pd.DataFrame, servers: list[str], group_column: str, pause_column: str,
                        confidence: float) -> None:
    """Right panel: each trial's total pause (ms) per server, one row each (jittered), the median and its CI."""
    rng = np.random.default_rng(0)  # jitter only; fixed so figures are reproducible
    for position, server in enumerate(servers):
        values = totals.loc[totals[group_column] == server, pause_column].to_numpy(dtype=float)
        if values.size == 0:
            continue
        style = series_style(server)
        jitter = rng.uniform(-0.12, 0.12, values.size)
        axes.scatter(values, position + jitter, s=12, color=style.colour, marker=style.marker, alpha=0.6, linewidths=0)
        estimate = median_ci(values, confidence)
        axes.vlines(estimate.median, position - 0.25, position + 0.25, color=style.colour, linewidth=2)
        if np.isfinite(estimate.ci_low):
            axes.hlines(position + 0.3, estimate.ci_low, estimate.ci_high, color=style.colour, linewidth=1.5)
    axes.set_yticks(range(len(servers)), servers)
    axes.set_ylim(len(servers) - 0.4, -0.6)  # first server on top, as the legend lists them
    # Log only if no trial paused 0 ms: a log axis cannot show zero.
    if spans_decades(totals[pause_column]) and bool((totals[pause_column] > 0).all()):
        axes.set_xscale("log")
        format_log_axis(axes.xaxis, totals[pause_column], plain_formatter())
    else:
        axes.set_xlim(left=0)
        axes.xaxis.set_major_formatter(plain_formatter())
    axes.set_xlabel("total GC pause per trial (ms)")
    axes.grid(axis="y", visible=False)
