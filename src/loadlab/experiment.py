"""Experiments: what to measure, as a YAML file or the same as Python objects.

An experiment is a set of *conditions* (each server entry crossed with each
load level) measured in *trials*: `trials_per_condition` fresh containers
each, in a seeded order that is randomized and interleaved in blocks (every
block runs each condition once, in a new random order), so drift over the
run lands on all conditions alike instead of on whichever ran last.

    name: json-api
    seed: 7
    trials_per_condition: 6
    load: {mode: closed, route: /api/users, connections: [64, 256]}
    durations: {warmup_s: 5, warmup_max_s: 30, duration_s: 10}
    placement: {server_cpus: "1", loadgen_cpus: "0", memory_limit_mib: 2048}
    servers:
      - {server: go-nethttp}
      - {server: rust-tokio}

Every field is validated before anything starts, the YAML form and the
Python objects alike: first against the declared schema
(src/loadlab/schemas/experiment.schema.json: every key known, every value of
its type), then against the servers' knobs and the trial's own checks. An
error names the field path (`servers[1].settings.THREAD_MODEL`,
`load.conections`), the value and what is allowed. Setting an attribute that
is not a field (`experiment.profilrs = [...]`) is an error too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from loadlab import schemas
from loadlab.config import TrialConfig, interleave
from loadlab.errors import ParameterError
from loadlab.servers import all_servers, recorder_settings
from loadlab.units import MIB


class _KnownFields:
    """A dataclass whose attributes are its fields: a misspelt one fails instead of being silently ignored."""

    def __setattr__(self, name: str, value) -> None:
        known = self.__dataclass_fields__
        if name not in known:
            raise ParameterError(f"{type(self).__name__}.{name}", value, "one of the known fields: " + ", ".join(sorted(known)))
        super().__setattr__(name, value)


@dataclass
class ServerEntry(_KnownFields):
    """One server (with variant and knobs) under test; `label` names it in tables and figures."""

    server: str
    variant: str | None = None
    settings: dict[str, str] = field(default_factory=dict)
    label: str | None = None
    route: str | None = None  # overrides load.route for this server
    capacity_rps: float | None = None  # open loop with load.capacity_fractions: this server's measured capacity
    # A CPU quota (cores) for this server alone, e.g. for one that outruns the single loadgen core on a whole core.
    cpu_quota: float | None = None
    # This server's own profilers, replacing the experiment's list for it (None: the experiment's).
    profilers: list[str] | None = None
    # Shown beside the judged servers and read by no verdict: measured in Experiment.shown_trials trials a condition.
    shown: bool = False

    def display_label(self) -> str:
        if self.label:
            return self.label
        knobs = ",".join(f"{k}={v}" for k, v in sorted(self.settings.items()))
        return self.server + (f":{self.variant}" if self.variant else "") + (f"[{knobs}]" if knobs else "")


@dataclass
class Load(_KnownFields):
    mode: str = "closed"
    route: str = "/plaintext"
    connections: list[int] = field(default_factory=lambda: [64])
    rate_rps: list[float] = field(default_factory=list)
    # Open loop: offer these fractions of a measured capacity_rps (the level is then the fraction).
    capacity_fractions: list[float] = field(default_factory=list)
    # Whose capacity a fraction is of: "own" (each server at the same share of what it can do) or "slowest"
    # (every server offered the same rate: the fraction of the slowest one's capacity, as a source that drove
    # every server with one command did; it also keeps a fast server's rate within one loadgen core's reach).
    capacity_basis: str = "own"
    pipeline_depth: int = 1
    # "keep-alive" (connections reused, as wrk and vegeta do by default) or "per-request" (a new TCP connection
    # for every request: each asks `Connection: close`).
    connection_mode: str = "keep-alive"
    loadgen_threads: int = 1
    request_timeout_s: int = 2
    # Open loop: at most this many requests in flight, one connection each. Past a server's knee the due requests
    # then wait for a connection, their latency running from their intended time (unbounded, vegeta opened
    # workers and connections until its own core saturated).
    max_in_flight: int = 10_000
    # The open loop's generator: "openloop" (the project's own, servers/loadgen/openloop) or "vegeta".
    open_loop_generator: str = "openloop"
    # Levels no verdict reads (a sweep's middle, a rate past the knee): measured in Experiment.shown_trials trials.
    shown_levels: list[float] = field(default_factory=list)


@dataclass
class Durations(_KnownFields):
    """Seconds. Closed-loop warm-up runs at least warmup_s and until steady, at most warmup_max_s; an open loop's
    runs exactly warmup_s.

    A server whose runtime compiles while it serves (a JIT: loadlab.yaml's
    compiles_at_run_time) gets jit_warmup_max_s instead, where set: its
    closed-loop maximum, its open-loop length. A JVM's throughput climbs for
    seconds after start; Go's, Rust's or an interpreter's does not, and
    giving them the JVM's allowance spent minutes of every run (issue 32).
    """

    warmup_s: int = 5
    warmup_max_s: int | None = None
    duration_s: int = 10
    jit_warmup_max_s: int | None = None


@dataclass
class Placement(_KnownFields):
    server_cpus: str = "1"
    loadgen_cpus: str = "0"
    memory_limit_mib: int = 2048
    cpu_quota: float | None = None
    # The CFS period (ms) the quota is granted in; None: the kernel's 100 ms. A shorter period turns a small quota
    # into short, frequent slices instead of one long run and a long throttled wait each 100 ms.
    cpu_period_ms: float | None = None
    # Engines for each side (DOCKER_HOST syntax: unix://, tcp://, ssh://); None: the default engine.
    server_docker_host: str | None = None
    loadgen_docker_host: str | None = None
    # The address the server binds and the loadgen targets: loopback unless told otherwise.
    target_host: str = "127.0.0.1"
    # Where the server's resources are read: auto, sidecar or stats-api (config.SERVER_SAMPLING).
    server_sampling: str = "auto"


@dataclass
class Experiment(_KnownFields):
    name: str
    servers: list[ServerEntry]
    load: Load = field(default_factory=Load)
    durations: Durations = field(default_factory=Durations)
    placement: Placement = field(default_factory=Placement)
    trials_per_condition: int = 3
    # Trials of each condition no verdict reads (a shown server, a shown level); None: trials_per_condition. A
    # verdict needs its family's trials on both sides; a condition that is only drawn does not, and the budget of
    # the quick scale (issue 32) goes to the conditions that are judged.
    shown_trials: int | None = None
    # Extra trials of a judged condition, at most this many, run after the schedule's blocks: one for each of its
    # trials whose loadgen was saturated or fell behind its schedule (harness.spares). Such a trial measured the
    # instrument, not the server, so it is no evidence; without a spare, a verdict that needs its family's trials
    # a side loses its interval to the loadgen (2 of 6 java-platform trials at 10,000 connections in the reference
    # of 2026-11-29). A server's own failure (stalled, crashed) is its result and gets no spare.
    spare_trials: int = 0
    seed: int = 0
    verify: bool = True
    health_timeout_s: float = 60.0
    profilers: list[str] = field(default_factory=list)
    description: str = ""

    # ---- construction -------------------------------------------------
    @classmethod
    def from_dict(cls, document: dict, where: str | None = None) -> Experiment:
        """An experiment from its YAML form; raises ParameterError naming the first wrong field's path (and the
        file, `where`)."""
        schemas.check(document, "experiment", where)  # unknown keys, missing fields and wrong types, first
        entries = [
            ServerEntry(
                server=raw["server"], variant=raw.get("variant"),
                settings={str(k): (str(v).lower() if isinstance(v, bool) else str(v))
                          for k, v in (raw.get("settings") or {}).items()},
                label=raw.get("label"), route=raw.get("route"), capacity_rps=raw.get("capacity_rps"),
                cpu_quota=raw.get("cpu_quota"), profilers=raw.get("profilers"), shown=raw.get("shown", False),
            )
            for raw in document["servers"]
        ]
        experiment = cls(
            name=document["name"],
            servers=entries,
            load=Load(**(document.get("load") or {})),
            durations=Durations(**(document.get("durations") or {})),
            placement=Placement(**(document.get("placement") or {})),
            trials_per_condition=document.get("trials_per_condition", 3),
            shown_trials=document.get("shown_trials"),
            spare_trials=document.get("spare_trials", 0),
            seed=document.get("seed", 0),
            verify=document.get("verify", True),
            health_timeout_s=document.get("health_timeout_s", 60.0),
            profilers=list(document.get("profilers") or []),
            description=document.get("description", ""),
        )
        return experiment.validate()

    @classmethod
    def from_record(cls, document: dict) -> Experiment:
        """The experiment a run recorded (manifest `parameters`), for re-analysis: no validation.

        A recorded run is a fact, not a request: it is read as it was, even on a
        host with other CPUs, without an image, or after a knob or field was
        renamed (fields this version does not know are ignored).
        """
        def known(kind, raw) -> dict:
            names = {f.name for f in dataclasses.fields(kind)}
            return {k: v for k, v in (raw or {}).items() if k in names}

        fields = known(cls, document)
        fields["servers"] = [ServerEntry(**known(ServerEntry, raw)) for raw in document.get("servers") or []]
        for name, kind in (("load", Load), ("durations", Durations), ("placement", Placement)):
            fields[name] = kind(**known(kind, document.get(name)))
        return cls(**fields)

    @classmethod
    def from_yaml(cls, path: Path | str) -> Experiment:
        path = Path(path)
        if not path.is_file():
            raise ParameterError("experiment file", str(path), "an existing YAML file")
        try:
            document = yaml.safe_load(path.read_text())
        except yaml.YAMLError as error:
            raise ParameterError("experiment file", str(path), f"valid YAML ({error})") from None
        try:
            return cls.from_dict(document, where=str(path))
        except ParameterError as error:
            if error.where:
                raise
            # A check past the schema (labels, knobs, CPU sets) names the field; the file is named here.
            raise ParameterError(error.parameter, error.value, error.allowed, where=str(path),
                                 missing=error.missing) from None

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    # ---- validation ---------------------------------------------------
    def validate(self, check_host: bool = False) -> Experiment:
        """Check every field (names, ranges, knobs, disjoint CPU sets); raises ParameterError naming its path.

        `check_host` also checks that the CPU sets exist on this host, which
        only measuring needs (the runner asks for it): a plan, or a recorded
        run being re-analysed, must not depend on the machine reading it.
        """
        # The shape (every field known, of its type and range) is the schema's; the rest needs the servers and the host.
        schemas.check(self.to_dict(), "experiment")
        labels = [entry.display_label() for entry in self.servers]
        if self.shown_trials is not None and self.shown_trials > self.trials_per_condition:
            raise ParameterError("shown_trials", self.shown_trials,
                                 f"at most trials_per_condition ({self.trials_per_condition}): a shown condition is "
                                 "measured less than a judged one, never more")
        unknown = [level for level in self.load.shown_levels if level not in self.levels()]
        if unknown:
            raise ParameterError("load.shown_levels", unknown[0], "one of the load's levels: " +
                                 ", ".join(f"{level:g}" for level in self.levels()))
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        if duplicates:
            raise ParameterError("servers[].label", duplicates[0], "labels unique across servers (set label: to tell them apart)")
        # Every condition must make a valid trial: reuse the trial's own checks, naming the field.
        for index, entry in enumerate(self.servers):
            for level in self.levels():
                config = self.trial_config(entry, level)
                config.check_host_cpus = config.check_host_cpus and check_host
                try:
                    config.validate()
                except ParameterError as error:
                    raise ParameterError(_field_path(index, error.parameter, error.value), error.value, error.allowed) from None
        return self

    # ---- conditions and order ------------------------------------------
    def levels(self) -> list[float]:
        if self.load.mode == "closed":
            return list(self.load.connections)
        return list(self.load.capacity_fractions or self.load.rate_rps)

    def offered_rate_rps(self, entry: ServerEntry, level) -> float:
        """Open loop: the rate (req/s) a trial at `level` offers this server (a fraction of its own capacity or of
        the slowest server's, see Load.capacity_basis, or the level itself), in whole requests per second: vegeta's
        -rate takes an integer count per period."""
        if self.load.capacity_fractions:
            if entry.capacity_rps is None:
                raise ParameterError(f"servers[{self.servers.index(entry)}].capacity_rps", None,
                                     "a positive number of requests per second when load.capacity_fractions is set")
            basis = entry.capacity_rps
            if self.load.capacity_basis == "slowest":
                basis = min(float(other.capacity_rps) for other in self.servers if other.capacity_rps is not None)
            return float(max(1, round(float(level) * float(basis))))
        return float(max(1, round(float(level))))

    def warmup_bounds_s(self, entry: ServerEntry) -> tuple[int, int | None]:
        """(warm-up at least, at most) in seconds for this server's trials (see Durations)."""
        durations = self.durations
        spec = all_servers().get(entry.server)
        jit_max = durations.jit_warmup_max_s if spec is not None and spec.compiles_at_run_time else None
        if self.load.mode == "open":
            length = jit_max if jit_max is not None else durations.warmup_s
            return length, length
        return durations.warmup_s, jit_max if jit_max is not None else durations.warmup_max_s

    def trial_config(self, entry: ServerEntry, level) -> TrialConfig:
        placement = self.placement
        warmup_s, warmup_max_s = self.warmup_bounds_s(entry)
        profilers = tuple(self.profilers if entry.profilers is None else entry.profilers)
        return TrialConfig(
            server=entry.server, route=entry.route or self.load.route, variant=entry.variant,
            settings=recorder_settings(entry.server, entry.settings, profilers), load_mode=self.load.mode,
            connections=int(level) if self.load.mode == "closed" else self.load.connections[0] if self.load.connections else 1,
            rate_rps=self.offered_rate_rps(entry, level) if self.load.mode == "open" else None,
            duration_s=self.durations.duration_s, warmup_s=warmup_s, warmup_max_s=warmup_max_s,
            loadgen_threads=self.load.loadgen_threads,
            request_timeout_s=self.load.request_timeout_s, pipeline_depth=self.load.pipeline_depth,
            max_in_flight=self.load.max_in_flight, open_loop_generator=self.load.open_loop_generator,
            connection_mode=self.load.connection_mode, server_cpus=placement.server_cpus, loadgen_cpus=placement.loadgen_cpus,
            memory_limit_bytes=placement.memory_limit_mib * MIB,
            cpu_quota=entry.cpu_quota if entry.cpu_quota is not None else placement.cpu_quota,
            cpu_period_ms=placement.cpu_period_ms,
            verify=self.verify, health_timeout_s=self.health_timeout_s, profilers=profilers, target_host=placement.target_host,
            check_host_cpus=placement.server_docker_host is None and placement.loadgen_docker_host is None,
            server_sampling=placement.server_sampling,
        )

    def is_shown(self, entry: ServerEntry, level) -> bool:
        """Whether no verdict reads this condition: its server is shown only, or its level is."""
        return entry.shown or any(float(level) == float(shown) for shown in self.load.shown_levels)

    def trials_for(self, entry: ServerEntry, level) -> int:
        """Trials of this condition: `shown_trials` where it is shown only (and set), else trials_per_condition."""
        if self.shown_trials is not None and self.is_shown(entry, level):
            return self.shown_trials
        return self.trials_per_condition

    def conditions(self) -> list[dict]:
        """Every condition: {condition, label, level, config, trials, shown}, in definition order."""
        out = []
        for entry in self.servers:
            for level in self.levels():
                unit = "c" if self.load.mode == "closed" else ("f" if self.load.capacity_fractions else "r")
                out.append({
                    "condition": f"{entry.display_label()}@{unit}{level:g}",
                    "label": entry.display_label(),
                    "level": level,
                    "config": self.trial_config(entry, level).validate(),
                    "trials": self.trials_for(entry, level),
                    "shown": self.is_shown(entry, level),
                })
        return out

    def schedule(self) -> list[dict]:
        """The trial order: blocks of every condition once, each block shuffled (seeded).

        A shown condition with fewer trials (`shown_trials`) sits in the first
        blocks only, so drift still lands on it as on the others there.
        Returns [{trial: 1.., condition, block}] — trial numbers are the run order.
        """
        trials = {c["condition"]: c["trials"] for c in self.conditions()}
        order = [(block, name) for block, name in interleave(list(trials), max(trials.values()), self.seed)
                 if block < trials[name]]
        return [{"trial": number, "condition": name, "block": block + 1}
                for number, (block, name) in enumerate(order, start=1)]


_TRIAL_FIELD_TO_PATH = {
    "server": "servers[{i}].server", "variant": "servers[{i}].variant", "route": "load.route (or servers[{i}].route)",
    "connections": "load.connections", "rate_rps": "load.rate_rps", "load_mode": "load.mode",
    "duration": "durations.duration_s", "warmup": "durations.warmup_s", "warmup_max": "durations.warmup_max_s (or durations.jit_warmup_max_s)",
    "loadgen_threads": "load.loadgen_threads", "pipeline_depth": "load.pipeline_depth",
    "connection_mode": "load.connection_mode",
    "request_timeout_s": "load.request_timeout_s", "max_in_flight": "load.max_in_flight",
    "open_loop_generator": "load.open_loop_generator", "server_cpus": "placement.server_cpus",
    "loadgen_cpus": "placement.loadgen_cpus", "cpu_quota": "placement.cpu_quota (or servers[{i}].cpu_quota)",
    "cpu_period_ms": "placement.cpu_period_ms",
    "memory_limit_bytes": "placement.memory_limit_mib",
}


def _field_path(index: int, parameter: str, value) -> str:
    """The experiment field behind a TrialConfig parameter, e.g. 'setting GOMAXPROCS' -> servers[1].settings.GOMAXPROCS."""
    if parameter == "setting":  # a knob the server does not have: the value is its name
        return f"servers[{index}].settings.{value}"
    if parameter.startswith("setting "):
        return f"servers[{index}].settings.{parameter.split(' ', 1)[1]}"
    return _TRIAL_FIELD_TO_PATH.get(parameter, parameter).format(i=index)


def trials_text(parameters: dict, short: bool = False) -> str:
    """How many trials each condition of a recorded experiment (a manifest's `parameters`) had, as a page says it:
    "6 trials per condition", or "6 trials per judged condition, 3 per shown one" where shown conditions had fewer.
    `short`, for a row already named "trials per condition": "6", or "6 per judged condition, 3 per shown one"."""
    judged, shown = parameters.get("trials_per_condition", "?"), parameters.get("shown_trials")
    has_shown = any(entry.get("shown") for entry in parameters.get("servers") or []) or \
        bool((parameters.get("load") or {}).get("shown_levels"))
    spares = int(parameters.get("spare_trials") or 0)
    spare_text = (f"{', ' if short else '; '}up to {spares} spare{'s' if spares != 1 else ''} a judged condition"
                  f"{'' if short else ' for trials its loadgen spoiled, run after the blocks'}") if spares else ""
    if shown is None or shown == judged or not has_shown:
        return (f"{judged}" if short else f"{judged} trials per condition") + spare_text
    return f"{judged}{'' if short else ' trials'} per judged condition, {shown} per shown one" + spare_text
