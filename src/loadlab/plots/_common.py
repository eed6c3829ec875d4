"""Helpers shared by the figure modules: checking input columns, medians with CIs, legends."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from loadlab.stats.median import median_ci


def require_columns(data: pd.DataFrame, columns: Sequence[str], figure: str) -> None:
    """Raise KeyError naming the figure and the missing columns."""
    missing = [column for column in columns if column not in data.columns]
    if missing:
        raise KeyError(
            f"{figure} needs column(s) {', '.join(missing)}; the data has {', '.join(map(str, data.columns))}"
        )
    if data.empty:
        raise ValueError(f"{figure}: the data is empty")


def median_summary(
    data: pd.DataFrame, group_column: str, x_column: str, y_column: str, confidence: float
) -> pd.DataFrame:
    """Per (group, x): median of y across rows (trials) with its CI (loadlab.stats.median_ci), and n.

    CI bounds are NaN below the minimum number of trials for the confidence,
    so a band simply is not drawn there.
    """
    rows = []
    for (group, x), block in data.groupby([group_column, x_column], sort=True):
        values = pd.to_numeric(block[y_column], errors="coerce").to_numpy(dtype=float)
        values = values[np.isfinite(values)]
        if values.size == 0:
            continue
        estimate = median_ci(values, confidence)
        rows.append(
            {
                group_column: group,
                x_column: x,
                "median": estimate.median,
                "ci_low": estimate.ci_low,
                "ci_high": estimate.ci_high,
                "n": estimate.n,
            }
        )
    return pd.DataFrame(rows, columns=[group_column, x_column, "median", "ci_low", "ci_high", "n"])


def legend_outside(figure: Figure, axes: Axes, title: str | None = None) -> None:
    """Put the legend outside the plotting area, on the right, so it can never cover data."""
    handles, labels = axes.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    if unique:
        legend = figure.legend(
            unique.values(), unique.keys(), loc="outside right upper", title=title, alignment="left"
        )
        if title:
            legend.get_title().set_fontsize("small")
            legend.get_title().set_color(".35")


def band_caption(confidence: float) -> str:
    """Text explaining what the shaded band is."""
    return f"line: median of trials\nband: {confidence:.0%} CI of median\npoints: single trials"
