"""Docker or a plain cgroup: where does an instance's throughput level come from?

The A/A control showed each go-nethttp container settling at one of a few
levels: consecutive windows of one instance agree to about 1-2%, fresh
instances to about 4%. One published result (Japke et al., UCC 2025) found
Docker containers more exposed to noise than plain cgroups with CPU
pinning. `compare()` runs the same static server binary as fresh instances
in three ways, interleaved in seeded shuffled blocks so that drift lands on
all alike:

- "docker": the server's image as every trial runs it (pinned cpuset,
  memory limit, read-only root, no capabilities, a non-root user);
- "cgroup": the binary copied out of that image and started as the same
  non-root user in a plain cgroup (cpuset and memory limit, cgroup v1 or
  v2) on the same CPU: no namespaces, no overlay file system, no Docker;
- "cgroup-no-aslr": the same under `setarch -R`, address-space layout
  randomization off. If memory layout sets an instance's level, this mode's
  instances agree more closely than the others'.

Each instance: start, wait for /health, a discarded warm-up, then
`windows` consecutive closed-loop wrk windows from the loadgen container on
the loadgen CPU. One row per window (mode, instance, window,
throughput_rps, errors). `loadlab.stats.isolation_noise` splits the
spread into within- and between-instance parts.

Plain cgroups need root and a cgroup file system this process can write;
where they cannot be had, `compare()` raises ParameterError saying why
before anything starts (the notebook then measures Docker alone and says so).
"""

from __future__ import annotations

import contextlib
import io
import os
import platform
import shutil
import signal
import subprocess
import tarfile
import tempfile
import time
import uuid
from pathlib import Path

import pandas as pd

from loadlab import hostfacts
from loadlab.config import interleave, new_run_id, parse_cpuset
from loadlab.errors import ParameterError
from loadlab.harness import container, images
from loadlab.harness import loadgen as loadgen_run
from loadlab.harness.session import ServerSession
from loadlab.servers import get_server, loadgen_image

MODES = ("docker", "cgroup", "cgroup-no-aslr")
SERVER = "go-nethttp"  # static (CGO_ENABLED=0): its binary runs outside its image unchanged
ROUTE = "/json"
CONNECTIONS = 64
MEMORY_LIMIT_BYTES = 2 * 1024**3
CGROUP_ROOT = Path("/sys/fs/cgroup")
HEALTH_TIMEOUT_S = 30.0


def cgroups_unavailable(cgroup_root: Path = CGROUP_ROOT) -> str | None:
    """None when plain cgroups can be made here, else why not (for the notebook and the skip reason)."""
    if os.geteuid() != 0:
        return "plain cgroups need root (this process runs as uid %d)" % os.geteuid()
    if (cgroup_root / "cgroup.controllers").exists():
        controllers = (cgroup_root / "cgroup.controllers").read_text().split()
        missing = [name for name in ("cpuset", "memory") if name not in controllers]
        return f"cgroup v2 without the {', '.join(missing)} controller(s)" if missing else None
    missing = [name for name in ("cpuset", "memory") if not (cgroup_root / name / "cgroup.procs").exists()]
    return f"no cgroup v1 {', '.join(missing)} hierarchy under {cgroup_root}" if missing else None


def available_modes() -> tuple[tuple[str, ...], str | None]:
    """(the modes that can run here, why the others cannot or None)."""
    why = cgroups_unavailable()
    return (("docker",), why) if why else (MODES, None)


def compare_here(parameters: dict, log=print) -> pd.DataFrame:
    """`compare` with the modes this host can run: Docker alone, said in the log, where cgroups cannot be made."""
    from loadlab.harness import engine

    modes, why = available_modes()
    if why:
        log(f"plain cgroups cannot be made here ({why}): Docker alone is measured")
    return compare(engine.ensure_engine(), modes=modes, log=log, **parameters)


class PlainCgroup:
    """A cpuset + memory cgroup (v1: one directory per controller; v2: one directory), removed on close."""

    def __init__(self, name: str, cpuset: str, memory_limit_bytes: int, cgroup_root: Path = CGROUP_ROOT):
        self.unified = (cgroup_root / "cgroup.controllers").exists()
        if self.unified:
            self.directories = [cgroup_root / name]
        else:
            self.directories = [cgroup_root / "cpuset" / name, cgroup_root / "memory" / name]
        for directory in self.directories:
            directory.mkdir()
        if self.unified:
            (cgroup_root / "cgroup.subtree_control").write_text("+cpuset +memory")
            self._write("cpuset.cpus", cpuset)
            self._write("memory.max", str(memory_limit_bytes))
            self._write("memory.swap.max", "0")
        else:
            cpuset_dir, memory_dir = self.directories
            (cpuset_dir / "cpuset.cpus").write_text(cpuset)
            (cpuset_dir / "cpuset.mems").write_text((cgroup_root / "cpuset" / "cpuset.mems").read_text().strip())
            (memory_dir / "memory.limit_in_bytes").write_text(str(memory_limit_bytes))
            with contextlib.suppress(OSError):  # absent without swap accounting
                (memory_dir / "memory.memsw.limit_in_bytes").write_text(str(memory_limit_bytes))

    def _write(self, name: str, value: str) -> None:
        (self.directories[0] / name).write_text(value)

    def join(self) -> None:
        """Move the calling process into every directory (called in the child, before exec)."""
        for directory in self.directories:
            (directory / "cgroup.procs").write_text(str(os.getpid()))

    def close(self) -> None:
        for directory in self.directories:
            for _ in range(50):  # a killed process leaves its cgroup a moment after it is reaped
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)


def extract_binary(client, image: str, directory: Path, run_id: str) -> Path:
    """Copy the image's entrypoint binary into `directory`; returns its path."""
    entrypoint = client.images.get(image).attrs["Config"]["Entrypoint"][0]
    holder = client.containers.create(image, labels={container.RUN_LABEL: run_id, container.ROLE_LABEL: "isolation-copy"})
    try:
        stream, _ = holder.get_archive(entrypoint)
        archive = tarfile.open(fileobj=io.BytesIO(b"".join(stream)))
        member = archive.getmembers()[0]
        target = directory / Path(entrypoint).name
        target.write_bytes(archive.extractfile(member).read())
        target.chmod(0o755)
        return target
    finally:
        holder.remove(force=True)


class PlainServer:
    """The binary as an unprivileged process in a PlainCgroup, listening on loopback."""

    def __init__(self, binary: Path, cpuset: str, no_aslr: bool, user: tuple[int, int]):
        self.port = container.free_port()
        self.cgroup = PlainCgroup(f"loadlab-isolation-{uuid.uuid4().hex[:8]}", cpuset, MEMORY_LIMIT_BYTES)
        # As the image sets it (Dockerfile ENV), so the two modes run the same program the same way.
        environment = {"HOST": "127.0.0.1", "PORT": str(self.port), "GODEBUG": "gctrace=1", "PATH": "/usr/bin:/bin"}
        argv = [str(binary)]
        if no_aslr:
            argv = ["setarch", platform.machine(), "-R", *argv]
        uid, gid = user

        def enter_cgroup_then_drop_root() -> None:
            # Joined before exec, as root: the Go runtime reads its CPU affinity (GOMAXPROCS) at start.
            self.cgroup.join()
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)

        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(argv, env=environment, stdout=self.log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, preexec_fn=enter_cgroup_then_drop_root,
                                        start_new_session=True)

    def url(self, target: str) -> str:
        return f"http://127.0.0.1:{self.port}{target}"

    def wait_healthy(self, timeout_s: float = HEALTH_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ParameterError("server", SERVER, f"a binary that runs outside its image (it exited with "
                                                       f"code {self.process.returncode})")
            with contextlib.suppress(OSError):
                if container.http_get(self.url("/health"), timeout_s=1.0)[0] == 200:
                    return
            time.sleep(0.05)
        raise ParameterError("server", SERVER, f"a server that answers /health within {timeout_s:.0f} s")

    def close(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        self.log.close()
        self.cgroup.close()


def _windows(loadgen: loadgen_run.LoadgenContainer, url: str, mode: str, instance: int, warmup_s: int,
             windows: int, window_s: int, cpus: dict[str, set[int]]) -> list[dict]:
    """One row per measured window, with the share of each side's CPUs (`cpus`: side -> CPU numbers) that the
    hypervisor stole during it."""
    if warmup_s:
        loadgen_run.run_wrk(loadgen, f"{mode}-{instance}/warmup", url, CONNECTIONS, warmup_s, 1, 2, 1)
    rows = []
    for window in range(1, windows + 1):
        before = hostfacts.cpu_times()
        report = loadgen_run.run_wrk(loadgen, f"{mode}-{instance}/{window}", url, CONNECTIONS, window_s, 1, 2, 1)
        after = hostfacts.cpu_times()
        rows.append({"mode": mode, "instance": instance, "window": window, "throughput_rps": report.requests_per_s,
                     "errors_total": report.error_count, "window_s": window_s,
                     **hostfacts.steal_columns(before, after, cpus)})
    return rows


def compare(client, instances: int, windows: int, window_s: int = 3, warmup_s: int = 2,
            modes: tuple[str, ...] = MODES, server_cpus: str = "1", loadgen_cpus: str = "0", seed: int = 13,
            log=print) -> pd.DataFrame:
    """Fresh instances of go-nethttp in each mode, interleaved; one row per measured window."""
    unknown = [mode for mode in modes if mode not in MODES]
    if unknown:
        raise ParameterError("modes", unknown, MODES)
    if instances < 2 or windows < 2:
        raise ParameterError("instances and windows", (instances, windows), "at least 2 each (a spread needs two)")
    if any(mode.startswith("cgroup") for mode in modes):
        why = cgroups_unavailable()
        if why:
            raise ParameterError("modes", modes, f"'docker' alone here: {why}")
    spec = get_server(SERVER)
    image = images.ensure_image(client, spec, None, log=log)
    images.ensure_image(client, None, log=log)
    run_id = new_run_id("isolation")
    workdir = Path(tempfile.mkdtemp(prefix="loadlab-isolation-"))
    os.chmod(workdir, 0o755)
    binary = extract_binary(client, image, workdir, run_id)
    user = tuple(int(part) for part in (client.images.get(image).attrs["Config"]["User"] or "65534:65534").split(":"))
    rows: list[dict] = []
    cpus = {"server": parse_cpuset(server_cpus, "server_cpus"), "loadgen": parse_cpuset(loadgen_cpus, "loadgen_cpus")}
    order = interleave(modes, instances, seed)
    try:
        with loadgen_run.loadgen_for_trial(client, loadgen_image(), run_id, f"loadlab-{run_id}-loadgen",
                                           workdir / "out", loadgen_cpus) as loadgen:
            for number, (block, mode) in enumerate(order, start=1):
                instance = block + 1
                if mode == "docker":
                    # build=False: the image was ensured above; its build inputs need not be hashed per instance.
                    session = ServerSession.start(SERVER, cpuset=server_cpus, memory_limit_bytes=MEMORY_LIMIT_BYTES,
                                                  run_id=run_id, client=client, name=f"loadlab-{run_id}-{number}",
                                                  build=False)
                    with session:
                        rows += _windows(loadgen, session.url(ROUTE), mode, instance, warmup_s, windows, window_s, cpus)
                else:
                    server = PlainServer(binary, server_cpus, mode == "cgroup-no-aslr", user)
                    try:
                        server.wait_healthy()
                        rows += _windows(loadgen, server.url(ROUTE), mode, instance, warmup_s, windows, window_s, cpus)
                    finally:
                        server.close()
                log(f"isolation: {number}/{len(order)} ({mode}, instance {instance}) done")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return pd.DataFrame(rows)
