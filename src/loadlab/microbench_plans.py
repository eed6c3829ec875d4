"""The measurements that are one table (the microbenchmarks, and 00's Docker-or-cgroup windows), at three profiles.

Each function returns a `TablePlan`: the folder its runs go to, the harness
function that measures it with the arguments it is given, and what the
run's manifest records. `study.measure_or_load_table(plan, run_id)` measures
it (run_id None) or reads a run of it; a notebook calls one of these and
never sizes a measurement itself. The experiments (trials of servers under
load) are in `loadlab.plans`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loadlab.plans import ISOLATION, S2_IN_PROCESS, scale


@dataclass(frozen=True)
class TablePlan:
    """One measurement whose result is one table."""

    name: str  # its runs' folder, data/raw/<name>/<run-id>/; carries the scale, so scales never mix
    function: str  # the harness function that measures it, "<module>.<function>" under loadlab.harness
    arguments: dict = field(default_factory=dict)  # the function's keyword arguments
    parameters: dict = field(default_factory=dict)  # what the run's manifest records
    needs_engine: bool = True  # the function's first argument is the Docker client


def _sized(scale_name: str, smoke, quick, full):
    """The value for a scale: smoke proves the pipeline, quick is the reference run, full the long one."""
    return {"smoke": smoke, "quick": quick, "full": full}[scale(scale_name).name]


def isolation_windows(scale_name: str) -> TablePlan:
    """00: fresh go-nethttp instances under Docker and in a plain cgroup, consecutive windows each (`ISOLATION`)."""
    sizes = ISOLATION[scale(scale_name).name]
    return TablePlan(f"00-isolation-noise-{scale_name}", "isolation.compare_here", {"parameters": sizes}, sizes,
                     needs_engine=False)


def goroutine_spawn_cost(scale_name: str) -> TablePlan:
    """01: go's spawn and join of 10,000 and 100,000 goroutines, repeated in fresh containers."""
    repetitions = _sized(scale_name, 1, 5, 10)
    tasks = (10_000, 100_000)
    return TablePlan(f"01-microbench-spawn-{scale_name}", "microbench.spawn_cost",
                     {"conditions": ["go"], "tasks": tasks, "repetitions": repetitions},
                     {"tasks": list(tasks), "repetitions": repetitions})


def goroutine_spawn_benchmark(scale_name: str) -> TablePlan:
    """01: S1-spawn as the source ran it, a go test benchmark of 100,000 goroutines: `count` runs in each of
    `processes` fresh processes."""
    count, processes = _sized(scale_name, 1, 5, 10), _sized(scale_name, 1, 3, 5)
    return TablePlan(f"01-microbench-spawn-exit-{scale_name}", "microbench.spawn_benchmark",
                     {"tasks": 100_000, "count": count, "benchtime": "1s", "repetitions": processes},
                     {"tasks": 100_000, "count": count, "benchtime": "1s", "processes": processes})


def thread_context_switches(scale_name: str) -> TablePlan:
    """01: the context switches of 10,000 platform or virtual threads sleeping 1 ms (JDK 21)."""
    iterations = _sized(scale_name, 2, 5, 10)
    repetitions = _sized(scale_name, 1, 2, 5)
    return TablePlan(f"01-microbench-switches-{scale_name}", "microbench.context_switches",
                     {"jdks": ("21",), "iterations": iterations, "repetitions": repetitions},
                     {"tasks": 10_000, "sleep_ms": 1, "iterations": iterations})


# S2's two settings of parked goroutines (harness.scheduler_calls.parked_select).
PARKED_SELECT_GOROUTINES = (32, 127)


def parked_select(scale_name: str) -> TablePlan:
    """02: runtime.gopark's calls with 32 and 127 goroutines parked in select, counted with uprobes for `hold_s`."""
    repetitions, hold_s = _sized(scale_name, 1, 3, 5), _sized(scale_name, 2, 5, 10)
    return TablePlan(f"02-microbench-parked-select-{scale_name}", "scheduler_calls.parked_select",
                     {"goroutines": PARKED_SELECT_GOROUTINES, "repetitions": repetitions, "hold_s": hold_s},
                     {"goroutines": list(PARKED_SELECT_GOROUTINES), "repetitions": repetitions, "hold_s": hold_s})


def s2_in_process(scale_name: str) -> TablePlan:
    """02: S2 as S2 ran it, in one process (`S2_IN_PROCESS`)."""
    sizes = S2_IN_PROCESS[scale(scale_name).name]
    return TablePlan(f"02-s2-inprocess-{scale_name}", "microbench.s2_in_process_run", {"parameters": sizes}, sizes)


def sqrt_latch(scale_name: str) -> TablePlan:
    """05: S5's 10,000 threads, a square root each, a latch, on JDK 21 and 25: `repetitions` JVMs (JMH's forks:
    6 a mode in quick, the fewest an exact interval allows), `iterations` warm iterations each."""
    iterations, repetitions = _sized(scale_name, 3, 5, 10), _sized(scale_name, 1, 6, 10)
    return TablePlan(f"05-microbench-sqrt-latch-{scale_name}", "microbench.sqrt_latch",
                     {"jdks": ("21", "25"), "iterations": iterations, "warmup": 5, "repetitions": repetitions},
                     {"tasks": 10_000, "iterations": iterations, "repetitions": repetitions})


def sqrt_latch_fresh(scale_name: str) -> TablePlan:
    """05: the same program once per fresh JVM (JDK 21), no warm-up: what a first run costs."""
    runs = _sized(scale_name, 2, 10, 20)
    return TablePlan(f"05-microbench-sqrt-latch-fresh-{scale_name}", "microbench.sqrt_latch",
                     {"jdks": ("21",), "warmup": 0, "iterations": 1, "repetitions": runs},
                     {"tasks": 10_000, "iterations": 1, "warmup": 0, "repetitions": runs})


def parked_threads(scale_name: str) -> TablePlan:
    """05: 10,000 parked platform or virtual threads: what each holds (S5-stacks)."""
    repetitions = _sized(scale_name, 1, 2, 4)
    return TablePlan(f"05-microbench-parked-{scale_name}", "microbench.spawn_cost",
                     {"conditions": ["java-platform", "java-virtual"], "tasks": (10_000,), "repetitions": repetitions},
                     {"tasks": 10_000, "repetitions": repetitions})
