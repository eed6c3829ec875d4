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
        return {"State": {"Running": running, "OOMKilled": self.oom and not running, "ExitCode": 3}}

    def logs(self, tail):
        return b"java.lang.OutOfMemoryError: Java heap space\n"


@pytest.mark.parametrize("oom, reason", [(False, "server-exited"), (True, "oom-killed")])
def test_a_death_reported_late_is_still_the_servers(oom, reason):
    failure = container.describe_exit_within(_Container(running_reads=3, oom=oom), grace_s=5.0, poll_s=0.01)
    assert failure is not None and failure.reason == reason
    assert "OutOfMemoryError" in failure.logs


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
