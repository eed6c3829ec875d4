"""The one-sitting rule (pages.sitting) on synthetic run folders, and the host speed index (hostfacts)."""

from __future__ import annotations

import pytest

from loadlab import hostfacts, rundir
from loadlab.manifest import Manifest
from loadlab.pages.provenance import run_facts, sitting_html
from loadlab.pages.sitting import SPEED_DRIFT_SHARE, reference_problems, sitting_sentence, speed_lines

COMMIT = "a" * 40
HOST = {"cpu_model": "AMD EPYC 7B13", "cpu_count": 2, "kernel": "6.1.0", "hostname": "vm-1"}
OTHER_HOST = {**HOST, "cpu_model": "Intel Xeon"}
SITTING = "loadlab-notebooks-20261128T100000Z"


def _run(tmp_path, experiment, *, host=HOST, commit=COMMIT, dirty=False, sitting=SITTING, start="10:00", end="10:20",
         speed=(1000.0, 1010.0)):
    """A run folder with a manifest as the harness writes one (harness.provenance.collect's keys)."""
    run_id = f"{experiment}-20261128T{start.replace(':', '')}00Z-000000"
    run = rundir.RunDirectory.create(experiment, run_id, tmp_path)
    provenance = {"git_commit": commit, "git_dirty": dirty, "host": host,
                  "sitting": {"id": sitting, "boot_id": "b", "machine": hostfacts.machine_fingerprint(host)},
                  "host_speed": {"start": {"ns_per_kib": speed[0]}, "end": {"ns_per_kib": speed[1]}}}
    run.write_manifest(Manifest(run_id=run_id, experiment=experiment, status=rundir.STATUS_COMPLETE,
                                created_utc=f"2026-11-28T{start}:00+00:00", updated_utc=f"2026-11-28T{end}:00+00:00",
                                provenance=provenance))
    return run_facts(run.path)


CLEAN = {"git_commit": COMMIT, "git_dirty": False}


def test_a_clean_single_sitting_passes_and_says_when(tmp_path):
    runs = [_run(tmp_path, "01-a", start="10:00", end="10:20"), _run(tmp_path, "04-b", start="10:21", end="11:05")]
    assert reference_problems(runs, CLEAN) == []
    assert sitting_sentence(runs, CLEAN) == ("One machine, one commit, clean: measured between 2026-11-28 10:00 and "
                                             "2026-11-28 11:05 UTC in one sitting.")


def test_two_machines_fail_naming_each_and_its_runs(tmp_path):
    runs = [_run(tmp_path, "01-a-quick"), _run(tmp_path, "02-b"), _run(tmp_path, "04-c", host=OTHER_HOST)]
    one, other = hostfacts.machine_fingerprint(HOST), hostfacts.machine_fingerprint(OTHER_HOST)
    assert reference_problems(runs, CLEAN) == [f"2 machines: {one} (01-a, 02-b) and {other} (04-c)."]
    assert sitting_sentence(runs, CLEAN).startswith("Not one sitting: 2 machines:")


def test_a_dirty_tree_fails(tmp_path):
    runs = [_run(tmp_path, "01-a-quick"), _run(tmp_path, "03-b", dirty=True)]
    assert reference_problems(runs, CLEAN) == [
        "1 of 2 runs measured from a tree with uncommitted changes or an unknown state: 03-b."]


def test_two_commits_fail(tmp_path):
    runs = [_run(tmp_path, "01-a-quick"), _run(tmp_path, "03-b", commit="b" * 40)]
    assert reference_problems(runs, CLEAN) == [f"2 commits: {'a' * 10} (01-a) and {'b' * 10} (03-b)."]


def test_two_sittings_fail(tmp_path):
    runs = [_run(tmp_path, "01-a-quick"), _run(tmp_path, "03-b", sitting="process-20261121T000000Z-1")]
    assert reference_problems(runs, CLEAN) == [
        f"2 sittings: {SITTING} (01-a) and process-20261121T000000Z-1 (03-b)."]


@pytest.mark.parametrize(("rendered", "problem"), [
    ({"git_commit": "c" * 40, "git_dirty": False}, f"Rendered at commit {'c' * 10}, measured at {'a' * 10}."),
    ({"git_commit": COMMIT, "git_dirty": True}, "Rendered from a tree with uncommitted changes."),
])
def test_rendering_from_another_tree_fails(tmp_path, rendered, problem):
    assert reference_problems([_run(tmp_path, "01-a-quick")], rendered) == [problem]


def test_speed_drift_over_the_threshold_is_called_out(tmp_path):
    steady = [_run(tmp_path, "01-a", speed=(1000.0, 1020.0)), _run(tmp_path, "02-b", speed=(1030.0, 1000.0))]
    assert "steady within 10%" in speed_lines(steady)[0]
    assert speed_lines(steady)[1] == "01-a: 1,000 ns/KiB at start, 1,020 at end (+2.0%)"
    drifting = [_run(tmp_path, "03-c", speed=(1000.0, 1000.0 * (1 + 2 * SPEED_DRIFT_SHARE)))]
    assert "within 03-c (+20.0%)" in speed_lines(drifting)[0]
    assert "between runs" in speed_lines([*steady, _run(tmp_path, "04-d", speed=(2150.0, 2150.0))])[0]


def test_the_block_prints_the_sentence(tmp_path):
    assert "One machine, one commit, clean: measured between" in sitting_html([_run(tmp_path, "01-a-quick")], CLEAN)


def test_host_speed_index_is_cheap_and_per_cpu():
    reading = hostfacts.host_speed_index()
    assert reading["reading_s"] < 0.5
    assert set(reading["ns_per_kib_by_cpu"]) == {str(cpu) for cpu in hostfacts.os.sched_getaffinity(0)}
    assert reading["ns_per_kib"] > 0
