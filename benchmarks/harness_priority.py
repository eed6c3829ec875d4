"""Does the harness's own priority keep openloop on its schedule? (issue 28; an A/B, not a test)

Re-runs the open-loop trials a run measured (default: the newest complete
01-open-loop-latency-quick run) for the named servers at the named rates, each
condition with the harness's threads "normal" (as every committed trial ran)
and "idle" (SCHED_IDLE during the window: harness.priority), interleaved in
shuffled blocks. Per arm it prints how many windows openloop was behind its
schedule in, and the medians of its own delay (p99, max) and of the requests
late by its own doing. Trials go to /tmp, never to data/raw.

    .venv/bin/python benchmarks/harness_priority.py [run_dir] [--list] [--only r11213,r3510] \
        [--servers go-nethttp,java-threads] [--blocks 4] [--out /tmp/harness-priority.json]

Nothing else may run meanwhile: the question is what shares the loadgen's core.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from loadlab import paths, rundir
from loadlab.config import HARNESS_PRIORITIES, TrialConfig
from loadlab.experiment import Experiment
from loadlab.harness import container, engine
from loadlab.harness.trial import run_trial

EXPERIMENT = "01-open-loop-latency-quick"


def _configs(run_dir: Path, servers: set[str]) -> list[TrialConfig]:
    """The open-loop conditions' trial configs of `servers`, as the run's recorded plan builds them."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    conditions = Experiment.from_record(manifest["parameters"]).conditions()
    return [c["config"] for c in conditions if c["config"].server in servers and c["config"].load_mode == "open"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", nargs="?", help=f"a run to copy the conditions from (default: newest {EXPERIMENT})")
    parser.add_argument("--servers", default="go-nethttp,java-threads")
    parser.add_argument("--blocks", type=int, default=4, help="blocks; each runs every condition once per arm")
    parser.add_argument("--only", default="", help="keep conditions whose label contains one of these "
                        "comma-separated strings (e.g. ' r11213 ,r3510')")
    parser.add_argument("--list", action="store_true", help="print the conditions and stop")
    parser.add_argument("--seed", type=int, default=28)
    parser.add_argument("--out", default="/tmp/harness-priority.json")
    args = parser.parse_args()
    run_dir = Path(args.run_dir) if args.run_dir else rundir.latest_run(EXPERIMENT, paths.RAW_DIR)
    if run_dir is None:
        raise SystemExit(f"no complete {EXPERIMENT} run under {paths.RAW_DIR}; name one")
    configs = _configs(run_dir, set(args.servers.split(",")))
    wanted = [part for part in args.only.split(",") if part]
    configs = [c for c in configs if not wanted or any(part in c.label() for part in wanted)]
    if not configs:
        raise SystemExit(f"{run_dir} has no open-loop trials of {args.servers} matching {wanted}")
    if args.list:
        print("\n".join(c.label() for c in configs))
        return 0
    client = engine.ensure_engine()
    scratch = Path(tempfile.mkdtemp(prefix="loadlab-harness-priority-"))
    run_id = f"harness-priority-{int(time.time())}"
    order = random.Random(args.seed)
    rows = []
    try:
        for block in range(1, args.blocks + 1):
            cells = [(config, arm) for config in configs for arm in HARNESS_PRIORITIES]
            order.shuffle(cells)
            for config, arm in cells:
                trial_config = dataclasses.replace(config, harness_priority=arm).validate()
                number = len(rows) + 1
                row = run_trial(trial_config, scratch / str(number), run_id, client, number, log=lambda m: None)
                rows.append({"block": block, "arm": arm, "condition": trial_config.label(),
                             **{k: row.get(k) for k in ("status", "failure_reason", "rate_offered_rps", "rate_sent_rps",
                                                        "loadgen_behind", "loadgen_late_own", "requests",
                                                        "loadgen_own_delay_p99_s", "loadgen_own_delay_max_s",
                                                        "loadgen_cpu_utilization", "latency_p99_s")}})
                print(f"block {block} {arm:6} {trial_config.label()}: behind={bool(row.get('loadgen_behind'))} "
                      f"own p99={row.get('loadgen_own_delay_p99_s')} max={row.get('loadgen_own_delay_max_s')}",
                      flush=True)
    finally:
        container.clean(client, run_id)
    Path(args.out).write_text(json.dumps({"run": str(run_dir), "rows": rows}, indent=1, default=str))

    def median(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    print(f"\n{'condition':78} {'arm':6} {'behind':>8} {'own p99 ms':>10} {'own max ms':>10} {'late own':>9}")
    for condition in dict.fromkeys(r["condition"] for r in rows):
        for arm in HARNESS_PRIORITIES:
            cell = [r for r in rows if r["condition"] == condition and r["arm"] == arm and r["status"] == "ok"]
            p99, most = median(r["loadgen_own_delay_p99_s"] for r in cell), median(r["loadgen_own_delay_max_s"] for r in cell)
            print(f"{condition[:78]:78} {arm:6} {sum(bool(r['loadgen_behind']) for r in cell):>3} of {len(cell):<2} "
                  f"{(p99 or 0) * 1e3:>10.2f} {(most or 0) * 1e3:>10.2f} {median(r['loadgen_late_own'] for r in cell) or 0:>9.0f}")
    print(f"\nrows in {args.out}; trials in {scratch}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
