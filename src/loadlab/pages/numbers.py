"""Numbers as a report prints them: a few significant digits, thousands separated, with units.

A report page never shows a Python repr (``{'go': 0.0}``) or a float with
sixteen digits: every number on a page goes through `format_number` (or the
pandas display options `use_report_display_options` installs), every mapping
through `format_mapping`. Numbers and units are printed by `loadlab.units`
(`format_number`, `format_quantity`), the one place that knows units.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from loadlab.units import format_number, format_quantity, strip_unit, unit_of

__all__ = ["NO_EVIDENCE", "format_mapping", "format_number", "use_report_display_options"]
# What a page prints where a verdict measured nothing (None, NaN).
NO_EVIDENCE = "no evidence trial"


def format_mapping(mapping: Mapping, unit: str = "", separator: str = " \N{MIDDLE DOT} ") -> str:
    """{"go": 182, "rust": 146} with unit "MB" -> "go 182 MB · rust 146 MB"; nested mappings in parentheses."""
    parts = []
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            parts.append(f"{strip_unit(str(key))} ({format_mapping(value, unit or unit_of(str(key)), ', ')})")
        else:
            parts.append(f"{strip_unit(str(key))} {format_quantity(value, unit or unit_of(str(key)), missing=NO_EVIDENCE)}")
    return separator.join(parts)


def use_report_display_options() -> None:
    """Pandas tables as a report prints them: floats as `format_number` does, text cells not cut short."""
    pd.set_option("display.float_format", format_number)
    pd.set_option("styler.format.formatter", format_number)
    pd.set_option("display.max_colwidth", 240)
