"""Raw run folders: `data/raw/<experiment>/<run-id>/` with manifest.json and trials/<n>/.

Every file is written atomically (temporary file in the same folder, fsync,
rename), so a reader never sees half a file. A trial is assembled in
`trials/<n>.partial/` and renamed to `trials/<n>/` only when it has ended,
successfully or with a recorded failure; a run interrupted mid-trial leaves
only a `.partial` folder, which resuming discards. Raw files are never
edited after that rename.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from . import paths

MANIFEST = "manifest.json"
TRIALS = "trials"
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

    def read_manifest(self) -> dict:
        return read_json(self.manifest_path)

    def write_manifest(self, manifest: dict) -> None:
        write_json_atomic(self.manifest_path, manifest)

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
