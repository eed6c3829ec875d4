"""Forest plot of ratios with CIs: one row per comparison or verdict, a reference line at 1.

What a reader must be able to tell apart at a glance, and how:

- measured and claimed: a filled dot with its CI bar on the row's line, the
  claimed ratio a black cross just below it, never on top of it;
- the noise floor: per row, the A/A band of that row's metric, a grey box
  with a dark outline. On an axis spanning six decades a band of a few
  percent is narrower than a pixel, so when the data span more than about
  ×0.45 to ×2.2, a second panel zooms on ×0.5 to ×2, where the bands and
  the small differences (×1.09 against ×0.89) are seen at their true size;
- the numbers: printed right of the plot (verdict, measured ratio with its
  CI, claimed ratio, A/A band), because a mark can be read only so exactly.

Axes are logarithmic with decade ticks (×0.01, ×1, ×100, ...) on a wide
range, or finer ticks (×0.8, ×1, ×1.25, ...) within a decade or so.
"""

from __future__ import annotations

import math
import textwrap

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

from loadlab.units import format_ratio, format_ratio_interval

from ._common import finish_figure, require_columns
from .palette import series_style
from .style import style_context

# Ticks used within _FINE_TICKS_DECADES of 1, and the zoom panel's range, beyond which decades are used.
_FINE_TICKS = (0.5, 0.8, 1.0, 1.25, 2.0)
_FINE_MINOR_TICKS = (0.67, 0.9, 1.1, 1.5)
_FINE_TICKS_DECADES = math.log10(2.2)
ZOOM_LIMITS = (1 / 2.1, 2.1)
# At most this many labelled decades; the others keep an unlabelled tick.
_MAXIMUM_DECADE_LABELS = 5
NOISE_FILL, NOISE_EDGE = "0.85", "0.3"
CLAIMED_COLOUR = "black"
ZEBRA = "0.965"  # every other row's background, so a row can be followed to its numbers


_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _ratio_tick(value: float, _position: int) -> str:
    """"×0.01", "×1", "×1,000"; a decade past a thousand either way as a power ("×10⁶", "×10⁻⁶"), which
    "×1,000,000" beside "×1,000" on a narrow panel would overrun."""
    exponent = math.log10(value) if value > 0 else 0.0
    if abs(exponent) >= 4 and exponent == round(exponent):
        return f"\N{MULTIPLICATION SIGN}10{str(round(exponent)).translate(_SUPERSCRIPTS)}"
    return format_ratio(value) if value >= 1 else f"\N{MULTIPLICATION SIGN}{value:g}"


def _finite(value) -> bool:
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _row_note(record, ratio_column, low_column, high_column, claimed_column, verdict_column, noise) -> str:
    parts = []
    if verdict_column and isinstance(record.get(verdict_column), str):
        parts.append(record[verdict_column])
    ratio = record.get(ratio_column)
    if _finite(ratio):
        if _finite(record.get(low_column)) and _finite(record.get(high_column)):
            measured = format_ratio_interval(float(ratio), float(record[low_column]), float(record[high_column]))
        else:
            measured = format_ratio(float(ratio))
        parts.append(f"measured {measured}")
    if claimed_column and _finite(record.get(claimed_column)):
        parts.append(f"claimed {format_ratio(float(record[claimed_column]))}")
    if noise is not None:
        parts.append(f"A/A {format_ratio(noise[0])[1:]}\N{EN DASH}{format_ratio(noise[1])[1:]}")
    return " \N{MIDDLE DOT} ".join(parts)


def _x_limits(values: np.ndarray) -> tuple[float, float]:
    finite = values[np.isfinite(values) & (values > 0)]
    low = min(finite.min(), 1.0) if finite.size else 1.0
    high = max(finite.max(), 1.0) if finite.size else 1.0
    return min(low / 1.35, 1 / 1.3), max(high * 1.35, 1.3)


def _set_ticks(axes, low: float, high: float) -> None:
    if max(-math.log10(low), math.log10(high)) <= _FINE_TICKS_DECADES:
        axes.xaxis.set_major_locator(FixedLocator([t for t in _FINE_TICKS if low <= t <= high]))
        axes.xaxis.set_minor_locator(FixedLocator([t for t in _FINE_MINOR_TICKS if low <= t <= high]))
    else:
        decades = [10.0**d for d in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)]
        decades = [d for d in decades if low <= d <= high]
        if len(decades) < 3:
            # A range of one or two decades (x0.6 to x4, say) would show a lone x1: label 1-2-5 steps instead.
            steps = sorted(m * d for d in [10.0**e for e in range(math.floor(math.log10(low)) - 1,
                                                                 math.ceil(math.log10(high)) + 1)] for m in (1, 2, 5))
            axes.xaxis.set_major_locator(FixedLocator([t for t in steps if low <= t <= high]))
            axes.xaxis.set_minor_locator(FixedLocator([]))
            axes.xaxis.set_major_formatter(FuncFormatter(_ratio_tick))
            axes.xaxis.set_minor_formatter(NullFormatter())
            return
        step = math.ceil(len(decades) / _MAXIMUM_DECADE_LABELS)
        # Labelled decades include ×1; the others are unlabelled ticks.
        one = decades.index(1.0)
        labelled = [d for i, d in enumerate(decades) if (i - one) % step == 0]
        axes.xaxis.set_major_locator(FixedLocator(labelled))
        axes.xaxis.set_minor_locator(FixedLocator([d for d in decades if d not in labelled]))
    axes.xaxis.set_major_formatter(FuncFormatter(_ratio_tick))
    axes.xaxis.set_minor_formatter(NullFormatter())


def _draw_rows(axes, rows, positions, bands, columns) -> None:
    """Zebra rows, the ×1 line, each row's noise band, measured ratio with CI, and claimed ratio."""
    label_column, ratio_column, low_column, high_column, group_column, claimed_column = columns
    for position in positions[::2]:
        axes.axhspan(position - 0.5, position + 0.5, color=ZEBRA, zorder=0, linewidth=0)
    axes.axvline(1.0, color="0.3", linestyle="--", linewidth=0.9, zorder=1)
    for position, (_, record), band in zip(positions, rows.iterrows(), bands):
        group = record[group_column] if group_column else None
        colour = series_style(group).colour if isinstance(group, str) and group else "0.15"
        if band is not None and _finite(record[ratio_column]):
            # Outlined, so that a band narrower than a pixel still shows as a mark.
            axes.add_patch(Rectangle((band[0], position - 0.42), band[1] - band[0], 0.84, facecolor=NOISE_FILL,
                                     edgecolor=NOISE_EDGE, linewidth=0.8, zorder=1))  # fmt: skip
        if _finite(record[ratio_column]):
            if _finite(record[low_column]) and _finite(record[high_column]):
                axes.hlines(position + 0.08, float(record[low_column]), float(record[high_column]), color=colour,
                            linewidth=1.8, zorder=3)  # fmt: skip
            axes.plot(float(record[ratio_column]), position + 0.08, marker="o", markersize=6, color=colour,
                      markeredgecolor="white", markeredgewidth=0.6, zorder=4)  # fmt: skip
        if claimed_column and _finite(record[claimed_column]):
            axes.plot(float(record[claimed_column]), position - 0.25, marker="x", markersize=6,
                      markeredgewidth=1.6, color=CLAIMED_COLOUR, zorder=4)  # fmt: skip
    axes.set_xscale("log")
    axes.set_ylim(-0.6, len(rows) - 0.4)
    axes.grid(axis="y", visible=False)


def forest_figure(
    data: pd.DataFrame,
    label_column: str = "label",
    ratio_column: str = "ratio",
    low_column: str = "ratio_ci_low",
    high_column: str = "ratio_ci_high",
    group_column: str | None = None,
    claimed_column: str | None = None,
    noise_band: tuple[float, float] | None = None,
    noise_low_column: str | None = None,
    noise_high_column: str | None = None,
    verdict_column: str | None = None,
    x_label: str = "ratio of medians, candidate / baseline",
    title: str | None = None,
    estimator: str = "ratio of medians",
    confidence_column: str | None = None,
) -> Figure:
    """Ratios (dimensionless) with their CIs, first row at the top, on a log axis, numbers beside.

    `data`: one row per comparison or verdict with `label_column` (e.g.
    "S3-throughput (rust / go)"), `ratio_column` and the CI bounds (NaN
    bounds: point only; a NaN ratio: a row with its note only, e.g. a
    verdict that is not a ratio). `group_column` (optional): a server name
    per row, whose fixed colour the row takes. `claimed_column` (optional):
    the ratio the source claimed. The noise floor: either one `noise_band`
    (low, high) for every row, or per-row bounds in `noise_low_column` /
    `noise_high_column` (the A/A band of each row's own metric; NaN: none
    measured for that metric). `verdict_column` (optional) starts each row's
    note. A CI crossing ×1 means no detectable difference at that confidence.
    The legend names `estimator` (what the dot is, e.g. "Hodges-Lehmann
    ratio") and the intervals' level, read from `confidence_column` (each
    row's own level, 0-1: a verdict's interval is simultaneous for its
    family, so levels differ between families); without one it says the
    level is not given rather than assume 95%.
    """
    columns = [label_column, ratio_column, low_column, high_column]
    columns += [c for c in (group_column, claimed_column, noise_low_column, noise_high_column, verdict_column) if c]
    require_columns(data, columns, "forest_figure")
    rows = data.reset_index(drop=True)
    bands = _noise_bands(rows, noise_band, noise_low_column, noise_high_column)
    value_columns = [ratio_column, low_column, high_column] + ([claimed_column] if claimed_column else [])
    values = pd.concat([pd.to_numeric(rows[c], errors="coerce") for c in value_columns]).to_numpy(dtype=float)
    values = np.concatenate([values, np.array([v for band in bands if band for v in band], dtype=float)])
    low_limit, high_limit = _x_limits(values)
    positions = np.arange(len(rows))[::-1]  # first row at the top
    # A row without a measured ratio has no use for the band in its note.
    notes = [_row_note(record, ratio_column, low_column, high_column, claimed_column, verdict_column,
                       band if _finite(record[ratio_column]) else None)
             for (_, record), band in zip(rows.iterrows(), bands)]  # fmt: skip

    columns = (label_column, ratio_column, low_column, high_column, group_column, claimed_column)
    zoomed = max(-math.log10(low_limit), math.log10(high_limit)) > _FINE_TICKS_DECADES

    with style_context():
        figure = Figure(figsize=(13.0 if zoomed else 10.0, 1.9 + 0.3 * len(rows)), layout="constrained")
        panels = figure.subplots(1, 2, sharey=True) if zoomed else [figure.subplots()]
        _draw_panels(panels, rows, positions, bands, columns, (low_limit, high_limit), x_label)
        # The numbers as the right-hand tick labels of the last panel: the layout then makes room for them.
        notes_axes = panels[-1].twinx()
        notes_axes.set_ylim(panels[-1].get_ylim())
        notes_axes.set_yticks(positions, notes, fontsize="small")
        notes_axes.tick_params(axis="y", length=0)
        notes_axes.grid(False)
        levels = pd.to_numeric(rows[confidence_column], errors="coerce") if confidence_column else None
        finish_figure(figure, title, _forest_legend(any(band is not None for band in bands),
                                                    f"measured {estimator}, {interval_level_text(levels)}"))
    return figure


def interval_level_text(levels: pd.Series | None) -> str:
    """How the legend names the intervals' level: "95% CI", "97.5-99.4% simultaneous CI (per family)", or that
    the level is not given. `levels`: each row's confidence, 0-1 (NaN: a row without an interval)."""
    finite = sorted({round(float(v) * 100, 1) for v in (levels if levels is not None else []) if _finite(v)})
    if not finite:
        return "interval (level not given)"
    if len(finite) == 1:
        return f"{finite[0]:g}% CI"
    return f"{finite[0]:g}-{finite[-1]:g}% CI (each family's simultaneous level)"


def _noise_bands(rows: pd.DataFrame, noise_band: tuple[float, float] | None, low_column: str | None,
                 high_column: str | None) -> list[tuple[float, float] | None]:
    """Each row's A/A band: its own metric's when measured, else the figure's one band, else none."""
    if noise_band is not None and not all(_finite(v) for v in noise_band):
        noise_band = None  # an A/A run too small for an interval has no band to draw
    bands = []
    for _, record in rows.iterrows():
        if low_column and _finite(record[low_column]) and _finite(record[high_column]):
            bands.append((float(record[low_column]), float(record[high_column])))
        else:
            bands.append(tuple(map(float, noise_band)) if noise_band is not None else None)
    return bands


def _draw_panels(panels, rows: pd.DataFrame, positions: np.ndarray, bands: list, columns: tuple,
                 limits: tuple[float, float], x_label: str) -> None:
    """Every row on the first panel; with a second panel, the same rows zoomed on x0.5 to x2."""
    zoomed = len(panels) > 1
    _draw_rows(panels[0], rows, positions, bands, columns)
    panels[0].set_xlim(*limits)
    _set_ticks(panels[0], *limits)
    panels[0].set_yticks(positions, rows[columns[0]].astype(str))
    if zoomed:
        _draw_rows(panels[1], rows, positions, bands, columns)
        panels[1].set_xlim(*ZOOM_LIMITS)
        _set_ticks(panels[1], *ZOOM_LIMITS)
        panels[0].set_title("every row", fontsize="medium")
        panels[1].set_title("zoom on \N{MULTIPLICATION SIGN}0.5 to \N{MULTIPLICATION SIGN}2", fontsize="medium")
        panels[1].tick_params(axis="y", left=False, labelleft=False)
    # Wrapped: two panels share the width, and their labels must not meet.
    panels[0].set_xlabel(textwrap.fill(f"{x_label} (log scale)", 34 if zoomed else 80))
    if zoomed:
        panels[1].set_xlabel("the same ratio, zoomed\n(log scale)")


def _forest_legend(has_bands: bool, measured_label: str) -> list:
    handles = [
        Line2D([], [], color="0.15", marker="o", markersize=6, markeredgecolor="white", linewidth=1.8,
               label=measured_label),
        Line2D([], [], color=CLAIMED_COLOUR, marker="x", markersize=6, markeredgewidth=1.6, linestyle="none",
               label="claimed by the source"),
        Line2D([], [], color="0.3", linestyle="--", linewidth=0.9, label="\N{MULTIPLICATION SIGN}1: no difference"),
    ]  # fmt: skip
    if has_bands:
        handles.append(Patch(facecolor=NOISE_FILL, edgecolor=NOISE_EDGE, linewidth=0.8,
                             label="A/A noise band of the row's metric"))  # fmt: skip
    return handles
