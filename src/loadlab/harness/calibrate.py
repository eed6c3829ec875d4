"""Calibrate the contract's /cpu loop against time on this machine.

S2's requests do "10 ms of CPU work"; the contract's unit of work is a
round of the /cpu hash loop, whose cost depends on the runtime and the CPU.
This measures it on a fresh, pinned server: the median time of /cpu?n=N
minus that of /cpu?n=0 (the HTTP round trip), over several repetitions.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from loadlab.contract.verify import request
from loadlab.harness.session import ServerSession


@dataclass(frozen=True)
class CpuCalibration:
    """Seconds per /cpu round on one server, and the rounds that take `target_s`."""

    server: str
    seconds_per_round: float
    rounds_for_target: int
    target_s: float
    samples_s: tuple[float, ...]


def calibrate_cpu(server: str = "go-nethttp", target_s: float = 0.010, rounds: int = 2_000_000,
                  repetitions: int = 9, cpuset: str = "1") -> CpuCalibration:
    with ServerSession.start(server=server, cpuset=cpuset) as running:
        def timed(n: int) -> float:
            started = time.perf_counter()
            response = request(running.host, running.port, "GET", f"/cpu?n={n}")
            elapsed = time.perf_counter() - started
            if response.status != 200:
                raise RuntimeError(f"/cpu?n={n} answered {response.status}")
            return elapsed

        timed(rounds)  # first call: page faults, lazy initialisation
        empty = statistics.median(timed(0) for _ in range(repetitions))
        samples = tuple(timed(rounds) - empty for _ in range(repetitions))
    per_round = statistics.median(samples) / rounds
    return CpuCalibration(server, per_round, max(1, round(target_s / per_round)), target_s, samples)
