"""Shared fixtures: a Docker engine and built images, or a skip that says exactly why.

Set LOADLAB_REQUIRE_DOCKER=1 (CI does) to turn "no engine" into a failure
instead of a skip, so a broken engine can never pass as skipped tests.
"""

from __future__ import annotations

import os

import pytest

from pathlib import Path

from loadlab import rundir, servers
from loadlab.errors import BuildInputUnavailable, DockerUnavailableError
from loadlab.harness import engine, images

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
# An illegible figure fails the tests (and the notebooks they execute) instead of warning.
os.environ["LOADLAB_STRICT_FIGURES"] = "1"


@pytest.fixture(scope="session")
def docker_client():
    try:
        return engine.ensure_engine(install=os.geteuid() == 0, log=lambda m: None)
    except DockerUnavailableError as error:
        if os.environ.get("LOADLAB_REQUIRE_DOCKER") == "1":
            pytest.fail(f"LOADLAB_REQUIRE_DOCKER=1 but: {error}")
        pytest.skip(f"no Docker engine: {error}")


_build_failures: dict[str, str] = {}


def build_or_skip(client, name: str | None, variant: str | None = None) -> str:
    """Build (if missing) a server image, or the loadgen when name is None.

    A server that needs a build input nobody gave (Swoole's PECL package on a
    network without PECL) is skipped with the build's own one-line reason;
    any other build failure fails the test.
    """
    spec = servers.get_server(name) if name else None
    key = f"{name}:{variant}"
    if key in _build_failures:
        pytest.skip(_build_failures[key])
    try:
        return images.ensure_image(client, spec, variant, log=lambda m: None)
    except BuildInputUnavailable as unavailable:
        missing = ", ".join(f"{var} (build arg {arg})" for arg, var in spec.build_inputs.items())
        _build_failures[key] = f"{unavailable} [inputs: {missing}]"
        pytest.skip(_build_failures[key])


@pytest.fixture(scope="session")
def loadgen_image(docker_client):
    return build_or_skip(docker_client, None)


def fixture_path(*parts: str) -> str:
    return os.path.join(FIXTURES, *parts)


# The last quick runs of what the quick scale no longer measures (plans.LEFT_OUT_AT_QUICK), as the reference sitting
# of 2026-11-29 (`make reproduce`, quick) recorded them; of 05-virtual-threads one trial (its JFR recording) of 12.
# The tests that read a real run of them read these when data/raw holds none (fixtures/extension-runs/README.md).
EXTENSION_RUNS = Path(FIXTURES) / "extension-runs"


def committed_run(experiment: str) -> Path | None:
    """The newest complete run of `experiment` in data/raw, else the one captured under fixtures/extension-runs."""
    return rundir.latest_run(experiment) or rundir.latest_run(experiment, EXTENSION_RUNS)


def committed_study(plan):
    """`study.measure_or_load(plan, run_id="latest")` on data/raw, or on the run captured under fixtures/extension-runs
    when data/raw has none (its tables built in a temporary folder, never beside the reference's)."""
    import tempfile

    from loadlab import study

    if rundir.latest_run(plan.name) is None and rundir.latest_run(plan.name, EXTENSION_RUNS) is not None:
        return study.measure_or_load(plan, run_id="latest", raw_dir=EXTENSION_RUNS,
                                     processed_root=Path(tempfile.mkdtemp(prefix="loadlab-fixture-tables-")),
                                     log=lambda line: None)
    return study.measure_or_load(plan, run_id="latest")


def no_committed_run(experiment: str) -> str:
    """The skip reason of a test that needs `committed_run(experiment)` and has none."""
    return f"no run of {experiment} in data/raw or tests/fixtures/extension-runs"


def committed_manifests(experiment: str) -> list[Path]:
    """[the manifest of `committed_run(experiment)`], or [] when there is none."""
    run = committed_run(experiment)
    return [run / "manifest.json"] if run is not None else []


def pytest_collection_modifyitems(config, items):
    # Slow Docker tests last, so a quick failure shows early.
    items.sort(key=lambda item: 1 if item.get_closest_marker("docker") else 0)


def pytest_terminal_summary(terminalreporter):
    """Say how many figures the figure lint checked (reference-data figures and notebook-saved figures)."""
    import sys

    lines = []
    lint = sys.modules.get("test_figure_lint") or sys.modules.get("tests.test_figure_lint")
    if lint is not None and lint.LINTED_FIGURES:
        lines.append(f"figure lint: {len(lint.LINTED_FIGURES)} figures built from the reference data, no problem found")
    pages = sys.modules.get("test_exported_pages") or sys.modules.get("tests.test_exported_pages")
    if pages is not None:
        lines += pages.SUMMARY
    for line in lines:
        terminalreporter.write_line(line)
