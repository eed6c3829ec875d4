"""Memory in use, CPU and tasks from real cgroup v1 files and a real Docker stats document."""

import json
from pathlib import Path

import pytest
from conftest import fixture_path

from loadlab.harness import sampler

CGROUP = Path(fixture_path("cgroup-v1"))


def test_docker_stats_memory_in_use_is_usage_minus_inactive_file():
    stats = json.load(open(fixture_path("docker", "stats-cgroup-v1-go-nethttp.json")))
    memory = stats["memory_stats"]
    expected = memory["usage"] - memory["stats"]["total_inactive_file"]
    assert sampler.memory_in_use_from_docker_stats(stats) == expected
    assert sampler.cpu_seconds_from_docker_stats(stats) == stats["cpu_stats"]["cpu_usage"]["total_usage"] / 1e9
    assert sampler.tasks_from_docker_stats(stats) == stats["pids_stats"]["current"]


def test_cgroup_v1_files_give_the_same_memory_figure_as_the_docker_api():
    # Both were captured from one idle container within the same second.
    source = sampler.CgroupSource((CGROUP / "proc-pid-cgroup").read_text(), root=CGROUP / "root")
    assert source.version == 1
    stats = json.load(open(fixture_path("docker", "stats-cgroup-v1-go-nethttp.json")))
    assert source.memory_in_use_bytes() == sampler.memory_in_use_from_docker_stats(stats)
    assert source.tasks() == stats["pids_stats"]["current"]
    assert source.cpu_seconds() == pytest.approx(sampler.cpu_seconds_from_docker_stats(stats), rel=0.05)


def test_parse_proc_cgroup_maps_every_controller():
    paths = sampler.parse_proc_cgroup((CGROUP / "proc-pid-cgroup").read_text())
    assert paths["memory"] == paths["cpuacct"] == paths["pids"] == paths[""]
    assert paths["memory"].startswith("/docker/")


def test_a_vanished_cgroup_reads_as_missing_not_as_zero(tmp_path):
    source = sampler.CgroupSource((CGROUP / "proc-pid-cgroup").read_text(), root=CGROUP / "root")
    source.memory_dir = tmp_path / "gone"
    source.cpu_dir = tmp_path / "gone"
    reading = source.read(1.0)
    assert reading.memory_in_use_bytes is None and reading.cpu_seconds is None


def test_sampler_ticks_on_schedule_and_takes_a_final_reading():
    class Counter:
        calls = 0

        def read(self, t_s):
            Counter.calls += 1
            return sampler.ResourceSample(t_s, Counter.calls, float(Counter.calls), 1)

    with sampler.Sampler({"a": Counter()}, interval_s=0.05) as running:
        import time

        time.sleep(0.3)
    samples = running.samples["a"]
    times = [s.t_s for s in samples]
    # A reading at the start and one after stop(), in order, whatever the machine's load.
    assert len(samples) >= 2 and times == sorted(times)
    assert times[0] < times[-1] and times[-1] >= 0.3


def test_cgroup_v1_splits_cpu_into_user_and_system_as_the_docker_api_does():
    # Captured after 2 s of load (tests/fixtures/README.md): cpuacct.stat counts clock ticks.
    folder = Path(fixture_path("cgroup-v1-cpu-modes"))
    source = sampler.CgroupSource((folder / "proc-pid-cgroup").read_text(), root=folder / "root")
    user_s, system_s = source.cpu_mode_seconds()
    total_s = source.cpu_seconds()
    assert user_s > 0 and system_s > 0
    assert user_s + system_s == pytest.approx(total_s, abs=0.03)  # ticks are 10 ms; the total is in ns
    stats = json.load(open(fixture_path("docker", "stats-cgroup-v1-go-nethttp-after-load.json")))
    api_user_s, api_system_s = sampler.cpu_modes_from_docker_stats(stats)
    assert (api_user_s, api_system_s) == pytest.approx((user_s, system_s), abs=0.011)
    sample = source.read(0.0)
    assert (sample.cpu_user_seconds, sample.cpu_system_seconds) == (user_s, system_s)


THROTTLED = Path(fixture_path("cgroup-v1-cpu-throttled"))


def test_cpu_quota_counters_over_a_window_from_a_throttled_server():
    # rust-tokio on half a core under wrk, cpu.stat read 3 s apart (fixtures/README.md).
    before = sampler.cpu_throttling_from_stat((THROTTLED / "cpu.stat.before").read_text())
    after = sampler.cpu_throttling_from_stat((THROTTLED / "cpu.stat.after").read_text())
    assert before == sampler.CpuThrottling(51, 43, pytest.approx(1.991737922))
    columns = sampler.throttling_columns(before, after)
    assert columns["server_cpu_periods"] == 30  # 3 s of 100 ms periods
    assert columns["server_cpu_throttled_period_share"] == pytest.approx(27 / 30)
    assert columns["server_cpu_throttled_s"] == pytest.approx(3.296525052 - 1.991737922)


def test_no_quota_means_no_periods_and_no_share():
    idle = sampler.cpu_throttling_from_stat((THROTTLED / "cpu.stat.no-quota").read_text())
    assert idle == sampler.CpuThrottling(0, 0, 0.0)
    columns = sampler.throttling_columns(idle, idle)
    assert columns["server_cpu_periods"] == 0 and columns["server_cpu_throttled_period_share"] is None


def test_counters_that_went_backwards_or_were_not_read_give_none():
    before = sampler.cpu_throttling_from_stat((THROTTLED / "cpu.stat.after").read_text())
    after = sampler.cpu_throttling_from_stat((THROTTLED / "cpu.stat.before").read_text())
    assert set(sampler.throttling_columns(before, after).values()) == {None}
    assert set(sampler.throttling_columns(None, after).values()) == {None}
    assert sampler.cpu_throttling_from_stat("usage_usec 10\n") is None  # a cpu.stat without quota counters


def test_process_rss_is_vmrss_with_its_shared_memory_part_read_from_a_real_zgc_process():
    text = Path(fixture_path("proc-status", "java21-zgc-512m.status")).read_text()
    rss, shmem = sampler.parse_proc_status_rss(text)
    fields = {line.split(":")[0]: int(line.split()[1]) * 1024 for line in text.splitlines()
              if line.startswith(("VmRSS", "RssAnon", "RssFile", "RssShmem"))}
    assert rss == fields["VmRSS"] == fields["RssAnon"] + fields["RssFile"] + fields["RssShmem"]
    assert shmem == fields["RssShmem"]
    # ZGC's three views of its heap: the shared-memory part is most of the RSS, and more than the 512 MiB heap
    # could hold were each page counted once.
    assert shmem > rss / 2 and shmem > 512 * 1024**2
    # A zombie has no memory lines: no reading, rather than a zero.
    assert sampler.parse_proc_status_rss("Name:\tx\nState:\tZ (zombie)\n") is None


def test_process_rss_sums_the_processes_it_can_read_and_skips_those_gone():
    import os

    own_rss, _ = sampler.parse_proc_status_rss(Path(f"/proc/{os.getpid()}/status").read_text())
    total, _ = sampler.process_rss_bytes([os.getpid(), 2**22 + 7])  # the second never existed
    assert total == pytest.approx(own_rss, rel=0.2)
    assert sampler.process_rss_bytes([2**22 + 7]) == (None, None)
    assert sampler.process_rss_bytes([]) == (None, None)
