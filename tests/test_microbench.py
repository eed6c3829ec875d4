"""Spawn-cost microbenchmarks: the JSON-lines parser on captured output, and one Docker run.

Fixtures in tests/fixtures/microbench/ are the programs' real stdout; their
README gives the exact command of each.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from loadlab.config import interleave
from loadlab.errors import ParameterError, TrialFailure
from loadlab.harness import container, microbench

FIXTURES = Path(__file__).parent / "fixtures" / "microbench"


def fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text()


# The spawn-cost programs' lines (iterations, warm-ups); S2's in-process program prints seconds instead.
ALL_FIXTURES = sorted(path.name for path in FIXTURES.glob("*.jsonl") if "s2-inprocess" not in path.name)
S2_FIXTURES = {design: f"go-s2-inprocess-{design}-200rps-3s.jsonl" for design in microbench.S2_DESIGNS}


def test_there_are_fixtures_for_every_program_and_bench():
    assert {"go-sleepers-100000.jsonl", "jdk21-platform-sleepers-10000.jsonl", "jdk21-virtual-sleepers-10000.jsonl",
            "jdk21-platform-sqrt_latch-10000.jsonl", "jdk25-virtual-switches-10000.jsonl"} <= set(ALL_FIXTURES)


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_every_captured_line_parses_to_one_row(name):
    text = fixture_text(name)
    frame = microbench.parse_output(text)
    assert len(frame) == len([line for line in text.splitlines() if line.strip()])
    for column in microbench.REQUIRED_FIELDS + ("version", "iteration", "warmup"):
        assert column in frame.columns
    assert frame["tasks"].dtype.kind == "i"
    assert frame["warmup"].dtype == bool


def test_s2_in_process_lines_keep_the_seconds_and_the_totals():
    for design, name in S2_FIXTURES.items():
        frame = microbench.tidy(microbench.parse_output(fixture_text(name)))
        assert list(frame["event"].iloc[[0, -1]]) == ["calibrated", "done"]
        seconds = frame[frame["event"] == "second"]
        assert (seconds["second"].diff().dropna() == 1).all() and (seconds["completed"].diff().dropna() >= 0).all()
        done = frame.iloc[-1]
        assert done["design"] == design and done["goroutines_peak"] == seconds["goroutines"].max()
        assert done["throughput_rps"] == pytest.approx(done["completed_in_window"] / done["duration_s"])
    spawn = microbench.parse_output(fixture_text(S2_FIXTURES["spawn"])).iloc[-1]
    pool = microbench.parse_output(fixture_text(S2_FIXTURES["pool"])).iloc[-1]
    # 200 req/s of 10 ms CPU on one core: a goroutine per request piles up, the pool stays at its workers.
    assert spawn["goroutines_peak"] > 100 and pool["goroutines_peak"] <= 12 + 4


def test_go_sleepers_keep_every_runtime_field_with_its_type():
    frame = microbench.parse_output(fixture_text("go-sleepers-100000.jsonl"))
    row = frame.iloc[0]
    assert (row["runtime"], row["model"], row["bench"], row["tasks"]) == ("go", "goroutine", "sleepers", 100_000)
    assert row["version"].startswith("go1.")
    for column in ("stack_inuse_delta_bytes", "heap_delta_bytes", "rss_delta_bytes", "threads", "gc_cycles_delta",
                   "voluntary_ctxt_switches_delta", "minor_faults_delta"):
        assert frame[column].dtype.kind == "i", column
    for column in ("spawn_s", "join_s", "spawn_cpu_s", "join_cpu_s"):
        assert frame[column].dtype.kind == "f", column
    assert row["ctxt_switches_source"] == "getrusage(RUSAGE_SELF)"


def test_go_iterations_in_one_process_are_numbered_from_zero():
    frame = microbench.parse_output(fixture_text("go-sleepers-10000-2it.jsonl"))
    assert list(frame["iteration"]) == [0, 1]
    assert not frame["warmup"].any()


def test_tidy_derives_per_task_columns_from_the_deltas():
    raw = microbench.parse_output(fixture_text("go-sleepers-100000.jsonl"))
    tidy = microbench.tidy(raw)
    row, source = tidy.iloc[0], raw.iloc[0]
    assert row["condition"] == "go"
    assert row["rss_per_task_bytes"] == source["rss_delta_bytes"] / 100_000
    assert row["stack_inuse_per_task_bytes"] == source["stack_inuse_delta_bytes"] / 100_000
    assert row["heap_per_task_bytes"] == source["heap_delta_bytes"] / 100_000
    assert row["ctxt_switches_delta"] == (
        source["voluntary_ctxt_switches_delta"] + source["nonvoluntary_ctxt_switches_delta"]
    )
    assert row["live_threads_ctxt_switches_delta"] == (
        source["live_threads_voluntary_ctxt_switches_delta"] + source["live_threads_nonvoluntary_ctxt_switches_delta"]
    )
    assert row["threads_delta"] == source["threads"] - source["threads_before"]
    assert row["spawn_per_task_s"] == pytest.approx(source["spawn_s"] / 100_000)
    assert "elapsed_ms" not in tidy  # no elapsed_s in a sleepers line
    assert "rss_delta_bytes" in tidy and "rss_delta_bytes" in raw  # tidy adds, never drops
    assert "condition" not in raw  # and works on a copy


def test_tidy_names_java_conditions_as_the_claims_do():
    frame = microbench.tidy(pd.concat([
        microbench.parse_output(fixture_text("jdk21-platform-sleepers-10000.jsonl")),
        microbench.parse_output(fixture_text("jdk21-virtual-sleepers-10000.jsonl")),
    ], ignore_index=True))
    assert list(frame["condition"]) == ["java-platform", "java-virtual"]
    assert frame["thread_stack_size_kb"].tolist() == [1024, 1024]
    platform = frame.iloc[0]
    # A platform thread per task: N more OS threads while parked, each reserving its stack.
    assert platform["threads_delta"] == 10_000
    # (about: HotSpot counts its guard pages inside ThreadStackSize)
    assert platform["vm_size_per_task_bytes"] >= 0.9 * platform["thread_stack_size_kb"] * 1024


def test_sqrt_latch_lines_flag_warmups_and_convert_elapsed_to_ms():
    frame = microbench.tidy(microbench.parse_output(fixture_text("jdk21-virtual-sqrt_latch-10000.jsonl")))
    assert list(frame["warmup"]) == [True, True, False, False, False]
    assert list(frame["iteration"]) == [0, 1, 0, 1, 2]
    assert frame["elapsed_ms"].tolist() == pytest.approx((frame["elapsed_s"] * 1000).tolist())
    # Every iteration computed the same square roots (0..9999): the JIT dropped none.
    assert frame["checksum"].nunique() == 1
    assert frame["checksum"].iloc[0] == pytest.approx(sum(math.sqrt(k) for k in range(10_000)))
    assert frame["peak_rss_delta_bytes"].notna().all()


def test_switch_lines_carry_a_background_and_a_net_count():
    frame = microbench.tidy(microbench.parse_output(fixture_text("jdk25-platform-switches-10000.jsonl")))
    row = frame.iloc[-1]
    assert row["sleep_ms"] == 1
    assert row["background_ctxt_switches_delta"] == (
        row["background_voluntary_ctxt_switches_delta"] + row["background_nonvoluntary_ctxt_switches_delta"]
    )
    assert row["ctxt_switches_net_of_background_delta"] == (
        row["ctxt_switches_delta"] - row["background_ctxt_switches_delta"]
    )
    assert row["ctxt_switches_per_task"] == row["ctxt_switches_delta"] / 10_000


def test_a_null_measure_becomes_nan_not_an_error():
    # The line spawn-java prints when getrusage cannot be called: the same fields, null.
    record = json.loads(fixture_text("jdk21-virtual-sleepers-10000.jsonl").splitlines()[0])
    record.update(voluntary_ctxt_switches_delta=None, nonvoluntary_ctxt_switches_delta=None,
                  ctxt_switches_source="unavailable: test")
    frame = microbench.tidy(microbench.parse_output(json.dumps(record)))
    assert math.isnan(frame.loc[0, "ctxt_switches_delta"])
    assert frame.loc[0, "live_threads_ctxt_switches_delta"] >= 0


def test_blank_lines_are_skipped():
    text = fixture_text("jdk25-virtual-switches-10000.jsonl")
    assert len(microbench.parse_lines("\n" + text.replace("\n", "\n\n"))) == len(text.strip().splitlines())


def test_an_empty_output_is_an_empty_frame():
    frame = microbench.parse_output("")
    assert frame.empty and list(frame.columns) == list(microbench.REQUIRED_FIELDS)
    assert microbench.tidy(frame).empty


@pytest.mark.parametrize("bad, message", [
    # What the JDK writes when native access is not enabled (on stderr, never on stdout).
    ("WARNING: A restricted method in java.lang.foreign.Linker has been called", "line 2 is not JSON"),
    ("[1, 2, 3]", "line 2 is not a JSON object"),
    ('{"runtime": "go", "tasks": 10}', "line 2 lacks model, bench"),
])
def test_anything_but_json_objects_is_an_error_naming_the_line(bad, message):
    good = fixture_text("go-sleepers-100000.jsonl").splitlines()[0]
    with pytest.raises(microbench.MicrobenchOutputError, match=message):
        microbench.parse_output(good + "\n" + bad + "\n")


def test_a_truncated_line_is_an_error():
    line = fixture_text("go-sleepers-100000.jsonl").splitlines()[0]
    with pytest.raises(ValueError, match="line 1 is not JSON"):
        microbench.parse_lines(line[: len(line) // 2])


def test_commands():
    assert microbench.go_command(1000) == ["spawn-go", "--tasks", "1000", "--iterations", "1"]
    assert microbench.java_command("virtual", "switches", 10_000, warmup=2, iterations=5, sleep_ms=1) == [
        "spawn-java", "--mode", "virtual", "--bench", "switches", "--tasks", "10000",
        "--warmup", "2", "--iterations", "5", "--sleep-ms", "1",
    ]
    assert microbench.condition_command("java-platform", "sleepers", 10) == [
        "spawn-java", "--mode", "platform", "--bench", "sleepers", "--tasks", "10",
    ]
    assert microbench.image_tag("25") == "loadlab/microbench:jdk25"


def test_the_jdks_are_java_threads_own_build_arguments():
    from loadlab.servers import get_server

    variants = get_server("java-threads").variants
    assert microbench.jdk_build_args() == {"21": variants["jdk21"], "25": variants["jdk25"]}


@pytest.mark.parametrize("call, parameter", [
    (lambda: microbench.go_command(0), "tasks"),
    (lambda: microbench.go_command(True), "tasks"),
    (lambda: microbench.java_command("green", "sleepers", 10), "model"),
    (lambda: microbench.java_command("virtual", "fib", 10), "bench"),
    (lambda: microbench.java_command("virtual", "sleepers", 10, sleep_ms=1), "sleep_ms"),
    (lambda: microbench.condition_command("go", "sqrt_latch", 10), "bench"),
    (lambda: microbench.condition_command("rust", "sleepers", 10), "condition"),
    (lambda: microbench.image_tag("17"), "jdk"),
    # run() checks its parameters before it touches Docker (no client needed).
    (lambda: microbench.run(None, "spawn-go --tasks 10"), "program_args"),
    (lambda: microbench.run(None, []), "program_args"),
    (lambda: microbench.run(None, ["spawn-go"], cpuset="one"), "cpuset"),
    (lambda: microbench.run(None, ["spawn-go"], repetitions=0), "repetitions"),
    (lambda: microbench.run(None, ["spawn-go"], memory_limit_bytes=1024), "memory_limit_bytes"),
    (lambda: microbench.run(None, ["spawn-go"], timeout_s=0), "timeout_s"),
])
def test_bad_parameters_are_parameter_errors(call, parameter):
    with pytest.raises(ParameterError) as raised:
        call()
    assert raised.value.parameter == parameter


def test_conditions_are_interleaved_once_per_block_in_a_seeded_order():
    # The microbenchmarks order their runs with the experiments' interleaving (loadlab.config).
    order = interleave(["a", "b", "c"], blocks=4, seed=7)
    assert order == interleave(["a", "b", "c"], blocks=4, seed=7)
    for repetition in range(4):
        assert sorted(c for r, c in order if r == repetition) == ["a", "b", "c"]
    assert len({tuple(c for r, c in order if r == k) for k in range(4)}) > 1  # not one fixed order


@pytest.mark.docker
def test_the_image_runs_every_program_and_leaves_no_container(docker_client):
    client = docker_client
    microbench.build(client, jdk="21", log=lambda m: None)
    run_id = "test-microbench"
    container.clean(client, run_id)
    options = dict(run_id=run_id, timeout_s=300)
    try:
        frames = [
            microbench.run(client, microbench.go_command(1000), repetitions=2, **options),
            microbench.run(client, microbench.java_command("platform", "sleepers", 1000), **options),
            microbench.run(client, microbench.java_command("virtual", "sleepers", 1000), **options),
        ]
        sleepers = microbench.tidy(pd.concat(frames, ignore_index=True))
        assert list(sleepers["condition"]) == ["go", "go", "java-platform", "java-virtual"]
        assert list(sleepers["repetition"]) == [0, 1, 0, 0]
        assert (sleepers["jdk"] == "21").all() and (sleepers["run_id"] == run_id).all()
        for column in ("spawn_s", "join_s", "spawn_cpu_s"):
            assert (sleepers[column] > 0).all(), column
        # A JVM's RSS moves by megabytes on its own (JIT arenas and compiler threads come and
        # go): more than 1,000 virtual threads add, so RSS is checked where it dominates.
        assert (sleepers.loc[sleepers["condition"] != "java-virtual", "rss_delta_bytes"] > 0).all()
        assert (sleepers["ctxt_switches_delta"] >= 0).all()
        assert sleepers["version"].str.startswith("21").sum() == 2
        by_condition = sleepers.set_index("condition")
        assert (by_condition.loc["go", "stack_inuse_per_task_bytes"] > 0).all()
        assert (by_condition.loc["go", "threads"] < 100).all()  # goroutines are not threads
        platform, virtual = by_condition.loc["java-platform"], by_condition.loc["java-virtual"]
        assert platform["threads_delta"] >= 1000  # a thread each, all parked at once
        assert virtual["threads_delta"] < 100  # carriers only
        # About 1 MiB of address space each (HotSpot's guard pages are inside ThreadStackSize).
        assert platform["vm_size_per_task_bytes"] >= 0.9 * platform["thread_stack_size_kb"] * 1024
        assert virtual["heap_delta_bytes"] > 0  # parked virtual threads live on the heap

        latch = microbench.tidy(microbench.run(
            client, microbench.java_command("virtual", "sqrt_latch", 1000, warmup=1, iterations=2), **options))
        assert list(latch["warmup"]) == [True, False, False]
        assert (latch["elapsed_ms"] > 0).all() and latch["checksum"].nunique() == 1
        # Virtual threads: ThreadMXBean counts platform threads, so only carriers can add to the peak.
        assert (latch["peak_live_platform_threads"] - latch["live_platform_threads_before"] <= 64).all()
        fresh = microbench.tidy(microbench.run(
            client, microbench.java_command("platform", "sqrt_latch", 1000, warmup=0, iterations=1), **options))
        assert len(fresh) == 1 and not fresh["warmup"].iloc[0]
        # 1,000 platform threads started: the peak holds at least one of them and at most all.
        assert 1 <= int(fresh["peak_live_platform_threads"].iloc[0] - fresh["live_platform_threads_before"].iloc[0]) <= 1000

        with pytest.raises(TrialFailure) as failed:
            microbench.run(client, ["spawn-go", "--tasks", "0"], **options)
        assert failed.value.reason == "microbench-failed" and "usage" in failed.value.logs
    finally:
        left = [box.name for box in container.leftovers(client, run_id)]
        container.clean(client, run_id)
    assert left == []


@pytest.mark.docker
def test_s2_in_process_piles_goroutines_up_in_the_spawn_design_and_not_in_the_pool(docker_client):
    run_id = "pytest-s2-inprocess"
    container.clean(docker_client, run_id)
    try:
        frame = microbench.s2_in_process(docker_client, rate_rps=200, duration_s=3, repetitions=1, run_id=run_id,
                                         memory_limit_bytes=256 * 1024**2)
        left = [box.name for box in container.leftovers(docker_client, run_id)]
    finally:
        container.clean(docker_client, run_id)
    assert not left
    done = frame[frame["event"] == "done"].set_index("design")
    assert set(done.index) == {"spawn", "pool"} and not frame["oom_killed"].any()
    # The backlog grows as goroutines in the spawn design; the pool runs its 12 workers and a few of its own.
    assert done.loc["spawn", "goroutines_peak"] > 100
    assert done.loc["pool", "goroutines_peak"] <= 12 + 4
    seconds = frame[(frame["event"] == "second") & (frame["design"] == "spawn")]
    assert seconds["goroutines"].is_monotonic_increasing


@pytest.mark.docker
def test_parked_goroutines_park_once_and_the_uprobe_counts_each_park(docker_client):
    from loadlab.harness import scheduler_calls, uprobes
    from loadlab.judgements import s2_scheduler

    missing = uprobes.available()
    if missing:
        pytest.skip(f"uprobes cannot be counted here: {missing}")
    run_id = "test-parked-select"
    container.clean(docker_client, run_id)
    try:
        frame = scheduler_calls.parked_select(docker_client, goroutines=(50,), repetitions=1, hold_s=2, run_id=run_id)
    finally:
        left = [box.name for box in container.leftovers(docker_client, run_id)]
        container.clean(docker_client, run_id)
    assert left == []
    assert set(frame["phase"]) >= {"before", "spawn", "parked"}
    rates = s2_scheduler.parked_rates(frame).set_index("function")
    # 50 goroutines each park once when they start (plus the runtime's own), then nothing wakes them.
    assert rates.loc["runtime.gopark", "spawn_second_calls"] >= 50
    assert rates.loc["runtime.gopark", "parked_calls_per_s"] < 50
    assert rates.loc["runtime.mcall", "spawn_second_calls"] >= 50


def test_s2_feasibility_is_judged_on_s2s_own_program_with_what_one_core_completed():
    """S2-feasibility on the captured in-process lines: the arithmetic on S2's numbers, and what the program completed
    here (its calibrated CPU per request from its own first line)."""
    from loadlab.judgements import s2_inprocess
    from loadlab.judgements.rule import IMPOSSIBLE

    frames = []
    for process, design in enumerate(("spawn", "pool")):
        frame = microbench.tidy(microbench.parse_output(fixture_text(S2_FIXTURES[design])))
        frames.append(frame.assign(process=process, oom_killed=False))
    lines = pd.concat(frames, ignore_index=True)
    parameters = {"rate_rps": 200.0, "duration_s": 3.0, "cpu_ms": 10.0}
    verdict = s2_inprocess.feasibility(lines, "02-worker-pool-vs-unbounded", "run-x", parameters)
    table = s2_inprocess.processes(lines, 3.0)
    assert verdict.claim_id == "S2-feasibility" and verdict.verdict == IMPOSSIBLE
    assert verdict.measured["max_served_rps"] == pytest.approx(table["throughput_rps"].max())
    assert verdict.measured["served_rps_pool12"] > verdict.measured["served_rps_unbounded"]
    # 200 req/s of 10 ms on one core: the pool completes about the core's 100 a second, never the rate offered.
    assert 50 < verdict.measured["served_rps_pool12"] < 110
    assert verdict.measured["cpu_ms_per_request"] == pytest.approx(10.0, rel=0.01)
    assert "at most 400 req/s" in verdict.explanation and "of the 200 offered" in verdict.explanation
