"""loadlab.metrics: one entry per metric, each formula once, derived where the trials table is loaded."""

import math

import numpy as np
import pandas as pd
import pytest

from loadlab import metrics, tables
from loadlab.manifest import Manifest
from loadlab.judgements import margins
from loadlab.units import MIB


@pytest.fixture
def trials() -> pd.DataFrame:
    return pd.DataFrame({
        "trial": [1, 2], "label": ["go", "rust"], "duration_s": [10.0, 20.0], "requests": [1000, 0],
        "server_cpu_seconds": [5.0, 4.0], "server_cpu_user_seconds": [2.0, 1.0], "cpu_allowance_cores": [0.5, 2.0],
        "memory_peak_bytes": [3 * MIB, MIB // 2], "memory_mean_bytes": [2 * MIB, MIB],
        "process_rss_mean_bytes": [4 * MIB, 8 * MIB], "process_rss_shmem_mean_bytes": [MIB, 0],
        "latency_mean_s": [0.002, 0.5], "latency_p50_s": [0.001, 0.25], "latency_p99_s": [0.01, 1.0],
        "errors_total": [10, 3],
    })


@pytest.mark.parametrize(
    ("name", "expected"),
    [("server_cpu_pct", [50.0, 20.0]), ("server_cpu_pct_of_allowance", [100.0, 10.0]),
     ("server_cpu_user_pct_of_allowance", [40.0, 2.5]), ("cpu_us_per_request", [5000.0, math.nan]),
     ("memory_peak_mib", [3.0, 0.5]), ("cgroup_memory_mib", [2.0, 1.0]), ("process_rss_mib", [4.0, 8.0]),
     ("rss_shared_mib", [1.0, 0.0]), ("latency_mean_ms", [2.0, 500.0]), ("latency_p50_ms", [1.0, 250.0]),
     ("latency_p99_ms", [10.0, 1000.0]), ("error_rate_pct", [1.0, 300.0])],
)  # fmt: skip
def test_each_formula_on_known_numbers(trials, name, expected):
    assert metrics.derive(name, trials).tolist() == pytest.approx(expected, nan_ok=True)
    assert metrics.with_derived(trials)[name].tolist() == pytest.approx(expected, nan_ok=True)


def test_with_derived_adds_what_its_inputs_allow_and_never_overwrites(trials):
    kept = trials.assign(server_cpu_pct=[1.0, 2.0]).drop(columns=["process_rss_mean_bytes", "cpu_allowance_cores"])
    derived = metrics.with_derived(kept)
    assert derived["server_cpu_pct"].tolist() == [1.0, 2.0]
    assert "process_rss_mib" not in derived and "server_cpu_pct_of_allowance" not in derived
    assert "memory_peak_mib" in derived and "server_cpu_pct_of_allowance" not in kept
    with pytest.raises(KeyError, match="cpu_allowance_cores"):
        metrics.derive("server_cpu_pct_of_allowance", kept)


def test_look_ups_and_the_old_name():
    entry = metrics.metric("server_cpu_us_per_request")
    assert entry.name == "cpu_us_per_request" and entry.unit == "\N{MICRO SIGN}s" and entry.better == metrics.LOWER
    assert metrics.label("server_cpu_pct") == "server CPU (% of one core)"
    assert metrics.better("throughput_rps") == metrics.HIGHER and metrics.better("label") is None
    assert metrics.unit("latency_p99_s") == "s" and metrics.unit("spawn_join_ms") == "ms"  # the suffix, unregistered
    assert metrics.label("gc_pause_p99_s") == "gc pause p99 (s)"
    with pytest.raises(KeyError, match="no metric named"):
        metrics.metric("nonsense")


def test_every_entry_is_complete_and_its_unit_is_the_one_its_name_carries():
    for entry in metrics.REGISTRY.values():
        assert entry.label and entry.description and entry.better in (metrics.HIGHER, metrics.LOWER, None)
        assert entry.derived == bool(entry.inputs), entry.name
        suffix_unit = metrics.units.unit_of(entry.name)
        assert suffix_unit in ("", entry.unit), entry.name


def test_every_metric_the_margins_are_taken_for_is_registered():
    assert [name for name in margins.AA_METRICS if name not in metrics.REGISTRY] == []


def test_the_loaded_trials_table_carries_the_derived_metrics(trials):
    manifest = Manifest(run_id="r", experiment="e", status="complete",
                        parameters={"placement": {"server_cpus": "1"}, "servers": [{"label": "rust", "cpu_quota": 0.5}]})
    loaded = tables.with_metrics(trials.drop(columns=["cpu_allowance_cores"]), manifest)
    assert loaded["cpu_allowance_cores"].tolist() == [1.0, 0.5]
    assert loaded["server_cpu_pct_of_allowance"].tolist() == pytest.approx([50.0, 40.0])
    assert np.isnan(loaded["cpu_us_per_request"].iloc[1])


def test_an_ad_hoc_trials_allowance_is_read_from_its_one_trial_config():
    # `loadlab trial` records a list of one TrialConfig (the guide's test leaves such a run in data/raw/adhoc/).
    quota = Manifest("trial-1", "adhoc", "complete", parameters=[{"server": "go-nethttp", "cpu_quota": 0.25,
                                                                 "server_cpus": "1"}])
    pinned = Manifest("trial-2", "adhoc", "complete", parameters=[{"server": "go-nethttp", "cpu_quota": None,
                                                                  "server_cpus": "0-1"}])
    assert tables.cpu_allowance_cores(quota, "go-nethttp") == 0.25
    assert tables.cpu_allowance_cores(pinned, "go-nethttp") == 2.0
