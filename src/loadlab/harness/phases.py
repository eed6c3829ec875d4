"""Where a trial's wall time goes: seconds per phase, kept in trial.json as `phases_s`.

Only the window and the warm-up are measurement; everything else around a
trial (starting containers, waiting for health, the contract check, dumping
profiles, removing containers) is overhead that the run's wall time pays once
per trial, hundreds of times per `make reproduce`. The phases say which part
to cut (benchmarks/trial_phases.py reads them) and are provenance: a
trial whose health wait took 40 s says so.
"""

from __future__ import annotations

import contextlib
import time


class PhaseClock:
    """Wall seconds (monotonic clock) per named phase; a phase entered twice adds up."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    @contextlib.contextmanager
    def phase(self, name: str):
        """Time the block as phase `name`, whether it returns or raises."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.add(name, time.monotonic() - started)

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = round(self.seconds.get(name, 0.0) + seconds, 3)

    def record(self) -> dict[str, float]:
        """The phases in the order they first ran, and `total` (their sum), seconds to the millisecond."""
        return {**self.seconds, "total": round(sum(self.seconds.values()), 3)}
