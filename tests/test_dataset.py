"""The open dataset (reports/data/): built from the committed runs, valid as a Frictionless Data Package, every
column described with its unit, every run behind the pages in it (loadlab.pages.dataset, pages.dictionary)."""

import json
import shutil

import pandas as pd
import pytest
from frictionless import validate

from loadlab import paths
from loadlab.pages import dataset, dictionary


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The dataset of the committed pages' runs, written into a copy of what the report step reads."""
    reports = tmp_path_factory.mktemp("reports")
    for name in ("provenance", "verdicts"):
        shutil.copytree(paths.REPORTS_DIR / name, reports / name)
    shutil.copy(paths.REPORTS_DIR / "noise-floor.json", reports / "noise-floor.json")
    descriptor = dataset.write_dataset(reports)
    return reports / dataset.DATA_DIR_NAME, descriptor


def test_the_package_validates_with_frictionless(built):
    folder, _ = built
    report = validate(str(folder / dataset.PACKAGE_FILE))
    problems = [f"{task.name}: {error.message}" for task in report.tasks for error in task.errors][:10]
    assert report.valid, problems + [error.message for error in report.errors][:5]


def test_every_column_of_every_table_is_described(built):
    folder, descriptor = built
    tables = {resource["name"]: pd.read_parquet(folder / f"{resource['name']}.parquet")
              for resource in descriptor["resources"]}
    assert {"trials", "verdicts", "margins", "runs"} <= set(tables)
    assert dataset.undescribed(tables) == []
    for resource in descriptor["resources"]:
        assert resource["description"], resource["name"]
        fields = resource["schema"]["fields"]
        assert [field["name"] for field in fields] == list(tables[resource["name"]].columns)
        assert all(field["description"] for field in fields), resource["name"]


def test_metric_columns_carry_the_registry_unit(built):
    _, descriptor = built
    trials = next(r for r in descriptor["resources"] if r["name"] == "trials")
    units = {field["name"]: field.get("unit") for field in trials["schema"]["fields"]}
    assert units["throughput_rps"] == "req/s" and units["memory_peak_mib"] == "MiB"
    assert units["latency_p99_s"] == "s" and units["server_cpu_pct"] == "%"


def test_a_column_nobody_described_is_caught():
    frames = {"trials": pd.DataFrame(columns=["run_id", "throughput_rps", "a_new_recorded_column"]),
              "05-microbench-new": pd.DataFrame(columns=["tasks", "mystery_s"])}
    assert dataset.undescribed(frames) == ["trials.a_new_recorded_column", "05-microbench-new.mystery_s"]
    # A metric is described by the registry in the trials table only: elsewhere a name can mean something else.
    assert dictionary.describe("runs", "throughput_rps") is None


def test_every_run_behind_the_pages_is_in_the_dataset_with_its_rows_and_anchor(built):
    folder, _ = built
    runs = pd.read_csv(folder / "runs.csv")
    recorded = {run for path in (paths.REPORTS_DIR / "provenance").glob("*.json")
                for run in json.loads(path.read_text())["runs"]}
    assert set(runs["run_id"]) == recorded
    page = (folder / dataset.LANDING_PAGE).read_text()
    for run in runs.itertuples():
        assert f'id="{dataset.run_anchor(run.run_id)}"' in page
        table = pd.read_parquet(folder / f"{run.table}.parquet", columns=["run_id"])
        assert (table["run_id"] == run.run_id).any(), f"{run.run_id} has no rows in {run.table}"
    trials = pd.read_csv(folder / "trials.csv", usecols=["run_id", "status"])
    trial_runs = runs[runs["kind"] == "trials"]
    assert len(trials) == trial_runs["trials_ok"].sum() + trial_runs["trials_failed"].sum()


def test_the_dataset_is_small_enough_to_commit_with_the_pages(built):
    folder, _ = built
    size = sum(path.stat().st_size for path in folder.iterdir())
    assert size < 5 * 1024**2, f"reports/data/ is {size / 1024**2:.1f} MiB"


@pytest.mark.skipif(not (paths.REPORTS_DIR / "data" / dataset.PACKAGE_FILE).exists(),
                    reason="reports/data/ is written by the next `loadlab notebooks` (or `loadlab export`)")
def test_the_committed_dataset_validates_and_is_described():
    folder = paths.REPORTS_DIR / "data"
    assert validate(str(folder / dataset.PACKAGE_FILE)).valid
    descriptor = json.loads((folder / dataset.PACKAGE_FILE).read_text())
    tables = {r["name"]: pd.read_parquet(folder / f"{r['name']}.parquet") for r in descriptor["resources"]}
    assert dataset.undescribed(tables) == []
