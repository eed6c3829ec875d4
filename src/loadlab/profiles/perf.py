"""`perf script` output (from `perf record -g`) into folded stacks.

One record per sample: a header line, then one line per frame (leaf
first), then a blank line:

    gofixture 16869   427.289668:    5025125 cpu-clock:
    	          290eec main.hotXorshift+0x2c (/tmp/gofixture)
    	          29172a main.main+0x4ca (/tmp/gofixture)

The header's fields depend on perf's options (`comm pid/tid [cpu] time:
period event:`, several optional); we read the command name (which may
contain spaces), pid/tid, the period and the event name. As
stackcollapse-perf.pl does: symbol offsets (+0x2c) are dropped, an unknown
symbol becomes the module's file name in brackets ("[libc.so.6]"), and
the command name is the root frame. Each sample counts 1 unless
weight="period" (the event's period, e.g. nanoseconds for cpu-clock).
"""

from __future__ import annotations

import os
import re

import pandas as pd

from ._sources import PathLike, read_text
from .folded import clean_frame
from .schema import stacks_frame

_HEADER = re.compile(
    r"^(?P<comm>\S.*?)\s+(?P<pid>\d+)(?:/(?P<tid>\d+))?\s+(?:\[(?P<cpu>\d+)\]\s+)?"
    r"(?P<time>\d+\.\d+):\s+(?:(?P<period>\d+)\s+)?(?P<event>[^\s:]+(?::[^\s:]+)*?):"
)
_FRAME = re.compile(r"^\s+(?P<address>[0-9a-fA-F]+)\s*(?P<rest>.*)$")
_OFFSET = re.compile(r"\+0x[0-9a-fA-F]+$")


def _frame_name(rest: str, annotate_kernel: bool) -> str:
    symbol, module = rest, ""
    if rest.endswith(")"):
        # The module is the last parenthesised group; symbols can hold
        # parentheses themselves (C++ "f(int)"), so search from the right.
        open_at = rest.rfind(" (")
        if open_at < 0 and rest.startswith("("):
            open_at = -1
        symbol, module = (rest[:open_at], rest[open_at + 2:-1]) if open_at >= 0 else ("", rest[1:-1])
    symbol = _OFFSET.sub("", symbol.strip())
    if not symbol or symbol == "[unknown]":
        symbol = f"[{os.path.basename(module)}]" if module and module != "[unknown]" else "[unknown]"
    if annotate_kernel and module.startswith("[kernel"):
        symbol += "_[k]"
    return symbol


def parse_perf_script(
    text: str,
    process_root: bool = True,
    annotate_kernel: bool = False,
    weight: str = "samples",
    event: str | None = None,
) -> pd.DataFrame:
    """Folded stacks (schema.py) from `perf script` text.

    process_root: the command name as root frame (stackcollapse-perf's default).
    annotate_kernel: append "_[k]" to kernel frames (stackcollapse-perf --kernel).
    weight: "samples" (1 per sample) or "period" (the sample's period).
    event: keep only samples of this event (e.g. "cpu-clock"); default all.
    """
    if weight not in ("samples", "period"):
        raise ValueError(f"weight={weight!r} is not allowed: weight must be 'samples' or 'period'")
    counts: dict[str, int] = {}
    header = None
    frames: list[str] = []

    def finish() -> None:
        if header is None or (event is not None and header["event"] != event):
            return
        names = [clean_frame(name) for name in reversed(frames)]
        if process_root:
            names.insert(0, clean_frame(header["comm"]))
        stack = ";".join(names) or "[unknown]"
        value = 1 if weight == "samples" else int(header["period"] or 1)
        counts[stack] = counts.get(stack, 0) + value

    for line in text.splitlines():
        if not line.strip():
            finish()
            header, frames = None, []
            continue
        if line[0] in " \t":
            if header is not None:
                frame = _FRAME.match(line)
                if frame is not None:
                    frames.append(_frame_name(frame["rest"], annotate_kernel))
            continue
        if line.startswith("#"):
            continue  # perf script --header lines
        finish()
        header, frames = _HEADER.match(line), []
    finish()
    return stacks_frame(counts)


def read_perf_script(path: PathLike, **options) -> pd.DataFrame:
    """parse_perf_script on a saved `perf script` output file (plain or gzip)."""
    return parse_perf_script(read_text(path), **options)
