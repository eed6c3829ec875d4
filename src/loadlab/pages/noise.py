"""The A/A noise band of each row of a forest plot (the rule's margin, `loadlab.judgements.margins`)."""

from __future__ import annotations

import math

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
