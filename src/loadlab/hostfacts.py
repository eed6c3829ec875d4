"""Facts about this machine and this checkout, read without Docker.

The harness records them in every run's manifest (harness.provenance); the
report pages read them again when they are rendered, to say which commit and
which host produced the page (which may differ from those that measured).
"""

from __future__ import annotations

import datetime as dt
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from loadlab import __version__, paths


def git_state(root: Path = paths.ROOT) -> dict:
    """{"git_commit": full hash or None, "git_dirty": True/False, or None without git}."""

    def git(*args: str) -> str | None:
        try:
            return subprocess.run(
                ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10, check=True
            ).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    # Dirty means the code differs from the commit: what runs write (data/, reports/) does not count,
    # or every run of `make reproduce` would call itself dirty.
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)data", ":(exclude)reports")
    return {"git_commit": git("rev-parse", "HEAD"), "git_dirty": bool(status) if status is not None else None}


def cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def host_description() -> dict:
    return {
        "hostname": socket.gethostname(),
        "kernel": platform.release(),
        "os": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": len(os.sched_getaffinity(0)),
        "python": sys.version.split()[0],
        "loadlab": __version__,
        "recorded_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def machine_text(host: dict) -> str:
    """"AMD EPYC, 2 CPUs, kernel 6.18.44-fc-v782": a host as `host_description` recorded it ("" when it recorded
    none of the three)."""
    parts = [host.get("cpu_model"), f"{host['cpu_count']} CPUs" if host.get("cpu_count") else None,
             f"kernel {host['kernel']}" if host.get("kernel") else None]
    return ", ".join(part for part in parts if part)


# One sitting: every run measured by one `loadlab notebooks` (which sets LOADLAB_SITTING for all its kernels), or,
# for a notebook or command measured alone, by one Python process. Margins and references are only combined
# within a sitting (loadlab.judgements.margins).
SITTING_ENV = "LOADLAB_SITTING"
_PROCESS_SITTING = f"process-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%SZ}-{os.getpid()}"


def boot_id() -> str | None:
    """The kernel's id of this boot: two runs with different ones were not measured in one sitting."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def machine_fingerprint(host: dict | None = None) -> str:
    """A short hash of what makes a machine this machine for a measurement: CPU model and count, kernel, host name."""
    import hashlib

    host = host or host_description()
    key = "|".join(str(host.get(k)) for k in ("cpu_model", "cpu_count", "kernel", "hostname"))
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def sitting() -> dict:
    """{"id", "boot_id", "machine"}: the sitting a run is measured in (recorded in every manifest)."""
    return {"id": os.environ.get(SITTING_ENV) or _PROCESS_SITTING, "boot_id": boot_id(),
            "machine": machine_fingerprint()}


def same_sitting(first: dict | None, second: dict | None) -> bool:
    """Whether two recorded sittings are one: same id, same boot, same machine (a run without one never is)."""
    if not first or not second or not first.get("id"):
        return False
    return all(first.get(key) == second.get(key) for key in ("id", "boot_id", "machine"))


def _read_int(path: str) -> int | None:
    try:
        return int(Path(path).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def connection_limits() -> dict:
    """What caps the number of concurrent loopback connections one loadgen and one server can hold here.

    - open_files_hard: RLIMIT_NOFILE's hard limit of this process, which the
      engine and every container inherit when dockerd is started from it;
      only a privileged parent can raise it (setrlimit refuses otherwise);
    - ephemeral_ports: the client ports per (source address, target address,
      target port), from net.ipv4.ip_local_port_range: one wrk aimed at one
      address cannot hold more connections than this;
    - accept_backlog: net.core.somaxconn, connections the kernel queues before
      the server accepts them;
    - max_connections: the smallest of the first two, less 64 descriptors for
      the processes' own files.
    """
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    ports = None
    try:
        low, high = (int(value) for value in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        ports = high - low + 1
    except (OSError, ValueError):
        pass
    open_files = None if hard == resource.RLIM_INFINITY else int(hard)
    caps = [value for value in (open_files, ports) if value is not None]
    return {"open_files_hard": open_files, "ephemeral_ports": ports,
            "accept_backlog": _read_int("/proc/sys/net/core/somaxconn"),
            "max_connections": (min(caps) - 64) if caps else None}


# /proc/stat's per-CPU columns, in USER_HZ ticks: user nice system idle iowait irq softirq steal guest guest_nice.
# guest time is already inside user (and guest_nice inside nice), so a CPU's time is the first eight.
_PROC_STAT_STEAL = 7
_PROC_STAT_TIME_COLUMNS = 8


def cpu_times(stat_text: str | None = None) -> dict[int, tuple[int, int]]:
    """Per CPU number: (all its time, the part stolen by the hypervisor), in USER_HZ ticks since boot.

    Read from /proc/stat (or `stat_text`, its contents). Steal is the time a
    virtual CPU was runnable but the host ran something else: a neighbour on
    the same physical core. An empty mapping where /proc/stat cannot be read.
    """
    if stat_text is None:
        try:
            stat_text = Path("/proc/stat").read_text()
        except OSError:
            return {}
    times = {}
    for line in stat_text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu":
            continue
        ticks = [int(value) for value in rest.split()[:_PROC_STAT_TIME_COLUMNS]]
        if len(ticks) > _PROC_STAT_STEAL:
            times[int(name[3:])] = (sum(ticks), ticks[_PROC_STAT_STEAL])
    return times


def steal_share(before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]], cpus) -> float | None:
    """The share (0-1) of the CPUs' time stolen between two `cpu_times` readings; None without ticks to compare."""
    elapsed = stolen = 0
    for cpu in cpus:
        if cpu not in before or cpu not in after:
            return None
        elapsed += after[cpu][0] - before[cpu][0]
        stolen += after[cpu][1] - before[cpu][1]
    return stolen / elapsed if elapsed > 0 else None


def steal_columns(before: dict[int, tuple[int, int]], after: dict[int, tuple[int, int]],
                  cpus_by_side: dict[str, set[int]]) -> dict[str, float | None]:
    """{"<side>_cpu_steal_share": steal_share of that side's CPUs} for each side ("server", "loadgen")."""
    return {f"{side}_cpu_steal_share": steal_share(before, after, cpus) for side, cpus in cpus_by_side.items()}


_TCP_TIME_WAIT = "06"  # the `st` column of /proc/net/tcp: include/net/tcp_states.h, TCP_TIME_WAIT


def tcp_time_wait(tables: tuple[str, ...] = ("/proc/net/tcp", "/proc/net/tcp6")) -> tuple[int, int] | None:
    """(sockets, distinct local ports) of this network namespace in TIME-WAIT, or None where the kernel's tables
    cannot be read.

    A client's closed connection holds its local port, one port each; a
    server that closed first holds its own port's connections in TIME-WAIT,
    thousands on one local port, and no client port at all (a connect from a
    port checks that port's own sockets). Ports, not sockets, are what a
    loadgen can run short of.
    """
    sockets, ports, read = 0, set(), False
    for table in tables:
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        read = True
        for line in lines:
            fields = line.split()
            if fields[3:4] == [_TCP_TIME_WAIT]:
                sockets += 1
                ports.add(fields[1].rsplit(":", 1)[-1])
    return (sockets, len(ports)) if read else None


def time_wait_reuse(target_host: str) -> str | None:
    """Why a loadgen here needs no wait for TIME-WAIT ports when it connects to `target_host`, or None.

    Linux lets connect() take over a local port held in TIME-WAIT once that
    socket is a second old, when net.ipv4.tcp_tw_reuse is 1 (every
    destination) or 2 (loopback only, the default) and TCP timestamps are on
    (the takeover is keyed on them). Then a trial that starts beside tens of
    thousands of TIME-WAIT ports is not short of ports: the quick reference's
    per-request trials opened 60,000-85,000 connections through the 28,232
    local ports within one 5 s window, with no connect error.
    """
    reuse, timestamps = _read_int("/proc/sys/net/ipv4/tcp_tw_reuse"), _read_int("/proc/sys/net/ipv4/tcp_timestamps")
    if not timestamps or reuse not in (1, 2):
        return None
    if reuse == 2 and not _is_loopback(target_host):
        return None
    return f"net.ipv4.tcp_tw_reuse={reuse} with TCP timestamps: connect() to {target_host} reuses TIME-WAIT ports"


def _is_loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def wait_for_local_ports(max_wait_s: float, busy_share: float = 0.5, poll_s: float = 2.0, count=None) -> dict:
    """Wait, up to `max_wait_s`, until fewer than `busy_share` of the local port range is held in TIME-WAIT.

    A loadgen that opened tens of thousands of connections leaves their ports
    held for 60 s; a trial started then finds its loadgen short of ports and
    measures that, not its server. Ports are counted, not sockets
    (`tcp_time_wait`): under a connection per request the server closes
    first, and its tens of thousands of TIME-WAIT sockets hold one port.
    Returns what was seen: the TIME-WAIT sockets and ports at the start and at
    the end, and the seconds waited. `count` (default `tcp_time_wait`) returns
    (sockets, distinct local ports) in TIME-WAIT: the harness passes its
    netlink count (harness.tcp_diag.time_wait_counts), the same figures faster.
    """
    count = count or tcp_time_wait
    ports = connection_limits().get("ephemeral_ports")
    started = time.monotonic()
    first = last = count()
    while last is not None and ports and last[1] >= busy_share * ports and time.monotonic() - started < max_wait_s:
        time.sleep(min(poll_s, max(0.0, max_wait_s - (time.monotonic() - started))))
        last = count()
    first, last = first or (None, None), last or (None, None)
    return {"time_wait_sockets_before": first[0], "time_wait_sockets": last[0],
            "time_wait_local_ports_before": first[1], "time_wait_local_ports": last[1],
            "waited_for_local_ports_s": round(time.monotonic() - started, 3)}


# The host speed index's unit of work: SHA-256 over a fixed buffer, in C (hashlib), so the reading is the CPU's
# speed and not the interpreter's. Sizes chosen so one reading of two CPUs takes a few milliseconds.
_SPEED_BUFFER_KIB = 4
_SPEED_ROUNDS = 256  # buffers hashed per repetition: 1 MiB, about 1 ms
_SPEED_REPETITIONS = 7


def host_speed_index(cpus: Iterable[int] | None = None) -> dict:
    """{"ns_per_kib_by_cpu": {cpu: ns}, "ns_per_kib": median over the CPUs, "reading_s": what the reading cost}.

    A fixed native work loop (SHA-256 of a 4 KiB buffer, 256 times) pinned in
    turn to each of `cpus` (default: every CPU this process may use), the
    median of 7 repetitions, in nanoseconds per KiB hashed: lower is faster.
    It indexes the host's speed because the work is fixed and CPU-bound and
    runs in C: what changes it is the clock, the CPU model, and a neighbour
    sharing the physical core (steal), the same things that change how long a
    server's request takes. 02's calibration (harness.calibrate) measures the
    same kind of thing through a server, the /cpu hash loop's rounds per
    10 ms; this one needs no container, costs milliseconds, and so is read at
    every run's start and end. Two readings that differ by more than a few
    percent mean the host changed speed between them.
    """
    import hashlib

    allowed = os.sched_getaffinity(0)
    buffer = bytes(range(256)) * (_SPEED_BUFFER_KIB * 4)
    started = time.perf_counter()
    by_cpu = {}
    try:
        for cpu in sorted(set(cpus) & allowed if cpus is not None else allowed):
            os.sched_setaffinity(0, {cpu})
            hashlib.sha256(buffer).digest()  # first call on this CPU: caches, frequency ramp
            samples = []
            for _ in range(_SPEED_REPETITIONS):
                began = time.perf_counter_ns()
                for _ in range(_SPEED_ROUNDS):
                    hashlib.sha256(buffer).digest()
                samples.append((time.perf_counter_ns() - began) / (_SPEED_ROUNDS * _SPEED_BUFFER_KIB))
            by_cpu[str(cpu)] = round(statistics.median(samples), 2)
    finally:
        os.sched_setaffinity(0, allowed)
    return {"ns_per_kib_by_cpu": by_cpu, "ns_per_kib": round(statistics.median(by_cpu.values()), 2) if by_cpu else None,
            "recorded_utc": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "reading_s": round(time.perf_counter() - started, 4)}
