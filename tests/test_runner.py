"""The runner on real containers: tables, resume after a kill, failures recorded, nothing left."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from conftest import build_or_skip

from loadlab import tables as tidy_tables
from loadlab.experiment import Experiment
from loadlab.harness import container, runner
from loadlab.rundir import RunDirectory

pytestmark = pytest.mark.docker
TEST_SERVERS = Path(__file__).parent / "servers"


@pytest.fixture(scope="module")
def images_ready(docker_client, loadgen_image):
    build_or_skip(docker_client, "go-nethttp")
    return docker_client


def experiment(name, **overrides):
    document = {
        "name": name, "seed": 11, "trials_per_condition": 2,
        "load": {"mode": "closed", "route": "/json", "connections": [4, 16]},
        "durations": {"warmup_s": 1, "duration_s": 1},
        "servers": [{"server": "go-nethttp", "label": "a"}, {"server": "go-nethttp", "label": "b", "settings": {"GOGC": "50"}}],
    }
    document.update(overrides)
    return Experiment.from_dict(document)


def test_two_servers_two_levels_two_trials_give_exactly_the_expected_tables(images_ready, tmp_path):
    run = runner.run_experiment(experiment("grid"), raw_dir=tmp_path / "raw", progress=False, log=lambda m: None)
    manifest = run.read_manifest()
    assert manifest.status == "complete" and len(manifest.trials) == 8
    assert manifest.provenance["git_commit"] and manifest.provenance["engine"]["docker_version"]
    assert set(manifest.images) == {"a", "b"} and all(v.startswith("go1.") for v in manifest.runtime_versions.values())
    tables = tidy_tables.process_run(run.path, processed_root=tmp_path / "processed")
    trials = tables["trials"]
    assert len(trials) == 8 and set(trials["status"]) == {"ok"}
    assert sorted(trials.groupby(["label", "level"]).size().tolist()) == [2, 2, 2, 2]
    assert trials["trial"].tolist() == list(range(1, 9))
    assert (trials["throughput_rps"] > 0).all()
    assert tables["latency"].groupby("trial").size().nunique() == 1 and tables["latency"]["trial"].nunique() == 8
    assert tables["timeseries"]["trial"].nunique() == 8
    assert set(tables["throughput_timeline"]["phase"]) == {"warmup"}
    for name in tidy_tables.TABLES:
        assert (tmp_path / "processed" / "grid" / run.run_id / f"{name}.parquet").is_file()
    assert container.leftovers(images_ready, run.run_id) == []


def test_a_run_killed_mid_trial_resumes_to_exactly_the_planned_trials(images_ready, tmp_path):
    definition = {
        "name": "killed", "seed": 3, "trials_per_condition": 2,
        "load": {"mode": "closed", "route": "/json", "connections": [8]},
        "durations": {"warmup_s": 1, "duration_s": 3},
        "servers": [{"server": "go-nethttp", "label": "a"}, {"server": "go-nethttp", "label": "b"}],
    }
    path = tmp_path / "killed.yaml"
    path.write_text(yaml.safe_dump(definition))
    env = {**os.environ, "LOADLAB_ROOT": str(tmp_path)}
    (tmp_path / "servers").symlink_to(Path(runner.paths.SERVERS_DIR))
    process_handle = subprocess.Popen([sys.executable, "-m", "loadlab.cli", "run", str(path), "--no-progress"],
                                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    raw = tmp_path / "data" / "raw" / "killed"
    deadline = time.monotonic() + 180
    # Kill while trial 2 is measuring: its folder is still .partial and its loadgen runs.
    while time.monotonic() < deadline:
        partials = list(raw.glob("*/trials/2.partial/wrk.log")) or list(raw.glob("*/trials/2.partial/warmup/timeline.json"))
        if partials:
            break
        assert process_handle.poll() is None, "the run ended before it could be killed"
        time.sleep(0.1)
    else:
        pytest.fail("trial 2 never started")
    process_handle.send_signal(signal.SIGKILL)
    process_handle.wait(timeout=30)
    run_dir = next(raw.iterdir())
    assert RunDirectory(run_dir).finished_trials() == [1]
    assert list(run_dir.glob("trials/*.partial"))

    resumed = runner.run_experiment(Experiment.from_dict(definition), resume_run_id=run_dir.name,
                                    raw_dir=tmp_path / "data" / "raw", progress=False, log=lambda m: None)
    manifest = resumed.read_manifest()
    assert manifest.status == "complete"
    assert resumed.finished_trials() == [1, 2, 3, 4]
    assert sorted(int(k) for k in manifest.trials) == [1, 2, 3, 4]
    assert not list(run_dir.glob("trials/*.partial"))
    assert container.leftovers(images_ready, run_dir.name) == []


def test_crash_oom_and_never_healthy_are_failed_trials_and_the_run_goes_on(images_ready, tmp_path, monkeypatch):
    monkeypatch.setenv("LOADLAB_EXTRA_SERVER_DIRS", str(TEST_SERVERS))
    build_or_skip(images_ready, "never-healthy")
    definition = experiment(
        "failures",
        trials_per_condition=1,
        health_timeout_s=3,
        load={"mode": "closed", "route": "/api/users", "connections": [16]},
        durations={"warmup_s": 0, "duration_s": 4},
        placement={"memory_limit_mib": 48},
        servers=[
            {"server": "go-nethttp", "label": "killed"},
            # GOGC=off: the heap only grows, so /api/users under load outgrows 48 MiB.
            {"server": "go-nethttp", "label": "oom", "settings": {"GOGC": "off"}},
            {"server": "never-healthy", "label": "silent", "route": "/json"},
            {"server": "go-nethttp", "label": "fine"},
        ],
    )
    run_id_box = {}

    def kill_server_of(label):
        # Kill the 'killed' condition's server one second into its measured window.
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            for run_dir in (tmp_path / "raw" / "failures").glob("*"):
                if not (run_dir / "manifest.json").exists():
                    continue
                manifest = json.loads((run_dir / "manifest.json").read_text())
                run_id_box["run"] = run_dir.name
                trial = next(t["trial"] for t in manifest["trial_order"] if t["condition"].startswith(label + "@"))
                partial = run_dir / "trials" / f"{trial}.partial"
                if (partial / "verify.json.gz").exists():
                    loadgens = images_ready.containers.list(filters={"label": [f"loadlab.run={run_dir.name}", "loadlab.role=loadgen"]})
                    if loadgens:
                        time.sleep(1.5)
                        for server in images_ready.containers.list(filters={"label": [f"loadlab.run={run_dir.name}", "loadlab.role=server"]}):
                            server.kill()
                        return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_server_of, args=("killed",), daemon=True)
    killer.start()
    run = runner.run_experiment(definition, raw_dir=tmp_path / "raw", progress=False, log=lambda m: None)
    killer.join(timeout=5)
    trials = tidy_tables.process_run(run.path, processed_root=tmp_path / "processed")["trials"].set_index("label")
    assert run.read_manifest().status == "complete" and len(trials) == 4
    assert trials.loc["killed", "failure_reason"] == "server-exited"
    assert trials.loc["oom", "failure_reason"] == "oom-killed"
    assert trials.loc["silent", "failure_reason"] == "health-timeout"
    assert trials.loc["fine", "status"] == "ok"
    for label in ("killed", "oom", "silent"):
        trial_dir = run.trial_dir(int(trials.loc[label, "trial"]))
        record = json.loads((trial_dir / "trial.json").read_text())
        assert record["status"] == "failed" and record["failure_detail"]
        # Every failed trial keeps the server's log and a failure.log, a health timeout included.
        assert (trial_dir / "server.log").is_file()
        assert (trial_dir / "failure.log").read_text().startswith(f"reason: {trials.loc[label, 'failure_reason']}")
    # A server that died in its window says when (the engine's clock), and keeps its memory curve up to then.
    for label in ("killed", "oom"):
        started, ended = trials.loc[label, "measured_unix_s"], trials.loc[label, "server_ended_unix_s"]
        assert 0 < ended - started < 4 + 2, (label, started, ended)
        assert (run.trial_dir(int(trials.loc[label, "trial"])) / "timeseries.csv").is_file()
    assert container.leftovers(images_ready, run.run_id) == []


def test_server_and_loadgen_placed_through_separate_engine_addresses(images_ready, tmp_path):
    # Two clients (one named by address, one the default) and an explicit target
    # address: the multi-machine code path, exercised on loopback.
    definition = experiment(
        "placement", trials_per_condition=1, load={"mode": "closed", "route": "/json", "connections": [8]},
        servers=[{"server": "go-nethttp", "label": "a"}],
        placement={"server_docker_host": "unix:///var/run/docker.sock", "loadgen_docker_host": None,
                   "target_host": "127.0.0.1"},
    )
    run = runner.run_experiment(definition, raw_dir=tmp_path / "raw", progress=False, log=lambda m: None)
    trials = tidy_tables.process_run(run.path, processed_root=tmp_path / "processed")["trials"]
    assert trials["status"].tolist() == ["ok"] and trials["throughput_rps"].iloc[0] > 0
    health = json.loads((run.trial_dir(1) / "health.json").read_text())
    assert health["settings"]["HOST"] == "127.0.0.1"


def test_a_java_server_given_48_mib_is_a_failed_trial_with_its_log_and_the_run_goes_on(images_ready, tmp_path):
    build_or_skip(images_ready, "java-threads", "jdk21")
    definition = experiment(
        "starved-java", trials_per_condition=1, health_timeout_s=30,
        load={"mode": "closed", "route": "/json", "connections": [64]},
        durations={"warmup_s": 2, "duration_s": 3},
        # 48 MiB: at 64 MiB the JDK server once served 245 req/s, slow but alive (1 run in 17); at 48 it never did.
        placement={"memory_limit_mib": 48},
        servers=[{"server": "java-threads", "variant": "jdk21", "label": "java-48mib", "settings": {"THREAD_MODEL": "platform"}},
                 {"server": "go-nethttp", "label": "go"}],
    )
    run = runner.run_experiment(definition, raw_dir=tmp_path / "raw", progress=False, log=lambda m: None)
    trials = tidy_tables.process_run(run.path, processed_root=tmp_path / "processed")["trials"].set_index("label")
    assert run.read_manifest().status == "complete"
    java = trials.loc["java-48mib"]
    assert java["status"] == "failed", java.to_dict()
    assert java["failure_reason"] in ("stalled", "health-timeout", "oom-killed", "server-exited"), java["failure_reason"]
    trial_dir = run.trial_dir(int(java["trial"]))
    assert (trial_dir / "server.log").is_file() and (trial_dir / "failure.log").is_file()
    assert trials.loc["go", "status"] == "ok"
    assert container.leftovers(images_ready, run.run_id) == []


class _EngineThatGoesAway:
    """A real client that, once `lose()` is called, answers every call as a stopped engine does.

    requests' ConnectionError is what the Docker SDK raises when dockerd's
    socket stops answering; containers started before the loss keep their
    own (real) client, as they would keep running.
    """

    def __init__(self, real):
        self._real, self._lost = real, False

    def lose(self):
        self._lost = True

    def ping(self):
        if self._lost:
            import requests

            raise requests.exceptions.ConnectionError("('Connection aborted.', FileNotFoundError(2, 'No such file or directory'))")
        return self._real.ping()

    def __getattr__(self, name):
        if self._lost:
            self.ping()
        return getattr(self._real, name)


def test_losing_the_engine_mid_run_gives_one_line_an_interrupted_manifest_and_an_exact_resume(
        images_ready, tmp_path, monkeypatch, capsys):
    from loadlab import cli
    from loadlab.errors import EngineLost

    definition = experiment("engine-lost", trials_per_condition=1, load={"mode": "closed", "route": "/json", "connections": [4]})
    path = tmp_path / "engine-lost.yaml"
    path.write_text(yaml.safe_dump(definition.to_dict()))
    flaky = _EngineThatGoesAway(images_ready)
    real_run_trial = runner.run_trial

    def run_trial_then_lose_the_engine(config, trial_dir, run_id, client, number, **kwargs):
        if number == 2:
            flaky.lose()
        return real_run_trial(config, trial_dir, run_id, client, number, **kwargs)

    monkeypatch.setattr(runner, "_client_for", lambda docker_host: flaky)
    monkeypatch.setattr(runner, "run_trial", run_trial_then_lose_the_engine)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner.paths, "RAW_DIR", tmp_path / "raw")
    code = cli.main(["run", str(path), "--no-progress"])
    captured = capsys.readouterr()
    assert code != 0
    error_lines = [line for line in captured.err.splitlines() if line.strip()]
    assert len(error_lines) == 1 and error_lines[0].startswith("loadlab: the Docker engine stopped answering during trial 2"), captured.err
    assert "Traceback" not in captured.err + captured.out
    resume = error_lines[0].split("resume it with: ", 1)[1]
    run_dir = next((tmp_path / "raw" / "engine-lost").glob("*"))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and list(manifest["trials"]) == ["1"]
    assert resume == f"loadlab run {run_dir / 'experiment.yaml'} --resume {run_dir.name}"
    with pytest.raises(EngineLost):
        raise EngineLost("the type the CLI printed is a LoadlabError")

    # The engine is back: the exact command finishes the run, trial 2 only.
    monkeypatch.setattr(runner, "_client_for", lambda docker_host: images_ready)
    monkeypatch.setattr(runner, "run_trial", real_run_trial)
    assert cli.main(resume.split()[1:] + ["--no-progress"]) == 0
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "complete" and sorted(manifest["trials"]) == ["1", "2"]
    assert container.leftovers(images_ready, run_dir.name) == []


def test_a_trial_the_loadgen_spoiled_gets_a_spare_after_the_schedule_and_a_shown_condition_none(images_ready, tmp_path):
    # A new connection per request at 60,000 req/s is about twice what the open-loop generator connects from its
    # one core (at 40,000 asked it sent 28,000-29,000, 92% of them more than 1 ms late by its own doing, 87% busy),
    # and 5,000 requests in flight keep the server's queue from being the limit (with 64, 400,000 asked on
    # keep-alive were the server's: 80,000 sent, the rest waiting for a connection, the generator 47% busy and not
    # behind). So each window here is the loadgen's: the judged rate's one trial is made up by its one spare, and
    # the shown rate's is not.
    definition = {
        "name": "spared", "seed": 2, "trials_per_condition": 1, "spare_trials": 1,
        "load": {"mode": "open", "route": "/json", "connections": [1], "rate_rps": [60000, 30000],
                 "connection_mode": "per-request", "shown_levels": [30000], "max_in_flight": 5000,
                 "request_timeout_s": 2},
        "durations": {"warmup_s": 1, "duration_s": 2},
        "servers": [{"server": "go-nethttp", "label": "a"}],
    }
    # Stopped as its schedule ends, with a spare due: not complete, and a resume runs the spare.
    stopped = runner.run_experiment(Experiment.from_dict(definition), raw_dir=tmp_path / "raw", progress=False,
                                    log=lambda m: None, stop_after_trials=2)
    assert stopped.read_manifest().status == "interrupted" and len(stopped.read_manifest().trial_order) == 2
    run = runner.run_experiment(Experiment.from_dict(definition), resume_run_id=stopped.run_id,
                                raw_dir=tmp_path / "raw", progress=False, log=lambda m: None)
    manifest = run.read_manifest()
    assert manifest.status == "complete" and run.finished_trials() == [1, 2, 3]
    rows = {number: json.loads((run.trial_dir(number) / "result.json").read_text()) for number in run.finished_trials()}
    assert [rows[n]["loadgen_saturated"] for n in (1, 2, 3)] == [True, True, True], \
        [rows[n].get("loadgen_behind") for n in rows]
    # The spare is spoiled too, and the condition has had the one it may have: no fourth trial.
    assert len(manifest.trial_order) == 3 and manifest.trial_order[2] == \
        {"trial": 3, "condition": "a@r60000", "block": None, "spare": True}
    trials = tidy_tables.process_run(run.path, processed_root=tmp_path / "processed")["trials"]
    assert trials.set_index("trial")["spare"].to_dict() == {1: False, 2: False, 3: True}
    assert container.leftovers(images_ready, run.run_id) == []
