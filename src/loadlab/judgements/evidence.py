"""Which trials may be evidence for a verdict, and a record of the ones left out.

A verdict is drawn only from trials that measured the server: status ok (not
failed, not stalled: `loadlab.outcome` makes a stalled window a failed trial)
and a loadgen with headroom (`loadgen_saturated` false: a saturated loadgen
measured itself). A trial whose metric is missing is left out too. Every
exclusion is kept with its trial id and reason, so a verdict can say what it
used and what it did not.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from loadlab import outcome
from loadlab.config import LOADGEN_SATURATION_UTILIZATION

LOADGEN_SATURATED = "loadgen saturated"
# The project's open-loop generator with its core not busy (LOADGEN_SATURATION_UTILIZATION) but its schedule not
# kept (`loadgen.openloop`'s `behind_detail`): its own delays may have set the latencies, so the trial is no evidence
# either, but "saturated" would misname a generator at 40% of its core that was preempted on it.
LOADGEN_BEHIND = "loadgen behind its schedule"
METRIC_MISSING = "metric missing"
# A trial row may carry why it is no evidence for one kind of verdict (for example, "java-platform held 4,881 of
# 10,000 connections" for a per-connection quantity): a judgement sets this column on its own copy of the trials.
SHORTFALL_COLUMN = "evidence_shortfall"


@dataclass
class Evidence:
    """Per condition (label): the metric's values from evidence trials, their ids, and what was left out."""

    metric: str
    values: dict[str, np.ndarray] = field(default_factory=dict)
    trial_ids: dict[str, list[int]] = field(default_factory=dict)
    excluded: list[dict] = field(default_factory=list)  # {"trial", "label", "reason"}
    # Per condition, the evidence trials that were spares: run after the blocks for trials the loadgen spoiled.
    spare_ids: dict[str, list[int]] = field(default_factory=dict)

    def n_used(self, label: str) -> int:
        return int(len(self.values.get(label, ())))

    def n_excluded(self, label: str) -> int:
        return sum(1 for item in self.excluded if item["label"] == label)

    def exclusion_counts(self, labels: Sequence[str] | None = None) -> dict[str, int]:
        """{reason: count} over the given labels (all when None); a reason's detail in brackets ("level not held
        (java-platform held 4,881 of 10,000)") is counted under its general part."""
        return dict(Counter(str(item["reason"]).split(" (", 1)[0] for item in self.excluded
                            if labels is None or item["label"] in labels))

    def n_spares(self, labels: Sequence[str] | None = None) -> int:
        """Evidence trials that were spares (harness.spares), over the given labels (all when None)."""
        return sum(len(ids) for label, ids in self.spare_ids.items() if labels is None or label in labels)

    def summary(self, labels: Sequence[str]) -> str:
        """'6 + 6 trials used (2 of them spares); left out: 2 loadgen saturated' (one line for a verdict's
        explanation)."""
        used = " + ".join(str(self.n_used(label)) for label in labels)
        spares = self.n_spares(labels)
        spare_text = f" ({spares} of them spare{'s' if spares != 1 else ''}, run after the blocks)" if spares else ""
        counts = self.exclusion_counts(labels)
        left = "; left out: " + ", ".join(f"{n} {reason}" for reason, n in sorted(counts.items())) if counts else ""
        return f"{used} trials used{spare_text}{left}"


def with_detail(kind: str, detail) -> str:
    """An exclusion reason that names its case: "level not held (java-platform held 4,881 of 10,000)"."""
    return f"{kind} ({detail})"


def details(excluded: list[dict], label: str, kind: str) -> list[str]:
    """The details of `label`'s exclusions of one kind (`with_detail`), in order: ["java-platform held 4,881 of
    10,000", ...]."""
    return [str(item["reason"]).rsplit(" (", 1)[-1].rstrip(")") for item in excluded
            if item["label"] == label and str(item["reason"]).startswith(kind)]


def _is_true(value) -> bool:
    """A flag read from a table: True or numpy's True; missing, NaN and False are not."""
    return isinstance(value, (bool, np.bool_)) and bool(value)


def exclusion_reason(row) -> str | None:
    """Why one trial row is not evidence, or None when it is."""
    # A microbenchmark's rows carry no status: each is one finished measurement.
    if row.get("status", "ok") != "ok":
        reason = row.get("failure_reason")
        return f"failed: {reason}" if isinstance(reason, str) and reason else "failed"
    if outcome.spoiled_by_loadgen(row):
        return loadgen_reason(row)
    shortfall = row.get(SHORTFALL_COLUMN)
    if isinstance(shortfall, str) and shortfall:
        return shortfall
    return None


def loadgen_reason(row) -> str:
    """Why a trial whose loadgen is marked saturated is no evidence: LOADGEN_BEHIND for an open-loop generator that
    said it fell behind (`loadgen_behind`) with its core under LOADGEN_SATURATION_UTILIZATION busy, else
    LOADGEN_SATURATED."""
    behind = row.get("loadgen_behind")
    busy = pd.to_numeric(pd.Series([row.get("loadgen_cpu_utilization")]), errors="coerce").iloc[0]
    if isinstance(behind, str) and behind and not busy >= LOADGEN_SATURATION_UTILIZATION:
        return LOADGEN_BEHIND
    return LOADGEN_SATURATED


def saturated(trials: pd.DataFrame) -> pd.Series:
    """Per row of `trials`: True where its loadgen was marked saturated (`loadgen_saturated`; missing counts as
    not), all False without the column."""
    if "loadgen_saturated" not in trials:
        return pd.Series(False, index=trials.index)
    return trials["loadgen_saturated"].astype("boolean").fillna(False).astype(bool)


def evidence_trials(trials: pd.DataFrame) -> pd.DataFrame:
    """The trials a verdict may use, as a table's rows: ok, and a loadgen with headroom (`exclusion_reason`'s first
    two reasons, vectorized; `evidence_rows` also drops a level's shortfall)."""
    return trials[(trials["status"] == "ok") & ~saturated(trials)]


def evidence_rows(trials: pd.DataFrame) -> pd.DataFrame:
    """The rows of `trials` that may be evidence (no reason to leave them out)."""
    keep = [exclusion_reason(row) is None for row in trials.to_dict("records")]
    return trials[keep]


def gather(trials: pd.DataFrame, labels: Sequence[str], metric: str, level=None,
           label_column: str = "label") -> Evidence:
    """The evidence for `metric` among the trials of `labels` (at `level` when given)."""
    evidence = Evidence(metric)
    subset = trials[trials[label_column].isin(labels)]
    if level is not None and "level" in subset.columns:
        subset = subset[subset["level"] == level]
    for label in labels:
        values, ids = [], []
        for row in subset[subset[label_column] == label].to_dict("records"):
            trial = int(row["trial"]) if "trial" in row and row["trial"] == row["trial"] else None
            reason = exclusion_reason(row)
            value = pd.to_numeric(pd.Series([row.get(metric)]), errors="coerce").iloc[0]
            if reason is None and not np.isfinite(value):
                reason = METRIC_MISSING
            if reason is not None:
                evidence.excluded.append({"trial": trial, "label": label, "reason": reason})
                continue
            values.append(float(value))
            ids.append(trial)
            if _is_true(row.get("spare")):
                evidence.spare_ids.setdefault(label, []).append(trial)
        evidence.values[label] = np.asarray(values, dtype=float)
        evidence.trial_ids[label] = ids
    return evidence
