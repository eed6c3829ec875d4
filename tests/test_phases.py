"""The phase clock a trial's trial.json keeps (`phases_s`): real time.sleep, real monotonic clock."""

import time

import pytest

from loadlab.harness.phases import PhaseClock


def test_phases_are_timed_in_order_added_up_and_totalled():
    clock = PhaseClock()
    with clock.phase("health_wait"):
        time.sleep(0.05)
    with clock.phase("verify"):
        pass
    with clock.phase("health_wait"):  # a phase entered twice adds up
        time.sleep(0.05)
    record = clock.record()
    assert list(record) == ["health_wait", "verify", "total"]
    assert 0.1 <= record["health_wait"] < 0.3 and record["verify"] < 0.05
    assert record["total"] == pytest.approx(record["health_wait"] + record["verify"], abs=0.002)


def test_a_phase_that_raises_is_still_timed():
    clock = PhaseClock()
    with pytest.raises(RuntimeError), clock.phase("server_create_start"):
        time.sleep(0.02)
        raise RuntimeError("the engine refused")
    assert clock.seconds["server_create_start"] >= 0.02
