"""Notebooks: numbered, thin, parameterized, committed without outputs."""

import ast
import dataclasses
import importlib
import inspect
import json
import re
from pathlib import Path

import pytest

from loadlab import pages, paths, plans

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
    assert re.search(r'^scale = "(smoke|quick|full)"', source, re.M) and re.search(r"^run_id = None", source, re.M)
    first = notebook["cells"][0]
    assert first["cell_type"] == "markdown" and "".join(first["source"]).startswith("# "), "a title first"


def code_cells(notebook: dict) -> list[str]:
    """Each code cell's source with IPython's magics and shell lines left out, so that it parses as Python."""
    return ["\n".join(line for line in "".join(cell["source"]).splitlines() if not line.lstrip().startswith(("%", "!")))
            for cell in notebook["cells"] if cell["cell_type"] == "code"]


# The setup every page once repeated, now done by study.open_page.
REPEATED_SETUP = ("%matplotlib", "set_matplotlib_formats", "pd.set_option", "load_claims(", "ProvenanceBlock(",
                  "use_report_display_options(", "FIGURES_DIR")
RAW_FILE_READS = ("trial.json", "manifest.json", ".read_text(", ".read_bytes(", ".write_text(", "json.load", "open(")
ORDERINGS = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _number(node) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool)


def thinness_problems(notebook: dict) -> list[str]:
    """What a notebook does that belongs in src/loadlab: definitions, lambdas, per-scale sizes, decisions against a
    threshold, raw file reads, and the setup study.open_page does."""
    problems = []
    raw = "\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "code")
    problems += [f"repeats the setup: {text}" for text in REPEATED_SETUP if text in raw]
    if "study.open_page(" not in raw:
        problems.append("does not open with study.open_page")
    for source in code_cells(notebook):
        problems += [f"reads or writes a raw file: {text}" for text in RAW_FILE_READS if text in source]
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                problems.append(f"defines {node.name}")
            elif isinstance(node, ast.Lambda):
                problems.append(f"a lambda (line {node.lineno}): a package function instead")
            elif isinstance(node, ast.Dict):
                keys = {key.value for key in node.keys if isinstance(key, ast.Constant)}
                if len(keys & set(plans.SCALE_NAMES)) >= 2:
                    problems.append(f"sizes by scale in a cell (line {node.lineno}): loadlab.plans sizes measurements")
            elif isinstance(node, ast.Compare) and any(isinstance(op, ORDERINGS) for op in node.ops) \
                    and any(_number(operand) for operand in [node.left, *node.comparators]):
                problems.append(f"decides against a threshold (line {node.lineno}): judgements/ or pages/ decide")
    return problems


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebooks_stay_thin(path):
    # Logic lives in src/loadlab: a cell asks, calls, draws and says; it neither sizes, decides nor reads raw files.
    assert thinness_problems(json.loads(path.read_text())) == []


def _notebook(*sources: str) -> dict:
    opening = 'NOTEBOOK = "00-x"\nPAGE = study.open_page(NOTEBOOK, scale, run_id)'
    return {"cells": [{"cell_type": "markdown", "source": ["# x"]},
                      *({"cell_type": "code", "source": [source]} for source in (opening, *sources))]}


@pytest.mark.parametrize("source, problem", [
    ("def helper(x):\n    return x", "defines helper"),
    ("measure = lambda: microbench.spawn_cost(client)", "a lambda"),
    ('frame.assign(mib=lambda f: f["bytes"] / MIB)', "a lambda"),
    ('repetitions = {"smoke": 1, "quick": 5, "full": 10}[scale]', "sizes by scale"),
    ('if row["ci_high"] < 1:\n    text = "costs"', "decides against a threshold"),
    ('verdict = "holds" if p > 0.05 else "not"', "decides against a threshold"),
    ('limits = json.loads((run_dir / "trials" / "1" / "trial.json").read_text())', "reads or writes a raw file"),
    ('%matplotlib inline\npd.set_option("display.width", 200)', "repeats the setup"),
    ('SOURCES, CLAIMS = claims.load_claims()', "repeats the setup"),
])
def test_the_thinness_test_refuses_what_belongs_in_the_package(source, problem):
    problems = thinness_problems(_notebook(source))
    assert any(found.startswith(problem) for found in problems), problems


def test_the_thinness_test_passes_a_thin_notebook_and_wants_the_opening_call():
    thin = _notebook('s = study.measure_or_load(plans.json_api(scale), run_id=run_id)\nPAGE.introduce(s)',
                     'level = trials["level"].max()\nif not per.empty:\n    display(per)')
    assert thinness_problems(thin) == []
    unopened = {"cells": [cell for cell in thin["cells"] if "open_page" not in "".join(cell["source"])]}
    assert thinness_problems(unopened) == ["does not open with study.open_page"]


def _bound_names(tree: ast.AST) -> dict[str, object]:
    """The notebook's names bound to loadlab modules and objects (imports), to a Page (open_page) or to a Study
    (measure_or_load)."""
    from loadlab import study

    names: dict[str, object] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "loadlab":
            module = importlib.import_module(node.module)
            for alias in node.names:
                names[alias.asname or alias.name] = getattr(module, alias.name, None) or \
                    importlib.import_module(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "loadlab":
                    names[alias.asname or alias.name.split(".")[0]] = importlib.import_module(alias.name.split(".")[0])
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            called = ast.unparse(node.value.func)
            kind = {"study.open_page": study.Page, "study.measure_or_load": study.Study}.get(called)
            for target in node.targets:
                if kind is not None and isinstance(target, ast.Name):
                    names[target.id] = kind
    return names


def missing_loadlab_names(sources: list[str]) -> list[str]:
    """The `name.attribute...` chains in `sources` (code cells) whose root is a loadlab module, object, Page or Study
    and which do not resolve."""
    tree = ast.parse("\n".join(sources))
    names = _bound_names(tree)
    missing = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        chain, root = [], node
        while isinstance(root, ast.Attribute):
            chain.insert(0, root.attr)
            root = root.value
        if not isinstance(root, ast.Name) or root.id not in names:
            continue
        value = names[root.id]
        for attribute in chain:
            if not (inspect.ismodule(value) or inspect.isclass(value)):
                break
            if dataclasses.is_dataclass(value) and attribute in {field.name for field in dataclasses.fields(value)}:
                break  # an instance's field: what it holds is not checked
            if not hasattr(value, attribute):
                try:
                    value = importlib.import_module(f"{value.__name__}.{attribute}")
                    continue
                except (ImportError, AttributeError):
                    missing.append(f"{root.id}.{'.'.join(chain)}")
                    break
            value = getattr(value, attribute)
    return sorted(set(missing))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_loadlab_name_a_notebook_uses_exists(path):
    # The notebooks measure with Docker and cannot run here: each cell compiles, and every loadlab module, function
    # and attribute it names (and every Page or Study attribute) resolves.
    sources = code_cells(json.loads(path.read_text()))
    for source in sources:
        compile(source, str(path), "exec")
    assert missing_loadlab_names(sources) == []


def test_the_name_check_finds_a_name_loadlab_does_not_have():
    sources = ["from loadlab import stats, study\nPAGE = study.open_page('x', 'quick', None)",
               "stats.condition_summary(t, m)\nstats.no_such_function(t)\nPAGE.figure(f, 'a')\nPAGE.nothing()"]
    assert missing_loadlab_names(sources) == ["PAGE.nothing", "stats.no_such_function"]


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
    experiment = plans.profiler_overhead("full")
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
    assert plans.profiler_overhead_unmeasured(conditions) == []


def test_quick_measures_only_the_profiler_every_java_verdict_runs_with_and_says_what_it_left_out():
    quick = plans.profiler_overhead("quick")
    labels = {c["label"] for c in quick.conditions()}
    assert labels == {"java-virtual", "java-virtual+jfr-profile"}
    # Its full trials a side, so the ratio gets an exact interval (3 + 3 never did).
    assert quick.trials_per_condition == plans.scale("quick").trials_per_condition
    unmeasured = plans.profiler_overhead_unmeasured(labels)
    assert ("go", "go+pprof") in unmeasured and ("java-virtual", "java-virtual+jfr-profile") not in unmeasured
    line = pages.unmeasured_overhead_line(unmeasured, "quick")
    assert "go+pprof" in line and "rust+perf" in line and "SCALE=full" in line and "jfr-profile" not in line
    assert pages.unmeasured_overhead_line([], "full") == ""


def test_every_scale_makes_valid_experiments():
    for scale in plans.SCALE_NAMES:
        for make in (plans.noise, plans.loadgen_ceiling, plans.server_capacity, plans.json_api, plans.io_coroutines,
                     plans.cpu_profiles):
            experiment = make(scale)
            assert experiment.name.endswith(scale)
    with pytest.raises(Exception, match="scale"):
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
    parameters = nbformat.v4.new_code_cell('scale = "smoke"\nrun_id = None')
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
