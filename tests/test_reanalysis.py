"""Re-analysis never depends on the host: every committed reference run loads on a 1-CPU host with no engine.

The recorded experiment is read as recorded (no CPU-set, knob or image
checks), the notebooks' plans validate without asking the host, and nothing
on this path imports the harness or the Docker SDK.
"""

import os
import subprocess
import sys

from loadlab import paths

SCRIPT = r'''
import os, sys, tempfile
os.sched_getaffinity = lambda pid: {0}          # a 1-CPU host: CPU 1 (the reference runs' server core) is absent
os.environ["DOCKER_HOST"] = "unix:///nonexistent/docker.sock"   # no engine, so no images either
from loadlab import plans, rundir, study, tables
loaded = []
processed = tempfile.mkdtemp()
for run in rundir.list_runs():
    if run["status"] != "complete":
        continue
    if os.path.exists(os.path.join(run["path"], "results.parquet")):   # a microbenchmark: one table
        frame, _ = study.measure_or_load_frame(run["experiment"], measure=None, run_id=run["run_id"])
        assert len(frame), run["path"]
    else:
        assert len(tables.load_run(run["path"], processed_root=processed)["trials"]), run["path"]
    loaded.append(run["experiment"])
# The notebooks' path: a plan (validated without the host) and run_id="latest".
for build in (plans.noise, plans.loadgen_ceiling, plans.server_capacity, plans.runtime_overhead, plans.json_api,
              plans.io_coroutines, plans.virtual_threads, plans.pinning, plans.cpu_profiles):
    if not plans.measured_at("quick", build("quick").name.removesuffix("-quick")):
        continue  # quick leaves it out: the committed reference has no run of it
    s = study.measure_or_load(build("quick"), run_id="latest", processed_root=processed, log=lambda line: None)
    assert len(s.trials), build.__name__
    # A run of an earlier plan is re-analysed as recorded, and carries what changed since (the page shows it).
    assert all(" -> " in change or change.startswith("server ") for change in s.plan_changes), s.plan_changes
    loaded.append(("earlier-plan:" if s.plan_changes else "study:") + s.experiment.name)
if plans.measured_at("quick", "02-worker-pool"):
    s = study.measure_or_load(plans.worker_pool("quick", 1, [1.0]), run_id="latest", processed_root=processed,
                              log=lambda line: None)
    loaded.append("study:" + s.experiment.name)
assert not [m for m in sys.modules if m == "docker" or m.startswith("loadlab.harness")], "re-analysis imported the harness"
print("\n".join(loaded))
'''


def test_every_committed_reference_run_loads_on_a_one_cpu_host_without_an_engine():
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                            env={**os.environ, "LOADLAB_ROOT": str(paths.ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    loaded = result.stdout.split()
    complete_runs = list(paths.RAW_DIR.glob("*/*/manifest.json"))
    assert len([name for name in loaded if not name.startswith(("study:", "earlier-plan:"))]) >= len(complete_runs) > 0
    # Each plan's newest run loads, whether it measured today's plan or an earlier one (the page then lists the changes).
    planned = {name.split(":", 1)[1] for name in loaded if name.startswith(("study:", "earlier-plan:"))}
    assert {"01-runtime-overhead-quick", "04-io-coroutines-quick", "06-cpu-profiles-quick"} <= planned
