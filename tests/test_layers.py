"""The analysis side never talks to Docker (docs/architecture.md).

Each module is imported in a fresh interpreter, so one module's imports cannot
hide another's; a module that pulls in the Docker SDK, even transitively, fails.
"""

import subprocess
import sys

import pytest

ANALYSIS_SIDE = (
    "loadlab.config", "loadlab.experiment", "loadlab.plans", "loadlab.rundir", "loadlab.tables",
    "loadlab.analysis", "loadlab.claims", "loadlab.judgements", "loadlab.judgements.capacity",
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

    sources = [p for folder in ("src", "tests", "servers", "microbench", "benchmarks")
               for p in (paths.ROOT / folder).rglob("*") if p.is_file() and p.suffix in (".py", ".lua", ".go", ".md", "")
               and not any(part.endswith(".egg-info") for part in p.parts)]  # pip's copy of the README
    citing = [str(p.relative_to(paths.ROOT)) for p in sources
              if "DESIGN.md" in p.read_text(errors="replace") and p.name != "test_layers.py"]
    assert citing == []
