"""A page measured afresh carries no progress lines: the runner's per-trial lines go to the terminal, not the page.

Issue 29 found 04's page, measured at quick by a new user, opening with its run's 60 lines "[1/60] trial 1:
rust@c400 finished ...". The runner writes them to the file `loadlab notebooks` names in $LOADLAB_PROGRESS_LOG,
and the report echoes that file to the terminal.
"""

import nbformat

from loadlab import report

CELL = """
from loadlab.harness.runner import _progress_bar

bar = _progress_bar(2, 0, True)
bar.set_description("trial 1: rust@c400")
bar.update(1)
bar.write("trial 2 failed: stalled")
bar.set_description("trial 2: go@c400")
bar.update(1)
bar.close()
print("what the page says")
"""


def test_an_executed_notebook_keeps_its_output_and_sends_progress_to_the_terminal(tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "python3", "language": "python"}
    parameters = nbformat.v4.new_code_cell('scale = "smoke"\nrun_id = None')
    parameters.metadata["tags"] = ["parameters"]
    notebook.cells = [parameters, nbformat.v4.new_code_cell(CELL)]
    path = tmp_path / "progress-check.ipynb"
    nbformat.write(notebook, str(path))
    terminal = []
    executed = report.execute(path, "smoke", None, output_dir=tmp_path / "executed", log=terminal.append)
    outputs = "".join(output.get("text", "") for cell in nbformat.read(str(executed), as_version=4).cells
                      for output in cell.get("outputs", []))
    assert "what the page says" in outputs
    assert "[1/2]" not in outputs and "trial 2 failed" not in outputs
    echoed = "\n".join(terminal)
    assert "[1/2] trial 1: rust@c400 finished" in echoed and "[2/2] trial 2: go@c400 finished" in echoed
    assert "trial 2 failed: stalled" in echoed
    page, _ = report.export_html(executed, tmp_path)
    assert "[1/2]" not in page.read_text() and "what the page says" in page.read_text()


def test_without_a_progress_file_the_lines_are_printed(capsys, monkeypatch):
    """A batch run outside `loadlab notebooks` (no progress file) still shows its progress."""
    from loadlab.config import PROGRESS_LOG_ENV
    from loadlab.harness.runner import LineProgress

    monkeypatch.delenv(PROGRESS_LOG_ENV, raising=False)
    bar = LineProgress(3, 1)
    bar.set_description("trial 2: go@c1")
    bar.update(1)
    assert "[2/3] trial 2: go@c1 finished" in capsys.readouterr().out
