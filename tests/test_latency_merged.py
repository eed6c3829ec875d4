"""Open-loop latency over all of a condition's requests, its trials' histograms merged (latency_curve.merged_latency)."""

import numpy as np
import pandas as pd
import pytest

from loadlab import latency_curve
from loadlab.loadgen import vegeta
from loadlab.stats import hdr_latency_spectrum


def _histogram(latencies_s) -> str:
    return vegeta.latency_histogram(np.asarray(latencies_s)).encode().decode()


def _trials() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    calm = [rng.lognormal(np.log(0.002), 0.2, 2000) for _ in range(3)]
    stalled = rng.lognormal(np.log(0.002), 0.2, 2000)
    stalled[:100] = 0.5  # one trial with a 5 % stall
    rows = [{"trial": n, "label": "a", "level": 100.0, "status": "ok", "latency_histogram_hdr": _histogram(values)}
            for n, values in enumerate([*calm, stalled], start=1)]
    rows.append({"trial": 5, "label": "a", "level": 100.0, "status": "failed",
                 "latency_histogram_hdr": _histogram([9.0] * 2000)})  # failed: never counted
    rows.append({"trial": 6, "label": "b", "level": 100.0, "status": "ok", "latency_histogram_hdr": None})  # closed loop
    return pd.DataFrame(rows), [*calm, stalled]


def test_merged_latency_is_every_ok_request_of_a_condition_together():
    trials, latencies = _trials()
    merged = latency_curve.merged_latency(trials)
    assert list(merged["label"]) == ["a"]  # b has no histogram; nothing invented for it
    row = merged.iloc[0]
    assert row["requests"] == 8000 and row["trials_ok"] == 4
    pooled = np.concatenate(latencies)
    assert row["latency_p99_s"] == pytest.approx(np.percentile(pooled, 99, method="inverted_cdf"), rel=2e-3)
    assert row["latency_max_s"] == pytest.approx(0.5, rel=2e-3)  # the failed trial's 9 s is not there
    spectrum = hdr_latency_spectrum(list(trials["latency_histogram_hdr"][:4]), value_unit_s=vegeta.HISTOGRAM_UNIT_S)
    assert row["latency_p99_9_s"] == spectrum.p99_9_s


def test_the_stall_shows_in_the_merged_tail_where_a_median_of_trials_hides_it():
    trials, latencies = _trials()
    merged = latency_curve.merged_latency(trials).iloc[0]
    per_trial_p99 = [np.percentile(values, 99, method="inverted_cdf") for values in latencies]
    assert np.median(per_trial_p99) < 0.01  # three calm trials out of four
    assert merged["latency_p99_s"] > 0.4  # 100 of 8,000 requests (1.25 %) took 0.5 s


def test_no_histograms_no_rows():
    assert latency_curve.merged_latency(pd.DataFrame()).empty
    assert latency_curve.merged_latency(pd.DataFrame([{"label": "a", "level": 1, "status": "ok"}])).empty
