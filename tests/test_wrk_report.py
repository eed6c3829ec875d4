"""Parse wrk reports written by servers/loadgen/report.lua (fixtures: tests/fixtures/README.md)."""

import gzip
import re

import pytest
from conftest import fixture_path

from loadlab.loadgen import wrk


def test_report_agrees_with_wrks_own_text_output():
    report = wrk.read_report(fixture_path("wrk", "json-c16-2s.json"))
    text = open(fixture_path("wrk", "json-c16-2s.txt")).read()
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    rate = float(re.search(r"Requests/sec:\s+([0-9.]+)", text).group(1))
    assert report.requests == requests
    assert report.requests_per_s == pytest.approx(rate, rel=0.001)
    assert report.error_count == 0
    max_ms = float(re.search(r"Latency\s+\S+\s+\S+\s+([0-9.]+)ms", text).group(1))
    assert report.latency_max_s == pytest.approx(max_ms / 1000, rel=0.01)


def test_spectrum_is_dense_and_monotonic():
    report = wrk.read_report(fixture_path("wrk", "json-c16-2s.json"))
    grid = sorted(report.spectrum_s)
    assert len(grid) > 1000 and grid[0] == pytest.approx(0.1) and grid[-1] == pytest.approx(99.999)
    values = [report.spectrum_s[p] for p in grid]
    assert values == sorted(values)
    assert report.latency_min_s <= report.latency_percentile_s(50) <= report.latency_percentile_s(99) <= report.latency_max_s


def test_non_2xx_answers_are_status_errors():
    report = wrk.read_report(fixture_path("wrk", "bad-request-400-c8-1s.json"))
    assert report.requests > 0
    assert report.errors["status"] == report.requests
    assert report.errors["connect"] == report.errors["timeout"] == 0


def test_timeouts_are_counted():
    report = wrk.read_report(fixture_path("wrk", "timeouts-io1500-c4-2s.json"))
    assert report.errors["timeout"] > 0


def test_a_document_that_is_not_a_loadlab_report_is_refused():
    with pytest.raises(ValueError, match="not a loadlab wrk report"):
        wrk.parse_report('{"requests": 1}')


def test_command_uses_the_report_script_and_pipelining():
    argv, env = wrk.command("http://127.0.0.1:1/json", 64, 10)
    assert argv[:5] == ["wrk", "-t1", "-c64", "-d10s", "--timeout=2s"] and wrk.REPORT_LUA in argv
    argv, env = wrk.command("http://127.0.0.1:1/json", 64, 10, pipeline_depth=16)
    assert wrk.PIPELINE_LUA in argv and env["PIPELINE_DEPTH"] == "16"
    assert "Connection: close" not in argv


def test_a_connection_per_request_asks_the_server_to_close():
    argv, _ = wrk.command("http://127.0.0.1:1/json", 64, 10, connection_per_request=True)
    assert argv[argv.index("-H") + 1] == "Connection: close" and argv[-1] == "http://127.0.0.1:1/json"


def test_a_kept_report_reads_the_same_compressed_or_plain(tmp_path):
    plain = fixture_path("wrk", "json-c16-2s.json")
    (tmp_path / "wrk.json.gz").write_bytes(gzip.compress(open(plain, "rb").read()))
    assert wrk.read_report(tmp_path / "wrk.json.gz") == wrk.read_report(plain)


def test_a_trial_folder_keeps_its_report_compressed_or_plain(tmp_path):
    assert wrk.stored_report(tmp_path) is None
    (tmp_path / "wrk.json").write_bytes(b"{}")
    assert wrk.stored_report(tmp_path) == tmp_path / "wrk.json"  # runs before 2026-11-25
    (tmp_path / "wrk.json.gz").write_bytes(gzip.compress(b"{}"))
    assert wrk.stored_report(tmp_path) == tmp_path / "wrk.json.gz"
