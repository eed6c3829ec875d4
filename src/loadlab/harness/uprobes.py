"""Count calls of functions in a running binary with Linux uprobes (`perf probe` + `perf stat`).

S2 states call rates of Go runtime functions (runtime.gopark, runtime.mcall,
runtime.findRunnable). A uprobe traps every call of the function in that
binary file, whichever process runs it, so counting system-wide (`perf stat
-a`) counts exactly the calls of the processes running that file: the
server's container or a microbenchmark's.

A binary inside a container is reached from the host through the image
layer that holds it (`host_binary`): uprobes attach to the inode the
process mapped. Go symbols are kept in our images (no -s -w), which is what
`perf probe` needs.

Each trap costs a few microseconds of the probed thread's time, so a counted
process runs slower than an uncounted one: counted trials are kept apart
from the trials that measure throughput (plans.py). Needs root, perf, and
tracefs with uprobe_events (mounted here when missing).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

TRACEFS = Path("/sys/kernel/tracing")
# Go renamed findrunnable to findRunnable in 1.19: both are tried.
GO_SCHEDULER_FUNCTIONS = ("runtime.gopark", "runtime.mcall", "runtime.findRunnable", "runtime.findrunnable")
_EVENT_NAME = re.compile(r"[^A-Za-z0-9_]")


class UprobesUnavailable(RuntimeError):
    """This host cannot count uprobes; the message says what is missing."""


@dataclass(frozen=True)
class Probes:
    """Uprobes added on one binary: {function: "group:event"}, and the functions the binary does not have."""

    binary: str
    group: str
    events: dict[str, str]
    missing: tuple[str, ...]


def available() -> str | None:
    """None when uprobes can be counted here, else what is missing (one line)."""
    if shutil.which("perf") is None:
        return "perf is not installed on this host (Debian: apt-get install linux-perf)"
    if os.geteuid() != 0:
        return "counting uprobes needs root (perf probe writes the kernel's uprobe_events)"
    try:
        _mount_tracefs()
    except UprobesUnavailable as error:
        return str(error)
    return None


def _mount_tracefs() -> None:
    if (TRACEFS / "uprobe_events").exists():
        return
    if TRACEFS.is_dir():
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], capture_output=True, timeout=30)
    if not (TRACEFS / "uprobe_events").exists():
        raise UprobesUnavailable(f"{TRACEFS}/uprobe_events is missing: the kernel has no uprobe events "
                                 "(CONFIG_UPROBE_EVENTS) or tracefs cannot be mounted here")


def event_name(function: str) -> str:
    """The perf event name for a function: runtime.findRunnable -> runtime_findRunnable."""
    return _EVENT_NAME.sub("_", function)


def add(binary: str | Path, functions: Iterable[str], group: str) -> Probes:
    """Add a uprobe on each function of `binary` that it has; the rest are listed as missing."""
    reason = available()
    if reason:
        raise UprobesUnavailable(reason)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", group):
        raise ValueError(f"group must be a C identifier, got {group!r}")
    events, missing = {}, []
    for function in functions:
        event = f"{group}:{event_name(function)}"
        # One function per call: perf probe adds nothing at all when any function of the call is missing.
        added = subprocess.run(["perf", "probe", "-q", "-x", str(binary), "-a", f"{event}={function}"],
                               capture_output=True, text=True, timeout=120)
        if added.returncode == 0:
            events[function] = event
        else:
            missing.append(function)
    return Probes(str(binary), group, events, tuple(missing))


def remove(probes: Probes) -> None:
    """Delete every uprobe of the group (quietly: a group with no probes left is fine)."""
    subprocess.run(["perf", "probe", "-q", "-d", f"{probes.group}:*"], capture_output=True, timeout=120)


def parse_stat_csv(text: str) -> dict[str, int]:
    """`perf stat -x,` output -> {event: count}. "<not counted>" and "<not supported>" read as 0."""
    counts: dict[str, int] = {}
    for line in text.splitlines():
        fields = line.split(",")
        if len(fields) < 3 or line.startswith("#"):
            continue
        value, event = fields[0].strip(), fields[2].strip()
        if ":" not in event:
            continue
        counts[event] = int(float(value)) if re.fullmatch(r"\d+(\.\d+)?", value) else 0
    return counts


def count(probes: Probes, seconds: float) -> dict:
    """Calls of each probed function in the next `seconds`, system-wide.

    Returns {"window_s", "calls": {function: calls}, "calls_per_s": {...}, "missing": [...]}.
    """
    if not probes.events:
        return {"window_s": 0.0, "calls": {}, "calls_per_s": {}, "missing": list(probes.missing)}
    started = time.monotonic()
    stat = subprocess.run(["perf", "stat", "-a", "-x,", "-e", ",".join(probes.events.values()), "--",
                           "sleep", f"{seconds:g}"], capture_output=True, text=True, timeout=seconds + 120)
    window_s = time.monotonic() - started
    if stat.returncode != 0:
        raise RuntimeError(f"perf stat failed: {(stat.stderr or stat.stdout).strip()[-400:]}")
    by_event = parse_stat_csv(stat.stderr)
    calls = {function: by_event.get(event, 0) for function, event in probes.events.items()}
    return {"window_s": window_s, "calls": calls, "calls_per_s": {f: c / window_s for f, c in calls.items()},
            "missing": list(probes.missing)}


def _root_layers(pid: int) -> list[str]:
    """The directories an overlay root of process `pid` is made of (upper first), from its mountinfo."""
    for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines():
        fields = line.split(" - ", 1)
        if len(fields) != 2 or fields[0].split()[4] != "/":
            continue
        kind, _, options = (fields[1].split() + ["", "", ""])[:3]
        if kind != "overlay":
            return []
        layers = []
        for option in options.split(","):
            key, _, value = option.partition("=")
            if key == "upperdir":
                layers.insert(0, value)
            elif key == "lowerdir":
                layers.extend(value.split(":"))
        return layers
    return []


def host_binary(pid: int) -> Path:
    """The host path of the file process `pid` executes, for `perf probe -x`.

    perf resolves the path it is given (realpath), so /proc/PID/root/... of a
    containerized process would resolve to the host's own /usr/...; and a
    uprobe must sit on the inode the process mapped, which for an overlay
    root is the file in the image layer that holds it. So the layers of the
    process's root mount are searched for the file whose inode the process
    runs (the inode in /proc/PID/maps).
    """
    inside = os.readlink(f"/proc/{pid}/exe")
    inode = os.stat(f"/proc/{pid}/exe").st_ino
    candidates = [inside] + [str(Path(layer) / inside.lstrip("/")) for layer in _root_layers(pid)]
    for candidate in candidates:
        try:
            if os.stat(candidate).st_ino == inode:
                return Path(candidate)
        except OSError:
            continue
    raise UprobesUnavailable(f"the file process {pid} runs ({inside}, inode {inode}) is not reachable from this host's "
                             "file system (not an overlay root, or the engine runs elsewhere)")
