"""Does a new run replicate the committed reference? One row per ratio verdict present in both.

For each (claim, baseline, candidate): whether the new estimate falls inside
the reference interval, whether the verdict label is the same, and in the
end "N of M replicated". `loadlab notebooks` keeps the verdicts it is about
to replace and, after a measuring run, writes this table to
reports/replication.json and prints it; notebook 99 shows the one committed.

Only verdicts drawn from different runs of the same scale are compared:
a measuring run of some notebooks (`--only`) leaves the others' verdicts as
they were, a verdict compared with itself replicates by construction, and a
smoke run (2 trials a side, what CI runs) replicates nothing of the quick
reference.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from loadlab import paths, rundir
from loadlab.errors import LoadlabError
from loadlab.judgements.evidence import evidence_trials
from loadlab.judgements.verdicts import load_verdicts
from loadlab.rundir import write_json_atomic
from loadlab.stats import shift_ratio_interval

REPLICATION_FILE = "replication.json"
COLUMNS = ("claim", "comparison", "reference_ratio", "reference_ci_low", "reference_ci_high", "reference_verdict",
           "new_ratio", "new_ci_low", "new_ci_high", "new_verdict", "inside_reference_interval", "same_verdict",
           "reference_run_id", "new_run_id")


def comparison(verdict) -> str:
    """"rust / go" (candidate / baseline), or "" for a verdict that compares no two servers."""
    return f"{verdict.candidate} / {verdict.baseline}" if verdict.candidate and verdict.baseline else ""


def _key(verdict) -> tuple:
    return (verdict.claim_id, verdict.baseline, verdict.candidate)


def _finite(value) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def replication_table(reference: Iterable, new: Iterable) -> pd.DataFrame:
    """Rows for verdicts present in both sets and drawn from different runs; ratio columns are None where a side
    has no ratio."""
    reference_by_key = {_key(v): v for v in reference}
    rows = []
    for verdict in new:
        old = reference_by_key.get(_key(verdict))
        # A smoke run's verdicts (2 trials a side) are no replication of the quick reference's.
        if old is None or old.run_id == verdict.run_id or \
                rundir.run_scale(old.run_id) != rundir.run_scale(verdict.run_id):
            continue
        inside = None
        if all(_finite(x) for x in (old.ratio_ci_low, old.ratio_ci_high, verdict.measured_ratio)):
            inside = bool(old.ratio_ci_low <= verdict.measured_ratio <= old.ratio_ci_high)
        rows.append({
            "claim": verdict.claim_id,
            "comparison": comparison(verdict),
            "reference_ratio": old.measured_ratio, "reference_ci_low": old.ratio_ci_low,
            "reference_ci_high": old.ratio_ci_high, "reference_verdict": old.verdict,
            "new_ratio": verdict.measured_ratio, "new_ci_low": verdict.ratio_ci_low, "new_ci_high": verdict.ratio_ci_high,
            "new_verdict": verdict.verdict, "inside_reference_interval": inside,
            "same_verdict": old.verdict == verdict.verdict,
            "reference_run_id": old.run_id, "new_run_id": verdict.run_id,
        })
    return pd.DataFrame(rows, columns=list(COLUMNS))


def summary_line(table: pd.DataFrame) -> str:
    """"9 of 14 ratio estimates inside the reference interval; 20 of 31 verdicts the same"."""
    if table.empty:
        return "no verdict of a new run to compare with the reference (every verdict comes from the same run)"
    ratios = table["inside_reference_interval"].dropna()
    return (f"{int(ratios.sum())} of {len(ratios)} ratio estimates replicated (inside the reference interval); "
            f"{int(table['same_verdict'].sum())} of {len(table)} verdicts the same")


def keep_reference(verdicts_dir: Path, keep_dir: Path) -> Path | None:
    """Copy the verdicts about to be replaced; None when there are none."""
    files = sorted(Path(verdicts_dir).glob("*.json"))
    if not files:
        return None
    Path(keep_dir).mkdir(parents=True, exist_ok=True)
    for path in files:
        shutil.copy2(path, Path(keep_dir) / path.name)
    return Path(keep_dir)


def run_machine(run_id: str, raw_dir: Path | None = None) -> dict | None:
    """The machine a run recorded: its fingerprint (hostfacts.sitting), CPU model, CPU count and kernel; None when
    the run is not under `raw_dir` or recorded none."""
    try:
        manifest = json.loads((rundir.find_run(run_id, raw_dir or paths.RAW_DIR) / "manifest.json").read_text())
    except (OSError, ValueError, LoadlabError):
        return None
    provenance = manifest.get("provenance") or {}
    host = provenance.get("host") or {}
    # The host's own keys (hostfacts.host_description), so hostfacts.machine_text reads an entry as it reads a host.
    machine = {"fingerprint": (provenance.get("sitting") or {}).get("machine"), "cpu_model": host.get("cpu_model"),
               "cpu_count": host.get("cpu_count"), "kernel": host.get("kernel")}
    return machine if any(machine.values()) else None


def machines(table: pd.DataFrame, raw_dir: Path | None = None) -> dict[str, list[dict]]:
    """{"reference": [...], "new": [...]}: the distinct machines each side's runs recorded, read while both sides'
    runs are still under `raw_dir` (a fresh clone holds the reference's until the new one is committed)."""
    sides = {}
    for side in ("reference", "new"):
        seen = []
        for run_id in sorted(set(table[f"{side}_run_id"].dropna())) if len(table) else ():
            machine = run_machine(run_id, raw_dir)
            if machine is not None and machine not in seen:
                seen.append(machine)
        sides[side] = seen
    return sides


def write_replication(reference_dir: Path, new_dir: Path, output: Path, raw_dir: Path | None = None) -> pd.DataFrame:
    """Compare two verdict folders, write the table, its summary line and each side's machines as JSON, and return
    the table."""
    table = replication_table(load_verdicts(reference_dir), load_verdicts(new_dir))
    write_json_atomic(output, {"summary": summary_line(table), "written_utc": rundir.now_utc(),
                               "machines": machines(table, raw_dir),
                               "rows": table.astype(object).where(table.notna(), None).to_dict("records")})
    return table


def _read_document(path: Path) -> dict | None:
    path = Path(path)
    return json.loads(path.read_text()) if path.exists() else None


def read_machines(path: Path) -> dict | None:
    """The machines a replication.json recorded for each side ({"reference": [...], "new": [...]}); None when it
    recorded none (files written before 2026-11-29) or there is no file."""
    document = _read_document(path)
    return document.get("machines") if document is not None else None


def read_replication(path: Path) -> tuple[pd.DataFrame, str | None] | None:
    """(table, when written) from a replication.json; None when there is none."""
    document = _read_document(path)
    if document is None:
        return None
    return pd.DataFrame(document.get("rows") or [], columns=list(COLUMNS)), document.get("written_utc")


def about_these_verdicts(table: pd.DataFrame, verdicts: Iterable) -> pd.Series:
    """Per row: is one side of it the current verdict (the same run and ratio)?

    A replication table compares two runs of one day. On the committed
    collection the current verdicts are its reference side; after a
    `make reproduce` they are its new side. A row neither side of which is
    shown any more (the claim was re-measured since) says nothing about the
    verdicts on the page, and is left out of the count.
    """
    current = {(v.claim_id, comparison(v)): v for v in verdicts}

    def side_matches(verdict, run_id, ratio, label) -> bool:
        if verdict.run_id != run_id:
            return False
        if _finite(verdict.measured_ratio) and _finite(ratio):
            return math.isclose(verdict.measured_ratio, ratio, rel_tol=1e-9)
        return verdict.verdict == label

    def matches(row) -> bool:
        verdict = current.get((row["claim"], row["comparison"]))
        return verdict is not None and (
            side_matches(verdict, row["reference_run_id"], row["reference_ratio"], row["reference_verdict"])
            or side_matches(verdict, row["new_run_id"], row["new_ratio"], row["new_verdict"]))

    return table.apply(matches, axis=1).astype(bool) if len(table) else pd.Series([], dtype=bool)


RUN_SHIFT_COLUMNS = ("metric", "label", "level", "n_reference", "n_new", "reference_median", "new_median",
                     "ratio", "ratio_ci_low", "ratio_ci_high", "runs_differ")


def run_shift_table(reference_trials: pd.DataFrame, new_trials: pd.DataFrame, metrics: Iterable[str],
                    confidence: float = 0.95) -> pd.DataFrame:
    """Where two runs of one experiment disagree: per metric and condition, new / reference with its interval.

    Only evidence trials (ok, loadgen not saturated) of conditions present in
    both runs. `ratio` is the Hodges-Lehmann ratio of the new run's trials to
    the reference's, with its exact interval; `runs_differ` is True when
    that interval excludes 1: the second run's trials are not a sample of
    the same population as the first's, a difference the intervals of either
    run alone cannot show.
    """
    reference, new = evidence_trials(reference_trials), evidence_trials(new_trials)
    rows = []
    for metric in metrics:
        if metric not in reference or metric not in new:
            continue
        for (label, level), block in reference.groupby(["label", "level"]):
            other = new[(new["label"] == label) & (new["level"] == level)]
            before = pd.to_numeric(block[metric], errors="coerce").dropna().to_numpy(dtype=float)
            after = pd.to_numeric(other[metric], errors="coerce").dropna().to_numpy(dtype=float)
            if before.size < 2 or after.size < 2 or (before <= 0).any() or (after <= 0).any():
                continue
            interval = shift_ratio_interval(before, after, confidence)
            differ = bool(math.isfinite(interval.ci_low) and not interval.ci_low <= 1 <= interval.ci_high)
            rows.append({"metric": metric, "label": label, "level": level, "n_reference": before.size,
                         "n_new": after.size, "reference_median": float(pd.Series(before).median()),
                         "new_median": float(pd.Series(after).median()), "ratio": interval.ratio,
                         "ratio_ci_low": interval.ci_low, "ratio_ci_high": interval.ci_high, "runs_differ": differ})
    return pd.DataFrame(rows, columns=list(RUN_SHIFT_COLUMNS))
