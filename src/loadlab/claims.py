"""The claims under test: the blog posts' claims and their sources, as claims.yaml states them.

`load_claims` reads data/external/claims.yaml (a verbatim copy of the shared
file) into `Source` and `Claim` records. Nothing here judges: the verdicts,
the rule that decides them and their records (reports/verdicts/<notebook>.json)
are `loadlab.judgements` (`rule`, `verdicts`), which builds on this module and
never the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from loadlab import paths


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    metric: str | None = None
    unit: str | None = None
    values: dict = field(default_factory=dict)
    claim: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class Source:
    id: str
    title: str
    setup: str


def load_claims(path: Path = paths.CLAIMS_YAML) -> tuple[dict[str, Source], dict[str, Claim]]:
    document = yaml.safe_load(Path(path).read_text())
    sources = {key: Source(key, value["title"], " ".join(value["setup"].split())) for key, value in document["sources"].items()}
    claims = {}
    for raw in document["claims"]:
        claims[raw["id"]] = Claim(
            id=raw["id"], source=raw["source"], metric=raw.get("metric"), unit=raw.get("unit"),
            values=dict(raw.get("values") or {}), claim=raw.get("claim"), note=raw.get("note"),
        )
    return sources, claims
