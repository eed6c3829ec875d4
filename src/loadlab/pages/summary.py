"""A run's per-condition table as a page shows it: the columns it recorded, in the units it prints, and its note.

`loadlab.stats.condition_summary` computes each condition's medians with
CIs; `format_summary` prints them as `median [low, high]`; `spread_note`
says what a condition's trial count can and cannot support.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd


def recorded_metrics(trials: pd.DataFrame, metrics: Sequence[str]) -> list[str]:
    """The `metrics` a run recorded (a column with at least one value), in order: a run measured before a column
    existed is re-analysed without it, and its page shows what it has."""
    return [metric for metric in metrics if metric in trials and trials[metric].notna().any()]


def with_milliseconds(trials: pd.DataFrame, columns_s: Sequence[str]) -> pd.DataFrame:
    """`trials` with a `<name>_ms` column (milliseconds) next to each `<name>_s` column (seconds).

    A column the trials lack (no trial answered, so no loadgen report) becomes
    NaN: a run whose every trial failed still gets its tables drawn.
    """
    added = {}
    for column in columns_s:
        if not column.endswith("_s"):
            raise ValueError(f"{column}: expected a column in seconds, named *_s")
        seconds = pd.to_numeric(trials[column], errors="coerce") if column in trials else pd.Series(math.nan, index=trials.index)
        added[column[:-2] + "_ms"] = 1000 * seconds
    return trials.assign(**added)


def with_concurrency(trials: pd.DataFrame) -> pd.DataFrame:
    """Trials with the load level as `concurrency` (closed loop) for the throughput figure."""
    return trials.assign(concurrency=trials["level"])


def format_summary(summary: pd.DataFrame, metrics: Sequence[str], divisors: dict[str, float] | None = None,
                   digits: int = 3) -> pd.DataFrame:
    """`median [low, high]` strings for display; `divisors` divide a metric (e.g. bytes -> MiB)."""
    divisors = divisors or {}
    shown = summary.drop(columns=[c for c in summary if c.endswith(("_ci_low", "_ci_high"))]).copy()

    def text(value: float) -> str:
        if not math.isfinite(value):
            return "n/a"
        # Whole numbers past the shown digits keep their digits ("27,200", not "2.72e+04").
        return f"{value:,.0f}" if abs(value) >= 10 ** digits else f"{value:.{digits}g}"

    for metric in metrics:
        factor = divisors.get(metric, 1.0)
        shown[metric] = [
            f"{text(m / factor)} [{text(lo / factor)}, {text(hi / factor)}]"
            for m, lo, hi in zip(summary[metric], summary[f"{metric}_ci_low"], summary[f"{metric}_ci_high"])
        ]
    return shown


def spread_note(n_ok: int) -> str:
    """What `n_ok` trials per condition can support, as a note under a table ("" from 6 trials on)."""
    if n_ok < 4:
        return f"only {n_ok} trials per condition: no test can reach p<0.05 and no 95% CI exists; read as a smoke test"
    if n_ok < 6:
        return f"{n_ok} trials per condition: tests possible, but no 95% CI on a median exists"
    return ""


def saturation_note(trials: pd.DataFrame) -> str:
    """A warning when some trials saturated the loadgen core (their throughput is the loadgen's); "" otherwise."""
    if "loadgen_saturated" in trials and trials["loadgen_saturated"].astype("boolean").fillna(False).any():
        return "**Some trials saturated the loadgen core**: their throughput is the loadgen's, not the server's."
    return ""
