"""Print a run's per-server throughput as a ratio to nginx-baseline (issue 3's benchmark).

    .venv/bin/loadlab run experiments/bench-throughput-plaintext.yaml --process
    .venv/bin/python benchmarks/throughput_table.py bench-throughput-plaintext
"""

import sys

from loadlab import analysis, rundir, stats
from loadlab.tables import load_run


def main(experiment: str) -> int:
    tables = load_run(rundir.latest_run(experiment))
    trials = tables["trials"]
    ok = trials[trials.status == "ok"]
    nginx = ok.loc[ok.label == "nginx-baseline", "throughput_rps"].to_numpy()
    print(f"{'server':<16} {'median req/s':>12} {'min':>9} {'max':>9} {'ratio to nginx [95% CI]':>26} {'loadgen saturated':>18}")
    for label, group in ok.groupby("label"):
        values = group["throughput_rps"].to_numpy()
        ratio = stats.ratio_of_medians_ci(nginx, values) if len(nginx) >= 2 and len(values) >= 2 else None
        shown = f"{ratio.ratio:.2f} [{ratio.ci_low:.2f}, {ratio.ci_high:.2f}]" if ratio else "n/a"
        print(f"{label:<16} {analysis.np.median(values):>12,.0f} {values.min():>9,.0f} {values.max():>9,.0f} {shown:>26} "
              f"{group['loadgen_saturated'].mean():>17.0%}")
    failed = trials[trials.status != "ok"]
    if len(failed):
        print("failed trials:", failed[["trial", "condition", "failure_reason"]].to_dict("records"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
