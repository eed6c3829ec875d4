"""Latency percentile spectrum on a "nines" axis (p50, p90, p99, p99.9, p99.99, max)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ._common import legend_outside, median_summary, require_columns
from .style import (
    new_figure,
    runtime_colour,
    runtime_marker,
    runtime_order,
    seconds_formatter,
    spans_decades,
    style_context,
)

# Where "max" (percentile 100, infinitely many nines) is drawn: this far right of the last finite tick.
_MAX_GAP_NINES = 0.7


def percentile_to_nines(percentile: float | np.ndarray) -> np.ndarray:
    """-log10(1 - p/100): p50 -> 0.30, p90 -> 1, p99 -> 2, p99.9 -> 3, p99.99 -> 4 (p < 100)."""
    return -np.log10(1.0 - np.asarray(percentile, dtype=float) / 100.0)


def _percentile_label(percentile: float) -> str:
    return f"p{percentile:g}"


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
    instead. Label closed-loop (wrk) data as such in `title`: closed-loop
    latency hides stalls (coordinated omission).
    """
    require_columns(data, [group_column, percentile_column, latency_column], "latency_spectrum_figure")
    frame = data.copy()
    frame[percentile_column] = pd.to_numeric(frame[percentile_column], errors="coerce")
    if ((frame[percentile_column] <= 0) | (frame[percentile_column] > 100)).any():
        raise ValueError(f"{percentile_column} must lie in (0, 100]")
    finite = frame[frame[percentile_column] < 100]
    percentiles = np.sort(finite[percentile_column].unique())
    max_x = (percentile_to_nines(percentiles.max()) if percentiles.size else 0.0) + _MAX_GAP_NINES
    frame["nines"] = np.where(
        frame[percentile_column] < 100, percentile_to_nines(frame[percentile_column].clip(upper=99.9999999)), max_x
    )
    has_trials = trial_column in frame.columns and frame.groupby(group_column)[trial_column].nunique().max() > 1
    servers = runtime_order(frame[group_column].unique())

    with style_context():
        figure, axes = new_figure(6.0, 3.6)
        for server in servers:
            colour, marker = runtime_colour(server), runtime_marker(server)
            rows = frame[frame[group_column] == server]
            if has_trials:
                for _, trial in rows.groupby(trial_column):
                    curve = trial[trial[percentile_column] < 100].sort_values("nines")
                    axes.plot(curve["nines"], curve[latency_column], color=colour, alpha=0.3, linewidth=0.6)
                summary = median_summary(rows, group_column, "nines", latency_column, confidence)
                summary = summary.rename(columns={"median": latency_column})
                low, high = summary["ci_low"], summary["ci_high"]
                points = summary
            else:
                points = rows
                low = rows.get("latency_ci_low_s")
                high = rows.get("latency_ci_high_s")
            points = points.sort_values("nines")
            curve = points[points["nines"] < max_x]
            axes.plot(curve["nines"], curve[latency_column], color=colour, marker=marker, markersize=4, label=server)
            if low is not None and high is not None:
                band = pd.DataFrame({"nines": points["nines"], "low": low, "high": high}).sort_values("nines")
                band = band[band["nines"] < max_x]
                axes.fill_between(band["nines"], band["low"], band["high"], color=colour, alpha=0.2, linewidth=0)
            maximum = points[points["nines"] >= max_x]
            axes.scatter(maximum["nines"], maximum[latency_column], color=colour, marker=marker, s=18, zorder=4)

        ticks = [float(percentile_to_nines(p)) for p in percentiles]
        labels = [_percentile_label(p) for p in percentiles]
        if (frame[percentile_column] == 100).any():
            ticks.append(max_x)
            labels.append("max")
            # "max" is not on the nines scale: fence it off.
            axes.axvline(max_x - _MAX_GAP_NINES / 2, color=".6", linewidth=0.8, linestyle=":")
        axes.set_xticks(ticks, labels)
        axes.set_xlim(min(ticks) - 0.2 if ticks else 0, max(ticks) + 0.3 if ticks else 1)
        if spans_decades(frame[latency_column]):
            axes.set_yscale("log")
        else:
            axes.set_ylim(bottom=0)
        axes.yaxis.set_major_formatter(seconds_formatter())
        axes.set_xlabel("percentile (nines scale: each step is ten times rarer)")
        axes.set_ylabel("latency (s)")
        if title:
            figure.suptitle(title)
        caption = None
        if has_trials:
            caption = f"thin: single trials\nline: median of trials\nband: {confidence:.0%} CI of median"
        legend_outside(figure, axes, title=caption)
    return figure
