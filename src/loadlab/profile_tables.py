"""A trial's profile captures -> the tidy tables of CPU stacks, functions, Go GC cycles and counted calls.

tables.py calls these for every trial and stores the results with the
run's other tables; notebooks read those, never the raw files.

- cpu_stacks: one row per distinct stack per trial (trial, source, stack,
  samples). Sources: Go's CPU profile (pprof, cpu.pb.gz: its "samples"
  count, 100 Hz), JFR's jdk.ExecutionSample events (jfr-events.jfr.gz, earlier jfr-samples.json.xz:
  Java frames of threads running Java code, 20 ms period by default), `perf
  record` at 99 Hz (perf-script.txt.gz: every thread of the server's
  processes, native and kernel frames) and py-spy at 99 Hz (py-spy-raw.txt);
  JFR's samples cut to the measured window (the others record only it).
  A trial with several keeps each source apart.
- cpu_functions: per trial, source and function: samples with the function
  on top (samples_self) and anywhere in the stack (samples_total, counted
  once per sample), and both as a share of the trial's samples
  (self_pct, total_pct, per cent).
- gc_cycles: Go gctrace's whole line per cycle (loadlab.profiles.gctrace's
  detail columns: mark CPU by phase, marked live heap, ...).
- probe_counts: calls of each uprobed function over the window
  (uprobe-counts.json: trial, function, calls, window_s, calls_per_s).
- blocking_events: JFR's lock, park and sleep events (jfr-locks.jfr.gz or .json.xz:
  jdk.ThreadPark, jdk.JavaMonitorEnter, jdk.ThreadSleep, recorded when 10 ms
  or longer): trial, type, start_unix_s, duration_s, stack (folded, root
  first); tables.py adds t_window_s and in_window.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from loadlab import profiles
from loadlab.profiles.folded import FRAME_SEPARATOR, clean_frame
from loadlab.profiles.jfr import duration_s as jfr_duration_s

CPU_STACK_COLUMNS = ("trial", "source", "stack", "samples")
CPU_FUNCTION_COLUMNS = ("trial", "source", "function", "samples_self", "samples_total", "trial_samples",
                        "self_pct", "total_pct")
PROBE_COLUMNS = ("trial", "function", "calls", "window_s", "calls_per_s")
BLOCKING_COLUMNS = ("trial", "type", "start_unix_s", "duration_s", "stack")


def _start_unix_s(events: list[dict]) -> pd.Series:
    """Each JFR event's startTime (ISO-8601 text) as Unix seconds."""
    instants = pd.to_datetime(pd.Series([event["values"].get("startTime") for event in events], dtype="object"),
                              format="ISO8601", utc=True)
    return instants.dt.as_unit("ns").astype("int64") / 1e9


def _jfr_window_stacks(directory: Path, window_unix_s: tuple[float, float] | None) -> pd.DataFrame:
    # The recording runs from the JVM's start: the contract check and the warm-up are in it too.
    return profiles.captured_jfr_stacks(directory, window_unix_s)


def jfr_runtime_tables(directory: Path, trial: int, origin: float | None) -> tuple[pd.DataFrame, ...] | None:
    """(gc_events cycles, gc_events pauses, thread_counts, pinned) from a trial's JFR runtime events, or None when
    the trial has none. origin: Unix seconds that t_s counts from (the measured window's start), or None for
    the earliest event's. tables.py adds the window columns."""
    events = profiles.read_captured_jfr(directory, "runtime")
    if events is None:
        return None
    return (profiles.jfr_gc_events(events, "java", trial, origin=origin),
            profiles.jfr_gc_pauses(events, "java", trial, origin=origin),
            profiles.jfr_thread_counts(events, "java", trial, origin=origin),
            profiles.jfr_pinned(events, "java", trial, origin=origin))


def _file(name: str):
    return lambda directory: Path(directory) / name if (Path(directory) / name).exists() else None


# (source, where(directory) -> path or None, reader(path, window)): the CPU profiles a trial's profiles/
# folder can hold. pprof, perf and py-spy record the window only; JFR's samples are cut to it.
_CPU_SOURCES = (
    ("pprof", _file("cpu.pb.gz"), lambda path, window: profiles.read_pprof_stacks(path, "samples")),
    ("jfr", lambda directory: profiles.captured_jfr_file(directory, "samples"),
     lambda path, window: _jfr_window_stacks(path.parent, window)),
    ("perf", _file("perf-script.txt.gz"), lambda path, window: profiles.read_perf_script(path)),
    ("py-spy", _file("py-spy-raw.txt"), lambda path, window: profiles.read_pyspy_raw(path)),
)


def cpu_stacks(directory: Path, trial: int, window_unix_s: tuple[float, float] | None = None) -> pd.DataFrame:
    """Every CPU profile in a trial's profiles/ folder as (trial, source, stack, samples) rows.

    window_unix_s: (start, end) of the measured window, Unix seconds; JFR
    samples outside it are left out (None keeps them all).
    """
    frames = []
    for source, where, read in _CPU_SOURCES:
        path = where(directory)
        if path is not None:
            stacks = read(path, window_unix_s)
            frames.append(pd.DataFrame({"trial": trial, "source": source, "stack": stacks["stack"],
                                        "samples": stacks["count"].astype("int64")}))
    return pd.concat(frames, ignore_index=True) if frames else empty_cpu_stacks()


def empty_cpu_stacks() -> pd.DataFrame:
    return pd.DataFrame({"trial": pd.Series(dtype="int64"), "source": pd.Series(dtype="string"),
                         "stack": pd.Series(dtype="string"), "samples": pd.Series(dtype="int64")})


def function_samples(stacks: pd.DataFrame) -> pd.DataFrame:
    """(function, samples_self, samples_total) of one stacks table (columns stack, samples)."""
    self_counts: dict[str, int] = {}
    total_counts: dict[str, int] = {}
    for stack, samples in zip(stacks["stack"], stacks["samples"]):
        frames = stack.split(FRAME_SEPARATOR)
        self_counts[frames[-1]] = self_counts.get(frames[-1], 0) + int(samples)
        for frame in set(frames):
            total_counts[frame] = total_counts.get(frame, 0) + int(samples)
    functions = sorted(total_counts)
    return pd.DataFrame({"function": functions, "samples_self": [self_counts.get(f, 0) for f in functions],
                         "samples_total": [total_counts[f] for f in functions]})


def cpu_functions(cpu_stack_rows: pd.DataFrame) -> pd.DataFrame:
    """cpu_functions (module docstring) from cpu_stacks rows of any number of trials."""
    frames = []
    for (trial, source), stacks in cpu_stack_rows.groupby(["trial", "source"], sort=True):
        total = int(stacks["samples"].sum())
        if total == 0:
            continue
        table = function_samples(stacks)
        frames.append(table.assign(trial=trial, source=source, trial_samples=total,
                                   self_pct=100 * table["samples_self"] / total,
                                   total_pct=100 * table["samples_total"] / total))
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype="float64") for c in CPU_FUNCTION_COLUMNS})
    return pd.concat(frames, ignore_index=True)[list(CPU_FUNCTION_COLUMNS)]


def gc_cycles(directory: Path, trial: int) -> pd.DataFrame | None:
    """gctrace's detail columns with `trial`, or None when the trial has no gctrace."""
    path = Path(directory) / "gctrace.txt"
    if not path.exists():
        return None
    return profiles.read_gctrace(path).assign(trial=trial)


def probe_counts(directory: Path, trial: int) -> pd.DataFrame | None:
    """uprobe-counts.json as rows, or None when the trial counted nothing."""
    path = Path(directory) / "uprobe-counts.json"
    if not path.exists():
        return None
    counted = json.loads(path.read_text())
    window_s = float(counted.get("window_s") or 0.0)
    return pd.DataFrame([{"trial": trial, "function": function, "calls": int(calls), "window_s": window_s,
                          "calls_per_s": int(calls) / window_s if window_s > 0 else float("nan")}
                         for function, calls in (counted.get("calls") or {}).items()], columns=list(PROBE_COLUMNS))


def blocking_events(directory: Path, trial: int) -> pd.DataFrame | None:
    """The trial's JFR lock, park and sleep events as rows, or None when the trial did not capture them."""
    events = profiles.read_captured_jfr(directory, "locks")
    if events is None:
        return None
    rows = []
    for event in events:
        values = event["values"]
        trace = values.get("stackTrace") or {}
        frames = [clean_frame(frame["method"]["type"]["name"].replace("/", ".") + "." + frame["method"]["name"])
                  for frame in reversed(trace.get("frames") or [])]
        rows.append({"trial": trial, "type": event["type"], "start_unix_s": values.get("startTime"),
                     "duration_s": jfr_duration_s(values.get("duration")), "stack": FRAME_SEPARATOR.join(frames)})
    table = pd.DataFrame(rows, columns=list(BLOCKING_COLUMNS))
    # JFR prints instants as ISO-8601 text with an offset.
    table["start_unix_s"] = _start_unix_s([{"values": {"startTime": t}} for t in table["start_unix_s"]]).to_numpy() \
        if len(table) else pd.Series(dtype=float)
    return table
