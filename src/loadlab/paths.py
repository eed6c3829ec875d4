"""Every path the project uses, defined once (cookiecutter-data-science style).

`LOADLAB_ROOT` overrides the repository root, e.g. to keep data elsewhere.
`LOADLAB_REPORTS_DIR` overrides where executed notebooks, HTML pages,
figures and verdicts go (tests export the committed data into a temporary
folder this way, leaving reports/ alone).
"""

from __future__ import annotations

import os
from pathlib import Path


def _find_root() -> Path:
    env = os.environ.get("LOADLAB_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "servers" / "CONTRACT.md").is_file() and (parent / "pyproject.toml").is_file():
            return parent
    return Path.cwd().resolve()


ROOT = _find_root()
SERVERS_DIR = ROOT / "servers"
CONTRACT_MD = SERVERS_DIR / "CONTRACT.md"
ENV_DIR = ROOT / "env"
DATA_DIR = ROOT / "data"
RAW_DIR = DATA_DIR / "raw"
PROCESSED_DIR = DATA_DIR / "processed"
REPORTS_DIR = Path(os.environ["LOADLAB_REPORTS_DIR"]).resolve() if os.environ.get("LOADLAB_REPORTS_DIR") else ROOT / "reports"
FIGURES_DIR = REPORTS_DIR / "figures"
NOTEBOOKS_DIR = ROOT / "notebooks"
EXTERNAL_DIR = DATA_DIR / "external"
# The claims under test: a verbatim copy of the brief's shared/claims.yaml, so a
# fresh clone has it (tests/test_claims.py keeps the copy identical).
CLAIMS_YAML = EXTERNAL_DIR / "claims.yaml"
SHARED_CLAIMS_YAML = ROOT.parent / "shared" / "claims.yaml"
EXPERIMENTS_DIR = ROOT / "experiments"
VERDICTS_DIR = REPORTS_DIR / "verdicts"
