"""Notebook 00's capacity ranking: servers ranked by throughput measured with loadgen headroom."""

import numpy as np
import pandas as pd

from loadlab.judgements import capacity


def _capacity_trials(medians: dict[str, float], utilization: dict[str, float], n: int = 6) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame([
        {"label": label, "status": "ok", "throughput_rps": median * (1 + 0.01 * rng.standard_normal()),
         "loadgen_cpu_utilization": utilization[label]}
        for label, median in medians.items() for _ in range(n)
    ])


def test_servers_are_ranked_by_capacity_with_the_ratio_to_the_next():
    trials = _capacity_trials({"go": 60_000, "nginx": 190_000, "rust": 150_000}, {"go": 0.1, "nginx": 0.3, "rust": 0.25})
    ranking = capacity.capacity_ranking(trials)
    assert ranking["label"].tolist() == ["nginx", "rust", "go"]
    assert ranking["rank"].tolist() == [1, 2, 3]
    assert ranking["versus_next"].tolist() == ["faster", "faster", ""]
    assert ranking.at[0, "ratio_to_next_ci_low"] < 190 / 150 < ranking.at[0, "ratio_to_next_ci_high"]
    assert ranking.at[0, "throughput_ci_low_rps"] <= ranking.at[0, "throughput_rps"] <= ranking.at[0, "throughput_ci_high_rps"]


def test_servers_that_cannot_be_told_apart_share_a_rank():
    trials = _capacity_trials({"a": 100_000, "b": 100_000, "c": 50_000}, {"a": 0.2, "b": 0.2, "c": 0.2})
    ranking = capacity.capacity_ranking(trials)
    assert ranking["versus_next"].iloc[0] == "~" and ranking["rank"].tolist() == [1, 1, 3]


def test_a_server_measured_without_loadgen_headroom_is_listed_not_ranked():
    trials = _capacity_trials({"nginx": 120_000, "go": 60_000}, {"nginx": 0.97, "go": 0.5})
    ranking = capacity.capacity_ranking(trials)
    assert ranking["label"].tolist() == ["go", "nginx"]
    assert ranking["rank"].tolist()[0] == 1 and pd.isna(ranking["rank"].iloc[1])
    assert ranking.set_index("label").at["nginx", "trials_with_headroom"] == 0
