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
import json
import os
import tempfile
import time
from pathlib import Path

from loadlab import hostfacts, paths, rundir
from loadlab.config import PROGRESS_LOG_ENV
from loadlab.errors import ParameterError
from loadlab.hostfacts import SITTING_ENV
from loadlab.judgements import replication
from loadlab.pages.claim_table import data_links
from loadlab.plans import SCALE_NAMES
from loadlab.rundir import write_text_atomic

EXECUTED_DIR = paths.REPORTS_DIR / "notebooks"
KERNEL_NAME = "python3"  # the interpreter running loadlab (its .venv); JupyterLab users pick "loadlab"
CELL_TIMEOUT_S = 4 * 3600
# nbconvert's "lab" template without its CDN scripts (src/loadlab/templates/loadlab-page/index.html.j2).
TEMPLATES_DIR = Path(__file__).parent / "templates"
PAGE_TEMPLATE = "loadlab-page"
INDEX_TEMPLATE = "loadlab-index"  # reports/index.html (templates/loadlab-index/index.html.j2)


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


@contextlib.contextmanager
def _progress_to(log):
    """A progress file for the kernel's runner (config.PROGRESS_LOG_ENV), echoed line by line to `log` while the
    block runs: per-trial progress belongs in the terminal, not in the executed notebook and its page."""
    import threading

    with tempfile.TemporaryDirectory(prefix="loadlab-progress-") as directory:
        path = Path(directory) / "progress.log"
        path.touch()
        stop = threading.Event()

        def follow() -> None:
            with path.open(encoding="utf-8") as lines:
                pending = ""
                while True:
                    stopping = stop.is_set()  # read after this pass, so the last lines are echoed too
                    pending += lines.read()
                    *complete, pending = pending.split("\n")
                    for line in complete:
                        log(f"    {line}")
                    if stopping:
                        return
                    stop.wait(0.5)

        follower = threading.Thread(target=follow, name="loadlab-progress", daemon=True)
        follower.start()
        try:
            yield str(path)
        finally:
            stop.set()
            follower.join()


def execute(notebook: Path, scale: str, run_id: str | None = None, output_dir: Path = EXECUTED_DIR,
            log=print) -> Path:
    """Run one notebook through papermill with its parameters; returns the executed copy."""
    import papermill

    _echo_notebook_output()
    if scale not in SCALE_NAMES:
        raise ParameterError("scale", scale, SCALE_NAMES)
    output = Path(output_dir) / notebook.name
    output.parent.mkdir(parents=True, exist_ok=True)
    parameters = {"scale": scale, "run_id": run_id}
    started = time.monotonic()
    log(f"[{notebook.stem}] executing (scale={scale}, run_id={run_id})")
    # The kernel inherits the environment: progress as one line per trial (see runner.LineProgress), written to a
    # file that is echoed here, not into the notebook.
    with _progress_to(log) as progress_log, _environment(LOADLAB_BATCH="1", **{PROGRESS_LOG_ENV: progress_log}), \
            unix_socket_kernels() as kernel_manager_class:
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


def _machine_text(provenance: dict) -> str:
    """"AMD EPYC, 2 CPUs, kernel 6.18.44-fc-v782": the host a run recorded ("" when it recorded none)."""
    return hostfacts.machine_text(provenance.get("host") or {})


def _commit_text(provenance: dict) -> str:
    commit = provenance.get("git_commit")
    if not commit:
        return ""
    return commit[:7] + (" (uncommitted changes)" if provenance.get("git_dirty") else "")


def _runs_in_dataset(page_dir: Path) -> set[str]:
    """The runs behind the pages (those a page recorded), which the open dataset holds."""
    from loadlab.pages.provenance import read_records

    return {run for record in read_records(page_dir) for run in record["runs"]}


def _run_rows(page_dir: Path) -> list[dict]:
    """The run log: every run under data/raw with when it ran, the machine, the commit and scale it was measured
    at, its trials and failures; a run behind the pages links to its row in the open dataset (the others,
    benchmarks and earlier runs, are in a clone's data/raw/ only)."""
    in_dataset = _runs_in_dataset(page_dir)
    rows = []
    for run in rundir.list_runs():
        provenance = run["provenance"]
        # As the harness recorded them; the processed tables re-judge stalled trials (loadlab.outcome).
        trials = f"{run['ok']} of {run['planned']} ok, {run['failed']} failed" if run["planned"] else "microbenchmark"
        links = data_links(run["run_id"], page_dir) if run["run_id"] in in_dataset else []
        rows.append({"experiment": run["experiment"], "run_id": run["run_id"], "status": run["status"], "trials": trials,
                     "measured": " to ".join(dict.fromkeys(t for t in (run["created_utc"], run["updated_utc"]) if t)),
                     "machine": _machine_text(provenance), "commit": _commit_text(provenance),
                     "scale": rundir.run_scale(run["run_id"]) or "", "links": links})
    return rows


def _index_template():
    """The index page's Jinja template (templates/loadlab-index/index.html.j2), escaping what it is given."""
    import jinja2

    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES_DIR / INDEX_TEMPLATE),
                                     autoescape=True, keep_trailing_newline=True)
    return environment.get_template("index.html.j2")


def _collection_provenance(output_dir: Path, scale: str, run_id: str | None) -> str:
    """The provenance block of every page's runs (pages.provenance), as HTML."""
    from loadlab.pages.provenance import COLLECTION, provenance_html, read_records

    records = read_records(output_dir)
    runs = list(dict.fromkeys(run for record in records for run in record["runs"]))
    started = min((record["started_utc"] for record in records), default=None)
    return provenance_html(COLLECTION, scale, run_id, runs, started_utc=started, runs_folded=True)


def _claim_table(output_dir: Path) -> str:
    """Every claim beside its measurement and verdict, as HTML."""
    from loadlab import claims
    from loadlab.judgements.verdicts import load_verdicts
    from loadlab.pages import claim_rows, claim_table_html

    _, claim_catalogue = claims.load_claims()
    verdicts = sorted(load_verdicts(output_dir / "verdicts"), key=lambda v: v.claim_id)
    return claim_table_html(claim_rows(verdicts, claim_catalogue, page_dir=output_dir))


def _verdict_matrix(output_dir: Path) -> str:
    """Every verdict at a glance (pages.verdict_matrix), as HTML, each claim linked to its page."""
    from loadlab import claims
    from loadlab.judgements.verdicts import load_verdicts
    from loadlab.pages import matrix_html, matrix_rows

    _, claim_catalogue = claims.load_claims()
    return matrix_html(matrix_rows(load_verdicts(output_dir / "verdicts"), claim_catalogue))


def write_index(executed: list[Path], scale: str, output_dir: Path = paths.REPORTS_DIR,
                run_id: str | None = None) -> Path:
    """index.html: provenance of every page's runs, the notebooks, every claim beside its measurement, every run,
    and the open dataset (reports/data/, written here from the runs the pages recorded)."""
    from loadlab.pages import dataset

    output_dir = Path(output_dir)
    # The open dataset first: the index, like every page, links into it (reports/data/, pages.dataset).
    data = dataset.index_facts(dataset.write_dataset(output_dir), output_dir)
    page = _index_template().render(
        provenance=_collection_provenance(output_dir, scale, run_id),
        exported_utc=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        notebooks=[{"stem": p.stem, "name": p.name, "title": _title(p)} for p in executed],
        claim_table=_claim_table(output_dir),
        verdict_matrix=_verdict_matrix(output_dir),
        runs=_run_rows(output_dir),
        dataset=data,
    )
    path = output_dir / "index.html"
    write_text_atomic(path, page)
    return path


def remove_stale_figures(output_dir: Path = paths.REPORTS_DIR, log=print) -> list[Path]:
    """Delete the figure files (SVG, PNG) a page's last execution did not save: figures/<notebook>/<name>.* whose
    name is not in the page's record (provenance/<notebook>.json, `figures`). A record from before pages listed
    their figures leaves its folder alone. Returns the files removed."""
    from loadlab.pages.provenance import read_records

    output_dir = Path(output_dir)
    removed = []
    for record in read_records(output_dir):
        if "figures" not in record:
            continue
        folder = output_dir / "figures" / record["notebook"]
        for path in sorted(folder.glob("*")) if folder.is_dir() else []:
            if path.suffix in (".svg", ".png") and path.stem not in record["figures"]:
                path.unlink()
                removed.append(path)
                log(f"removed a figure {record['notebook']} no longer shows: {path.relative_to(output_dir)}")
    return removed


def check_exported(output_dir: Path = paths.REPORTS_DIR, browser: bool = True, log=print) -> list[str]:
    """The checks the test suite runs on exported pages, on these pages; returns the problems found.

    Every page's visible text is scanned for reprs and runaway precision
    (pages.html_checks), and every link on every page is followed (pages.links). With `browser` and Chromium installed, index.html and
    every no-code report are opened in headless Chromium (pages.browser): no
    console error, every figure loaded, flame graphs zoom on click; a
    screenshot of each page is kept in <output_dir>/screenshots/.
    """
    from loadlab.pages import browser as chromium
    from loadlab.pages import html_checks

    from loadlab.pages import links

    output_dir = Path(output_dir)
    problems = [str(finding) for page in sorted(output_dir.glob("*.html")) for finding in html_checks.check_page(page)]
    # Every page is hosted with reports/ alone: a link out of it, to a missing file or anchor, is a problem.
    problems += [f"broken link: {problem}" for problem in links.broken_links(output_dir)]
    if browser:
        if chromium.find_chromium() is None:
            log("browser check skipped: chromium is not installed (Debian: apt-get install chromium)")
        else:
            pages = [output_dir / "index.html", *sorted(output_dir.glob("[0-9][0-9]-*.nocode.html"))]
            for check in chromium.check_pages(pages, output_dir / "screenshots"):
                problems += [f"{check.page}: {problem}" for problem in check.problems]
                log(f"{check.page}: {check.images} figures, {check.flame_graphs} flame graphs; screenshot {check.screenshot}")
    return problems


# The notebook that reads every other notebook's verdicts (notebooks/99-summary.ipynb), the replication table included.
SUMMARY_PREFIX = "99-"


def _chosen_notebooks(only: list[str] | None) -> list[Path]:
    """notebooks/NN-*.ipynb, or those whose names start with one of `only`."""
    notebooks = [n for n in source_notebooks() if not only or any(n.stem.startswith(o) for o in only)]
    if not notebooks:
        raise ParameterError("only", only, "prefixes of notebooks/NN-*.ipynb")
    return notebooks


def _keep_reference(run_id: str | None) -> Path | None:
    """A copy of the verdicts a measuring run replaces (the committed reference, on a fresh clone); None when the
    notebooks re-analyse recorded runs."""
    if run_id is not None:
        return None
    return replication.keep_reference(paths.VERDICTS_DIR, Path(tempfile.mkdtemp(prefix="loadlab-reference-")))


def _compare_with_reference(reference: Path | None, log) -> None:
    """The replication step: this run's verdicts against the ones they replaced, written for the summary to show."""
    if reference is None:
        return
    table = replication.write_replication(reference, paths.VERDICTS_DIR, paths.REPORTS_DIR / replication.REPLICATION_FILE)
    log(table.to_string(index=False))
    log("replication against the previous verdicts: " + replication.summary_line(table))


def _execute_and_export(notebooks: list[Path], first: int, total: int, scale: str, run_id: str | None,
                        log) -> None:
    """Execute each notebook and export its two HTML pages; `first` numbers the progress lines."""
    for number, notebook in enumerate(notebooks, start=first):
        log(f"notebook {number}/{total}: {notebook.name}")
        export_html(execute(notebook, scale, run_id, log=log))


def build_collection(scale: str, run_id: str | None = None, only: list[str] | None = None, log=print) -> Path:
    """Execute every notebook (or those whose names start with `only`), export HTML, write the index.

    The steps: the measuring notebooks; the replication table (a measuring run's verdicts against those they
    replace), once every verdict of this run exists; the summary, which shows it; the index and the page checks.
    """
    notebooks = _chosen_notebooks(only)
    measuring = [n for n in notebooks if not n.stem.startswith(SUMMARY_PREFIX)]
    summaries = [n for n in notebooks if n.stem.startswith(SUMMARY_PREFIX)]
    reference = _keep_reference(run_id)
    # Every notebook measured by this command is one sitting: they share its A/A control (judgements.margins).
    sitting = os.environ.get(SITTING_ENV) or f"sitting-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}"
    with _environment(**{SITTING_ENV: sitting}):
        _execute_and_export(measuring, 1, len(notebooks), scale, run_id, log)
        _compare_with_reference(reference, log)
        _execute_and_export(summaries, len(measuring) + 1, len(notebooks), scale, run_id, log)
    remove_stale_figures(paths.REPORTS_DIR, log=log)
    index = write_index(sorted(EXECUTED_DIR.glob("[0-9][0-9]-*.ipynb")), scale, run_id=run_id)
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
    remove_stale_figures(paths.REPORTS_DIR, log=log)
    parameters = json.loads(executed[0].read_text()).get("metadata", {}).get("papermill", {}).get("parameters", {})
    scale = parameters.get("scale", parameters.get("profile", "?"))  # "profile": the parameter's name before 2026-11-28
    return write_index(executed, scale, run_id=parameters.get("run_id"))
