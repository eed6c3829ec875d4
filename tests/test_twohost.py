"""Two hosts on this machine (harness/testbed.py): the server on engine 1 in the root network namespace, the
loadgen on engine 2 inside namespace `loadlab-tb`, the requests over the veth pair between them.

Needs root and `ip netns`; skips with the exact reason otherwise (LOADLAB_REQUIRE_TESTBED=1, set by .ci/run, makes
that a failure, as LOADLAB_REQUIRE_DOCKER=1 does for the engine; a Docker-group user without root still skips).
"""

import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml
from conftest import build_or_skip

from loadlab import tables as tidy_tables
from loadlab.config import TrialConfig, new_run_id
from loadlab.experiment import Experiment
from loadlab.harness import container, images, runner, testbed
from loadlab.harness.trial import run_trial
from loadlab.rundir import RunDirectory

pytestmark = pytest.mark.docker


def _veth_counter(name: str) -> int:
    return int(Path(f"/sys/class/net/{testbed.VETH_ROOT}/statistics/{name}").read_text())


@pytest.fixture(scope="module")
def bed(docker_client, loadgen_image):
    reason = testbed.unavailable()
    if reason is not None:
        if os.environ.get("LOADLAB_REQUIRE_TESTBED") == "1":
            pytest.fail(f"LOADLAB_REQUIRE_TESTBED=1 but: {reason}")
        pytest.skip(reason)
    build_or_skip(docker_client, "go-nethttp")
    started = testbed.up(images=(images.BASE_IMAGE, loadgen_image), log=lambda m: None)
    yield started
    data_root = testbed.current().data_root if testbed.current() else started.data_root
    testbed.down(log=lambda m: None)
    assert testbed.leftovers(data_root) == []


def placement(bed, **extra) -> dict:
    return {"loadgen_docker_host": bed.docker_host, "target_host": bed.server_address, "loadgen_cpus": "0",
            "server_cpus": "1", **extra}


def experiment(name, bed, **overrides) -> Experiment:
    document = {"name": name, "seed": 3, "trials_per_condition": 1,
                "load": {"mode": "closed", "route": "/json", "connections": [16]},
                "durations": {"warmup_s": 1, "duration_s": 3},
                "servers": [{"server": "go-nethttp", "label": "go"}],
                "placement": placement(bed, server_sampling="sidecar")}
    document.update(overrides)
    return Experiment.from_dict(document)


def test_the_bed_routes_only_its_own_slash_30(bed):
    inside = subprocess.run(["ip", "netns", "exec", testbed.NETNS, "ip", "-o", "route"], capture_output=True,
                            text=True, check=True).stdout.splitlines()
    assert len(inside) == 1 and inside[0].startswith(f"198.18.30.0/{testbed.PREFIX} dev {testbed.VETH_PEER}")
    links = subprocess.run(["ip", "netns", "exec", testbed.NETNS, "ip", "-o", "link"], capture_output=True,
                           text=True, check=True).stdout
    assert sorted(line.split(":")[1].strip().split("@")[0] for line in links.splitlines()) == ["lltb1", "lo"]


def test_a_trial_across_the_engines_crosses_the_veth_and_is_sampled_beside_the_server(docker_client, bed, tmp_path):
    loadgen_engine = runner._client_for(bed.docker_host)
    packets_before = _veth_counter("rx_packets")
    run = runner.run_experiment(experiment("two-hosts", bed), raw_dir=tmp_path / "raw", progress=False,
                                log=lambda m: None)
    packets = _veth_counter("rx_packets") - packets_before
    trials = tidy_tables.process_run(run.path, processed_root=tmp_path / "processed")["trials"]
    row = trials.iloc[0]
    assert row["status"] == "ok" and row["throughput_rps"] > 0, row.to_dict()
    assert packets >= row["requests"]  # every request came in over the veth (wrk's and the warm-up's)
    assert row["server_sampling"] == "sidecar" and row["server_sampling_rate_hz"] > 3
    assert row["memory_peak_bytes"] > 0 and row["server_cpu_seconds"] > 0 and row["process_rss_peak_bytes"] > 0
    assert row["connections_established_median"] == 16  # the sidecar's count, on the server's host
    assert row["loadgen_cpu_seconds"] > 0  # engine 2's loadgen, read from its cgroup (this machine)
    provenance = run.read_manifest().provenance
    assert provenance["placement"]["loadgen_docker_host"] == bed.docker_host
    assert provenance["placement"]["target_host"] == bed.server_address
    assert provenance["engine"]["docker_version"] and provenance["loadgen_engine"]["docker_version"]
    health = json.loads((run.trial_dir(1) / "health.json").read_text())
    assert health["settings"]["HOST"] == bed.server_address
    assert container.leftovers(docker_client, run.run_id) == container.leftovers(loadgen_engine, run.run_id) == []


def test_the_open_loop_generator_runs_across_the_engines_too(docker_client, bed, tmp_path):
    loadgen_engine = runner._client_for(bed.docker_host)
    run_id = new_run_id("two-hosts-open")
    run = RunDirectory.create("two-hosts-open", run_id, raw_dir=tmp_path)
    config = TrialConfig(server="go-nethttp", route="/json", load_mode="open", rate_rps=500, duration_s="2s",
                         warmup_s="1s", open_loop_generator="openloop", target_host=bed.server_address,
                         check_host_cpus=False).validate()
    partial = run.begin_trial(1)
    row = run_trial(config, partial, run_id, docker_client, 1, log=lambda m: None, loadgen_client=loadgen_engine)
    run.finish_trial(1, partial)
    assert row["status"] == "ok" and row["throughput_rps"] == pytest.approx(500, rel=0.1), row
    assert row["open_loop_generator"] == "openloop" and row["errors_total"] == 0
    assert container.leftovers(docker_client, run_id) == container.leftovers(loadgen_engine, run_id) == []


def test_losing_the_loadgens_engine_mid_run_is_one_line_and_resume_finishes(docker_client, bed, tmp_path, monkeypatch,
                                                                             capsys):
    from loadlab import cli

    definition = experiment("two-hosts-lost", bed, trials_per_condition=3,
                            durations={"warmup_s": 1, "duration_s": 3}, placement=placement(bed))
    path = tmp_path / "two-hosts-lost.yaml"
    path.write_text(yaml.safe_dump(definition.to_dict()))
    real_run_trial = runner.run_trial

    def lose_the_loadgen_host_in_trial_2(config, trial_dir, run_id, client, number, **kwargs):
        if number == 2:  # mid-window: after the warm-up second and one measured second
            threading.Timer(2.5, testbed.kill_engine).start()
        return real_run_trial(config, trial_dir, run_id, client, number, **kwargs)

    monkeypatch.setattr(runner, "run_trial", lose_the_loadgen_host_in_trial_2)
    monkeypatch.setattr(runner.paths, "RAW_DIR", tmp_path / "raw")
    code = cli.main(["run", str(path), "--no-progress"])
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.strip()]
    assert code != 0 and len(errors) == 1, captured.err
    assert errors[0].startswith(f"loadlab: the Docker engine of the loadgen ({bed.docker_host}) stopped answering "
                                "during trial "), errors[0]
    assert "Traceback" not in captured.err + captured.out
    run_dir = next((tmp_path / "raw" / "two-hosts-lost").glob("*"))
    assert json.loads((run_dir / "manifest.json").read_text())["status"] == "interrupted"
    assert container.leftovers(docker_client, run_dir.name) == []  # the engine that answers was cleaned at once

    # The loadgen's host comes back (a new bed on the same socket, images copied again): the line's command
    # finishes the run.
    testbed.down(log=lambda m: None)
    testbed.up(images=(images.BASE_IMAGE, images.ensure_image(docker_client, None, log=lambda m: None)),
               log=lambda m: None)
    monkeypatch.setattr(runner, "run_trial", real_run_trial)
    assert cli.main(errors[0].split("resume it with: ", 1)[1].split()[1:] + ["--no-progress"]) == 0
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and sorted(manifest["trials"]) == ["1", "2", "3"]
    assert sum(t["status"] == "ok" for t in manifest["trials"].values()) >= 2  # at most the cut trial failed
    loadgen_engine = runner._client_for(bed.docker_host)
    assert container.leftovers(docker_client, run_dir.name) == container.leftovers(loadgen_engine, run_dir.name) == []
