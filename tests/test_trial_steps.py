"""run_trial's steps without an engine: every failure, a stalled window's included, takes the same one path."""

import json
from types import SimpleNamespace

import pytest

from loadlab.config import TrialConfig
from loadlab.errors import TrialFailure
from loadlab.harness import trial


@pytest.fixture
def no_engine(monkeypatch):
    monkeypatch.setattr(trial.images, "ensure_image", lambda *args, **kwargs: "loadlab/loadgen:latest")
    monkeypatch.setattr(trial.hostfacts, "wait_for_local_ports", lambda wait_s, **kwargs: {"waited_s": 0})


def config():
    return TrialConfig(server="go-nethttp", route="/json", connections=4, duration_s="1s", warmup_s="0s",
                       verify=False).validate()


def test_a_server_that_never_answers_is_one_failed_trial_with_its_reason_and_logs(no_engine, monkeypatch, tmp_path):
    def never_healthy(**kwargs):
        raise TrialFailure("health-timeout", "no answer on /health in 3 s", logs="booting...\n")

    monkeypatch.setattr(trial.ServerSession, "start", staticmethod(never_healthy))
    messages = []
    row = trial.run_trial(config(), tmp_path, "run-1", client=object(), trial_number=3, log=messages.append)
    assert row["status"] == "failed" and row["failure_reason"] == "health-timeout"
    assert row["measured_unix_s"] is None and row["server_ended_unix_s"] is None
    record = json.loads((tmp_path / "trial.json").read_text())
    assert record["status"] == "failed" and record["failure_detail"] == "no answer on /health in 3 s"
    assert record["ended_unix_s"] >= record["started_unix_s"]
    # A failed trial says where its time went too, up to the step that failed.
    assert set(record["phases_s"]) == {"local_ports_wait", "images_check", "total"}
    assert (tmp_path / "server.log").read_text() == ""
    assert (tmp_path / "failure.log").read_text().startswith("reason: health-timeout\ndetail: no answer")
    assert "booting..." in (tmp_path / "failure.log").read_text()
    assert json.loads((tmp_path / "result.json").read_text()) == row
    assert messages == ["trial 3 failed: health-timeout: no answer on /health in 3 s"]


class _Session:
    health = {"runtime_version": "go1.24"}
    container = object()
    started_unix_s = 100.0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def close(self):
        self.closed = True


def test_a_stalled_window_keeps_its_numbers_and_is_recorded_by_the_same_failure_path(no_engine, monkeypatch, tmp_path):
    session = _Session()

    def start(trial_state, client, loadgen_client, log):
        trial_state.session = session
        return session

    def load(trial_state, session, loadgen_client):
        trial_state.measured_at = 101.0
        return [], SimpleNamespace(), {}, None

    monkeypatch.setattr(trial, "_start_server", start)
    monkeypatch.setattr(trial, "_load", load)
    monkeypatch.setattr(trial.container, "open_file_limit", lambda c: 1024)
    monkeypatch.setattr(trial.container, "log_tail", lambda c, lines=50: "listening on :8080\n")
    monkeypatch.setattr(trial, "_measured_columns", lambda *args: {"requests": 0, "throughput_rps": 0.0,
                                                                  "status": "ok", "measured_unix_s": 101.0})
    monkeypatch.setattr(trial.outcome, "stall_detail", lambda row, warmup, profilers: "no request answered")
    messages = []
    row = trial.run_trial(config(), tmp_path, "run-1", client=object(), log=messages.append)
    assert row["status"] == "failed" and row["failure_reason"] == "stalled"
    assert row["requests"] == 0 and row["measured_unix_s"] == 101.0  # the numbers show what happened
    record = json.loads((tmp_path / "trial.json").read_text())
    assert record["status"] == "failed" and record["failure_detail"] == "no request answered"
    assert record["open_file_limit"] == 1024 and session.closed
    # server.log was written from the container when the window ended; failure.log repeats it after the reason.
    assert (tmp_path / "server.log").read_text() == "listening on :8080\n"
    assert (tmp_path / "failure.log").read_text() == ("reason: stalled\ndetail: no request answered\n\n"
                                                      "listening on :8080\n")
    assert messages == ["trial 1 failed: stalled: no request answered"]
