"""The loadgen's ceiling: each trial's throughput against how busy the loadgen's core was.

A server is measured only while the loadgen has room to spare. Trials that
pile up against the right edge (the loadgen's core full) measured the
loadgen, whatever the server could do; the same servers pipelined (one
panel per way of loading) show how far they go when the loadgen pays less
per request.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.ticker import PercentFormatter

from ._common import draw_trials, exclusion_reasons, key_handles, legend_below, require_columns, series_handle
from .palette import runtime_order
from .style import count_formatter, new_figure, style_context

HEADROOM_COLOUR = "0.55"


def loadgen_ceiling_figure(trials_by_panel: Mapping[str, pd.DataFrame], headroom: float, saturated: float,
                           title: str = "The loadgen's ceiling") -> Figure:
    """One panel per way of loading ({panel title: trials}): throughput (req/s) against loadgen CPU (% busy).

    Needs columns label, status, throughput_rps, loadgen_cpu_utilization
    (a share of the loadgen's CPUs, 0-1). Dashed: `headroom`, the
    utilization (0-1) below which a capacity is the server's; dotted:
    `saturated`, the utilization (0-1) at which a trial counts as
    loadgen-saturated. The figure draws both lines and decides neither: the
    caller gives them (`pages.CEILING_LINES`). Failed and saturated trials
    (the trials' own `loadgen_saturated`) are hollow.
    """
    frames = {name: frame for name, frame in trials_by_panel.items() if frame is not None and not frame.empty}
    if not frames:
        raise ValueError("loadgen_ceiling_figure: no trials in any panel")
    for name, frame in frames.items():
        require_columns(frame, ["label", "status", "throughput_rps", "loadgen_cpu_utilization"], f"ceiling panel {name!r}")
    labels = runtime_order(sorted({label for frame in frames.values() for label in frame["label"].unique()}))
    all_reasons = []
    with style_context():
        figure, axes = new_figure(6.4, 3.8, ncols=len(frames), sharey=True, squeeze=False)
        highest = max(float(pd.to_numeric(frame["throughput_rps"], errors="coerce").max()) for frame in frames.values())
        for axis, (name, frame) in zip(axes[0], frames.items()):
            reasons = exclusion_reasons(frame)
            all_reasons.append(reasons)
            for label in labels:
                rows = frame[frame["label"] == label]
                if rows.empty:
                    continue
                draw_trials(axis, pd.to_numeric(rows["loadgen_cpu_utilization"], errors="coerce").to_numpy(dtype=float),
                            pd.to_numeric(rows["throughput_rps"], errors="coerce").to_numpy(dtype=float),
                            (reasons.loc[rows.index] != "").to_numpy(), label, size=30, alpha=0.85)
            axis.axvline(headroom, color=HEADROOM_COLOUR, linestyle="--", linewidth=1, zorder=1)
            axis.axvline(saturated, color=HEADROOM_COLOUR, linestyle=":", linewidth=1, zorder=1)
            axis.set_xlim(0, 1.05)
            axis.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
            axis.set_xlabel("loadgen CPU (% of its core busy)")
            axis.set_title(name, fontsize="medium")
        axes[0][0].set_ylim(0, highest * 1.1 if np.isfinite(highest) and highest > 0 else 1)
        axes[0][0].yaxis.set_major_formatter(count_formatter())
        axes[0][0].set_ylabel("throughput (req/s)")
        figure.suptitle(title)
        # Markers at the size the panels draw them: nginx's grey star and a hollow point were hard to find at 4 pt.
        handles = [series_handle(label, marker_size=6) for label in labels]
        handles += [
            Line2D([], [], color=HEADROOM_COLOUR, linestyle="--", label=f"{headroom:.0%} busy: headroom ends"),
            Line2D([], [], color=HEADROOM_COLOUR, linestyle=":",
                   label=f"{saturated:.0%} busy: saturated"),
        ]
        handles += key_handles(None, pd.concat(all_reasons, ignore_index=True), median=None, points=None, marker_size=6)
        legend_below(figure, handles)
    return figure
