"""Latency against offered load in an open loop, and where each server's knee lies.

An open loop offers each server fixed fractions of its own capacity (the run's
levels). Below the knee the server keeps up: it serves what is offered and its
tail latency stays near its light-load value. Past the knee it does not: it
serves less than offered, a queue grows for as long as the window lasts, and
latency is set by the window's length rather than by the server. The knee is
placed between the last level where the server kept up and the first where it
did not, by two tests on the medians of its trials:

- served share: successful answers per second over the rate offered, below
  `KNEE_SERVED_SHARE`;
- tail: the p99 more than `KNEE_P99_FACTOR` times its value at the lowest
  level.

Only ok trials count; a trial whose loadgen was saturated did not offer what
was asked, so it is left out of the medians (and drawn hollow).

`merged_latency` is the other reading of an open loop's latency: every
request of a condition's trials together, their histograms merged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd

from loadlab import stats
from loadlab.loadgen import vegeta

# A server that serves less than 95% of what is offered is not keeping up (an open loop at a rate it can serve
# is answered in full, give or take the requests still in flight when the window closes).
KNEE_SERVED_SHARE = 0.95
# A p99 ten times its light-load value is a queue, not a service time.
KNEE_P99_FACTOR = 10.0

CURVE_COLUMNS = ("label", "level", "trials_used", "trials_left_out", "rate_asked_rps", "rate_offered_rps",
                 "throughput_rps", "served_share", "latency_p50_s", "latency_p99_s", "latency_p99_s_ci_low",
                 "latency_p99_s_ci_high", "server_cpu_throttled_period_share", "past_knee")


@dataclass(frozen=True)
class Knee:
    """Where one server stopped keeping up: between `below` and `above` (fractions of its capacity).

    `below` is None when even the lowest level was past the knee, `above`
    None when no level was (the knee lies beyond the top level); both None
    when no level had a usable trial (nothing to place a knee by).
    """

    label: str
    below: float | None
    above: float | None
    reason: str

    def text(self, of: str = "of its capacity") -> str:
        """One line for a page; `of` says whose capacity the levels are fractions of."""
        if self.above is None and self.below is None:
            return f"{self.label}: no knee can be placed ({self.reason})"
        if self.above is None:
            return f"{self.label}: no knee up to {self.below:g} {of} ({self.reason})"
        if self.below is None:
            return f"{self.label}: past the knee already at {self.above:g} {of} ({self.reason})"
        return f"{self.label}: knee between {self.below:g} and {self.above:g} {of} ({self.reason})"


def _usable(trials: pd.DataFrame) -> pd.Series:
    ok = trials["status"] == "ok"
    if "loadgen_saturated" in trials:
        ok &= ~trials["loadgen_saturated"].astype("boolean").fillna(False).astype(bool)
    return ok


def _median(values: pd.Series) -> float:
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    return float(numbers.median()) if len(numbers) else math.nan


def latency_curve(trials: pd.DataFrame, rates_asked_rps: dict[tuple[str, float], float] | None = None) -> pd.DataFrame:
    """One row per (server, level): medians over the usable trials, the p99's CI, and whether it is past the knee.

    `rates_asked_rps`: the rate each condition asked the generator for, keyed by
    (label, level) (`loadlab.judgements.open_loop.offered_rates_by_condition`); the served
    share is throughput over that rate, or over the rate the trial recorded as
    offered where it is not given.
    """
    rows = []
    usable = _usable(trials)
    for label, by_server in trials.groupby("label", sort=True):
        floor_p99 = math.nan
        for level, block in by_server.groupby("level", sort=True):
            used = block[usable.loc[block.index]]
            asked = (rates_asked_rps or {}).get((label, float(level)), _median(used.get("rate_offered_rps", pd.Series(dtype=float))))
            throughput = _median(used.get("throughput_rps", pd.Series(dtype=float)))
            p99 = pd.to_numeric(used.get("latency_p99_s", pd.Series(dtype=float)), errors="coerce").dropna().to_numpy(dtype=float)
            estimate = stats.median_ci(p99) if p99.size else None
            p99_median = estimate.median if estimate is not None else math.nan
            if math.isnan(floor_p99):
                floor_p99 = p99_median
            served = throughput / asked if asked and math.isfinite(throughput) else math.nan
            past = bool((math.isfinite(served) and served < KNEE_SERVED_SHARE) or
                        (math.isfinite(p99_median) and math.isfinite(floor_p99) and p99_median > KNEE_P99_FACTOR * floor_p99))
            rows.append({
                "label": label, "level": float(level), "trials_used": int(len(used)),
                "trials_left_out": int(len(block) - len(used)), "rate_asked_rps": asked,
                "rate_offered_rps": _median(used.get("rate_offered_rps", pd.Series(dtype=float))),
                "throughput_rps": throughput, "served_share": served,
                "latency_p50_s": _median(used.get("latency_p50_s", pd.Series(dtype=float))),
                "latency_p99_s": p99_median,
                "latency_p99_s_ci_low": estimate.ci_low if estimate is not None else math.nan,
                "latency_p99_s_ci_high": estimate.ci_high if estimate is not None else math.nan,
                "server_cpu_throttled_period_share": _median(used.get("server_cpu_throttled_period_share",
                                                                      pd.Series(dtype=float))),
                "past_knee": past if len(used) else None,
            })
    return pd.DataFrame(rows, columns=list(CURVE_COLUMNS))


def knees(curve: pd.DataFrame) -> list[Knee]:
    """Each server's knee from its curve (`latency_curve`): the first level past it and the level before."""
    out = []
    for label, rows in curve.groupby("label", sort=True):
        rows = rows.sort_values("level")
        below = None
        knee = None
        unmeasured = []
        for row in rows.itertuples():
            if row.past_knee is None:
                unmeasured.append(f"{row.level:g}")
                continue
            if row.past_knee:
                reasons = []
                if math.isfinite(row.served_share) and row.served_share < KNEE_SERVED_SHARE:
                    reasons.append(f"served {row.served_share:.0%} of the rate asked")
                if not reasons:
                    reasons.append(f"p99 {row.latency_p99_s * 1000:.3g} ms, over {KNEE_P99_FACTOR:g}x its value at "
                                   f"{rows['level'].iloc[0]:g}")
                knee = Knee(str(label), below, float(row.level), "; ".join(reasons))
                break
            below = float(row.level)
        if knee is None and below is None:
            knee = Knee(str(label), None, None, f"no usable trial at {', '.join(unmeasured)}")
        out.append(knee or Knee(str(label), below, None, "kept up at every level" + (
            f"; no usable trial at {', '.join(unmeasured)}" if unmeasured else "")))
    return out


def knee_levels(curve: pd.DataFrame) -> dict[str, float | None]:
    """The first level past each server's knee (None: not reached), for marking a figure."""
    return {knee.label: knee.above for knee in knees(curve)}


def highest_level_below_knee(curve: pd.DataFrame, label: str) -> float | None:
    """The highest level at which `label` still kept up (None: none did)."""
    for knee in knees(curve):
        if knee.label == label:
            return knee.below
    return None


def merged_latency(trials: pd.DataFrame, by: Sequence[str] = ("label", "level")) -> pd.DataFrame:
    """Open loop: per condition, the latency of every request of its ok trials together.

    The trials' HdrHistograms (`latency_histogram_hdr`) are merged, counts
    added, and read once (loadlab.stats.latency's percentile definition):
    latency_p50_s ... latency_p99_99_s, latency_max_s, with requests and
    trials_ok. A stalled trial's tail then counts for what it is, which a
    median of per-trial p99s hides. Conditions without histograms (closed
    loop: wrk keeps none) are left out.
    """
    columns = [*by, *(stats.percentile_column(p) for p in stats.SUMMARY_PERCENTILES), "latency_max_s", "requests", "trials_ok"]
    if trials.empty or "latency_histogram_hdr" not in trials:
        return pd.DataFrame(columns=columns)
    rows = []
    for keys, group in trials[trials["status"] == "ok"].groupby(list(by), sort=True):
        histograms = [h for h in group["latency_histogram_hdr"] if isinstance(h, str)]
        if not histograms:
            continue
        spectrum = stats.hdr_latency_spectrum(histograms, value_unit_s=vegeta.HISTOGRAM_UNIT_S)
        row = dict(zip(by, keys if isinstance(keys, tuple) else (keys,)))
        row.update({stats.percentile_column(p): value for p, value in zip(stats.SUMMARY_PERCENTILES, spectrum)})
        row.update(latency_max_s=spectrum.max_s, requests=spectrum.count, trials_ok=len(histograms))
        rows.append(row)
    return pd.DataFrame(rows, columns=columns)
