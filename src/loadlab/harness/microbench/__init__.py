"""Spawn-cost microbenchmarks: what a goroutine, a platform thread and a virtual thread cost.

The claims S1-spawn, S1-vthread-switches, S4-stack (Go's half), S5-time,
S5-memory and S5-stack are about single tasks, not servers; the programs in
`microbench-programs/` measure them directly (microbench-programs/README.md says what each
field means). One image per JDK holds both programs:

    spawn-go   --tasks N [--iterations I]                         (goroutines)
    spawn-java --mode platform|virtual --bench sleepers|sqrt_latch|switches
               --tasks N [--warmup W] [--iterations I] [--sleep-ms M]

Each prints one JSON line per measurement. `run()` runs a program in fresh,
hardened containers (one per repetition, started by
`loadlab.harness.container` with the servers' hardening: labelled, pinned,
memory-limited without swap, read-only root, no capabilities, non-root;
unlike a server, with no network at all; always removed) and returns the lines as a DataFrame; `parse_output()` is the pure parser and
`tidy()` adds per-task columns. `spawn_cost()`, `sqrt_latch()` and
`context_switches()` run the claims' experiments.

Units are in column names: *_s seconds, *_ms milliseconds, *_bytes bytes;
counts have none. Wall times (spawn_s, elapsed_s) on a core shared with
other work include that work's turns; the *_cpu_s columns (process CPU time
from getrusage) do not.
"""

from .experiments import (S2_DESIGNS, context_switches, s2_in_process, s2_in_process_run, spawn_benchmark,
                          spawn_cost, sqrt_latch)
from .output import REQUIRED_FIELDS, MicrobenchOutputError, parse_lines, parse_output, tidy
from .programs import (BENCHES, CONDITIONS, DEFAULT_MEMORY_LIMIT_BYTES, DEFAULT_TIMEOUT_S, IMAGE_REPOSITORY,
                       JAVA_SERVER, MAX_TASKS, MICROBENCH_DIR, MODELS, ROLE, USER, build, condition_command,
                       go_command, image_tag, java_command, jdk_build_args)
from .running import _output, run

__all__ = [
    "BENCHES", "CONDITIONS", "DEFAULT_MEMORY_LIMIT_BYTES", "DEFAULT_TIMEOUT_S", "IMAGE_REPOSITORY", "JAVA_SERVER",
    "MAX_TASKS", "MICROBENCH_DIR", "MODELS", "REQUIRED_FIELDS", "ROLE", "S2_DESIGNS", "USER",
    "MicrobenchOutputError", "build", "condition_command", "context_switches", "go_command", "image_tag",
    "java_command", "jdk_build_args", "parse_lines", "parse_output", "run", "s2_in_process", "s2_in_process_run",
    "spawn_benchmark", "spawn_cost", "sqrt_latch", "tidy",
]
