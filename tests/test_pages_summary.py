"""A run's per-condition table as a page prints it (pages.summary)."""

def test_milliseconds_are_added_next_to_seconds_and_missing_columns_become_nan():
    import math

    import pandas as pd

    from loadlab import pages

    trials = pd.DataFrame({"status": ["ok", "failed"], "latency_p99_s": [0.012, None]})
    out = pages.with_milliseconds(trials, ["latency_p99_s", "latency_p50_s"])
    assert out["latency_p99_ms"].iloc[0] == 12.0 and math.isnan(out["latency_p99_ms"].iloc[1])
    assert out["latency_p50_ms"].isna().all()  # every trial failed before any report: no column at all
