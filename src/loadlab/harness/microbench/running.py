"""Running a program: fresh, hardened containers with no network, one per repetition, always removed."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Sequence

import docker
import docker.errors
import pandas as pd

from loadlab.config import interleave, new_run_id, parse_cpuset
from loadlab.errors import ParameterError, TrialFailure
from loadlab.harness import container, images

from .output import MicrobenchOutputError, parse_output, tidy
from .programs import DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_TIMEOUT_S, ROLE, USER, _check_int, _check_jdk, build, image_tag

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
