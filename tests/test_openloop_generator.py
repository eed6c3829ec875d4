"""The open-loop generator against a real server: it keeps its schedule, and a stopped server shows its stop.

The server is a go-nethttp container on core 1; the generator runs in the
real loadgen image on core 0, as in a trial. The stop is SIGSTOP and SIGCONT
sent to the server's process (Coordinated omission's classic check: Tene,
"How NOT to measure latency"; Treadmill, ISCA 2016).
"""

import json
import os
import signal
import threading
import time

import pytest
from conftest import build_or_skip
from hdrh.histogram import HdrHistogram

from loadlab.harness import container

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def go_server(docker_client, loadgen_image):
    image = build_or_skip(docker_client, "go-nethttp")
    port = container.free_port()
    server = docker_client.containers.run(image, detach=True, network_mode="host", cpuset_cpus="1",
                                          environment={"HOST": "127.0.0.1", "PORT": str(port)},
                                          name=f"loadlab-test-openloop-{port}", labels={"loadlab.test": "openloop"})
    try:
        deadline = time.monotonic() + 30
        while container.refuses_connections("127.0.0.1", port):
            assert time.monotonic() < deadline, "the server did not listen within 30 s"
            time.sleep(0.1)
        yield server, port
    finally:
        server.remove(force=True)


def run_generator(docker_client, loadgen_image, port: int, *flags: str) -> dict:
    """openloop in the loadgen image on core 0; its report (printed on stdout without --report)."""
    output = docker_client.containers.run(
        loadgen_image, ["openloop", "--url", f"http://127.0.0.1:{port}/json", *flags], network_mode="host",
        cpuset_cpus="0", remove=True, stdout=True, stderr=False)
    return json.loads(output)


def test_at_a_small_rate_it_sends_the_rate_asked_and_every_second_shows_it(docker_client, loadgen_image, go_server):
    _, port = go_server
    report = run_generator(docker_client, loadgen_image, port, "--rate", "500", "--duration", "4",
                           "--connections", "32")
    assert report["scheduled"] == 2000 and report["unsent"] == 0 and report["errors_total"] == 0
    assert report["dispatched"] == pytest.approx(2000, rel=0.01) and report["ok"] == report["dispatched"]
    for second in report["per_second"]:
        assert second["scheduled"] == 500 and second["dispatched"] == pytest.approx(500, rel=0.01), second
    # It kept its schedule by its own account: requests left within a millisecond of their time.
    assert report["late_generator"] <= 0.01 * report["dispatched"]
    assert report["connections_open_max"] <= 32 and report["cpu_busy_share"] < 0.5
    # Keep-alive: its 32 connections were open before the first request was due (as wrk2's), none inside the window.
    assert report["preconnected"] == 32 and report["connections_opened"] == 32 and report["preconnect_s"] < 5


def test_a_server_stopped_for_a_known_time_shows_the_stop_in_the_latencies(docker_client, loadgen_image, go_server):
    server, port = go_server
    server.reload()
    pid = server.attrs["State"]["Pid"]
    rate_rps, stop_s = 2000, 0.2
    paused = {}

    def stop_then_continue():
        time.sleep(1.5)
        started = time.monotonic()
        os.kill(pid, signal.SIGSTOP)
        time.sleep(stop_s)
        os.kill(pid, signal.SIGCONT)
        paused["s"] = time.monotonic() - started

    stopper = threading.Thread(target=stop_then_continue)
    stopper.start()
    report = run_generator(docker_client, loadgen_image, port, "--rate", str(rate_rps), "--duration", "3",
                           "--connections", "64", "--timeout", "5")
    stopper.join()
    assert report["errors_total"] == 0 and report["ok"] == 6000
    histogram = HdrHistogram.decode(report["latency_histogram_hdr"])
    stopped_s = paused["s"]
    # The requests due while the server was stopped were answered late, each by the time left in the stop:
    # about rate x stop of them, their latencies spread evenly from the stop's length down to nothing. Counted
    # above 10 ms, which a quiet window's requests do not reach here (none of 6,000 did).
    expected = rate_rps * (stopped_s - 0.010)
    slow = _count_above(histogram, 10_000)
    assert 0.8 * expected <= slow <= 1.4 * expected, (slow, expected)
    assert histogram.get_max_value() >= 0.95 * stopped_s * 1e6
    half = _count_above(histogram, int(stopped_s / 2 * 1e6))
    assert 0.35 * rate_rps * stopped_s <= half <= 0.7 * rate_rps * stopped_s, (half, rate_rps * stopped_s)
    # Those due in the stop found every connection waiting on the server, so most went out late: the
    # server's doing, which the generator does not count as its own.
    assert report["late"] >= 0.5 * expected and report["late_generator"] < 0.5 * report["late"]


def _count_above(histogram: HdrHistogram, value_us: int) -> int:
    """Requests whose latency (µs) exceeded `value_us`."""
    return sum(item.count_added_in_this_iter_step for item in histogram.get_recorded_iterator()
               if item.value_iterated_to > value_us)
