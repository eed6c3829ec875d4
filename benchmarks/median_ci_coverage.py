"""Coverage of each median-interval method on the shapes this machine's trials take (a benchmark, not a test).

Shapes: log-normal (sigma 1, skewed); two-level throughput as measured here,
each trial at ~58k or ~65k req/s with a 1.5% spread, 50/50 and 70/30. The
true median is known for each shape. Prints one row per (shape, n) and one
column per method of loadlab.stats.MEDIAN_CI_METHODS.

    .venv/bin/python benchmarks/median_ci_coverage.py [--simulations 4000] [--seed 0]
"""

from __future__ import annotations

import argparse

import numpy as np
import scipy.stats

from loadlab.stats import MEDIAN_CI_METHODS, median_ci

LOW, HIGH, SPREAD = 58_000.0, 65_000.0, 0.015


def two_level_median(share_low: float) -> float:
    """The median of the mixture share_low * N(LOW) + (1 - share_low) * N(HIGH) (log-normal spreads), by bisection."""
    def cdf(x):
        return (share_low * scipy.stats.norm.cdf(np.log(x / LOW) / SPREAD)
                + (1 - share_low) * scipy.stats.norm.cdf(np.log(x / HIGH) / SPREAD))
    low, high = LOW * 0.9, HIGH * 1.1
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if cdf(middle) < 0.5 else (low, middle)
    return (low + high) / 2


SHAPES = {
    "log-normal": (lambda rng, n: rng.lognormal(0.0, 1.0, n), 1.0),
    "two-level 50/50": (lambda rng, n: rng.choice([LOW, HIGH], n) * np.exp(rng.normal(0, SPREAD, n)), two_level_median(0.5)),
    "two-level 70/30": (lambda rng, n: np.where(rng.random(n) < 0.7, LOW, HIGH) * np.exp(rng.normal(0, SPREAD, n)),
                        two_level_median(0.7)),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--simulations", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (the package default is 10,000)")
    args = parser.parse_args()
    print(f"{'shape':16} {'n':>3} " + " ".join(f"{m:>29}" for m in MEDIAN_CI_METHODS))
    for shape, (draw, true_median) in SHAPES.items():
        for n in (6, 8, 10, 12, 15):
            rng = np.random.default_rng(args.seed + n)
            hits = dict.fromkeys(MEDIAN_CI_METHODS, 0)
            for _ in range(args.simulations):
                sample = draw(rng, n)
                for method in MEDIAN_CI_METHODS:
                    estimate = median_ci(sample, method=method, resamples=args.resamples)
                    hits[method] += estimate.ci_low <= true_median <= estimate.ci_high
            print(f"{shape:16} {n:>3} " + " ".join(f"{hits[m] / args.simulations:>29.1%}" for m in MEDIAN_CI_METHODS))


if __name__ == "__main__":
    main()
