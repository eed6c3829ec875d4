"""A trial's profile captures -> tidy tables (loadlab.profile_tables), on fixtures written by the real tools.

The fixtures (tests/fixtures/profiles/README.md says how each was captured)
are copied into a trial's profiles/ folder under the names the capture
gives them; the tables must keep every sample the parsers read.
"""

import gzip
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from loadlab import profile_tables, profiles
from loadlab.harness import scheduler_calls, uprobes
from loadlab.judgements import s1_profiles, s2_scheduler

from conftest import FIXTURES

PROFILE_FIXTURES = Path(FIXTURES) / "profiles"


@pytest.fixture
def trial_profiles(tmp_path):
    directory = tmp_path / "profiles"
    directory.mkdir()
    shutil.copy(PROFILE_FIXTURES / "go-cpu.pb.gz", directory / "cpu.pb.gz")
    shutil.copy(PROFILE_FIXTURES / "jfr-jdk21.json.gz", directory / "jfr-samples.json.gz")
    (directory / "perf-script.txt.gz").write_bytes(gzip.compress((PROFILE_FIXTURES / "perf-script.txt").read_bytes()))
    shutil.copy(PROFILE_FIXTURES / "pyspy-raw.txt", directory / "py-spy-raw.txt")
    shutil.copy(PROFILE_FIXTURES / "gctrace-go1.26.txt", directory / "gctrace.txt")
    return directory


def test_cpu_stacks_keep_every_sample_of_every_profiler(trial_profiles):
    stacks = profile_tables.cpu_stacks(trial_profiles, 7)
    assert set(stacks["source"]) == {"pprof", "jfr", "perf", "py-spy"} and (stacks["trial"] == 7).all()
    expected = {
        "pprof": profiles.total_count(profiles.read_pprof_stacks(trial_profiles / "cpu.pb.gz", "samples")),
        "jfr": profiles.total_count(profiles.jfr_stacks(profiles.read_jfr_json(trial_profiles / "jfr-samples.json.gz"))),
        "perf": profiles.total_count(profiles.read_perf_script(trial_profiles / "perf-script.txt.gz")),
        "py-spy": profiles.total_count(profiles.read_pyspy_raw(trial_profiles / "py-spy-raw.txt")),
    }
    assert stacks.groupby("source")["samples"].sum().to_dict() == expected
    assert all(count > 0 for count in expected.values())


def test_cpu_functions_shares(trial_profiles):
    functions = profile_tables.cpu_functions(profile_tables.cpu_stacks(trial_profiles, 1))
    # Every sample has exactly one top frame: self shares sum to 100% per profile.
    assert functions.groupby("source")["self_pct"].sum().round(6).eq(100).all()
    assert (functions["total_pct"] >= functions["self_pct"]).all() and (functions["total_pct"] <= 100).all()
    # The fixture programs' hot loops (README.md: "known names") are where their CPU went.
    hot = functions.set_index(["source", "function"])["total_pct"]
    assert hot[("pprof", "main.hotXorshift")] > 10
    assert hot[("jfr", "JfrFixture.hotXorshift")] > 10
    assert functions[(functions["source"] == "py-spy") & functions["function"].str.startswith("hot_xorshift")]["total_pct"].max() > 10


def test_trial_shares_match_the_function_table(trial_profiles):
    stacks = profile_tables.cpu_stacks(trial_profiles, 3)
    shares = s1_profiles.trial_shares(stacks, {"hot": r"^main\.hotXorshift$"}, "pprof")
    functions = profile_tables.cpu_functions(stacks).set_index(["source", "function"])
    assert shares["hot_total_pct"].iloc[0] == pytest.approx(functions.loc[("pprof", "main.hotXorshift"), "total_pct"])
    assert shares["hot_self_pct"].iloc[0] == pytest.approx(functions.loc[("pprof", "main.hotXorshift"), "self_pct"])


def test_gc_cycles_keep_gctrace_detail(trial_profiles):
    cycles = profile_tables.gc_cycles(trial_profiles, 2)
    detail = profiles.read_gctrace(PROFILE_FIXTURES / "gctrace-go1.26.txt")
    assert len(cycles) == len(detail) > 0 and (cycles["trial"] == 2).all()
    assert {"heap_live_bytes", "cpu_mark_background_s", "cpu_mark_assist_s"} <= set(cycles.columns)


def test_perf_stat_counts_of_uprobes():
    # perf stat -a -x, on three uprobes of the Go fixture program (programs/capture-uprobes.sh).
    counts = uprobes.parse_stat_csv((PROFILE_FIXTURES / "perf-stat-uprobes.csv").read_text())
    assert set(counts) == {"fixture:gopark", "fixture:mcall", "fixture:findRunnable"}
    assert all(value > 0 for value in counts.values())
    # Every park goes through mcall (gopark -> mcall(park_m)); mcall has other callers too.
    assert counts["fixture:mcall"] >= counts["fixture:gopark"]


def test_perf_stat_interval_counts_of_uprobes():
    text = (PROFILE_FIXTURES / "perf-stat-uprobes-interval.csv").read_text()
    rows = scheduler_calls.parse_interval_csv(text)
    assert set(rows["event"]) == {"fixture:gopark", "fixture:mcall", "fixture:findRunnable"}
    for _, per_event in rows.groupby("event"):
        assert per_event["t_s"].is_monotonic_increasing and len(per_event) == 3
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(rows) == len(lines) and rows["calls"].sum() == sum(int(line.split(",")[1]) for line in lines)


def test_probe_counts_table(tmp_path):
    counts = uprobes.parse_stat_csv((PROFILE_FIXTURES / "perf-stat-uprobes.csv").read_text())
    calls = {"runtime." + event.split(":")[1]: value for event, value in counts.items()}
    (tmp_path / "uprobe-counts.json").write_text(json.dumps({"window_s": 2.0, "calls": calls}))
    table = profile_tables.probe_counts(tmp_path, 4)
    assert list(table.columns) == list(profile_tables.PROBE_COLUMNS)
    assert table.set_index("function")["calls_per_s"].to_dict() == {f: c / 2.0 for f, c in calls.items()}
    assert profile_tables.probe_counts(tmp_path / "none", 4) is None


def test_gopark_rates_from_counts_per_second():
    frame = pd.DataFrame([
        {"goroutines": 32, "repetition": 0, "second": s, "t_from_spawn_s": s - 3.5, "phase": phase,
         "function": "runtime.gopark", "calls": calls, "interval_s": 1.0, "run_id": "r"}
        for s, phase, calls in ((1, "before", 0), (2, "before", 0), (3, "spawn", 34), (4, "parked", 0),
                                (5, "parked", 1), (6, "exit", 2))])
    rates = s2_scheduler.parked_rates(frame).set_index("function").loc["runtime.gopark"]
    assert rates["spawn_second_calls"] == 34 and rates["parked_calls_per_s"] == 0.5 and rates["parked_seconds"] == 2.0


def _counted_trials(rows):
    """02-scheduler-calls rows as with_probe_counts leaves them: (level, answered req/s, mcall calls/s)."""
    frame = pd.DataFrame([{"trial": i, "label": "go-nethttp", "level": level, "status": "ok", "loadgen_saturated": False,
                           "throughput_rps": answered, "mcall_per_s": per_s}
                          for i, (level, answered, per_s) in enumerate(rows)])
    return frame.assign(mcall_per_request=frame["mcall_per_s"] / frame["throughput_rps"].replace(0, np.nan))


def test_s2_mcall_counts_per_request_only_where_the_probed_server_kept_up():
    from loadlab import claims

    claim = claims.load_claims()[1]["S2-mcall"]
    # Numbers as the probed go-nethttp gave them on 2026-11-28: at 5 req/s it kept up, 4,300 calls a request; at
    # 500 req/s it answered 0.1-0.2 req/s, so its calls per answered request (235,000-470,000) mean nothing.
    kept = _counted_trials([(5, 5.0, 21_500), (5, 5.0, 21_600), (500, 0.1, 47_000), (500, 0.2, 46_700)])
    verdict = s2_scheduler.mcall(kept, claim, "02", "run")
    assert verdict.measured["per_request"] == pytest.approx(4_310, rel=0.01)
    # Scaled by the 400 requests S2's 4 cores complete at 10 ms each, not the 2,000 it offered.
    assert verdict.measured["at_source_rate_per_s"] == pytest.approx(4_310 * 400, rel=0.01)
    assert verdict.verdict == "holds" and "behind its load" in verdict.explanation
    # Counted only in overload: nothing transfers to S2's machine.
    overload = _counted_trials([(500, 0.1, 47_000), (500, 0.2, 46_700)])
    assert s2_scheduler.mcall(overload, claim, "02", "run").verdict == "inconclusive"
    # A loop that yielded 100 times less often: the same 400 req/s is 17,000 calls/s, over 10 times below the claim.
    rare = _counted_trials([(5, 5.0, 215), (5, 5.0, 216)])
    assert s2_scheduler.mcall(rare, claim, "02", "run").verdict == "contradicted"
