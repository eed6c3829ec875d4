"""Every link on every exported page resolves inside reports/, so the folder can be hosted alone (issue 29).

The checker (`pages.links.broken_links`) is tested on pages made here, with every kind of link it must catch;
the index is rendered from the committed records into a copy of reports/ alone and followed; the committed pages
are followed from such a copy once they are rendered with the dataset. The export's removal of figures a page no
longer shows is tested here too, since a stale file is what a link check cannot see.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from loadlab import paths, report
from loadlab.pages import claim_table, dataset, links, provenance


def _page(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"<!DOCTYPE html><html><body>{body}</body></html>")
    return path


def test_the_checker_finds_every_kind_of_broken_link(tmp_path):
    site = tmp_path / "reports"
    _page(site / "data" / "index.html", '<tr id="run-r1"></tr><h2 id="S%C2%B7x"></h2>')
    (site / "data" / "trials.csv").write_text("a\n1\n")
    (site / "figures").mkdir()
    (tmp_path / "outside.html").write_text("<html></html>")
    _page(site / "index.html", "".join([
        '<a href="data/index.html#run-r1">ok</a>', '<a href="data/trials.csv">ok</a>', '<a href="#top">ok</a>',
        '<h1 id="top"></h1>', '<a href="data/index.html#S%C2%B7x">ok, encoded as nbconvert writes ids</a>',
        '<a href="https://example.org/x">external</a>', '<img src="data:image/png;base64,AAAA">',
        '<a href="../outside.html">climbs out</a>', '<a href="data/runs.csv">missing file</a>',
        '<a href="data/index.html#run-r2">missing anchor</a>', '<a href="#nowhere">missing anchor here</a>',
        '<a href="figures">a folder</a>', '<img src="figures/gone.png">',
    ]))
    problems = links.broken_links(site)
    assert [p.split(" (")[0] for p in problems] == [
        "index.html: ../outside.html", "index.html: data/runs.csv", "index.html: data/index.html#run-r2",
        "index.html: #nowhere", "index.html: figures", "index.html: figures/gone.png"]
    assert "outside reports/" in problems[0] and "no such file" in problems[1] and "no id 'run-r2'" in problems[2]


def test_the_pages_link_the_dataset_where_the_dataset_puts_its_runs():
    # provenance repeats the dataset page's name (pages.dataset imports provenance, not the other way round).
    assert provenance.DATASET_PAGE == f"{dataset.DATA_DIR_NAME}/{dataset.LANDING_PAGE}"
    assert dataset.run_href("r-1") == f"{provenance.DATASET_PAGE}#{dataset.run_anchor('r-1')}" == "data/index.html#run-r-1"
    block = provenance.data_links_html("03-json-api", ["r-1"])
    assert f'href="{provenance.DATASET_PAGE}#run-r-1"' in block and 'href="provenance/03-json-api.json"' in block


def test_a_claim_row_links_its_run_in_the_dataset_and_its_verdicts_from_any_page_folder():
    verdicts = sorted(paths.VERDICTS_DIR.glob("*.json"))
    notebook = verdicts[0].stem
    run_id = json.loads(verdicts[0].read_text())[0]["run_id"]
    assert dict(claim_table.data_links(run_id, paths.REPORTS_DIR, notebook)) == {
        "dataset": f"data/index.html#run-{run_id}", "verdicts": f"verdicts/{notebook}.json"}
    deeper = dict(claim_table.data_links(run_id, paths.REPORTS_DIR / "notebooks"))
    assert deeper == {"dataset": f"../data/index.html#run-{run_id}"}


def _reports_alone(tmp_path: Path, monkeypatch) -> Path:
    """A copy of reports/ alone (no data/ or notebooks/ beside it), as the pages' code sees it."""
    site = tmp_path / "site" / "reports"
    shutil.copytree(paths.REPORTS_DIR, site, ignore=shutil.ignore_patterns("screenshots"))
    monkeypatch.setattr(paths, "REPORTS_DIR", site)
    monkeypatch.setattr(paths, "VERDICTS_DIR", site / "verdicts")
    return site


def test_the_index_and_the_dataset_page_resolve_from_a_copy_of_reports_alone(tmp_path, monkeypatch):
    site = _reports_alone(tmp_path, monkeypatch)
    dataset.write_dataset(site)
    executed = sorted((site / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    index = report.write_index(executed, "quick", output_dir=site)
    page = index.read_text()
    assert "data/index.html#run-" in page and "../data/" not in page
    assert links.broken_links(site, [index, site / "data" / "index.html"]) == []


def test_every_committed_page_resolves_from_a_copy_of_reports_alone(tmp_path, monkeypatch):
    if not (paths.REPORTS_DIR / dataset.DATA_DIR_NAME / dataset.PACKAGE_FILE).exists():
        pytest.skip("the committed pages predate the open dataset (reports/data/): re-render them to check")
    site = _reports_alone(tmp_path, monkeypatch)
    assert links.broken_links(site) == []


def test_the_export_removes_the_figures_a_page_no_longer_saves(tmp_path):
    records, figures = tmp_path / "provenance", tmp_path / "figures"
    records.mkdir()
    (records / "05-x.json").write_text(json.dumps({"notebook": "05-x", "runs": [], "figures": ["throughput"]}))
    (records / "06-y.json").write_text(json.dumps({"notebook": "06-y", "runs": []}))  # recorded before figures were
    for name in ("05-x/throughput.svg", "05-x/throughput.png", "05-x/flame-differential-jdk21.svg",
                 "05-x/flame-differential-jdk21.png", "05-x/notes.txt", "06-y/old.png"):
        (figures / name).parent.mkdir(parents=True, exist_ok=True)
        (figures / name).write_text("x")
    removed = report.remove_stale_figures(tmp_path, log=lambda message: None)
    assert sorted(p.name for p in removed) == ["flame-differential-jdk21.png", "flame-differential-jdk21.svg"]
    assert sorted(p.name for p in (figures / "05-x").iterdir()) == ["notes.txt", "throughput.png", "throughput.svg"]
    assert (figures / "06-y" / "old.png").exists()


def test_a_page_records_the_figures_it_saved(tmp_path, monkeypatch):
    from loadlab import plots, study

    from matplotlib.figure import Figure

    def save(figure, name, directory):  # what plots.save_figure leaves behind, without drawing
        Path(directory).mkdir(parents=True, exist_ok=True)
        for suffix in (".svg", ".png"):
            (Path(directory) / f"{name}{suffix}").write_text("x")
        return plots.SavedFigure(Path(directory) / f"{name}.svg", Path(directory) / f"{name}.png")

    def titled(title):
        figure = Figure()
        figure.suptitle(title)
        return figure

    monkeypatch.setattr(plots, "save_figure", save)
    monkeypatch.setattr(paths, "REPORTS_DIR", tmp_path)
    page = study.Page("07-test", tmp_path / "figures" / "07-test", {}, {},
                      provenance.ProvenanceBlock("07-test", "smoke", None))
    page.figure(titled("Throughput"), "throughput")
    page.figure(titled("Latency"), "latency")
    (tmp_path / "figures" / "07-test" / "dropped.svg").write_text("x")  # saved by an earlier version of the page
    page.show([])
    assert json.loads((tmp_path / "provenance" / "07-test.json").read_text())["figures"] == ["latency", "throughput"]
    assert [p.name for p in report.remove_stale_figures(tmp_path, log=lambda message: None)] == ["dropped.svg"]
