"""Two hosts on one machine: a network namespace joined by a veth pair, with its own Docker engine.

    root namespace (host A)                      namespace `loadlab-tb` (host B)
    engine 1 (the usual one) -- server           engine 2 (this module's) -- loadgen
    lltb0  198.18.30.1/30  <-------- veth -------->  lltb1  198.18.30.2/30

Why this shape: every loadlab container runs with host networking, so a
container's network stack is its engine's. The server therefore runs on the
engine already in the root namespace and binds the root end of the veth
(`placement.target_host: 198.18.30.1`); a second engine started inside the
namespace runs the loadgen, whose host network is the namespace's. Requests
cross the veth and nothing else: the namespace has no default route, and the
/30 (RFC 2544 benchmark space, never routed) holds only the two ends.

Engine 2 has its own socket, data root, exec root (and so its own containerd,
started by dockerd inside the namespace), pidfile and cgroup parent; it
touches no iptables and makes no bridge (`--bridge=none`). It gets its images
by `docker save | docker load` from engine 1. `down` stops it and removes the
namespace (which takes the veth with it), its mounts, folders and cgroups;
`leftovers` lists whatever would remain, for the test that checks none does.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from loadlab.errors import LoadlabError

NETNS = "loadlab-tb"
VETH_ROOT, VETH_PEER = "lltb0", "lltb1"
ROOT_ADDRESS, PEER_ADDRESS, PREFIX = "198.18.30.1", "198.18.30.2", 30
STATE_DIR = Path("/run/loadlab-testbed")  # socket, exec root, pidfile, state file: all gone after `down`
STATE_FILE = STATE_DIR / "state.json"
CGROUP_PARENT = "loadlab-testbed"
CGROUP_ROOT = Path("/sys/fs/cgroup")
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


class TestbedError(LoadlabError):
    """The bed could not be built here (the message says why)."""


@dataclass
class Testbed:
    """A running bed: where engine 2 answers and how to reach each side. Paths as strings (kept as JSON)."""

    docker_host: str  # engine 2's DOCKER_HOST (unix socket in STATE_DIR)
    data_root: str  # engine 2's images and containers (a temp folder under /var/tmp, removed by `down`)
    dockerd_pid: int
    server_address: str = ROOT_ADDRESS  # where the server binds (root namespace end of the veth)
    loadgen_address: str = PEER_ADDRESS


def unavailable() -> str | None:
    """Why this machine cannot hold the bed (the exact reason a test skips with), or None."""
    if os.geteuid() != 0:
        return "the two-host test bed needs root (network namespaces, a veth pair and a second dockerd)"
    for program in ("ip", "nsenter", "dockerd", "docker"):
        if shutil.which(program) is None:
            return f"the two-host test bed needs `{program}` on PATH"
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"`ip netns` does not work here: {probe.stderr.strip() or probe.returncode}"
    return None


def _run(*command: str, check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(list(command), capture_output=True, text=True)
    if check and result.returncode != 0:
        raise TestbedError(f"`{' '.join(command)}` failed: {result.stderr.strip()}")
    return result


def _network_up() -> None:
    """The namespace, the veth pair across it, an address on each end; no route beyond the /30."""
    _run("ip", "netns", "add", NETNS)
    _run("ip", "link", "add", VETH_ROOT, "type", "veth", "peer", "name", VETH_PEER)
    _run("ip", "link", "set", VETH_PEER, "netns", NETNS)
    _run("ip", "addr", "add", f"{ROOT_ADDRESS}/{PREFIX}", "dev", VETH_ROOT)
    _run("ip", "link", "set", VETH_ROOT, "up")
    inside = ("ip", "netns", "exec", NETNS)
    _run(*inside, "ip", "addr", "add", f"{PEER_ADDRESS}/{PREFIX}", "dev", VETH_PEER)
    _run(*inside, "ip", "link", "set", VETH_PEER, "up")
    _run(*inside, "ip", "link", "set", "lo", "up")


def _raise_open_file_limit() -> None:
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(1_048_576, hard), max(1_048_576, hard)))


def _start_engine(data_root: Path) -> int:
    """dockerd inside the namespace, on its own socket, roots and cgroup parent; returns its pid."""
    exec_root = STATE_DIR / "exec"
    # nsenter, not `ip netns exec`: the latter also gives a fresh mount namespace with /sys remounted, which hides
    # the cgroup hierarchies dockerd needs ("Devices cgroup isn't mounted").
    command = ["nsenter", f"--net=/run/netns/{NETNS}", "dockerd",
               "--host", f"unix://{STATE_DIR / 'docker.sock'}", "--data-root", str(data_root),
               "--exec-root", str(exec_root), "--pidfile", str(STATE_DIR / "dockerd.pid"),
               "--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-masq=false",
               "--cgroup-parent", f"/{CGROUP_PARENT}", "--config-file", str(STATE_DIR / "daemon.json")]
    (STATE_DIR / "daemon.json").write_text("{}\n")  # not /etc/docker/daemon.json: engine 1's settings stay its own
    log = open(STATE_DIR / "dockerd.log", "ab")  # noqa: SIM115 (the engine keeps writing after we return)
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               start_new_session=True, preexec_fn=_raise_open_file_limit)
    return process.pid


def _wait_for_engine(docker_host: str, pid: int):
    import docker

    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            client = docker.DockerClient(base_url=docker_host, timeout=120)
            client.ping()
            return client
        if not _alive(pid):
            break
        time.sleep(0.3)
    tail = (STATE_DIR / "dockerd.log").read_text(errors="replace")[-1500:]
    raise TestbedError(f"the test bed's dockerd did not answer within {START_TIMEOUT_S:.0f} s; its log ends:\n{tail}")


def copy_images(tags: list[str], docker_host: str) -> float:
    """`docker save TAGS | docker load` from engine 1 (DOCKER_HOST of this process) into `docker_host`; seconds."""
    started = time.monotonic()
    save = subprocess.Popen(["docker", "save", *tags], stdout=subprocess.PIPE)
    load = subprocess.run(["docker", "--host", docker_host, "load", "--quiet"], stdin=save.stdout,
                          capture_output=True, text=True)
    save.stdout.close()
    if save.wait() != 0 or load.returncode != 0:
        raise TestbedError(f"copying {', '.join(tags)} into the test bed failed: {load.stderr.strip()}")
    return time.monotonic() - started


def up(images: tuple[str, ...] = (), log=print) -> Testbed:
    """Build the bed (after removing any earlier one) and copy `images` into engine 2; returns it."""
    reason = unavailable()
    if reason is not None:
        raise TestbedError(reason)
    down(log=lambda m: None)
    STATE_DIR.mkdir(parents=True, exist_ok=True)
    data_root = Path(tempfile.mkdtemp(prefix="loadlab-testbed-", dir="/var/tmp"))
    bed = Testbed(f"unix://{STATE_DIR / 'docker.sock'}", str(data_root), 0)
    try:
        _network_up()
        bed.dockerd_pid = _start_engine(data_root)
        STATE_FILE.write_text(json.dumps(asdict(bed)))
        _wait_for_engine(bed.docker_host, bed.dockerd_pid)
        if images:
            seconds = copy_images(list(images), bed.docker_host)
            log(f"copied {', '.join(images)} into the test bed in {seconds:.1f} s")
    except BaseException:
        down(log=lambda m: None)
        raise
    log(f"test bed up: server side {ROOT_ADDRESS} (engine 1), loadgen side {PEER_ADDRESS} in netns {NETNS} "
        f"(DOCKER_HOST={bed.docker_host})")
    return bed


def current() -> Testbed | None:
    """The running bed, if `up` left one."""
    with contextlib.suppress(OSError, ValueError, TypeError):
        return Testbed(**json.loads(STATE_FILE.read_text()))
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):  # a zombie of ours is gone in all but name
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    return False


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _stop_process(pid: int) -> None:
    """SIGTERM (dockerd stops its containers and containerd), then SIGKILL after STOP_TIMEOUT_S."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while _alive(pid) and time.monotonic() < deadline:
        _reap(pid)
        time.sleep(0.2)
    if _alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)
    _reap(pid)


def _bed_processes() -> list[int]:
    """Processes in the bed's network namespace (dockerd, its containerd, shims, containers), or whose command
    line names the bed's state folder (found even once the namespace's name is gone)."""
    try:
        bed_ns = os.stat(f"/run/netns/{NETNS}").st_ino
    except OSError:
        bed_ns = None
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            in_bed = bed_ns is not None and os.stat(entry / "ns" / "net").st_ino == bed_ns
            if (in_bed or str(STATE_DIR).encode() in (entry / "cmdline").read_bytes()) and _alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def _bed_mounts(data_root: str | None) -> list[str]:
    roots = [str(STATE_DIR)] + ([data_root] if data_root else [])
    mounts = []
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/mounts").read_text().splitlines():
            target = line.split()[1]
            if any(target == root or target.startswith(root + "/") for root in roots) or target == f"/run/netns/{NETNS}":
                mounts.append(target)
    return mounts


def _bed_cgroups() -> list[Path]:
    return [path for path in CGROUP_ROOT.glob(f"*/{CGROUP_PARENT}") if path.is_dir()]


def _remove_cgroup(path: Path) -> None:
    for child in sorted((p for p in path.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):
            child.rmdir()
    with contextlib.suppress(OSError):
        path.rmdir()


def down(log=print) -> None:
    """Stop engine 2 and remove everything the bed made; safe to call when nothing is up."""
    bed = current()
    if bed is not None:
        _stop_process(bed.dockerd_pid)
    for pid in _bed_processes():  # a containerd or shim that outlived dockerd
        _stop_process(pid)
    for target in sorted(_bed_mounts(bed.data_root if bed else None), key=len, reverse=True):
        _run("umount", "-l", target, check=False)
    _run("ip", "netns", "delete", NETNS, check=False)  # takes the peer end, and so the pair, with it
    _run("ip", "link", "delete", VETH_ROOT, check=False)
    for path in _bed_cgroups():
        _remove_cgroup(path)
    if bed is not None:
        shutil.rmtree(bed.data_root, ignore_errors=True)
    shutil.rmtree(STATE_DIR, ignore_errors=True)
    if bed is not None:
        log("test bed down")


def leftovers(data_root: str | None = None) -> list[str]:
    """What a bed left behind: namespace, veth, processes, mounts, folders, cgroups (empty when clean)."""
    found = []
    if NETNS in _run("ip", "netns", "list", check=False).stdout.split():
        found.append(f"network namespace {NETNS}")
    if _run("ip", "link", "show", VETH_ROOT, check=False).returncode == 0:
        found.append(f"veth {VETH_ROOT}")
    found += [f"process {pid}" for pid in _bed_processes()]
    found += [f"mount {target}" for target in _bed_mounts(data_root)]
    found += [f"folder {path}" for path in (STATE_DIR, Path(data_root) if data_root else None) if path and path.exists()]
    found += [f"cgroup {path}" for path in _bed_cgroups()]
    return found


def kill_engine() -> int:
    """SIGKILL every process of engine 2's side (dockerd, containerd, shims, containers): the loadgen's host
    lost at once, as a power cut would lose it. Returns how many processes were killed; `down` then clears up."""
    victims = _bed_processes()
    for pid in victims:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for pid in victims:
        _reap(pid)
    return len(victims)
