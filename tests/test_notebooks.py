"""Notebooks: numbered, thin, parameterized, committed without outputs."""

import json
import re
from pathlib import Path

import pytest

from loadlab import paths, plans

NOTEBOOKS = sorted(paths.NOTEBOOKS_DIR.glob("*.ipynb"))


def test_there_are_notebooks_numbered_in_run_order():
    names = [p.name for p in NOTEBOOKS]
    assert names and all(re.fullmatch(r"\d\d-[a-z0-9-]+\.ipynb", n) for n in names), names
    assert names[0].startswith("00-") and names[-1].startswith("99-")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_committed_without_outputs_and_with_a_parameters_cell(path):
    notebook = json.loads(path.read_text())
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), f"{path.name} has outputs"
    tagged = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters' (papermill)"
    source = "".join(tagged[0]["source"])
    assert re.search(r'^profile = "(smoke|quick|full)"', source, re.M) and re.search(r"^run_id = None", source, re.M)
    first = notebook["cells"][0]
    assert first["cell_type"] == "markdown" and "".join(first["source"]).startswith("# "), "a title first"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_stay_thin(path):
    # Logic lives in src/loadlab: no function or class definitions in notebooks.
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            assert not re.search(r"^\s*(def|class) ", "".join(cell["source"]), re.M), f"{path.name} defines code"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_measure_a_plan_as_it_is(path):
    # What to measure (profilers included) is chosen in loadlab.plans; a notebook never edits an experiment.
    notebook = json.loads(path.read_text())
    fields = "|".join(("servers", "load", "durations", "placement", "profilers", "trials_per_condition", "seed", "verify"))
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            assert not re.search(rf"^\s*\w+\.({fields})\b[^=\n]*=(?!=)", source, re.M), f"{path.name} edits an experiment"
            assert ".validate()" not in source, f"{path.name} validates an experiment itself (plans return valid ones)"


def test_the_plans_choose_the_profilers():
    assert plans.worker_pool("smoke", 1, [50.0]).profilers == ["gctrace", "go-metrics"]
    assert plans.virtual_threads("quick").profilers == ["jfr"] and plans.pinning("full").profilers == ["jfr"]
    assert plans.json_api("quick").profilers == []
    assert plans.scheduler_calls("quick", 1, [50.0]).profilers == ["uprobes"]
    # 06: each runtime profiled only by its own ecosystem's profiler.
    per_server = {c["label"]: c["config"].profilers for c in plans.cpu_profiles("quick").conditions()}
    assert per_server == {"go": ("pprof",), "java-platform": ("jfr", "jfr-locks"), "java-virtual": ("jfr", "jfr-locks"),
                          "rust": ("perf",), "python": ("py-spy",)}


def test_the_profiler_overhead_plan_pairs_each_profiler_with_its_server_without_it():
    experiment = plans.profiler_overhead("quick")
    conditions = {c["label"]: c for c in experiment.conditions()}
    pairs = plans.profiler_overhead_pairs()
    assert {label for pair in pairs for label in pair} == set(conditions)
    for without, with_profiler in pairs:
        assert conditions[without]["config"].profilers == ()
        assert conditions[without]["config"].server == conditions[with_profiler]["config"].server
    assert conditions["go+pprof"]["config"].profilers == ("pprof",)
    # JFR is the Java server's own recorder: its knob, not a capture.
    assert conditions["java-virtual"]["config"].settings["JFR"] == "off"
    assert {conditions[f"java-virtual+jfr-{s}"]["config"].settings["JFR"] for s in ("default", "profile")} \
        == {"default", "profile"}
    assert all(conditions[label]["config"].profilers == () for label in conditions if label.startswith("java"))


def test_every_profile_makes_valid_experiments():
    for profile in plans.PROFILE_NAMES:
        for make in (plans.noise, plans.loadgen_ceiling, plans.server_capacity, plans.json_api, plans.io_coroutines,
                     plans.cpu_profiles):
            experiment = make(profile)
            assert experiment.name.endswith(profile)
    with pytest.raises(Exception, match="profile"):
        plans.noise("enormous")


@pytest.mark.parametrize("callers_value", [None, "0"])
def test_executing_a_notebook_sets_batch_mode_for_its_kernel_only(tmp_path, monkeypatch, callers_value):
    import os

    import nbformat

    from loadlab import report

    if callers_value is None:
        monkeypatch.delenv("LOADLAB_BATCH", raising=False)
    else:
        monkeypatch.setenv("LOADLAB_BATCH", callers_value)
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "loadlab", "display_name": "loadlab", "language": "python"}
    notebook.metadata["language_info"] = {"name": "python"}
    parameters = nbformat.v4.new_code_cell('profile = "smoke"\nrun_id = None')
    parameters.metadata["tags"] = ["parameters"]
    notebook.cells = [parameters, nbformat.v4.new_code_cell('import os\nassert os.environ["LOADLAB_BATCH"] == "1"')]
    path = tmp_path / "batch-check.ipynb"
    nbformat.write(notebook, str(path))
    executed = report.execute(path, "smoke", None, output_dir=tmp_path / "executed", log=lambda m: None)
    assert executed.is_file()
    assert os.environ.get("LOADLAB_BATCH") == callers_value


def test_notebook_kernels_talk_over_unix_sockets_so_no_tcp_port_can_be_taken_first():
    # The cause of a flake: a TCP kernel's ports are chosen by binding port 0 and closing it, and another
    # process could take one before the kernel bound it. A Unix socket in a private directory has no such gap.
    from loadlab import report

    with report.unix_socket_kernels() as kernel_manager_class:
        manager = kernel_manager_class(kernel_name="python3")
        assert manager.transport == "ipc"
        assert Path(manager.ip).is_absolute() and Path(manager.ip).parent.is_dir()
        directory = Path(manager.ip).parent
    assert not directory.exists()
