"""Notebook 00's ranking of servers by capacity: which are faster than the next, measured with loadgen headroom."""

from __future__ import annotations

import math

import pandas as pd

from loadlab.stats import median_ci, minimum_trials_for_median_ci, shift_ratio_interval

# A capacity is the server's only when the loadgen had room to spare: below this share of its core(s) busy.
# Saturation (config.LOADGEN_SATURATION_UTILIZATION, 95%) is where a trial stops being evidence at all; between
# the two, the loadgen's own queueing already shapes the answer (issue: headroom for every comparison).
CAPACITY_HEADROOM_UTILIZATION = 0.80


def trials_with_headroom(trials: pd.DataFrame, headroom: float = CAPACITY_HEADROOM_UTILIZATION) -> pd.DataFrame:
    """The ok trials whose loadgen stayed below `headroom` of its CPU count: those that measured the server."""
    ok = trials[trials["status"] == "ok"]
    return ok[pd.to_numeric(ok["loadgen_cpu_utilization"], errors="coerce") < headroom]


def capacity_ranking(trials: pd.DataFrame, headroom: float = CAPACITY_HEADROOM_UTILIZATION,
                     confidence: float = 0.95) -> pd.DataFrame:
    """Servers ranked by throughput measured with loadgen headroom, each against the next one down.

    Only ok trials whose loadgen stayed below `headroom` of its CPU count.
    One row per label: trials ok and with headroom, the loadgen's highest
    utilization, the median throughput (req/s) with its CI, and the rank
    with the Hodges-Lehmann ratio to the next-ranked server and its exact
    interval. `versus_next` is "~" when that interval holds 1 (the two
    cannot be told apart: they share a rank) and "" for the last. A label
    with fewer trials with headroom than a CI needs is listed, not ranked.
    """
    ok = trials[trials["status"] == "ok"]
    with_headroom = trials_with_headroom(trials, headroom)
    needed = minimum_trials_for_median_ci(confidence)
    rows = []
    for label, block in ok.groupby("label", sort=False):
        kept = with_headroom.loc[with_headroom["label"] == label, "throughput_rps"].to_numpy(dtype=float)
        estimate = median_ci(kept, confidence) if kept.size else None
        rows.append({
            "label": label, "trials_ok": len(block), "trials_with_headroom": int(kept.size),
            "loadgen_utilization_max": float(pd.to_numeric(block["loadgen_cpu_utilization"], errors="coerce").max()),
            "throughput_rps": estimate.median if estimate else math.nan,
            "throughput_ci_low_rps": estimate.ci_low if estimate else math.nan,
            "throughput_ci_high_rps": estimate.ci_high if estimate else math.nan,
            "_values": kept,
        })
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    rankable = table["trials_with_headroom"] >= needed
    table = pd.concat([table[rankable].sort_values("throughput_rps", ascending=False), table[~rankable]],
                      ignore_index=True)
    table["rank"] = pd.array([None] * len(table), dtype="Int64")
    table["ratio_to_next"] = math.nan
    table["ratio_to_next_ci_low"] = math.nan
    table["ratio_to_next_ci_high"] = math.nan
    table["versus_next"] = ""
    rank = 0
    ranked = int(rankable.sum())
    for position in range(ranked):
        if position == 0 or table.at[position - 1, "versus_next"] != "~":
            rank = position + 1
        table.at[position, "rank"] = rank
        if position + 1 < ranked:
            interval = shift_ratio_interval(table.at[position + 1, "_values"], table.at[position, "_values"],
                                                  confidence)
            table.loc[position, ["ratio_to_next", "ratio_to_next_ci_low", "ratio_to_next_ci_high"]] = \
                [interval.ratio, interval.ci_low, interval.ci_high]
            # No interval (too few trials for it) cannot tell the two apart either.
            apart = math.isfinite(interval.ci_low) and not interval.ci_low <= 1 <= interval.ci_high
            table.at[position, "versus_next"] = "faster" if apart else "~"
    return table.drop(columns="_values")
