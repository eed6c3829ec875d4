"""Folded stacks: text form, helpers, on real profiles."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from loadlab.profiles import folded, jfr, perf, pprof
from loadlab.profiles.schema import STACK_DTYPES, stacks_frame

FIXTURES = Path(__file__).parent / "fixtures" / "profiles"


@pytest.fixture(scope="module")
def stacks():
    return perf.read_perf_script(FIXTURES / "perf-script.txt")


def test_text_form_round_trips(stacks, tmp_path):
    text = folded.format_folded(stacks)
    assert text.count("\n") == len(stacks)
    first = text.splitlines()[0]
    assert first == f"{stacks['stack'].iloc[0]} {stacks['count'].iloc[0]}"
    assert folded.parse_folded(text).equals(stacks)
    path = folded.write_folded(stacks, tmp_path / "perf.folded")
    assert folded.read_folded(path).equals(stacks)
    assert not list(tmp_path.glob("*.tmp"))


def test_table_dtypes_and_order(stacks):
    assert {column: str(dtype) for column, dtype in stacks.dtypes.items()} == STACK_DTYPES
    assert stacks["stack"].is_monotonic_increasing and stacks["stack"].is_unique
    assert (stacks["count"] > 0).all()


def test_tab_separated_counts_and_frames_with_spaces_are_read():
    table = folded.parse_folded("a (x.py:1);b c (y.py:2)\t3\na (x.py:1);b c (y.py:2) 2\n")
    assert table["stack"].tolist() == ["a (x.py:1);b c (y.py:2)"] and table["count"].tolist() == [5]


def test_a_count_alone_is_a_sample_without_frames():
    # py-spy writes " 1" for a sample taken while no Python frame was running.
    table = folded.parse_folded(" 1\nmain 2\n")
    assert dict(zip(table["stack"], table["count"])) == {folded.EMPTY_STACK_FRAME: 1, "main": 2}


def test_a_line_without_count_is_an_error():
    with pytest.raises(ValueError, match="line 2"):
        folded.parse_folded("a;b 1\na;b\n")


def test_frame_names_are_made_safe():
    # JVM descriptors carry ";" (Ljava/lang/String;), which would split a frame.
    assert folded.clean_frame("f(Ljava/lang/String;)V") == "f(Ljava/lang/String:)V"
    assert folded.clean_frame("") == "[unknown]"
    assert folded.join_frames(["a", "b;c", "d\ne"]) == "a;b:c;d e"


def test_leaf_and_inclusive_counts(stacks):
    leaves = folded.leaf_counts(stacks)
    inclusive = folded.inclusive_counts(stacks)
    total = folded.total_count(stacks)
    assert leaves.sum() == total
    assert inclusive["gofixture"] == total  # the root is in every stack
    for name in leaves.index:
        assert inclusive[name] >= leaves[name]


def test_merge_sums_equal_stacks():
    cpu = pprof.read_pprof_stacks(FIXTURES / "go-cpu.pb.gz")
    merged = folded.merge_stacks(cpu, cpu)
    assert merged["stack"].tolist() == cpu["stack"].tolist()
    assert (merged["count"] == 2 * cpu["count"]).all()


def test_stacks_frame_accepts_pairs_and_drops_zeros():
    table = stacks_frame([("b", 1), ("a", 2), ("b", 3), ("c", 0)])
    assert table["stack"].tolist() == ["a", "b"] and table["count"].tolist() == [2, 4]
    assert isinstance(table, pd.DataFrame)


def test_jfr_frames_never_split(recwarn):
    events = jfr.read_jfr_json(FIXTURES / "jfr-jdk21.json.gz")
    stacks = jfr.jfr_stacks(events)
    # Every frame of every sample survives the join: depth equals the frames printed.
    depths = sorted(stacks["stack"].str.count(";") + 1)
    printed = sorted(
        len(event["values"]["stackTrace"]["frames"]) for event in events if event["type"] == "jdk.ExecutionSample"
    )
    assert set(depths) <= set(printed)
