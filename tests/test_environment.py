"""The pinned environment: exact pins, and environment.yml mirrors requirements.txt."""

import re

import yaml

from loadlab import paths

REQUIRED = {"jupyterlab", "pandas", "numpy", "scipy", "seaborn", "papermill", "nbconvert", "docker",
            "py-spy", "pyarrow", "tqdm", "hdrhistogram", "pytest", "matplotlib", "pyyaml"}


def requirement_lines():
    return [l.strip() for l in (paths.ENV_DIR / "requirements.txt").read_text().splitlines()
            if l.strip() and not l.startswith("#")]


def test_every_requirement_is_pinned_exactly():
    for line in requirement_lines():
        assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[A-Za-z0-9_.+\-]+", line), line
    names = {line.split("==")[0].lower() for line in requirement_lines()}
    assert REQUIRED <= names, REQUIRED - names


def test_environment_yml_carries_the_same_pins():
    document = yaml.safe_load((paths.ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in document["dependencies"] if isinstance(d, dict))
    assert [p for p in pip_section if not p.startswith("-e")] == requirement_lines()
