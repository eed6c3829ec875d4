"""Parse vegeta's per-request CSV and JSON report (fixtures: tests/fixtures/README.md)."""

import numpy as np
import pytest
from conftest import fixture_path

from loadlab.loadgen import vegeta


def test_results_and_report_agree():
    results = vegeta.read_results_csv(fixture_path("vegeta", "io2ms-rate100-1s.csv"))
    report = vegeta.parse_report(open(fixture_path("vegeta", "io2ms-rate100-1s.report.json")).read())
    assert len(results) == report.requests == 100
    assert (results["status"] == 200).sum() == report.status_codes["200"]
    assert results["seq"].tolist() == list(range(100))
    assert results["t_s"].iloc[0] == 0 and results["t_s"].is_monotonic_increasing
    # Requests were scheduled at 100/s: the last one starts about 0.99 s after the first.
    assert results["t_s"].iloc[-1] == pytest.approx(0.99, abs=0.02)
    assert vegeta.summarize_results(results)["ok"] == 100


def test_histogram_percentiles_match_the_exact_sample_quantiles():
    results = vegeta.read_results_csv(fixture_path("vegeta", "io2ms-rate100-1s.csv"))
    histogram = vegeta.latency_histogram(results["latency_s"].to_numpy())
    assert histogram.get_total_count() == 100
    for percentile in (50, 90, 99):
        exact_s = np.percentile(results["latency_s"], percentile, method="inverted_cdf")
        # 3 significant digits: HdrHistogram's answer is within 0.1% of a recorded value.
        assert histogram.get_value_at_percentile(percentile) / 1e6 == pytest.approx(exact_s, rel=2e-3, abs=2e-6)


def test_connection_refused_is_a_connect_error_not_a_status():
    results = vegeta.read_results_csv(fixture_path("vegeta", "closed-port-rate50-1s.csv"))
    counts = vegeta.summarize_results(results)
    assert counts == {"requests": 50, "ok": 0, "non_2xx_3xx": 0, "timeouts": 0, "connect_errors": 50, "other_errors": 50}
    report = vegeta.parse_report(open(fixture_path("vegeta", "closed-port-rate50-1s.report.json")).read())
    assert report.success_ratio == 0 and report.errors


def test_attack_command_keeps_every_result():
    argv = vegeta.attack_command("http://127.0.0.1:1/io?ms=10", 2000, 60, 2, 10000)
    script = argv[-1]
    assert "-rate=2000/s" in script and "-duration=60s" in script
    assert vegeta.RESULTS_CSV_GZ in script and vegeta.REPORT_JSON in script


def test_a_fractional_rate_is_sent_as_the_whole_count_vegeta_parses():
    # vegeta 12 answers '-rate=8166.87/s' with 'strconv.Atoi: parsing "8166.87": invalid syntax' (captured in
    # the 01 open loop of 2026-11-25, where half of a measured capacity was 8166.87 req/s).
    script = vegeta.attack_command("http://127.0.0.1:1/json", 8166.87, 5, 10, 10000)[-1]
    assert "-rate=8167/s" in script


def test_a_connection_per_request_turns_keep_alive_off():
    assert "-keepalive=true" in vegeta.attack_command("http://127.0.0.1:1/json", 100, 5, 2, 10000)[-1]
    script = vegeta.attack_command("http://127.0.0.1:1/json", 100, 5, 2, 10000, connection_per_request=True)[-1]
    assert "-keepalive=false" in script and "-keepalive=true" not in script
