"""One look for every figure: seaborn "paper" context, fixed colours per runtime, saving.

Colours are the Okabe-Ito palette (Okabe & Ito, "Color Universal Design",
2008), which stays distinguishable for the common colour-vision
deficiencies, plus a purple and a grey. Runtimes of one family get
neighbouring hues (Go: blues, Java: orange/vermillion). A server name with a
suffix, such as ``java-virtual-jdk25``, gets a shade of its base colour;
any other name gets a deterministic fallback colour, so a figure never
changes colours between runs. Every figure function here draws inside
`style_context()`, so figures look the same whatever the caller's rcParams,
and the caller's global state is left alone.
"""

from __future__ import annotations

import contextlib
import os
import re
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

import matplotlib
import matplotlib.colors
import numpy as np
import seaborn as sns
from matplotlib.figure import Figure
from matplotlib.ticker import EngFormatter

PNG_DPI = 300

RUNTIME_COLOURS: dict[str, str] = {
    "go-nethttp": "#56B4E9",  # sky blue
    "go-workerpool": "#0072B2",  # blue
    "java-platform": "#E69F00",  # orange
    "java-virtual": "#D55E00",  # vermillion
    "rust-tokio": "#CC79A7",  # reddish purple
    "php-swoole": "#009E73",  # bluish green
    "python-asyncio": "#6A3D9A",  # purple
    "nginx-baseline": "#4D4D4D",  # dark grey: the ceiling, not a contestant
}

RUNTIME_MARKERS: dict[str, str] = {
    "go-nethttp": "o",
    "go-workerpool": "s",
    "java-platform": "^",
    "java-virtual": "v",
    "rust-tokio": "D",
    "php-swoole": "P",
    "python-asyncio": "X",
    "nginx-baseline": "*",
}

# Short names used by claims.yaml and by java-threads' THREAD_MODEL variants.
RUNTIME_ALIASES: dict[str, str] = {
    "go": "go-nethttp",
    "rust": "rust-tokio",
    "swoole": "php-swoole",
    "nginx": "nginx-baseline",
    "python": "python-asyncio",
    "java-threads-platform": "java-platform",
    "java-threads-virtual": "java-virtual",
}

# Shade of the base colour for a variant: > 0 mixes with white, < 0 with black.
VARIANT_SHADES: dict[str, float] = {"jdk21": 0.0, "jdk25": -0.35}
_FALLBACK_SHADES = (0.35, -0.3, 0.55, -0.5)

# Colours for servers we do not know; picked by a stable hash of the name.
FALLBACK_COLOURS = ("#999933", "#882255", "#44AA99", "#332288", "#AA4499", "#117733", "#DDCC77", "#661100")
FALLBACK_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


def _stable_index(text: str, modulus: int) -> int:
    # crc32, not hash(): Python salts str hashes per process.
    return zlib.crc32(text.encode("utf-8")) % modulus


def _split_runtime(name: str) -> tuple[str | None, str]:
    """(known base runtime or None, variant suffix) for a server name."""
    canonical = RUNTIME_ALIASES.get(name, name)
    best = None
    for base in RUNTIME_COLOURS:
        if canonical == base or canonical.startswith(base + "-"):
            if best is None or len(base) > len(best):
                best = base
    if best is None:
        # An alias with a suffix: "java-threads-virtual-jdk25", "go-quota".
        for alias in sorted(RUNTIME_ALIASES, key=len, reverse=True):
            if canonical.startswith(alias + "-"):
                return RUNTIME_ALIASES[alias], canonical[len(alias) + 1 :]
        return None, ""
    return best, canonical[len(best) + 1 :]


def shade(colour: str, amount: float) -> str:
    """Mix `colour` with white (amount > 0) or black (amount < 0); |amount| in [0, 1]."""
    rgb = np.array(matplotlib.colors.to_rgb(colour))
    target = np.ones(3) if amount > 0 else np.zeros(3)
    mixed = rgb + (target - rgb) * min(abs(amount), 1.0)
    return matplotlib.colors.to_hex(mixed)


def runtime_colour(name: str) -> str:
    """The fixed hex colour of a server/runtime name, the same in every figure.

    Known names (and their aliases) get their palette colour; a known name
    with a suffix (``java-virtual-jdk25``) a shade of it; unknown names a
    deterministic fallback colour (which two unknown names may share).
    """
    base, variant = _split_runtime(str(name))
    if base is None:
        return FALLBACK_COLOURS[_stable_index(str(name), len(FALLBACK_COLOURS))]
    colour = RUNTIME_COLOURS[base]
    if not variant:
        return colour
    amount = VARIANT_SHADES.get(variant)
    if amount is None:
        amount = _FALLBACK_SHADES[_stable_index(variant, len(_FALLBACK_SHADES))]
    return shade(colour, amount) if amount else colour


def runtime_marker(name: str) -> str:
    """The fixed matplotlib marker of a server (helps readers who cannot tell the colours apart)."""
    base, _ = _split_runtime(str(name))
    if base is None:
        return FALLBACK_MARKERS[_stable_index(str(name), len(FALLBACK_MARKERS))]
    return RUNTIME_MARKERS[base]


def runtime_order(names: Iterable[str]) -> list[str]:
    """Names in a stable order: known runtimes in palette order, then the rest alphabetically."""
    known = list(RUNTIME_COLOURS)

    def key(name: str) -> tuple[int, str]:
        base, variant = _split_runtime(str(name))
        return (known.index(base) if base else len(known), str(name))

    return sorted(dict.fromkeys(names), key=key)


def style_rc() -> dict:
    """rcParams of the collection: seaborn paper context on a white grid, 300 dpi output."""
    rc: dict = {}
    rc.update(sns.axes_style("whitegrid"))
    rc.update(sns.plotting_context("paper"))
    rc.update(
        {
            # Ticks on: a log axis without them is hard to read.
            "xtick.bottom": True,
            "ytick.left": True,
            "axes.edgecolor": ".3",
            "grid.color": ".88",
            "legend.frameon": False,
            "savefig.dpi": PNG_DPI,
            "figure.dpi": 100,
            # Stable element ids, so that re-rendered SVGs diff cleanly.
            "svg.hashsalt": "loadlab",
            "pdf.fonttype": 42,
        }
    )
    return rc


@contextlib.contextmanager
def style_context() -> Iterator[None]:
    """Apply `style_rc()` for the duration of a with-block."""
    with matplotlib.rc_context(style_rc()):
        yield


def new_figure(width_in: float = 6.0, height_in: float = 3.6, **subplots) -> tuple[Figure, np.ndarray | object]:
    """A Figure (not registered with pyplot, so notebooks show it once) and its axes.

    Call inside `style_context()`.
    """
    figure = Figure(figsize=(width_in, height_in), layout="constrained")
    axes = figure.subplots(**subplots)
    return figure, axes


def spans_decades(values: Iterable[float], decades: float = 1.0) -> bool:
    """True if positive `values` span at least `decades` orders of magnitude (use a log axis)."""
    array = np.asarray(list(values), dtype=float)
    array = array[np.isfinite(array) & (array > 0)]
    if array.size < 2:
        return False
    return bool(np.log10(array.max() / array.min()) >= decades)


_KNOWN_LABELS = {
    "concurrency": "concurrency (connections)",
    "connections": "concurrency (connections)",
    "offered_rate_rps": "offered rate (req/s)",
    "rate_rps": "offered rate (req/s)",
    "throughput_rps": "throughput (req/s)",
    "t_s": "time since start of trial (s)",
    "memory_in_use_bytes": "memory in use (bytes)",
    "tasks": "tasks (threads)",
    "pause_s": "GC pause (s)",
    "latency_s": "latency (s)",
}
_UNIT_SUFFIX_LABELS = (("_bytes", "bytes"), ("_rps", "req/s"), ("_s", "s"), ("_pct", "%"), ("_count", "count"))


def axis_label(column: str) -> str:
    """Human axis label with unit from a unit-carrying column name: ``latency_p99_s`` -> "latency p99 (s)"."""
    if column in _KNOWN_LABELS:
        return _KNOWN_LABELS[column]
    for suffix, unit in _UNIT_SUFFIX_LABELS:
        if column.endswith(suffix):
            return f"{column[: -len(suffix)].replace('_', ' ')} ({unit})"
    return column.replace("_", " ")


def seconds_formatter() -> EngFormatter:
    """Tick labels like "250 µs", "1 ms", "2 s"."""
    return EngFormatter(unit="s", places=None, sep="\N{NO-BREAK SPACE}")


def count_formatter() -> EngFormatter:
    """Tick labels like "500", "20k", "1.5M"."""
    return EngFormatter(unit="", sep="")


def bytes_formatter() -> EngFormatter:
    """Tick labels with decimal SI prefixes: "500 MB", "2 GB" (1 MB = 10^6 bytes, as in claims.yaml).

    Decimal, not binary, so that the ticks of a log axis fall on round
    numbers; loadlab.stats.format_quantity uses the same convention.
    """
    return EngFormatter(unit="B", sep="\N{NO-BREAK SPACE}")


class SavedFigure(NamedTuple):
    """Where `save_figure` wrote the two files."""

    svg: Path
    png: Path


_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def save_figure(fig: Figure, name: str, directory: str | os.PathLike) -> SavedFigure:
    """Write `fig` as ``<directory>/<name>.svg`` and ``.png`` (300 dpi); return both paths.

    `name` is a file stem: letters, digits, dot, dash, underscore. Each file
    is written to a temporary name and renamed, so a reader never sees half
    a figure. The SVG carries no date, so re-rendering unchanged data gives
    an identical file.
    """
    if not _NAME_PATTERN.match(name) or name.endswith((".svg", ".png")):
        raise ValueError(f"name={name!r} is not allowed: name must be a file stem of letters, digits, '.', '-', '_'")
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    paths = SavedFigure(target / f"{name}.svg", target / f"{name}.png")
    with style_context():
        for path, options in (
            (paths.svg, {"format": "svg", "metadata": {"Date": None}}),
            (paths.png, {"format": "png", "dpi": PNG_DPI}),
        ):
            # Not mkstemp: its 0600 mode would make report figures unreadable to others.
            temporary = target / f".{name}.{os.getpid()}.partial{path.suffix}"
            try:
                fig.savefig(temporary, facecolor="white", **options)
                os.replace(temporary, path)
            except BaseException:
                temporary.unlink(missing_ok=True)
                raise
    return paths
