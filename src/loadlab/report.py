"""Execute the notebooks with papermill and export them as HTML, with an index page.

    notebooks/NN-name.ipynb  --papermill-->  reports/notebooks/NN-name.ipynb
                             --nbconvert-->  reports/NN-name.html         (code and output)
                                             reports/NN-name.nocode.html  (output and prose only)
                                             reports/index.html

Figures are embedded in the notebooks' outputs (and saved as SVG/PNG under
reports/figures/), so each HTML page stands alone.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import html
import json
import os
import tempfile
import time
from pathlib import Path

from loadlab import paths, rundir
from loadlab.errors import ParameterError
from loadlab.hostfacts import SITTING_ENV
from loadlab.judgements import replication
from loadlab.pages.claim_table import data_links
from loadlab.plans import PROFILE_NAMES
from loadlab.rundir import write_text_atomic

EXECUTED_DIR = paths.REPORTS_DIR / "notebooks"
KERNEL_NAME = "python3"  # the interpreter running loadlab (its .venv); JupyterLab users pick "loadlab"
CELL_TIMEOUT_S = 4 * 3600
# nbconvert's "lab" template without its CDN scripts (src/loadlab/templates/loadlab-page/index.html.j2).
TEMPLATES_DIR = Path(__file__).parent / "templates"
PAGE_TEMPLATE = "loadlab-page"


def source_notebooks(directory: Path = paths.NOTEBOOKS_DIR) -> list[Path]:
    """notebooks/NN-*.ipynb in run order."""
    return sorted(p for p in Path(directory).glob("[0-9][0-9]-*.ipynb"))


def _echo_notebook_output() -> None:
    """Show the notebook's own output (its per-trial progress lines) in the terminal as it runs.

    papermill's log_output goes to the "papermill" logger, which prints only
    when logging is configured.
    """
    import logging

    logger = logging.getLogger("papermill")
    if not any(getattr(h, "_loadlab", False) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("    %(message)s"))
        handler._loadlab = True
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False


@contextlib.contextmanager
def _environment(**variables: str):
    """Set environment variables for the block (the kernel inherits them), then restore the caller's."""
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# jupyter_client gives a TCP kernel five ports by binding port 0 and closing it, and the kernel binds them a
# moment later: another process on the machine (a second kernel, a loadgen) can take one in between, and the
# kernel dies before it answers ("Address already in use"). Over Unix sockets there is no port to race for: the
# kernel binds paths in a directory only this execution uses.
@contextlib.contextmanager
def unix_socket_kernels():
    """A kernel manager class whose kernels talk over Unix sockets in a private directory, removed afterwards."""
    from jupyter_client import AsyncKernelManager
    from traitlets import default

    with tempfile.TemporaryDirectory(prefix="loadlab-kernel-") as directory:

        class UnixSocketKernelManager(AsyncKernelManager):
            @default("transport")
            def _default_transport(self) -> str:
                return "ipc"

            def _ip_default(self) -> str:
                # An absolute path: the kernel runs in the notebooks' folder, its client wherever loadlab was started.
                return str(Path(directory) / "kernel")

        yield UnixSocketKernelManager


def execute(notebook: Path, profile: str, run_id: str | None = None, output_dir: Path = EXECUTED_DIR,
            log=print) -> Path:
    """Run one notebook through papermill with its parameters; returns the executed copy."""
    import papermill

    _echo_notebook_output()
    if profile not in PROFILE_NAMES:
        raise ParameterError("profile", profile, PROFILE_NAMES)
    output = Path(output_dir) / notebook.name
    output.parent.mkdir(parents=True, exist_ok=True)
    parameters = {"profile": profile, "run_id": run_id}
    started = time.monotonic()
    log(f"[{notebook.stem}] executing (profile={profile}, run_id={run_id})")
    # The kernel inherits the environment: progress as one line per trial (see runner.LineProgress).
    with _environment(LOADLAB_BATCH="1"), unix_socket_kernels() as kernel_manager_class:
        papermill.execute_notebook(
            str(notebook), str(output), parameters=parameters, kernel_name=KERNEL_NAME,
            cwd=str(paths.NOTEBOOKS_DIR), progress_bar=False, log_output=True,
            execution_timeout=CELL_TIMEOUT_S, kernel_manager_class=kernel_manager_class,
        )
    log(f"[{notebook.stem}] done in {time.monotonic() - started:.0f} s")
    return output


def export_html(executed: Path, output_dir: Path = paths.REPORTS_DIR) -> tuple[Path, Path]:
    """Two self-contained HTML pages per notebook: with code, and without (inputs hidden)."""
    import nbformat
    from nbconvert import HTMLExporter

    notebook = nbformat.read(str(executed), as_version=4)
    pages = []
    for suffix, exclude in (("", False), (".nocode", True)):
        exporter = HTMLExporter(template_name=PAGE_TEMPLATE, extra_template_basedirs=[str(TEMPLATES_DIR)],
                                embed_images=True)
        exporter.exclude_input = exclude
        exporter.exclude_input_prompt = exclude
        exporter.exclude_output_prompt = exclude
        body, _ = exporter.from_notebook_node(notebook)
        path = Path(output_dir) / f"{executed.stem}{suffix}.html"
        write_text_atomic(path, body)
        pages.append(path)
    return pages[0], pages[1]


def _title(notebook_path: Path) -> str:
    notebook = json.loads(notebook_path.read_text())
    for cell in notebook.get("cells", []):
        if cell.get("cell_type") == "markdown":
            for line in "".join(cell.get("source", "")).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return notebook_path.stem


def _runs_table(page_dir: Path) -> str:
    """Every run under data/raw with its status and links: the reference runs, benchmarks included."""
    rows = []
    for run in rundir.list_runs():
        # As the harness recorded them; the processed tables re-judge stalled trials (loadlab.outcome).
        trials = f"{run['ok']} of {run['planned']} ok, {run['failed']} failed" if run["planned"] else "microbenchmark"
        links = " ".join(f'<a href="{html.escape(href)}">{name}</a>' for name, href in data_links(run["run_id"], page_dir))
        rows.append(f"<tr><td>{html.escape(str(run['experiment']))}</td><td>{html.escape(str(run['run_id']))}</td>"
                    f"<td>{html.escape(str(run['status']))}</td><td>{trials}</td><td>{html.escape(str(run['updated_utc']))}</td><td>{links}</td></tr>")  # fmt: skip
    return ("<table><tr><th>experiment</th><th>run</th><th>status</th><th>trials</th><th>last written (UTC)</th>"
            "<th>data</th></tr>" + "".join(rows) + "</table>")  # fmt: skip


def write_index(executed: list[Path], profile: str, output_dir: Path = paths.REPORTS_DIR,
                run_id: str | None = None) -> Path:
    """index.html: provenance of every page's runs, the notebooks, every claim beside its measurement, every run."""
    from loadlab import claims
    from loadlab.pages import claim_rows, claim_table_html
    from loadlab.pages.provenance import provenance_html, read_records

    output_dir = Path(output_dir)
    rows = "\n".join(
        f"<tr><td>{html.escape(p.stem)}</td><td>{html.escape(_title(p))}</td>"
        f'<td><a href="{html.escape(p.stem)}.nocode.html">report</a></td>'
        f'<td><a href="{html.escape(p.stem)}.html">with code</a></td>'
        f'<td><a href="notebooks/{html.escape(p.name)}">notebook</a></td></tr>'
        for p in executed
    )
    records = read_records(output_dir)
    runs = list(dict.fromkeys(run for record in records for run in record["runs"]))
    started = min((record["started_utc"] for record in records), default=None)
    provenance = provenance_html("the collection", profile, run_id, runs, started_utc=started)
    _, claim_catalogue = claims.load_claims()
    verdicts = sorted(claims.load_verdicts(output_dir / "verdicts"), key=lambda v: v.claim_id)
    claim_table = claim_table_html(claim_rows(verdicts, claim_catalogue, page_dir=output_dir))
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>loadlab reports</title>
<style>body{{font-family:sans-serif;max-width:90em;margin:2em auto;line-height:1.4}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}}</style>
</head><body>
<h1>loadlab: what does a concurrency runtime cost under load?</h1>
{provenance}
<p>Exported {dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")}. Each report opens with the same block for
its own runs, and the setup of its source beside this one.</p>
<h2>Notebooks</h2>
<table><tr><th>#</th><th>title</th><th></th><th></th><th></th></tr>
{rows}
</table>
<h2>Claims: claimed beside measured, and how to reproduce each</h2>
<p>Claimed values are the sources' own (their hardware, their units); measured values are the medians behind
each verdict's ratio. Each command measures the claim again, or re-analyses the committed runs
(<code>--run-id latest</code>).</p>
{claim_table}
<h2>Runs</h2>
<p>Every run under <code>data/raw/</code>, the throughput benchmark included; processed tables are rebuilt from raw
alone.</p>
{_runs_table(output_dir)}
</body></html>
"""
    path = output_dir / "index.html"
    write_text_atomic(path, page)
    return path


def check_exported(output_dir: Path = paths.REPORTS_DIR, browser: bool = True, log=print) -> list[str]:
    """The checks the test suite runs on exported pages, on these pages; returns the problems found.

    Every page's visible text is scanned for reprs and runaway precision
    (pages.html_checks). With `browser` and Chromium installed, index.html and
    every no-code report are opened in headless Chromium (pages.browser): no
    console error, every figure loaded, flame graphs zoom on click; a
    screenshot of each page is kept in <output_dir>/screenshots/.
    """
    from loadlab.pages import browser as chromium
    from loadlab.pages import html_checks

    output_dir = Path(output_dir)
    problems = [str(finding) for page in sorted(output_dir.glob("*.html")) for finding in html_checks.check_page(page)]
    if browser:
        if chromium.find_chromium() is None:
            log("browser check skipped: chromium is not installed (Debian: apt-get install chromium)")
        else:
            pages = [output_dir / "index.html", *sorted(output_dir.glob("[0-9][0-9]-*.nocode.html"))]
            for check in chromium.check_pages(pages, output_dir / "screenshots"):
                problems += [f"{check.page}: {problem}" for problem in check.problems]
                log(f"{check.page}: {check.images} figures, {check.flame_graphs} flame graphs; screenshot {check.screenshot}")
    return problems


# The notebook that reads every other notebook's verdicts (notebooks/99-summary.ipynb).
SUMMARY_PREFIX = "99-"


def _write_replication(reference: Path, log) -> None:
    table = replication.write_replication(reference, paths.VERDICTS_DIR, paths.REPORTS_DIR / replication.REPLICATION_FILE)
    log(table.to_string(index=False))
    log("replication against the previous verdicts: " + replication.summary_line(table))


def build_collection(profile: str, run_id: str | None = None, only: list[str] | None = None, log=print) -> Path:
    """Execute every notebook (or those whose names start with `only`), export HTML, write the index."""
    notebooks = [n for n in source_notebooks() if not only or any(n.stem.startswith(o) for o in only)]
    if not notebooks:
        raise ParameterError("only", only, "prefixes of notebooks/NN-*.ipynb")
    executed = []
    # A measuring run is compared with the verdicts it replaces (the committed reference, on a fresh clone).
    reference = None
    if run_id is None:
        reference = replication.keep_reference(paths.VERDICTS_DIR, Path(tempfile.mkdtemp(prefix="loadlab-reference-")))
    compared = False
    # Every notebook measured by this command is one sitting: they share its A/A control (judgements.margins).
    sitting = os.environ.get(SITTING_ENV) or f"sitting-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}"
    with _environment(**{SITTING_ENV: sitting}):
        for number, notebook in enumerate(notebooks, start=1):
            if reference is not None and not compared and notebook.stem.startswith(SUMMARY_PREFIX):
                # The summary shows the comparison, so it is written once every verdict of this run exists.
                _write_replication(reference, log)
                compared = True
            log(f"notebook {number}/{len(notebooks)}: {notebook.name}")
            executed.append(execute(notebook, profile, run_id, log=log))
            export_html(executed[-1])
    if reference is not None and not compared:
        _write_replication(reference, log)
    everything = sorted(EXECUTED_DIR.glob("[0-9][0-9]-*.ipynb"))
    index = write_index(everything, profile, run_id=run_id)
    # The text checks are quick; the browser check is `loadlab check-pages`.
    for problem in check_exported(browser=False, log=log):
        log(f"page check: {problem}")
    return index


def export_existing(log=print) -> Path:
    """Re-export HTML from the executed notebooks already in reports/notebooks/."""
    executed = sorted(EXECUTED_DIR.glob("[0-9][0-9]-*.ipynb"))
    if not executed:
        raise ParameterError("reports/notebooks", "empty", "executed notebooks: run `make reproduce` first")
    for notebook in executed:
        log(f"exporting {notebook.name}")
        export_html(notebook)
    parameters = json.loads(executed[0].read_text()).get("metadata", {}).get("papermill", {}).get("parameters", {})
    return write_index(executed, parameters.get("profile", "?"), run_id=parameters.get("run_id"))
