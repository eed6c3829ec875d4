"""Find a Docker engine that answers, or start one where we can.

On Debian as root, a missing engine is installed from Debian's archive
(`docker.io`) and `dockerd` is started in the background; everywhere else the
error says exactly what the user must do. Nothing here builds images.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import docker
import docker.errors

from loadlab.errors import DockerUnavailableError
from loadlab.harness.apt import apt_install

DOCKERD_LOG = Path("/var/log/loadlab-dockerd.log")
ENGINE_START_TIMEOUT_S = 60.0

_HOW_TO_START = (
    "No Docker engine answers at {where}. Start one: on Debian/Ubuntu as root run "
    "`apt-get install -y docker.io && dockerd >/var/log/dockerd.log 2>&1 &` "
    "(or `systemctl start docker` where systemd runs), or run `make engine` as root; "
    "as a normal user, ask for membership of the `docker` group and log in again. "
    "Set DOCKER_HOST to use an engine elsewhere."
)


def client_from_env(timeout_s: float = 120.0) -> docker.DockerClient:
    """A client for DOCKER_HOST (or the local socket). The SDK asks the engine its API version."""
    return docker.from_env(timeout=int(timeout_s))


def _answering_client() -> docker.DockerClient | None:
    try:
        client = client_from_env()
        client.ping()
        return client
    except Exception:  # the SDK raises several unrelated types for "no engine"
        return None


def _can_bootstrap() -> str | None:
    """None when this process may install and start dockerd, else why not."""
    if os.environ.get("DOCKER_HOST"):
        return "DOCKER_HOST is set, so the engine is not ours to start"
    if os.geteuid() != 0:
        return "not running as root"
    if not Path("/etc/debian_version").exists():
        return "not a Debian system"
    return None


def _install_docker_io(log) -> None:
    apt_install("docker.io", log=log)


def _raise_open_file_limit() -> None:
    """Give dockerd (and so every container) as many open files as we may.

    Many-connection experiments need far more than the usual 1024; where the
    host forbids raising the hard limit, the soft limit still goes to it.
    """
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    for wanted in (1_048_576, hard):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, max(wanted, hard)))
            return
        except (ValueError, OSError):
            continue


def _start_dockerd(log) -> None:
    log(f"starting dockerd in the background (log: {DOCKERD_LOG})")
    DOCKERD_LOG.parent.mkdir(parents=True, exist_ok=True)
    with open(DOCKERD_LOG, "ab") as log_file:
        subprocess.Popen(
            ["dockerd"],
            stdout=log_file,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # outlives this process, like a service would
            preexec_fn=_raise_open_file_limit,
        )


def ensure_engine(install: bool = True, log=print) -> docker.DockerClient:
    """Return a client whose engine answers.

    With `install`, on Debian as root, installs `docker.io` if `dockerd` is
    missing and starts `dockerd`. Raises DockerUnavailableError with the steps
    to take otherwise.
    """
    client = _answering_client()
    if client is not None:
        return client
    where = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    reason = _can_bootstrap()
    if not install or reason is not None:
        detail = f" (loadlab did not start one: {reason})" if reason else ""
        raise DockerUnavailableError(_HOW_TO_START.format(where=where) + detail)
    if shutil.which("dockerd") is None:
        _install_docker_io(log)
    _start_dockerd(log)
    deadline = time.monotonic() + ENGINE_START_TIMEOUT_S
    while time.monotonic() < deadline:
        client = _answering_client()
        if client is not None:
            return client
        time.sleep(0.5)
    tail = DOCKERD_LOG.read_text(errors="replace")[-2000:] if DOCKERD_LOG.exists() else ""
    raise DockerUnavailableError(
        f"dockerd was started but did not answer within {ENGINE_START_TIMEOUT_S:.0f} s; "
        f"its log ({DOCKERD_LOG}) ends with:\n{tail}"
    )


def engine_description(client: docker.DockerClient) -> dict:
    """Version facts for a run manifest."""
    version = client.version()
    info = client.info()
    return {
        "host_name": info.get("Name"),  # the engine's host: which machine, when there are two
        "docker_version": version.get("Version"),
        "docker_api_version": version.get("ApiVersion"),
        "kernel": info.get("KernelVersion"),
        "operating_system": info.get("OperatingSystem"),
        "cgroup_version": info.get("CgroupVersion"),
        "cgroup_driver": info.get("CgroupDriver"),
        "cpus": info.get("NCPU"),
        "memory_bytes": info.get("MemTotal"),
        "storage_driver": info.get("Driver"),
    }


def ensure_profiler_tools(log=print) -> str | None:
    """Install `perf` (Debian's linux-perf) when missing, where we may; returns why not, or None.

    perf profiles any server from the host (cpu-clock events work in VMs
    without hardware counters). Without it, perf captures are skipped with
    this reason.
    """
    if shutil.which("perf"):
        return None
    if os.geteuid() != 0 or not Path("/etc/debian_version").exists():
        return "perf is not installed (Debian: apt-get install linux-perf, as root)"
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    log("installing Debian's linux-perf (apt-get)")
    result = subprocess.run(["apt-get", "install", "-y", "-q", "linux-perf"], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True)
        result = subprocess.run(["apt-get", "install", "-y", "-q", "linux-perf"], env=env, capture_output=True, text=True)
    return None if shutil.which("perf") else f"perf could not be installed: {result.stderr.strip()[-300:]}"
