"""The claims' experiments: S2 in one process, spawn cost, the sqrt latch, context switches."""

from __future__ import annotations

from collections.abc import Sequence

import docker
import pandas as pd

from loadlab.config import interleave, new_run_id
from loadlab.errors import ParameterError, TrialFailure

from .output import parse_output, tidy
from .programs import (CONDITIONS, MAX_TASKS, MODELS, ROLE, _check_int, _check_jdk, build, condition_command,
                       java_command)
from .running import _run_plan, run

S2_DESIGNS = ("spawn", "pool")


def s2_in_process(
    client: docker.DockerClient,
    designs: Sequence[str] = S2_DESIGNS,
    rate_rps: float = 2000.0,
    duration_s: float = 60.0,
    workers: int = 12,
    queue: int = 1024,
    cpu_ms: float = 10.0,
    sleep_ms: float = 5.0,
    request_bytes: int = 1024,
    repetitions: int = 6,
    seed: int = 0,
    **run_options,
) -> pd.DataFrame:
    """S2 as S2 ran it, in one process (microbench-programs/s2inprocess): `rate_rps` requests a second for `duration_s`,
    each `cpu_ms` of CPU (an accumulating loop that yields with runtime.Gosched()) then `sleep_ms` of sleep, to a
    goroutine per request ("spawn") or to `workers` goroutines fed by a channel of `queue` places ("pool").

    A fresh process per (design, repetition), interleaved in a seeded order, under the run's memory limit. One row
    per JSON line: "calibrated", a "second" line per second (due, started, completed, goroutines, rss_bytes,
    heap_live_bytes, gc_pause_total_s, ...) and "done" (throughput_rps over the offered window, rss_peak_bytes,
    goroutines_peak, heap_live_peak_bytes, gc_pause_total_s). A process the kernel OOM-kills is a result, not an
    error: its lines until the kill are kept, with oom_killed true and no "done" line.
    """
    for design in designs:
        if design not in S2_DESIGNS:
            raise ParameterError("designs", design, S2_DESIGNS)
    _check_int("workers", workers, 1, 100_000)
    _check_int("queue", queue, 0, 10_000_000)
    _check_int("request_bytes", request_bytes, 0, 1 << 20)
    for name, value, high in (("rate_rps", rate_rps, 1e6), ("duration_s", duration_s, 3600.0),
                              ("cpu_ms", cpu_ms, 1000.0), ("sleep_ms", sleep_ms, 10000.0)):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= high or \
                (name in ("rate_rps", "duration_s") and value == 0):
            raise ParameterError(name, value, f"a number of at most {high:g}" + (", above 0" if name in ("rate_rps", "duration_s") else ""))
    run_options = {**run_options, "run_id": run_options.get("run_id") or new_run_id(ROLE)}
    run_options.setdefault("timeout_s", duration_s + 120.0)
    build(client, "21")
    frames = []
    for repetition, design in interleave({design: design for design in designs}, repetitions, seed):
        command = ["s2-inprocess-go", "--design", design, "--rate", f"{rate_rps:g}", "--duration-s", f"{duration_s:g}",
                   "--workers", str(workers), "--queue", str(queue), "--cpu-ms", f"{cpu_ms:g}",
                   "--sleep-ms", f"{sleep_ms:g}", "--request-bytes", str(request_bytes)]
        try:
            frame = run(client, command, jdk="21", repetitions=1, **run_options)
            frame["oom_killed"] = False
        except TrialFailure as failure:
            if failure.reason != "oom-killed":
                raise
            frame = parse_output(getattr(failure, "stdout", "") or "")
            frame["oom_killed"] = True
        frame["repetition"] = repetition
        frame["process"] = len(frames)
        frames.append(frame)
    out = tidy(pd.concat(frames, ignore_index=True))
    out["condition"] = out["design"]
    return out


def s2_in_process_run(client: docker.DockerClient, parameters: dict, **run_options) -> pd.DataFrame:
    """`s2_in_process` with a plan's recorded parameters (`plans.S2_IN_PROCESS[profile]`)."""
    options = dict(parameters)
    memory_limit_mib = options.pop("memory_limit_mib")
    return s2_in_process(client, memory_limit_bytes=int(memory_limit_mib) * 1024**2, **options, **run_options)


def spawn_benchmark(
    client: docker.DockerClient,
    tasks: int = 100_000,
    count: int = 5,
    benchtime: str = "1s",
    repetitions: int = 3,
    seed: int = 0,
    **run_options,
) -> pd.DataFrame:
    """S1-spawn / S1-spawn-heap as the source wrote them: `go test -bench` with b.ReportAllocs().

    Each b.N iteration starts `tasks` goroutines that run `defer wg.Done()` and
    exit at once, then waits (microbench-programs/spawnbench). `count` benchmark runs
    per process (go test -count), `repetitions` fresh processes. One row per
    run: n, ns_per_op, bytes_per_op (heap bytes per iteration, as -benchmem),
    allocs_per_op; each process's last row carries its allocs profile
    (allocs_profile_gzip_b64: gzipped pprof, as -memprofile writes it).
    """
    _check_int("tasks", tasks, 1, MAX_TASKS)
    _check_int("count", count, 1, 100)
    if not isinstance(benchtime, str) or not benchtime:
        raise ParameterError("benchtime", benchtime, "a go test -benchtime value such as '1s' or '100x'")
    command = ["spawn-bench-go", "--tasks", str(tasks), "--count", str(count), "--benchtime", benchtime]
    return _run_plan(client, {("go", tasks): (command, "21")}, repetitions, seed, run_options)


def spawn_cost(
    client: docker.DockerClient,
    conditions: Sequence[str] = CONDITIONS,
    tasks: Sequence[int] = (10_000,),
    repetitions: int = 3,
    jdk: str = "21",
    seed: int = 0,
    **run_options,
) -> pd.DataFrame:
    """S1-spawn / S4-stack / S5-stack: start N sleeping tasks, measure while parked, join.

    A fresh process per (condition, N, repetition), interleaved in a seeded
    order. One row per measurement: spawn_s, join_s, spawn_cpu_s, rss_delta_bytes,
    rss_per_task_bytes, vm_size_per_task_bytes, heap_per_task_bytes,
    stack_inuse_per_task_bytes (Go), threads, ctxt_switches_delta, ...
    """
    plan = {}
    for condition in conditions:
        for n in tasks:
            plan[(condition, n)] = (condition_command(condition, "sleepers", n), jdk)
    return _run_plan(client, plan, repetitions, seed, run_options)


def sqrt_latch(
    client: docker.DockerClient,
    jdks: Sequence[str] = ("21",),
    models: Sequence[str] = MODELS,
    tasks: int = 10_000,
    warmup: int = 5,
    iterations: int = 10,
    repetitions: int = 1,
    include_warmup: bool = False,
    seed: int = 0,
    **run_options,
) -> pd.DataFrame:
    """S5-time / S5-memory: N threads each compute one Math.sqrt and count down a latch.

    `warmup` + `iterations` in one JVM per repetition (JMH style); warm-up
    rows are dropped unless `include_warmup`. elapsed_s / elapsed_ms: first
    start -> latch released; cpu_s; rss_delta_bytes at release,
    peak_rss_delta_bytes over the iteration, heap_delta_bytes.
    """
    return _each_jdk_and_model(client, jdks, models, ("sqrt_latch", tasks, warmup, iterations), repetitions, seed,
                               include_warmup, run_options)


def context_switches(
    client: docker.DockerClient,
    jdks: Sequence[str] = ("21",),
    models: Sequence[str] = MODELS,
    tasks: int = 10_000,
    sleep_ms: int = 1,
    warmup: int = 2,
    iterations: int = 5,
    repetitions: int = 1,
    include_warmup: bool = False,
    seed: int = 0,
    **run_options,
) -> pd.DataFrame:
    """S1-vthread-switches: N tasks that each sleep `sleep_ms`, started and joined.

    ctxt_switches_delta: the process's kernel context switches (getrusage,
    every thread including exited ones); background_ctxt_switches_delta: the
    same JVM idle for as long; ctxt_switches_net_of_background_delta.
    """
    return _each_jdk_and_model(client, jdks, models, ("switches", tasks, warmup, iterations, sleep_ms), repetitions,
                               seed, include_warmup, run_options)


def _each_jdk_and_model(client: docker.DockerClient, jdks: Sequence[str], models: Sequence[str], java_args: tuple,
                        repetitions: int, seed: int, include_warmup: bool, run_options: dict) -> pd.DataFrame:
    """`java_command(model, *java_args)` on every (JDK, model), interleaved; warm-up rows dropped unless asked for."""
    plan = {(jdk, model): (java_command(model, *java_args), _check_jdk(jdk)) for jdk in jdks for model in models}
    frame = _run_plan(client, plan, repetitions, seed, run_options)
    return frame if include_warmup else frame[~frame["warmup"].astype(bool)].reset_index(drop=True)
