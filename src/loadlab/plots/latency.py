"""Latency percentile spectrum on a "nines" axis, ticks at 50, 90, 99, 99.9, 99.99 and max."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ._common import exclusion_reasons, finish_figure, key_handles, median_summary, trial_line_handles
from ._common import require_columns, seconds_y_axis, series_handle
from .palette import runtime_order, series_style
from .style import new_figure, style_context

# The percentiles a reader looks for; only these get a tick, however dense the spectrum.
TICK_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99, 99.999)
FIRST_PERCENTILE = 50.0
# Where "max" (percentile 100, infinitely many nines) is drawn: this far right of the last finite tick.
_MAX_GAP_NINES = 0.7


def percentile_to_nines(percentile: float | np.ndarray) -> np.ndarray:
    """-log10(1 - p/100): p50 -> 0.30, p90 -> 1, p99 -> 2, p99.9 -> 3, p99.99 -> 4 (p < 100)."""
    return -np.log10(1.0 - np.asarray(percentile, dtype=float) / 100.0)


def percentile_label(percentile: float) -> str:
    """50 -> "50", 99.9 -> "99.9": the tick label of a percentile (the axis label says "percentile")."""
    return f"{percentile:g}"


def latency_spectrum_figure(
    data: pd.DataFrame,
    percentile_column: str = "percentile",
    latency_column: str = "latency_s",
    group_column: str = "server",
    trial_column: str = "trial",
    confidence: float = 0.95,
    title: str | None = None,
) -> Figure:
    """Latency against percentile, x on a nines scale, y in seconds (log when it spans a decade).

    `data`: one row per (server, percentile[, trial]) with `percentile_column`
    in (0, 100] (100 = max, drawn as a separate marker at the right) and
    `latency_column` in seconds. Typical input is the merged spectrum of each
    server (`loadlab.stats.hdr_latency_spectrum(...).as_rows()`), one row per
    percentile. If `trial_column` is present with several trials per server,
    each trial's spectrum is drawn thin and the median across trials with
    its `confidence` CI as line and band. Optional columns
    ``latency_ci_low_s`` / ``latency_ci_high_s`` draw a precomputed band
    instead. Optional ``status`` / ``failure_reason`` / ``loadgen_saturated``
    columns mark excluded trials: dashed, and left out of the median. The
    spectrum is drawn from p50; ticks sit at 50, 90, 99, 99.9, 99.99 (as far
    as the data reach) and max, never at every measured percentile. Label
    closed-loop (wrk) data as such in `title`: closed-loop latency hides
    stalls (coordinated omission).
    """
    require_columns(data, [group_column, percentile_column, latency_column], "latency_spectrum_figure")
    frame, scale = _spectrum_frame(data, percentile_column)
    has_trials = trial_column in frame.columns and frame.groupby(group_column)[trial_column].nunique().max() > 1
    servers = runtime_order(frame[group_column].unique())
    reasons = exclusion_reasons(frame)
    with style_context():
        figure, axes = new_figure(6.0, 4.0)
        for server in servers:
            rows = frame[frame[group_column] == server]
            if has_trials:
                _draw_trials(axes, rows, reasons, server, percentile_column, latency_column, trial_column)
                evidence = rows[reasons.loc[rows.index] == ""]
                summary = median_summary(evidence, group_column, "nines", latency_column, confidence)
                points = summary.rename(columns={"median": latency_column})
                low, high = points["ci_low"], points["ci_high"]
            else:
                points, low, high = rows, rows.get("latency_ci_low_s"), rows.get("latency_ci_high_s")
            _draw_spectrum(axes, points, low, high, server, latency_column, scale)
        _nines_x_axis(axes, frame, percentile_column, scale)
        seconds_y_axis(axes, frame[latency_column])
        axes.set_xlabel("percentile (%), on a nines scale: 90, 99, 99.9 are each ten times rarer")
        axes.set_ylabel("latency")  # the ticks carry their unit (µs, ms, s)
        finish_figure(figure, title, _spectrum_legend(servers, has_trials, reasons, confidence, frame.get(trial_column)))
    return figure


@dataclasses.dataclass
class _NinesScale:
    """Where the x axis puts its ticks (percentiles and their nines) and "max" (in nines)."""

    tick_percentiles: list[float]
    tick_nines: np.ndarray
    max_x: float


def _spectrum_frame(data: pd.DataFrame, percentile_column: str) -> tuple[pd.DataFrame, _NinesScale]:
    """The rows from p50 on with their x position ("nines"; max at `max_x`), and the ticks the data reach."""
    frame = data.copy()
    frame[percentile_column] = pd.to_numeric(frame[percentile_column], errors="coerce")
    if ((frame[percentile_column] <= 0) | (frame[percentile_column] > 100)).any():
        raise ValueError(f"{percentile_column} must lie in (0, 100]")
    if (frame[percentile_column] >= FIRST_PERCENTILE).any():
        # Below the median the nines scale has no room (p0.1 to p50 fit in 0.3 of a unit): draw from p50.
        frame = frame[frame[percentile_column] >= FIRST_PERCENTILE]
    finite = frame[frame[percentile_column] < 100]
    percentiles = np.sort(finite[percentile_column].unique())
    max_x = (percentile_to_nines(percentiles.max()) if percentiles.size else 0.0) + _MAX_GAP_NINES
    # Ticks at the standard percentiles the data reaches (and at the measured ones when there are few).
    tick_percentiles = [p for p in TICK_PERCENTILES if percentiles.size and percentiles.min() <= p <= percentiles.max()]
    if len(percentiles) <= len(TICK_PERCENTILES):
        tick_percentiles = list(percentiles)
    tick_nines = percentile_to_nines(np.asarray(tick_percentiles, dtype=float)) if tick_percentiles else np.array([])
    frame["nines"] = np.where(
        frame[percentile_column] < 100, percentile_to_nines(frame[percentile_column].clip(upper=99.9999999)), max_x
    )
    return frame, _NinesScale(tick_percentiles, tick_nines, max_x)


def _draw_trials(axes, rows: pd.DataFrame, reasons: pd.Series, server: str, percentile_column: str,
                 latency_column: str, trial_column: str) -> None:
    """Each trial's spectrum, thin; an excluded trial dashed (a line cannot be hollow)."""
    colour = series_style(server).colour
    for _, trial in rows.groupby(trial_column):
        curve = trial[trial[percentile_column] < 100].sort_values("nines")
        excluded = bool((reasons.loc[trial.index] != "").any())
        axes.plot(curve["nines"], curve[latency_column], color=colour, alpha=0.35,
                  linewidth=0.8 if excluded else 0.6, linestyle="--" if excluded else "-")  # fmt: skip


def _draw_spectrum(axes, points: pd.DataFrame, low, high, server: str, latency_column: str, scale: _NinesScale) -> None:
    """One server's spectrum (markers at the ticks only), its band when it has one, and its max apart."""
    style = series_style(server)
    points = points.sort_values("nines")
    curve = points[points["nines"] < scale.max_x]
    # Markers only at the labelled percentiles: the spectrum itself has about a thousand points.
    marked = np.flatnonzero(np.isin(np.round(curve["nines"].to_numpy(dtype=float), 9), np.round(scale.tick_nines, 9)))
    axes.plot(curve["nines"], curve[latency_column], color=style.colour, marker=style.marker, markersize=4,
              linestyle=style.linestyle, markevery=list(marked))  # fmt: skip
    if low is not None and high is not None:
        # Numbers, not objects: a server whose every trial was excluded has an empty summary of no dtype.
        band = pd.DataFrame({"nines": points["nines"], "low": low, "high": high}).apply(pd.to_numeric, errors="coerce")
        band = band[band["nines"] < scale.max_x].dropna().sort_values("nines")
        if len(band):
            axes.fill_between(band["nines"], band["low"], band["high"], color=style.colour, alpha=0.2, linewidth=0)
    maximum = points[points["nines"] >= scale.max_x]
    axes.scatter(maximum["nines"], maximum[latency_column], color=style.colour, marker=style.marker, s=18, zorder=4)


def _nines_x_axis(axes, frame: pd.DataFrame, percentile_column: str, scale: _NinesScale) -> None:
    """Ticks at the standard percentiles, "max" fenced off at the right."""
    ticks = list(scale.tick_nines)
    labels = [percentile_label(p) for p in scale.tick_percentiles]
    if (frame[percentile_column] == 100).any():
        ticks.append(scale.max_x)
        labels.append("max")
        # "max" is not on the nines scale: fence it off.
        axes.axvline(scale.max_x - _MAX_GAP_NINES / 2, color=".6", linewidth=0.8, linestyle=":")
    axes.set_xticks(ticks, labels)
    finite_nines = frame.loc[frame[percentile_column] < 100, "nines"]
    left = min([min(ticks) - 0.2] + ([float(finite_nines.min()) - 0.05] if len(finite_nines) else [])) if ticks else 0
    axes.set_xlim(left, max(ticks) + 0.3 if ticks else 1)


def _spectrum_legend(servers, has_trials: bool, reasons: pd.Series, confidence: float, trials) -> list:
    handles = [series_handle(server) for server in servers]
    if has_trials:
        handles += key_handles(confidence, None, points=None)
        handles += trial_line_handles(reasons, trials, one_width=0.6, excluded_width=0.8)
    return handles
