"""Replication against the committed reference: the verdict table `make reproduce` ends with, and the run-to-run
shift table that says where two runs of one experiment disagree (both on the committed reference data)."""

import json
import shutil

import pandas as pd

from loadlab import judgements, paths, rundir, tables
from loadlab.judgements import replication, rule


def _as_another_run(verdict: judgements.Verdict, **changes) -> judgements.Verdict:
    """The same verdict as if a second run had drawn it (its run id changed)."""
    run_id = verdict.run_id or "00-none-quick-20261126T000000Z-000000"
    return judgements.Verdict(**{**verdict.__dict__, "run_id": run_id.rsplit("-", 1)[0] + "-5ec0d0", **changes})


def test_a_run_compared_with_itself_is_no_replication():
    verdicts = judgements.load_verdicts(paths.VERDICTS_DIR)
    table = replication.replication_table(verdicts, verdicts)
    assert table.empty
    assert replication.summary_line(table).startswith("no verdict of a new run to compare")


def test_an_identical_second_run_replicates_every_ratio():
    verdicts = judgements.load_verdicts(paths.VERDICTS_DIR)
    table = replication.replication_table(verdicts, [_as_another_run(v) for v in verdicts])
    ratios = table["inside_reference_interval"].dropna()
    assert len(ratios) > 10 and ratios.all() and table["same_verdict"].all()
    assert replication.summary_line(table).startswith(f"{len(ratios)} of {len(ratios)} ratio estimates replicated")
    assert (table["new_run_id"].str.endswith("-5ec0d0") & (table["new_run_id"] != table["reference_run_id"])).all()


def test_a_partial_run_compares_only_the_notebooks_it_measured():
    # `loadlab notebooks --only 03`: every other notebook's verdicts are the reference's own, not a replication.
    reference = judgements.load_verdicts(paths.VERDICTS_DIR)
    new = [_as_another_run(v) if v.notebook == "03-json-api" else v for v in reference]
    table = replication.replication_table(reference, new)
    assert len(table) > 0 and set(table["claim"]) == {v.claim_id for v in reference if v.notebook == "03-json-api"}


def test_a_smoke_run_is_no_replication_of_the_quick_reference():
    reference = judgements.load_verdicts(paths.VERDICTS_DIR)
    smoke = [judgements.Verdict(**{**v.__dict__, "run_id": (v.run_id or "").replace("-quick-", "-smoke-")})
             for v in reference]
    assert rundir.run_scale(reference[0].run_id) == "quick"
    assert rundir.run_scale(smoke[0].run_id) == "smoke"
    assert replication.replication_table(reference, smoke).empty


def test_a_moved_estimate_and_a_changed_label_are_not_replicated(tmp_path):
    reference = judgements.load_verdicts(paths.VERDICTS_DIR)
    moved = [v for v in reference if v.ratio_ci_high is not None][0]
    new = []
    for verdict in reference:
        if verdict is moved:
            verdict = judgements.Verdict(**{**verdict.__dict__, "measured_ratio": verdict.ratio_ci_high * 1.5,
                                        "verdict": rule.INCONCLUSIVE if verdict.verdict != rule.INCONCLUSIVE
                                        else rule.HOLDS})
        new.append(_as_another_run(verdict))
    table = replication.replication_table(reference, new).set_index(["claim", "comparison"])
    row = table.loc[(moved.claim_id, f"{moved.candidate} / {moved.baseline}")]
    assert not row["inside_reference_interval"] and not row["same_verdict"]
    kept = replication.keep_reference(paths.VERDICTS_DIR, tmp_path / "kept")
    assert sorted(p.name for p in kept.glob("*.json")) == sorted(p.name for p in paths.VERDICTS_DIR.glob("*.json"))
    shutil.rmtree(kept)


def test_the_recorded_table_reads_back_and_knows_which_rows_are_about_the_verdicts_shown(tmp_path):
    reference = judgements.load_verdicts(paths.VERDICTS_DIR)
    second = [_as_another_run(v) for v in reference]
    reference_dir, second_dir = tmp_path / "reference", tmp_path / "second"
    for directory, verdicts in ((reference_dir, reference), (second_dir, second)):
        directory.mkdir()
        judgements.save_verdicts(verdicts, "all", directory)
    written = replication.write_replication(reference_dir, second_dir, tmp_path / replication.REPLICATION_FILE)
    table, when = replication.read_replication(tmp_path / replication.REPLICATION_FILE)
    assert when and len(table) == len(written) > 10
    # Shown beside the reference (the committed collection) or beside the second run (after `make reproduce`).
    assert replication.about_these_verdicts(table, reference).all()
    assert replication.about_these_verdicts(table, second).all()
    # A claim measured again since: neither side is on the page, so its row says nothing about it.
    remeasured = reference[[v.measured_ratio is not None for v in reference].index(True)]
    later = [_as_another_run(v, run_id="later") if v is remeasured else v for v in reference]
    about = replication.about_these_verdicts(table, later)
    assert int((~about).sum()) == 1
    assert replication.read_replication(tmp_path / "missing.json") is None


def test_the_summary_page_counts_only_rows_about_its_verdicts_and_names_what_was_not_rerun():
    from loadlab import pages

    reference = judgements.load_verdicts(paths.VERDICTS_DIR)
    partial = [_as_another_run(v) if v.notebook == "03-json-api" else v for v in reference]
    table = replication.replication_table(reference, partial)
    text = pages.replication_text(table, "2026-11-26T10:00:00Z", reference)
    ratios = table["inside_reference_interval"].dropna()
    assert f"**{int(ratios.sum())} of {len(ratios)}** ratio estimates" in text and "on 2026-11-26" in text
    not_rerun = {v.claim_id for v in reference if v.measured_ratio is not None and v.notebook != "03-json-api"}
    assert all(claim_id in text.split("Not run a second time")[1] for claim_id in not_rerun)
    rows = pages.replication_rows(table, reference)
    assert len(rows) == len(table) and set(rows["inside the reference interval"]) <= {"yes", "no", ""}
    assert "No second run" in pages.replication_text(None, None, reference)


def test_two_runs_that_agree_do_not_differ_and_a_shifted_one_does():
    trials = tables.load_run(rundir.latest_run("03-json-api-quick"))["trials"]
    same = replication.run_shift_table(trials, trials, ["throughput_rps", "memory_peak_bytes"])
    assert len(same) >= 2 and not same["runs_differ"].any()
    assert (same["ratio"] == 1).all()
    shifted = trials.assign(throughput_rps=trials["throughput_rps"] * 2)  # rust's trials spread over ±30 % here
    moved = replication.run_shift_table(trials, shifted, ["throughput_rps", "memory_peak_bytes"])
    # A shown level's 3 + 3 trials give no exact interval: no difference is claimed there, only where one exists.
    throughput = moved[moved["metric"] == "throughput_rps"]
    with_interval = throughput["ratio_ci_low"].notna()
    assert with_interval.any() and throughput.loc[with_interval, "runs_differ"].all()
    assert not throughput.loc[~with_interval, "runs_differ"].any()
    assert not moved[moved["metric"] == "memory_peak_bytes"]["runs_differ"].any()
    assert moved[moved["metric"] == "throughput_rps"]["ratio"].round(6).eq(2).all()
    assert pd.api.types.is_bool_dtype(moved["runs_differ"])


def test_a_measuring_run_writes_the_comparison_before_the_summary_reads_it(tmp_path, monkeypatch):
    from pathlib import Path

    from loadlab import report

    verdicts_dir, reports_dir = tmp_path / "verdicts", tmp_path / "reports"
    verdicts_dir.mkdir()
    reports_dir.mkdir()
    reference = judgements.load_verdicts(paths.VERDICTS_DIR)
    judgements.save_verdicts(reference, "all", verdicts_dir)
    monkeypatch.setattr(paths, "VERDICTS_DIR", verdicts_dir)
    monkeypatch.setattr(paths, "REPORTS_DIR", reports_dir)
    seen = []

    def execute(notebook, scale, run_id, log=print):
        if not notebook.stem.startswith("99"):  # a measuring notebook replaces its verdicts
            judgements.save_verdicts([_as_another_run(v) for v in reference], "all", verdicts_dir)
        seen.append((notebook.stem, (reports_dir / replication.REPLICATION_FILE).exists()))
        return tmp_path / f"{notebook.stem}.ipynb"

    monkeypatch.setattr(report, "execute", execute)
    monkeypatch.setattr(report, "export_html", lambda executed: (executed, executed))
    monkeypatch.setattr(report, "write_index", lambda *args, **kwargs: tmp_path / "index.html")
    monkeypatch.setattr(report, "check_exported", lambda **kwargs: [])
    monkeypatch.setattr(report, "EXECUTED_DIR", tmp_path)
    monkeypatch.setattr(report, "source_notebooks", lambda: [Path("03-json-api.ipynb"), Path("99-summary.ipynb")])
    report.build_collection("quick", None, log=lambda *args: None)
    assert seen == [("03-json-api", False), ("99-summary", True)]
    table, _ = replication.read_replication(reports_dir / replication.REPLICATION_FILE)
    assert len(table) > 10 and table["same_verdict"].all()


def _manifest(raw, run_id, fingerprint, cpu_model, kernel="6.18.44-fc-v669"):
    folder = raw / run_id.rsplit("-", 2)[0] / run_id
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({"run_id": run_id, "provenance": {
        "host": {"cpu_model": cpu_model, "cpu_count": 2, "kernel": kernel},
        "sitting": {"machine": fingerprint}}}))


def test_the_file_records_each_sides_machines_and_the_page_says_whether_they_differ(tmp_path):
    # issue 32: the replication table "says where the machines differ". Both sides' runs are under data/raw when
    # `make reproduce` writes the file (a fresh clone holds the reference's), so their manifests are read then.
    from loadlab import pages

    reference = [v for v in judgements.load_verdicts(paths.VERDICTS_DIR) if v.notebook == "03-json-api"]
    new = [_as_another_run(v) for v in reference]
    raw = tmp_path / "raw"
    for run_id in {v.run_id for v in reference}:
        _manifest(raw, run_id, "ba8a7afdc5a4", "Intel(R) Xeon(R) Processor")
    for run_id in {v.run_id for v in new}:
        _manifest(raw, run_id, "ba8a7afdc5a4", "Intel(R) Xeon(R) Processor")
    save = tmp_path / "verdicts"
    judgements.save_verdicts(reference, "03-json-api", save / "reference")
    judgements.save_verdicts(new, "03-json-api", save / "new")
    output = tmp_path / "replication.json"
    table = replication.write_replication(save / "reference", save / "new", output, raw_dir=raw)
    machines = replication.read_machines(output)
    assert machines["reference"] == machines["new"] == [{"fingerprint": "ba8a7afdc5a4",
                                                         "cpu_model": "Intel(R) Xeon(R) Processor", "cpu_count": 2,
                                                         "kernel": "6.18.44-fc-v669"}]
    text = pages.replication_text(table, "2026-11-29T04:47:08Z", new, machines)
    assert text.endswith("Both runs were on one machine: Intel(R) Xeon(R) Processor, 2 CPUs, kernel 6.18.44-fc-v669 "
                         "(machine ba8a7afdc5a4).")
    # Another machine under the second run: each side named.
    other = {**machines, "new": [{"fingerprint": "0123456789ab", "cpu_model": "AMD EPYC", "cpu_count": 2, "kernel": "6.1"}]}
    assert ("the reference on Intel(R) Xeon(R) Processor, 2 CPUs, kernel 6.18.44-fc-v669 (machine ba8a7afdc5a4); "
            "the second run on AMD EPYC, 2 CPUs, kernel 6.1 (machine 0123456789ab)") in pages.machines_text(other)
    # A file written before the machines were recorded says so, rather than implying one machine.
    assert "does not say which machines" in pages.machines_text(None)
