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
import subprocess
import sys
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
