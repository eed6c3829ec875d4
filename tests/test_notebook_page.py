"""What the notebooks call instead of writing it in a cell: the page (study.open_page), the one-table plans
(loadlab.microbench_plans), and the readings and decisions moved out of cells."""

import ast
import math

import pandas as pd
import pytest
from conftest import committed_run

from loadlab import microbench_plans, pages, paths, plans, rundir, study
from loadlab.judgements import profiler_overhead, s1, s1_profiles, s4

TABLE_PLANS = (microbench_plans.isolation_windows, microbench_plans.goroutine_spawn_cost,
               microbench_plans.goroutine_spawn_benchmark, microbench_plans.thread_context_switches,
               microbench_plans.parked_select, microbench_plans.s2_in_process, microbench_plans.sqrt_latch,
               microbench_plans.sqrt_latch_fresh, microbench_plans.parked_threads)


@pytest.mark.parametrize("make", TABLE_PLANS, ids=[make.__name__ for make in TABLE_PLANS])
def test_a_table_plan_records_what_the_committed_run_recorded(make):
    # The sizes moved from the cells into the plans unchanged: quick's plan names the committed run's folder and
    # records its parameters as that run did.
    plan = make("quick")
    run = committed_run(plan.name)  # data/raw's, or the last quick run of one quick leaves out (tests/fixtures)
    assert run is not None, f"no committed run of {plan.name}"
    assert rundir.read_json(run / rundir.MANIFEST)["parameters"] == plan.parameters


@pytest.mark.parametrize("make", TABLE_PLANS, ids=[make.__name__ for make in TABLE_PLANS])
def test_a_table_plan_names_a_harness_function_that_takes_its_arguments(make):
    # Read from the harness's source: importing it would import Docker.
    for name in plans.SCALE_NAMES:
        plan = make(name)
        assert plan.name.endswith(f"-{name}")
        module, function = plan.function.split(".")
        harness = paths.ROOT / "src" / "loadlab" / "harness"
        sources = [harness / f"{module}.py"] if (harness / f"{module}.py").exists() else sorted((harness / module).glob("*.py"))
        [definition] = [node for source in sources for node in ast.parse(source.read_text()).body
                        if isinstance(node, ast.FunctionDef) and node.name == function]
        accepted = {argument.arg for argument in definition.args.args + definition.args.kwonlyargs}
        assert set(plan.arguments) <= accepted
        assert (definition.args.args[0].arg == "client") == plan.needs_engine
    with pytest.raises(Exception, match="scale"):
        make("enormous")


def test_a_study_gives_the_open_file_limits_its_trials_recorded():
    run = rundir.latest_run("01-runtime-overhead-quick")
    loaded = study.measure_or_load(plans.runtime_overhead("quick"), run_id=run.name)
    limits = loaded.open_file_limits()
    assert limits and all(isinstance(limit, int) and limit > 0 for limit in limits) and limits == sorted(set(limits))
    series = loaded.series_at_top_level()
    assert set(series["level"]) == {loaded.trials["level"].max()} and "memory_in_use_bytes" in series
    assert set(study.TRIAL_COLUMNS) <= set(loaded.with_trial_columns("latency"))


def test_open_page_sets_up_what_the_cells_use(tmp_path):
    page = study.open_page("03-json-api", "quick", None, figures_dir=tmp_path)
    assert page.figures == tmp_path / "03-json-api"
    assert "S3" in page.sources and all(claim_id in page.claims for claim_id in ("S1-spawn", "S3-throughput"))
    assert pd.get_option("display.width") == 200
    assert page.provenance.notebook == "03-json-api"


@pytest.mark.parametrize("ci_low, ci_high, effect", [
    (0.80, 0.95, profiler_overhead.COSTS), (1.02, 1.10, profiler_overhead.FASTER),
    (0.97, 1.03, profiler_overhead.NOT_TOLD_APART), (math.nan, math.nan, profiler_overhead.NOT_TOLD_APART)])
def test_a_profilers_interval_says_which_way_it_points(ci_low, ci_high, effect):
    assert profiler_overhead.overhead_effect(ci_low, ci_high) == effect


def test_the_overhead_lines_read_each_interval():
    table = pd.DataFrame([
        {"with": "go+pprof", "ratio": 0.9, "ci_low": 0.85, "ci_high": 0.95, "n_without": 6, "n_with": 6},
        {"with": "rust+perf", "ratio": 1.0, "ci_low": 0.96, "ci_high": 1.04, "n_without": 6, "n_with": 6},
        {"with": "odd", "ratio": 1.1, "ci_low": 1.05, "ci_high": 1.2, "n_without": 6, "n_with": 6},
        {"with": "none", "ratio": math.nan, "ci_low": math.nan, "ci_high": math.nan, "n_without": 0, "n_with": 0},
        {"with": "few", "ratio": 0.87, "ci_low": math.nan, "ci_high": math.nan, "n_without": 3, "n_with": 3}])
    lines = pages.overhead_lines(table).splitlines()
    assert len(lines) == 4
    # 3 + 3 trials have no exact 95% interval: said so, never "[nan, nan]" or "an overhead under about nan%".
    assert lines[3] == "- **few**: ×0.870, no interval: 3 + 3 trials are too few for an exact 95% one: a point estimate, not a test."
    assert "nan" not in pages.overhead_lines(table)
    assert "costs 5% to 15% of the throughput" in lines[0] and "~: not told apart" in lines[1]
    assert "faster with the profiler" in lines[2]
    assert pages.margin_sentence(None) == "" and "[0.971, 1.030]" in pages.margin_sentence(0.03)


def test_functions_are_ranked_only_with_enough_samples():
    rows = [{"trial": t, "function": f, "self_pct": share, "total_pct": share, "trial_samples": samples,
             "source": "pprof"} for t, samples in ((1, 500), (2, 500)) for f, share in (("a", 60.0), ("b", 40.0))]
    functions = pd.DataFrame(rows)
    ranked = s1_profiles.ranked_functions(functions, [1, 2])
    assert list(ranked["function"]) == ["a", "b"]
    assert "median share of samples" in pages.ranked_functions_heading("go", functions, [1, 2], ranked)
    few = functions.assign(trial_samples=s1_profiles.MIN_SAMPLES - 1)
    assert s1_profiles.ranked_functions(few, [1, 2]) is None
    assert "too few to rank" in pages.ranked_functions_heading("go", few, [1, 2], None)
    assert s1_profiles.enough_samples(s1_profiles.MIN_SAMPLES, 10**6) and not s1_profiles.enough_samples(1, 10**6)


def test_memory_per_in_flight_request_needs_two_levels():
    summary = pd.DataFrame({"label": ["go", "go", "swoole", "swoole"], "level": [40, 400] * 2,
                            "memory_peak_mib": [10.0, 13.6, 20.0, 20.0]})
    per = s4.memory_per_request_kib(summary)
    assert per["go"] == pytest.approx(3.6 * 1024 / 360) and per["swoole"] == 0
    assert s4.memory_per_request_kib(summary[summary["level"] == 40]).empty


def test_per_connection_columns_at_the_top_level_need_two_levels():
    trials = pd.DataFrame({"level": [100, 100], "label": ["go", "go"], "status": ["ok", "ok"]})
    assert s1.per_connection_at_top_level(trials).empty


def test_the_verdict_list_names_the_pair_when_there_is_one():
    verdicts = [{"claim_id": "S3-cpu", "candidate": "rust", "baseline": "go", "verdict": "holds", "explanation": "x."},
                {"claim_id": "S1-flame-go", "candidate": None, "baseline": None, "verdict": "inconclusive",
                 "explanation": "y."}]
    assert pages.verdict_list(verdicts).splitlines() == ["- **S3-cpu** (rust / go): **holds.** x.",
                                                        "- **S1-flame-go**: **inconclusive.** y."]



def test_02_re_analysed_names_the_plan_its_run_measured_not_a_placeholder():
    """02 calibrates its CPU rounds only when it measures; re-analysed, it reads them off the run, so the plan it loads
    is the one the run measured and the page does not call the run 'measured under an earlier plan'."""
    name = plans.scheduler_calls("quick", 1, [1.0]).name
    manifest = study.recorded_manifest(name, "latest")
    if manifest is None:
        pytest.skip(f"no committed run of {name}")
    rounds = plans.s2_cpu_rounds(manifest)
    assert rounds is not None and rounds > 1_000  # millions of rounds make 10 ms here
    recorded = manifest.parameters["load"]
    plan = plans.scheduler_calls("quick", rounds, list(recorded["rate_rps"]))
    assert plan.load.route == recorded["route"]
    assert study.plan_differences(plan, manifest) == []
    assert study.recorded_manifest("no-such-experiment-quick", "latest") is None
