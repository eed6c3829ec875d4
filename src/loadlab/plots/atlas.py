"""The atlas figure (notebook 07): small multiples, one panel per axis, every runtime on the same rows.

Each panel is a dot plot: a runtime's median as its palette marker with the
interval of the median as a bar; a median read from too few trials for an
interval is drawn without a bar (the key says so); a runtime with no value
on an axis keeps its row, with "not measured" written in it, so that every
panel has the same rows and a missing runtime is seen, not hidden. An axis
whose values span a decade or more is logarithmic.

The table comes from `pages.atlas.atlas_table` (columns axis, runtime,
median, ci_low, ci_high, n); the panels are (axis key, axis label with its
unit) pairs, so this module decides nothing about what is drawn.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from ._common import KEY_COLOUR, finish_figure, require_columns
from .palette import series_style
from .style import compact_formatter, format_log_axis, new_figure, plain_formatter, spans_decades, style_context

MISSING_COLOUR = "0.45"
COLUMNS_PER_ROW = 3


def _extent(block: pd.DataFrame) -> pd.Series:
    """Every finite median and bound of `block`: what a panel's x axis must show."""
    return pd.concat([pd.to_numeric(block[column], errors="coerce") for column in ("median", "ci_low", "ci_high")]
                     ).dropna()


def _draw_panel(axes, block: pd.DataFrame, runtimes: Sequence[str], label: str, bounds: pd.Series,
                confidence: float = 0.95) -> None:
    """One axis of the atlas: a row per runtime (top to bottom in `runtimes` order), median and interval, on an x
    axis that shows `bounds` (this panel's values and those of the panels it shares its scale with)."""
    rows = {runtime: position for position, runtime in enumerate(runtimes)}
    values = block.set_index("runtime")
    logarithmic = spans_decades(bounds)
    for runtime, y in rows.items():
        row = values.loc[runtime] if runtime in values.index else None
        median = float(row["median"]) if row is not None else math.nan
        if not math.isfinite(median):
            axes.text(0.03, y, "not measured", transform=axes.get_yaxis_transform(), va="center", ha="left",
                      color=MISSING_COLOUR, fontsize="x-small", fontstyle="italic")
            continue
        style = series_style(runtime)
        low, high = float(row["ci_low"]), float(row["ci_high"])
        coverage = float(row["coverage"]) if "coverage" in row.index else math.nan
        if math.isfinite(low) and math.isfinite(high):
            # A range of few trials (a lower coverage than the panel's level) is drawn thinner and dashed.
            few = math.isfinite(coverage) and coverage < confidence - 1e-9
            axes.plot([low, high], [y, y], color=style.colour, linewidth=0.9 if few else 1.6,
                      linestyle=(0, (3, 2)) if few else "-", solid_capstyle="butt")
        axes.plot([median], [y], marker=style.marker, color=style.colour, markersize=6, linestyle="none")
    axes.set_ylim(len(runtimes) - 0.5, -0.5)
    axes.set_yticks(range(len(runtimes)))
    axes.set_yticklabels(list(runtimes))
    axes.grid(axis="y", visible=False)
    axes.set_xlabel(label)
    if bounds.empty:
        axes.set_xticks([])
        return
    if logarithmic:
        axes.set_xscale("log")
        # The labels' density follows the span drawn (the padded limits), not the values' alone, or a narrow
        # panel gets 2, 3 and 5 times each decade and they overlap.
        limits = (bounds.min() / 1.6, bounds.max() * 1.6)
        # Thousands as "20k": a panel a sixth of the figure wide has no room for "100,000" beside "200,000".
        format_log_axis(axes.xaxis, pd.Series(limits), compact_formatter())
        axes.set_xlim(*limits)
    else:
        axes.xaxis.set_major_formatter(plain_formatter())
        axes.set_xlim(0, bounds.max() * 1.12)
    axes.tick_params(axis="x", labelrotation=30)


def atlas_figure(table: pd.DataFrame, panels: Sequence[tuple[str, str, str | None]], runtimes: Sequence[str],
                 title: str | None = None, confidence: float = 0.95):
    """Small multiples of `table` (one row per axis and runtime: `median`, `ci_low`, `ci_high`; NaN where not
    measured): a panel per (axis key, axis label, scale group) in `panels`, rows `runtimes` in every panel,
    labelled on the left column only. Panels of one scale group (not None: the same quantity at two conditions)
    share their x axis's range and scale, so their values compare by eye."""
    require_columns(table, ["axis", "runtime", "median", "ci_low", "ci_high"], "atlas_figure")
    rows = math.ceil(len(panels) / COLUMNS_PER_ROW)
    with style_context():
        figure, grid = new_figure(3.0 * COLUMNS_PER_ROW, 0.32 * len(runtimes) * rows + 2.2, nrows=rows,
                                  ncols=COLUMNS_PER_ROW, sharey=True, squeeze=False)
        for index, axes in enumerate(np.ravel(grid)):
            if index >= len(panels):
                axes.set_visible(False)
                continue
            key, label, group = panels[index]
            shared = [k for k, _, g in panels if g is not None and g == group] or [key]
            _draw_panel(axes, table[table["axis"] == key], runtimes, label,
                        _extent(table[table["axis"].isin(shared)]), confidence)
        handles = [
            Line2D([], [], color=KEY_COLOUR, marker="o", linewidth=1.6, markersize=5,
                   label=f"median of trials, bar: its {confidence:.0%} CI"),
            Line2D([], [], color=KEY_COLOUR, marker="o", linewidth=0.9, linestyle=(0, (3, 2)), markersize=5,
                   label="few trials: bar is their range\n(75% coverage with 3 trials)"),
        ]
        finish_figure(figure, title, handles)
    return figure
