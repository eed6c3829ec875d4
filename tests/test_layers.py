"""The analysis side never talks to Docker (docs/architecture.md).

Each module is imported in a fresh interpreter, so one module's imports cannot
hide another's; a module that pulls in the Docker SDK, even transitively, fails.
"""

import subprocess
import sys

import pytest

ANALYSIS_SIDE = (
    "loadlab.config", "loadlab.experiment", "loadlab.plans", "loadlab.rundir", "loadlab.tables",
    "loadlab.claims", "loadlab.judgements", "loadlab.judgements.verdicts", "loadlab.judgements.capacity",
    "loadlab.judgements.profiler_overhead", "loadlab.judgements.s1",
    "loadlab.judgements.s1_profiles", "loadlab.judgements.s2_scheduler", "loadlab.profile_tables",
    "loadlab.judgements.replication", "loadlab.stats", "loadlab.plots", "loadlab.profiles",
    "loadlab.loadgen.wrk", "loadlab.loadgen.vegeta", "loadlab.contract", "loadlab.contract.verify",
    "loadlab.contract.fuzz", "loadlab.contract.fuzz_cases", "loadlab.servers", "loadlab.schemas", "loadlab.study",
    "loadlab.report", "loadlab.hostfacts", "loadlab.pages", "loadlab.pages.browser", "loadlab.latency_curve",
)


@pytest.mark.parametrize("module", ANALYSIS_SIDE)
def test_importing_the_analysis_side_does_not_import_docker(module):
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m == 'docker' or m.startswith('loadlab.harness')))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]", f"{module} imports {result.stdout.strip()}"


def test_the_harness_does_import_docker():
    """The check above can fail: the harness is where Docker lives."""
    code = "import sys, loadlab.harness.runner; print('docker' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "True"


def test_the_architecture_page_and_the_readme_name_every_subpackage():
    from loadlab import paths

    package = paths.ROOT / "src" / "loadlab"
    subpackages = sorted(p.parent.name for p in package.glob("*/__init__.py"))
    assert {"harness", "contract", "stats", "plots", "profiles", "schemas"} <= set(subpackages)
    architecture = (paths.ROOT / "docs" / "architecture.md").read_text()
    layout = (paths.ROOT / "README.md").read_text().split("## Layout", 1)[1]
    for name in subpackages:
        assert f"`loadlab.{name}`" in architecture, f"docs/architecture.md does not name loadlab.{name}"
        assert f"  {name}/" in layout, f"the README's Layout has no line for {name}/"


def test_the_code_points_at_the_design_in_the_repository():
    # DESIGN.md lives outside the repository; docs/architecture.md is the design a clone has.
    from loadlab import paths

    sources = [p for folder in ("src", "tests", "servers", "microbench-programs", "benchmarks")
               for p in (paths.ROOT / folder).rglob("*") if p.is_file() and p.suffix in (".py", ".lua", ".go", ".md", "")
               and not any(part.endswith(".egg-info") for part in p.parts)]  # pip's copy of the README
    citing = [str(p.relative_to(paths.ROOT)) for p in sources
              if "DESIGN.md" in p.read_text(errors="replace") and p.name != "test_layers.py"]
    assert citing == []


# ---- The import graph: no circle, no arrow up ------------------------------------------------------------------
#
# The floors of src/loadlab, from the bottom. A module may import from its own floor or any floor below, never from
# one above. An entry names a module or a package, and a package's entry covers every module in it, so a new module
# inherits its package's floor; the root `loadlab` names its __init__ alone. Entries may name modules that do not
# exist yet (units and metrics: one home per metric and unit). docs/architecture.md ("The layering rule") holds the
# same table, and a test below keeps the two equal.
FLOORS = (
    ("foundations", ("loadlab", "paths", "errors", "units")),
    ("vocabulary and pure tools", ("metrics", "stats", "contract", "schemas", "outcome", "profiles")),
    ("what is measured and claimed", ("servers", "config", "experiment", "claims")),
    ("raw runs", ("loadgen", "manifest", "rundir", "hostfacts")),
    ("tables", ("profile_tables", "tables")),
    ("analysis", ("latency_curve",)),
    ("judgements", ("judgements",)),
    ("figures", ("plots",)),
    ("pages", ("pages",)),
    ("the notebooks' plans", ("plans", "microbench_plans")),
    ("measurement", ("harness",)),
    ("entry points", ("study", "report", "cli")),
)
ENTRY_FLOOR = {("loadlab" if entry == "loadlab" else f"loadlab.{entry}"): floor
               for floor, (_, entries) in enumerate(FLOORS) for entry in entries}


def module_sources(package=None) -> dict[str, tuple]:
    """{dotted module name: (path, is a package's __init__)} for every module in `package` (src/loadlab)."""
    from loadlab import paths

    package = package or paths.ROOT / "src" / "loadlab"
    modules = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def import_graph(package=None) -> dict[str, set[str]]:
    """{module: the loadlab modules it imports}, from every import statement, at the top or in a function.

    Relative imports are resolved against the importing module's package. ``from a.b import c`` is an edge to the
    module a.b.c when there is one, else to a.b (a name a.b defines). Importing a.b.c also runs a.b's __init__, but
    that implicit step is not an edge: a package's __init__ that re-exports its own modules (a.b -> a.b.c) is then
    an edge down into its parts, and a circle only when one of its parts imports a name from the package itself,
    which is a real circle at import time.
    """
    import ast

    modules = module_sources(package)
    graph = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for alias in node.names:
                    targets.add(f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source)
        resolved = set()
        for target in targets:
            while target not in modules and "." in target:
                target = target.rpartition(".")[0]
            if target in modules and target != name:
                resolved.add(target)
        graph[name] = resolved
    return graph


def floor_of(module: str) -> int | None:
    """The floor of `module`: its own entry's, else the nearest package's above it that has one (not the root's)."""
    candidate = module
    while True:
        if candidate in ENTRY_FLOOR and (candidate != "loadlab" or module == "loadlab"):
            return ENTRY_FLOOR[candidate]
        if "." not in candidate:
            return None
        candidate = candidate.rpartition(".")[0]


def test_the_import_graph_sees_every_kind_of_import(tmp_path):
    """The parser is the other tests' eye: it must see imports at the top and in functions, absolute and relative,
    of modules and of names, and tell a package's re-exports from a circle."""
    files = {
        "__init__.py": "",
        "low.py": "VALUE = 1\n",
        "mid/__init__.py": "from .parts import PART\n",  # re-exports its own module: an edge down, no circle
        "mid/parts.py": "from ..low import VALUE\nPART = VALUE\n",
        "mid/other.py": "from loadlab.mid import parts\n\ndef later():\n    import loadlab.top\n",
        "mid/back.py": "from loadlab.mid import PART\n",  # a name from its own package's __init__
        "top.py": "from loadlab import low, mid\n",
    }
    for name, text in files.items():
        (tmp_path / "loadlab" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "loadlab" / name).write_text(text)
    graph = import_graph(tmp_path / "loadlab")
    assert graph["loadlab.mid"] == {"loadlab.mid.parts"}
    assert graph["loadlab.mid.parts"] == {"loadlab.low"}
    assert graph["loadlab.mid.other"] == {"loadlab.mid.parts", "loadlab.top"}
    assert graph["loadlab.mid.back"] == {"loadlab.mid"}
    assert graph["loadlab.top"] == {"loadlab.low", "loadlab.mid"}
    assert circles(graph) == []  # mid/__init__ -> mid.parts is not a circle
    graph["loadlab.mid.parts"].add("loadlab.mid")  # ... but a part importing its package's names is
    assert circles(graph) == ["loadlab.mid -> loadlab.mid.parts -> loadlab.mid"]


def test_every_module_has_a_floor():
    missing = sorted(module for module in module_sources() if floor_of(module) is None)
    assert missing == [], (f"{missing} have no floor: add them (or their package) to FLOORS in tests/test_layers.py "
                           "and to the table in docs/architecture.md")


def test_no_module_imports_from_a_floor_above_its_own():
    graph = import_graph()
    upward = [f"{module} (floor {floor_of(module)}) imports {target} (floor {floor_of(target)})"
              for module, targets in sorted(graph.items()) for target in sorted(targets)
              if floor_of(module) is not None and floor_of(target) is not None and floor_of(target) > floor_of(module)]
    assert upward == []


def circles(graph: dict[str, set[str]]) -> list[str]:
    """Every circle a depth-first walk meets, as "a -> b -> a" (an empty list: the graph has none)."""
    state, found = {}, []

    def visit(module, trail):
        state[module] = "open"
        for target in sorted(graph[module]):
            if state.get(target) == "open":
                found.append(" -> ".join(trail[trail.index(target):] + [target]))
            elif target not in state:
                visit(target, trail + [target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def test_the_import_graph_has_no_circle():
    assert circles(import_graph()) == []


def test_the_harness_reads_no_table_figure_or_page():
    """The other direction of the layering rule: the harness writes raw runs and never reads what is made of them."""
    tables_floor = ENTRY_FLOOR["loadlab.tables"]
    graph = import_graph()
    above_raw = [f"{module} imports {target}" for module, targets in sorted(graph.items())
                 if module.startswith("loadlab.harness") for target in sorted(targets)
                 if not target.startswith("loadlab.harness") and floor_of(target) >= tables_floor]
    assert above_raw == []


def test_the_architecture_page_lists_the_same_floors():
    import re

    from loadlab import paths

    section = (paths.ROOT / "docs" / "architecture.md").read_text().split("## The layering rule", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"^\|\s*\d+\s*\|", line)]
    documented = []
    for row in rows:
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        documented.append((int(cells[0]), cells[1], tuple(re.findall(r"`([a-z_]+)`", cells[2]))))
    assert documented == [(floor, name, entries) for floor, (name, entries) in enumerate(FLOORS)]


# ---- Names: the folders beside the package say what they hold ----------------------------------------------------

FOLDER_READMES = ("benchmarks/README.md", "microbench-programs/README.md")


def _names_something(dotted: str) -> bool:
    """True when `dotted` is a module of the package, or a module's attribute (`loadlab.harness.microbench.build`)."""
    import importlib

    modules = module_sources()
    module = dotted
    while module not in modules and "." in module:
        module = module.rpartition(".")[0]
    if module not in modules:
        return False
    value = importlib.import_module(module)
    for attribute in dotted[len(module):].split(".")[1:]:
        if not hasattr(value, attribute):
            return False
        value = getattr(value, attribute)
    return True


@pytest.mark.parametrize("readme", FOLDER_READMES)
def test_the_folder_readmes_name_only_modules_and_files_that_exist(readme):
    import re

    from loadlab import paths

    text = (paths.ROOT / readme).read_text()
    # A name in code quotes, ended by the quote or a call (`loadlab.run=<id>`, a container label, is not a module).
    modules = set(re.findall(r"`(loadlab(?:\.[a-z_]+)+)(?=[`(])", text))
    assert modules, f"{readme} names no module of the package"
    assert [name for name in sorted(modules) if not _names_something(name)] == []
    sources = re.findall(r"`?(src/loadlab/[\w/]+\.py)", text)
    assert [path for path in sources if not (paths.ROOT / path).is_file()] == []


def test_the_benchmarks_readme_lists_every_script_and_the_programs_readme_every_program():
    import re

    from loadlab import paths

    benchmarks = (paths.ROOT / "benchmarks" / "README.md").read_text()
    assert [p.name for p in sorted((paths.ROOT / "benchmarks").glob("*.py")) if f"`{p.name}`" not in benchmarks] == []
    programs_dir = paths.ROOT / "microbench-programs"
    built = set(re.findall(r"-o /out/([\w-]+)", (programs_dir / "Dockerfile").read_text())) | {"spawn-java"}
    readme = (programs_dir / "README.md").read_text()
    assert [program for program in sorted(built) if f"`{program}" not in readme] == []


def test_the_readme_says_where_a_new_metric_runtime_claim_and_figure_go():
    from loadlab import paths

    section = (paths.ROOT / "README.md").read_text().split("## Architecture", 1)[1].split("\n## ", 1)[0]
    for thing, places in {
        "a metric": ("metrics.py", "units.py"),
        "a runtime": ("servers/<name>/", "loadlab.yaml", "RUNTIMES", "palette.py", "loadlab.plans"),
        "a claim": ("claims.yaml", "judgements/sN.py", "notebook", "save_verdicts"),
        "a figure": ("plots/", "save_figure", "tests/test_figure_lint.py", "notebook"),
    }.items():
        answer = section.split(f"**{thing}**", 1)[1].split("\n- **", 1)[0]
        assert all(place in answer for place in places), (thing, [p for p in places if p not in answer])
    assert "docs/architecture.md" in section
