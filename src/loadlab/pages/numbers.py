"""Numbers as a report prints them: a few significant digits, thousands separated, with units.

A report page never shows a Python repr (``{'go': 0.0}``) or a float with
sixteen digits: every number on a page goes through `format_number` (or the
pandas display options `use_report_display_options` installs), every mapping
through `format_mapping`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

SIGNIFICANT_DIGITS = 4
# Units of unit-carrying names (column and key suffixes), as a reader writes them.
UNIT_SUFFIXES = (
    ("_s_per_request", "s/request"), ("_bytes", "B"), ("_kib", "KiB"), ("_mib", "MiB"), ("_mb", "MB"), ("_ms", "ms"), ("_us", "\N{MICRO SIGN}s"), ("_pct", "%"),
    ("_rps", "req/s"), ("_per_s", "/s"), ("_s", "s"),
)  # fmt: skip
_BINARY_PREFIXES = ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))
# Seconds below one are written in ms or µs: "51.5 µs", not "5.15e-05 s".
_SECOND_PREFIXES = ((1.0, ""), (1e-3, "m"), (1e-6, "\N{MICRO SIGN}"), (1e-9, "n"))


def format_number(value, digits: int = SIGNIFICANT_DIGITS) -> str:
    """1234.5678 -> "1,235", 0.012345 -> "0.01235", 7.0 -> "7", NaN -> "n/a"; strings pass through."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):
        return "n/a"
    if value == 0:
        return "0"
    if abs(value) >= 10 ** (digits - 1):
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"  # "g" drops trailing zeros: 7.0 -> "7"


def unit_of(name: str) -> str:
    """The unit a unit-carrying name implies: ``latency_p99_ms`` -> "ms", ``memory_peak_bytes`` -> "B"."""
    for suffix, unit in UNIT_SUFFIXES:
        if name.endswith(suffix):
            return unit
    return ""


def strip_unit(name: str) -> str:
    """``latency_p99_ms`` -> "latency p99": the name without its unit suffix, in words (hyphens kept)."""
    for suffix, _ in UNIT_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name.replace("_", " ")


def format_quantity(value, unit: str = "") -> str:
    """A number with its unit: (182, "MB") -> "182 MB"; bytes get a binary prefix: 3.1e7 B -> "29.6 MiB";
    nothing measured (None, NaN) -> "no evidence trial"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "no evidence trial"
    finite = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    if unit == "B" and finite:
        for factor, prefix in _BINARY_PREFIXES:
            if abs(value) >= factor:
                return f"{format_number(value / factor)} {prefix}"
    if unit.split("/")[0] == "s" and finite and value != 0:
        for factor, prefix in _SECOND_PREFIXES:
            if abs(value) >= factor or factor == _SECOND_PREFIXES[-1][0]:
                return f"{format_number(value / factor)} {prefix}{unit}"
    text = format_number(value)
    if not unit or text == "n/a" or not isinstance(value, int | float):
        return text
    return f"{text}%" if unit == "%" else f"{text} {unit}"


def format_mapping(mapping: Mapping, unit: str = "", separator: str = " \N{MIDDLE DOT} ") -> str:
    """{"go": 182, "rust": 146} with unit "MB" -> "go 182 MB · rust 146 MB"; nested mappings in parentheses."""
    parts = []
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            parts.append(f"{strip_unit(str(key))} ({format_mapping(value, unit or unit_of(str(key)), ', ')})")
        else:
            parts.append(f"{strip_unit(str(key))} {format_quantity(value, unit or unit_of(str(key)))}")
    return separator.join(parts)


def use_report_display_options() -> None:
    """Pandas tables as a report prints them: floats as `format_number` does, text cells not cut short."""
    pd.set_option("display.float_format", format_number)
    pd.set_option("styler.format.formatter", format_number)
    pd.set_option("display.max_colwidth", 240)
