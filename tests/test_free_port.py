"""A trial's server port when the host has none to give: wait for TIME-WAIT to release one, then fail the trial.

Real kernel, no mock: each case runs in a network namespace of its own
(`unshare -n`, root) whose local port range holds two ports, so binding a
third socket to port 0 gets EADDRINUSE as it did on the host after a vegeta
trial left 28,294 connections in TIME-WAIT.
"""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("ip") is None,
    reason="needs root, unshare (util-linux) and ip (iproute2) to make a network namespace with two local ports")

CASE = textwrap.dedent("""
    import socket, subprocess, sys, threading, time
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    with open("/proc/sys/net/ipv4/ip_local_port_range", "w") as f:
        f.write("40000 40001")
    from loadlab.errors import TrialFailure
    from loadlab.harness import container
    held = []
    for _ in range(2):
        s = socket.socket(); s.bind(("127.0.0.1", 0)); held.append(s)
    if sys.argv[1] == "released":
        released = held[0].getsockname()[1]
        threading.Timer(1.0, held[0].close).start()  # a TIME-WAIT that ends
        print("the released port", container.free_port(max_wait_s=10.0) == released)
    else:
        try:
            container.free_port(max_wait_s=1.0)
        except TrialFailure as failure:
            print("failed", failure.reason)
""")


def _run(case: str) -> str:
    result = subprocess.run(["unshare", "-n", sys.executable, "-c", CASE, case], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_a_port_freed_while_waiting_is_taken():
    assert _run("released") == "the released port True"


def test_no_port_within_the_wait_is_one_failed_trial_not_a_crash():
    assert _run("exhausted") == "failed host-ports-exhausted"
