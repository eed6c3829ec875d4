"""harness.priority: the harness's threads under SCHED_IDLE during a window, and back after (issue 28).

Real system calls on this process's own threads; no container needed."""

from __future__ import annotations

import os
import threading

import pytest

from loadlab.config import TrialConfig
from loadlab.errors import ParameterError
from loadlab.harness.priority import can_leave_idle, harness_priority

needs_rights = pytest.mark.skipif(not can_leave_idle(), reason="SCHED_IDLE can be left only by root or with an "
                                  "RLIMIT_NICE covering this process's nice value")


def _policy(thread_id: int = 0) -> int:
    return os.sched_getscheduler(thread_id)


@needs_rights
def test_idle_moves_every_thread_of_the_process_and_restores_each():
    ready, leave = threading.Event(), threading.Event()
    ids: list[int] = []

    def park():
        ids.append(threading.get_native_id())
        ready.set()
        leave.wait(10)

    waiting = threading.Thread(target=park)
    waiting.start()
    ready.wait(10)
    before = _policy(0), _policy(ids[0])
    try:
        with harness_priority("idle") as moved:
            assert os.getpid() in moved and ids[0] in moved
            assert _policy(0) == os.SCHED_IDLE
            assert _policy(ids[0]) == os.SCHED_IDLE
        assert (_policy(0), _policy(ids[0])) == before
    finally:
        leave.set()
        waiting.join()


@needs_rights
def test_a_thread_started_inside_runs_idle_and_leaves_with_the_entering_threads_policy():
    seen: list[int] = []
    ids: list[int] = []
    leave = threading.Event()
    started = threading.Event()

    def worker():
        ids.append(threading.get_native_id())
        seen.append(_policy(0))
        started.set()
        leave.wait(10)

    entering = _policy(0)
    with harness_priority("idle"):
        sampler_like = threading.Thread(target=worker)
        sampler_like.start()
        started.wait(10)
    try:
        assert seen == [os.SCHED_IDLE]  # inherited from the thread that started it
        assert _policy(ids[0]) == entering
    finally:
        leave.set()
        sampler_like.join()


def test_normal_changes_nothing_and_an_unknown_priority_is_refused():
    before = _policy(0)
    with harness_priority("normal") as moved:
        assert moved == [] and _policy(0) == before
    with pytest.raises(ValueError, match="idle"):
        with harness_priority("realtime"):
            pass


def test_the_trial_config_names_the_field_and_what_is_allowed():
    with pytest.raises(ParameterError) as raised:
        TrialConfig(server="go-nethttp", harness_priority="low").validate()
    assert "harness_priority" in str(raised.value) and "idle" in str(raised.value)
