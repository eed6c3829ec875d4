"""Start, watch, and always remove the containers of a trial.

Servers run hardened and pinned: host networking bound to the target
address (publishing ports through docker-proxy halved Go's throughput on the
reference machine), a cpuset, a memory limit without swap, a non-root user, a
read-only root filesystem with a tmpfs /tmp, every capability dropped and no
new privileges. Containers inherit the engine's open-file limit (raising it
needs a privilege some hosts withhold; trials record the limit they got).
Every container carries the label `loadlab.run=<run id>` so
leftovers from a killed run can be found and removed.
"""

from __future__ import annotations

import contextlib
import errno
import json
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

import docker
import docker.errors

from loadlab.errors import TrialFailure

RUN_LABEL = "loadlab.run"
ROLE_LABEL = "loadlab.role"
TMPFS_SIZE = "256m"
LOG_TAIL_LINES = 200


@dataclass
class ServerPlacement:
    """Where and how a server container runs. Units: bytes, CPU ids as a cpuset string."""

    cpuset: str = "1"
    memory_limit_bytes: int = 2 * 1024**3
    cpu_quota: float | None = None  # CPUs' worth of time (e.g. 0.5), None for the whole cpuset
    cpu_period_ms: float | None = None  # the CFS period the quota is granted in; None: the kernel's 100 ms
    host: str = "127.0.0.1"
    extra_env: dict[str, str] = field(default_factory=dict)


# Linux keeps a closed client connection in TIME-WAIT for 60 s. A loadgen that opened tens of thousands of
# connections (vegeta at a rate its server could not serve) can hold every local port that long: seen here, 28,294
# TIME-WAIT sockets and no port left for the next trial's server.
PORTS_FREE_WAIT_S = 75.0


def free_port(host: str = "127.0.0.1", max_wait_s: float = PORTS_FREE_WAIT_S) -> int:
    """A TCP port nothing listens on right now (the kernel's choice).

    When every local port is taken (EADDRINUSE on port 0), waits for
    TIME-WAIT to release one, up to `max_wait_s` seconds, then fails the
    trial as `host-ports-exhausted`, so the run goes on instead of crashing.
    """
    deadline = time.monotonic() + max_wait_s
    delay_s = 0.5
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind((host, 0))
                return probe.getsockname()[1]
            except OSError as error:
                if error.errno != errno.EADDRINUSE:
                    raise
        if time.monotonic() >= deadline:
            raise TrialFailure("host-ports-exhausted",
                               f"no local TCP port free on {host} after {max_wait_s:g} s: the previous trials' closed "
                               "connections still hold them in TIME-WAIT (`ss -tan state time-wait | wc -l`)")
        time.sleep(min(delay_s, max(0.0, deadline - time.monotonic())))
        delay_s = min(delay_s * 2, 8.0)


def check_not_root(client: docker.DockerClient, image: str) -> None:
    """Refuse an image without a non-root USER: no container of ours runs as root."""
    user = (client.images.get(image).attrs.get("Config") or {}).get("User") or ""
    if user.split(":")[0] in ("", "0", "root"):
        raise TrialFailure("image-runs-as-root", f"{image} has no non-root USER; every server image must set one")


def start_server(
    client: docker.DockerClient,
    image: str,
    run_id: str,
    name: str,
    port: int,
    settings: dict[str, str],
    placement: ServerPlacement,
):
    """Start a server container; returns the container object (not yet healthy)."""
    check_not_root(client, image)
    environment = {**settings, **placement.extra_env, "HOST": placement.host, "PORT": str(port)}
    options = dict(
        image=image,
        name=name,
        detach=True,
        labels={RUN_LABEL: run_id, ROLE_LABEL: "server"},
        environment=environment,
        network_mode="host",
        cpuset_cpus=placement.cpuset,
        **hardened_options(placement.memory_limit_bytes),
    )
    if placement.cpu_quota is not None and placement.cpu_period_ms is not None:
        period_us = round(placement.cpu_period_ms * 1000)
        options.update(cpu_period=period_us, cpu_quota=round(placement.cpu_quota * period_us))
    elif placement.cpu_quota is not None:
        options["nano_cpus"] = int(placement.cpu_quota * 1e9)
    return run_container(client, options, "server-start-failed")


def hardened_options(memory_limit_bytes: int) -> dict:
    """containers.run options for a measured program: a memory limit, and as little power as it can run with.

    A read-only root with a tmpfs /tmp, every capability dropped, no new
    privileges; no swap, so an OOM is an OOM and not a slow run.
    """
    return dict(
        mem_limit=memory_limit_bytes,
        memswap_limit=memory_limit_bytes,
        read_only=True,
        tmpfs={"/tmp": f"rw,size={TMPFS_SIZE},mode=1777"},
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
    )


def run_container(client: docker.DockerClient, options: dict, reason: str):
    """containers.run(**options), but a container that was created and failed to start is removed.

    Raises TrialFailure(`reason`) naming the container when the engine refuses.
    """
    try:
        return client.containers.run(**options)
    except docker.errors.APIError as error:
        with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
            client.containers.get(options["name"]).remove(force=True)
        raise TrialFailure(reason, f"{options['name']}: {error.explanation or error}") from error


def run_loadgen(
    client: docker.DockerClient,
    image: str,
    run_id: str,
    name: str,
    command: list[str],
    output_dir,
    cpuset: str,
    environment: dict[str, str] | None = None,
):
    """Start the loadgen container with `output_dir` mounted at /out; returns it."""
    import os

    return run_container(client, dict(
        image=image,
        command=command,
        name=name,
        detach=True,
        labels={RUN_LABEL: run_id, ROLE_LABEL: "loadgen"},
        network_mode="host",
        cpuset_cpus=cpuset,
        user=f"{os.getuid()}:{os.getgid()}",  # files it writes belong to whoever runs loadlab
        volumes={str(output_dir): {"bind": "/out", "mode": "rw"}},
        environment=environment or {},
        security_opt=["no-new-privileges"],
        cap_drop=["ALL"],
    ), "loadgen-start-failed")


def open_file_limit(container) -> int | None:
    """The soft RLIMIT_NOFILE of the container's init process (local engines only)."""
    pid = container_state(container).get("Pid") or 0
    try:
        for line in open(f"/proc/{pid}/limits"):
            if line.startswith("Max open files"):
                value = line.split()[3]
                return int(value) if value.isdigit() else None
    except OSError:
        return None
    return None


def host_pid(container) -> int:
    """The container's init process id on this host, from its attributes as last read (0 when none is known)."""
    return container.attrs.get("State", {}).get("Pid") or 0


def container_state(container) -> dict:
    with contextlib.suppress(docker.errors.NotFound):
        container.reload()
    return container.attrs.get("State", {})


def describe_exit(container) -> TrialFailure | None:
    """A TrialFailure if the container is no longer running (crash or OOM kill), else None."""
    state = container_state(container)
    if state.get("Running", False):
        return None
    logs = log_tail(container)
    ended = state.get("FinishedAt")
    if state.get("OOMKilled"):
        return TrialFailure("oom-killed", f"{container.name} was killed by the OOM killer (memory limit)", logs,
                            ended_utc=ended)
    return TrialFailure("server-exited", f"{container.name} exited with code {state.get('ExitCode')}", logs,
                        ended_utc=ended)


# After the loadgen fails, how long the engine may take to report the server's death (a JVM that exits on
# OutOfMemoryError refuses wrk at once, but reads as running for a moment longer).
EXIT_GRACE_S = 5.0


def describe_exit_within(container, grace_s: float | None = None, poll_s: float = 0.2) -> TrialFailure | None:
    """`describe_exit`, asked again until the container has exited or `grace_s` (default EXIT_GRACE_S) has passed."""
    deadline = time.monotonic() + (EXIT_GRACE_S if grace_s is None else grace_s)
    while True:
        exited = describe_exit(container)
        if exited is not None or time.monotonic() >= deadline:
            return exited
        time.sleep(poll_s)


def refuses_connections(host: str, port: int, timeout_s: float = 1.0) -> bool:
    """True when nothing accepts a TCP connection on host:port (a live process whose server is gone)."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:  # a timeout is a full backlog, not a refusal: the server may still be working
        return False


def log_tail(container, lines: int = LOG_TAIL_LINES) -> str:
    with contextlib.suppress(Exception):
        return container.logs(tail=lines).decode(errors="replace")
    return ""


def http_get(url: str, timeout_s: float = 2.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_healthy(container, url: str, timeout_s: float) -> dict:
    """Poll `url` (the /health route) until it answers 200 JSON; returns that JSON.

    Fails fast when the container exits while we wait.
    """
    deadline = time.monotonic() + timeout_s
    last_problem = "no answer yet"
    while time.monotonic() < deadline:
        exited = describe_exit(container)
        if exited is not None:
            raise exited
        try:
            status, body = http_get(url, timeout_s=1.0)
            if status == 200:
                return json.loads(body)
            last_problem = f"HTTP {status}"
        except (OSError, ValueError) as error:
            last_problem = str(error)
        time.sleep(0.1)
    raise TrialFailure(
        "health-timeout",
        f"{container.name} did not answer {url} within {timeout_s:.0f} s (last: {last_problem})",
        log_tail(container),
    )


def remove(container) -> None:
    """Force-remove a container; never raises (it may already be gone)."""
    with contextlib.suppress(docker.errors.NotFound, docker.errors.APIError):
        container.remove(force=True)


def leftovers(client: docker.DockerClient, run_id: str | None = None) -> list:
    label = f"{RUN_LABEL}={run_id}" if run_id else RUN_LABEL
    return client.containers.list(all=True, filters={"label": label})


def clean(client: docker.DockerClient, run_id: str | None = None) -> list[str]:
    """Remove every loadlab container (of one run, or of all runs); returns their names."""
    names = []
    for container in leftovers(client, run_id):
        names.append(container.name)
        remove(container)
    return names
