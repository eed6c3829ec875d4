"""Facts about the host that bound an experiment, read again independently."""

import resource
import subprocess

from loadlab import hostfacts


def test_connection_limits_are_this_hosts_and_the_smallest_sets_the_ceiling():
    limits = hostfacts.connection_limits()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    assert limits["open_files_hard"] == (None if hard == resource.RLIM_INFINITY else hard)
    low, high = (int(v) for v in subprocess.run(["sysctl", "-n", "net.ipv4.ip_local_port_range"], capture_output=True,
                                                 text=True, check=True).stdout.split())
    assert limits["ephemeral_ports"] == high - low + 1
    caps = [v for v in (limits["open_files_hard"], limits["ephemeral_ports"]) if v is not None]
    assert limits["max_connections"] == min(caps) - 64


def test_cpu_times_read_each_cpus_total_and_steal_from_the_kernels_table():
    from pathlib import Path

    text = (Path(__file__).parent / "fixtures" / "hostfacts" / "proc-stat-2cpu.txt").read_text()
    times = hostfacts.cpu_times(text)
    assert sorted(times) == [0, 1]  # the aggregate "cpu" line is not a CPU
    for cpu in (0, 1):
        columns = [int(v) for v in next(line for line in text.splitlines() if line.startswith(f"cpu{cpu} ")).split()[1:]]
        # user nice system idle iowait irq softirq steal; guest and guest_nice are already inside user and nice.
        assert times[cpu] == (sum(columns[:8]), columns[7])
        assert times[cpu][1] > 0


def test_steal_share_is_the_stolen_part_of_the_cpus_elapsed_time():
    before = {0: (1_000, 10), 1: (2_000, 0)}
    after = {0: (1_400, 30), 1: (2_600, 60)}
    assert hostfacts.steal_share(before, after, {0}) == 20 / 400
    assert hostfacts.steal_share(before, after, {0, 1}) == 80 / 1_000
    assert hostfacts.steal_share(before, after, {2}) is None  # a CPU the host does not have
    assert hostfacts.steal_share(before, before, {0}) is None  # no time passed


def test_steal_share_on_this_host_is_a_share():
    import time

    before = hostfacts.cpu_times()
    if not before:
        import pytest

        pytest.skip("/proc/stat cannot be read here")
    deadline = time.monotonic() + 0.3
    while time.monotonic() < deadline:  # keep a CPU busy so ticks pass
        pass
    share = hostfacts.steal_share(before, hostfacts.cpu_times(), set(before))
    assert share is not None and 0.0 <= share <= 1.0


def test_steal_columns_name_each_side():
    before = {0: (1_000, 10), 1: (2_000, 0)}
    after = {0: (1_400, 30), 1: (2_600, 60)}
    assert hostfacts.steal_columns(before, after, {"server": {1}, "loadgen": {0}}) == {
        "server_cpu_steal_share": 60 / 600, "loadgen_cpu_steal_share": 20 / 400}


def test_a_sitting_is_one_command_on_one_boot_of_one_machine(monkeypatch):
    monkeypatch.setenv(hostfacts.SITTING_ENV, "sitting-test")
    here = hostfacts.sitting()
    assert here["id"] == "sitting-test" and here["machine"] == hostfacts.machine_fingerprint()
    assert hostfacts.same_sitting(here, dict(here))
    assert not hostfacts.same_sitting(here, {**here, "id": "sitting-other"})
    assert not hostfacts.same_sitting(None, here) and not hostfacts.same_sitting({}, here)
    monkeypatch.delenv(hostfacts.SITTING_ENV)
    # Measured alone, one process is one sitting.
    assert hostfacts.sitting()["id"] == hostfacts.sitting()["id"] != "sitting-test"
