"""Atomic raw files and trials that only count once finished."""

import json

import pytest

from loadlab import rundir
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


def test_a_checkout_is_dirty_when_its_code_changed_not_when_a_run_wrote_data_or_reports(tmp_path):
    import subprocess

    from loadlab.harness.provenance import git_state

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    for name in ("src/code.py", "data/raw/run.json", "reports/index.html"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("one\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start")
    assert git_state(tmp_path)["git_dirty"] is False
    (tmp_path / "data/raw/run.json").write_text("two\n")
    (tmp_path / "reports/index.html").write_text("two\n")
    assert git_state(tmp_path)["git_dirty"] is False
    (tmp_path / "src/code.py").write_text("two\n")
    assert git_state(tmp_path)["git_dirty"] is True


def test_a_runs_profile_is_read_with_the_names_the_plans_size_by():
    """The profiles' names live in config, below both rundir (which reads them back) and plans (which sizes by them)."""
    from loadlab import config, plans

    assert plans.SCALE_NAMES is config.SCALE_NAMES
    assert tuple(plans.SCALES) == config.SCALE_NAMES
    for name in config.SCALE_NAMES:
        assert rundir.run_scale(f"03-json-api-{name}-20261126T000000Z-abc123") == name
    assert rundir.run_scale("adhoc-20261126T000000Z-abc123") is None
