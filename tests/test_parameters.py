"""Bad input fails before any container starts, naming the parameter and what is allowed."""

import os
import subprocess
import sys

import pytest

from loadlab import servers
from loadlab.config import TrialConfig, check_cpusets, parse_cpuset, parse_duration_s
from loadlab.errors import ParameterError


def config(**overrides):
    base = dict(server="go-nethttp", route="/json", connections=8, duration_s="3s", warmup_s="1s",
                server_cpus="1", loadgen_cpus="0")
    return TrialConfig(**{**base, **overrides})


@pytest.mark.parametrize(
    "overrides, parameter, allowed",
    [
        ({"server": "no-such-server"}, "server", "go-nethttp"),
        ({"duration_s": "0s"}, "duration", "at least 1"),
        ({"duration_s": "-3s"}, "duration", "duration such as"),
        ({"duration_s": "1.5s"}, "duration", "whole number"),
        ({"warmup_s": "soon"}, "warmup", "duration such as"),
        ({"connections": 0}, "connections", "at least 1"),
        ({"server_cpus": "0", "loadgen_cpus": "0"}, "loadgen_cpus", "disjoint"),
        ({"server_cpus": "4096"}, "server_cpus", "present on this host"),
        ({"server_cpus": "x"}, "server_cpus", "cpuset such as"),
        ({"route": "/nope"}, "route", "contract route"),
        ({"route": "/cpu?n=99999999999"}, "route", "from 0 to 10000000"),
        ({"route": "/health"}, "route", "load route"),
        ({"load_mode": "sideways"}, "load_mode", "closed"),
        ({"load_mode": "open", "rate_rps": None}, "rate_rps", "positive request rate"),
        ({"settings": {"NOPE": "1"}}, "setting", "GOMAXPROCS"),
        ({"settings": {"GOMAXPROCS": "0"}}, "setting GOMAXPROCS", "from 1 to 1024"),
        ({"settings": {"PORT": "80"}}, "setting PORT", "set by the harness"),
        ({"variant": "jdk99"}, "variant", "latest"),
        ({"pipeline_depth": 0}, "pipeline_depth", "from 1 to 256"),
        ({"connection_mode": "close"}, "connection_mode", "per-request"),
        ({"connection_mode": "per-request", "pipeline_depth": 8}, "pipeline_depth", "cannot carry a pipeline"),
        ({"cpu_period_ms": 20}, "cpu_period_ms", "unless a cpu_quota is set"),
        ({"load_mode": "open", "rate_rps": 100, "max_in_flight": 0}, "max_in_flight", "from 1 to 100000"),
        ({"cpu_quota": 0.5, "cpu_period_ms": 0.5}, "cpu_period_ms", "from 1 to 1000"),
        ({"cpu_quota": 0.5, "cpu_period_ms": 2000}, "cpu_period_ms", "from 1 to 1000"),
        ({"cpu_quota": 0.05, "cpu_period_ms": 10}, "cpu_period_ms", "at least 20 ms for a quota of 0.05 core"),
    ],
)
def test_bad_trial_parameters_name_the_parameter_and_what_is_allowed(overrides, parameter, allowed):
    with pytest.raises(ParameterError) as caught:
        config(**overrides).validate()
    assert caught.value.parameter == parameter
    assert allowed in str(caught.value)


def test_a_good_config_validates_and_normalizes():
    checked = config(settings={"GOMAXPROCS": 1}).validate()
    assert checked.duration_s == 3.0 and checked.variant == "latest" and checked.settings == {"GOMAXPROCS": "1"}


def test_a_connection_per_request_is_its_own_condition():
    assert "new-connection-per-request" in config(connection_mode="per-request").validate().label()
    assert "connection" not in config().validate().label()  # keep-alive, the default: labels of earlier runs stand


def test_durations():
    assert parse_duration_s("500ms", "d") == 0.5 and parse_duration_s("2m", "d") == 120 and parse_duration_s(7, "d") == 7


def test_cpusets():
    assert parse_cpuset("0-2,4", "x") == {0, 1, 2, 4}
    with pytest.raises(ParameterError):
        parse_cpuset("3-1", "x")
    check_cpusets("1", "0")


def test_every_server_folder_declares_itself_validly():
    registry = servers.all_servers()
    assert "go-nethttp" in registry
    for spec in registry.values():
        assert spec.runtime and spec.model and spec.routes
        assert spec.default_variant in spec.variants
        assert (spec.directory / "Dockerfile").is_file() and (spec.directory / "README.md").is_file()


def test_the_cli_refuses_bad_input_without_touching_docker():
    # An engine address that cannot answer: a parameter error must come first.
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    result = subprocess.run(
        [sys.executable, "-m", "loadlab.cli", "trial", "--server", "go-nethttp", "--connections", "0"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert result.returncode == 2
    assert "connections=0 is not allowed" in result.stderr and "at least 1" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "loadlab.cli", "trial", "--server", "nginx-baseline" if "nginx-baseline" in servers.all_servers() else "go-nethttp",
         "--route", "/definitely-not"], capture_output=True, text=True, env=env, timeout=60,
    )
    assert result.returncode == 2 and "route" in result.stderr


def test_no_engine_gives_one_clear_sentence_on_how_to_start_it():
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    result = subprocess.run([sys.executable, "-m", "loadlab.cli", "clean"], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 2
    assert "No Docker engine answers" in result.stderr and "dockerd" in result.stderr
