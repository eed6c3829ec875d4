"""Open-loop latency against offered load, each server's knee marked (`loadlab.latency_curve`)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import FixedLocator, NullLocator, PercentFormatter

from ._common import KEY_COLOUR, draw_trials, exclusion_reasons, finish_figure, key_handles, require_columns
from ._common import series_handle
from .palette import runtime_order, series_style
from .style import format_log_axis, new_figure, plain_formatter, seconds_formatter, style_context

_DODGE = 0.012  # x offset between servers' trial points, in fractions of capacity


def latency_knee_figure(trials: pd.DataFrame, curve: pd.DataFrame, knee_levels: Mapping[str, float | None],
                        served_share_line: float, x_label: str = "offered load (fraction of capacity)",
                        title: str | None = None) -> Figure:
    """Left: p99 (solid, with its CI) and p50 (dashed) against the offered fraction of each server's capacity, each
    trial's p99 a point; right: the share of the offered rate served. The first level past a server's knee is ringed.

    `trials`: one row per trial (label, level, latency_p99_s, throughput_rps
    and the status columns); `curve`: `latency_curve.latency_curve(trials)`;
    `knee_levels`: label -> first level past its knee, or None.
    """
    require_columns(trials, ["label", "level", "latency_p99_s"], "latency_knee_figure")
    require_columns(curve, ["label", "level", "latency_p50_s", "latency_p99_s", "served_share"], "latency_knee_figure")
    servers = runtime_order(curve["label"].unique())
    reasons = exclusion_reasons(trials)
    levels = np.sort(curve["level"].unique().astype(float))
    with style_context():
        figure, (latency_axes, served_axes) = new_figure(8.4, 3.8, ncols=2, gridspec_kw={"width_ratios": [1.5, 1]})
        for index, server in enumerate(servers):
            style = series_style(server)
            offset = (index - (len(servers) - 1) / 2) * _DODGE
            rows = trials[trials["label"] == server]
            draw_trials(latency_axes, rows["level"].to_numpy(dtype=float) + offset,
                        pd.to_numeric(rows["latency_p99_s"], errors="coerce").to_numpy(dtype=float),
                        (reasons.loc[rows.index] != "").to_numpy(), server)
            line = curve[curve["label"] == server].sort_values("level")
            x = line["level"].to_numpy(dtype=float)
            latency_axes.plot(x, line["latency_p99_s"], color=style.colour, marker=style.marker, markersize=4, zorder=4)
            # The CI as a bar beside the server's own points, not a band: four translucent bands overlapped until
            # none could be told apart.
            latency_axes.vlines(x + offset, line["latency_p99_s_ci_low"].to_numpy(dtype=float),
                                line["latency_p99_s_ci_high"].to_numpy(dtype=float), color=style.colour,
                                linewidth=1.6, alpha=0.9, zorder=2)
            latency_axes.plot(x, line["latency_p50_s"], color=style.colour, linestyle="--", linewidth=1.0, zorder=3)
            served_axes.plot(x, line["served_share"], color=style.colour, marker=style.marker, markersize=4, zorder=4)
            knee = knee_levels.get(server)
            if knee is not None:
                at = line[line["level"] == knee]
                latency_axes.scatter(at["level"], at["latency_p99_s"], s=120, facecolors="none", edgecolors=style.colour,
                                     linewidths=1.4, zorder=5)
                served_axes.scatter(at["level"], at["served_share"], s=120, facecolors="none", edgecolors=style.colour,
                                    linewidths=1.4, zorder=5)
        values = pd.concat([pd.to_numeric(trials["latency_p99_s"], errors="coerce"), curve["latency_p50_s"]])
        latency_axes.set_yscale("log")
        format_log_axis(latency_axes.yaxis, values, seconds_formatter())
        latency_axes.set_ylabel("latency")  # the ticks carry their unit (ms, s)
        served_axes.axhline(served_share_line, color=KEY_COLOUR, linestyle=":", linewidth=1.0, zorder=1)
        served_axes.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
        served_axes.set_ylim(0, 1.08)
        served_axes.set_ylabel("served / offered")
        margin = 0.1 * (levels.max() - levels.min()) if levels.size > 1 else 0.1
        for axes in (latency_axes, served_axes):
            axes.set_xlim(levels.min() - margin, levels.max() + margin)
            axes.xaxis.set_major_locator(FixedLocator(levels))
            axes.xaxis.set_minor_locator(NullLocator())
            axes.xaxis.set_major_formatter(plain_formatter())
            axes.set_xlabel(x_label)
        latency_axes.set_title("p99 (solid) and p50 (dashed)", fontsize="medium")
        served_axes.set_title("answered, of the rate asked", fontsize="medium")
        handles = [series_handle(server) for server in servers]
        handles += key_handles(None, reasons, median="median p99 of included trials", points="one trial's p99")
        handles.insert(len(servers) + 1, Line2D([], [], color=KEY_COLOUR, marker="|", markersize=10, linestyle="none",
                                                label="95% CI of the median p99"))
        handles.append(Line2D([], [], color=KEY_COLOUR, marker="o", markersize=9, markerfacecolor="none",
                              linestyle="none", label="first level past the knee"))
        handles.append(Line2D([], [], color=KEY_COLOUR, linestyle=":", label=f"{served_share_line:.0%} served"))
        finish_figure(figure, title, handles)
    return figure
