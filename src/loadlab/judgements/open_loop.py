"""Open-loop latency claims: the rates each server was offered, its knee, and the fraction a claim is judged at.

An open-loop run offers each server fractions of a capacity measured in a
closed loop (`Load.capacity_fractions`, of each server's own capacity or of
the slowest one's: `Load.capacity_basis`). A latency is compared where both
servers kept up: at the highest fraction below both knees
(`loadlab.latency_curve`), so that it is the servers' latency under load and
not a queue that grows with the window. S1-p99 (notebook 01) and S4-latency
(notebook 04) are judged this way.
"""

from __future__ import annotations

import pandas as pd

from loadlab import latency_curve, stats
from loadlab.experiment import Experiment
from loadlab.judgements import evidence as evidence_policy
from loadlab.judgements._common import basis_text, open_loop_text
from loadlab.judgements.rule import Family
from loadlab.manifest import Manifest


def capacities_rps(trials: pd.DataFrame, level=None) -> dict[str, float]:
    """Each server's capacity (req/s): its median closed-loop throughput at `level` (default: the top level),
    evidence trials only.

    A server with no evidence trial there (every loadgen saturated) gets the
    median of its ok trials: a lower bound, since the loadgen held it back.
    """
    top = trials[trials["level"] == (trials["level"].max() if level is None else level)]
    evidence = evidence_policy.evidence_rows(top)
    ok = top[top["status"] == "ok"]
    capacities = {}
    for label in sorted(set(top["label"])):
        values = evidence.loc[evidence["label"] == label, "throughput_rps"]
        if values.empty:
            values = ok.loc[ok["label"] == label, "throughput_rps"]
        if not values.empty:
            capacities[label] = float(values.median())
    return capacities


def offered_rates_rps(manifest: Manifest, fraction: float) -> dict[str, float]:
    """The rate (req/s) an open-loop run at capacity `fraction` offered each server, as its experiment computed it."""
    experiment = Experiment.from_record(manifest.parameters)
    return {entry.display_label(): experiment.offered_rate_rps(entry, fraction)
            for entry in experiment.servers if entry.capacity_rps is not None}


def offered_rates_by_condition(manifest: Manifest) -> dict[tuple[str, float], float]:
    """{(label, level): the rate (req/s) asked of the open loop's generator} for every condition of a run."""
    experiment = Experiment.from_record(manifest.parameters)
    return {(entry.display_label(), float(level)): experiment.offered_rate_rps(entry, level)
            for entry in experiment.servers if entry.capacity_rps is not None for level in experiment.levels()}


def levels_below_knees(open_loop: pd.DataFrame, labels: tuple[str, str], manifest: Manifest) -> list[float | None]:
    """For each of `labels`, the highest level below its knee (None: past it at every level)."""
    curve = latency_curve.latency_curve(open_loop[open_loop["label"].isin(labels)], offered_rates_by_condition(manifest))
    return [latency_curve.highest_level_below_knee(curve, label) for label in labels]


def usable_trials(open_loop: pd.DataFrame, label: str, level: float) -> int:
    """How many of `label`'s trials at `level` may be evidence (judgements.evidence: ok, loadgen kept up, ...)."""
    at = open_loop[(open_loop["label"] == label) & (open_loop["level"] == level)]
    return len(evidence_policy.evidence_rows(at))


def _levels_down_from(open_loop: pd.DataFrame, labels: tuple[str, str], ceiling: float) -> list[float]:
    """The levels `labels` were measured at, `ceiling` and below, highest first."""
    levels = open_loop.loc[open_loop["label"].isin(labels), "level"]
    return sorted({float(level) for level in levels if level <= ceiling}, reverse=True)


def judged_level(open_loop: pd.DataFrame, labels: tuple[str, str], below: list[float | None], need: int = 0) -> float:
    """The highest level below both knees at which each server has `need` usable trials (the fewest its family's
    interval needs: a level without them gives no interval, whatever the servers did there); with no such level,
    the highest below both knees. Where a server was past its knee at every level, the lowest level."""
    if not all(level is not None for level in below):
        return float(min(open_loop.loc[open_loop["label"].isin(labels), "level"]))
    ceiling = float(min(below))
    for level in _levels_down_from(open_loop, labels, ceiling):
        if all(usable_trials(open_loop, label, level) >= need for label in labels):
            return level
    return ceiling


def trials_needed(family: Family | None) -> int:
    """The fewest usable trials a side for which `family`'s interval exists (0: no family, no such floor)."""
    return stats.minimum_trials_for_shift_interval(family.confidence) if family is not None else 0


def latency_fraction(open_loop: pd.DataFrame, labels: tuple[str, str], manifest: Manifest,
                     family: Family | None = None) -> float:
    """The fraction of capacity a latency claim of `family` is judged at (`judged_level` of `levels_below_knees`)."""
    return judged_level(open_loop, labels, levels_below_knees(open_loop, labels, manifest), trials_needed(family))


def judged_at(open_loop: pd.DataFrame, labels: tuple[str, str], manifest: Manifest,
              family: Family | None = None) -> tuple[float, str]:
    """(the level a latency claim of `family` is judged at, the opening of its verdict's context: the generator,
    the level and whose capacity it is a fraction of, the rates offered, and why that level)."""
    below = levels_below_knees(open_loop, labels, manifest)
    need = trials_needed(family)
    fraction = judged_level(open_loop, labels, below, need)
    load = manifest.parameter("load")
    why = where_text(labels, below, open_loop, fraction, need)
    return fraction, (f"{open_loop_text(load)} at {fraction:g} of {basis_text(load)}"
                      f"{rates_text(manifest, fraction, labels)}, {why}")


def where_text(labels: tuple[str, str], below: list[float | None], open_loop: pd.DataFrame | None = None,
               fraction: float | None = None, need: int = 0) -> str:
    """Why the judged level is the one it is, in words: and where it is below the highest level below both knees
    because that level had too few usable trials, which level and how many each side had there."""
    if not all(level is not None for level in below):
        past = " and ".join(label for label, level in zip(labels, below) if level is None)
        return f"the lowest level, though {past} was past its knee there"
    ceiling = float(min(below))
    if open_loop is None or fraction is None or fraction >= ceiling:
        return "the highest level below both servers' knees"
    skipped = [level for level in _levels_down_from(open_loop, labels, ceiling) if level > fraction]
    short = "; ".join(f"at {level:g} " + " and ".join(
        f"{label} {usable_trials(open_loop, label, level)}" for label in labels) for level in skipped)
    return (f"the highest level below both servers' knees with the {need} usable trials a side the interval needs "
            f"({short} usable: see the trials left out)")


def rates_text(manifest: Manifest, fraction: float, labels: tuple[str, str]) -> str:
    """" (go 5,200 req/s, rust 7,100 req/s)", or one rate when every server was offered the same."""
    load = manifest.parameter("load")
    rates = offered_rates_rps(manifest, fraction)
    if load.get("capacity_basis") == "slowest":
        return f" ({next(iter(set(rates.values()))):,.0f} req/s)" if len(set(rates.values())) == 1 else ""
    return " (" + ", ".join(f"{label} {rates[label]:,.0f} req/s" for label in labels if label in rates) + ")"


def throttled_text(open_loop: pd.DataFrame, labels: tuple[str, str], fraction: float) -> str:
    """"; quota spent before the period's end in a median 40% of go's periods, ..." where a quota was measured."""
    at = open_loop[(open_loop["level"] == fraction) & open_loop["label"].isin(labels) & (open_loop["status"] == "ok")]
    if "server_cpu_throttled_period_share" not in at or not at["server_cpu_throttled_period_share"].notna().any():
        return ""
    shares = at.groupby("label")["server_cpu_throttled_period_share"].median().dropna()  # no quota: no share
    if shares.empty:
        return ""
    return ("; quota spent before the period's end in a median " +
            ", ".join(f"{shares[label]:.0%} of {label}'s periods" for label in labels if label in shares))
