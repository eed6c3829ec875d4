"""Spawn-cost microbenchmarks: what a goroutine, a platform thread and a virtual thread cost.

The claims S1-spawn, S1-vthread-switches, S4-stack (Go's half), S5-time,
S5-memory and S5-stack are about single tasks, not servers; the programs in
`microbench-programs/` measure them directly (microbench-programs/README.md says what each
field means). One image per JDK holds both programs:

    spawn-go   --tasks N [--iterations I]                         (goroutines)
    spawn-java --mode platform|virtual --bench sleepers|sqrt_latch|switches
               --tasks N [--warmup W] [--iterations I] [--sleep-ms M]

Each prints one JSON line per measurement. `run()` runs a program in fresh,
hardened containers (one per repetition, started by
`loadlab.harness.container` with the servers' hardening: labelled, pinned,
memory-limited without swap, read-only root, no capabilities, non-root;
unlike a server, with no network at all; always removed) and returns the lines as a DataFrame; `parse_output()` is the pure parser and
`tidy()` adds per-task columns. `spawn_cost()`, `sqrt_latch()` and
`context_switches()` run the claims' experiments.

Units are in column names: *_s seconds, *_ms milliseconds, *_bytes bytes;
counts have none. Wall times (spawn_s, elapsed_s) on a core shared with
other work include that work's turns; the *_cpu_s columns (process CPU time
from getrusage) do not.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Sequence
from pathlib import Path

import docker
import docker.errors
import pandas as pd

from loadlab import paths
from loadlab.config import interleave, new_run_id, parse_cpuset
from loadlab.errors import LoadlabError, ParameterError, TrialFailure
from loadlab.harness import container, images
from loadlab.servers import get_server

MICROBENCH_DIR: Path = paths.ROOT / "microbench-programs"
IMAGE_REPOSITORY = "loadlab/microbench"
ROLE = "microbench"
USER = "10001:10001"
# The JDKs are servers/java-threads' own (its loadlab.yaml variants, build
# arguments and all), so the two images share their JDK layer and a claim
# about a JDK is measured on the same JDK in both.
JAVA_SERVER = "java-threads"

DEFAULT_MEMORY_LIMIT_BYTES = 2 * 1024**3
DEFAULT_TIMEOUT_S = 600.0
MODELS = ("platform", "virtual")
BENCHES = ("sleepers", "sqrt_latch", "switches")
# Conditions as claims.yaml names them.
CONDITIONS = ("go", "java-platform", "java-virtual")
MAX_TASKS = 1_000_000

REQUIRED_FIELDS = ("runtime", "model", "bench", "tasks")
# <measure>_delta_bytes -> <measure>_per_task_bytes
_PER_TASK_BYTES = (
    "rss", "peak_rss", "vm_size", "heap", "stack_inuse", "total_alloc", "sys",
)
_CTXT_PREFIXES = ("", "live_threads_", "self_status_", "background_")


class MicrobenchOutputError(LoadlabError, ValueError):
    """A program's output is not the JSON lines it should be; the message quotes the line."""


# --- images ---------------------------------------------------------------------------------


def image_tag(jdk: str = "21") -> str:
    jdk = _check_jdk(jdk)
    return f"{IMAGE_REPOSITORY}:jdk{jdk}"


def jdk_build_args() -> dict[str, dict[str, str]]:
    """JDK feature version ("21", "25") -> the build arguments of java-threads' variant with that JDK."""
    return {args["JDK_VERSION"]: dict(args) for args in get_server(JAVA_SERVER).variants.values()}


def _check_jdk(jdk) -> str:
    jdk = str(jdk)
    available = jdk_build_args()
    if jdk not in available:
        raise ParameterError("jdk", jdk, tuple(sorted(available)))
    return jdk


def build(
    client: docker.DockerClient,
    jdk: str = "21",
    rebuild: bool = False,
    ca_bundle: Path | None = None,
    log=print,
) -> str:
    """Build `loadlab/microbench:jdk<jdk>` unless it is current; returns the tag.

    Current means, as for the server images (`images.ensure_image`), that the
    image's build-hash label equals the hash of today's inputs: an edit to
    microbench-programs/ rebuilds it on the next run.
    """
    tag = image_tag(jdk)
    images.ensure_base_image(client, log)
    build_args = jdk_build_args()[_check_jdk(jdk)]  # Go's pin is the Dockerfile's GO_VERSION
    ca_bundle = ca_bundle if ca_bundle is not None else images.ca_bundle_path()
    wanted = images.build_inputs_hash(MICROBENCH_DIR, build_args, ca_bundle, {}, client.images.get(images.BASE_IMAGE).id)
    if not rebuild and images.image_build_hash(client, tag) == wanted:
        return tag
    log(f"building {tag}")
    images.build_image(client, MICROBENCH_DIR, tag, build_args, ca_bundle=ca_bundle, log=log,
                       labels={images.BUILD_HASH_LABEL: wanted})
    return tag


# --- commands -------------------------------------------------------------------------------


def _check_int(name: str, value, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ParameterError(name, value, f"an integer from {low} to {high}")
    return value


def go_command(tasks: int, iterations: int = 1) -> list[str]:
    """spawn-go's command line: `tasks` goroutines parked, measured, released, joined."""
    _check_int("tasks", tasks, 1, MAX_TASKS)
    _check_int("iterations", iterations, 1, 100)
    return ["spawn-go", "--tasks", str(tasks), "--iterations", str(iterations)]


def java_command(
    model: str,
    bench: str = "sleepers",
    tasks: int = 10_000,
    warmup: int | None = None,
    iterations: int | None = None,
    sleep_ms: int | None = None,
) -> list[str]:
    """spawn-java's command line. None leaves the program's default (README.md)."""
    if model not in MODELS:
        raise ParameterError("model", model, MODELS)
    if bench not in BENCHES:
        raise ParameterError("bench", bench, BENCHES)
    command = ["spawn-java", "--mode", model, "--bench", bench, "--tasks", str(_check_int("tasks", tasks, 1, MAX_TASKS))]
    if warmup is not None:
        command += ["--warmup", str(_check_int("warmup", warmup, 0, 1000))]
    if iterations is not None:
        command += ["--iterations", str(_check_int("iterations", iterations, 1, 1000))]
    if sleep_ms is not None:
        if bench != "switches":
            raise ParameterError("sleep_ms", sleep_ms, "None unless bench='switches'")
        command += ["--sleep-ms", str(_check_int("sleep_ms", sleep_ms, 0, 10_000))]
    return command


def condition_command(condition: str, bench: str, tasks: int, **options) -> list[str]:
    """The command for a claims.yaml condition: go, java-platform or java-virtual."""
    if condition == "go":
        if bench != "sleepers":
            raise ParameterError("bench", bench, "sleepers (the only Go benchmark)")
        return go_command(tasks, **options)
    if condition in ("java-platform", "java-virtual"):
        return java_command(condition.split("-", 1)[1], bench, tasks, **options)
    raise ParameterError("condition", condition, CONDITIONS)


# --- parsing (pure) -------------------------------------------------------------------------


def parse_lines(text: str) -> list[dict]:
    """Every non-blank line of `text` as a JSON object; raises MicrobenchOutputError otherwise."""
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise MicrobenchOutputError(f"line {number} is not JSON ({error.msg}): {line[:200]!r}") from None
        if not isinstance(record, dict):
            raise MicrobenchOutputError(f"line {number} is not a JSON object: {line[:200]!r}")
        missing = [name for name in REQUIRED_FIELDS if name not in record]
        if missing:
            raise MicrobenchOutputError(f"line {number} lacks {', '.join(missing)}: {line[:200]!r}")
        records.append(record)
    return records


def parse_output(text: str) -> pd.DataFrame:
    """The JSON lines as a DataFrame, one row per line, columns as the programs name them."""
    records = parse_lines(text)
    frame = pd.DataFrame.from_records(records)
    if frame.empty:
        return pd.DataFrame(columns=list(REQUIRED_FIELDS))
    return frame


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` plus derived columns (a copy): per-task bytes, total context switches, ...

    Added where the inputs exist: condition (go, java-platform, java-virtual),
    <m>_per_task_bytes for every <m>_delta_bytes, <prefix>ctxt_switches_delta
    (voluntary + nonvoluntary) and ctxt_switches_per_task, threads_delta,
    spawn_per_task_s, elapsed_ms, ctxt_switches_net_of_background_delta.
    """
    out = frame.copy()
    if out.empty:
        return out
    if "runtime" in out and "model" in out:
        out["condition"] = [
            "go" if runtime == "go" else f"{runtime}-{model}" for runtime, model in zip(out["runtime"], out["model"])
        ]
    tasks = pd.to_numeric(out["tasks"])
    for measure in _PER_TASK_BYTES:
        column = f"{measure}_delta_bytes"
        if column in out:
            out[f"{measure}_per_task_bytes"] = pd.to_numeric(out[column]) / tasks
    for prefix in _CTXT_PREFIXES:
        voluntary = f"{prefix}voluntary_ctxt_switches_delta"
        nonvoluntary = f"{prefix}nonvoluntary_ctxt_switches_delta"
        if voluntary in out and nonvoluntary in out:
            out[f"{prefix}ctxt_switches_delta"] = pd.to_numeric(out[voluntary]) + pd.to_numeric(out[nonvoluntary])
    if "ctxt_switches_delta" in out:
        out["ctxt_switches_per_task"] = out["ctxt_switches_delta"] / tasks
        if "background_ctxt_switches_delta" in out:
            out["ctxt_switches_net_of_background_delta"] = (
                out["ctxt_switches_delta"] - out["background_ctxt_switches_delta"]
            )
    if "threads" in out and "threads_before" in out:
        out["threads_delta"] = pd.to_numeric(out["threads"]) - pd.to_numeric(out["threads_before"])
    if "spawn_s" in out:
        out["spawn_per_task_s"] = pd.to_numeric(out["spawn_s"]) / tasks
    if "elapsed_s" in out:
        out["elapsed_ms"] = pd.to_numeric(out["elapsed_s"]) * 1000.0
    return out


# --- running --------------------------------------------------------------------------------


def _check_command(program_args) -> list[str]:
    if (
        isinstance(program_args, (str, bytes))
        or not isinstance(program_args, Sequence)
        or not program_args
        or not all(isinstance(a, str) for a in program_args)
    ):
        raise ParameterError("program_args", program_args, "a non-empty list of strings, e.g. go_command(10000)")
    return list(program_args)


def _output(box, stdout: bool) -> str:
    with contextlib.suppress(docker.errors.APIError):
        return box.logs(stdout=stdout, stderr=not stdout).decode(errors="replace")
    return ""


def _run_once(
    client: docker.DockerClient,
    image: str,
    command: list[str],
    run_id: str,
    name: str,
    cpuset: str,
    memory_limit_bytes: int,
    timeout_s: float,
    environment: dict[str, str],
) -> str:
    """One fresh container; its stdout. Raises TrialFailure; the container is always removed."""
    box = container.run_container(client, dict(
        image=image,
        command=command,
        name=name,
        detach=True,
        labels={container.RUN_LABEL: run_id, container.ROLE_LABEL: ROLE},
        environment=environment,
        user=USER,
        network_mode="none",
        cpuset_cpus=cpuset,
        **container.hardened_options(memory_limit_bytes),
    ), "microbench-start-failed")
    try:
        try:
            status = int(box.wait(timeout=timeout_s).get("StatusCode", -1))
        except Exception:  # requests' ReadTimeout / ConnectionError: it hung
            raise TrialFailure(
                "microbench-timeout", f"{name} ({' '.join(command)}) did not finish within {timeout_s:.0f} s",
                _output(box, stdout=False)[-4000:],
            ) from None
        state = container.container_state(box)
        stderr = _output(box, stdout=False)
        if state.get("OOMKilled"):
            killed = TrialFailure(
                "oom-killed", f"{name} ({' '.join(command)}) exceeded {memory_limit_bytes} bytes", stderr[-4000:]
            )
            killed.stdout = _output(box, stdout=True)  # what it printed until the kill: a record of how far it got
            raise killed
        if status != 0:
            raise TrialFailure(
                "microbench-failed", f"{name} ({' '.join(command)}) exited with code {status}: "
                + (stderr.strip().splitlines() or ["(no stderr)"])[-1][:300],
                stderr[-4000:],
            )
        return _output(box, stdout=True)
    finally:
        container.remove(box)


def run(
    client: docker.DockerClient,
    program_args: Sequence[str],
    jdk: str = "21",
    cpuset: str = "1",
    memory_limit_bytes: int = DEFAULT_MEMORY_LIMIT_BYTES,
    repetitions: int = 1,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    run_id: str | None = None,
    environment: dict[str, str] | None = None,
    image: str | None = None,
    log=lambda message: None,
) -> pd.DataFrame:
    """Run `program_args` in `repetitions` fresh containers; their JSON lines as one DataFrame.

    Adds the columns repetition (0-based), jdk, image and run_id. The image
    must exist (build() makes it). `environment` reaches the program (e.g.
    JAVA_OPTS, GOGC). Raises TrialFailure on a timeout, an OOM kill or a
    non-zero exit, MicrobenchOutputError on output that is not JSON lines.
    """
    command = _check_command(program_args)
    jdk = _check_jdk(jdk)
    parse_cpuset(cpuset, "cpuset")
    _check_int("repetitions", repetitions, 1, 1000)
    _check_int("memory_limit_bytes", memory_limit_bytes, 64 * 1024**2, 1 << 50)
    if not isinstance(timeout_s, (int, float)) or isinstance(timeout_s, bool) or timeout_s <= 0:
        raise ParameterError("timeout_s", timeout_s, "a positive number of seconds")
    image = image or image_tag(jdk)
    if not images.image_exists(client, image):
        raise ParameterError("image", image, f"a built image: call microbench.build(client, jdk={jdk!r}) first")
    container.check_not_root(client, image)
    run_id = run_id or new_run_id(ROLE)
    frames = []
    for repetition in range(repetitions):
        name = f"{run_id}-{repetition}-{uuid.uuid4().hex[:6]}"
        log(f"{name}: {' '.join(command)}")
        stdout = _run_once(
            client, image, command, run_id, name, cpuset, memory_limit_bytes, timeout_s, dict(environment or {})
        )
        frame = parse_output(stdout)
        if frame.empty:
            raise MicrobenchOutputError(f"{name} ({' '.join(command)}) printed no measurement")
        frame.insert(0, "repetition", repetition)
        frame["jdk"] = jdk
        frame["image"] = image
        frame["run_id"] = run_id
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def _run_plan(client, plan, repetitions: int, seed: int, run_options: dict) -> pd.DataFrame:
    """Run every (key -> (command, jdk)) once per repetition, interleaved; one tidy frame."""
    run_options = {**run_options, "run_id": run_options.get("run_id") or new_run_id(ROLE)}
    for jdk in sorted({jdk for _, jdk in plan.values()}):
        build(client, jdk)  # a no-op when the image exists
    frames = []
    for repetition, key in interleave(plan, repetitions, seed):
        command, jdk = plan[key]
        frame = run(client, command, jdk=jdk, repetitions=1, **run_options)
        frame["repetition"] = repetition
        frames.append(frame)
    return tidy(pd.concat(frames, ignore_index=True))


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
    plan = {
        (jdk, model): (java_command(model, "sqrt_latch", tasks, warmup, iterations), _check_jdk(jdk))
        for jdk in jdks for model in models
    }
    frame = _run_plan(client, plan, repetitions, seed, run_options)
    return frame if include_warmup else frame[~frame["warmup"].astype(bool)].reset_index(drop=True)


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
    plan = {
        (jdk, model): (java_command(model, "switches", tasks, warmup, iterations, sleep_ms), _check_jdk(jdk))
        for jdk in jdks for model in models
    }
    frame = _run_plan(client, plan, repetitions, seed, run_options)
    return frame if include_warmup else frame[~frame["warmup"].astype(bool)].reset_index(drop=True)
