"""Sample a server beside it, on its own host: a small container that reads the server's cgroup files and /proc.

When the server's engine is on another machine, this process cannot read
the server's cgroup (sampler.CgroupSource) and the engine's stats API
answers about once a second (sampler.DockerStatsSource). The sidecar runs on
the server's engine instead, from the base image every server is built on:

- in the server's PID namespace (`pid=container:<server>`), so the server's
  processes and their /proc/PID/status are its own;
- on the engine's host network, which is the server's (servers run with host
  networking), so /proc/net/tcp counts the server's connections;
- with the host's cgroup tree mounted read-only at /host/cgroup, where it
  finds the server's cgroup from /proc/1/cgroup (the server's init).

It runs as nobody with every capability dropped: every file it reads is
world-readable. Every SAMPLE_INTERVAL_S it prints one record of raw lines
(the cgroup files' figures, VmRSS/RssShmem of each process; a last one when
stopped, so CPU deltas cover the whole window, as the local sampler's final
reading does); once a second
the connections in ESTABLISHED on the server's port, and those still in the
accept queue (socket inode 0), counted as tcp_diag counts them but from
/proc/net/tcp text: the base image has no program that speaks netlink
SOCK_DIAG, and a shell cannot. This side parses the records with the local
sampler's own parsers, so the timeseries has the local sampler's columns.
"""

from __future__ import annotations

import contextlib
import statistics
import time

from loadlab.harness import container as containers
from loadlab.harness.sampler import SAMPLE_INTERVAL_S, ResourceSample, parse_flat_keyed

SIDECAR_ROLE = "sidecar"
CGROUP_MOUNT = "/host/cgroup"
STOP_TIMEOUT_S = 10

# POSIX sh (dash in the base image). $1: the server's port, $2: the interval in seconds, $3: ticks a second.
_SCRIPT = r"""
port=$1; interval=$2; per_second=$3; root=/host/cgroup
cg() { awk -F: -v c="$1" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' /proc/1/cgroup; }
if [ -f "$root/memory$(cg memory)/memory.usage_in_bytes" ]; then
  echo "V 1"; mem="$root/memory$(cg memory)"; cpu="$root/cpuacct$(cg cpuacct)"; pids="$root/pids$(cg pids)"
  files="$mem/memory.usage_in_bytes $mem/memory.stat $cpu/cpuacct.usage $cpu/cpuacct.stat $pids/pids.current"
else
  unified=$(awk -F: '$2 == "" { print $3 }' /proc/1/cgroup); echo "V 2"; mem="$root$unified"
  files="$mem/memory.current $mem/memory.stat $mem/cpu.stat $mem/pids.current"
fi
porthex=$(printf '%04X' "$port")
tick() {
  read -r up _ < /proc/uptime; echo "T $up"
  grep -H -E '^([0-9]+$|(total_)?inactive_file |user |system |usage_usec |user_usec |system_usec )' $files
  grep -H -E '^(VmRSS|RssShmem):' $(sed 's,.*,/proc/&/status,' "$mem/cgroup.procs") 2>/dev/null
}
connections() {
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p="$porthex" '
    $4 == "01" { split($2, local, ":"); if (local[2] == p) { e++; if ($10 == "0") q++ } }
    END { printf "C %d %d\n", e, q }'
}
trap 'tick; exit 0' TERM
n=0
while :; do
  tick; [ $((n % per_second)) -eq 0 ] && connections; n=$((n + 1))
  sleep "$interval" & wait $!
done
"""


def start(server, port: int, run_id: str, name: str, image: str, interval_s: float = SAMPLE_INTERVAL_S):
    """The sidecar container beside `server` (a docker-py container on its engine), sampling already."""
    per_second = max(1, round(1 / interval_s))
    return containers.run_container(server.client, dict(
        image=image, name=name, detach=True, entrypoint=["sh", "-c", _SCRIPT, "sidecar"],
        command=[str(port), f"{interval_s:g}", str(per_second)],
        labels={containers.RUN_LABEL: run_id, containers.ROLE_LABEL: SIDECAR_ROLE},
        pid_mode=f"container:{server.id}", network_mode="host", user="65534:65534",
        volumes={"/sys/fs/cgroup": {"bind": CGROUP_MOUNT, "mode": "ro"}},
        read_only=True, cap_drop=["ALL"], security_opt=["no-new-privileges"], mem_limit=64 * 1024**2,
    ), "sidecar-start-failed")


def stop(sidecar) -> str:
    """Stop the sidecar (it takes a last reading on SIGTERM), remove it; returns what it printed."""
    with contextlib.suppress(Exception):
        sidecar.kill(signal="SIGTERM")
        sidecar.wait(timeout=STOP_TIMEOUT_S)
    output = ""
    with contextlib.suppress(Exception):
        output = sidecar.logs(stdout=True, stderr=False).decode(errors="replace")
    containers.remove(sidecar)
    return output


def _sample(t_s: float, version: int, files: dict[str, str], rss: list[tuple[int, int]]) -> ResourceSample:
    """One record's figures as the local sampler's reading (sampler.CgroupSource's arithmetic and units)."""
    def number(name: str) -> int | None:
        text = files.get(name, "").strip()
        return int(text) if text.isdigit() else None

    memory_stat = parse_flat_keyed(files.get("memory.stat", ""))
    usage = number("memory.usage_in_bytes" if version == 1 else "memory.current")
    inactive = memory_stat.get("total_inactive_file" if version == 1 else "inactive_file", 0)
    memory = None if usage is None else max(0, usage - inactive)
    if version == 1:
        import os

        ticks = os.sysconf("SC_CLK_TCK")  # USER_HZ: 100 on every Linux the project knows
        stat, usage_ns = parse_flat_keyed(files.get("cpuacct.stat", "")), number("cpuacct.usage")
        cpu = None if usage_ns is None else usage_ns / 1e9
        user = stat["user"] / ticks if "user" in stat else None
        system = stat["system"] / ticks if "system" in stat else None
    else:
        stat = parse_flat_keyed(files.get("cpu.stat", ""))
        cpu = stat["usage_usec"] / 1e6 if "usage_usec" in stat else None
        user = stat["user_usec"] / 1e6 if "user_usec" in stat else None
        system = stat["system_usec"] / 1e6 if "system_usec" in stat else None
    process_rss = (sum(r for r, _ in rss), sum(s for _, s in rss)) if rss else (None, None)
    return ResourceSample(t_s, memory, cpu, number("pids.current"), user, system, *process_rss)


def parse(output: str, since_uptime_s: float | None = None
          ) -> tuple[list[ResourceSample], list[tuple[int, int]], list[float]]:
    """The sidecar's records as readings, its (established, queued) connection counts, and when each count was
    taken (its record's `t_s`); a record cut off by the container's end is dropped. `t_s` counts seconds from its
    first record, or from `since_uptime_s` (the server host's /proc/uptime) when given."""
    version, samples, counts, count_times = 1, [], [], []
    first_uptime = since_uptime_s
    current: dict | None = None

    def flush() -> None:
        if current is not None and current["files"]:
            rss = [(current["rss"][pid].get("VmRSS", 0), current["rss"][pid].get("RssShmem", 0))
                   for pid in current["rss"] if "VmRSS" in current["rss"][pid]]
            samples.append(_sample(current["t_s"], version, current["files"], rss))

    for line in output.splitlines():
        if line.startswith("V "):
            version = int(line.split()[1])
        elif line.startswith("T "):
            flush()
            uptime = float(line.split()[1])
            first_uptime = uptime if first_uptime is None else first_uptime
            current = {"t_s": uptime - first_uptime, "files": {}, "rss": {}}
        elif line.startswith("C "):
            _, established, queued = line.split()
            counts.append((int(established), int(queued)))
            count_times.append(current["t_s"] if current is not None else 0.0)
        elif current is not None and ":" in line:
            _record_line(current, line)
    flush()
    return samples, counts, count_times


def _record_line(current: dict, line: str) -> None:
    """One `grep -H` line: a cgroup file's line, or a process's VmRSS/RssShmem (kB) from /proc/PID/status."""
    path, _, text = line.partition(":")
    if path.startswith("/proc/"):
        key, _, value = text.partition(":")
        number, _, unit = value.strip().partition(" ")
        if number.isdigit():
            current["rss"].setdefault(path, {})[key] = int(number) * (1024 if unit == "kB" else 1)
        return
    name = path.rsplit("/", 1)[-1]
    current["files"][name] = current["files"].get(name, "") + text + "\n"


def sampling_rate_hz(samples: list[ResourceSample]) -> float | None:
    """Readings a second over the span they cover (the median gap's inverse, so a slow first tick does not count)."""
    gaps = [b.t_s - a.t_s for a, b in zip(samples, samples[1:]) if b.t_s > a.t_s]
    return 1 / statistics.median(gaps) if gaps else None


LOCAL, SIDECAR, STATS_API = "cgroup files (this host)", "sidecar", "stats-api"


class ServerReadings:
    """Where a trial reads its server's resources (config.SERVER_SAMPLING), as one object for the window.

    `source` is what the in-process Sampler reads (None when the sidecar
    reads instead); `start` and `finish` bracket the window; `columns` says
    which path was taken, why (a fallback names its cause) and the rate.
    """

    def __init__(self, sampling: str, server, port: int, run_id: str, name: str, image: str):
        from loadlab.harness import sampler

        self.server, self.port, self.run_id, self.name, self.image = server, port, run_id, name, image
        self.note, self.sidecar, self.counts, self.count_times = None, None, None, None
        self.started_at: float | None = None
        local = sampler.source_for(server) if sampling != "stats-api" else sampler.DockerStatsSource(server)
        self.throttling_source = local  # CFS counters: the cgroup's cpu.stat here, else the stats API
        if sampling == "stats-api":
            self.path, self.source = STATS_API, local
        elif sampling == "auto" and isinstance(local, sampler.CgroupSource):
            self.path, self.source = LOCAL, local
        else:
            self.path, self.source = SIDECAR, None

    def start(self) -> None:
        from loadlab.errors import TrialFailure
        from loadlab.harness import sampler

        if self.path != SIDECAR:
            return
        try:
            self.sidecar = start(self.server, self.port, self.run_id, self.name, self.image)
            # Its first record is taken as it starts: the counts' times go on this clock from here (tens of
            # milliseconds off at most, against tcp_diag.WINDOW_EDGE_S).
            self.started_at = time.monotonic()
        except TrialFailure as failure:
            self.path, self.source = STATS_API, sampler.DockerStatsSource(self.server)
            self.note = f"the sidecar did not start ({failure.detail}); the engine's stats API instead"

    def finish(self, samples: dict) -> None:
        """Stop the sidecar and put its readings under samples['server'] (the Sampler's for the other paths)."""
        if self.sidecar is None:
            return
        readings, self.counts, offsets = parse(stop(self.sidecar))
        self.count_times = [self.started_at + offset for offset in offsets]
        self.sidecar = None
        samples["server"] = readings
        if not readings:
            self.note = "the sidecar printed no reading"

    def columns(self, samples: list[ResourceSample]) -> dict:
        return {"server_sampling": self.path, "server_sampling_note": self.note,
                "server_sampling_rate_hz": sampling_rate_hz(samples)}
