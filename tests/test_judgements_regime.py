"""CPU-bound or waiting (judgements.regime): per trial, per (label, level), and what a page says about a pair."""

import pandas as pd

from loadlab.judgements.regime import (CPU_BOUND, MIXED, WAITING, comparison_regimes, regime_differences, regime_summary,
                                       regime_text, trial_regime)


def _trials():
    return pd.DataFrame({"trial": [1, 2, 3, 4, 5, 6], "label": ["go"] * 3 + ["swoole"] * 3, "level": [400] * 6,
                         "server_cpu_pct_of_allowance": [95.0, 91.0, 60.0, 58.0, 57.0, 59.0]})


def test_a_trial_is_cpu_bound_at_90_percent_of_its_allowance():
    assert [trial_regime(v) for v in (90.0, 89.9, None, float("nan"))] == [CPU_BOUND, WAITING, None, None]


def test_the_summary_counts_trials_in_each_regime_and_takes_the_majority():
    summary = regime_summary(_trials()).set_index("label")
    assert summary.loc["go", ["cpu_bound_trials", "waiting_trials", "regime"]].tolist() == [2, 1, CPU_BOUND]
    assert summary.loc["swoole", "regime"] == WAITING and summary.loc["go", "median_cpu_pct_of_allowance"] == 91.0
    tie = regime_summary(_trials().query("trial in (1, 3)"))
    assert tie["regime"].tolist() == [MIXED]


def test_a_pair_in_different_regimes_and_a_source_in_another_are_said():
    by_label = comparison_regimes(_trials(), {"go": [1, 2, 3], "swoole": [4, 5, 6]})
    assert regime_text(by_label) == ("go CPU-bound (median 91% of its CPU allowance; 2 of 3 trials), swoole waiting "
                                     "(median 58% of its CPU allowance; 3 of 3 trials)")
    assert regime_differences(by_label, WAITING) == [
        "The servers compared were in different regimes (go CPU-bound, swoole waiting): the ratio mixes a server "
        "short of CPU with one that was not.",
        "go was not waiting as in the source: a host of another speed measures another regime."]
    same = comparison_regimes(_trials(), {"swoole": [4, 5, 6]})
    assert regime_differences(same, WAITING) == [] and regime_differences(same, None) == []
