"""Noise on a page: the A/A band of each row of a forest plot (the rule's margin, `loadlab.judgements.margins`), and
the reading of the Docker-or-cgroup isolation measurement."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from loadlab.judgements.margins import NOISE_FLOOR_FILE, aa_trials, noise_bands, noise_margins  # noqa: F401  (re-exported)
from loadlab.judgements.rule import noise_band


def noise_band_columns(rows: pd.DataFrame, metric_column: str, profile: str) -> pd.DataFrame:
    """`rows` with ``noise_low`` / ``noise_high``: the noise band the rule used for each row's metric (NaN where none).

    The band is [1/(1+m), 1+m] with m the metric's A/A margin, the very band
    the verdict rule calls "within noise".
    """
    margins = noise_margins(profile, [m for m in rows[metric_column].dropna() if isinstance(m, str)])
    bands = {metric: noise_band(margin) for metric, margin in margins.items() if math.isfinite(margin)}
    return rows.assign(
        noise_low=[bands.get(metric, (math.nan, math.nan))[0] for metric in rows[metric_column]],
        noise_high=[bands.get(metric, (math.nan, math.nan))[1] for metric in rows[metric_column]],
    )


def verdict_forest_rows(verdicts, profile: str) -> pd.DataFrame:
    """One forest-plot row per verdict record: label "claim (candidate / baseline)", its metric and noise band."""
    rows = pd.DataFrame([vars(v) if not isinstance(v, dict) else v for v in verdicts])
    if rows.empty:
        return rows
    rows = rows.assign(
        label=[f"{c} ({cand} / {base})" if isinstance(cand, str) and isinstance(base, str) else c
               for c, cand, base in zip(rows["claim_id"], rows["candidate"], rows["baseline"])],
        metric=[m.get("metric") if isinstance(m, dict) else None for m in rows["measured"]])
    for column in ("measured_ratio", "ratio_ci_low", "ratio_ci_high", "claimed_ratio"):
        rows[column] = pd.to_numeric(rows[column], errors="coerce")
    return noise_band_columns(rows, "metric", profile)


# Consecutive windows of one quiet instance differ by about 1-2% here (issue 13's measurement); well above that,
# the host itself moved under the measurement (other tenants' CPU, steal time) and the modes cannot be told apart.
QUIET_WITHIN_INSTANCE_CV = 0.03


def isolation_reading(table: pd.DataFrame, spread_p: Mapping[str, float]) -> str:
    """One paragraph reading analysis.isolation_noise's table: which mode spread least, and whether that means anything."""
    by_mode = table.set_index("mode")
    parts = [", ".join(f"{mode} {row.between_instance_cv:.1%} between instances and {row.within_instance_cv:.1%} "
                       "within" for mode, row in by_mode.iterrows())]
    noisy = by_mode["within_instance_cv"].max() > QUIET_WITHIN_INSTANCE_CV
    text = f"**Reading.** Coefficients of variation of throughput: {parts[0]}."
    if noisy:
        text += (f" Windows of one instance already differ by up to {by_mode['within_instance_cv'].max():.0%} (a quiet "
                 f"host: 1-2%): the host itself was noisy during this measurement, so it cannot say where an "
                 f"instance's level comes from.")
    if "server_steal_share_median" in by_mode and by_mode["server_steal_share_median"].notna().any():
        stolen = by_mode.dropna(subset=["server_steal_share_median"])
        text += (" The hypervisor took a median of " + ", ".join(
            f"{row.server_steal_share_median:.1%} ({mode}; at most {row.server_steal_share_max:.1%})"
            for mode, row in stolen.iterrows()) + " of the server's CPU time in a window")
        rhos = stolen["steal_throughput_spearman"].dropna()
        text += ("; across instances, throughput and steal went together with Spearman's rho "
                 + ", ".join(f"{rho:+.2f} ({mode})" for mode, rho in rhos.items()) + "." if len(rhos) else ".")
    if spread_p:
        differs = {mode: p for mode, p in spread_p.items() if p < 0.05}
        text += (" The spreads differ (" + ", ".join(f"docker vs {m}: p = {p:.2f}" for m, p in differs.items()) + ")."
                 if differs else " No mode's instances spread differently from Docker's (every p ≥ 0.05).")
    return text
