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
import time
from pathlib import Path

from loadlab import paths
from loadlab.errors import ParameterError
from loadlab.plans import PROFILE_NAMES
from loadlab.rundir import write_text_atomic

EXECUTED_DIR = paths.REPORTS_DIR / "notebooks"
KERNEL_NAME = "python3"  # the interpreter running loadlab (its .venv); JupyterLab users pick "loadlab"
CELL_TIMEOUT_S = 4 * 3600


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
    with _environment(LOADLAB_BATCH="1"):
        papermill.execute_notebook(
            str(notebook), str(output), parameters=parameters, kernel_name=KERNEL_NAME,
            cwd=str(paths.NOTEBOOKS_DIR), progress_bar=False, log_output=True, execution_timeout=CELL_TIMEOUT_S,
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
        exporter = HTMLExporter(template_name="lab", embed_images=True)
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


def write_index(executed: list[Path], profile: str, output_dir: Path = paths.REPORTS_DIR) -> Path:
    from loadlab.claims import load_verdicts

    rows = "\n".join(
        f"<tr><td>{html.escape(p.stem)}</td><td>{html.escape(_title(p))}</td>"
        f'<td><a href="{html.escape(p.stem)}.nocode.html">report</a></td>'
        f'<td><a href="{html.escape(p.stem)}.html">with code</a></td>'
        f'<td><a href="notebooks/{html.escape(p.name)}">notebook</a></td></tr>'
        for p in executed
    )
    verdicts = load_verdicts()
    verdict_rows = "\n".join(
        f"<tr><td>{html.escape(v.claim_id)}"
        + (f"<br><small>{html.escape(v.candidate)} / {html.escape(v.baseline)}</small>" if v.candidate and v.baseline else "")
        + f"</td><td><b>{html.escape(v.verdict)}</b></td>"
        f"<td>{html.escape(v.explanation)}</td><td>{html.escape(v.notebook)}</td></tr>"
        for v in sorted(verdicts, key=lambda v: v.claim_id)
    )
    from loadlab.harness.provenance import host_description

    host = host_description()
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>loadlab reports</title>
<style>body{{font-family:sans-serif;max-width:70em;margin:2em auto;line-height:1.4}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:left;vertical-align:top}}</style>
</head><body>
<h1>loadlab: what does a concurrency runtime cost under load?</h1>
<p>Profile <b>{html.escape(profile)}</b>, exported {dt.datetime.now(dt.UTC).isoformat(timespec="seconds")} on
{html.escape(str(host["cpu_model"]))} ({host["cpu_count"]} CPUs), kernel {html.escape(host["kernel"])}.
Each report states its run id; raw data lives in <code>data/raw/</code>.</p>
<h2>Notebooks</h2>
<table><tr><th>#</th><th>title</th><th></th><th></th><th></th></tr>
{rows}
</table>
<h2>Claims and verdicts</h2>
<table><tr><th>claim</th><th>verdict</th><th>why</th><th>notebook</th></tr>
{verdict_rows}
</table>
</body></html>
"""
    path = Path(output_dir) / "index.html"
    write_text_atomic(path, page)
    return path


def build_collection(profile: str, run_id: str | None = None, only: list[str] | None = None, log=print) -> Path:
    """Execute every notebook (or those whose names start with `only`), export HTML, write the index."""
    notebooks = [n for n in source_notebooks() if not only or any(n.stem.startswith(o) for o in only)]
    if not notebooks:
        raise ParameterError("only", only, "prefixes of notebooks/NN-*.ipynb")
    executed = []
    for number, notebook in enumerate(notebooks, start=1):
        log(f"notebook {number}/{len(notebooks)}: {notebook.name}")
        executed.append(execute(notebook, profile, run_id, log=log))
        export_html(executed[-1])
    everything = sorted(EXECUTED_DIR.glob("[0-9][0-9]-*.ipynb"))
    return write_index(everything, profile)


def export_existing(log=print) -> Path:
    """Re-export HTML from the executed notebooks already in reports/notebooks/."""
    executed = sorted(EXECUTED_DIR.glob("[0-9][0-9]-*.ipynb"))
    if not executed:
        raise ParameterError("reports/notebooks", "empty", "executed notebooks: run `make reproduce` first")
    for notebook in executed:
        log(f"exporting {notebook.name}")
        export_html(notebook)
    profile = json.loads(executed[0].read_text()).get("metadata", {}).get("papermill", {}).get("parameters", {}).get("profile", "?")
    return write_index(executed, profile)
