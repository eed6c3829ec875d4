"""The registry of servers: what `servers/<name>/loadlab.yaml` declares.

Each server folder describes itself (runtime, model, image variants, knobs
with their allowed values, the routes it serves), so adding a server never
means editing the harness. The file's shape is declared in
src/loadlab/schemas/server.schema.json and checked on reading; settings are
validated here, before any container starts.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml

from loadlab import paths, schemas
from loadlab.contract import ROUTES
from loadlab.errors import ParameterError

LOADGEN = "loadgen"
IMAGE_PREFIX = "loadlab"


@dataclass(frozen=True)
class Runtime:
    """One runtime under test, by its three names.

    `name` is what figures and tables call it (one colour and marker each, `plots.palette`); `server` is the folder
    under servers/ that serves it, with `settings` (the knobs that make it this runtime: java-threads serves both
    Java runtimes by THREAD_MODEL); `label` is the short name claims.yaml and the plans' experiments use.
    """

    name: str
    server: str
    label: str
    settings: tuple[tuple[str, str], ...] = ()

    def aliases(self) -> tuple[str, ...]:
        """The other names it goes by: its label, and its server's name with its settings' values appended."""
        with_settings = "-".join([self.server, *(value for _, value in self.settings)])
        return tuple(dict.fromkeys(alias for alias in (self.label, with_settings) if alias != self.name))


# The one table of runtime names: the palette's aliases are derived from it and the plans' labels checked against it
# (tests/test_servers.py). Here, not in plots.palette, because plans, the harness and the judgements read these names
# too, and none of them may import a figure module; the order is the figures' order.
RUNTIMES = (
    Runtime("go-nethttp", "go-nethttp", "go"),
    Runtime("go-workerpool", "go-workerpool", "go-workerpool"),
    Runtime("java-platform", "java-threads", "java-platform", (("THREAD_MODEL", "platform"),)),
    Runtime("java-virtual", "java-threads", "java-virtual", (("THREAD_MODEL", "virtual"),)),
    Runtime("rust-tokio", "rust-tokio", "rust"),
    Runtime("php-swoole", "php-swoole", "swoole"),
    Runtime("python-asyncio", "python-asyncio", "python"),
    Runtime("node-eventloop", "node-eventloop", "node"),
    Runtime("erlang-otp", "erlang-otp", "erlang"),
    Runtime("nginx-baseline", "nginx-baseline", "nginx"),
)


@dataclass(frozen=True)
class Knob:
    """One environment variable a server reads.

    Exactly one of `choices`, `integer_range` or `free` describes its values.
    """

    name: str
    default: str | None
    help: str
    choices: tuple[str, ...] = ()
    integer_range: tuple[int, int] | None = None

    def check(self, value: str) -> None:
        if self.choices and value not in self.choices:
            raise ParameterError(f"setting {self.name}", value, self.choices)
        if self.integer_range is not None:
            low, high = self.integer_range
            if not re.fullmatch(r"[0-9]+", value) or not low <= int(value) <= high:
                raise ParameterError(f"setting {self.name}", value, f"an integer from {low} to {high}")


@dataclass(frozen=True)
class ServerSpec:
    name: str
    directory: Path
    runtime: str
    model: str
    routes: tuple[str, ...]
    variants: dict[str, dict[str, str]]  # variant -> Docker build args
    default_variant: str
    knobs: dict[str, Knob] = field(default_factory=dict)
    profilers: tuple[str, ...] = ()
    contestant: bool = True
    # A JIT: its code gets faster while it serves, so its warm-up may need longer (Durations.jit_warmup_max_s).
    compiles_at_run_time: bool = False
    # Build argument -> environment variable naming a local file to put in
    # the build context (e.g. an offline PECL package). See images.py.
    build_inputs: dict[str, str] = field(default_factory=dict)

    def image(self, variant: str | None = None) -> str:
        return f"{IMAGE_PREFIX}/{self.name}:{variant or self.default_variant}"

    def check_variant(self, variant: str | None) -> str:
        variant = variant or self.default_variant
        if variant not in self.variants:
            raise ParameterError("variant", variant, sorted(self.variants))
        return variant

    def check_settings(self, settings: dict[str, str]) -> dict[str, str]:
        """Validate knob values; returns them as strings (env values)."""
        checked: dict[str, str] = {}
        for name, value in settings.items():
            if name in ("HOST", "PORT"):
                raise ParameterError(f"setting {name}", value, "set by the harness, not by settings")
            if name not in self.knobs:
                raise ParameterError(
                    "setting", name, sorted(self.knobs) or ["(this server has no knobs)"]
                )
            text = str(value).lower() if isinstance(value, bool) else str(value)
            self.knobs[name].check(text)
            checked[name] = text
        return checked

    def check_route(self, route: str) -> None:
        if route not in self.routes:
            raise ParameterError("route", route, f"a route {self.name} serves: {', '.join(self.routes)}")


def _parse_knob(name: str, raw: dict) -> Knob:
    integer_range = raw.get("integer")
    return Knob(
        name=name,
        default=None if raw.get("default") is None else str(raw.get("default")),
        help=raw.get("help", ""),
        choices=tuple(str(c) for c in raw.get("choices", ())),
        integer_range=(int(integer_range[0]), int(integer_range[1])) if integer_range else None,
    )


def manifest_name(directory: Path) -> str:
    """How messages name a server's manifest: relative to the checkout when it lies inside it."""
    path = Path(directory) / "loadlab.yaml"
    try:
        return str(path.resolve().relative_to(paths.ROOT.resolve()))
    except ValueError:
        return str(path)


def load_spec(directory: Path) -> ServerSpec:
    """Read `directory`/loadlab.yaml; raises ParameterError naming the file and the field when it breaks the schema."""
    try:
        raw = yaml.safe_load((directory / "loadlab.yaml").read_text())
    except yaml.YAMLError as error:
        raise ParameterError("manifest", manifest_name(directory), f"valid YAML ({error})") from None
    schemas.check(raw, "server", where=manifest_name(directory))
    routes = raw.get("routes", "all")
    routes = ROUTES if routes == "all" else tuple(routes)
    variants = {str(k): {str(a): str(b) for a, b in (v or {}).items()} for k, v in (raw.get("variants") or {"latest": {}}).items()}
    default_variant = str(raw.get("default_variant", next(iter(variants))))
    if default_variant not in variants:
        raise ParameterError("default_variant", default_variant, sorted(variants), where=manifest_name(directory))
    return ServerSpec(
        name=directory.name,
        directory=directory,
        runtime=raw["runtime"],
        model=raw["model"],
        routes=routes,
        variants=variants,
        default_variant=default_variant,
        knobs={name: _parse_knob(name, k or {}) for name, k in (raw.get("knobs") or {}).items()},
        profilers=tuple(raw.get("profilers", ())),
        contestant=bool(raw.get("contestant", True)),
        compiles_at_run_time=bool(raw.get("compiles_at_run_time", False)),
        build_inputs={str(k): str(v["env"]) for k, v in (raw.get("build_inputs") or {}).items()},
    )


EXTRA_SERVER_DIRS_ENV = "LOADLAB_EXTRA_SERVER_DIRS"


def _server_directories(servers_dir: Path) -> list[Path]:
    # Extra folders (os.pathsep-separated) hold servers that are not contestants,
    # e.g. the test suite's deliberately broken ones.
    roots = [servers_dir] + [Path(p) for p in os.environ.get(EXTRA_SERVER_DIRS_ENV, "").split(os.pathsep) if p]
    return [d for root in roots if root.is_dir() for d in sorted(root.iterdir())]


def all_servers(servers_dir: Path = paths.SERVERS_DIR) -> dict[str, ServerSpec]:
    """Every server folder with a loadlab.yaml, by name (loadgen excluded)."""
    return _cached_servers(servers_dir, os.environ.get(EXTRA_SERVER_DIRS_ENV, ""))


@cache
def _cached_servers(servers_dir: Path, extra: str) -> dict[str, ServerSpec]:
    return {
        directory.name: load_spec(directory)
        for directory in _server_directories(servers_dir)
        if (directory / "loadlab.yaml").is_file() and directory.name != LOADGEN
    }


def get_server(name: str) -> ServerSpec:
    servers = all_servers()
    if name not in servers:
        raise ParameterError("server", name, sorted(servers))
    return servers[name]


def loadgen_image() -> str:
    return f"{IMAGE_PREFIX}/{LOADGEN}:latest"


# Profilers that read a server's built-in recorder (java-threads' continuous JFR recording), by its knob.
RECORDER_PROFILERS = {"JFR": ("jfr", "jfr-locks")}


def recorder_settings(server: str, settings: dict[str, str], profilers) -> dict[str, str]:
    """A trial's settings for `server`: a recorder its image runs by default (java-threads' JFR) is switched off in
    a trial that captures nothing from it, so a measured trial never carries a profiler (its cost is measured apart,
    notebook 06). A setting named explicitly is kept as it is; an unknown server is left to validation."""
    settings = dict(settings)
    try:
        knobs = get_server(server).knobs
    except ParameterError:
        return settings
    for knob, readers in RECORDER_PROFILERS.items():
        if knob in knobs and knob not in settings and not set(readers) & set(profilers or ()):
            settings[knob] = "off"
    return settings
