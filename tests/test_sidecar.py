"""The sampler beside the server (harness/sidecar.py): its records parse to the local sampler's readings, and on
one host the two paths read the same server alike."""

import dataclasses
import http.client
import statistics
import threading
import time

import pytest
from conftest import build_or_skip, fixture_path

from loadlab.config import new_run_id
from loadlab.harness import container, images, sampler, sidecar, tcp_diag
from loadlab.harness.sampler import ResourceSample


def test_the_sidecars_records_parse_to_the_local_samplers_readings():
    samples, counts, count_times = sidecar.parse(open(fixture_path("sidecar", "go-nethttp-v1.txt")).read())
    assert len(samples) == 6 and counts == [(3, 0), (3, 0)]  # five ticks and the last reading on SIGTERM
    # Each count is timed by the record it follows: the first and the fifth (55006.15 and 55007.23).
    assert count_times == pytest.approx([0.0, 1.08])
    first = samples[0]
    # The figures of the capture's first record, by the local sampler's arithmetic: usage less inactive_file, the
    # cpuacct counters in seconds (ticks of 10 ms for user/system), VmRSS in bytes.
    assert first.memory_in_use_bytes == 1306624 and first.cpu_seconds == pytest.approx(0.036159484)
    assert first.tasks == 4 and first.cpu_system_seconds == pytest.approx(0.01)
    assert first.process_rss_bytes == 6422528 and first.process_rss_shmem_bytes == 0
    assert [s.t_s for s in samples] == sorted(s.t_s for s in samples) and samples[0].t_s == 0
    assert 3.0 < sidecar.sampling_rate_hz(samples) < 4.5  # 0.25 s asked, plus the ticks' own forks
    assert tcp_diag.summarize_counts(counts)["connections_held_median"] == 3


def test_a_record_cut_off_by_the_containers_end_is_dropped_and_an_empty_output_reads_as_nothing():
    text = open(fixture_path("sidecar", "go-nethttp-v1.txt")).read()
    cut = text[: text.rindex("\nT ") + 1] + "T 99999.0\n"
    assert len(sidecar.parse(cut)[0]) == 5
    assert sidecar.parse("") == ([], [], [])


PORT_BASE = 18940


def _hold_and_load(port: int, connections: int, seconds: float) -> threading.Thread:
    """`connections` keep-alive clients asking /json in turn for `seconds` (work for the CPU figures)."""
    clients = [http.client.HTTPConnection("127.0.0.1", port, timeout=5) for _ in range(connections)]

    def load():
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            for client in clients:
                client.request("GET", "/json")
                client.getresponse().read()
        for client in clients:
            client.close()

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    return thread


@pytest.mark.docker
def test_on_one_host_the_sidecar_and_the_local_sampler_agree(docker_client, loadgen_image):
    """Same columns; memory, RSS and tasks within 5 %, CPU over the window within 10 % (or 20 ms), and the
    connections held equal to tcp_diag's netlink count, read at the same time from the same server."""
    image = build_or_skip(docker_client, "go-nethttp")
    run_id = new_run_id("sidecar-test")
    server = docker_client.containers.run(
        image, name=f"loadlab-{run_id}-server", detach=True, network_mode="host", cpuset_cpus="1",
        environment={"HOST": "127.0.0.1", "PORT": str(PORT_BASE)}, labels={container.RUN_LABEL: run_id},
        **container.hardened_options(256 * 1024**2))
    try:
        container.wait_healthy(server, f"http://127.0.0.1:{PORT_BASE}/health", 30)
        side = sidecar.start(server, PORT_BASE, run_id, f"loadlab-{run_id}-sidecar", images.BASE_IMAGE)
        load = _hold_and_load(PORT_BASE, 4, 3.0)
        time.sleep(0.3)
        # /proc/uptime and the sampler's monotonic clock tick together on one host: the sidecar's readings are
        # put on the local sampler's time axis and compared over the same span.
        origin = float(open("/proc/uptime").read().split()[0])
        with sampler.Sampler({"server": sampler.source_for(server)}) as local, \
                tcp_diag.EstablishedCounter(PORT_BASE, server.attrs["State"]["Pid"]) as held:
            time.sleep(2.0)
        beside, counts, _ = sidecar.parse(sidecar.stop(side), since_uptime_s=origin)
        beside = [s for s in beside if 0 <= s.t_s <= local.samples["server"][-1].t_s]
        load.join()
    finally:
        container.clean(docker_client, run_id)
    here = local.samples["server"]
    assert {f.name for f in dataclasses.fields(ResourceSample)} == set(dataclasses.asdict(beside[0]))
    assert all(getattr(s, f) is not None for s in beside for f in ("memory_in_use_bytes", "cpu_seconds", "tasks",
                                                                      "process_rss_bytes"))

    def mean(samples, name):
        return statistics.mean(getattr(s, name) for s in samples)

    for name in ("memory_in_use_bytes", "process_rss_bytes", "tasks"):
        assert mean(beside, name) == pytest.approx(mean(here, name), rel=0.05), name
    # CPU rate over each path's own span (the two spans differ by the sidecar's start and stop).
    rate_here = (here[-1].cpu_seconds - here[0].cpu_seconds) / (here[-1].t_s - here[0].t_s)
    rate_beside = (beside[-1].cpu_seconds - beside[0].cpu_seconds) / (beside[-1].t_s - beside[0].t_s)
    assert rate_beside == pytest.approx(rate_here, rel=0.10, abs=0.02)
    assert statistics.median(e - q for e, q in counts) == tcp_diag.summarize_counts(held.counts)[
        "connections_held_median"] == 4
    assert container.leftovers(docker_client, run_id) == []
