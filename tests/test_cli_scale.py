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
