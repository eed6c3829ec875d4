"""Latency against offered load, and the knee: the rules on small tables of trial rows."""

import math

import pandas as pd
import pytest

from loadlab import latency_curve, plans


def trials(rows):
    """rows: (label, level, throughput_rps, latency_p99_s[, status, loadgen_saturated])."""
    frame = []
    for number, row in enumerate(rows, start=1):
        label, level, throughput, p99, *rest = row
        status, saturated = (rest + ["ok", False])[:2] if rest else ("ok", False)
        frame.append({"trial": number, "label": label, "level": level, "throughput_rps": throughput,
                      "rate_offered_rps": throughput, "latency_p50_s": p99 / 4, "latency_p99_s": p99,
                      "status": status, "failure_reason": None if status == "ok" else "stalled",
                      "loadgen_saturated": saturated, "server_cpu_throttled_period_share": 0.01})
    return pd.DataFrame(frame)


ASKED = {("go", 0.5): 1000.0, ("go", 0.8): 1600.0, ("go", 1.2): 2400.0}


def test_a_server_that_serves_less_than_it_is_offered_is_past_its_knee():
    data = trials([("go", 0.5, 1000, 0.001)] * 3 + [("go", 0.8, 1600, 0.002)] * 3 + [("go", 1.2, 1900, 0.004)] * 3)
    curve = latency_curve.latency_curve(data, ASKED)
    assert curve["past_knee"].tolist() == [False, False, True]
    assert curve.loc[2, "served_share"] == pytest.approx(1900 / 2400)
    (knee,) = latency_curve.knees(curve)
    assert (knee.below, knee.above) == (0.8, 1.2)
    assert "served 79% of the rate asked" in knee.text()
    assert "between 0.8 and 1.2 of the slowest capacity" in knee.text("of the slowest capacity")
    assert latency_curve.highest_level_below_knee(curve, "go") == 0.8


def test_a_tail_ten_times_its_light_load_value_is_past_the_knee_even_when_everything_is_served():
    data = trials([("go", 0.5, 1000, 0.001)] * 3 + [("go", 0.8, 1600, 0.011)] * 3)
    (knee,) = latency_curve.knees(latency_curve.latency_curve(data, ASKED))
    assert (knee.below, knee.above) == (0.5, 0.8) and "p99 11 ms" in knee.text()


def test_no_knee_up_to_the_top_level_and_a_knee_already_at_the_lowest():
    kept_up = latency_curve.knees(latency_curve.latency_curve(
        trials([("go", 0.5, 1000, 0.001)] * 3 + [("go", 0.8, 1600, 0.0015)] * 3), ASKED))[0]
    assert (kept_up.below, kept_up.above) == (0.8, None) and "no knee up to 0.8" in kept_up.text()
    overrun = latency_curve.knees(latency_curve.latency_curve(trials([("go", 0.5, 500, 0.2)] * 3), ASKED))[0]
    assert (overrun.below, overrun.above) == (None, 0.5) and "already at 0.5" in overrun.text()


def test_failed_and_loadgen_saturated_trials_are_left_out_of_the_medians():
    data = trials([("go", 0.5, 1000, 0.001)] * 3 + [("go", 0.5, 10, 5.0, "failed", False),
                                                    ("go", 0.5, 20, 5.0, "ok", True)])
    row = latency_curve.latency_curve(data, ASKED).iloc[0]
    assert (row["trials_used"], row["trials_left_out"]) == (3, 2)
    assert row["latency_p99_s"] == pytest.approx(0.001) and not row["past_knee"]
    only_left_out = latency_curve.latency_curve(data[data["throughput_rps"] < 100], ASKED).iloc[0]
    assert only_left_out["past_knee"] is None and math.isnan(only_left_out["latency_p99_s"])


def test_the_open_loop_offers_each_server_fractions_of_its_own_capacity_with_bounded_requests_in_flight():
    capacities = {"go": 9_400.0, "java-platform": 5_877.0, "rust": 9_450.0, "python": 4_500.0}
    experiment = plans.runtime_overhead_latency("quick", capacities)
    rates = {c["condition"]: c["config"].rate_rps for c in experiment.conditions()}
    assert rates["go@f0.8"] == round(0.8 * 9_400) and rates["rust@f0.8"] == round(0.8 * 9_450)
    assert rates["java-platform@f1.2"] == round(1.2 * 5_877)  # every server past its own knee
    assert {c["label"] for c in experiment.conditions()} == {"go", "java-platform", "rust"}
    configs = {c["label"]: c["config"] for c in experiment.conditions()}
    assert {c.max_in_flight for c in configs.values()} == {plans.LATENCY_MAX_IN_FLIGHT}
    assert {c.open_loop_generator for c in configs.values()} == {"openloop"}
    # Each server runs at the quota its capacity was measured under (S1's closed loop).
    assert {label: c.cpu_quota for label, c in configs.items()} == {
        "go": plans.S1_SERVER_QUOTAS["go"], "rust": plans.S1_SERVER_QUOTAS["rust"], "java-platform": None}


def test_s4s_open_loop_offers_go_and_swoole_their_own_fractions_with_s4s_400_in_flight():
    experiment = plans.io_coroutines_latency("quick", {"go": 30_000.0, "swoole": 25_000.0, "rust": 31_000.0})
    rates = {c["condition"]: c["config"].rate_rps for c in experiment.conditions()}
    assert rates["go@f0.5"] == 15_000 and rates["swoole@f1.2"] == 30_000
    assert {c["label"] for c in experiment.conditions()} == {"go", "swoole"}
    assert {c["config"].max_in_flight for c in experiment.conditions()} == {400}
    assert {c["config"].route for c in experiment.conditions()} == {"/io?ms=10"}


def test_a_level_without_a_usable_trial_is_named_not_taken_for_keeping_up():
    data = trials([("go", 0.5, 1000, 0.001)] * 3 + [("go", 0.8, 1600, 0.0012)] * 3
                  + [("go", 1.2, 300, 4.0, "ok", True)] * 3)
    (knee,) = latency_curve.knees(latency_curve.latency_curve(data, ASKED))
    assert (knee.below, knee.above) == (0.8, None)
    assert knee.text() == "go: no knee up to 0.8 of its capacity (kept up at every level; no usable trial at 1.2)"


def test_a_server_without_a_usable_trial_at_any_level_has_no_knee_and_says_why():
    # Met in a smoke run: every trial of one server had its loadgen saturated, so there is nothing to place a knee by.
    data = trials([("go", 0.5, 1000, 0.001, "ok", True)] * 2 + [("go", 1.2, 2000, 0.3, "ok", True)] * 2)
    (knee,) = latency_curve.knees(latency_curve.latency_curve(data, ASKED))
    assert (knee.below, knee.above) == (None, None)
    assert knee.text() == "go: no knee can be placed (no usable trial at 0.5, 1.2)"
    assert latency_curve.knee_levels(latency_curve.latency_curve(data, ASKED)) == {"go": None}


def test_a_latency_claim_steps_down_to_the_highest_level_below_both_knees_with_enough_usable_trials():
    """S1-p99 in the reference of 2026-11-29: below both knees at 0.8, where 2 of go's 6 trials were left out (the
    generator behind its schedule), so no interval at S1's family confidence existed there; 0.5 had 6 a side."""
    import pandas as pd

    from loadlab.judgements import open_loop
    from loadlab.judgements.s1 import FAMILY

    rows = []
    for level in (0.5, 0.8):
        for label in ("go", "rust"):
            for trial in range(6):
                behind = label == "go" and level == 0.8 and trial < 2
                rows.append({"label": label, "level": level, "status": "ok", "loadgen_saturated": behind,
                             "loadgen_behind": "own delay p99 over 1 ms" if behind else None,
                             "loadgen_cpu_utilization": 0.6})
    trials = pd.DataFrame(rows)
    need = open_loop.trials_needed(FAMILY)
    assert need == 6
    assert open_loop.usable_trials(trials, "go", 0.8) == 4
    assert open_loop.judged_level(trials, ("go", "rust"), [0.8, 0.8], need) == 0.5
    assert open_loop.judged_level(trials, ("go", "rust"), [0.8, 0.8]) == 0.8  # without a floor, as before
    text = open_loop.where_text(("go", "rust"), [0.8, 0.8], trials, 0.5, need)
    assert text == ("the highest level below both servers' knees with the 6 usable trials a side the interval "
                    "needs (at 0.8 go 4 and rust 6 usable: see the trials left out)")
    # No level has enough: the highest below both knees, where the verdict then says why it has no interval.
    assert open_loop.judged_level(trials[trials["level"] == 0.8], ("go", "rust"), [0.8, 0.8], need) == 0.8
    # A server past its knee everywhere: the lowest level, whatever the counts.
    assert open_loop.judged_level(trials, ("go", "rust"), [None, 0.8], need) == 0.5
