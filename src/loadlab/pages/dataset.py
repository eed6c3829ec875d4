"""The open dataset hosted with the pages: reports/data/, tidy tables as CSV and parquet, a Frictionless Data Package.

    reports/data/trials.{csv,parquet}     every trial of every run behind the pages (tables.load_run: the
                                          recorded columns and the derived metrics), one row per trial
    reports/data/verdicts.{csv,parquet}   every verdict (reports/verdicts/*.json), one row per claim judged
    reports/data/margins.{csv,parquet}    the A/A noise margins (reports/noise-floor.json), one row per metric
    reports/data/runs.{csv,parquet}       every run behind the pages: when, where, which commit, its trials
    reports/data/<name>.{csv,parquet}     each microbenchmark's own table (its raw results.parquet), scale dropped
    reports/data/datapackage.json         every table and column with unit and meaning (pages.dictionary)
    reports/data/index.html               the landing page: the tables, the dictionary, one anchor per run

Built from processed tables and raw results by `write_dataset` (the report step), never editing either; the
runs are those the pages recorded (reports/provenance/*.json). Pages link a run as `data/index.html#run-<id>`
(`run_href`), so every link stays inside reports/ when it is hosted alone.
"""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

import pandas as pd

from loadlab import paths, rundir, tables
from loadlab.errors import LoadlabError
from loadlab.rundir import write_json_atomic, write_parquet_atomic, write_text_atomic

from . import dictionary
from .provenance import read_records, run_facts

DATA_DIR_NAME = "data"  # reports/data/
LANDING_PAGE = "index.html"
PACKAGE_FILE = "datapackage.json"
PACKAGE_NAME = "loadlab-open-dataset"
# Encoded blobs a reader cannot use from a CSV; the raw run folders keep them.
DROPPED_COLUMNS = ("latency_histogram_hdr", "allocs_profile_gzip_b64")
RESULTS_FILE = "results.parquet"  # a microbenchmark's one table (study.measure_or_load_frame)
SCALES = ("smoke", "quick", "full")


def run_anchor(run_id: str) -> str:
    return f"run-{run_id}"


def run_href(run_id: str) -> str:
    """A run's place in the dataset, relative to a page in reports/."""
    return f"{DATA_DIR_NAME}/{LANDING_PAGE}#{run_anchor(run_id)}"


def table_name(experiment: str) -> str:
    """A microbenchmark's table: its experiment's name without the scale ("05-microbench-parked")."""
    stem, _, scale = experiment.rpartition("-")
    return stem if scale in SCALES else experiment


def page_runs(reports_dir: Path) -> dict[str, list[str]]:
    """{run id: the notebooks that used it}, from the pages' provenance records, in first-seen order."""
    runs: dict[str, list[str]] = {}
    for record in read_records(reports_dir):
        for run in record["runs"]:
            runs.setdefault(run, []).append(record["notebook"])
    return runs


def _first(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return frame[columns + [c for c in frame.columns if c not in columns]]


def _trials(run_dir: Path) -> pd.DataFrame:
    frame = tables.load_run(run_dir)["trials"].drop(columns=list(DROPPED_COLUMNS), errors="ignore")
    return _first(frame.assign(run_id=run_dir.name, experiment=run_dir.parent.name), ["run_id", "experiment"])


def _microbench(run_dir: Path) -> pd.DataFrame:
    frame = pd.read_parquet(run_dir / RESULTS_FILE).drop(columns=list(DROPPED_COLUMNS), errors="ignore")
    # The programs' "run_id" is the harness's id for its containers, not the run's: renamed, so run_id joins runs.
    frame = frame.rename(columns={"run_id": "microbench_run_id"}).assign(run_id=run_dir.name)
    return _first(frame, ["run_id"])


def _run_row(run_dir: Path, notebooks: list[str], table: str) -> dict:
    facts = run_facts(run_dir)
    manifest = rundir.RunDirectory(run_dir).read_manifest()
    statuses = [trial.status for trial in manifest.trials.values()]
    host, engine, trial_run = facts.host, facts.engine, facts.trial_runs
    return {
        "run_id": facts.run_id, "experiment": facts.experiment, "kind": "trials" if trial_run else "microbenchmark",
        "table": table, "notebooks": ";".join(dict.fromkeys(notebooks)), "scale": facts.scale,
        "status": manifest.status, "created_utc": facts.created_utc, "updated_utc": facts.updated_utc,
        "git_commit": facts.commit, "git_dirty": facts.dirty, "cpu_model": host.get("cpu_model"),
        "cpu_count": host.get("cpu_count"), "kernel": host.get("kernel"), "docker_version": engine.get("docker_version"),
        "trials_planned": len(manifest.trial_order) if trial_run else None,
        "trials_ok": statuses.count("ok") if trial_run else None,
        "trials_failed": statuses.count("failed") if trial_run else None,
        "raw_path": f"data/raw/{run_dir.parent.name}/{run_dir.name}",
    }  # fmt: skip


def _verdicts(reports_dir: Path) -> pd.DataFrame:
    rows = []
    for path in sorted((reports_dir / "verdicts").glob("*.json")):
        for item in json.loads(path.read_text()):
            measured = item.get("measured") or {}
            row = {k: v for k, v in item.items() if k not in ("measured", "excluded", "trial_ids")}
            row.update({"measured_metric": measured.get("metric"),
                        "measured_baseline_median": measured.get("baseline_median"),
                        "measured_candidate_median": measured.get("candidate_median"),
                        "measured_json": json.dumps(measured, sort_keys=True),
                        "excluded_json": json.dumps(item.get("excluded") or []),
                        "trial_ids_json": json.dumps(item.get("trial_ids") or {}, sort_keys=True)})
            rows.append(row)
    frame = pd.DataFrame(rows)
    return _first(frame, ["claim_id", "notebook", "run_id", "verdict"]) if rows else frame


def _margins(reports_dir: Path) -> pd.DataFrame:
    path = reports_dir / "noise-floor.json"
    if not path.exists():
        return pd.DataFrame(columns=list(dictionary.MARGIN_COLUMNS))
    record = json.loads(path.read_text())
    spreads = record.get("instance_spreads") or {}
    return pd.DataFrame([{"aa_run_id": record.get("run_id"), "metric": metric, "margin": margin,
                          "instance_spread": spreads.get(metric)} for metric, margin in record["margins"].items()])


def build_tables(reports_dir: Path = paths.REPORTS_DIR, raw_dir: Path = paths.RAW_DIR) -> dict[str, pd.DataFrame]:
    """{table name: frame} for every run behind the pages, the verdicts and the margins (nothing written)."""
    reports_dir = Path(reports_dir)
    trials, microbench, runs = [], {}, []
    for run_id, notebooks in page_runs(reports_dir).items():
        try:
            run_dir = rundir.find_run(run_id, raw_dir)
        except LoadlabError:  # a page's run that is not on this machine: the dataset cannot hold it
            continue
        if (run_dir / RESULTS_FILE).exists():
            name = table_name(run_dir.parent.name)
            microbench.setdefault(name, []).append(_microbench(run_dir))
        else:
            name = "trials"
            trials.append(_trials(run_dir))
        runs.append(_run_row(run_dir, notebooks, name))
    built = {"trials": pd.concat(trials, ignore_index=True) if trials else pd.DataFrame(columns=["run_id"]),
             "verdicts": _verdicts(reports_dir), "margins": _margins(reports_dir), "runs": pd.DataFrame(runs)}
    built.update({name: pd.concat(frames, ignore_index=True) for name, frames in sorted(microbench.items())})
    return built


def undescribed(built: dict[str, pd.DataFrame]) -> list[str]:
    """"table.column" for every column the dictionary does not describe (tests/test_dataset.py wants none)."""
    return [f"{name}.{column}" for name, frame in built.items() for column in frame.columns
            if dictionary.describe(name, column) is None]


def _tidy_types(frame: pd.DataFrame) -> pd.DataFrame:
    """One type per column, as CSV and the Data Package state it: whole-number floats (an integer column with
    gaps) become nullable integers, anything mixed (a string among numbers, a list) becomes text."""
    out = frame.copy()
    for column in out.columns:
        series = out[column]
        present = series.dropna()
        if pd.api.types.is_float_dtype(series) and len(present) and (present == present.round()).all() \
                and present.abs().max() < 2**53:
            out[column] = series.astype("Int64")
        elif not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
            out[column] = series.map(lambda v: None if v is None or (isinstance(v, float) and v != v)
                                     else json.dumps(v) if isinstance(v, dict | list) else str(v)).astype("string")
    return out


def _field_type(series: pd.Series) -> str:
    if pd.api.types.is_bool_dtype(series):
        return "boolean"
    if pd.api.types.is_integer_dtype(series):
        return "integer"
    if pd.api.types.is_numeric_dtype(series):
        return "number"
    return "string"


def _field(table: str, column: str, series: pd.Series) -> dict:
    described = dictionary.describe(table, column)
    field = {"name": column, "type": _field_type(series),
             "description": described.description if described else ""}
    if described and described.unit:
        field["unit"] = described.unit  # a custom property (Table Schema allows them): loadlab.units' symbol
    return field


def _resource(name: str, frame: pd.DataFrame) -> dict:
    return {"name": name, "path": f"{name}.csv", "profile": "tabular-data-resource", "format": "csv",
            "mediatype": "text/csv", "encoding": "utf-8", "description": dictionary.table_description(name),
            "schema": {"fields": [_field(name, column, frame[column]) for column in frame.columns],
                       "missingValues": [""]}}


def package_descriptor(built: dict[str, pd.DataFrame], exported_utc: str) -> dict:
    """The Data Package (https://specs.frictionlessdata.io/data-package/) describing every table written."""
    return {"name": PACKAGE_NAME, "title": "loadlab open dataset: what does a concurrency runtime cost under load?",
            "description": "Every trial, verdict, noise margin, run and microbenchmark record behind the loadlab "
                           "report pages, as tidy tables. Units: each field's unit property (loadlab.units symbols; 1 "
                           "is a count or a fraction). Each table's parquet copy sits beside its CSV.",
            "profile": "tabular-data-package", "created": exported_utc,
            "licenses": [{"name": "MIT", "title": "MIT License"}],
            "resources": [_resource(name, frame) for name, frame in built.items()]}


def write_dataset(reports_dir: Path = paths.REPORTS_DIR, raw_dir: Path = paths.RAW_DIR) -> dict:
    """Write reports/data/ afresh (tables as CSV and parquet, datapackage.json, index.html); returns the descriptor.

    Files of tables no longer built are removed with the rest of the folder's old contents."""
    import datetime as dt

    reports_dir = Path(reports_dir)
    built = {name: _tidy_types(frame) for name, frame in build_tables(reports_dir, raw_dir).items()}
    out = reports_dir / DATA_DIR_NAME
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name, frame in built.items():
        write_text_atomic(out / f"{name}.csv", frame.to_csv(index=False, lineterminator="\n"))
        write_parquet_atomic(out / f"{name}.parquet", frame)
    descriptor = package_descriptor(built, dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    write_json_atomic(out / PACKAGE_FILE, descriptor)
    write_text_atomic(out / LANDING_PAGE, landing_page(descriptor, built["runs"], {name: len(frame) for name, frame in built.items()}))
    return descriptor


def landing_page(descriptor: dict, runs: pd.DataFrame, rows: dict[str, int]) -> str:
    """reports/data/index.html: what the dataset holds, each table's columns with units, one anchor per run."""
    e = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8"><title>loadlab open dataset</title>',
             "<style>body{font-family:sans-serif;max-width:90em;margin:2em auto;padding:0 1.5em;line-height:1.4}"
             "table{border-collapse:collapse;font-size:90%}td,th{border:1px solid #ccc;padding:.2em .5em;"
             "text-align:left;vertical-align:top}:target{background:#fff3c4}</style></head><body>",
             f"<h1>{e(descriptor['title'])}</h1>",
             f"<p>{e(descriptor['description'])} Built {e(descriptor['created'])} from the runs' processed tables "
             f"and raw results. <a href=\"{PACKAGE_FILE}\">datapackage.json</a> (Frictionless Data Package) "
             'describes every table and column; <a href="../index.html">back to the reports</a>.</p>',
             "<h2>Tables</h2><table><tr><th>table</th><th>rows</th><th>files</th><th>what a row is</th></tr>"]
    for resource in descriptor["resources"]:
        name = resource["name"]
        parts.append(f'<tr><td><a href="#table-{e(name)}">{e(name)}</a></td><td>{rows.get(name, 0):,}</td>'
                     f'<td><a href="{e(name)}.csv">CSV</a> · <a href="{e(name)}.parquet">parquet</a></td>'
                     f"<td>{e(resource['description'])}</td></tr>")
    parts.append("</table>")
    parts += _runs_section(runs)
    parts.append("<h2>Data dictionary</h2>")
    for resource in descriptor["resources"]:
        parts.append(f'<h3 id="table-{e(resource["name"])}">{e(resource["name"])}</h3>'
                     "<table><tr><th>column</th><th>type</th><th>unit</th><th>meaning, and how measured</th></tr>")
        parts += [f"<tr><td><code>{e(f['name'])}</code></td><td>{e(f['type'])}</td><td>{e(f.get('unit', ''))}</td>"
                  f"<td>{e(f['description'])}</td></tr>" for f in resource["schema"]["fields"]]
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _runs_section(runs: pd.DataFrame) -> list[str]:
    """One row per run, each with its anchor (the pages' data links point here)."""
    e = html.escape
    parts = ["<h2>Runs</h2><p>Every run behind the pages. Its rows are those with its <code>run_id</code> in the "
             "table named; its raw files (manifest, every trial's captures) are in the repository at the path "
             "given, not in this folder.</p>",
             "<table><tr><th>run</th><th>pages</th><th>table</th><th>measured (UTC)</th><th>machine</th>"
             "<th>commit</th><th>trials</th><th>raw files (repository)</th></tr>"]
    for run in runs.to_dict("records"):
        trials = "" if run.get("kind") != "trials" else \
            f"{run['trials_ok']} of {run['trials_planned']} ok, {run['trials_failed']} failed"
        parts.append(f'<tr id="{e(run_anchor(run["run_id"]))}"><td>{e(run["run_id"])}</td>'
                     f"<td>{e(str(run['notebooks']).replace(';', ', '))}</td>"
                     f'<td><a href="#table-{e(run["table"])}">{e(run["table"])}</a></td>'
                     f"<td>{e(str(run['created_utc'] or ''))}</td><td>{e(str(run['cpu_model'] or ''))}, "
                     f"{e(str(run['cpu_count'] or '?'))} CPUs</td><td>{e(str(run['git_commit'] or '')[:10])}</td>"
                     f"<td>{e(trials)}</td><td><code>{e(run['raw_path'])}</code></td></tr>")
    parts.append("</table>")
    return parts


def index_facts(descriptor: dict, reports_dir: Path = paths.REPORTS_DIR) -> dict:
    """What the index's dataset block says: its page, package, tables (CSV links, rows) and size on disk."""
    out = Path(reports_dir) / DATA_DIR_NAME
    size = sum(path.stat().st_size for path in out.iterdir() if path.is_file())
    import pyarrow.parquet

    rows = {resource["name"]: pyarrow.parquet.read_metadata(out / f"{resource['name']}.parquet").num_rows
            for resource in descriptor["resources"]}
    return {"page": f"{DATA_DIR_NAME}/{LANDING_PAGE}", "package": f"{DATA_DIR_NAME}/{PACKAGE_FILE}",
            "size": f"{size / 1024**2:.1f} MiB",
            "tables": [{"name": name, "csv": f"{DATA_DIR_NAME}/{name}.csv", "rows": f"{count:,}"}
                       for name, count in rows.items()]}
