"""The analysis side never talks to Docker (docs/architecture.md).

Each module is imported in a fresh interpreter, so one module's imports cannot
hide another's; a module that pulls in the Docker SDK, even transitively, fails.
"""

import subprocess
import sys

import pytest

ANALYSIS_SIDE = (
    "loadlab.config", "loadlab.experiment", "loadlab.plans", "loadlab.rundir", "loadlab.tables",
    "loadlab.analysis", "loadlab.claims", "loadlab.stats", "loadlab.plots", "loadlab.profiles",
    "loadlab.loadgen.wrk", "loadlab.loadgen.vegeta", "loadlab.contract", "loadlab.contract.verify",
    "loadlab.contract.fuzz", "loadlab.contract.fuzz_cases", "loadlab.servers", "loadlab.schemas", "loadlab.study",
    "loadlab.report",
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
