"""Sample a container's memory in use, CPU time and tasks a few times a second.

Memory in use is `usage - inactive_file`, the figure `docker stats` shows
(page cache that can be dropped is not the runtime's cost). Process RSS is
the other figure, the one `ps` and S1 read: VmRSS summed over the cgroup's
processes, with its shared-memory part (RssShmem) beside it. The two differ
by design: RSS counts a page once per mapping (a heap mapped several times,
as ZGC maps its heap, counts several times) and counts shared libraries'
pages in every process; the cgroup counts each page it was charged once,
and kernel memory on top. CPU is the
cgroup's cumulative CPU time in seconds. Tasks is the pids cgroup's count,
which counts threads, not processes.

Two sources, one shape:

- `CgroupSource` reads the cgroup files of the container's init process
  directly (v1 or v2). It is cheap enough for 4 Hz and is used whenever the
  engine is on this host.
- `DockerStatsSource` asks the engine's stats API. It works for an engine on
  another machine (DOCKER_HOST) but the engine answers at most about once a
  second.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from loadlab.harness.container import host_pid

CGROUP_ROOT = Path("/sys/fs/cgroup")
SAMPLE_INTERVAL_S = 0.25


@dataclass(frozen=True)
class ResourceSample:
    """One reading. `t_s` is seconds since the sampler started (monotonic)."""

    t_s: float
    memory_in_use_bytes: int | None
    cpu_seconds: float | None
    tasks: int | None
    # user and system mode: cgroup v1 cpuacct.stat counts them in clock ticks (USER_HZ, 10 ms here), so they
    # move in coarser steps than cpu_seconds (cpuacct.usage, ns); v2 cpu.stat gives microseconds.
    cpu_user_seconds: float | None = None
    cpu_system_seconds: float | None = None
    # VmRSS and its RssShmem part summed over the cgroup's processes (/proc/PID/status), bytes
    process_rss_bytes: int | None = None
    process_rss_shmem_bytes: int | None = None


def parse_flat_keyed(text: str) -> dict[str, int]:
    """Parse a cgroup 'key value' file (memory.stat, cpu.stat)."""
    values: dict[str, int] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            values[parts[0]] = int(parts[1])
    return values


def memory_in_use_from_docker_stats(stats: dict) -> int | None:
    """`usage - inactive_file` from one Docker stats API document (v1 or v2)."""
    memory = stats.get("memory_stats") or {}
    usage = memory.get("usage")
    if usage is None:
        return None
    details = memory.get("stats") or {}
    # cgroup v1 reports the hierarchy total as total_inactive_file; v2 has only inactive_file.
    inactive = details.get("total_inactive_file", details.get("inactive_file", 0))
    return int(usage) - int(inactive) if inactive < usage else int(usage)


def cpu_seconds_from_docker_stats(stats: dict) -> float | None:
    usage = ((stats.get("cpu_stats") or {}).get("cpu_usage") or {}).get("total_usage")
    return None if usage is None else usage / 1e9  # nanoseconds on v1 and v2


def cpu_modes_from_docker_stats(stats: dict) -> tuple[float | None, float | None]:
    """(user, system) CPU seconds from one Docker stats document (nanoseconds on v1 and v2)."""
    usage = (stats.get("cpu_stats") or {}).get("cpu_usage") or {}
    user, system = usage.get("usage_in_usermode"), usage.get("usage_in_kernelmode")
    return (None if user is None else user / 1e9, None if system is None else system / 1e9)


def tasks_from_docker_stats(stats: dict) -> int | None:
    return (stats.get("pids_stats") or {}).get("current")


def parse_proc_status_rss(text: str) -> tuple[int, int] | None:
    """(VmRSS, RssShmem) in bytes from one /proc/PID/status; None for a process without memory (a zombie)."""
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssShmem"):
            number, _, unit = value.strip().partition(" ")
            fields[key] = int(number) * (1024 if unit == "kB" else 1)
    if "VmRSS" not in fields:
        return None
    return fields["VmRSS"], fields.get("RssShmem", 0)


def process_rss_bytes(pids) -> tuple[int | None, int | None]:
    """(VmRSS, RssShmem) summed over `pids`, bytes; (None, None) when no process could be read."""
    rss = shmem = 0
    read = 0
    for pid in pids:
        try:
            parsed = parse_proc_status_rss(Path(f"/proc/{pid}/status").read_text())
        except OSError:  # the process ended between listing and reading
            continue
        if parsed is not None:
            rss, shmem, read = rss + parsed[0], shmem + parsed[1], read + 1
    return (rss, shmem) if read else (None, None)


def parse_proc_cgroup(text: str) -> dict[str, str]:
    """Map controller -> cgroup path from /proc/<pid>/cgroup ('' for the v2 unified line)."""
    paths: dict[str, str] = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controllers == "":
            paths[""] = path
        for controller in controllers.split(","):
            if controller:
                paths[controller] = path
    return paths


class CgroupSource:
    """Read a process's cgroup files under `root` (v1 split hierarchy or v2 unified)."""

    def __init__(self, proc_cgroup_text: str, root: Path = CGROUP_ROOT):
        self.paths = parse_proc_cgroup(proc_cgroup_text)
        self.root = root
        memory_v1 = root / "memory" / self.paths.get("memory", "").lstrip("/")
        if "memory" in self.paths and (memory_v1 / "memory.usage_in_bytes").exists():
            self.version = 1
            self.memory_dir = memory_v1
            self.cpu_dir = root / "cpuacct" / self.paths.get("cpuacct", "").lstrip("/")
            self.pids_dir = root / "pids" / self.paths.get("pids", "").lstrip("/")
        else:
            unified = root / self.paths.get("", "").lstrip("/")
            if not (unified / "memory.current").exists():
                raise FileNotFoundError(f"no cgroup memory files for {self.paths} under {root}")
            self.version = 2
            self.memory_dir = self.cpu_dir = self.pids_dir = unified

    @staticmethod
    def _read_int(path: Path) -> int | None:
        try:
            text = path.read_text().strip()
        except OSError:  # the container has gone: its cgroup went with it
            return None
        return int(text) if text.isdigit() else None

    def memory_in_use_bytes(self) -> int | None:
        name = "memory.usage_in_bytes" if self.version == 1 else "memory.current"
        usage = self._read_int(self.memory_dir / name)
        if usage is None:
            return None
        try:
            stat = parse_flat_keyed((self.memory_dir / "memory.stat").read_text())
        except OSError:
            return None
        inactive = stat.get("total_inactive_file" if self.version == 1 else "inactive_file", 0)
        return max(0, usage - inactive)

    def cpu_seconds(self) -> float | None:
        if self.version == 1:
            usage_ns = self._read_int(self.cpu_dir / "cpuacct.usage")
            return None if usage_ns is None else usage_ns / 1e9
        try:
            usage_us = parse_flat_keyed((self.cpu_dir / "cpu.stat").read_text()).get("usage_usec")
        except OSError:
            return None
        return None if usage_us is None else usage_us / 1e6

    def cpu_mode_seconds(self) -> tuple[float | None, float | None]:
        """(user, system) CPU seconds of the cgroup."""
        name = "cpuacct.stat" if self.version == 1 else "cpu.stat"
        try:
            stat = parse_flat_keyed((self.cpu_dir / name).read_text())
        except OSError:
            return (None, None)
        if self.version == 1:
            ticks_per_s = os.sysconf("SC_CLK_TCK")
            user, system = stat.get("user"), stat.get("system")
            return (None if user is None else user / ticks_per_s, None if system is None else system / ticks_per_s)
        user, system = stat.get("user_usec"), stat.get("system_usec")
        return (None if user is None else user / 1e6, None if system is None else system / 1e6)

    def tasks(self) -> int | None:
        return self._read_int(self.pids_dir / "pids.current")

    def pids(self) -> list[int]:
        """The cgroup's processes (thread group leaders), from the memory controller's cgroup.procs."""
        try:
            return [int(line) for line in (self.memory_dir / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def cpu_throttling(self) -> CpuThrottling | None:
        """The CFS quota's counters so far: periods elapsed, periods throttled, seconds throttled."""
        directory = self.root / "cpu" / self.paths.get("cpu", "").lstrip("/") if self.version == 1 else self.cpu_dir
        try:
            return cpu_throttling_from_stat((directory / "cpu.stat").read_text())
        except OSError:
            return None

    def read(self, t_s: float) -> ResourceSample:
        user, system = self.cpu_mode_seconds()
        rss, shmem = process_rss_bytes(self.pids())
        return ResourceSample(t_s, self.memory_in_use_bytes(), self.cpu_seconds(), self.tasks(), user, system,
                              rss, shmem)


@dataclass(frozen=True)
class CpuThrottling:
    """A cgroup's CFS quota counters (cumulative): periods, periods in which the quota ran out, seconds throttled."""

    periods: int
    throttled_periods: int
    throttled_s: float


def cpu_throttling_from_stat(text: str) -> CpuThrottling | None:
    """A cgroup's `cpu.stat`: v1 counts throttled time in ns (`throttled_time`), v2 in µs (`throttled_usec`)."""
    stat = parse_flat_keyed(text)
    throttled_s = (stat["throttled_time"] / 1e9 if "throttled_time" in stat
                   else stat["throttled_usec"] / 1e6 if "throttled_usec" in stat else None)
    if "nr_periods" not in stat or throttled_s is None:
        return None
    return CpuThrottling(int(stat["nr_periods"]), int(stat.get("nr_throttled", 0)), float(throttled_s))


def throttling_columns(before: CpuThrottling | None, after: CpuThrottling | None) -> dict:
    """How much the server's CPU quota held it back during the window; None where no quota counters were read.

    `server_cpu_throttled_period_share`: of the CFS periods in the window,
    the share in which the server used up its quota and waited for the next.
    """
    if before is None or after is None or after.periods < before.periods:
        return {"server_cpu_periods": None, "server_cpu_throttled_period_share": None, "server_cpu_throttled_s": None}
    periods = after.periods - before.periods
    throttled = after.throttled_periods - before.throttled_periods
    return {"server_cpu_periods": periods,
            "server_cpu_throttled_period_share": throttled / periods if periods else None,
            "server_cpu_throttled_s": after.throttled_s - before.throttled_s}


class DockerStatsSource:
    """The engine's stats API, for engines on another host (about 1 Hz at best)."""

    def __init__(self, container):
        self.container = container

    def read(self, t_s: float) -> ResourceSample:
        try:
            stats = self.container.stats(stream=False, one_shot=True)
        except Exception:
            return ResourceSample(t_s, None, None, None)
        return ResourceSample(
            t_s, memory_in_use_from_docker_stats(stats), cpu_seconds_from_docker_stats(stats), tasks_from_docker_stats(stats),
            *cpu_modes_from_docker_stats(stats),
        )

    def cpu_throttling(self) -> CpuThrottling | None:
        try:
            data = (self.container.stats(stream=False, one_shot=True).get("cpu_stats") or {}).get("throttling_data") or {}
        except Exception:
            return None
        if "periods" not in data:
            return None
        return CpuThrottling(int(data["periods"]), int(data.get("throttled_periods", 0)),
                             float(data.get("throttled_time", 0)) / 1e9)


def source_for(container) -> CgroupSource | DockerStatsSource:
    """The cheapest source that works for this container."""
    container.reload()
    pid = host_pid(container)
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text() if pid else ""
    except OSError:
        text = ""
    # The PID is the engine's: on an engine elsewhere it names some unrelated local
    # process, so the local cgroup files count only if they are this container's.
    if container.id and container.id in text:
        try:
            return CgroupSource(text)
        except (OSError, FileNotFoundError):
            pass
    return DockerStatsSource(container)


class Sampler:
    """Sample several named sources on one background thread at a fixed interval.

    Use as a context manager; `samples[name]` holds the readings. Readings
    are taken on a fixed schedule (no drift), and the thread sleeps between
    them, so its own CPU cost is a few file reads per tick.
    """

    def __init__(self, sources: dict[str, CgroupSource | DockerStatsSource], interval_s: float = SAMPLE_INTERVAL_S):
        self.sources = sources
        self.interval_s = interval_s
        self.samples: dict[str, list[ResourceSample]] = {name: [] for name in sources}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="loadlab-sampler", daemon=True)
        self.started_monotonic: float | None = None

    def _tick(self) -> None:
        t_s = time.monotonic() - self.started_monotonic
        for name, source in self.sources.items():
            self.samples[name].append(source.read(t_s))

    def _run(self) -> None:
        next_tick = self.started_monotonic
        while not self._stop.is_set():
            self._tick()
            next_tick += self.interval_s
            self._stop.wait(max(0.0, next_tick - time.monotonic()))

    def start(self) -> Sampler:
        self.started_monotonic = time.monotonic()
        self._thread.start()
        return self

    def stop(self) -> None:
        if self.started_monotonic is None:
            return
        self._stop.set()
        self._thread.join(timeout=5)
        self._tick()  # a final reading so CPU deltas cover the whole window

    def __enter__(self) -> Sampler:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
