"""The one-sitting rule, and the host's speed across the runs of a page.

The rule: the runs behind the collection share one machine fingerprint, one
git commit and one sitting id, none measured from a tree with uncommitted
changes, and the pages are rendered from that same commit, clean. Only then
can the numbers of two pages be compared as one measurement: a second
machine, a second sitting or another commit is a second measurement, which
may differ by more than the servers do (a host twice as slow turns servers
that waited on their sleeps CPU-bound). `reference_problems` says, in one
sentence each, exactly what differs; the provenance block of every page and
of the index prints them, or "One machine, one commit, clean" when there are
none.

Speed: each run records a host speed index at its start and end
(hostfacts.host_speed_index, ns per KiB hashed); `speed_lines` shows them
and calls out a change over SPEED_DRIFT_SHARE within a run or between runs.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from loadlab import hostfacts

from .numbers import format_number

# Readings of one idle host differ by about 3% (median of 7, see hostfacts.host_speed_index); 10% is a change.
SPEED_DRIFT_SHARE = 0.10
ONE_SITTING = "One machine, one commit, clean"


def _name(facts) -> str:
    """The run's experiment without its scale ("01-runtime-overhead"): every run of a page shares the scale."""
    name = str(getattr(facts, "experiment", None) or getattr(facts, "run_id", "?"))
    return re.sub(r"-(smoke|quick|full)$", "", name)


def _machine(facts) -> str:
    """The run's machine fingerprint: recorded with its sitting, or computed from its host record (older runs)."""
    return (facts.sitting or {}).get("machine") or hostfacts.machine_fingerprint(facts.host or {})


def _grouped(what: str, plural: str, values: Mapping[str, list[str]]) -> str:
    """"2 machines: a1b2c3 (01, 02) and d4e5f6 (04)"."""
    parts = [f"{value} ({', '.join(names)})" for value, names in values.items()]
    listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return f"{len(values)} {plural if len(values) > 1 else what}: {listed}"


def _by(runs, key) -> dict[str, list[str]]:
    groups: dict[str, list[str]] = {}
    for facts in runs:
        groups.setdefault(key(facts), []).append(_name(facts))
    return groups


def reference_problems(runs: Iterable, rendered_git_state: Mapping) -> list[str]:
    """What breaks the one-sitting rule, one sentence each; [] when the runs are one sitting and the pages are
    rendered from their commit, clean.

    `runs`: pages.provenance.RunFacts (anything with experiment, commit, dirty,
    host and sitting); `rendered_git_state`: hostfacts.git_state() of the tree
    rendering the pages ({"git_commit", "git_dirty"}).
    """
    runs = list(runs)
    if not runs:
        return ["no runs"]
    problems = []
    for what, plural, key in (("machine", "machines", lambda f: _machine(f)[:12]),
                              ("commit", "commits", lambda f: (f.commit or "unknown")[:10]),
                              ("sitting", "sittings", lambda f: (f.sitting or {}).get("id") or "none recorded")):
        groups = _by(runs, key)
        if len(groups) > 1:
            problems.append(_grouped(what, plural, groups) + ".")
    if not any((f.sitting or {}).get("id") for f in runs):
        problems.append("No run records its sitting (runs measured before sittings were recorded).")
    dirty = [_name(f) for f in runs if f.dirty is not False]
    if dirty:
        problems.append(f"{len(dirty)} of {len(runs)} runs measured from a tree with uncommitted changes or an "
                        f"unknown state: {', '.join(dirty)}.")
    commits = {f.commit for f in runs}
    rendered = rendered_git_state.get("git_commit")
    if len(commits) == 1 and rendered != next(iter(commits)):
        problems.append(f"Rendered at commit {(rendered or 'unknown')[:10]}, measured at {(next(iter(commits)) or 'unknown')[:10]}.")
    if rendered_git_state.get("git_dirty") is not False:
        problems.append("Rendered from a tree with uncommitted changes" if rendered_git_state.get("git_dirty")
                        else "Rendered from a tree whose state is unknown" + ".")
    return [problem if problem.endswith(".") else problem + "." for problem in problems]


def sitting_sentence(runs: Iterable, rendered_git_state: Mapping) -> str:
    """"One machine, one commit, clean: measured between T1 and T2 in one sitting", or the rule's problems."""
    runs = list(runs)
    problems = reference_problems(runs, rendered_git_state)
    if problems:
        return "Not one sitting: " + " ".join(problems)
    first = min(f.created_utc for f in runs if f.created_utc)
    last = max(f.updated_utc or f.created_utc for f in runs if f.created_utc)
    return (f"{ONE_SITTING}: measured between {first[:16].replace('T', ' ')} and {last[:16].replace('T', ' ')} UTC "
            "in one sitting.")


def _speed(reading: Mapping | None) -> float | None:
    return (reading or {}).get("ns_per_kib")


def _change(before: float, after: float) -> str:
    return f"{(after / before - 1) * 100:+.1f}%"


def speed_lines(runs: Iterable) -> list[str]:
    """The host speed index of each run at start and end, and the change within and between runs (plain text)."""
    runs = [f for f in runs if _speed((f.host_speed or {}).get("start"))]
    if not runs:
        return ["Host speed index: not recorded by these runs (recorded from 2026-11-28 on)."]
    lines, drifts = [], []
    for facts in runs:
        start, end = _speed(facts.host_speed.get("start")), _speed(facts.host_speed.get("end"))
        text = f"{_name(facts)}: {format_number(start, 3)} ns/KiB at start"
        if end:
            text += f", {format_number(end, 3)} at end ({_change(start, end)})"
            if abs(end / start - 1) > SPEED_DRIFT_SHARE:
                drifts.append(f"within {_name(facts)} ({_change(start, end)})")
        lines.append(text)
    values = [_speed(f.host_speed.get("start")) for f in runs]
    low, high = min(values), max(values)
    if high / low - 1 > SPEED_DRIFT_SHARE:
        drifts.append(f"between runs (start readings from {format_number(low, 3)} to {format_number(high, 3)} ns/KiB, "
                      f"{_change(low, high)})")
    head = ("Host speed index (SHA-256 over a fixed buffer on the trials' CPUs, ns per KiB; lower is faster): "
            + ("the host's speed changed by more than "
               f"{SPEED_DRIFT_SHARE:.0%} " + " and ".join(drifts) + ": compare these runs with care."
               if drifts else f"steady within {SPEED_DRIFT_SHARE:.0%}."))
    return [head, *lines]
