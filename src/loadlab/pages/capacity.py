"""The capacity ranking (analysis.capacity_ranking) told in sentences, numbers as the table gives them."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from .numbers import format_number


def _interval(value: float, low: float, high: float, unit: str = "") -> str:
    text = format_number(value) + (f" {unit}" if unit else "")
    if math.isfinite(low) and math.isfinite(high):
        text += f" [{format_number(low)}, {format_number(high)}]"
    return text


def capacity_ranking_text(ranking: pd.DataFrame, headroom: float, setup: str,
                          missing: Mapping[str, str] | None = None) -> str:
    """Markdown: the ranked servers with medians, CIs and ratios to the next, then those not ranked and why."""
    lines = [f"**Ranked by capacity** ({setup}; only trials whose loadgen was below {headroom:.0%} busy; "
             "median [95% CI]; \"~\": the interval of the ratio to the next holds 1, so the two share a rank):", ""]
    ranked = ranking[ranking["rank"].notna()] if not ranking.empty else ranking
    for row in ranked.itertuples():
        line = (f"{int(row.rank)}. **{row.label}**: "
                + _interval(row.throughput_rps, row.throughput_ci_low_rps, row.throughput_ci_high_rps, "req/s"))
        if row.versus_next:
            following = ranking.at[row.Index + 1, "label"]
            line += (f", \N{MULTIPLICATION SIGN}"
                     + _interval(row.ratio_to_next, row.ratio_to_next_ci_low, row.ratio_to_next_ci_high)
                     + f" of {following}" + (" (~)" if row.versus_next == "~" else ""))
        lines.append(line)
    unranked = ranking[ranking["rank"].isna()] if not ranking.empty else ranking
    for row in unranked.itertuples():
        lines.append(f"- not ranked: **{row.label}**, {row.trials_with_headroom} of {row.trials_ok} ok trials with "
                     f"headroom (the loadgen's busiest: {row.loadgen_utilization_max:.0%})")
    for label, why in (missing or {}).items():
        lines.append(f"- not measured: **{label}**: {why}")
    if ranked.empty:
        lines.append("- no server had enough trials with headroom to be ranked")
    return "\n".join(lines)

