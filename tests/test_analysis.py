"""Per-condition summaries of a run's trials; open-loop latency over all requests, histograms merged."""

import math

import numpy as np
import pandas as pd
import pytest

from loadlab import analysis
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
    merged = analysis.merged_latency(trials)
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
    merged = analysis.merged_latency(trials).iloc[0]
    per_trial_p99 = [np.percentile(values, 99, method="inverted_cdf") for values in latencies]
    assert np.median(per_trial_p99) < 0.01  # three calm trials out of four
    assert merged["latency_p99_s"] > 0.4  # 100 of 8,000 requests (1.25 %) took 0.5 s


def test_no_histograms_no_rows():
    assert analysis.merged_latency(pd.DataFrame()).empty
    assert analysis.merged_latency(pd.DataFrame([{"label": "a", "level": 1, "status": "ok"}])).empty


def test_milliseconds_are_added_next_to_seconds_and_missing_columns_become_nan():
    import math

    import pandas as pd

    from loadlab import analysis

    trials = pd.DataFrame({"status": ["ok", "failed"], "latency_p99_s": [0.012, None]})
    out = analysis.with_milliseconds(trials, ["latency_p99_s", "latency_p50_s"])
    assert out["latency_p99_ms"].iloc[0] == 12.0 and math.isnan(out["latency_p99_ms"].iloc[1])
    assert out["latency_p50_ms"].isna().all()  # every trial failed before any report: no column at all


def _capacity_trials(medians: dict[str, float], utilization: dict[str, float], n: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame([
        {"label": label, "status": "ok", "throughput_rps": median * (1 + 0.01 * rng.standard_normal()),
         "loadgen_cpu_utilization": utilization[label]}
        for label, median in medians.items() for _ in range(n)
    ])


def test_servers_are_ranked_by_capacity_with_the_ratio_to_the_next():
    trials = _capacity_trials({"go": 60_000, "nginx": 190_000, "rust": 150_000}, {"go": 0.1, "nginx": 0.3, "rust": 0.25})
    ranking = analysis.capacity_ranking(trials)
    assert ranking["label"].tolist() == ["nginx", "rust", "go"]
    assert ranking["rank"].tolist() == [1, 2, 3]
    assert ranking["versus_next"].tolist() == ["faster", "faster", ""]
    assert ranking.at[0, "ratio_to_next_ci_low"] < 190 / 150 < ranking.at[0, "ratio_to_next_ci_high"]
    assert ranking.at[0, "throughput_ci_low_rps"] <= ranking.at[0, "throughput_rps"] <= ranking.at[0, "throughput_ci_high_rps"]


def test_servers_that_cannot_be_told_apart_share_a_rank():
    trials = _capacity_trials({"a": 100_000, "b": 100_000, "c": 50_000}, {"a": 0.2, "b": 0.2, "c": 0.2})
    ranking = analysis.capacity_ranking(trials)
    assert ranking["versus_next"].iloc[0] == "~" and ranking["rank"].tolist() == [1, 1, 3]


def test_a_server_measured_without_loadgen_headroom_is_listed_not_ranked():
    trials = _capacity_trials({"nginx": 120_000, "go": 60_000}, {"nginx": 0.97, "go": 0.5})
    ranking = analysis.capacity_ranking(trials)
    assert ranking["label"].tolist() == ["go", "nginx"]
    assert ranking["rank"].tolist()[0] == 1 and pd.isna(ranking["rank"].iloc[1])
    assert ranking.set_index("label").at["nginx", "trials_with_headroom"] == 0


def _isolation_windows(levels: dict[str, list[float]], jitter: float = 0.005) -> pd.DataFrame:
    rng = np.random.default_rng(11)
    return pd.DataFrame([
        {"mode": mode, "instance": instance, "window": window,
         "throughput_rps": level * (1 + jitter * rng.standard_normal())}
        for mode, instance_levels in levels.items() for instance, level in enumerate(instance_levels, start=1)
        for window in range(1, 5)
    ])


def test_isolation_noise_splits_the_spread_within_and_between_instances():
    # docker: instances settle at two levels (as the A/A run's did); cgroup: all at one.
    windows = _isolation_windows({"docker": [58_000, 65_000] * 4, "cgroup": [61_000] * 8})
    noise = analysis.isolation_noise(windows).set_index("mode")
    assert noise.loc["docker", "between_instance_cv"] > 0.05 > noise.loc["cgroup", "between_instance_cv"]
    assert noise.loc["docker", "within_instance_cv"] == pytest.approx(0.005, rel=0.5)
    assert noise.loc["docker", "between_instance_cv_ci_low"] <= noise.loc["docker", "between_instance_cv"] \
        <= noise.loc["docker", "between_instance_cv_ci_high"]
    assert noise.loc["docker", "minimum_detectable_ratio_at_6_trials"] > noise.loc["cgroup", "minimum_detectable_ratio_at_6_trials"]
    assert analysis.isolation_spread_test(windows, "docker", "cgroup") < 0.01


def test_the_minimum_detectable_ratio_grows_with_the_spread_and_shrinks_with_trials():
    assert analysis.minimum_detectable_ratio(0.038, 6) == pytest.approx(1 + 2.8016 * 0.038 * (1 / 3) ** 0.5 / 0.955 ** 0.5,
                                                                        rel=1e-3)
    assert analysis.minimum_detectable_ratio(0.02, 6) < analysis.minimum_detectable_ratio(0.04, 6)
    assert analysis.minimum_detectable_ratio(0.04, 15) < analysis.minimum_detectable_ratio(0.04, 6)
    assert math.isnan(analysis.minimum_detectable_ratio(0.04, 1))



@pytest.mark.parametrize("cv, ratio", [(0.035, 1.03), (0.019, 1.03), (0.06, 1.05), (0.01, 1.10)])
def test_trials_for_a_detectable_ratio_invert_the_minimum_detectable_ratio(cv, ratio):
    n = analysis.trials_for_detectable_ratio(cv, ratio)
    assert analysis.minimum_detectable_ratio(cv, n) <= ratio
    assert n == 2 or analysis.minimum_detectable_ratio(cv, n - 1) > ratio
    with pytest.raises(ValueError, match="ratio > 1"):
        analysis.trials_for_detectable_ratio(cv, 1.0)

def test_isolation_noise_says_how_much_cpu_the_hypervisor_stole_and_whether_it_tracks_the_levels():
    windows = _isolation_windows({"docker": [58_000, 65_000] * 4})
    # The slower instances lost more of their CPU to neighbours.
    windows["server_cpu_steal_share"] = np.where(windows["instance"] % 2 == 1, 0.08, 0.01) + 0.001 * windows["window"]
    noise = analysis.isolation_noise(windows).set_index("mode")
    assert noise.loc["docker", "server_steal_share_max"] == pytest.approx(0.084)
    assert noise.loc["docker", "server_steal_share_median"] == pytest.approx(windows["server_cpu_steal_share"].median())
    assert noise.loc["docker", "steal_throughput_spearman"] < -0.8
    # Windows recorded before steal was read carry no steal columns.
    assert "server_steal_share_median" not in analysis.isolation_noise(windows.drop(columns="server_cpu_steal_share"))
