"""Benchmark (not a test): where trials' wall time went, phase by phase, from trial.json's `phases_s`.

Reads every trial.json under the folders given (raw runs, or a whole
data/raw/), groups the trials by experiment, and prints per phase the median
seconds a trial and the minutes all of them spent: what the time around the
windows costs a `make reproduce`, and which step to cut. Trials recorded
before phases_s existed are counted and left out.

    .venv/bin/python benchmarks/trial_phases.py data/raw            # every run
    .venv/bin/python benchmarks/trial_phases.py data/raw/05-virtual-threads-quick
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def phase_records(roots: list[Path]) -> tuple[dict[str, list[dict]], int]:
    """Experiment (the run folder's parent's name, or the folder given) -> the phases_s of its trials; and how
    many trials had none."""
    by_experiment: dict[str, list[dict]] = defaultdict(list)
    without = 0
    for root in roots:
        for path in sorted(root.rglob("trial.json")):
            phases = json.loads(path.read_text()).get("phases_s")
            if phases is None:
                without += 1
                continue
            # <experiment>/<run id>/trials/<n>/trial.json in a raw run; otherwise the folder that was given
            experiment = path.parents[3].name if path.parent.parent.name == "trials" else root.name
            by_experiment[experiment].append(phases)
    return by_experiment, without


def print_table(by_experiment: dict[str, list[dict]]) -> None:
    for experiment, trials in sorted(by_experiment.items()):
        print(f"\n{experiment}: {len(trials)} trials")
        names = [name for name in dict.fromkeys(name for phases in trials for name in phases) if name != "total"]
        names.append("total")  # last, though a later trial's capture phase first appeared after it
        print(f"  {'phase':24s} {'median s':>9s} {'total min':>10s}")
        for name in names:
            values = [phases.get(name, 0.0) for phases in trials]
            print(f"  {name:24s} {statistics.median(values):9.2f} {sum(values) / 60:10.2f}")


def main(argv: list[str]) -> int:
    roots = [Path(arg) for arg in argv] or [Path("data/raw")]
    by_experiment, without = phase_records(roots)
    print_table(by_experiment)
    print(f"\n{sum(len(t) for t in by_experiment.values())} trials with phases_s; {without} without (recorded before it)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
