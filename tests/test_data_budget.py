"""The committed raw reference data stays within its budget (about 30 MB).

Counts only the files git tracks under data/raw: runs made on this machine
since the clone (by `make reproduce`) are not the committed reference.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from loadlab import paths

BUDGET_BYTES = 30_000_000


def _tracked_raw_files() -> list[str]:
    if shutil.which("git") is None or not (paths.ROOT / ".git").exists():
        pytest.skip("not a git checkout: the committed data cannot be told from runs made here")
    listing = subprocess.run(["git", "-C", str(paths.ROOT), "ls-files", "-z", "--", "data/raw"],
                             capture_output=True, check=True)
    return [name for name in listing.stdout.decode().split("\0") if name]


def test_committed_raw_data_fits_the_budget():
    sizes = {name: (paths.ROOT / name).stat().st_size for name in _tracked_raw_files()
             if (paths.ROOT / name).exists()}
    total = sum(sizes.values())
    largest = sorted(sizes.items(), key=lambda item: -item[1])[:5]
    assert total <= BUDGET_BYTES, (
        f"data/raw holds {total / 1e6:.1f} MB of committed files, over the {BUDGET_BYTES / 1e6:.0f} MB budget; "
        f"largest: {', '.join(f'{name} ({size / 1e6:.2f} MB)' for name, size in largest)}")
