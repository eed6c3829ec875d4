"""Spare trials: a judged condition's trials that the loadgen spoiled are made up after the schedule.

A trial whose loadgen was saturated (its core busy) or fell behind its
schedule (the open-loop generator's own delays) measured the instrument, not
the server, and no verdict reads it (`judgements.evidence`). The schedule
gives a judged condition the trials its verdicts need and no more (quick: 6,
what S1's family needs for a shift interval), so every spoiled trial can cost
a verdict its interval: in the reference of 2026-11-29 the loadgen saturated
in 2 of java-platform's 6 trials at 10,000 connections, and S1's memory,
thread and CPU verdicts had none.

After the schedule's blocks, the runner asks `spares_due` which judged
conditions are short of trials the loadgen did not spoil, runs one spare for
each trial short (`schedule_spares`: the conditions interleaved, in a seeded
order), and asks again, until none is short or each has had
`Experiment.spare_trials`. A condition no verdict reads (shown) gets none, and
neither does a server's own failure (stalled, crashed, OOM-killed): that is a
result about the server, and a spare would hide it.

What a spare costs the statistics, said where the verdict is: a spare runs
after the blocks, so drift over the run lands on it and not on the others
alike, and which conditions get spares depends on the loadgen, whose headroom
depends on the server (a faster server saturates it sooner). A spare is judged
by the same rule as every trial, is marked in the manifest's trial order
(`spare`: true) and in the trials table, and a verdict says how many of its
trials were spares (`Evidence.summary`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

# The rule `judgements.evidence` leaves such a trial out of every verdict by, so that a spare is run exactly for a
# trial the verdicts leave out.
from loadlab.outcome import spoiled_by_loadgen


def spares_due(conditions: Sequence[Mapping], trial_order: Sequence[Mapping], rows: Mapping[int, Mapping],
               most: int) -> dict[str, int]:
    """{condition: spares to run now} for the judged conditions short of unspoiled trials.

    `conditions` are `Experiment.conditions()` (each with its planned `trials`
    and whether it is `shown`), `trial_order` the manifest's, spares included,
    `rows` the finished trials' rows by trial number, `most` the spares a
    condition may have in all. Nothing is due while a scheduled trial has not
    finished: an interrupted run first finishes its schedule.
    """
    if most <= 0 or any(entry["trial"] not in rows for entry in trial_order):
        return {}
    due = {}
    for condition in conditions:
        if condition.get("shown"):
            continue
        name = condition["condition"]
        numbers = [entry["trial"] for entry in trial_order if entry["condition"] == name]
        kept = sum(not spoiled_by_loadgen(rows[number]) for number in numbers)
        spares_had = sum(bool(entry.get("spare")) for entry in trial_order if entry["condition"] == name)
        short = min(int(condition["trials"]) - kept, most - spares_had)
        if short > 0:
            due[name] = short
    return due


def schedule_spares(trial_order: Sequence[Mapping], due: Mapping[str, int], seed: int) -> list[dict]:
    """The trial-order entries of the spares `due` asks for, numbered after the last trial: round by round, each
    round one spare of every condition still owed one, in a seeded shuffled order (as the schedule's blocks), so
    that no condition's spares all run last."""
    number = max((int(entry["trial"]) for entry in trial_order), default=0)
    rng = random.Random(f"{seed}-spares-{number}")
    owed, entries = dict(due), []
    while any(owed.values()):
        round_names = sorted(name for name, count in owed.items() if count > 0)
        rng.shuffle(round_names)
        for name in round_names:
            number += 1
            owed[name] -= 1
            entries.append({"trial": number, "condition": name, "block": None, "spare": True})
    return entries


def spares_text(due: Mapping[str, int]) -> str:
    """'2 spare trials (java-platform@c10000 ×2), for trials the loadgen spoiled' for the run's log."""
    total = sum(due.values())
    listed = ", ".join(f"{name} ×{count}" for name, count in sorted(due.items()))
    return f"{total} spare trial{'s' if total != 1 else ''} ({listed}), for trials the loadgen spoiled"
