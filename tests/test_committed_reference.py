"""The committed reference (data/raw, reports/) is one sitting: one uninterrupted `make reproduce` on one machine,
from one clean commit, with Swoole in it, and every page rendered at that commit (issue 32). Read off the committed
files, so a patched-together reference fails here rather than in a reviewer's hands."""

from __future__ import annotations

import re
import subprocess

import pytest

from loadlab import paths, rundir
from loadlab.pages.provenance import run_facts
from loadlab.pages.sitting import ONE_SITTING, reference_problems

RUNS = [run for run in rundir.list_runs(paths.RAW_DIR) if (run["experiment"] or "").endswith("-quick")]
pytestmark = pytest.mark.skipif(not RUNS, reason="no committed quick runs under data/raw")


def _measured_commit() -> str:
    commits = {run["provenance"].get("git_commit") for run in RUNS}
    assert len(commits) == 1, f"the committed runs come from {len(commits)} commits: {sorted(map(str, commits))}"
    return next(iter(commits))


def test_every_committed_run_is_complete_and_from_the_one_sitting():
    assert all(run["status"] == rundir.STATUS_COMPLETE for run in RUNS), [
        run["run_id"] for run in RUNS if run["status"] != rundir.STATUS_COMPLETE]
    facts = [run_facts(run["path"]) for run in RUNS]
    assert reference_problems(facts, {"git_commit": _measured_commit(), "git_dirty": False}) == []


def test_only_the_reference_is_committed_under_data_raw():
    # A run of another scale or of a benchmark beside the reference would be a second sitting on the same pages.
    # `loadlab trial` writes its scratch runs under data/raw/adhoc/, which .gitignore keeps out of every commit.
    others = [run["run_id"] for run in rundir.list_runs(paths.RAW_DIR)
              if run not in RUNS and run["experiment"] != "adhoc"]
    assert others == []


def test_the_measured_commit_is_in_this_history():
    commit = _measured_commit()
    found = subprocess.run(["git", "-C", str(paths.ROOT), "cat-file", "-e", f"{commit}^{{commit}}"],
                           capture_output=True, check=False)
    if found.returncode != 0 and not (paths.ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    assert found.returncode == 0, f"the reference's commit {commit[:10]} is not in this repository's history"


@pytest.mark.parametrize("page", sorted(p.name for p in (paths.ROOT / "reports").glob("[0-9][0-9]-*.html")
                                        if not p.name.endswith(".nocode.html")) or ["none"])
def test_every_page_is_rendered_at_the_measured_commit_and_says_one_sitting(page):
    if page == "none":
        pytest.skip("no rendered pages under reports/")
    text = (paths.ROOT / "reports" / page).read_text(encoding="utf-8")
    assert f"Page rendered at commit {_measured_commit()[:10]} (clean)" in text
    assert ONE_SITTING in text and "Not one sitting" not in text


def test_the_index_says_one_sitting():
    index = paths.ROOT / "reports" / "index.html"
    if not index.exists():
        pytest.skip("no reports/index.html")
    text = index.read_text(encoding="utf-8")
    assert re.search(rf"{ONE_SITTING}: measured between \d{{4}}-\d\d-\d\d \d\d:\d\d and .* UTC in one sitting", text)


def test_every_notebook_has_its_page():
    notebooks = sorted(p.stem for p in (paths.ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    pages = {p.stem for p in (paths.ROOT / "reports").glob("[0-9][0-9]-*.html")}
    assert notebooks and [name for name in notebooks if name not in pages] == []


def test_swoole_is_measured_in_the_sitting():
    # S4's seed system: the reference measures it, built from a local PECL package (servers/php-swoole/README.md).
    served = sum(1 for run in RUNS if run["ok"] and any(
        entry.get("server") == "php-swoole" for entry in run_facts(run["path"]).parameters.get("servers", [])))
    assert served >= 1, "no committed run measured php-swoole"
