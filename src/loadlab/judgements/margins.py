"""The A/A noise margin of each metric: how far apart two fresh instances of one server land, in this sitting.

Every sitting measures an A/A control: the same server as two conditions,
randomized like any experiment (notebook 00's plan, `plans.noise`). One A/A
serves every notebook of a `make reproduce`; a notebook measured alone
measures its own (`study.measure_or_load(..., aa_control=True)`). A verdict
only ever uses the A/A of its own run's sitting (`hostfacts.same_sitting`:
same sitting id, boot and machine); a run with none gets no margin, and its
record says why.

The margin is a smallest effect of interest, not the precision of an estimate:

    s = 1.0483 * median over pairs i < j of |log x_i - log x_j|   (Shamos)
    m = exp(z_0.975 * sqrt(2) * s) - 1

s is the between-instance spread of the metric on the log scale: every A/A
trial is a fresh instance of the same server, both conditions pooled, and
every pair of them is a pair of instances. Two fresh instances of one server differ on the log
scale by about N(0, 2 s^2), so 95% of such pairs land within a factor 1 + m
of each other. A difference smaller than what separates two instances of the
same server is not a difference of interest. Unlike the width of an interval,
m does not shrink toward 0 as A/A trials are added: it estimates a spread
(3.5% between instances here gives m of about 10%).

A disturbed A/A trial (another tenant's burst, say) is handled by a stated
rule, not silently: a trial farther than 3.5 s from the median of all A/A
trials is named in `NoiseMargins.disturbed` (the page and each verdict's
record print it) and left out, and s is taken again on the rest.

A ratio is unit-free, so a metric shown in MiB or ms gets the margin of the
same quantity recorded in bytes or seconds; derived metrics (CPU share, CPU
per request) are `loadlab.metrics`' columns, as every table has them. A metric the A/A run
cannot speak for (GC pauses, microbenchmark counts) gets no margin, and the
rule then has no "within noise" verdict for it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd

from loadlab import hostfacts, metrics, paths, rundir, tables
from loadlab.judgements import evidence as evidence_policy
from loadlab.manifest import Manifest

AA_EXPERIMENT_PREFIX = "00-aa-noise-"
# 95% of pairs of fresh instances of one server land within the margin of each other.
PAIR_COVERAGE = 0.95
# For normal data the median of |x_i - x_j| is 0.954 sigma: sigma = 1.0483 x that median (Shamos).
SHAMOS_TO_SD = 1.0483
DISTURBED_SPREADS = 3.5
# The metrics the verdicts are judged on that an A/A run records (notebook 00 shows each one's margin).
AA_METRICS = ("throughput_rps", "memory_peak_mib", "process_rss_mib", "latency_p99_s", "server_cpu_pct",
              "server_cpu_user_pct_of_allowance", "cpu_us_per_request", "tasks_peak")
# Unit suffixes that name the same quantity in another unit (a ratio does not see the unit).
_SAME_QUANTITY_SUFFIXES = ("_bytes", "_mib", "_mb", "_s", "_ms", "_us", "_seconds")


class NoiseMargins(dict):
    """{metric: m}, with where the margins came from: the A/A run, or why there is none."""

    def __init__(self, margins=(), aa_run_id: str | None = None, why: str = "", disturbed=None, spreads=None,
                 source: str | None = None):
        super().__init__(margins)
        self.aa_run_id = aa_run_id
        self.why = why
        self.disturbed = dict(disturbed or {})
        self.spreads = dict(spreads or {})
        self.source = source  # where margins not from an A/A run came from (margins_from_replicates)

    def source_text(self) -> str:
        if self.source is not None:
            return self.source
        if self.aa_run_id is None:
            return f"no noise margin: {self.why}"
        disturbed = "; ".join(f"{metric}: trials {', '.join(map(str, trials))}"
                              for metric, trials in self.disturbed.items() if trials)
        return (f"noise margins from this sitting's A/A run {self.aa_run_id}"
                + (f" (disturbed A/A trials, named and left out of the spread: {disturbed})" if disturbed else ""))


def margin_table(margins: NoiseMargins) -> pd.DataFrame:
    """One row per metric, for a page: the between-instance spread s and the margin m (both in %), the noise band,
    and the disturbed A/A trials named."""
    rows = [{"metric": metric, "between-instance spread s (%)": 100 * margins.spreads.get(metric, math.nan),
             "margin m (%)": 100 * margin, "noise band": f"{1 / (1 + margin):.3f} to {1 + margin:.3f}",
             "disturbed A/A trials (left out)": ", ".join(map(str, margins.disturbed.get(metric) or [])) or "none"}
            for metric, margin in margins.items()]
    return pd.DataFrame(rows, columns=["metric", "between-instance spread s (%)", "margin m (%)", "noise band",
                                       "disturbed A/A trials (left out)"])


def margin_from_spread(spread: float) -> float:
    """m = exp(z * sqrt(2) * s) - 1: the factor within which 95% of pairs of fresh instances land."""
    if not math.isfinite(spread) or spread < 0:
        return math.nan
    z = NormalDist().inv_cdf(0.5 + PAIR_COVERAGE / 2)
    return math.exp(z * math.sqrt(2.0) * spread) - 1.0


def _pair_differences(logs: np.ndarray) -> np.ndarray:
    """|log x_i - log x_j| over every pair i < j."""
    upper = np.triu_indices(logs.size, k=1)
    return np.abs(logs[:, None] - logs[None, :])[upper]


def _shamos(logs: np.ndarray) -> float:
    return SHAMOS_TO_SD * float(np.median(_pair_differences(logs)))


def instance_spread(trials: pd.DataFrame, column: str) -> tuple[float, list]:
    """(s, disturbed trials): the between-instance spread of log(column) over the A/A's fresh instances, and the
    trials left out of it as disturbed.

    s is Shamos's estimator, SHAMOS_TO_SD x the median of |log x_i - log x_j| over every pair of instances: every
    A/A trial is an instance of the same server, so each pair is exactly what the margin is about, and no
    centring is needed (which would bias a MAD low at 6 trials a side). The rule for a disturbed trial: one
    farther than DISTURBED_SPREADS * s from the median is named and left out, and s is taken again on the rest.
    """
    values = pd.to_numeric(trials[column], errors="coerce")
    keep = values.notna() & (values > 0)
    logs = np.log(values[keep].to_numpy(dtype=float))
    if logs.size < 4:
        return math.nan, []
    names = list(trials.loc[keep, "trial"] if "trial" in trials else trials.index[keep])
    spread = _shamos(logs)
    far = np.abs(logs - np.median(logs)) > DISTURBED_SPREADS * spread if spread > 0 else np.zeros(logs.size, bool)
    if far.any() and (~far).sum() >= 4:
        spread = _shamos(logs[~far])
    disturbed = [name for name, out in zip(names, far) if out]
    return spread, [int(n) if isinstance(n, (int, np.integer)) else n for n in disturbed]


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


def margins_from_aa(aa_trials: pd.DataFrame, names: Iterable[str], aa_run_id: str | None = None) -> NoiseMargins:
    """The margin of every metric the A/A trials recorded (module docstring)."""
    evidence = evidence_policy.evidence_rows(aa_trials)  # the verdicts' own policy: ok, loadgen not saturated
    if "cpu_allowance_cores" not in evidence:
        # The A/A run has no quota: its allowance is the one pinned core (a constant: the spread does not see it).
        evidence = evidence.assign(cpu_allowance_cores=1.0)
    # A metric is taken as recorded where the trials recorded its quantity (in bytes for MiB, in seconds for ms),
    # else as `loadlab.metrics` derives it; an A/A run recorded before an input existed has no margin for it.
    recorded = [c for c in evidence.columns if not (c in metrics.REGISTRY and metrics.REGISTRY[c].derived)]
    evidence = metrics.with_derived(evidence)
    margins, disturbed, spreads = {}, {}, {}
    for metric in dict.fromkeys(names):
        if not isinstance(metric, str):
            continue
        name = metrics.canonical(metric)
        column = _recorded_column(name, recorded) or (name if name in evidence else None)
        if column is None:
            continue
        spread, named = instance_spread(evidence, column)
        if math.isfinite(spread):
            margins[metric], disturbed[metric], spreads[metric] = margin_from_spread(spread), named, spread
    return NoiseMargins(margins, aa_run_id=aa_run_id, disturbed=disturbed, spreads=spreads)


def margins_from_replicates(trials: pd.DataFrame, labels: Iterable[str], level, names: Iterable[str],
                            run_id: str, load_text: str) -> NoiseMargins:
    """The margin of each metric from the compared servers' own trials at one level: every trial is a fresh
    instance, so each pair of one server's trials is a pair of instances, as in the A/A (module docstring).

    For a load the A/A run does not measure: 00's A/A is a closed loop on /json, and a closed loop's p99 is not
    an open loop's at a fraction of capacity, so an open-loop verdict takes its margin from its own load (issue
    28's note: a margin measured elsewhere is not this comparison's). Pairs are taken within each server only
    (a pair across the two servers would count the difference under test as noise) and pooled; a server needs
    4 evidence trials at the level, and a trial farther than DISTURBED_SPREADS of its server's own spread from
    its median is named and left out, as in the A/A.
    """
    labels = list(labels)
    evidence = evidence_policy.evidence_rows(trials)
    evidence = metrics.with_derived(evidence[(evidence["level"] == level) & evidence["label"].isin(labels)])
    margins, disturbed, spreads = {}, {}, {}
    for metric in dict.fromkeys(names):
        name = metrics.canonical(metric)
        column = _recorded_column(name, evidence.columns) or (name if name in evidence else None)
        if column is None:
            continue
        differences, named = [], []
        for _label, own in evidence.groupby("label"):
            spread, far = instance_spread(own, column)
            if not math.isfinite(spread):
                continue
            kept = own[~own["trial"].isin(far)] if "trial" in own else own
            values = pd.to_numeric(kept[column], errors="coerce")
            differences.extend(_pair_differences(np.log(values[values.notna() & (values > 0)].to_numpy(dtype=float))))
            named.extend(far)
        if len(differences) >= 6:  # at least the pairs of 4 instances of one server
            spread = SHAMOS_TO_SD * float(np.median(differences))
            margins[metric], disturbed[metric], spreads[metric] = margin_from_spread(spread), named, spread
    source = (f"noise margins from the instance spread of {' and '.join(labels)}'s own trials at level {level:g} of "
              f"run {run_id} ({load_text}): pairs of one server's fresh instances, as in the A/A, whose closed loop "
              "on /json is another load")
    return NoiseMargins(margins, why="" if margins else "too few evidence trials at the level", disturbed=disturbed,
                        spreads=spreads, source=source if margins else f"no noise margin: {run_id} had fewer than 4 "
                        f"evidence trials of a server at level {level:g}")


def aa_run_in_sitting(sitting: dict | None, raw_dir: Path | None = None) -> Path | None:
    """The newest complete A/A run measured in `sitting`, or None."""
    for run in rundir.list_runs(Path(raw_dir or paths.RAW_DIR)):
        if not str(run["experiment"] or "").startswith(AA_EXPERIMENT_PREFIX) or run["status"] != rundir.STATUS_COMPLETE:
            continue
        manifest = rundir.RunDirectory(Path(run["path"])).read_manifest()
        if hostfacts.same_sitting(manifest.provenance.get("sitting"), sitting):
            return Path(run["path"])
    return None


def noise_margins(study, metrics: Iterable[str], raw_dir: Path | None = None) -> NoiseMargins:
    """{metric: m} for a run (a `study.Study` or its manifest), from the A/A run of that run's sitting only."""
    manifest = study if isinstance(study, Manifest) else study.manifest
    sitting = manifest.provenance.get("sitting")
    if not sitting:
        return NoiseMargins(why=f"run {manifest.run_id} records no sitting (measured before sittings were "
                                "recorded), so no A/A control can be shown to share its machine and sitting")
    raw_dir = Path(raw_dir or paths.RAW_DIR)
    aa_dir = aa_run_in_sitting(sitting, raw_dir)
    if aa_dir is None:
        return NoiseMargins(why=f"no complete A/A run in the sitting of run {manifest.run_id}")
    return margins_from_aa(tables.load_run(aa_dir, raw_dir)["trials"], metrics, aa_run_id=aa_dir.name)


def write_noise_floor(path: Path, aa_run_id: str, margins: NoiseMargins, noise: dict) -> Path:
    """Notebook 00's record of this sitting's noise (reports/noise-floor.json): the A/A run, each metric's margin
    and instance spread, and stats.noise_floor's throughput CVs and ratio."""
    rundir.write_json_atomic(path, json.loads(json.dumps(
        {"run_id": aa_run_id, "margins": dict(margins), "instance_spreads": margins.spreads, **noise}, default=float)))
    return path
