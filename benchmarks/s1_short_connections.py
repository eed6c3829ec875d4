"""S1's load at 10, 1,000 and 10,000 connections (issue 26's benchmark): per server and level, the connections
it held (the kernel's established count, median of the window), the listen queue's overflows, throughput and
the loadgen's load, process RSS (and its shared part) beside the cgroup's memory, and memory per extra
connection held from the lowest level to each higher one, both figures. Medians of the ok trials; a benchmark,
not a verdict.

    .venv/bin/loadlab run experiments/bench-s1-short-connections.yaml --process
    .venv/bin/python benchmarks/s1_short_connections.py [experiment]
"""

import sys

import pandas as pd

from loadlab import rundir
from loadlab.judgements import s1
from loadlab.tables import load_run


def main(experiment: str = "bench-s1-short-connections") -> int:
    trials = load_run(rundir.latest_run(experiment))["trials"]
    ok = trials[trials["status"] == "ok"]
    low = ok["level"].min()
    rows = []
    for level in sorted(ok["level"].unique()):
        at = s1.per_connection_columns(ok, low, level)
        for label, group in at[at["level"] == level].groupby("label"):
            rows.append({"server": label, "asked": level, "trials": len(group),
                         "held": group["held"].median(), "held_max": group["connections_established_max"].median(),
                         "listen_overflows": group["listen_overflows"].median(), "req/s": group["throughput_rps"].median(),
                         "loadgen_busy": group["loadgen_cpu_utilization"].median(),
                         "saturated": int(group["loadgen_saturated"].sum()),
                         "rss_mib": group["process_rss_mib"].median(), "rss_shared_mib": group["rss_shared_mib"].median(),
                         "cgroup_mib": group["cgroup_memory_mib"].median(),
                         "rss_kib_per_held": group["rss_per_connection_kib"].median() if level > low else None,
                         "cgroup_kib_per_held": group["cgroup_per_connection_kib"].median() if level > low else None,
                         "errors": group["errors_total"].median(), "threads": group["tasks_peak"].median()})
    table = pd.DataFrame(rows).sort_values(["server", "asked"])
    with pd.option_context("display.width", 250, "display.max_columns", 30, "display.float_format", "{:,.1f}".format):
        print(table.to_string(index=False))
    failed = trials[trials["status"] != "ok"]
    if len(failed):
        print("failed trials:", failed[["trial", "condition", "failure_reason"]].to_dict("records"))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
