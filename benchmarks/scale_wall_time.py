"""Benchmark (not a test): how long the quick scale measures, run by run, and what the full scale would take.

Quick: read from the committed reference runs (each trial's start and end in
trial.json), so the figure is what this machine spent, not an estimate.

Full: each trial-based experiment is planned at the full scale
(loadlab.plans, with the capacities and S2 rates the quick runs recorded),
and each of its trials is costed as the full window plus the full minimum
warm-up plus what a quick trial of the same experiment spent around its
window (start-up, verify, the warm-up past its minimum, the tail after the
window, teardown). Runs without trials (microbenchmarks, the isolation
study) are listed at their quick size and not projected.

    .venv/bin/python benchmarks/scale_wall_time.py
"""

from __future__ import annotations

import json
import statistics
from datetime import datetime
from pathlib import Path

from loadlab import paths, plans, rundir
from loadlab.experiment import Experiment
from loadlab.harness import spares


def _trial_records(run_dir: Path) -> list[dict]:
    records = [json.loads(path.read_text()) for path in (run_dir / "trials").glob("*/trial.json")]
    return [record for record in records if "ended_unix_s" in record]


def quick_runs() -> dict[str, Path]:
    """Experiment name (without scale) -> its newest committed quick run."""
    out = {}
    for experiment_dir in sorted(paths.RAW_DIR.glob("*-quick")):
        run = rundir.latest_run(experiment_dir.name, paths.RAW_DIR)
        if run is not None:
            out[experiment_dir.name.removesuffix("-quick")] = Path(run)
    return out


def _full_plan(name: str, quick: Experiment) -> Experiment | None:
    simple = {"00-aa-noise": plans.noise, "00-loadgen-ceiling": plans.loadgen_ceiling,
              "00-server-capacity": plans.server_capacity, "01-runtime-overhead": plans.runtime_overhead,
              "03-json-api": plans.json_api, "04-io-coroutines": plans.io_coroutines,
              "05-virtual-threads": plans.virtual_threads, "05-pinning": plans.pinning,
              "06-cpu-profiles": plans.cpu_profiles, "06-profiler-overhead": plans.profiler_overhead}
    if name in simple:
        return simple[name]("full")
    if name == "01-open-loop-latency":
        capacities = {entry.display_label(): entry.capacity_rps for entry in quick.servers}
        return plans.runtime_overhead_latency("full", capacities)
    s2_plans = {"02-worker-pool": (plans.worker_pool, plans.WORKER_POOL_LOAD_FACTORS),
                "02-scheduler-calls": (plans.scheduler_calls, plans.SCHEDULER_CALL_LOAD_FACTORS)}
    if name in s2_plans:
        # The quick run offered its factors of one capacity; the full plan steps its own factors of the same one.
        function, factors = s2_plans[name]
        cpu_rounds = int(quick.load.route.split("cpu=")[1].split("&")[0])
        capacity_rps = min(quick.load.rate_rps) / min(factors["quick"])
        return function("full", cpu_rounds, [capacity_rps * factor for factor in factors["full"]])
    return None


# Experiments the committed runs predate: costed around their window as the named run's trials were.
SIMILAR_RUN = {"00-open-loop-ceiling": "00-loadgen-ceiling", "01-runtime-overhead-keepalive": "01-runtime-overhead",
               "04-open-loop-latency": "01-open-loop-latency"}


def planned_quick() -> dict[str, Experiment]:
    """Every trial-based experiment as today's plans define it at quick (plans.planned_experiments: the counts do not
    depend on the capacities it sizes them with)."""
    return {experiment.name.removesuffix("-quick"): experiment for experiment in plans.planned_experiments("quick")}


def repetitions_scaled_s(name: str, manifest: dict, seconds: float) -> float:
    """A run without trials costed at today's quick repetitions: `seconds` as committed, times today's repetitions
    over the committed run's (02's in-process S2 is its repetitions of 60 s processes), for the runs whose plan
    names them in plans.S2_IN_PROCESS; any other as committed."""
    committed = (manifest.get("parameters") or {}).get("repetitions")
    if name != "02-s2-inprocess" or not committed:
        return seconds
    return seconds * plans.S2_IN_PROCESS["quick"]["repetitions"] / committed


def projected_quick_s(experiment: Experiment, around_window_s: float) -> float:
    """Seconds: each scheduled trial's window and longest warm-up (the committed runs' warm-ups ran to it: the steady
    rule stops a JIT's early at times, never the others'), plus `around_window_s` (what a committed trial of the same
    kind spent around them: start-up, verify, the tail, teardown)."""
    conditions = {c["condition"]: c["config"] for c in experiment.conditions()}
    return sum(conditions[row["condition"]].duration_s + conditions[row["condition"]].warmup_max_s + around_window_s
               for row in experiment.schedule())


def spares_expected(experiment: Experiment, run_dir: Path | None) -> tuple[int, int]:
    """(spares the committed run's first round would have called for, the most today's plan allows): the runner's
    rule (`harness.spares.spares_due`) with today's cap, on the committed run's trials; a spare that is spoiled in
    turn is not counted, so the first is a floor."""
    if not experiment.spare_trials:
        return 0, 0
    most = experiment.spare_trials * sum(1 for c in experiment.conditions() if not c["shown"])
    if run_dir is None:
        return 0, most
    manifest = json.loads((run_dir / "manifest.json").read_text())
    # The schedule's trials only: on a run that already ran its spares, they would fill the shortfall they made up.
    scheduled = [entry for entry in manifest["trial_order"] if not entry.get("spare")]
    rows = {entry["trial"]: json.loads((run_dir / "trials" / str(entry["trial"]) / "result.json").read_text())
            for entry in scheduled}
    due = spares.spares_due(Experiment.from_record(manifest["parameters"]).conditions(), scheduled, rows,
                            experiment.spare_trials)
    return sum(due.values()), most


def main() -> None:
    around = {}
    rows = []
    tables_s, manifests = {}, {}  # runs without trials: what each took, and its manifest
    for name, run_dir in quick_runs().items():
        records = _trial_records(run_dir)
        manifest = json.loads((run_dir / "manifest.json").read_text())
        if not records:
            rows.append((name, 0, None, None, None, None))
            tables_s[name], manifests[name] = _run_span_s(manifest), manifest
            continue
        span_s = max(r["ended_unix_s"] for r in records) - min(r["started_unix_s"] for r in records)
        # What no harness can save: each trial's window and its minimum warm-up.
        floor_s = sum(r["config"]["duration_s"] + r["config"]["warmup_s"] for r in records)
        config = records[0]["config"]
        # Around the window and its warm-up (the warm-up's length is the plan's; phases_s has what it took).
        around_window_s = statistics.median(
            (r["ended_unix_s"] - r["started_unix_s"]) - config["duration_s"]
            - (r.get("phases_s") or {}).get("warm_up", r["config"]["warmup_s"]) for r in records)
        around[name] = around_window_s
        full = _full_plan(name, Experiment.from_record(manifest["parameters"]))
        full_trials = len(full.schedule()) if full is not None else None
        full_s = (full_trials * (full.durations.duration_s + full.durations.warmup_s + around_window_s)
                  if full is not None else None)
        rows.append((name, len(records), span_s, floor_s, full_trials, full_s))
    print(f"{'experiment':28s} {'quick trials':>12s} {'quick min':>10s} {'of it windows+min warm-up':>26s} "
          f"{'full trials':>12s} {'full min (est.)':>16s}")
    for name, trials, span_s, floor_s, full_trials, full_s in rows:
        print(f"{name:28s} {trials:12d} {_minutes(span_s):>10s} {_minutes(floor_s):>26s} "
              f"{full_trials if full_trials is not None else '':>12} {_minutes(full_s):>16s}")

    def total(column: int) -> float:
        return sum(row[column] for row in rows if row[column] is not None)

    print(f"{'trials, in all':28s} {int(total(1)):12d} {_minutes(total(2)):>10s} {_minutes(total(3)):>26s} "
          f"{int(total(4)):12d} {_minutes(total(5)):>16s}")
    print()
    print("Today's plans at quick (projected: each trial's window and longest warm-up, plus what a committed trial")
    print("of the same experiment spent around them; runs without trials are not in it):")
    print("Spares (harness.spares): as many as the committed run's judged trials the loadgen spoiled called for,")
    print("each costed as the experiment's average trial; 'at most' is the cap on every judged condition.")
    print(f"{'experiment':32s} {'trials':>7s} {'shown':>6s} {'min (est.)':>11s} {'spares':>7s} {'min':>5s} "
          f"{'at most':>8s} {'min':>5s}")
    all_trials = all_shown = all_s = spare_s = most_s = 0
    committed = quick_runs()
    for name, experiment in planned_quick().items():
        around_s = around.get(name, around.get(SIMILAR_RUN.get(name, ""), 0.0))
        schedule = experiment.schedule()
        shown = {c["condition"] for c in experiment.conditions() if c["shown"]}
        shown_count = sum(1 for row in schedule if row["condition"] in shown)
        seconds = projected_quick_s(experiment, around_s)
        expected, most = spares_expected(experiment, committed.get(name))
        per_trial_s = seconds / len(schedule) if schedule else 0.0
        all_trials, all_shown, all_s = all_trials + len(schedule), all_shown + shown_count, all_s + seconds
        spare_s, most_s = spare_s + expected * per_trial_s, most_s + most * per_trial_s
        print(f"{name:32s} {len(schedule):7d} {shown_count:6d} {_minutes(seconds):>11s} {expected:7d} "
              f"{_minutes(expected * per_trial_s):>5s} {most:8d} {_minutes(most * per_trial_s):>5s}")
    print(f"{'trials, in all':32s} {all_trials:7d} {all_shown:6d} {_minutes(all_s):>11s} {'':7s} "
          f"{_minutes(spare_s):>5s} {'':8s} {_minutes(most_s):>5s}")
    kept_s = sum(repetitions_scaled_s(name, manifests[name], span) for name, span in tables_s.items()
                 if plans.measured_at("quick", name))
    left_out = sorted(name for name in tables_s if not plans.measured_at("quick", name))
    print(f"runs without trials, as committed: {_minutes(sum(tables_s.values()))} min; today's quick plans "
          f"{_minutes(kept_s)} min of them (at today's repetitions; leaves out {', '.join(left_out) or 'none'})")
    print(f"measuring at quick, today's plans: about {_minutes(all_s + kept_s)} min, before images and set-up; "
          f"spares about {_minutes(spare_s)} more (at most {_minutes(most_s)})")


def _run_span_s(manifest: dict) -> float:
    """Seconds from a run's manifest's creation to its last update: what a run without trials took."""
    created, updated = manifest.get("created_utc"), manifest.get("updated_utc")
    if not created or not updated:
        return 0.0
    return (datetime.fromisoformat(updated.replace("Z", "+00:00"))
            - datetime.fromisoformat(created.replace("Z", "+00:00"))).total_seconds()


def _minutes(seconds: float | None) -> str:
    return "" if seconds is None else f"{seconds / 60:.1f}"


if __name__ == "__main__":
    main()
