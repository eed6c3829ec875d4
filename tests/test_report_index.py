"""reports/index.html is rendered from its Jinja template, escaping what it shows."""

import inspect

from loadlab import report

TEMPLATE = report.TEMPLATES_DIR / report.INDEX_TEMPLATE / "index.html.j2"


def test_the_index_page_comes_from_its_template_and_escapes_run_names(tmp_path, monkeypatch):
    notebook = tmp_path / "03-json-api.ipynb"
    notebook.write_text('{"cells": [{"cell_type": "markdown", "source": "# 03 · JSON <api>"}]}')
    # As rundir.list_runs reads a run's manifest: its times and provenance (commit, host) with its counts.
    monkeypatch.setattr(report.rundir, "list_runs", lambda: [
        {"experiment": "<script>x</script>", "run_id": "r-1", "status": "complete", "planned": 4, "ok": 3,
         "failed": 1, "created_utc": "2026-11-27T23:50:00+00:00", "updated_utc": "2026-11-28T00:00:00+00:00",
         "provenance": {"git_commit": "9911b33aaaa", "git_dirty": True,
                        "host": {"cpu_model": "AMD EPYC", "cpu_count": 2, "kernel": "6.18.44"}},
         "path": str(tmp_path / "r-1")}])
    monkeypatch.setattr(report, "data_links", lambda run_id, page_dir: [("dataset", "data/index.html#run-r-1")])
    monkeypatch.setattr(report, "_runs_in_dataset", lambda page_dir: {"r-1"})  # a run a page recorded: linked
    page = report.write_index([notebook], "quick", output_dir=tmp_path).read_text()
    assert report._index_template().filename == str(TEMPLATE)
    template_lines = [line for line in TEMPLATE.read_text().splitlines() if line.startswith(("<h2>", "<title>"))]
    assert template_lines and all(line in page for line in template_lines)
    assert "03 · JSON &lt;api&gt;" in page and "&lt;script&gt;x&lt;/script&gt;" in page and "<script>" not in page
    # The run log: when, on which machine, at which commit (dirty said) and scale.
    assert ("<td>2026-11-27T23:50:00+00:00 to 2026-11-28T00:00:00+00:00</td><td>AMD EPYC, 2 CPUs, kernel 6.18.44</td>"
            "<td>9911b33 (uncommitted changes)</td><td></td>") in page
    assert "<td>3 of 4 ok, 1 failed</td>" in page and '<a href="data/index.html#run-r-1">dataset</a>' in page
    # No page is written as an f-string in report.py any more.
    assert "<!DOCTYPE" not in inspect.getsource(report)
