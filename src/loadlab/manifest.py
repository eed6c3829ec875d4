"""A run's manifest (`data/raw/<experiment>/<run-id>/manifest.json`) as a typed record.

The harness writes it when a run starts and after every trial; the analysis
reads it (tables, study, pages, judgements, report). On disk it stays the
JSON object it has always been, with the keys in the order below:

    run_id, experiment, status, created_utc, updated_utc, parameters,
    provenance, conditions, images, runtime_versions, trial_order, trials,
    annotations

Old manifests lack some keys (the microbenchmarks' records have no
conditions, images, runtime_versions or annotations; an ad-hoc trial has no
created_utc): a missing key reads as empty and is left out again when the
manifest is written back, so a file read and written is unchanged. A key
this module does not know is kept as read, in `extra`, and written back
after the known ones.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

# Every manifest since the first has these; a file without one is not a manifest.
REQUIRED_KEYS = ("run_id", "experiment", "status")


@dataclasses.dataclass
class TrialRecord:
    """One finished trial as the manifest lists it: its condition, outcome, and when it ended (UTC, ISO 8601)."""

    condition: str
    status: str  # "ok" or "failed", as the harness recorded it
    failure_reason: str | None = None
    finished_utc: str | None = None  # an ad-hoc trial (`loadlab trial`) records none

    @classmethod
    def from_dict(cls, record: dict) -> TrialRecord:
        return cls(condition=record["condition"], status=record["status"],
                   failure_reason=record.get("failure_reason"), finished_utc=record.get("finished_utc"))

    def to_dict(self) -> dict:
        record = {"condition": self.condition, "status": self.status, "failure_reason": self.failure_reason}
        if self.finished_utc is not None:
            record["finished_utc"] = self.finished_utc
        return record


@dataclasses.dataclass
class Manifest:
    """What a run recorded about itself; times are UTC ISO 8601 strings to the second."""

    run_id: str
    experiment: str  # the experiment's name (the folder above the run's)
    status: str  # rundir.STATUS_RUNNING, STATUS_COMPLETE or STATUS_INTERRUPTED
    created_utc: str | None = None
    updated_utc: str | None = None
    # The experiment as run (Experiment.to_dict(); Experiment.from_record reads it back). An ad-hoc trial records
    # its one TrialConfig in a list; a microbenchmark its own parameters.
    parameters: dict | list = dataclasses.field(default_factory=dict)
    provenance: dict = dataclasses.field(default_factory=dict)  # harness.provenance.collect(): host, engine, git, sitting
    conditions: list[dict] = dataclasses.field(default_factory=list)  # {condition, label, level, config}
    images: dict[str, dict] = dataclasses.field(default_factory=dict)  # label -> {image, image_id, build_hash}
    runtime_versions: dict[str, str] = dataclasses.field(default_factory=dict)  # label -> version text
    trial_order: list[dict] = dataclasses.field(default_factory=list)  # {trial, condition, block}: the schedule
    trials: dict[str, TrialRecord] = dataclasses.field(default_factory=dict)  # str(trial number) -> record
    annotations: dict = dataclasses.field(default_factory=dict)  # e.g. {"missing_servers": {label: why}}
    extra: dict = dataclasses.field(default_factory=dict)  # keys this module does not know, kept as read
    # The optional keys the file did not have: written back only once they hold something.
    absent: frozenset[str] = dataclasses.field(default=frozenset(), repr=False, compare=False)

    @classmethod
    def from_dict(cls, document: dict) -> Manifest:
        missing = [key for key in REQUIRED_KEYS if key not in document]
        if missing:
            raise ValueError(f"a manifest needs {', '.join(missing)}")
        known = {field.name for field in dataclasses.fields(cls)} - {"extra", "absent"}
        values = {key: value for key, value in document.items() if key in known}
        values["trials"] = {number: TrialRecord.from_dict(record) for number, record in document.get("trials", {}).items()}
        return cls(**values, extra={key: value for key, value in document.items() if key not in known},
                   absent=frozenset(key for key in _optional_keys() if key not in document))

    @classmethod
    def read(cls, path: Path) -> Manifest:
        return cls.from_dict(json.loads(Path(path).read_text()))

    def to_dict(self) -> dict:
        document = {}
        for field in dataclasses.fields(self):
            if field.name in ("extra", "absent"):
                continue
            value = getattr(self, field.name)
            if field.name in self.absent and not value:
                continue
            document[field.name] = {n: r.to_dict() for n, r in value.items()} if field.name == "trials" else value
        return {**document, **self.extra}

    def to_json(self) -> str:
        """The file's text (two-space indent, a final newline): what rundir writes atomically."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=False, default=str) + "\n"

    def parameter(self, section: str) -> dict:
        """One section of the recorded experiment (`load`, `placement`, `durations`, ...), {} when not recorded."""
        return (self.parameters.get(section) or {}) if isinstance(self.parameters, dict) else {}

    @property
    def missing_servers(self) -> dict[str, str]:
        """{label: why} for the servers the plan named but the run left out."""
        return dict(self.annotations.get("missing_servers") or {})

    def count(self, status: str) -> int:
        """How many recorded trials ended with `status` ("ok" or "failed")."""
        return sum(1 for record in self.trials.values() if record.status == status)


def _optional_keys() -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(Manifest) if f.name not in (*REQUIRED_KEYS, "extra", "absent"))
