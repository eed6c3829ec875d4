"""loadlab.units: the one table of unit facts, and the one way a quantity or a ratio is printed."""

import ast
import math

import pandas as pd
import pytest

from loadlab import paths, units
from loadlab.units import MIB, axis_text, axis_values, format_quantity, format_ratio, format_ratio_interval


@pytest.mark.parametrize(
    ("value", "unit", "text"),
    [(3 * MIB, "B", "3 MiB"), (182e6, "B", "173.6 MiB"), (5 * 2**30, "B", "5 GiB"), (1536, "B", "1.5 KiB"),
     (512, "B", "512 B"), (0.0123, "s", "12.3 ms"), (4.2e-5, "s", "42 \N{MICRO SIGN}s"), (2.5, "s", "2.5 s"),
     (0.0, "s", "0 s"), (0.012, "s/request", "12 ms/request"), (72_150.0, "req/s", "72,150 req/s"),
     (12.0, "", "12"), (25.0, "%", "25%"), (361.24, "ms", "361.2 ms"), (42800, "/s", "42,800 /s"),
     (float("nan"), "s", "n/a"), (None, "B", "n/a"), (float("inf"), "B", "n/a"), ("8.4.24", "s", "8.4.24")],
)  # fmt: skip
def test_quantities_are_printed_with_their_unit_bytes_binary_and_seconds_prefixed(value, unit, text):
    assert format_quantity(value, unit) == text


def test_fewer_digits_and_a_word_for_nothing_measured():
    assert format_quantity(182e6, "B", digits=3) == "174 MiB"
    assert format_quantity(float("nan"), "B", missing="no evidence trial") == "no evidence trial"


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0897, "\N{MULTIPLICATION SIGN}1.09"), (0.015625, "\N{MULTIPLICATION SIGN}0.0156"),
     (8333.3, "\N{MULTIPLICATION SIGN}8,333"), (float("nan"), "n/a"), (None, "n/a")],
)  # fmt: skip
def test_ratios_are_printed_as_factors(value, text):
    assert format_ratio(value) == text


def test_a_ratio_interval_takes_the_digits_it_needs_to_tell_its_bounds_apart():
    assert format_ratio_interval(1.09, 1.07, 1.15) == "\N{MULTIPLICATION SIGN}1.09 [1.07, 1.15]"
    assert format_ratio_interval(1.03, 1.0271, 1.0329) == "\N{MULTIPLICATION SIGN}1.03 [1.027, 1.033]"


def test_conversions():
    assert units.bytes_to_mib(3 * MIB) == 3
    assert units.seconds_to_ms(0.25) == 250 and units.seconds_to_us(0.25) == 250_000
    assert units.fraction_to_pct(0.25) == 25
    assert units.bytes_to_mib(pd.Series(["1048576", None])).tolist()[0] == 1.0


@pytest.mark.parametrize(
    ("name", "unit", "words", "axis"),
    [("latency_p99_s", "s", "latency p99", "latency p99 (s)"), ("memory_peak_bytes", "B", "memory peak",
     "memory peak (MiB)"), ("gopark_per_s", "/s", "gopark", "gopark (/s)"), ("spawn_join_ms", "ms", "spawn join",
     "spawn join (ms)"), ("cpu_s_per_request", "s/request", "cpu", "cpu (s/request)"), ("gc_count", "", "gc count",
     "gc (count)"), ("label", "", "label", "label")],
)  # fmt: skip
def test_one_table_says_what_a_name_carries(name, unit, words, axis):
    assert units.unit_of(name) == unit
    assert units.strip_unit(name) == words
    assert axis_text(name) == axis


def test_bytes_are_drawn_in_mib_and_the_rest_as_recorded():
    assert axis_values("memory_peak_bytes", [2 * MIB]).tolist() == [2.0]
    assert axis_values("latency_p99_s", [0.5]).tolist() == [0.5]


def _definitions(tree: ast.Module):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node.name
        elif isinstance(node, ast.Assign):
            yield from (target.id for target in node.targets if isinstance(target, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            yield node.target.id


def test_units_and_their_printing_are_defined_in_units_alone():
    package = paths.ROOT / "src" / "loadlab"
    only_in_units = {"MIB", "format_quantity", "format_ratio", "format_ratio_interval"}
    elsewhere = {f"{path.relative_to(package)}: {name}" for path in package.rglob("*.py") if path.name != "units.py"
                 or path.parent != package for name in _definitions(ast.parse(path.read_text())) if name in only_in_units}
    assert elsewhere == set()
    assert only_in_units <= set(_definitions(ast.parse((package / "units.py").read_text())))


def test_units_imports_nothing_of_loadlab():
    tree = ast.parse((paths.ROOT / "src" / "loadlab" / "units.py").read_text())
    imported = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert not [name for name in imported if name.startswith("loadlab") and name != "loadlab.errors"]
    assert math.isfinite(MIB)
