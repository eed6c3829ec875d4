"""Instance noise (stats.noise) and statistical power (stats.power)."""

import math

import numpy as np
import pandas as pd
import pytest

from loadlab import stats


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
    noise = stats.isolation_noise(windows).set_index("mode")
    assert noise.loc["docker", "between_instance_cv"] > 0.05 > noise.loc["cgroup", "between_instance_cv"]
    assert noise.loc["docker", "within_instance_cv"] == pytest.approx(0.005, rel=0.5)
    assert noise.loc["docker", "between_instance_cv_ci_low"] <= noise.loc["docker", "between_instance_cv"] \
        <= noise.loc["docker", "between_instance_cv_ci_high"]
    assert noise.loc["docker", "minimum_detectable_ratio_at_6_trials"] > noise.loc["cgroup", "minimum_detectable_ratio_at_6_trials"]
    assert stats.isolation_spread_test(windows, "docker", "cgroup") < 0.01


def test_isolation_noise_says_how_much_cpu_the_hypervisor_stole_and_whether_it_tracks_the_levels():
    windows = _isolation_windows({"docker": [58_000, 65_000] * 4})
    # The slower instances lost more of their CPU to neighbours.
    windows["server_cpu_steal_share"] = np.where(windows["instance"] % 2 == 1, 0.08, 0.01) + 0.001 * windows["window"]
    noise = stats.isolation_noise(windows).set_index("mode")
    assert noise.loc["docker", "server_steal_share_max"] == pytest.approx(0.084)
    assert noise.loc["docker", "server_steal_share_median"] == pytest.approx(windows["server_cpu_steal_share"].median())
    assert noise.loc["docker", "steal_throughput_spearman"] < -0.8
    # Windows recorded before steal was read carry no steal columns.
    assert "server_steal_share_median" not in stats.isolation_noise(windows.drop(columns="server_cpu_steal_share"))
def test_the_minimum_detectable_ratio_grows_with_the_spread_and_shrinks_with_trials():
    assert stats.minimum_detectable_ratio(0.038, 6) == pytest.approx(1 + 2.8016 * 0.038 * (1 / 3) ** 0.5 / 0.955 ** 0.5,
                                                                        rel=1e-3)
    assert stats.minimum_detectable_ratio(0.02, 6) < stats.minimum_detectable_ratio(0.04, 6)
    assert stats.minimum_detectable_ratio(0.04, 15) < stats.minimum_detectable_ratio(0.04, 6)
    assert math.isnan(stats.minimum_detectable_ratio(0.04, 1))



@pytest.mark.parametrize("cv, ratio", [(0.035, 1.03), (0.019, 1.03), (0.06, 1.05), (0.01, 1.10)])
def test_trials_for_a_detectable_ratio_invert_the_minimum_detectable_ratio(cv, ratio):
    n = stats.trials_for_detectable_ratio(cv, ratio)
    assert stats.minimum_detectable_ratio(cv, n) <= ratio
    assert n == 2 or stats.minimum_detectable_ratio(cv, n - 1) > ratio
    with pytest.raises(ValueError, match="ratio > 1"):
        stats.trials_for_detectable_ratio(cv, 1.0)
