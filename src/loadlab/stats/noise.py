"""The noise between fresh instances of one server: the A/A control's spread, and Docker against a plain cgroup.

`noise_floor` reads notebook 00's A/A run (two labels of one server);
`isolation_noise` and `isolation_spread_test` read harness.isolation's
windows (instances per isolation mode, consecutive windows per instance).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .power import minimum_detectable_ratio
from .ratio import ratio_of_medians_ci
from .significance import mann_whitney


def noise_floor(trials: pd.DataFrame, metric: str = "throughput_rps") -> dict:
    """A/A control: coefficient of variation per condition and the ratio of medians with its CI."""
    ok = trials[trials["status"] == "ok"]
    labels = sorted(ok["label"].unique())
    cv = {label: float(ok.loc[ok["label"] == label, metric].std(ddof=1) / ok.loc[ok["label"] == label, metric].mean())
          for label in labels}
    pooled = ok[metric].to_numpy(dtype=float)
    result = {"cv_by_condition": cv, "cv_pooled": float(np.std(pooled, ddof=1) / np.mean(pooled)) if len(pooled) > 1 else math.nan}
    if len(labels) == 2:
        a = ok.loc[ok["label"] == labels[0], metric].to_numpy(dtype=float)
        b = ok.loc[ok["label"] == labels[1], metric].to_numpy(dtype=float)
        if len(a) >= 2 and len(b) >= 2:
            ratio = ratio_of_medians_ci(a, b)
            result.update({"ratio": ratio.ratio, "ratio_ci_low": ratio.ci_low, "ratio_ci_high": ratio.ci_high,
                           "p_value": mann_whitney(a, b).p_value, "labels": labels})
    return result


def isolation_noise(windows: pd.DataFrame, trials_per_side: int = 6) -> pd.DataFrame:
    """Within- and between-instance spread of throughput per isolation mode (harness.isolation rows).

    Per mode: instances, windows per instance, the median throughput (req/s),
    the within-instance CV (the median over instances of the CV of their
    windows), the between-instance CV (the CV of the instances' medians) with
    a 95% interval (bootstrap over instances, percentile), and the minimum
    detectable ratio a comparison of `trials_per_side` fresh instances a side
    has at that between-instance CV.

    Where the windows carry `server_cpu_steal_share` (runs from 2026-11-26
    on): the median share of the server's CPU the hypervisor stole in a
    window, the largest, and Spearman's rho between an instance's median
    throughput and its mean steal (negative: the instances that lost more
    CPU to neighbours served less).
    """
    from scipy.stats import spearmanr

    rng = np.random.default_rng(0)
    rows = []
    for mode, block in windows.groupby("mode", sort=False):
        per_instance = block.groupby("instance")["throughput_rps"]
        medians = per_instance.median().to_numpy(dtype=float)
        within = (per_instance.std(ddof=1) / per_instance.mean()).median()
        between = float(np.std(medians, ddof=1) / np.mean(medians))
        resampled = rng.choice(medians, size=(4000, medians.size), replace=True)
        cvs = resampled.std(axis=1, ddof=1) / resampled.mean(axis=1)
        row = {
            "mode": mode, "instances": int(medians.size), "windows_per_instance": int(per_instance.size().median()),
            "throughput_rps": float(np.median(medians)), "within_instance_cv": float(within),
            "between_instance_cv": between, "between_instance_cv_ci_low": float(np.quantile(cvs, 0.025)),
            "between_instance_cv_ci_high": float(np.quantile(cvs, 0.975)),
            f"minimum_detectable_ratio_at_{trials_per_side}_trials": minimum_detectable_ratio(between, trials_per_side),
        }
        if "server_cpu_steal_share" in block and block["server_cpu_steal_share"].notna().any():
            steal = block.groupby("instance")["server_cpu_steal_share"].mean()
            row.update({"server_steal_share_median": float(block["server_cpu_steal_share"].median()),
                        "server_steal_share_max": float(block["server_cpu_steal_share"].max()),
                        "steal_throughput_spearman": float(spearmanr(steal.to_numpy(), per_instance.median().loc[
                            steal.index].to_numpy()).statistic) if steal.nunique() > 1 else float("nan")})
        rows.append(row)
    return pd.DataFrame(rows)


def isolation_spread_test(windows: pd.DataFrame, first: str, second: str) -> float:
    """p of the Brown-Forsythe test that the instances of two modes spread alike (their instance medians)."""
    from scipy.stats import levene

    medians = windows.groupby(["mode", "instance"])["throughput_rps"].median()
    return float(levene(medians.loc[first].to_numpy(), medians.loc[second].to_numpy(), center="median").pvalue)


def spread_tests_against(windows: pd.DataFrame, reference: str = "docker") -> dict[str, float]:
    """`isolation_spread_test`'s p of each other mode measured against `reference`, by mode."""
    return {mode: isolation_spread_test(windows, reference, mode) for mode in windows["mode"].unique() if mode != reference}


def instance_medians(windows: pd.DataFrame, connections: int = 64) -> pd.DataFrame:
    """Each instance's median throughput (req/s) as one ok trial of its mode (`label`), at `connections`, the
    shape `plots.throughput_figure` draws."""
    return (windows.groupby(["mode", "instance"], as_index=False)["throughput_rps"].median()
            .rename(columns={"mode": "label", "instance": "trial"}).assign(status="ok", concurrency=connections))
