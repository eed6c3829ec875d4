"""Replication against the committed reference: the verdict table `make reproduce` ends with, and the run-to-run
shift table that says where two runs of one experiment disagree (both on the committed reference data)."""

import shutil

import pandas as pd

from loadlab import claims, paths, rundir, tables
from loadlab.judgements import replication


def test_a_run_compared_with_itself_replicates_every_ratio(tmp_path):
    verdicts = claims.load_verdicts(paths.VERDICTS_DIR)
    table = replication.replication_table(verdicts, verdicts)
    ratios = table["inside_reference_interval"].dropna()
    assert len(ratios) > 10 and ratios.all() and table["same_verdict"].all()
    assert replication.summary_line(table).startswith(f"{len(ratios)} of {len(ratios)} ratio estimates replicated")


def test_a_moved_estimate_and_a_changed_label_are_not_replicated(tmp_path):
    reference = claims.load_verdicts(paths.VERDICTS_DIR)
    moved = [v for v in reference if v.ratio_ci_high is not None][0]
    new = []
    for verdict in reference:
        if verdict is moved:
            verdict = claims.Verdict(**{**verdict.__dict__, "measured_ratio": verdict.ratio_ci_high * 1.5,
                                        "verdict": claims.INCONCLUSIVE if verdict.verdict != claims.INCONCLUSIVE
                                        else claims.HOLDS})
        new.append(verdict)
    table = replication.replication_table(reference, new).set_index(["claim", "comparison"])
    row = table.loc[(moved.claim_id, f"{moved.candidate} / {moved.baseline}")]
    assert not row["inside_reference_interval"] and not row["same_verdict"]
    kept = replication.keep_reference(paths.VERDICTS_DIR, tmp_path / "kept")
    assert sorted(p.name for p in kept.glob("*.json")) == sorted(p.name for p in paths.VERDICTS_DIR.glob("*.json"))
    shutil.rmtree(kept)


def test_two_runs_that_agree_do_not_differ_and_a_shifted_one_does():
    trials = tables.load_run(rundir.latest_run("03-json-api-quick"))["trials"]
    same = replication.run_shift_table(trials, trials, ["throughput_rps", "memory_peak_bytes"])
    assert len(same) >= 2 and not same["runs_differ"].any()
    assert (same["ratio"] == 1).all()
    shifted = trials.assign(throughput_rps=trials["throughput_rps"] * 2)  # rust's trials spread over ±30 % here
    moved = replication.run_shift_table(trials, shifted, ["throughput_rps", "memory_peak_bytes"])
    by_metric = moved.groupby("metric")["runs_differ"].all()
    assert by_metric["throughput_rps"] and not moved[moved["metric"] == "memory_peak_bytes"]["runs_differ"].any()
    assert moved[moved["metric"] == "throughput_rps"]["ratio"].round(6).eq(2).all()
    assert pd.api.types.is_bool_dtype(moved["runs_differ"])
