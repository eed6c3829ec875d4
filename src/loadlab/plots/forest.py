"""Forest plot of ratios with CIs: one row per comparison or claim, a reference line at 1."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from ._common import require_columns
from .style import new_figure, runtime_colour, style_context

# Ratio tick sets that read well on a log axis, symmetric around 1 (0.5x and 2x), finest
# first; the finest set that puts at most _MAXIMUM_TICKS on the axis is used.
_TICK_SETS = (
    (0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0),
    (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0),
    (0.001, 0.01, 0.1, 1.0, 10.0, 100.0, 1000.0),
)
_MAXIMUM_TICKS = 7


def _ratio_tick(value: float, _position: int) -> str:
    return f"{value:g}\N{MULTIPLICATION SIGN}"


def forest_figure(
    data: pd.DataFrame,
    label_column: str = "label",
    ratio_column: str = "ratio",
    low_column: str = "ratio_ci_low",
    high_column: str = "ratio_ci_high",
    group_column: str | None = None,
    claimed_column: str | None = None,
    noise_band: tuple[float, float] | None = None,
    x_label: str = "ratio of medians, candidate / baseline",
    title: str | None = None,
) -> Figure:
    """Ratios (dimensionless) with their CIs, first row at the top, on a log axis centred on 1.

    `data`: one row per comparison with `label_column` (e.g. "S3-throughput:
    rust-tokio / go-nethttp"), `ratio_column` and the CI bounds (NaN bounds:
    point only). `group_column` (optional): a server name per row that
    colours it with the runtime's colour. `claimed_column` (optional): the
    ratio a source claimed, drawn as a hollow diamond beside the measured one.
    `noise_band` (optional): (low, high) ratios an A/A control (the same
    server measured twice) produced; shaded so that a reader sees which
    differences exceed the noise floor. A ratio's CI crossing 1 means no
    detectable difference at that confidence.
    """
    columns = [label_column, ratio_column, low_column, high_column]
    columns += [c for c in (group_column, claimed_column) if c is not None]
    require_columns(data, columns, "forest_figure")
    rows = data.reset_index(drop=True)
    if noise_band is not None and not all(np.isfinite(np.asarray(noise_band, dtype=float))):
        noise_band = None  # an A/A run too small for an interval has no band to draw
    positions = np.arange(len(rows))[::-1]  # first row at the top
    every_value = pd.concat(
        [rows[c] for c in [ratio_column, low_column, high_column] + ([claimed_column] if claimed_column else [])]
    ).to_numpy(dtype=float)
    finite = every_value[np.isfinite(every_value) & (every_value > 0)]
    if noise_band is not None:
        finite = np.concatenate([finite, np.asarray(noise_band, dtype=float)])
    low_limit = min(finite.min(), 1.0) if finite.size else 0.5
    high_limit = max(finite.max(), 1.0) if finite.size else 2.0
    # Symmetric in log space around 1, so that 0.5x and 2x look equally far from "no difference".
    half_width = max(abs(np.log10(low_limit)), abs(np.log10(high_limit)), np.log10(1.25)) * 1.15

    with style_context():
        figure, axes = new_figure(7.0, 1.0 + 0.32 * len(rows))
        handles = []
        if noise_band is not None:
            axes.axvspan(noise_band[0], noise_band[1], color="0.85", zorder=0, linewidth=0)
            handles.append(Patch(color="0.85", label="A/A noise band"))
        axes.axvline(1.0, color="0.3", linestyle="--", linewidth=0.9, zorder=1)
        for position, (_, record) in zip(positions, rows.iterrows()):
            colour = runtime_colour(record[group_column]) if group_column else "0.15"
            ratio, low, high = (float(record[c]) for c in (ratio_column, low_column, high_column))
            if np.isfinite(low) and np.isfinite(high):
                axes.hlines(position, low, high, color=colour, linewidth=1.6, zorder=2)
            axes.plot(ratio, position, marker="o", color=colour, markersize=5, zorder=3)
            if claimed_column is not None and np.isfinite(float(record[claimed_column])):
                axes.plot(
                    float(record[claimed_column]), position, marker="D", markersize=5,
                    markerfacecolor="none", markeredgecolor=colour, zorder=3,
                )  # fmt: skip
        handles.append(Line2D([], [], color="0.15", marker="o", linewidth=1.6, label="measured (CI)"))
        if claimed_column is not None:
            claimed = Line2D([], [], color="0.15", marker="D", markerfacecolor="none", linestyle="none", label="claimed")
            handles.append(claimed)
        axes.set_xscale("log")
        axes.set_xlim(10**-half_width, 10**half_width)
        limit = 10**half_width
        for tick_set in _TICK_SETS:
            ticks = [t for t in tick_set if 1 / limit <= t <= limit]
            if len(ticks) <= _MAXIMUM_TICKS:
                break
        axes.xaxis.set_major_locator(FixedLocator(ticks))
        axes.xaxis.set_major_formatter(FuncFormatter(_ratio_tick))
        axes.xaxis.set_minor_formatter(NullFormatter())
        axes.set_yticks(positions, rows[label_column].astype(str))
        axes.set_ylim(-0.7, len(rows) - 0.3)
        axes.grid(axis="y", visible=False)
        axes.set_xlabel(f"{x_label} (log scale)")
        if title:
            figure.suptitle(title)
        figure.legend(handles=handles, loc="outside right upper")
    return figure
