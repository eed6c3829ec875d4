"""Folded stacks: the text form `root;...;leaf count` and helpers on the table.

The table (schema.stacks_frame) has columns `stack` (frames root first,
joined by ";") and `count` (int64). The text form is Brendan Gregg's, one
stack per line: frames, one space (a tab is accepted on input), the count.
Frame names may contain spaces (py-spy's "fn (file.py:12)"), so the count is
whatever follows the last white space.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from ._sources import PathLike, read_text
from .schema import stacks_frame

FRAME_SEPARATOR = ";"
# A sample without frames (a goroutine with no stack yet in pprof, a py-spy
# sample taken while the interpreter had no Python frame) still counts in
# the tool's totals, so it gets this frame instead of an empty stack.
EMPTY_STACK_FRAME = "[no stack]"


def clean_frame(name: str) -> str:
    """A frame name safe inside a folded stack.

    ";" separates frames and a newline ends a stack, so they become ":" and a
    space (JVM descriptors such as "Ljava/lang/String;" would otherwise split
    one frame in two). An empty name becomes "[unknown]".
    """
    if not name:
        return "[unknown]"
    if ";" in name or "\n" in name or "\t" in name or "\r" in name:
        name = name.replace(";", ":").replace("\n", " ").replace("\t", " ").replace("\r", " ")
    return name


def join_frames(frames_root_first: Iterable[str]) -> str:
    """One folded stack from frame names, root first (names are cleaned)."""
    return FRAME_SEPARATOR.join(clean_frame(frame) for frame in frames_root_first)


def parse_folded(text: str) -> pd.DataFrame:
    """A stacks table from folded text (`stack count` per line).

    Blank lines are skipped; a line with only a count is a sample with no
    frames (EMPTY_STACK_FRAME); a line whose last field is not an integer is an
    error naming the line, because silently dropping it would change totals.
    """
    counts: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.rstrip()
        if not line:
            continue
        parts = line.rsplit(None, 1)
        if len(parts) == 1:
            parts = [EMPTY_STACK_FRAME, parts[0]]  # " 1": a sample with no frames (py-spy writes these)
        try:
            stack, value = parts[0], int(parts[1])
        except ValueError:
            raise ValueError(f"folded line {number} does not end with an integer count: {line[:200]!r}") from None
        counts[stack] = counts.get(stack, 0) + value
    return stacks_frame(counts)


def read_folded(path: PathLike) -> pd.DataFrame:
    """A stacks table from a folded-stacks file (plain or gzip)."""
    return parse_folded(read_text(path))


def format_folded(stacks: pd.DataFrame) -> str:
    """The standard text form, `root;...;leaf count` per line, sorted by stack."""
    ordered = stacks.sort_values("stack", kind="stable")
    return "".join(f"{stack} {int(count)}\n" for stack, count in zip(ordered["stack"], ordered["count"]))


def write_folded(stacks: pd.DataFrame, path: PathLike) -> Path:
    """Write the text form to `path` atomically (temp file + rename); returns the path."""
    path = Path(path)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(format_folded(stacks), encoding="utf-8")
    temporary.replace(path)
    return path


def total_count(stacks: pd.DataFrame) -> int:
    """Sum of `count` over all stacks (total samples)."""
    return int(stacks["count"].sum())


def leaf_counts(stacks: pd.DataFrame) -> pd.Series:
    """Samples per leaf frame (the frame on CPU, "self" time), largest first."""
    leaves = stacks["stack"].str.rsplit(FRAME_SEPARATOR, n=1).str[-1]
    return stacks["count"].groupby(leaves.to_numpy()).sum().sort_values(ascending=False, kind="stable")


def inclusive_counts(stacks: pd.DataFrame) -> pd.Series:
    """Samples whose stack contains each frame at least once ("total" time), largest first.

    A recursive frame counts once per sample, as in pprof's "cum".
    """
    totals: dict[str, int] = {}
    for stack, count in zip(stacks["stack"], stacks["count"]):
        for frame in set(stack.split(FRAME_SEPARATOR)):
            totals[frame] = totals.get(frame, 0) + int(count)
    return pd.Series(totals, dtype="int64").sort_values(ascending=False, kind="stable")


def merge_stacks(*tables: pd.DataFrame) -> pd.DataFrame:
    """One stacks table summing several (e.g. all trials of one condition)."""
    counts: dict[str, int] = {}
    for table in tables:
        for stack, count in zip(table["stack"], table["count"]):
            counts[stack] = counts.get(stack, 0) + int(count)
    return stacks_frame(counts)
