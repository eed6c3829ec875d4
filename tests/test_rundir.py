"""Atomic raw files and trials that only count once finished."""

import json

import pytest

from loadlab.rundir import RunDirectory, write_bytes_atomic, write_json_atomic


def test_atomic_write_leaves_no_temporary_files(tmp_path):
    write_json_atomic(tmp_path / "a.json", {"x": 1})
    write_json_atomic(tmp_path / "a.json", {"x": 2})
    assert json.loads((tmp_path / "a.json").read_text()) == {"x": 2}
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_a_failed_write_keeps_the_old_file(tmp_path):
    write_json_atomic(tmp_path / "a.json", {"x": 1})
    with pytest.raises(TypeError):
        write_bytes_atomic(tmp_path / "a.json", "text is not bytes: the write fails midway")
    assert json.loads((tmp_path / "a.json").read_text()) == {"x": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]


def test_partial_trials_are_discarded_and_finished_ones_kept(tmp_path):
    run = RunDirectory.create("exp", "run-1", raw_dir=tmp_path)
    partial = run.begin_trial(1)
    (partial / "result.json").write_text("{}")
    run.finish_trial(1, partial)
    run.begin_trial(2)  # interrupted: never finished
    assert run.finished_trials() == [1]
    assert run.discard_partial_trials() == ["2.partial"]
    assert run.finished_trials() == [1]
    with pytest.raises(FileExistsError):
        run.finish_trial(1, run.begin_trial(1))
