"""Whose failure was it? A loadgen error after the server died, or while its port refuses, blames the server."""

import socket
import time

import pytest

from loadlab.harness import container


class _Container:
    """A container whose engine state turns from running to exited after `running_reads` reads."""

    name = "probe"

    def __init__(self, running_reads: int, oom: bool = False):
        self.reads, self.running_reads, self.oom = 0, running_reads, oom

    def reload(self):
        self.reads += 1

    @property
    def attrs(self):
        running = self.reads <= self.running_reads
        return {"State": {"Running": running, "OOMKilled": self.oom and not running, "ExitCode": 3,
                          "FinishedAt": "0001-01-01T00:00:00Z" if running else "2026-11-25T17:50:01.123456789Z"}}

    def logs(self, tail):
        return b"java.lang.OutOfMemoryError: Java heap space\n"


@pytest.mark.parametrize("oom, reason", [(False, "server-exited"), (True, "oom-killed")])
def test_a_death_reported_late_is_still_the_servers(oom, reason):
    failure = container.describe_exit_within(_Container(running_reads=3, oom=oom), grace_s=5.0, poll_s=0.01)
    assert failure is not None and failure.reason == reason
    assert "OutOfMemoryError" in failure.logs
    assert failure.ended_utc == "2026-11-25T17:50:01.123456789Z"  # the engine's clock, for the time of death


def test_the_engines_instants_become_seconds_since_the_epoch():
    from loadlab.harness.trial import _unix_s

    assert _unix_s("2026-11-25T17:50:01.123456789Z") == pytest.approx(1795629001.123457, abs=1e-6)
    assert _unix_s("2026-11-25T17:50:01Z") == 1795629001.0
    assert _unix_s("0001-01-01T00:00:00Z") is None and _unix_s(None) is None  # Docker's "has not ended"


def test_a_server_that_stays_up_is_not_blamed_and_the_wait_is_bounded():
    started = time.monotonic()
    assert container.describe_exit_within(_Container(running_reads=10**9), grace_s=0.3, poll_s=0.05) is None
    assert time.monotonic() - started < 2.0


def test_a_closed_port_refuses_and_a_listening_one_does_not():
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        assert container.refuses_connections("127.0.0.1", port) is False
    assert container.refuses_connections("127.0.0.1", port) is True


class _Session:
    """What `trial._root_cause` reads of a server session: its container and its address."""

    def __init__(self, container_, port):
        self.container, self.host, self.port = container_, "127.0.0.1", port


def test_a_loadgen_that_fails_on_its_own_keeps_its_failure_while_the_server_answers(monkeypatch):
    # The 01 open loop of 2026-11-25: vegeta refused a fractional -rate, and because the server's port was probed
    # after its container had been removed, all 18 trials were recorded as stalled servers.
    from loadlab.errors import TrialFailure
    from loadlab.harness import trial

    monkeypatch.setattr(container, "EXIT_GRACE_S", 0.1)
    loadgen_failure = TrialFailure("loadgen-error", "vegeta: invalid value for flag -rate")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        kept = trial._root_cause(loadgen_failure, _Session(_Container(running_reads=10**9), port))
        assert kept is loadgen_failure
    refused = trial._root_cause(loadgen_failure, _Session(_Container(running_reads=10**9), port))
    assert refused.reason == "stalled"
    died = trial._root_cause(loadgen_failure, _Session(_Container(running_reads=0, oom=True), port))
    assert died.reason == "oom-killed"
    other = TrialFailure("verify-failed", "GET /json: 500")
    assert trial._root_cause(other, _Session(_Container(running_reads=0), port)) is other
