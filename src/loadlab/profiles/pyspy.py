"""py-spy's raw output (`py-spy record --format raw`) into folded stacks.

py-spy's raw format is already folded, one stack per line, root first:

    <module> (app.py:38);main (app.py:32);hot_xorshift (app.py:18) 58

Frames are "function (file:line)"; with --threads a "thread (0x7F...)"
root, with --subprocesses a "process PID:..." root, with --idle idle frames.
Lines differ by line number, so by default we drop the line numbers
("hot_xorshift (app.py)") and merge what becomes equal: one frame per
function, as other runtimes' flame graphs have.
"""

from __future__ import annotations

import re

import pandas as pd

from ._sources import PathLike, read_text
from .folded import parse_folded
from .schema import stacks_frame

_LINE_NUMBER = re.compile(r" \((?P<file>[^()]*?):\d+\)$")


def read_pyspy_raw(path: PathLike, line_numbers: bool = False) -> pd.DataFrame:
    """Folded stacks (schema.py) from a file written by `py-spy record --format raw -o FILE`.

    See the module docstring for `line_numbers`.
    """
    stacks = parse_folded(read_text(path))
    if line_numbers:
        return stacks
    counts: dict[str, int] = {}
    for stack, count in zip(stacks["stack"], stacks["count"]):
        merged = ";".join(_LINE_NUMBER.sub(r" (\g<file>)", frame) for frame in stack.split(";"))
        counts[merged] = counts.get(merged, 0) + int(count)
    return stacks_frame(counts)
