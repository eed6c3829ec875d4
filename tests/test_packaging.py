"""The package declares what it imports: `pip install .` into a clean environment, then import every module.

Versions are held to env/requirements.txt (as constraints, so pip resolves
the pinned ones, from its cache when it has them), but what gets installed is
decided by pyproject.toml's dependencies alone: an import that is not
declared fails here.
"""

import shutil
import subprocess
import venv

import pytest

from loadlab import paths

SOURCE = paths.ROOT / "src" / "loadlab"


def _modules() -> list[str]:
    names = []
    for path in sorted(SOURCE.rglob("*.py")):
        parts = path.relative_to(SOURCE.parent).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


@pytest.mark.slow
def test_pip_install_into_a_clean_environment_imports_every_module(tmp_path):
    environment = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(environment)
    python = environment / "bin" / "python"
    constraints = tmp_path / "constraints.txt"
    constraints.write_text((paths.ENV_DIR / "requirements.txt").read_text())
    # A copy of what a source distribution holds: setuptools builds inside the folder it is given.
    project = tmp_path / "project"
    shutil.copytree(paths.ROOT / "src", project / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(paths.ROOT / name, project / name)
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-c", str(constraints), str(project)],
        capture_output=True, text=True,
    )
    assert install.returncode == 0, install.stderr[-3000:]
    modules = _modules()
    assert "loadlab.harness.runner" in modules and "loadlab.profiles.pprof" in modules
    # From outside the checkout, so the installed copy (not ./src) is what imports.
    result = subprocess.run(
        [str(python), "-c", "import importlib, sys\nfor name in sys.argv[1:]: importlib.import_module(name)\nprint('ok')", *modules],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]
    # Package data: the schemas every experiment and server manifest is checked against.
    schemas = subprocess.run(
        [str(python), "-c", "from loadlab import schemas\nprint(sorted(schemas.schema(n)['title'] for n in schemas.SCHEMA_NAMES))"],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert schemas.returncode == 0 and "experiments/<name>.yaml" in schemas.stdout, schemas.stderr[-3000:]
    check = subprocess.run([str(python), "-m", "pip", "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
