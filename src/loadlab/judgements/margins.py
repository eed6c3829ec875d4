"""The A/A noise margin of each metric: how far apart two identical servers land.

Notebook 00 measures the same server twice (the A/A control). For every
metric a verdict is judged on, the ratio of the two twins' medians with its
95% CI (`loadlab.analysis.noise_floor`) is the band a difference must clear
to mean anything; the verdict rule (`loadlab.judgements.rule`) uses it as a
symmetric margin m (the larger of the band's two distances from 1, on the log
scale). A ratio is unit-free, so a metric shown in MiB or ms gets the band of
the same quantity recorded in bytes or seconds; CPU share and CPU per request
are derived from the recorded CPU seconds the same way the notebooks derive
them. A metric the A/A run cannot speak for (GC pauses, microbenchmark
counts) gets no margin, and the rule then has no "within noise" verdict.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from loadlab import analysis, paths, rundir, tables
from loadlab.judgements.rule import margin_from_band

NOISE_FLOOR_FILE = "noise-floor.json"
# Metrics the notebooks compute from recorded columns, computed the same way here.
DERIVED_METRICS = {
    "server_cpu_pct": lambda trials: 100 * trials["server_cpu_seconds"] / trials["duration_s"],
    # The A/A run has no quota: its allowance is the one pinned core.
    "server_cpu_user_pct_of_allowance": lambda trials: 100 * trials["server_cpu_user_seconds"] / trials["duration_s"],
    "cpu_us_per_request": lambda trials: 1e6 * trials["server_cpu_seconds"] / trials["requests"],
    "server_cpu_us_per_request": lambda trials: 1e6 * trials["server_cpu_seconds"] / trials["requests"],
}
# Unit suffixes that name the same quantity in another unit (a ratio does not see the unit).
_SAME_QUANTITY_SUFFIXES = ("_bytes", "_mib", "_mb", "_s", "_ms", "_us", "_seconds")


def _recorded_column(metric: str, columns: Iterable[str]) -> str | None:
    columns = set(columns)
    if metric in columns:
        return metric
    for suffix in _SAME_QUANTITY_SUFFIXES:
        if metric.endswith(suffix):
            stem = metric[: -len(suffix)]
            for other in _SAME_QUANTITY_SUFFIXES:
                if stem + other in columns:
                    return stem + other
    return None


def noise_bands(aa_trials: pd.DataFrame, metrics: Iterable[str]) -> dict[str, tuple[float, float]]:
    """{metric: (low, high)}: the A/A ratio-of-medians CI of each metric that the A/A run recorded."""
    evidence = aa_trials
    if "loadgen_saturated" in evidence.columns:
        evidence = evidence[~evidence["loadgen_saturated"].astype("boolean").fillna(False).astype(bool)]
    bands = {}
    for metric in dict.fromkeys(metrics):
        if not isinstance(metric, str):
            continue
        if metric in DERIVED_METRICS:
            try:
                derived = DERIVED_METRICS[metric](evidence)
            except KeyError:  # an A/A run recorded before the column existed: no margin for it
                continue
            frame, column = evidence.assign(**{metric: derived}), metric
        else:
            frame, column = evidence, _recorded_column(metric, evidence.columns)
        if column is None:
            continue
        floor = analysis.noise_floor(frame, metric=column)
        low, high = floor.get("ratio_ci_low", math.nan), floor.get("ratio_ci_high", math.nan)
        if math.isfinite(low) and math.isfinite(high):
            bands[metric] = (float(low), float(high))
    return bands


def aa_trials(profile: str, reports_dir: Path | None = None, raw_dir: Path | None = None) -> pd.DataFrame | None:
    """The trials of the A/A run notebook 00 used (its noise-floor.json names it), or the newest one."""
    reports_dir = Path(reports_dir or paths.REPORTS_DIR)
    raw_dir = Path(raw_dir or paths.RAW_DIR)
    recorded = reports_dir / NOISE_FLOOR_FILE
    run_dir = None
    if recorded.exists():
        run_id = json.loads(recorded.read_text()).get("run_id")
        if run_id:
            run_dir = rundir.find_run(run_id, raw_dir)
    if run_dir is None:
        run_dir = rundir.latest_run(f"00-aa-noise-{profile}", raw_dir)
    if run_dir is None:
        return None
    return tables.load_run(run_dir, raw_dir)["trials"]


def noise_margins(profile: str, metrics: Iterable[str]) -> dict[str, float]:
    """{metric: m}: the rule's noise margin of each metric the profile's A/A run recorded."""
    trials = aa_trials(profile)
    if trials is None:
        return {}
    return {metric: margin_from_band(low, high) for metric, (low, high) in noise_bands(trials, metrics).items()}
