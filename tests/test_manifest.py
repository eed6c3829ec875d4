"""A run's manifest as a typed record: every committed manifest reads and writes back unchanged."""

import json

import pytest

from loadlab import paths
from loadlab.manifest import Manifest, TrialRecord
from loadlab.rundir import RunDirectory

COMMITTED = sorted(paths.RAW_DIR.glob("*/*/manifest.json"))


@pytest.mark.parametrize("path", COMMITTED, ids=[p.parent.name for p in COMMITTED])
def test_a_committed_manifest_reads_as_attributes_and_writes_back_byte_for_byte(path):
    manifest = Manifest.read(path)
    document = json.loads(path.read_text())
    assert manifest.run_id == document["run_id"] == path.parent.name
    assert manifest.count("ok") + manifest.count("failed") == len(document["trials"])
    assert all(isinstance(record, TrialRecord) for record in manifest.trials.values())
    assert manifest.to_json() == path.read_text()


def test_a_microbenchmark_manifest_without_conditions_stays_without_them():
    # The microbenchmarks' manifests never had conditions, images, versions or annotations.
    old = {"run_id": "r", "experiment": "e", "status": "complete", "created_utc": "t", "updated_utc": "t",
           "parameters": {}, "provenance": {}, "trial_order": [], "trials": {}}
    manifest = Manifest.from_dict(old)
    assert manifest.conditions == [] and manifest.annotations == {} and manifest.missing_servers == {}
    assert manifest.to_dict() == old and list(manifest.to_dict()) == list(old)
    manifest.annotations["missing_servers"] = {"swoole": "no package"}
    assert manifest.to_dict()["annotations"] == {"missing_servers": {"swoole": "no package"}}


def test_an_unknown_key_is_kept_and_a_missing_required_one_is_named():
    manifest = Manifest.from_dict({"run_id": "r", "experiment": "e", "status": "running", "later_field": [1]})
    assert manifest.extra == {"later_field": [1]} and manifest.to_dict()["later_field"] == [1]
    with pytest.raises(ValueError, match="status"):
        Manifest.from_dict({"run_id": "r", "experiment": "e"})


def test_a_run_folder_writes_its_manifest_atomically_and_reads_it_back(tmp_path):
    run = RunDirectory.create("exp", "exp-1", tmp_path)
    manifest = Manifest("exp-1", "exp", "running", parameters={"load": {"mode": "closed"}})
    manifest.trials["1"] = TrialRecord("a@c4", "failed", "stalled", "2026-11-28T00:00:00+00:00")
    run.write_manifest(manifest)
    assert run.read_manifest() == manifest
    assert run.read_manifest().parameter("load") == {"mode": "closed"} and manifest.parameter("placement") == {}
    assert not list(run.path.glob(".manifest.json.*"))
