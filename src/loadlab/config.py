"""What a trial is, as pure data: `TrialConfig` and the parsers of its fields.

Nothing here talks to Docker, so an experiment file can be read and checked
(and a recorded run re-analysed) on a machine with no engine. The harness
(`loadlab.harness`) turns a `TrialConfig` into a running trial.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import random
import re
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from loadlab import contract
from loadlab.errors import ParameterError
from loadlab.servers import get_server

# A run's scale: its size (smoke, quick, full; `loadlab.plans` says what each measures). Here, below both plans
# (which sizes experiments by it) and rundir (which reads it back from a run's id), so that neither reaches up.
SCALE_NAMES = ("smoke", "quick", "full")
# A file the runner's per-trial progress lines go to in batch runs (`loadlab notebooks` sets it, and echoes the
# file to the terminal), so that they stay out of the executed notebook and its exported page.
PROGRESS_LOG_ENV = "LOADLAB_PROGRESS_LOG"
# A loadgen core at or above this utilization measured itself, not the server.
LOADGEN_SATURATION_UTILIZATION = 0.95
LOAD_MODES = ("closed", "open")
CONNECTION_MODES = ("keep-alive", "per-request")
# The open loop's generator: the project's own (loadlab.loadgen.openloop), or vegeta, kept to compare with it
# and to re-read the runs it measured.
OPEN_LOOP_GENERATORS = ("openloop", "vegeta")
# Where the server's memory, CPU, tasks and connections are read (harness.sampler, harness.sidecar): `auto` reads
# the cgroup files from this process when the server's engine is on this host, else from a sidecar container
# beside the server; `sidecar` always from the sidecar; `stats-api` from the engine's stats API (about 1 Hz).
SERVER_SAMPLING = ("auto", "sidecar", "stats-api")
# The harness's own threads during a measured window (harness.priority).
HARNESS_PRIORITIES = ("normal", "idle")


PROFILERS = ("pprof", "go-metrics", "gctrace", "jfr", "gclog", "perf", "py-spy", "uprobes", "jfr-locks")

def check_profilers(requested, supported: tuple[str, ...], server: str) -> tuple[str, ...]:
    """Profilers must be known; ones the server's runtime lacks are kept and skipped with a reason."""
    requested = tuple(requested or ())
    unknown = [p for p in requested if p not in PROFILERS]
    if unknown:
        raise ParameterError("profilers", unknown, PROFILERS)
    return requested


def parse_duration_s(value, parameter: str) -> float:
    """'10s', '500ms', '2m', or a number of seconds -> seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m)?\s*", str(value))
        if not match:
            raise ParameterError(parameter, value, "a duration such as '10s', '500ms' or '2m'")
        seconds = float(match.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0, None: 1.0}[match.group(2)]
    return seconds


def parse_cpuset(text: str, parameter: str) -> set[int]:
    """'0-2,4' -> {0, 1, 2, 4}; raises ParameterError naming `parameter`."""
    cpus: set[int] = set()
    try:
        for part in str(text).split(","):
            if "-" in part:
                low, high = part.split("-", 1)
                if int(low) > int(high):
                    raise ValueError
                cpus.update(range(int(low), int(high) + 1))
            else:
                cpus.add(int(part))
    except ValueError:
        raise ParameterError(parameter, text, "a cpuset such as '1' or '0-2,4'") from None
    if not cpus or min(cpus) < 0:
        raise ParameterError(parameter, text, "a cpuset such as '1' or '0-2,4'")
    return cpus


def host_cpus() -> set[int]:
    """CPUs this process may run on (the engine's, when it is local)."""
    return set(os.sched_getaffinity(0))


# The kernel grants a CFS quota of at least 1 ms a period, in periods from 1 ms to 1 s.
CFS_MIN_QUOTA_MS = 1.0
CFS_PERIOD_RANGE_MS = (1.0, 1000.0)


def check_cpu_period(cpu_quota: float | None, cpu_period_ms: float | None) -> None:
    """A CFS period (ms) goes with a quota and lets the kernel grant it: quota x period at least 1 ms."""
    if cpu_period_ms is None:
        return
    low, high = CFS_PERIOD_RANGE_MS
    if not isinstance(cpu_period_ms, int | float) or not low <= cpu_period_ms <= high:
        raise ParameterError("cpu_period_ms", cpu_period_ms, f"milliseconds from {low:g} to {high:g}, or None")
    if cpu_quota is None:
        raise ParameterError("cpu_period_ms", cpu_period_ms, "None unless a cpu_quota is set (a period without a quota "
                             "limits nothing)")
    if cpu_quota * cpu_period_ms < CFS_MIN_QUOTA_MS:
        raise ParameterError("cpu_period_ms", cpu_period_ms,
                             f"at least {CFS_MIN_QUOTA_MS / cpu_quota:g} ms for a quota of {cpu_quota:g} core: the "
                             f"kernel grants at least {CFS_MIN_QUOTA_MS:g} ms a period")


def check_cpusets(server_cpus: str, loadgen_cpus: str | None = None, check_host: bool = True) -> None:
    """CPU sets exist on this host and the server's and the loadgen's do not overlap."""
    server = parse_cpuset(server_cpus, "server_cpus")
    available = host_cpus()
    if check_host and not server <= available:
        raise ParameterError("server_cpus", server_cpus, f"CPUs present on this host: {sorted(available)}")
    if loadgen_cpus is not None:
        loadgen = parse_cpuset(loadgen_cpus, "loadgen_cpus")
        if check_host and not loadgen <= available:
            raise ParameterError("loadgen_cpus", loadgen_cpus, f"CPUs present on this host: {sorted(available)}")
        if server & loadgen:
            raise ParameterError(
                "loadgen_cpus", loadgen_cpus, f"CPUs disjoint from server_cpus={server_cpus!r} (they share {sorted(server & loadgen)})"
            )


Condition = TypeVar("Condition")


def interleave(conditions: Iterable[Condition], blocks: int, seed: int) -> list[tuple[int, Condition]]:
    """(block, condition) pairs in run order: every condition once per block, each block shuffled anew.

    Blocks count from 0. One generator seeded with `seed` shuffles every
    block, so the order is reproducible, and drift over a run (a warming
    machine, a neighbour's work) lands on all conditions alike instead of on
    whichever would have run last. Experiments (`Experiment.schedule`) and the
    microbenchmarks order their runs with this.
    """
    generator = random.Random(seed)
    conditions = list(conditions)
    order: list[tuple[int, Condition]] = []
    for block in range(blocks):
        shuffled = conditions[:]
        generator.shuffle(shuffled)
        order += [(block, condition) for condition in shuffled]
    return order


def new_run_id(prefix: str = "run") -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{prefix}-{stamp}-{uuid.uuid4().hex[:6]}"


@dataclass
class TrialConfig:
    """Everything that defines one trial. Durations in seconds, memory in bytes."""

    server: str
    route: str = "/plaintext"
    variant: str | None = None
    settings: dict[str, str] = field(default_factory=dict)
    load_mode: str = "closed"
    connections: int = 64
    rate_rps: float | None = None
    duration_s: float = 10.0
    warmup_s: float = 5.0
    # Closed loop: warm up in 1 s slices for at least warmup_s and until throughput is
    # steady, but no longer than warmup_max_s (None: exactly warmup_s).
    warmup_max_s: float | None = None
    loadgen_threads: int = 1
    request_timeout_s: int = 2
    # Open loop: the most requests in flight, one per connection (openloop's --connections, vegeta's -max-workers).
    max_in_flight: int = 10_000
    open_loop_generator: str = "openloop"
    pipeline_depth: int = 1
    # "keep-alive": each loadgen connection carries request after request; "per-request": every request
    # asks `Connection: close`, so the server closes after answering and the loadgen opens a new connection
    # (S1's setup speaks of "short-lived HTTP requests"; its wrk command kept connections alive).
    connection_mode: str = "keep-alive"
    server_cpus: str = "1"
    loadgen_cpus: str = "0"
    memory_limit_bytes: int = 2 * 1024**3
    cpu_quota: float | None = None
    cpu_period_ms: float | None = None  # CFS period the quota is granted in (None: the kernel's 100 ms)
    verify: bool = True
    health_timeout_s: float = 60.0
    # Profilers to run around the measured window (see capture.py); ones the
    # server does not offer are recorded as skipped with the reason.
    profilers: tuple[str, ...] = ()
    # The address the server binds and the loadgen and harness target. Loopback by
    # default; another address only when server and loadgen are on different engines.
    target_host: str = "127.0.0.1"
    # CPU sets are checked against this host's CPUs unless an engine elsewhere runs them.
    check_host_cpus: bool = True
    server_sampling: str = "auto"  # one of SERVER_SAMPLING
    # The harness's own threads during the window (harness.priority): "normal", or "idle" (SCHED_IDLE: they run
    # only when neither the loadgen nor the server wants a core). Every trial before issue 28's check ran "normal".
    harness_priority: str = "normal"

    def validate(self) -> TrialConfig:
        """Check every field before anything starts; raises ParameterError naming the field."""
        spec = get_server(self.server)
        self.variant = spec.check_variant(self.variant)
        self.settings = spec.check_settings(self.settings)
        route, _ = contract.validate_route(self.route)
        spec.check_route(route)
        if route == "/health":
            raise ParameterError("route", self.route, "a load route: " + ", ".join(contract.LOAD_ROUTES))
        if self.load_mode not in LOAD_MODES:
            raise ParameterError("load_mode", self.load_mode, LOAD_MODES)
        self.duration_s = parse_duration_s(self.duration_s, "duration")
        self.warmup_s = parse_duration_s(self.warmup_s, "warmup")
        # wrk takes whole seconds; the open loop is held to the same grid for comparability.
        if self.duration_s < 1 or self.duration_s != int(self.duration_s):
            raise ParameterError("duration", self.duration_s, "a whole number of seconds, at least 1")
        if self.warmup_s < 0 or self.warmup_s != int(self.warmup_s):
            raise ParameterError("warmup", self.warmup_s, "a whole number of seconds, 0 or more")
        if self.warmup_max_s is not None:
            self.warmup_max_s = parse_duration_s(self.warmup_max_s, "warmup_max")
            if self.warmup_max_s < self.warmup_s or self.warmup_max_s != int(self.warmup_max_s):
                raise ParameterError("warmup_max", self.warmup_max_s, f"whole seconds, at least warmup ({self.warmup_s:g})")
        if self.load_mode == "closed":
            if not isinstance(self.connections, int) or self.connections < 1:
                raise ParameterError("connections", self.connections, "an integer of at least 1")
            if self.loadgen_threads < 1 or self.loadgen_threads > self.connections:
                raise ParameterError("loadgen_threads", self.loadgen_threads, f"from 1 to connections ({self.connections})")
        else:
            if self.rate_rps is None or not self.rate_rps > 0:
                raise ParameterError("rate_rps", self.rate_rps, "a positive request rate for load_mode='open'")
            if self.pipeline_depth != 1:
                raise ParameterError("pipeline_depth", self.pipeline_depth, "1 in load_mode='open' (the open loop does not pipeline)")
        if not 1 <= self.pipeline_depth <= 256:
            raise ParameterError("pipeline_depth", self.pipeline_depth, "an integer from 1 to 256")
        if self.open_loop_generator not in OPEN_LOOP_GENERATORS:
            raise ParameterError("open_loop_generator", self.open_loop_generator, OPEN_LOOP_GENERATORS)
        if self.connection_mode not in CONNECTION_MODES:
            raise ParameterError("connection_mode", self.connection_mode, CONNECTION_MODES)
        if self.connection_mode == "per-request" and self.pipeline_depth != 1:
            raise ParameterError("pipeline_depth", self.pipeline_depth,
                                 "1 with connection_mode='per-request' (a connection that closes after one answer "
                                 "cannot carry a pipeline)")
        if not 0 < self.health_timeout_s <= 600:
            raise ParameterError("health_timeout_s", self.health_timeout_s, "seconds, more than 0 and at most 600")
        if not isinstance(self.max_in_flight, int) or not 1 <= self.max_in_flight <= 100_000:
            raise ParameterError("max_in_flight", self.max_in_flight, "an integer from 1 to 100000 (requests in flight)")
        if not 1 <= self.request_timeout_s <= 60:
            raise ParameterError("request_timeout_s", self.request_timeout_s, "an integer from 1 to 60")
        check_cpusets(self.server_cpus, self.loadgen_cpus, check_host=self.check_host_cpus)
        check_cpu_period(self.cpu_quota, self.cpu_period_ms)
        self.profilers = check_profilers(self.profilers, spec.profilers, self.server)
        if self.server_sampling not in SERVER_SAMPLING:
            raise ParameterError("server_sampling", self.server_sampling, SERVER_SAMPLING)
        if self.harness_priority not in HARNESS_PRIORITIES:
            raise ParameterError("harness_priority", self.harness_priority, HARNESS_PRIORITIES)
        try:
            ipaddress.ip_address(self.target_host)
        except ValueError:
            raise ParameterError("target_host", self.target_host, "an IP address such as 127.0.0.1") from None
        return self

    @property
    def connection_per_request(self) -> bool:
        return self.connection_mode == "per-request"

    def label(self) -> str:
        knobs = ",".join(f"{k}={v}" for k, v in sorted(self.settings.items()))
        load = f"c{self.connections}" if self.load_mode == "closed" else f"r{self.rate_rps:g}"
        if self.connection_per_request:
            load += " new-connection-per-request"
        return f"{self.server}:{self.variant}" + (f"[{knobs}]" if knobs else "") + f" {self.route} {load}"
