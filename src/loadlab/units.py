"""Units: the one table of unit facts, the conversions, and how a quantity is printed (benchstat's benchunit).

A column or key carries its unit in its name (`duration_s`, `memory_peak_bytes`,
`throughput_rps`); `UNITS` says, per name suffix, what a value of it is printed
with, how it is scaled and what an axis drawing it names. Everything that
prints or draws a unit reads this table: the comparison tables
(`stats.compare`), a report page's numbers (`pages.numbers`) and the figures'
axis labels (`plots.style`).

Bytes are binary, as the project measures them: 2**20 bytes print as
"1 MiB", never "1.05 MB", and figures draw them in MiB. Seconds take SI
prefixes both ways ("51.5 µs", "12.3 ms"). Rates and counts are printed
whole, thousands separated ("72,150 req/s"), as a reader writes them.

Nothing here imports the rest of loadlab: every layer may import it.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd

MIB = 2**20  # bytes in a mebibyte
PERCENT = 100  # per cent in a whole
SIGNIFICANT_DIGITS = 4  # a number as a report prints it: 1,235 or 0.01235 (`format_number`)
NOT_A_NUMBER = "n/a"
SECONDS, BYTES = "seconds", "bytes"  # the two scalings a value's prefix can take (`Unit.scaling`)


class Unit(NamedTuple):
    """What a name ending in `suffix` holds: printed with `symbol` (scaled per `scaling`: SECONDS, BYTES or none)
    and drawn on an axis named in `axis`, its values divided by `axis_per` first (bytes are drawn in MiB)."""

    suffix: str
    symbol: str
    scaling: str = ""
    axis: str = ""
    axis_per: float = 1.0


# First match wins: "_s_per_request" before "_s", "_per_s" before "_s".
UNITS = (
    Unit("_s_per_request", "s/request", SECONDS, "s/request"),
    Unit("_bytes", "B", BYTES, "MiB", MIB),
    Unit("_kib", "KiB", axis="KiB"),
    Unit("_mib", "MiB", axis="MiB"),
    Unit("_mb", "MB", axis="MB"),
    Unit("_ms", "ms", axis="ms"),
    Unit("_us", "\N{MICRO SIGN}s", axis="\N{MICRO SIGN}s"),
    Unit("_pct", "%", axis="%"),
    Unit("_rps", "req/s", axis="req/s"),
    Unit("_per_s", "/s", axis="/s"),
    Unit("_s", "s", SECONDS, "s"),
    Unit("_count", "", axis="count"),  # a count prints bare; an axis still says what it counts
)
_SECOND_PREFIXES = ((1.0, ""), (1e-3, "m"), (1e-6, "\N{MICRO SIGN}"), (1e-9, "n"))
_BINARY_PREFIXES = ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


# --- conversions -------------------------------------------------------------------------------------


def bytes_to_mib(values):
    """Bytes (a number or a Series, coerced to numbers) in MiB (2**20 bytes)."""
    return _numeric(values) / MIB


def seconds_to_ms(values):
    """Seconds in milliseconds."""
    return 1e3 * _numeric(values)


def seconds_to_us(values):
    """Seconds in microseconds."""
    return 1e6 * _numeric(values)


def fraction_to_pct(values):
    """A share (0.25) in per cent (25)."""
    return PERCENT * _numeric(values)


def _numeric(values):
    return pd.to_numeric(values, errors="coerce") if isinstance(values, pd.Series) else values


# --- names -------------------------------------------------------------------------------------------


def unit_entry(name: str) -> Unit | None:
    """The `UNITS` entry a unit-carrying name ends with, or None."""
    for unit in UNITS:
        if name.endswith(unit.suffix):
            return unit
    return None


def unit_of(name: str) -> str:
    """The unit symbol a name implies: ``latency_p99_ms`` -> "ms", ``memory_peak_bytes`` -> "B", else ""."""
    unit = unit_entry(name)
    return unit.symbol if unit else ""


def strip_unit(name: str) -> str:
    """``latency_p99_ms`` -> "latency p99": the name without its unit suffix, in words (hyphens kept)."""
    unit = unit_entry(name)
    if unit is not None and unit.symbol:
        name = name[: -len(unit.suffix)]
    return name.replace("_", " ")


def axis_text(name: str) -> str:
    """A column's axis label from its name alone: ``latency_p99_s`` -> "latency p99 (s)", bytes -> "(MiB)"."""
    unit = unit_entry(name)
    if unit is None:
        return name.replace("_", " ")
    return f"{name[: -len(unit.suffix)].replace('_', ' ')} ({unit.axis})"


def axis_values(name: str, values) -> pd.Series:
    """`values` in the unit `axis_text(name)` names: bytes become MiB, everything else is unchanged."""
    numbers = pd.to_numeric(pd.Series(values), errors="coerce").astype(float)
    unit = unit_entry(name)
    return numbers / unit.axis_per if unit is not None and unit.axis_per != 1.0 else numbers


# --- printing ----------------------------------------------------------------------------------------


def format_number(value, digits: int = SIGNIFICANT_DIGITS) -> str:
    """1234.5678 -> "1,235", 0.012345 -> "0.01235", 7.0 -> "7", NaN -> "n/a"; strings pass through."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        return str(value)
    if isinstance(value, int | np.integer):
        return f"{value:,}"
    if not math.isfinite(value):
        return NOT_A_NUMBER
    if value == 0:
        return "0"
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"  # "g" drops trailing zeros: 7.0 -> "7"


def scale_for(value: float, unit: str) -> tuple[float, str]:
    """(factor, unit as printed) for `value` in `unit`: seconds get SI prefixes ("ms", "µs/request"), bytes binary
    ones ("MiB"), anything else none. Print ``value / factor`` with the unit."""
    finite = isinstance(value, int | float | np.integer | np.floating) and math.isfinite(value) and value != 0
    if unit == "B" and finite:
        for factor, prefixed in _BINARY_PREFIXES:
            if abs(value) >= factor:
                return float(factor), prefixed
    if unit.split("/")[0] == "s" and finite:
        for factor, prefix in _SECOND_PREFIXES:
            if abs(value) >= factor or factor == _SECOND_PREFIXES[-1][0]:
                return factor, prefix + unit
    return 1.0, unit


def with_unit(text: str, unit: str) -> str:
    """ "25" and "%" -> "25%"; "12" and "ms" -> "12 ms"; no unit, no space."""
    if not unit or text == NOT_A_NUMBER:
        return text
    return f"{text}%" if unit == "%" else f"{text} {unit}"


def format_quantity(value, unit: str = "", digits: int = SIGNIFICANT_DIGITS, missing: str = NOT_A_NUMBER) -> str:
    """A number with its unit, as a report prints it: (0.0123, "s") -> "12.3 ms", (3.1e7, "B") -> "29.56 MiB",
    (72150.0, "req/s") -> "72,150 req/s", (25, "%") -> "25%". Nothing measured (None, NaN) -> `missing`;
    text passes through."""
    if value is None or (isinstance(value, float | np.floating) and math.isnan(value)):
        return missing
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        return format_number(value)
    factor, printed = scale_for(value, unit)
    return with_unit(format_number(value / factor if factor != 1.0 else value, digits), printed)


def _ratio_text(value: float, digits: int = 3) -> str:
    return f"{value:,.0f}" if value >= 1000 else f"{value:.{digits}g}"


def format_ratio(value: float) -> str:
    """×1.09, ×0.0156, ×8,330: three significant digits, thousands separated."""
    if value is None or not math.isfinite(value):
        return NOT_A_NUMBER
    return f"\N{MULTIPLICATION SIGN}{_ratio_text(value)}"


def format_ratio_interval(ratio: float, low: float, high: float) -> str:
    """×1.03 [1.027, 1.033]: 3 significant digits, up to 5 where it takes more to tell the bounds apart."""
    for digits in (3, 4, 5):
        texts = [_ratio_text(v, digits) for v in (ratio, low, high)]
        if texts[1] != texts[2] or low == high:
            break
    return f"\N{MULTIPLICATION SIGN}{texts[0]} [{texts[1]}, {texts[2]}]"
