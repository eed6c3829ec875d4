"""One fixed look (colour, marker, line style) per runtime and variant, in every figure.

The first eight runtime colours are the set of Okabe-Ito ("Color Universal
Design", 2008) and Paul Tol colours whose smallest pairwise CIELAB distance
is largest under normal vision and simulated protanopia, deuteranopia and
tritanopia (Machado et al. 2009), and against the white background
(tests/test_plots.py checks it). Node's brown and Erlang's violet came later:
with those eight fixed, they are the pair from a 9-level RGB grid whose
smallest distance to them and to each other, under all four visions, is
largest (28.7; no Okabe-Ito or Tol colour left reaches the test's 18). Families no longer share hues: the pairs a
notebook compares (go-nethttp / go-workerpool in 02, go / rust in 03,
platform / virtual threads in 05) get the most distant colours, because a
reader must tell those apart first.

A variant of a runtime (``java-virtual-jdk25``, the A/A twin
``go-nethttp-B``) keeps its runtime's hue but changes three things at once:
a lighter or darker shade, a second marker shape and a dashed line, so it
stays distinguishable in grey scale and for every colour-vision deficiency.
Hollow markers are reserved for excluded trials (see `_common`), so no
variant is drawn hollow. Unknown names get a deterministic fallback, so a
figure never changes its colours between runs.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable
from typing import NamedTuple

import matplotlib.colors
import numpy as np

from loadlab.servers import RUNTIMES

# Keyed by the runtimes' names (`loadlab.servers.RUNTIMES`, in its order; a test keeps the two alike).
RUNTIME_COLOURS: dict[str, str] = {
    "go-nethttp": "#0072B2",  # blue (Okabe-Ito)
    "go-workerpool": "#E69F00",  # orange (Okabe-Ito)
    "java-platform": "#882255",  # wine (Tol)
    "java-virtual": "#56B4E9",  # sky blue (Okabe-Ito)
    "rust-tokio": "#D55E00",  # vermillion (Okabe-Ito)
    "php-swoole": "#000000",  # black
    "python-asyncio": "#332288",  # indigo (Tol)
    "node-eventloop": "#886644",  # brown
    "erlang-otp": "#AA22FF",  # violet
    # Grey: the ceiling, not a contestant. Darker than the #999 guide lines, and apart from java-platform's wine
    # under every simulated colour vision (#555 is not: 1.4 under deuteranopia).
    "nginx-baseline": "#808080",
}

RUNTIME_MARKERS: dict[str, str] = {
    "go-nethttp": "o",
    "go-workerpool": "s",
    "java-platform": "^",
    "java-virtual": "v",
    "rust-tokio": "D",
    "php-swoole": "P",
    "python-asyncio": "X",
    "node-eventloop": "p",
    "erlang-otp": "h",
    "nginx-baseline": "*",
}

# The variant's marker: another filled shape, never a hollow one.
VARIANT_MARKERS: dict[str, str] = {"o": ">", "s": "<", "^": "d", "v": "p", "D": "h", "P": "8", "X": "H", "*": "d", "p": "d", "h": "8"}

# The other names of each runtime (claims.yaml's and the plans' short labels, java-threads' THREAD_MODEL variants),
# from the one table of runtime names.
RUNTIME_ALIASES: dict[str, str] = {alias: runtime.name for runtime in RUNTIMES for alias in runtime.aliases()}

# Variant tokens (a server name's suffix, split at "-") drawn as the runtime itself: the
# reference JDK, the first A/A twin, the pinning switch (its figures compare JDKs).
BASE_VARIANT_TOKENS = frozenset({"jdk21", "a", "latest", "pinned"})
# How far a variant's shade moves towards white (dark colours) or black (light ones).
VARIANT_SHADE = 0.45

FALLBACK_COLOURS = ("#999933", "#44AA99", "#117733", "#AA4499", "#661100", "#6699CC", "#888888")
FALLBACK_MARKERS = ("o", "s", "^", "D", "v", "P", "X")


class SeriesStyle(NamedTuple):
    """How one runtime or variant is drawn: colour (hex), matplotlib marker, line style."""

    colour: str
    marker: str
    linestyle: str


def _stable_index(text: str, modulus: int) -> int:
    # crc32, not hash(): Python salts str hashes per process.
    return zlib.crc32(text.encode("utf-8")) % modulus


def split_runtime(name: str) -> tuple[str | None, str]:
    """(known base runtime or None, variant suffix) for a server name or label."""
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


def _variant_shade(colour: str) -> str:
    # Relative luminance decides the direction, so that black (Swoole) gets lighter and
    # sky blue darker: both then stay apart from their base and from the white background.
    red, green, blue = matplotlib.colors.to_rgb(colour)
    luminance = 0.2126 * red + 0.7152 * green + 0.0722 * blue
    return shade(colour, -VARIANT_SHADE if luminance > 0.35 else VARIANT_SHADE)


def is_variant(name: str) -> bool:
    """True when `name` is a known runtime with a suffix drawn differently from the runtime itself."""
    base, variant = split_runtime(str(name))
    tokens = [token for token in variant.lower().split("-") if token]
    return base is not None and any(token not in BASE_VARIANT_TOKENS for token in tokens)


def series_style(name: str) -> SeriesStyle:
    """The fixed colour, marker and line style of a server name or label, the same in every figure."""
    base, _ = split_runtime(str(name))
    if base is None:
        index = _stable_index(str(name), len(FALLBACK_COLOURS))
        return SeriesStyle(FALLBACK_COLOURS[index], FALLBACK_MARKERS[index % len(FALLBACK_MARKERS)], "-")
    colour, marker = RUNTIME_COLOURS[base], RUNTIME_MARKERS[base]
    if not is_variant(name):
        return SeriesStyle(colour, marker, "-")
    return SeriesStyle(_variant_shade(colour), VARIANT_MARKERS[marker], "--")


def runtime_colour(name: str) -> str:
    """The fixed hex colour of a server/runtime name (see `series_style`)."""
    return series_style(name).colour


def runtime_marker(name: str) -> str:
    """The fixed matplotlib marker of a server (helps readers who cannot tell the colours apart)."""
    return series_style(name).marker




def runtime_order(names: Iterable[str]) -> list[str]:
    """Names in a stable order: known runtimes in palette order (base before variants), then the rest."""
    known = list(RUNTIME_COLOURS)

    def key(name: str) -> tuple[int, str]:
        base, _ = split_runtime(str(name))
        return (known.index(base) if base else len(known), str(name))

    return sorted(dict.fromkeys(names), key=key)
