"""The capacity ranking (judgements.capacity.capacity_ranking) told in sentences, numbers as the table gives them."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from loadlab.judgements.capacity import CAPACITY_HEADROOM_UTILIZATION
from loadlab.config import LOADGEN_SATURATION_UTILIZATION
from loadlab.judgements import evidence as evidence_policy

from .numbers import format_number

# The two lines the loadgen's ceiling is read against (`plots.loadgen_ceiling_figure(..., **CEILING_LINES)`), as
# shares (0-1) of the loadgen's CPU busy: below `headroom` a capacity is the server's (judgements.capacity.capacity_ranking);
# at `saturated` the harness flagged a trial loadgen-saturated when it measured it (config), and the evidence policy
# leaves it out. The page decides them; the figure only draws them.
CEILING_LINES = {"headroom": CAPACITY_HEADROOM_UTILIZATION, "saturated": LOADGEN_SATURATION_UTILIZATION}


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


def open_loop_ceiling_text(trials: pd.DataFrame, served_share: float = 0.99) -> str:
    """Markdown: the highest rate the open loop offered in full with its schedule kept, and the first it did not.

    A rate is held when every ok trial at it answered at least `served_share`
    of the rate asked (2xx) and none of them was the loadgen's fault
    (`loadgen_saturated`: it fell behind its schedule, or its core was full).
    """
    if trials.empty or "rate_offered_rps" not in trials:
        return "*No open-loop trials.*"
    rows = []
    for rate, at in trials.groupby("rate_offered_rps", sort=True):
        ok = at[at["status"] == "ok"]
        served = (ok["throughput_rps"] / rate).min() if len(ok) else math.nan
        # ok trials that are no evidence: the generator fell behind, or its core was full
        rows.append((float(rate), len(ok), len(at), served, len(ok) - len(evidence_policy.evidence_rows(ok))))
    held = [row for row in rows if row[1] and row[1] == row[2] and row[3] >= served_share and row[4] == 0]
    first_not = next((row for row in rows if row not in held and (not held or row[0] > held[-1][0])), None)
    parts = []
    if held:
        parts.append(f"**The open loop held {format_number(held[-1][0])} req/s**: every trial at that rate answered at "
                     f"least {served_share:.0%} of it with the generator on schedule")
    else:
        parts.append("**The open loop held none of the rates asked**")
    if first_not is not None:
        rate, ok, total, served, behind = first_not
        why = [f"{behind} of {ok} trials had the generator fall behind"] if behind else []
        if math.isfinite(served) and served < served_share:
            why.append(f"the lowest trial answered {served:.0%} of it")
        if ok < total:
            why.append(f"{total - ok} of {total} trials failed")
        parts.append(f"at {format_number(rate)} req/s it did not (" + "; ".join(why or ["see the table"]) + ")")
    else:
        parts.append("no rate asked went past it")
    return "; ".join(parts) + "."
