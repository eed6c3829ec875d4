"""The benchstat-style comparison table."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from loadlab.stats import (
    NOT_SIGNIFICANT,
    compare_conditions,
    holm_adjust,
    holm_adjust_table,
    mann_whitney,
    median_ci,
    ratio_of_medians_ci,
    render_comparison_table,
)


def trials(server: str, values) -> list[dict]:
    return [{"server": server, "trial": i, "throughput_rps": v} for i, v in enumerate(values)]


@pytest.fixture
def data() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = trials("go-nethttp", 72_000 * rng.lognormal(0, 0.02, 10))
    rows += trials("rust-tokio", 120_000 * rng.lognormal(0, 0.02, 10))
    rows += trials("go-workerpool", 72_000 * rng.lognormal(0, 0.02, 10))
    rows += trials("java-platform", [38_000.0, 38_500.0, 37_900.0])
    rows += trials("java-virtual", [41_000.0, 40_500.0, 41_200.0])
    return pd.DataFrame(rows)


COMPARISONS = [("go-nethttp", "rust-tokio"), ("go-nethttp", "go-workerpool"), ("java-platform", "java-virtual")]


def test_each_column_agrees_with_the_building_blocks(data):
    table = compare_conditions(data, COMPARISONS, "throughput_rps", seed=4)
    row = table.iloc[0]
    baseline = data.loc[data.server == "go-nethttp", "throughput_rps"].to_numpy()
    candidate = data.loc[data.server == "rust-tokio", "throughput_rps"].to_numpy()
    assert tuple(row[["baseline_median", "baseline_ci_low", "baseline_ci_high"]]) == pytest.approx(
        median_ci(baseline)[:3]
    )
    ratio = ratio_of_medians_ci(baseline, candidate, seed=4)
    assert row["ratio"] == pytest.approx(ratio.ratio)
    assert row["delta_ci_low_pct"] == pytest.approx(100 * (ratio.ci_low - 1))
    assert row["p_value"] == pytest.approx(mann_whitney(baseline, candidate).p_value)
    assert table["p_holm"].to_numpy() == pytest.approx(holm_adjust(table["p_value"].to_numpy()))
    assert (row["n_baseline"], row["n_candidate"]) == (10, 10)
    assert row["cliffs_delta"] == 1.0 and row["cliffs_magnitude"] == "large"


def test_significance_and_tilde_follow_the_holm_adjusted_p(data):
    table = compare_conditions(data, COMPARISONS, "throughput_rps")
    assert table["significant"].tolist() == [True, False, False]
    text = render_comparison_table(table)
    lines = text.splitlines()
    rust_line = next(line for line in lines if "rust-tokio" in line)
    pool_line = next(line for line in lines if "go-workerpool" in line)
    assert "+6" in rust_line  # ~ +66 % more throughput
    assert f"  {NOT_SIGNIFICANT}  " in pool_line
    assert "Holm-adjusted over 3 comparisons" in text


def test_small_groups_carry_both_warnings_and_no_intervals(data):
    table = compare_conditions(data, COMPARISONS, "throughput_rps")
    java = table.iloc[2]
    assert "no U test can reach p<0.05" in java["warnings"] and "0.100" in java["warnings"]
    assert "no 95% CI on a median" in java["warnings"]
    assert math.isnan(java["baseline_ci_low"]) and math.isnan(java["ratio_ci_low"])
    text = render_comparison_table(table)
    assert "[no CI]" in text and "no CI" in text
    assert "no U test can reach p<0.05" in text


def test_outliers_are_flagged_and_kept(data):
    extra = pd.DataFrame(trials("go-nethttp", [20_000.0]))
    with_outlier = pd.concat([data, extra], ignore_index=True)
    table = compare_conditions(with_outlier, COMPARISONS[:1], "throughput_rps")
    assert table.iloc[0]["baseline_outliers"] >= 1
    assert table.iloc[0]["n_baseline"] == 11
    assert "Tukey outliers kept" in table.iloc[0]["warnings"]


def test_several_metrics_form_one_family_and_tables_can_be_combined(data):
    data = data.assign(latency_p99_s=1.0 / data["throughput_rps"])
    table = compare_conditions(data, COMPARISONS, ["throughput_rps", "latency_p99_s"])
    assert len(table) == 6
    assert table["p_holm"].to_numpy() == pytest.approx(holm_adjust(table["p_value"].to_numpy()))
    first = compare_conditions(data, COMPARISONS, "throughput_rps")
    second = compare_conditions(data, COMPARISONS, "latency_p99_s")
    combined = holm_adjust_table(pd.concat([first, second], ignore_index=True))
    assert combined["p_holm"].to_numpy() == pytest.approx(table["p_holm"].to_numpy())
    assert "ms" in render_comparison_table(table) or "µs" in render_comparison_table(table)


def test_missing_values_are_dropped_and_reported(data):
    extra = pd.DataFrame(trials("rust-tokio", [float("nan")]))
    table = compare_conditions(pd.concat([data, extra], ignore_index=True), COMPARISONS[:1], "throughput_rps")
    assert table.iloc[0]["n_candidate"] == 10
    assert "1 missing value(s) dropped" in table.iloc[0]["warnings"]


def test_unknown_columns_and_conditions_are_named(data):
    with pytest.raises(KeyError, match="memory_in_use_bytes"):
        compare_conditions(data, COMPARISONS, "memory_in_use_bytes")
    with pytest.raises(KeyError, match="php-swoole"):
        compare_conditions(data, [("go-nethttp", "php-swoole")], "throughput_rps")


