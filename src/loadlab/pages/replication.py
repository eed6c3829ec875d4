"""Notebook 99's "does a second run agree?": the committed replication table, read against the verdicts shown."""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from loadlab.hostfacts import machine_text
from loadlab.judgements.replication import about_these_verdicts, comparison
from loadlab.units import format_ratio, format_ratio_interval


def _interval(ratio, low, high) -> str:
    def finite(value) -> bool:
        return isinstance(value, int | float) and math.isfinite(value)

    if not finite(ratio):
        return ""
    return format_ratio_interval(ratio, low, high) if finite(low) and finite(high) else format_ratio(ratio)


def _yes_no(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return "yes" if bool(value) else "no"


def replication_rows(table: pd.DataFrame, verdicts: Iterable) -> pd.DataFrame:
    """The rows about the verdicts shown, one line each, ratios with their intervals as text."""
    rows = table[about_these_verdicts(table, list(verdicts))] if len(table) else table
    return pd.DataFrame({
        "claim": rows["claim"], "comparison": rows["comparison"],
        "reference": [_interval(*values) for values in
                      rows[["reference_ratio", "reference_ci_low", "reference_ci_high"]].itertuples(index=False)],
        "reference verdict": rows["reference_verdict"],
        "second run": [_interval(*values) for values in
                       rows[["new_ratio", "new_ci_low", "new_ci_high"]].itertuples(index=False)],
        "second run's verdict": rows["new_verdict"],
        "inside the reference interval": [_yes_no(value) for value in rows["inside_reference_interval"]],
        "same verdict": [_yes_no(value) for value in rows["same_verdict"]],
    }).reset_index(drop=True)


def _machine_words(machine: dict) -> str:
    """"Intel(R) Xeon(R) Processor, 2 CPUs, kernel 6.18.44-fc-v669 (machine ba8a7afdc5a4)"."""
    return machine_text(machine) + (f" (machine {machine['fingerprint']})" if machine.get("fingerprint") else "")


def machines_text(machines: dict | None) -> str:
    """Where the two sides ran: one sentence saying they ran on one machine, or each side's machines."""
    if not machines or not (machines.get("reference") or machines.get("new")):
        return "The comparison on record does not say which machines the two runs were on."
    reference, new = machines.get("reference") or [], machines.get("new") or []
    if reference == new and len(reference) == 1:
        return f"Both runs were on one machine: {_machine_words(reference[0])}."

    def side(entries):
        return "; ".join(_machine_words(m) for m in entries) or "not recorded"
    return (f"The runs were on different machines: the reference on {side(reference)}; the second run on "
            f"{side(new)}.")


def replication_text(table: pd.DataFrame | None, written_utc: str | None, verdicts: Iterable,
                     machines: dict | None = None) -> str:
    """One paragraph: how many of the shown ratio verdicts a second, independent run replicated, and what was not
    re-run."""
    verdicts = list(verdicts)
    if table is None:
        return ("*No second run has been compared with these verdicts yet. `make reproduce` measures one and ends "
                "with the comparison (reports/replication.json).*")
    rows = table[about_these_verdicts(table, verdicts)] if len(table) else table
    if rows.empty:
        return ("*The comparison on record is about verdicts that have since been measured again; none of its rows "
                "is about a verdict shown here.*")
    ratios = rows["inside_reference_interval"].dropna().astype(bool)
    # "03-json-api-quick-20261126T102259Z-a94d3d" -> "03-json-api-quick": each experiment measured twice.
    experiments = sorted({str(run_id).rsplit("-", 2)[0] for run_id in rows["new_run_id"]})
    compared = set(zip(rows["claim"], rows["comparison"], strict=True))
    not_rerun = sorted({v.claim_id for v in verdicts
                        if v.measured_ratio is not None and (v.claim_id, comparison(v)) not in compared})
    when = f" on {written_utc[:10]}" if written_utc else ""
    text = (f"A second, independent run of the same plans{when} put "
            f"**{int(ratios.sum())} of {len(ratios)}** ratio estimates inside the reference's interval (the interval "
            f"each verdict uses: simultaneous 95% over its source's ratio verdicts), and gave the same verdict in "
            f"{int(rows['same_verdict'].sum())} of {len(rows)} rows. Experiments measured a second time: "
            f"{', '.join(experiments)} (both runs' ids in reports/replication.json).")
    if not_rerun:
        text += (" Not run a second time, so not counted: " + ", ".join(not_rerun) + ".")
    return text + " " + machines_text(machines)
