"""The harness's own CPU priority during a measured window (issue 28).

An open-loop generator keeps its schedule only if it gets its core when a
request falls due: any other task holding that core delays every request due
meanwhile by the rest of its slice, and the generator counts them late by its
own doing ("behind its schedule"). `perf sched` on a behind window's core found
the harness's own process there in slices up to 8.7 ms (its sampler, its
once-a-second count of the connections held, the Docker client waiting on the
loadgen), beside the VM's kdamond (up to 12 ms), which is not ours to move.

"idle" runs every harness thread under SCHED_IDLE for the window: the kernel
gives such a thread a core only when no normal task wants it, and a waking
normal task (the generator, the server) preempts it at once. The window's
readings are taken all the same, later by at most the time the cores were
full; each keeps its own timestamp. Threads started inside the window (the
sampler, the connection counter) inherit the policy from the thread that
starts them. Processes the harness does not own (dockerd, containerd, the
loadgen and the server in their containers) keep theirs.

"normal" changes nothing: every trial measured before this setting existed
ran so.
"""

from __future__ import annotations

import contextlib
import os
import resource
from collections.abc import Iterator

from loadlab.config import HARNESS_PRIORITIES


def can_leave_idle() -> bool:
    """Whether this process may put its threads back from SCHED_IDLE: root, or an RLIMIT_NICE that covers its nice
    value (Linux lets anyone lower a thread's policy to SCHED_IDLE, not everyone raise it again)."""
    if os.geteuid() == 0:
        return True
    return resource.getrlimit(resource.RLIMIT_NICE)[0] >= 20 - os.nice(0)


def _thread_ids() -> list[int]:
    """This process's threads (Linux: one task id each under /proc/self/task)."""
    return sorted(int(name) for name in os.listdir("/proc/self/task"))


def _set_policy(thread_id: int, policy: int, priority: int = 0) -> None:
    """Set one thread's policy; a thread that has ended meanwhile needs none."""
    with contextlib.suppress(ProcessLookupError):
        os.sched_setscheduler(thread_id, policy, os.sched_param(priority))


@contextlib.contextmanager
def harness_priority(priority: str) -> Iterator[list[int]]:
    """Run this process's threads at `priority` (one of HARNESS_PRIORITIES) inside the block.

    Yields the ids of the threads it moved. On leaving, each thread gets back the
    policy it had; a thread started inside the block gets the policy of the
    thread that entered it.
    """
    if priority not in HARNESS_PRIORITIES:
        raise ValueError(f"harness priority {priority!r}: one of {', '.join(HARNESS_PRIORITIES)}")
    if priority == "normal":
        yield []
        return
    if not can_leave_idle():
        # Checked first: a harness stuck idle after its window would be starved in every window that followed.
        raise PermissionError(f"harness priority {priority!r} needs root or an RLIMIT_NICE of at least "
                              f"{20 - os.nice(0)} to put its threads back afterwards")
    entering = (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)
    before: dict[int, tuple[int, int]] = {}
    for thread_id in _thread_ids():
        try:
            before[thread_id] = (os.sched_getscheduler(thread_id), os.sched_getparam(thread_id).sched_priority)
        except ProcessLookupError:
            continue
        _set_policy(thread_id, os.SCHED_IDLE)
    try:
        yield sorted(before)
    finally:
        for thread_id in _thread_ids():
            policy, level = before.get(thread_id, entering)
            _set_policy(thread_id, policy, level)
