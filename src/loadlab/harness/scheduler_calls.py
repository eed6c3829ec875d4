"""S2-gopark: how often Go's scheduler functions run while N goroutines sit blocked in select{}.

The microbench image's `parked-select-go --goroutines N --delay-s D --hold-s H`
(microbench-programs/parkedselect) waits D seconds, starts N goroutines that block
forever in `select {}`, holds them H seconds and exits, printing the Unix
time of each step. From the host, uprobes on its runtime.gopark,
runtime.mcall and runtime.findRunnable (loadlab.harness.uprobes) count every
call, once a second (`perf stat -I 1000`), from before the goroutines start
to the end. The second in which they start is the positive control: each of
the N goroutines parks once, so about N calls of gopark must show there.

The container is the microbenchmarks' (hardened, pinned, no network, always
removed); only the counting is new.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Sequence

import docker
import pandas as pd

from loadlab.config import interleave, new_run_id, parse_cpuset
from loadlab.errors import ParameterError, TrialFailure
from loadlab.harness import container, microbench, uprobes

PROGRAM = "parked-select-go"
GOROUTINE_COUNTS = (32, 127)  # S2's two settings
DELAY_S = 4.0  # the probes are added while the program waits (about 0.3 s per function)
COLUMNS = ("goroutines", "repetition", "second", "t_from_spawn_s", "phase", "function", "calls", "interval_s", "run_id")


def parse_interval_csv(text: str) -> pd.DataFrame:
    """`perf stat -I <ms> -x,` lines -> (t_s, event, calls); t_s is the interval's end from perf's start."""
    rows = []
    for line in text.splitlines():
        fields = [field.strip() for field in line.split(",")]
        if len(fields) < 4 or line.startswith("#") or ":" not in fields[3]:
            continue
        try:
            t_s = float(fields[0])
        except ValueError:
            continue
        calls = int(float(fields[1])) if fields[1].replace(".", "", 1).isdigit() else 0
        rows.append({"t_s": t_s, "event": fields[3], "calls": calls})
    return pd.DataFrame(rows, columns=["t_s", "event", "calls"])


def _phase(interval_start: float, interval_end: float, spawned: float, done: float) -> str:
    if interval_end <= spawned:
        return "before"
    if interval_start <= spawned:
        return "spawn"
    return "parked" if interval_end <= done else "exit"


def _count_once(client, goroutines: int, hold_s: float, repetition: int, run_id: str, cpuset: str,
                log) -> pd.DataFrame:
    command = [PROGRAM, "--goroutines", str(goroutines), "--delay-s", f"{DELAY_S:g}", "--hold-s", f"{hold_s:g}"]
    name = f"{run_id}-g{goroutines}-{repetition}-{uuid.uuid4().hex[:6]}"
    log(f"{name}: {' '.join(command)}")
    box = container.run_container(client, dict(
        image=microbench.image_tag("21"), command=command, name=name, detach=True,
        labels={container.RUN_LABEL: run_id, container.ROLE_LABEL: microbench.ROLE},
        user=microbench.USER, network_mode="none", cpuset_cpus=cpuset,
        **container.hardened_options(microbench.DEFAULT_MEMORY_LIMIT_BYTES),
    ), "microbench-start-failed")
    probes = None
    try:
        box.reload()
        pid = container.host_pid(box)
        if not pid:
            raise TrialFailure("microbench-failed", f"{name} exited before its probes could be added",
                               microbench._output(box, stdout=False)[-4000:])
        probes = uprobes.add(uprobes.host_binary(pid), uprobes.GO_SCHEDULER_FUNCTIONS, f"loadlab_{uuid.uuid4().hex[:8]}")
        perf_started_unix_s = time.time()
        stat = subprocess.run(
            ["perf", "stat", "-a", "-I", "1000", "-x,", "-e", ",".join(probes.events.values()), "--",
             "sleep", f"{DELAY_S + hold_s + 1:g}"], capture_output=True, text=True, timeout=DELAY_S + hold_s + 120)
        if stat.returncode != 0:
            raise TrialFailure("microbench-failed", f"perf stat failed: {stat.stderr.strip()[-300:]}", stat.stderr[-4000:])
        status = int(box.wait(timeout=60).get("StatusCode", -1))
        if status != 0:
            raise TrialFailure("microbench-failed", f"{name} exited with code {status}",
                               microbench._output(box, stdout=False)[-4000:])
        events = microbench.parse_lines(microbench._output(box, stdout=True))
    finally:
        if probes is not None:
            uprobes.remove(probes)
        container.remove(box)
    times = {event["event"]: float(event["t_unix_s"]) for event in events}
    if not {"spawned", "done"} <= set(times):
        raise TrialFailure("microbench-failed", f"{name} did not report its spawn and end: {sorted(times)}", "")
    function_of = {event: function for function, event in probes.events.items()}
    counts = parse_interval_csv(stat.stderr)
    rows = []
    previous_end: dict[str, float] = {}
    for row in counts.itertuples():
        function = function_of.get(row.event)
        if function is None:
            continue
        start_s = previous_end.get(row.event, 0.0)
        previous_end[row.event] = row.t_s
        start_unix, end_unix = perf_started_unix_s + start_s, perf_started_unix_s + row.t_s
        rows.append({
            "goroutines": goroutines, "repetition": repetition, "second": int(round(row.t_s)),
            "t_from_spawn_s": end_unix - times["spawned"], "phase": _phase(start_unix, end_unix, times["spawned"], times["done"]),
            "function": function, "calls": int(row.calls), "interval_s": row.t_s - start_s, "run_id": run_id,
        })
    return pd.DataFrame(rows, columns=list(COLUMNS))


def parked_select(client: docker.DockerClient, goroutines: Sequence[int] = GOROUTINE_COUNTS, repetitions: int = 3,
                  hold_s: float = 5.0, cpuset: str = "1", seed: int = 27, run_id: str | None = None,
                  log=lambda message: None) -> pd.DataFrame:
    """Calls per second of each probed function, per (goroutines, repetition, second), in fresh containers.

    Columns: goroutines, repetition, second (of perf's clock), t_from_spawn_s
    (end of the second, from the moment all goroutines were started), phase
    ("before", "spawn": the second they started in, "parked", "exit"),
    function, calls, interval_s (the second's length, s).
    """
    reason = uprobes.available()
    if reason:
        raise ParameterError("uprobes", reason, "a host where perf can add and count uprobes (root, tracefs)")
    counts = [int(g) for g in goroutines]
    if not counts or any(g < 0 or g > 100_000 for g in counts):
        raise ParameterError("goroutines", goroutines, "counts between 0 and 100,000")
    if not 1 <= repetitions <= 50:
        raise ParameterError("repetitions", repetitions, "1 to 50")
    if not 1 <= hold_s <= 120:
        raise ParameterError("hold_s", hold_s, "1 to 120 seconds")
    parse_cpuset(cpuset, "cpuset")
    microbench.build(client, "21")  # a no-op when the image is current
    run_id = run_id or new_run_id("scheduler-calls")
    frames = [_count_once(client, g, hold_s, repetition, run_id, cpuset, log)
              for repetition, g in interleave({g: g for g in counts}, repetitions, seed)]
    return pd.concat(frames, ignore_index=True)

