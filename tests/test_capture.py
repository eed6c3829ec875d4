"""Profiles captured from live containers and parsed, one runtime family at a time."""

import gzip
import json
import re
import shutil

import pytest
from conftest import build_or_skip

from loadlab import profile_tables, profiles
from loadlab.config import TrialConfig, new_run_id
from loadlab.harness import container, uprobes
from loadlab.harness.trial import run_trial

pytestmark = pytest.mark.docker


def captured(docker_client, tmp_path, server, profilers, variant=None, settings=None, route="/api/users"):
    build_or_skip(docker_client, None)
    build_or_skip(docker_client, server, variant)
    run_id = new_run_id("capture")
    config = TrialConfig(server=server, variant=variant, settings=settings or {}, route=route, connections=16,
                         duration_s="3s", warmup_s="1s", profilers=tuple(profilers)).validate()
    row = run_trial(config, tmp_path, run_id, docker_client, 1, log=lambda m: None)
    assert row["status"] == "ok", row
    assert container.leftovers(docker_client, run_id) == []
    status = json.loads((tmp_path / "profiles" / "captures.json").read_text())
    return tmp_path / "profiles", status


def test_go_pprof_runtime_metrics_and_gctrace(docker_client, tmp_path):
    directory, status = captured(docker_client, tmp_path, "go-nethttp", ["pprof", "go-metrics", "gctrace"])
    assert {name: s["status"] for name, s in status.items()} == {"pprof": "ok", "go-metrics": "ok", "connections": "ok",
                                                                  "gctrace": "ok"}
    # The kernel saw wrk's 16 keep-alive connections established to the server during the window, plus the
    # capture's own: the CPU profile's request stays open through the window, and an expvar sample may be in flight.
    series = [json.loads(line) for line in gzip.decompress((directory / "connections-series.jsonl.gz").read_bytes()).splitlines()]
    assert len(series) >= 2 and 16 + 1 <= max(sample["established"] for sample in series) <= 16 + 2
    stacks = profiles.read_pprof_stacks(directory / "cpu.pb.gz")
    assert profiles.total_count(stacks) > 0
    assert stacks["stack"].str.contains("net/http").any()
    assert profiles.goroutine_count(profiles.read_pprof(directory / "goroutine.pb.gz")) >= 2
    events = profiles.gctrace_gc_events(profiles.read_gctrace(directory / "gctrace.txt"), "go", 1)
    after = profiles.read_expvar(directory / "expvar-after.json")
    cycles = profiles.scalar_metrics(after)["/gc/cycles/total:gc-cycles"]
    # One gctrace line per cycle, numbered from 1; the log is read after the runtime/metrics
    # snapshot, so it has seen at least as many cycles.
    assert events["gc_id"].tolist() == list(range(1, len(events) + 1))
    assert 1 <= cycles <= len(events)
    assert (events["pause_s"] > 0).all()
    # The tidy tables: the server's own handler (package main) is among the functions the CPU ran.
    assert _handler_share(directory, r"^main\.") > 0


def _handler_share(directory, pattern: str) -> float:
    """The largest total share (per cent of samples) of a function matching `pattern` in the trial's CPU profile."""
    functions = profile_tables.cpu_functions(profile_tables.cpu_stacks(directory, 1))
    assert len(functions) > 0 and (functions.groupby("source")["trial_samples"].first() > 0).all()
    matching = functions[functions["function"].str.contains(pattern, regex=True)]
    return float(matching["total_pct"].max()) if len(matching) else 0.0


def test_go_scheduler_calls_counted_with_uprobes(docker_client, tmp_path):
    missing = uprobes.available()
    if missing:
        pytest.skip(f"uprobes cannot be counted here: {missing}")
    directory, status = captured(docker_client, tmp_path, "go-nethttp", ["uprobes"])
    assert status["uprobes"]["status"] == "ok", status
    counted = profile_tables.probe_counts(directory, 1).set_index("function")
    # Under 16 keep-alive connections every request parks its connection's goroutine on the socket at least once.
    assert counted.loc["runtime.gopark", "calls"] > 0 and counted.loc["runtime.mcall", "calls"] > 0
    assert 0 < counted["window_s"].iloc[0] <= 3 + 1


def test_java_jfr_and_gc_log(docker_client, tmp_path):
    directory, status = captured(docker_client, tmp_path, "java-threads", ["jfr", "jfr-locks", "gclog"], "jdk21",
                                 {"THREAD_MODEL": "virtual"})
    assert status["jfr"]["status"] == "ok", status
    assert status["jfr-locks"]["status"] == "ok", status
    blocking = profile_tables.blocking_events(directory, 1)
    assert list(blocking.columns) == list(profile_tables.BLOCKING_COLUMNS)
    assert set(blocking["type"]) <= {"jdk.ThreadPark", "jdk.JavaMonitorEnter", "jdk.ThreadSleep"}
    # The server's own code (package loadlab) is on the stacks of the CPU samples.
    assert _handler_share(directory, r"^loadlab\.") > 0
    assert status["gclog"]["status"] == "ok", status
    # The recording itself is kept (cut by `jfr scrub`), and read without a JVM.
    assert (directory / "jfr-events.jfr.gz").exists() and (directory / "jfr-locks.jfr.gz").exists()
    events = profiles.read_captured_jfr(directory, "runtime")
    samples = profiles.read_captured_jfr(directory, "samples")
    counts = profiles.event_counts(events + samples)
    assert counts.get("jdk.ExecutionSample", 0) > 0 and counts.get("jdk.JavaThreadStatistics", 0) > 0
    assert set(profiles.event_counts(samples).index) == {"jdk.ExecutionSample"}
    stacks = profiles.jfr_stacks(samples, "jdk.ExecutionSample")
    assert profiles.total_count(stacks) == counts["jdk.ExecutionSample"]
    assert stacks["stack"].str.count(";").max() > 5, "stacks were cut to jfr print's default depth"
    assert stacks["stack"].str.contains("loadlab").any() or stacks["stack"].str.contains("sun.net.httpserver").any()
    assert len(profiles.jfr_thread_counts(events, "java", 1)) > 0
    summary = (directory / "jfr-summary.txt").read_text()
    assert "jdk.ExecutionSample" in summary
    # Every execution sample of the whole recording survives the scrub (jfr summary counted them before it).
    summary_samples = int(re.search(r"jdk\.ExecutionSample\s+(\d+)", summary)[1])
    assert counts["jdk.ExecutionSample"] == summary_samples
    assert b"gc" in __import__("gzip").decompress((directory / "gc.log.gz").read_bytes())


def test_native_perf_on_rust(docker_client, tmp_path):
    if shutil.which("perf") is None:
        pytest.skip("perf is not installed on this host (Debian: apt-get install linux-perf; `make engine` does it as root)")
    directory, status = captured(docker_client, tmp_path, "rust-tokio", ["perf"])
    assert status["perf"]["status"] == "ok", status
    stacks = profiles.read_perf_script(directory / "perf-script.txt.gz")
    assert profiles.total_count(stacks) > 0
    # Whole stacks (DWARF unwinding) up to the route's handler: the server's own functions (rust_tokio::, often
    # inlined into axum's Handler::call closure that runs them) are on the stack.
    assert _handler_share(directory, r"^rust_tokio::|axum::handler::Handler") > 0, "the server's own functions are not in its profile"


def test_python_py_spy(docker_client, tmp_path):
    directory, status = captured(docker_client, tmp_path, "python-asyncio", ["py-spy"], route="/json")
    assert status["py-spy"]["status"] == "ok", status
    stacks = profiles.read_pyspy_raw(directory / "py-spy-raw.txt")
    assert profiles.total_count(stacks) > 0
    assert stacks["stack"].str.contains("app.py|uvicorn|asyncio", regex=True).any()
    assert _handler_share(directory, r"\(app\.py") > 0


def test_a_profiler_the_runtime_lacks_is_skipped_with_its_reason(docker_client, tmp_path):
    directory, status = captured(docker_client, tmp_path, "rust-tokio", ["jfr"], route="/json")
    assert status["jfr"]["status"] == "skipped" and "does not offer jfr" in status["jfr"]["reason"]
