"""End to end on real containers: go-nethttp driven by the real loadgen image."""

import gzip
import json
import subprocess
import sys

import pytest
from conftest import build_or_skip

from loadlab.config import TrialConfig, new_run_id
from loadlab.harness import container
from loadlab.harness.trial import run_trial
from loadlab.loadgen import wrk
from loadlab.rundir import RunDirectory

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def go_image(docker_client, loadgen_image):
    return build_or_skip(docker_client, "go-nethttp")


def test_a_three_second_trial_measures_throughput_memory_and_leaves_nothing(docker_client, go_image, tmp_path):
    run_id = new_run_id("test")
    run = RunDirectory.create("integration", run_id, raw_dir=tmp_path)
    config = TrialConfig(server="go-nethttp", route="/json", connections=16, duration_s="3s", warmup_s="1s").validate()
    partial = run.begin_trial(1)
    row = run_trial(config, partial, run_id, docker_client, 1, log=lambda m: None)
    trial_dir = run.finish_trial(1, partial)

    assert row["status"] == "ok", row
    assert row["throughput_rps"] > 0 and row["requests"] > 0
    assert row["errors_total"] == 0
    assert row["memory_peak_bytes"] > 0 and row["samples"] >= 2
    assert row["server_cpu_seconds"] > 0
    assert row["runtime_version"].startswith("go1.")
    for name in ("trial.json", "result.json", "health.json", "verify.json.gz", "wrk.json.gz", "timeseries.csv",
                 "server.log"):
        assert (trial_dir / name).is_file(), name
    assert not (trial_dir / "wrk.json").exists()  # kept compressed only
    assert json.loads(gzip.decompress((trial_dir / "verify.json.gz").read_bytes()))["passed"]
    assert wrk.read_report(trial_dir / "wrk.json.gz").requests == row["requests"]
    # Keep-alive: wrk's 16 connections carried every request of the window.
    assert row["connection_mode"] == "keep-alive" and 16 <= row["connections_accepted"] < 40
    # The kernel held wrk's 16 connections through the window (counted once a second, not assumed).
    assert row["connections_established_samples"] >= 2 and row["connections_established_median"] == 16
    assert row["connections_queued_median"] == 0 and row["connections_held_median"] == 16  # all accepted
    # Process RSS (S1's quantity) beside the cgroup's memory: one Go process, no shared-memory mappings of note.
    assert row["process_rss_mean_bytes"] > 1024**2 and row["process_rss_peak_bytes"] >= row["process_rss_mean_bytes"]
    assert 0 <= row["process_rss_shmem_mean_bytes"] < row["process_rss_mean_bytes"]
    assert row["listen_overflows"] is not None and row["listen_overflows"] >= 0
    # The hypervisor's share of each side's CPUs in the window, read from this host's /proc/stat.
    for side in ("server", "loadgen"):
        assert 0.0 <= row[f"{side}_cpu_steal_share"] <= 1.0
    assert container.leftovers(docker_client, run_id) == []
    # Where the trial's wall time went, phase by phase: the window's load is its 3 s and the loadgen's exec around
    # them; the warm-up ran its 1 s slices; the phases cover the trial's wall time but for the files written last.
    record = json.loads((trial_dir / "trial.json").read_text())
    phases = record["phases_s"]
    for name in ("local_ports_wait", "images_check", "server_port", "server_create_start", "health_wait", "verify",
                 "loadgen_start", "warm_up", "settle", "window_set_up", "window_load", "window_tear_down", "loadgen_remove",
                 "server_log", "server_remove"):
        assert phases[name] >= 0, name
    assert 3.0 <= phases["window_load"] < 3.0 + 2.0
    assert phases["warm_up"] >= 1.0
    # The window started once the server had got through the warm-up's 16 connections (tcp_diag.wait_for_leftovers).
    assert record["settle"]["settled"] is True and record["settle"]["leftovers_at_end"]["accept_queue"] == 0
    assert phases["total"] == pytest.approx(sum(v for k, v in phases.items() if k != "total"), abs=0.01)
    assert phases["total"] <= record["ended_unix_s"] - record["started_unix_s"] + 0.01
    assert record["ended_unix_s"] - record["started_unix_s"] - phases["total"] < 1.0


def test_a_quota_in_short_cfs_periods_reaches_the_container_and_its_throttling_is_counted(docker_client, go_image,
                                                                                          tmp_path):
    run_id = new_run_id("test")
    run = RunDirectory.create("integration", run_id, raw_dir=tmp_path)
    config = TrialConfig(server="go-nethttp", route="/json", connections=16, duration_s="2s", warmup_s="1s",
                         cpu_quota=0.05, cpu_period_ms=20).validate()
    partial = run.begin_trial(1)
    row = run_trial(config, partial, run_id, docker_client, 1, log=lambda m: None)
    run.finish_trial(1, partial)
    assert row["status"] == "ok", row
    # 1 ms of CPU every 20 ms: about 100 periods in the 2 s window, and a closed loop spends the quota in most.
    assert 80 <= row["server_cpu_periods"] <= 130
    assert row["server_cpu_throttled_period_share"] > 0.5
    assert 0 < row["server_cpu_seconds"] < 0.05 * 2 * 1.5
    # Without a quota there is nothing to count.
    plain = TrialConfig(server="go-nethttp", route="/json", connections=16, duration_s="1s", warmup_s="1s").validate()
    partial = run.begin_trial(2)
    row = run_trial(plain, partial, run_id, docker_client, 2, log=lambda m: None)
    run.finish_trial(2, partial)
    assert row["status"] == "ok" and row["server_cpu_periods"] == 0 and row["server_cpu_throttled_period_share"] is None


@pytest.mark.parametrize("generator", ["openloop", "vegeta"])
def test_an_open_loop_trial_sends_the_rate_asked_and_past_the_knee_keeps_its_bound_on_requests_in_flight(
        docker_client, go_image, tmp_path, generator):
    run_id = new_run_id("test")
    run = RunDirectory.create("integration", run_id, raw_dir=tmp_path)
    asked = TrialConfig(server="go-nethttp", route="/json", load_mode="open", rate_rps=2000, duration_s="3s",
                        warmup_s="1s", request_timeout_s=5, max_in_flight=64, open_loop_generator=generator).validate()
    partial = run.begin_trial(1)
    row = run_trial(asked, partial, run_id, docker_client, 1, log=lambda m: None)
    trial_dir = run.finish_trial(1, partial)
    assert row["status"] == "ok", row
    assert row["open_loop_generator"] == generator
    assert row["rate_offered_rps"] == pytest.approx(2000, rel=0.01)
    assert row["throughput_rps"] == pytest.approx(2000, rel=0.01) and row["errors_total"] == 0
    assert 0 < row["latency_p50_s"] <= row["latency_p99_s"] and isinstance(row["latency_histogram_hdr"], str)
    assert json.loads((trial_dir / "warmup" / "timeline.json").read_text())  # the warm-up's answers per second
    if generator == "openloop":
        assert (trial_dir / "openloop.json").is_file() and row["loadgen_behind"] is None
        assert 0 <= row["loadgen_cpu_utilization"] < 0.95 and row["loadgen_cgroup_cpu_utilization"] is not None
    # A twentieth of a core cannot serve 20,000 req/s (about 3,700 in a closed loop here; 3,000 asked was sometimes
    # served in full). With 16 requests in flight at most, the host accepts about as many connections: vegeta
    # falls behind its schedule (its rate drops), openloop keeps its schedule and the due requests wait for a
    # connection, their latencies running, those still waiting at the end counted as unsent.
    past = TrialConfig(server="go-nethttp", route="/json", load_mode="open", rate_rps=20_000, duration_s="3s",
                       warmup_s="1s", request_timeout_s=5, max_in_flight=16, cpu_quota=0.05, cpu_period_ms=20,
                       open_loop_generator=generator).validate()
    partial = run.begin_trial(2)
    row = run_trial(past, partial, run_id, docker_client, 2, log=lambda m: None)
    run.finish_trial(2, partial)
    assert row["status"] == "ok", row
    assert row["connections_accepted"] <= 16 + 8
    if generator == "vegeta":
        assert row["rate_offered_rps"] < 0.9 * 20_000
    else:
        assert row["rate_offered_rps"] == 20_000 and row["rate_sent_rps"] < 0.9 * 20_000
        assert row["errors_unsent"] > 0 and row["latency_p50_s"] > 0.1  # a queue in front of the server, counted


def test_a_connection_per_request_trial_opens_one_connection_for_each_request(docker_client, go_image, tmp_path):
    run_id = new_run_id("test")
    run = RunDirectory.create("integration", run_id, raw_dir=tmp_path)
    config = TrialConfig(server="go-nethttp", route="/json", connections=16, duration_s="2s", warmup_s="1s",
                         connection_mode="per-request").validate()
    partial = run.begin_trial(1)
    row = run_trial(config, partial, run_id, docker_client, 1, log=lambda m: None)
    run.finish_trial(1, partial)

    assert row["status"] == "ok", row
    print(f"per-request: {row['requests']} requests, {row['connections_accepted']} connections accepted "
          f"({row['connections_accepted_per_request']:.3f} per request); established median "
          f"{row['connections_established_median']}, max {row['connections_established_max']}, "
          f"{row['connections_established_samples']} readings")
    # One connection per request, plus wrk's first 16 and the few the harness opens.
    assert row["requests"] > 100
    assert row["requests"] <= row["connections_accepted"] <= row["requests"] * 1.02 + 40
    # A connection per request: wrk never has more than its 16 open, so the count stays near 16 and does not grow
    # with the requests served. A socket-diagnostics dump walks the kernel's hash table, it is not a snapshot: under
    # this churn (thousands of connections a second) a connection closed after the walk passed it and its successor,
    # opened in a bucket not yet walked, are both counted, so a reading exceeds 16 by a few (17 in CI, 6 to 19 in five
    # runs here, 2026-12-06), and by more when the walking thread loses its core mid-walk to the server or wrk
    # (each lives about 2 ms here); tcp_diag.connection_counts says so. Thousands, had connections leaked, would not
    # pass.
    assert row["connections_established_samples"] >= 1
    assert 0 <= row["connections_established_median"] <= 4 * 16
    assert container.leftovers(docker_client, run_id) == []


def test_a_server_that_dies_at_start_is_one_failed_trial_with_reason_and_logs(docker_client, go_image, tmp_path):
    run_id = new_run_id("test")
    # The Go runtime refuses a malformed GOMEMLIMIT and exits before serving.
    config = TrialConfig(server="go-nethttp", route="/json", connections=4, duration_s="1s", warmup_s="0s",
                         settings={"GOMEMLIMIT": "not-a-size"}).validate()
    row = run_trial(config, tmp_path, run_id, docker_client, 1, log=lambda m: None)
    assert row["status"] == "failed" and row["failure_reason"] == "server-exited"
    record = json.loads((tmp_path / "trial.json").read_text())
    assert record["failure_reason"] == "server-exited" and "exited with code" in record["failure_detail"]
    assert "GOMEMLIMIT" in (tmp_path / "failure.log").read_text()
    assert container.leftovers(docker_client, run_id) == []


def test_loadlab_verify_passes_for_go_nethttp(go_image):
    result = subprocess.run(
        [sys.executable, "-m", "loadlab.cli", "verify", "--server", "go-nethttp", "--json"],
        capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["passed"] and summary["failed"] == 0 and summary["checks"] > 50


def test_loadlab_trial_cli_prints_a_json_row_and_cleans_up(docker_client, go_image, tmp_path):
    env = {**__import__("os").environ, "LOADLAB_ROOT": str(tmp_path)}
    (tmp_path / "servers").symlink_to(__import__("loadlab.paths", fromlist=["x"]).SERVERS_DIR)
    result = subprocess.run(
        [sys.executable, "-m", "loadlab.cli", "trial", "--server", "go-nethttp", "--route", "/plaintext",
         "--connections", "8", "--duration", "2s", "--warmup", "1s", "--json"],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    row = json.loads(result.stdout)
    assert row["status"] == "ok" and row["throughput_rps"] > 0
    assert list((tmp_path / "data" / "raw" / "adhoc").glob("*/manifest.json"))
    assert container.leftovers(docker_client, row["run_id"]) == []


def test_after_a_one_line_edit_the_next_trial_runs_a_rebuilt_image(docker_client, loadgen_image, tmp_path, monkeypatch):
    import shutil

    from loadlab import servers
    from loadlab.harness import images

    # A copy of go-nethttp under another name, so the edit touches no image other tests use.
    extra = tmp_path / "servers"
    copy = extra / "go-nethttp-edited"
    shutil.copytree(servers.get_server("go-nethttp").directory, copy)
    monkeypatch.setenv("LOADLAB_EXTRA_SERVER_DIRS", str(extra))
    config = TrialConfig(server="go-nethttp-edited", route="/json", connections=4, duration_s="1s", warmup_s="0s",
                         verify=False).validate()
    tag = servers.get_server("go-nethttp-edited").image()
    try:
        first = run_trial(config, tmp_path / "t1", new_run_id("test"), docker_client, 1, log=lambda m: None)
        assert first["status"] == "ok", first
        main_go = copy / "main.go"
        main_go.write_text(main_go.read_text() + "\n// one line more: the image must follow its source\n")
        second = run_trial(config, tmp_path / "t2", new_run_id("test"), docker_client, 2, log=lambda m: None)
        assert second["status"] == "ok", second
        assert first["image_build_hash"] and second["image_build_hash"]
        assert second["image_build_hash"] != first["image_build_hash"]
        records = [json.loads((tmp_path / t / "trial.json").read_text()) for t in ("t1", "t2")]
        assert records[0]["image_id"] != records[1]["image_id"]
        assert records[1]["image_build_hash"] == images.image_build_hash(docker_client, tag)
    finally:
        docker_client.images.remove(tag, force=True)


def test_a_failed_trial_finishes_its_captures_and_stops_their_threads(docker_client, go_image, tmp_path):
    import threading
    import time

    run_id = new_run_id("test")
    config = TrialConfig(server="go-nethttp", route="/json", connections=8, duration_s="6s", warmup_s="0s", verify=False,
                         profilers=("go-metrics", "pprof")).validate()

    def kill_during_the_window():
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if (tmp_path / "profiles" / "expvar-before.json").exists():  # the window has begun
                time.sleep(1.5)
                for server in docker_client.containers.list(filters={"label": [f"loadlab.run={run_id}", "loadlab.role=server"]}):
                    server.kill()
                return
            time.sleep(0.05)

    killer = threading.Thread(target=kill_during_the_window, daemon=True)
    killer.start()
    row = run_trial(config, tmp_path, run_id, docker_client, 1, log=lambda m: None)
    killer.join(timeout=5)
    assert row["status"] == "failed" and row["failure_reason"] in ("server-exited", "loadgen-error"), row
    captures = json.loads((tmp_path / "profiles" / "captures.json").read_text())
    assert set(captures) >= {"go-metrics", "pprof"}
    assert not [t.name for t in threading.enumerate() if t.name.startswith("capture-")]
    assert (tmp_path / "server.log").is_file() and (tmp_path / "failure.log").is_file()
    assert container.leftovers(docker_client, run_id) == []


def test_from_five_thousand_connections_the_warm_up_is_one_run_of_its_longest_length(docker_client, go_image,
                                                                                     tmp_path):
    """Issue 32: one-second slices each opened every connection again (3-10 s a slice at 10,000); one run does not."""
    from loadlab.harness.loadgen import ONE_RUN_WARMUP_CONNECTIONS

    run_id = new_run_id("test")
    run = RunDirectory.create("integration", run_id, raw_dir=tmp_path)
    config = TrialConfig(server="go-nethttp", route="/json", connections=ONE_RUN_WARMUP_CONNECTIONS,
                         duration_s="2s", warmup_s="1s", warmup_max_s="3s").validate()
    partial = run.begin_trial(1)
    row = run_trial(config, partial, run_id, docker_client, 1, log=lambda m: None)
    trial_dir = run.finish_trial(1, partial)

    assert row["status"] == "ok", row
    timeline = json.loads((trial_dir / "warmup" / "timeline.json").read_text())
    # One entry for the one run, of the warm-up's longest length, and its answers counted.
    assert [(entry["second"], entry["run_s"]) for entry in timeline] == [(3, 3)]
    assert timeline[0]["throughput_rps"] > 0
    phases = json.loads((trial_dir / "trial.json").read_text())["phases_s"]
    assert 3.0 <= phases["warm_up"] < 3.0 + 10.0
    assert container.leftovers(docker_client, run_id) == []
