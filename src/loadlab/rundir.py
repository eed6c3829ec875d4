"""Raw run folders: `data/raw/<experiment>/<run-id>/` with manifest.json and trials/<n>/.

Every file is written atomically (temporary file in the same folder, fsync,
rename), so a reader never sees half a file. A trial is assembled in
`trials/<n>.partial/` and renamed to `trials/<n>/` only when it has ended,
successfully or with a recorded failure; a run interrupted mid-trial leaves
only a `.partial` folder, which resuming discards. Raw files are never
edited after that rename.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
from pathlib import Path

from loadlab import paths
from loadlab.config import SCALE_NAMES
from loadlab.errors import LoadlabError
from loadlab.manifest import Manifest

MANIFEST = "manifest.json"
TRIALS = "trials"
VERIFY_REPORT = "verify.json.gz"  # a trial's contract check before its load (contract.verify.summarize), gzip JSON
PARTIAL_SUFFIX = ".partial"


def write_bytes_atomic(path: Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        # mkstemp makes 0600 files; raw data is meant to be read by anyone the umask allows.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    write_bytes_atomic(path, text.encode())


def write_json_atomic(path: Path, document) -> None:
    write_text_atomic(path, json.dumps(document, indent=2, sort_keys=False, default=str) + "\n")


def write_parquet_atomic(path: Path, table) -> None:
    """A pandas DataFrame as parquet, atomically (temporary file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    table.to_parquet(temporary, index=False)
    os.replace(temporary, path)


def read_json(path: Path):
    return json.loads(Path(path).read_text())


class RunDirectory:
    """One run's raw folder."""

    def __init__(self, path: Path):
        self.path = Path(path)

    @classmethod
    def create(cls, experiment: str, run_id: str, raw_dir: Path = paths.RAW_DIR) -> RunDirectory:
        run = cls(Path(raw_dir) / experiment / run_id)
        (run.path / TRIALS).mkdir(parents=True, exist_ok=False)
        return run

    @property
    def run_id(self) -> str:
        return self.path.name

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST

    def read_manifest(self) -> Manifest:
        return Manifest.read(self.manifest_path)

    def write_manifest(self, manifest: Manifest) -> None:
        write_text_atomic(self.manifest_path, manifest.to_json())

    def trial_dir(self, number: int) -> Path:
        return self.path / TRIALS / str(number)

    def begin_trial(self, number: int) -> Path:
        """A fresh `.partial` folder for trial `number` (a stale one is discarded)."""
        partial = self.path / TRIALS / f"{number}{PARTIAL_SUFFIX}"
        if partial.exists():
            shutil.rmtree(partial)
        partial.mkdir(parents=True)
        return partial

    def finish_trial(self, number: int, partial: Path) -> Path:
        final = self.trial_dir(number)
        if final.exists():
            raise FileExistsError(f"trial {number} of {self.path} already exists; raw data is never overwritten")
        os.replace(partial, final)
        return final

    def discard_partial_trials(self) -> list[str]:
        discarded = []
        for partial in sorted((self.path / TRIALS).glob(f"*{PARTIAL_SUFFIX}")):
            shutil.rmtree(partial)
            discarded.append(partial.name)
        return discarded

    def finished_trials(self) -> list[int]:
        return sorted(
            int(p.name) for p in (self.path / TRIALS).iterdir() if p.is_dir() and p.name.isdigit()
        )


def now_utc() -> str:
    """The time now, UTC, to the second, as the manifests record it."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


STATUS_RUNNING = "running"
STATUS_COMPLETE = "complete"
STATUS_INTERRUPTED = "interrupted"


def list_runs(raw_dir: Path = paths.RAW_DIR) -> list[dict]:
    """Every run under raw_dir with its status, trial counts, times and provenance (commit, host), newest first."""
    runs = []
    for manifest_path in Path(raw_dir).glob("*/*/manifest.json"):
        try:
            manifest = RunDirectory(manifest_path.parent).read_manifest()
        except (OSError, ValueError):
            continue
        runs.append({
            "experiment": manifest.experiment,
            "run_id": manifest.run_id,
            "status": manifest.status,
            "planned": len(manifest.trial_order),
            "ok": manifest.count("ok"),
            "failed": manifest.count("failed"),
            "created_utc": manifest.created_utc,
            "updated_utc": manifest.updated_utc,
            "provenance": manifest.provenance or {},
            "path": str(manifest_path.parent),
        })
    return sorted(runs, key=lambda r: r["updated_utc"] or "", reverse=True)


def latest_run(experiment_name: str, raw_dir: Path = paths.RAW_DIR, status: str | None = STATUS_COMPLETE) -> Path | None:
    """The newest run of an experiment (with `status`, unless None), or None."""
    candidates = [r for r in list_runs(raw_dir) if r["experiment"] == experiment_name and (status is None or r["status"] == status)]
    return Path(candidates[0]["path"]) if candidates else None


def find_run(run_id: str, raw_dir: Path = paths.RAW_DIR) -> Path:
    matches = [p.parent for p in Path(raw_dir).glob(f"*/{run_id}/manifest.json")]
    if not matches:
        raise LoadlabError(f"no run {run_id!r} under {raw_dir} (see `loadlab runs`)")
    return matches[0]


def run_scale(run_id: str | None) -> str | None:
    """The scale a run was measured at, from its experiment's name (``03-json-api-quick-<stamp>-<hex>`` ->
    "quick"), or None when its name carries none."""
    if not run_id:
        return None
    experiment = str(run_id).rsplit("-", 2)[0]
    last = experiment.rsplit("-", 1)[-1]
    return last if last in SCALE_NAMES else None
