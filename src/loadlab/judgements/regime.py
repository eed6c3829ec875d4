"""The regime a server was measured in: CPU-bound or waiting.

A server is CPU-bound in a trial when its CPU use over the window reached
CPU_BOUND_PCT of the CPU it was allowed (`server_cpu_pct_of_allowance`,
derived on load from `tables.cpu_allowance_cores`), and waiting otherwise
(on its sleeps, its I/O, or its clients). A ratio of two servers means one
thing when both wait and another when one of them is short of CPU: a slower
host turns waiting servers CPU-bound and moves the ratio with it (issue 32:
04 measured again on a slower host, servers at 95% of their CPU against 58%,
and the ratios moved). So a verdict says which regime its servers were in.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

CPU_BOUND_PCT = 90.0  # % of the server's CPU allowance
CPU_BOUND, WAITING, MIXED = "CPU-bound", "waiting", "mixed"


def trial_regime(cpu_pct_of_allowance: float | None) -> str | None:
    """CPU_BOUND at or over CPU_BOUND_PCT % of the allowance, WAITING under it, None when not measured."""
    if cpu_pct_of_allowance is None or pd.isna(cpu_pct_of_allowance):
        return None
    return CPU_BOUND if cpu_pct_of_allowance >= CPU_BOUND_PCT else WAITING


def regime_summary(trials: pd.DataFrame, keys: Iterable[str] = ("label", "level")) -> pd.DataFrame:
    """Per (label, level): the median `server_cpu_pct_of_allowance` (%), the trials in each regime, and the
    regime of the majority (MIXED on a tie; None without CPU measured)."""
    keys = list(keys)
    rows = []
    for key, group in trials.groupby(keys, sort=True):
        regimes = [trial_regime(value) for value in group["server_cpu_pct_of_allowance"]]
        bound, waiting = regimes.count(CPU_BOUND), regimes.count(WAITING)
        regime = None if bound + waiting == 0 else CPU_BOUND if bound > waiting else WAITING if waiting > bound else MIXED
        rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,))),
                     "median_cpu_pct_of_allowance": group["server_cpu_pct_of_allowance"].median(),
                     "cpu_bound_trials": bound, "waiting_trials": waiting, "regime": regime})
    return pd.DataFrame(rows, columns=[*keys, "median_cpu_pct_of_allowance", "cpu_bound_trials", "waiting_trials",
                                       "regime"])


def comparison_regimes(trials: pd.DataFrame, trial_ids: Mapping[str, Iterable[int]]) -> dict[str, dict]:
    """{label: one row of regime_summary} over exactly the trials a verdict used (its `trial_ids`)."""
    result = {}
    for label, ids in trial_ids.items():
        used = trials[(trials["label"] == label) & trials["trial"].isin(list(ids))].assign(level=0)
        summary = regime_summary(used)
        if len(summary):
            result[label] = summary.iloc[0].to_dict()
    return result


def regime_text(by_label: Mapping[str, Mapping]) -> str:
    """"go CPU-bound (median 95% of its CPU allowance; 6 of 6 trials), swoole waiting (58%; 6 of 6 trials)"."""
    parts = []
    for label, row in by_label.items():
        if row.get("regime") is None:
            parts.append(f"{label}: CPU not measured")
            continue
        counted = row["cpu_bound_trials"] + row["waiting_trials"]
        majority = max(row["cpu_bound_trials"], row["waiting_trials"])
        parts.append(f"{label} {row['regime']} (median {row['median_cpu_pct_of_allowance']:.0f}% of its CPU "
                     f"allowance; {majority} of {counted} trials)")
    return ", ".join(parts)


def regime_differences(by_label: Mapping[str, Mapping], source_regime: str | None) -> list[str]:
    """Sentences for what a reader must know: the two servers in different regimes, or a server in another
    regime than the source's (`source_regime`: CPU_BOUND, WAITING, or None where the source does not say)."""
    regimes = {label: row.get("regime") for label, row in by_label.items() if row.get("regime")}
    sentences = []
    if len(set(regimes.values())) > 1:
        sentences.append("The servers compared were in different regimes ("
                         + ", ".join(f"{label} {regime}" for label, regime in regimes.items())
                         + "): the ratio mixes a server short of CPU with one that was not.")
    if source_regime in (CPU_BOUND, WAITING):
        other = [label for label, regime in regimes.items() if regime != source_regime]
        if other:
            sentences.append(f"{', '.join(other)} {'was' if len(other) == 1 else 'were'} not {source_regime} as in "
                             "the source: a host of another speed measures another regime.")
    return sentences
