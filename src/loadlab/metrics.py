"""Metrics: every quantity a trial is judged or shown on, by name: formula, unit, label, direction, how measured.

A metric is either recorded (a column the trials table carries as the harness
wrote it: `throughput_rps`, `latency_p99_s`, `memory_peak_bytes`) or derived
from recorded columns by one formula (`server_cpu_pct` = 100 x
`server_cpu_seconds` / `duration_s`). The trials table derives every metric
whose inputs it has when it is loaded (`tables.load_run` calls `with_derived`),
so the notebooks, judgements, margins, pages and plots all read the same
columns, computed once, here.

Adding a metric is one entry in `REGISTRY`. Its unit is a symbol of
`loadlab.units` (which prints and draws it), and its name carries the unit as
every column does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from loadlab import units

HIGHER, LOWER = "higher", "lower"


@dataclass(frozen=True)
class Metric:
    """One quantity: `formula` over a trials frame's `inputs` columns (None: the column is recorded as is), `unit`
    (a `loadlab.units` symbol), `label` (a table column's or an axis's words, unit as drawn), which way is `better`
    (HIGHER, LOWER or None where neither is a cost) and a one-line `description` of how it is measured."""

    name: str
    unit: str
    label: str
    better: str | None
    description: str
    inputs: tuple[str, ...] = ()
    formula: Callable[[pd.DataFrame], pd.Series] | None = None

    @property
    def derived(self) -> bool:
        return self.formula is not None


def _number(trials: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_numeric(trials[column], errors="coerce")


def _served(trials: pd.DataFrame) -> pd.Series:
    """Requests answered; a trial that answered none has no per-request value (NaN, not infinity)."""
    requests = _number(trials, "requests")
    return requests.where(requests > 0)


def _share_pct(cpu_column: str, of_allowance: bool) -> Callable[[pd.DataFrame], pd.Series]:
    """CPU seconds over the window's seconds (times the cores allowed), in per cent; 100 x first, as the
    verdicts recorded before this module computed it, so that their numbers rebuild to the last bit."""
    def share(trials: pd.DataFrame) -> pd.Series:
        seconds = _number(trials, "duration_s")
        if of_allowance:
            seconds = seconds * _number(trials, "cpu_allowance_cores")
        return units.PERCENT * _number(trials, cpu_column) / seconds
    return share


def _in_mib(column: str) -> Callable[[pd.DataFrame], pd.Series]:
    return lambda trials: units.bytes_to_mib(_number(trials, column))


def _in_ms(column: str) -> Callable[[pd.DataFrame], pd.Series]:
    return lambda trials: units.seconds_to_ms(_number(trials, column))


_LATENCY = ("over the measured window: closed loop, wrk's own percentile (stalls hidden); open loop, the nearest "
            "rank over every request's latency from its intended send time (loadlab.stats.latency)")
_METRICS = (
    # Recorded by the harness, one value per trial.
    Metric("throughput_rps", "req/s", "throughput (req/s)", HIGHER,
           "requests answered per second over the measured window, as the loadgen counted them"),
    Metric("requests", "", "requests answered", None, "requests answered in the measured window"),
    Metric("errors_total", "", "errors", LOWER, "connect, read, write, timeout and status errors in the window"),
    *(Metric(f"latency_{p}_s", "s", f"latency {p.replace('_', '.')} (s)", LOWER,
             f"each trial's {p.replace('_', '.')} latency {_LATENCY}")
      for p in ("p50", "p90", "p99", "p99_9", "p99_99")),
    Metric("latency_mean_s", "s", "latency mean (s)", LOWER, f"each trial's mean latency {_LATENCY}"),
    Metric("latency_max_s", "s", "latency max (s)", LOWER, f"each trial's slowest request {_LATENCY}"),
    Metric("memory_peak_bytes", "B", "peak memory in use (MiB)", LOWER,
           "the server cgroup's memory in use, sampled at 4 Hz: its peak over the window"),
    Metric("memory_mean_bytes", "B", "cgroup memory in use, mean (MiB)", LOWER,
           "the server cgroup's memory in use, sampled at 4 Hz: its mean over the window"),
    Metric("process_rss_mean_bytes", "B", "process RSS, mean (MiB)", LOWER,
           "VmRSS summed over the server's processes, sampled at 4 Hz: its mean over the window"),
    Metric("process_rss_shmem_mean_bytes", "B", "RSS's shared-memory part, mean (MiB)", None,
           "RssShmem summed over the server's processes (a page mapped several times counts once per mapping)"),
    Metric("server_cpu_seconds", "s", "server CPU time (s)", LOWER,
           "the server cgroup's CPU time (user + system) over the measured window"),
    Metric("server_cpu_user_seconds", "s", "server user-mode CPU time (s)", LOWER,
           "the server cgroup's user-mode CPU time over the measured window"),
    Metric("tasks_peak", "", "peak OS threads (pids cgroup)", LOWER,
           "the server cgroup's task count (OS threads), sampled at 4 Hz: its peak over the window"),
    Metric("loadgen_cpu_utilization", "", "loadgen CPU (share of its cores)", None,
           "the loadgen's busy share of its cores over the window (at 0.95 or more, the trial is saturated)"),
    Metric("connections_held_median", "", "connections held (kernel count)", None,
           "the established TCP connections the kernel counted on the server's port, once a second: their median"),
    Metric("goroutines_peak", "", "peak goroutines", LOWER,
           "Go's goroutine count from expvar over the window: its peak (judgements.s2.with_runtime_metrics)"),
    Metric("gc_pause_total_s", "s", "GC pause in the window, total (s)", LOWER,
           "the stop-the-world GC pauses inside the measured window, summed"),
    # Derived from the recorded columns, computed once when the trials table is loaded.
    Metric("server_cpu_pct", "%", "server CPU (% of one core)", LOWER,
           "server CPU time over the window's length, in per cent of one core",
           ("server_cpu_seconds", "duration_s"), _share_pct("server_cpu_seconds", of_allowance=False)),
    Metric("server_cpu_pct_of_allowance", "%", "server CPU (% of its allowance)", LOWER,
           "server CPU time over the window's length, in per cent of the cores (or quota) the server was given",
           ("server_cpu_seconds", "duration_s", "cpu_allowance_cores"),
           _share_pct("server_cpu_seconds", of_allowance=True)),
    Metric("server_cpu_user_pct_of_allowance", "%", "server user-mode CPU (% of its allowance)", LOWER,
           "user-mode CPU time over the window's length, in per cent of the cores (or quota) the server was given",
           ("server_cpu_user_seconds", "duration_s", "cpu_allowance_cores"),
           _share_pct("server_cpu_user_seconds", of_allowance=True)),
    Metric("cpu_us_per_request", "\N{MICRO SIGN}s", "server CPU per request (\N{MICRO SIGN}s)", LOWER,
           "server CPU time over the window divided by the requests answered (none answered: no value)",
           ("server_cpu_seconds", "requests"),
           lambda trials: units.seconds_to_us(_number(trials, "server_cpu_seconds")) / _served(trials)),
    Metric("memory_peak_mib", "MiB", "peak memory in use (MiB)", LOWER,
           "memory_peak_bytes in MiB", ("memory_peak_bytes",), _in_mib("memory_peak_bytes")),
    Metric("cgroup_memory_mib", "MiB", "cgroup memory in use (MiB)", LOWER,
           "memory_mean_bytes (the cgroup's mean memory in use) in MiB", ("memory_mean_bytes",),
           _in_mib("memory_mean_bytes")),
    Metric("process_rss_mib", "MiB", "process RSS (MiB)", LOWER,
           "process_rss_mean_bytes (mean VmRSS over the window, summed over the server's processes) in MiB",
           ("process_rss_mean_bytes",), _in_mib("process_rss_mean_bytes")),
    Metric("rss_shared_mib", "MiB", "RSS's shared-memory part (MiB)", None,
           "process_rss_shmem_mean_bytes in MiB", ("process_rss_shmem_mean_bytes",),
           _in_mib("process_rss_shmem_mean_bytes")),
    *(Metric(f"latency_{p}_ms", "ms", f"latency {p} (ms)", LOWER, f"latency_{p}_s in milliseconds",
             (f"latency_{p}_s",), _in_ms(f"latency_{p}_s")) for p in ("p50", "p99", "mean")),
    Metric("error_rate_pct", "%", "errors (% of requests)", LOWER,
           "errors over requests answered, in per cent (a trial that answered none counts as one request)",
           ("errors_total", "requests"),
           lambda trials: units.PERCENT * _number(trials, "errors_total") / _number(trials, "requests").clip(lower=1)),
)
REGISTRY: dict[str, Metric] = {m.name: m for m in _METRICS}
# Names a metric had before, read as the metric (no committed data carries them; code and notes may).
ALIASES = {"server_cpu_us_per_request": "cpu_us_per_request"}


def canonical(name: str) -> str:
    """The registry's name for `name` (an old alias maps to its metric); any other name is returned as is."""
    return ALIASES.get(name, name)


def metric(name: str) -> Metric:
    """The registered metric `name` (or its old alias); KeyError naming the known metrics otherwise."""
    try:
        return REGISTRY[canonical(name)]
    except KeyError:
        raise KeyError(f"no metric named {name!r} in loadlab.metrics (known: {', '.join(REGISTRY)})") from None


def label(name: str) -> str:
    """A table column's or axis's words for `name`: the metric's label, or one built from the name's unit suffix."""
    known = REGISTRY.get(canonical(name))
    return known.label if known else units.axis_text(name)


def unit(name: str) -> str:
    """The unit symbol of `name`: the metric's, or the one its suffix implies."""
    known = REGISTRY.get(canonical(name))
    return known.unit if known else units.unit_of(name)


def better(name: str) -> str | None:
    """HIGHER, LOWER or None (unknown, or neither direction is a cost)."""
    known = REGISTRY.get(canonical(name))
    return known.better if known else None


def derive(name: str, trials: pd.DataFrame) -> pd.Series:
    """The derived metric `name` over `trials` (KeyError naming a missing input column)."""
    entry = metric(name)
    if entry.formula is None:
        return trials[entry.name]
    missing = [column for column in entry.inputs if column not in trials]
    if missing:
        raise KeyError(f"{entry.name} needs column(s) {', '.join(missing)}, which the trials do not have")
    return entry.formula(trials)


def with_derived(trials: pd.DataFrame) -> pd.DataFrame:
    """`trials` with every derived metric whose inputs it has, never overwriting a column it already has."""
    added = {m.name: m.formula(trials) for m in _METRICS
             if m.formula is not None and m.name not in trials and all(c in trials for c in m.inputs)}
    return trials.assign(**added) if added else trials
