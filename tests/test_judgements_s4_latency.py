"""S4-latency on an open loop: the mean S4 names, at the highest fraction below both servers' knees."""

import pandas as pd

from loadlab import claims, plans
from loadlab.judgements import rule, s4
from loadlab.manifest import Manifest

SOURCES, CLAIMS = claims.load_claims()


def open_loop_run(swoole_mean_ms: float):
    """Six trials a condition: go and swoole at 0.5, 0.8 and 1.2 of their own capacity; both keep up below 1.2."""
    experiment = plans.io_coroutines_latency("quick", {"go": 30_000.0, "swoole": 20_000.0})
    rows, number = [], 0
    for condition in experiment.conditions():
        label, level, rate = condition["label"], condition["level"], condition["config"].rate_rps
        for repetition in range(6):
            number += 1
            past = level > 1.0
            base_ms = {"go": 10.4, "swoole": swoole_mean_ms}[label] * (1 + 0.002 * repetition)
            mean_ms = base_ms * (30 if past else 1 + level / 10)
            rows.append({"trial": number, "label": label, "level": level, "status": "ok", "failure_reason": None,
                         "loadgen_saturated": False, "rate_offered_rps": rate,
                         "throughput_rps": rate * (0.8 if past else 1.0), "latency_mean_s": mean_ms / 1000,
                         "latency_p50_s": mean_ms / 1000, "latency_p99_s": 1.5 * mean_ms / 1000})
    manifest = Manifest(run_id="run-1", experiment=experiment.name, status="complete", parameters=experiment.to_dict())
    return pd.DataFrame(rows), manifest


def test_s4_latency_is_judged_on_the_mean_below_both_knees_and_says_so():
    trials, manifest = open_loop_run(swoole_mean_ms=12.0)
    verdict = s4.latency(trials, manifest, "run-1", CLAIMS["S4-latency"], "04-io-coroutines")
    assert verdict.claim_id == "S4-latency" and (verdict.baseline, verdict.candidate) == ("go", "swoole")
    assert "at 0.8 of each server's own capacity" in verdict.context
    assert "go 24,000 req/s, swoole 16,000 req/s" in verdict.context
    assert "openloop" in verdict.context and "Little's law" in verdict.context
    # Only the judged level's trials are evidence: 6 a side.
    assert verdict.n_baseline == verdict.n_candidate == 6


def test_without_swoole_in_the_open_loop_s4_latency_is_not_testable():
    trials, manifest = open_loop_run(swoole_mean_ms=12.0)
    verdict = s4.latency(trials[trials["label"] == "go"], manifest, "run-1", CLAIMS["S4-latency"], "04")
    assert verdict.verdict == rule.NOT_TESTABLE and "not both of go and swoole" in verdict.explanation


def test_the_littles_law_gap_is_told_from_cpu_share_and_the_time_beyond_the_sleep():
    # At 40 connections both idle, each request 11.0 / 10.6 ms; at 400, go had room (68% CPU), python did not (97%).
    rows = [{"label": label, "level": level, "trial": trial, "status": "ok", "loadgen_saturated": False,
             "server_cpu_pct_of_allowance": cpu, "latency_mean_ms": w, "throughput_rps": level / (w / 1e3)}
            for label, level, cpu, w in (("go", 40, 10, 11.0), ("python", 40, 16, 10.6),
                                         ("go", 400, 68, 12.6), ("python", 400, 97, 14.8))
            for trial in range(3)]  # fmt: skip
    text = s4.littles_law_gap_text(pd.DataFrame(rows))
    assert "overshoots by 0.6\N{EN DASH}1.0 ms" in text and "go 11.0 ms" in text
    room, full = text.split("These ran their core")
    assert "go 68% CPU, W 12.6 ms, 79% of the bound" in room and "python" not in room.split("At 400")[1]
    assert "python 97% CPU" in full
