"""The exported reports, as a reader gets them: every notebook re-analysed from the committed data and exported.

The whole collection is executed once (`loadlab notebooks --scale quick
--run-id latest`, no Docker needed) into a temporary reports folder, with
LOADLAB_STRICT_FIGURES=1 so that any figure the notebooks save that fails
the figure lint stops the export. Then the pages are checked as text (no
reprs, no runaway precision, provenance first, every claim with its
numbers, command and data) and in a real browser (headless Chromium).
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from loadlab import judgements, paths
from loadlab.pages import browser, html_checks

pytestmark = pytest.mark.slow
SUMMARY: list[str] = []  # printed at the end of the test run (conftest.pytest_terminal_summary)
SCREENSHOT_DIR = paths.ROOT / "test-artifacts" / "screenshots"


@pytest.fixture(scope="session")
def exported(tmp_path_factory) -> Path:
    reports = tmp_path_factory.mktemp("reports")
    environment = {**os.environ, "LOADLAB_REPORTS_DIR": str(reports), "LOADLAB_STRICT_FIGURES": "1",
                   "PYTHONPATH": os.pathsep.join([str(paths.ROOT / "src"), os.environ.get("PYTHONPATH", "")])}  # fmt: skip
    result = subprocess.run([sys.executable, "-m", "loadlab.cli", "notebooks", "--scale", "quick", "--run-id", "latest"],
                            capture_output=True, text=True, env=environment, cwd=paths.ROOT)  # fmt: skip
    assert result.returncode == 0, (result.stdout[-4000:], result.stderr[-4000:])
    return reports


def nocode_pages(reports: Path) -> list[Path]:
    return sorted(reports.glob("[0-9][0-9]-*.nocode.html"))


def test_every_notebook_exports_and_every_figure_it_saves_passed_the_lint(exported):
    notebooks = sorted(paths.NOTEBOOKS_DIR.glob("[0-9][0-9]-*.ipynb"))
    assert [p.name.replace(".nocode.html", "") for p in nocode_pages(exported)] == [n.stem for n in notebooks]
    saved = sorted(exported.glob("figures/*/*.svg"))
    # save_figure ran in strict mode: a figure with a lint problem would have stopped its notebook.
    assert len(saved) >= 20 and all(svg.with_suffix(".png").exists() for svg in saved)
    SUMMARY.append(f"figure lint: {len(saved)} figures saved by the notebooks, each linted at its saved size (strict)")


def test_no_page_shows_a_repr_or_runaway_precision(exported):
    pages = sorted(exported.glob("*.html"))
    assert len(pages) == 2 * len(nocode_pages(exported)) + 1  # with code, without, and the index
    findings = [finding for page in pages for finding in html_checks.check_page(page)]
    assert not findings, "\n".join(map(str, findings[:20]))


def test_every_page_opens_with_its_provenance(exported):
    for page in [exported / "index.html", *nocode_pages(exported)]:
        text = page.read_text(encoding="utf-8")
        block = text.find('<div class="loadlab-provenance">')
        assert block >= 0, f"{page.name}: no provenance block"
        first_figure = min([i for i in (text.find("<img"), text.find("<table", block + 1)) if i >= 0] or [len(text)])
        assert block < first_figure, f"{page.name}: the provenance block is not the first thing on the page"
        assert "filled in by the notebook" not in text, f"{page.name}: the placeholder was never filled in"
        visible = " ".join(html_checks.visible_text(text).split())
        assert re.search(r"Re-analysed|Measured now", visible) and "commit" in visible and "scale quick" in visible
        # Every page that judges a source's claims sets the source's setup beside its own; 00 (the instrument),
        # 07 (the atlas: the map the claims sit on) and 99 (the summary) judge none of their own.
        if page.name != "index.html" and not page.name.startswith(("00-", "07-", "99-")):
            assert "its setup beside this one" in visible, f"{page.name}: no source setup table"


def test_every_claim_is_on_its_page_and_in_the_index_with_its_numbers_command_and_data(exported):
    index = (exported / "index.html").read_text(encoding="utf-8")
    verdicts = judgements.load_verdicts(exported / "verdicts")
    assert verdicts
    for verdict in verdicts:
        page = (exported / f"{verdict.notebook}.nocode.html").read_text(encoding="utf-8")
        for name, text in (("index", index), (verdict.notebook, page)):
            assert f"<td>{html.escape(verdict.claim_id)}" in text, f"{verdict.claim_id} missing from {name}"
            assert f"--only {verdict.notebook[:2]}" in text
        if verdict.measured_ratio is not None:
            assert "(medians)" in page
    for href in re.findall(r'<a href="([^"#]+)"', index):
        assert (exported / html.unescape(href)).exists(), f"index links to a missing {href}"


def test_pages_in_a_real_browser(exported):
    if browser.find_chromium() is None:
        pytest.skip("chromium is not installed: `apt-get install chromium` on Debian (`make test` does it as root)")
    # Kept in the checkout (git ignores it) until the next run, for a person to look at.
    screenshots = SCREENSHOT_DIR
    shutil.rmtree(screenshots, ignore_errors=True)
    pages = [exported / "index.html", *nocode_pages(exported)]
    checks = browser.check_pages(pages, screenshots)
    problems = [f"{check.page}: {problem}" for check in checks for problem in check.problems]
    assert not problems, "\n".join(problems)
    assert sum(check.images for check in checks) >= 20
    assert any(check.flame_graphs for check in checks), "no interactive flame graph on any page"
    SUMMARY.append(f"browser: {len(checks)} pages checked in headless Chromium; screenshots kept in {screenshots}")
