"""The run's scale (smoke, quick, full) is `--scale`; `--profile`, its name before 2026-11-28, still works for one
release, and a CPU profiler is `--profiler` (`--profile` there too, for one release)."""

import pytest

from loadlab import cli


@pytest.mark.parametrize("flag", ["--scale", "--profile"])
def test_notebooks_take_the_scale_under_its_name_and_its_old_one(flag):
    args = cli.build_parser().parse_args(["notebooks", flag, "smoke"])
    assert args.scale == "smoke"


def test_the_scale_defaults_to_quick():
    assert cli.build_parser().parse_args(["notebooks"]).scale == "quick"


@pytest.mark.parametrize("flag", ["--profiler", "--profile"])
def test_a_trial_takes_profilers_under_their_name_and_the_old_one(flag):
    args = cli.build_parser().parse_args(["trial", "--server", "go-nethttp", flag, "pprof", flag, "gctrace"])
    assert args.profiler == ["pprof", "gctrace"]


def test_quick_leaves_out_only_runs_no_verdict_reads_and_smoke_and_full_keep_them():
    from loadlab import plans
    from loadlab.errors import ParameterError

    for name in plans.LEFT_OUT_AT_QUICK:
        assert not plans.measured_at("quick", name)
        assert plans.measured_at("full", name) and plans.measured_at("smoke", name)
    # The runs verdicts are taken on stay at quick.
    for name in ("00-aa-noise", "01-runtime-overhead", "01-open-loop-latency", "02-s2-inprocess",
                 "02-scheduler-calls", "04-io-coroutines", "05-microbench-sqrt-latch", "06-cpu-profiles"):
        assert plans.measured_at("quick", name)
    with pytest.raises(ParameterError):
        plans.measured_at("medium", "05-pinning")


def test_build_for_a_scale_starts_no_image_only_a_left_out_experiment_uses():
    """`loadlab build --all --scale quick` (make reproduce): java-threads:jdk25 serves only full's 05-virtual-threads
    and 05-pinning, so quick does not build it; full and smoke do; every image a quick experiment starts is built."""
    import inspect

    from loadlab import plans
    from loadlab.experiment import Experiment

    quick, full = plans.server_images("quick"), plans.server_images("full")
    assert ("java-threads", "jdk21") in quick and ("java-threads", "jdk25") not in quick
    assert ("java-threads", "jdk25") in full and ("java-threads", "jdk25") in plans.server_images("smoke")
    assert quick < full
    # The listing holds every HTTP experiment a plan function of one scale argument defines.
    listed = {experiment.name.removesuffix("-full") for experiment in plans.planned_experiments("full")}
    for name, function in inspect.getmembers(plans, inspect.isfunction):
        if list(inspect.signature(function).parameters) == ["scale_name"] and \
                inspect.signature(function).return_annotation in (Experiment, "Experiment"):
            assert function("full").name.removesuffix("-full") in listed, name


def test_build_refuses_a_wrong_scale_or_a_scale_without_all_before_touching_the_engine(monkeypatch):
    from loadlab.errors import ParameterError
    from loadlab.harness import engine

    def no_engine(**_):
        raise AssertionError("the engine was touched")

    monkeypatch.setattr(engine, "ensure_engine", no_engine)
    with pytest.raises(ParameterError, match="medium"):
        cli.command_build(cli.build_parser().parse_args(["build", "--all", "--scale", "medium"]))
    with pytest.raises(ParameterError, match="only with --all"):
        cli.command_build(cli.build_parser().parse_args(["build", "--scale", "quick"]))
