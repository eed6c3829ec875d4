"""py-spy raw folding against a real capture (py-spy record --format raw on pyspy_fixture.py)."""

from __future__ import annotations

import re
from pathlib import Path

from loadlab.profiles import pyspy
from loadlab.profiles.folded import EMPTY_STACK_FRAME, leaf_counts, total_count

FIXTURES = Path(__file__).parent / "fixtures" / "profiles"


def _pyspy_samples() -> int:
    return int(re.search(r"Samples: (\d+)", (FIXTURES / "pyspy-record.log").read_text())[1])


def test_total_matches_py_spys_own_count():
    stacks = pyspy.read_pyspy_raw(FIXTURES / "pyspy-raw.txt")
    assert total_count(stacks) == _pyspy_samples()


def test_hot_function_leads_once_line_numbers_are_merged():
    merged = pyspy.read_pyspy_raw(FIXTURES / "pyspy-raw.txt")
    by_line = pyspy.read_pyspy_raw(FIXTURES / "pyspy-raw.txt", line_numbers=True)
    leaves = leaf_counts(merged)
    assert leaves.index[0] == "hot_xorshift (pyspy_fixture.py)"
    assert leaves.iloc[0] > total_count(merged) / 2
    assert total_count(by_line) == total_count(merged)
    assert len(by_line) > len(merged)  # the loop's lines were separate stacks
    assert by_line["stack"].str.contains(r"hot_xorshift \(pyspy_fixture\.py:\d+\)").any()
    # Every sample is in the script, except a sample py-spy took between frames (if any).
    rooted = merged[merged["stack"] != EMPTY_STACK_FRAME]
    assert rooted["stack"].str.startswith("<module> (pyspy_fixture.py)").all()


def test_frames_are_root_first():
    stacks = pyspy.read_pyspy_raw(FIXTURES / "pyspy-raw.txt")
    hot = stacks[stacks["stack"].str.endswith("hot_xorshift (pyspy_fixture.py)")]
    assert hot["stack"].tolist() == ["<module> (pyspy_fixture.py);main (pyspy_fixture.py);hot_xorshift (pyspy_fixture.py)"]
