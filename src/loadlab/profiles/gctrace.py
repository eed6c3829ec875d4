"""Go's GODEBUG=gctrace=1 lines (on stderr) into tables.

One line per collection cycle, in the form documented in the runtime
package (Go 1.6 onwards; stacks and globals since Go 1.18):

    gc 7 @0.105s 2%: 0.021+1.2+0.004 ms clock, 0.042+0.3/0.9/0.1+0.008 ms cpu,
       4->5->2 MB, 5 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)

- `@0.105s`: seconds since the program started (our t_s origin).
- `2%`: share of CPU used by GC since the program started.
- clock phases (wall time): stop-the-world sweep termination + concurrent
  mark and scan + stop-the-world mark termination. The pause is therefore
  the first plus the last phase; the middle one runs beside the program.
- cpu phases: sweep termination + mark assist/background/idle + mark
  termination, CPU time summed over Ps.
- `4->5->2 MB`: heap at GC start -> heap at GC end -> marked live heap.
  In gc_events, heap_before is the first and heap_after the third: Go frees
  by lazy sweeping, so the live heap is what remains after the collection
  (the middle number also holds what was allocated during marking and the
  garbage not yet swept). The runtime prints MB as bytes >> 20 (MiB,
  rounded down), so heap columns have 1 MiB resolution.
- Times are printed with two significant digits, truncated
  (runtime.fmtNSAsMS): a pause of 0.0399 ms shows as 0.039.

Lines are found anywhere in the text (a `docker logs --timestamps` prefix
is fine). The runtime writes a gctrace line in several write(2) calls, so
when stdout and stderr share one stream another line can land inside it
(seen in our fixtures):

    gc 89 @1.005s 0%: 0.034+0.10+0.001 ms clock, 0.069+0/0.054/chatter 1493
    0.10+0.002 ms cpu, 8->8->7 MB, 17 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)

Such a line is rejoined with the line after it (or the two after it, when
cut twice): the longest prefix that, followed by the continuation, makes
one whole gctrace line (column `repaired`). A line that cannot be rejoined
is kept if it is readable up to "MB goal", with `complete` False and the
fields after that (and so the cause) <NA>; otherwise it is dropped (the
last line of a program that exits while the runtime is still printing it
is lost this way). `docker logs` keeps the streams apart, so this only
happens when stdout and stderr are one file (2>&1).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from ._sources import PathLike, read_text
from .schema import gc_events_frame

MEBIBYTE = 1 << 20

_NUMBER = r"\d+(?:\.\d+)?"
_CORE = re.compile(
    rf"gc #?(?P<gc_id>\d+) @(?P<t_s>{_NUMBER})s (?P<cpu_percent>\d+)%: "
    rf"(?P<clock>{_NUMBER}(?:\+{_NUMBER})+) ms clock, "
    rf"(?P<cpu>{_NUMBER}(?:[+/]{_NUMBER})+) ms cpu, "
    r"(?P<heap_start>\d+)->(?P<heap_end>\d+)->(?P<heap_live>\d+) MB, "
    r"(?P<heap_goal>\d+) MB goal"
)
_TAIL = re.compile(
    r"(?:, (?P<stacks>\d+) MB stacks, (?P<globals>\d+) MB globals)?"
    r", (?P<procs>\d+) P(?P<forced> \(forced\))?\s*$"
)
_START = re.compile(r"gc #?\d+ @[0-9.]+s")
_ENDING = re.compile(r" P( \(forced\))?\s*$")  # the continuation must end the line
MAX_CUTS = 2  # another stream's lines inside one gctrace line that we undo
MAX_LINE_CHARACTERS = 400  # longer lines are not gctrace fragments (and would make the search slow)

DETAIL_COLUMNS = (
    "gc_id",
    "t_s",
    "cpu_percent",
    "pause_s",
    "clock_sweep_termination_s",
    "clock_mark_s",
    "clock_mark_termination_s",
    "cpu_sweep_termination_s",
    "cpu_mark_assist_s",
    "cpu_mark_background_s",
    "cpu_mark_idle_s",
    "cpu_mark_termination_s",
    "heap_start_bytes",
    "heap_end_bytes",
    "heap_live_bytes",
    "heap_goal_bytes",
    "stacks_bytes",
    "globals_bytes",
    "procs",
    "forced",
    "complete",
    "repaired",
)


def _cpu_phases_s(cpu: str) -> tuple[float, float, float, float, float]:
    # "a+b/c/d+e": sweep termination, mark assist/background/idle, mark termination.
    parts = cpu.split("+")
    mark = next((part for part in parts if "/" in part), None)
    assist = background = idle = np.nan
    if mark is not None:
        mark_parts = [float(value) / 1e3 for value in mark.split("/")]
        if len(mark_parts) == 3:
            assist, background, idle = mark_parts
    return float(parts[0]) / 1e3, assist, background, idle, float(parts[-1]) / 1e3


def _match(line: str) -> tuple[re.Match | None, re.Match | None]:
    core = _CORE.match(line)
    if core is None:
        return None, None
    return core, _TAIL.match(line, core.end())


def _rejoin(lines: list[str], max_cuts: int = MAX_CUTS) -> tuple[str, int] | None:
    """The whole gctrace line starting at lines[0] if other writes cut it, and the lines used.

    The line goes on at the start of the next line (the foreign text ended
    with its own newline), possibly cut again there: up to `max_cuts` cuts
    are tried (two cuts cost a search over pairs of cut points). Longer
    prefixes are tried first: the foreign text was appended after the true
    prefix, and a shorter cut can only match by gluing digits together. The
    last piece must end the way a gctrace line ends (" P", " P (forced)").
    """
    first = lines[0]
    if len(first) > MAX_LINE_CHARACTERS:
        return None
    if len(lines) > 1 and _ENDING.search(lines[1]):
        second = lines[1]
        for cut in range(len(first), 0, -1):
            candidate = first[:cut] + second
            if _match(candidate)[1] is not None:
                return candidate, 2
    if max_cuts >= 2 and len(lines) > 2 and len(lines[1]) <= MAX_LINE_CHARACTERS and _ENDING.search(lines[2]):
        second, third = lines[1], lines[2]
        for second_cut in range(len(second), -1, -1):
            rest = second[:second_cut] + third
            for cut in range(len(first), 0, -1):
                candidate = first[:cut] + rest
                if _match(candidate)[1] is not None:
                    return candidate, 3
    return None


def _row(core: re.Match, tail: re.Match | None, repaired: bool) -> dict:
    clock_ms = [float(value) for value in core["clock"].split("+")]
    cpu = _cpu_phases_s(core["cpu"])
    return {
        "gc_id": int(core["gc_id"]),
        "t_s": float(core["t_s"]),
        "cpu_percent": int(core["cpu_percent"]),
        # The first and last clock phases are the stop-the-world ones.
        "pause_s": (clock_ms[0] + clock_ms[-1]) / 1e3,
        "clock_sweep_termination_s": clock_ms[0] / 1e3,
        "clock_mark_s": sum(clock_ms[1:-1]) / 1e3,
        "clock_mark_termination_s": clock_ms[-1] / 1e3,
        "cpu_sweep_termination_s": cpu[0],
        "cpu_mark_assist_s": cpu[1],
        "cpu_mark_background_s": cpu[2],
        "cpu_mark_idle_s": cpu[3],
        "cpu_mark_termination_s": cpu[4],
        "heap_start_bytes": int(core["heap_start"]) * MEBIBYTE,
        "heap_end_bytes": int(core["heap_end"]) * MEBIBYTE,
        "heap_live_bytes": int(core["heap_live"]) * MEBIBYTE,
        "heap_goal_bytes": int(core["heap_goal"]) * MEBIBYTE,
        "stacks_bytes": int(tail["stacks"]) * MEBIBYTE if tail and tail["stacks"] else None,
        "globals_bytes": int(tail["globals"]) * MEBIBYTE if tail and tail["globals"] else None,
        "procs": int(tail["procs"]) if tail else None,
        "forced": (tail["forced"] is not None) if tail else None,
        "complete": tail is not None,
        "repaired": repaired,
    }


def parse_gctrace(text: str) -> pd.DataFrame:
    """Every gctrace line in `text` as one row with all its fields (DETAIL_COLUMNS).

    Times are seconds, sizes bytes (from MiB), `forced` and `complete`
    booleans (`forced` is <NA> when the line was cut before its end).
    """
    rows = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        line = lines[index]
        used = 1
        start = _START.search(line)
        if start is not None:
            line = line[start.start():]
        elif not line.startswith("g"):
            # A cut gctrace line still starts a line ("gc 3 @..." cut after
            # "gc "): the runtime's first write follows a newline.
            index += 1
            continue
        core, tail = _match(line)
        repaired = False
        if tail is None:
            # Only a line that starts like gctrace ("gc N @Ts") is worth the
            # two-cut search; any other line starting with "g" gets one try.
            cuts = MAX_CUTS if start is not None else 1
            joined = _rejoin([line, *lines[index + 1:index + 1 + MAX_CUTS]], cuts)
            if joined is not None:
                line, used = joined
                repaired = True
                core, tail = _match(line)
        if core is not None:
            rows.append(_row(core, tail, repaired))
        index += used
    frame = pd.DataFrame.from_records(rows, columns=list(DETAIL_COLUMNS))
    for column in ("gc_id", "cpu_percent", "heap_start_bytes", "heap_end_bytes", "heap_live_bytes",
                   "heap_goal_bytes", "stacks_bytes", "globals_bytes", "procs"):
        frame[column] = pd.array(frame[column].tolist(), dtype="Int64")
    frame["forced"] = pd.array(frame["forced"].tolist(), dtype="boolean")
    frame["complete"] = frame["complete"].astype(bool)
    frame["repaired"] = frame["repaired"].astype(bool)
    return frame


def read_gctrace(path: PathLike) -> pd.DataFrame:
    """parse_gctrace on a captured stderr (or container log) file."""
    return parse_gctrace(read_text(path))


def gctrace_gc_events(detail: pd.DataFrame, runtime: str = "go", trial: int | None = None) -> pd.DataFrame:
    """gc_events (schema.py) from parse_gctrace's table: one "cycle" row per line.

    t_s is seconds since the program started; pause_s the two stop-the-world
    phases; heap_before/after the start and live heaps; cause "forced"
    (runtime.GC, debug.FreeOSMemory) or "automatic" (the pacer or the 2-minute
    timer, which gctrace does not tell apart), <NA> for a cut line.
    """
    cause = np.where(detail["forced"].fillna(False), "forced", "automatic").astype(object)
    cause[detail["forced"].isna().to_numpy()] = None
    return gc_events_frame(
        {
            "runtime": [runtime] * len(detail),
            "trial": [trial] * len(detail),
            "t_s": detail["t_s"].tolist(),
            "pause_s": detail["pause_s"].tolist(),
            "heap_before_bytes": detail["heap_start_bytes"].tolist(),
            "heap_after_bytes": detail["heap_live_bytes"].tolist(),
            "cause": list(cause),
            "gc_id": detail["gc_id"].tolist(),
            "collector": ["go"] * len(detail),
            "kind": ["cycle"] * len(detail),
            "source": ["gctrace"] * len(detail),
        }
    )
