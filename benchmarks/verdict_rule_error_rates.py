"""How often the verdict rule errs, by simulation (a benchmark, not a test; put its table in the issue note).

Two errors, at each committed family size (S1 9, S2 4, S4 4, S3 3, S5 2 ratio verdicts) and margin (none, as
a run without an A/A in its sitting has, and 10%, what 3.5% between instances gives), with 6 and 10 trials a
side, on three data shapes (log-normal with 3.5% between instances, as throughput here; log-normal with 25%,
as p99 latency and memory per connection; two-level: each instance settles at one of two levels ±5%):

- **false hold**: the truth rules the claim out (the true ratio outside the claim's band), and the rule says
  "holds". Cases: claimed ×1.5 against a true ×1.97, just outside the band's top (×1.875); claimed ×0.905
  against a true ×1.18 (the issue's S1-p99 example, which rule v2 called "holds" 98.5% of the time at 6 + 6
  trials and a family of 9 with its margin of 22.8%).
- **false contradiction**: the claim is true, and the rule says "contradicted" or "no difference". Cases: the
  true ratio is the claimed ×1.5; the true ratio is ×1.8, inside the band near its top.
- beside them, the power: how often a true ×1.5 claimed ×1.5 "holds" (the rest is mostly "holds in direction
  only": an interval wider than the claim's band cannot confirm its size).

    .venv/bin/python benchmarks/verdict_rule_error_rates.py [--simulations 400]
"""

from __future__ import annotations

import argparse

import numpy as np

from loadlab.judgements.rule import CONTRADICTED, HOLDS, NO_DIFFERENCE, Family, judge_ratio

FAMILIES = {"S1": 9, "S2/S4": 4, "S3": 3, "S5": 2}
MARGINS = (None, 0.10)


SHAPES = ("log-normal 3.5%", "log-normal 25%", "two-level")


def sample(rng, shape: str, n: int, scale: float) -> np.ndarray:
    if shape == "two-level":
        return scale * rng.choice([0.95, 1.05], n) * np.exp(rng.normal(0, 0.015, n))
    spread = {"log-normal 3.5%": 0.035, "log-normal 25%": 0.25}[shape]
    return scale * np.exp(rng.normal(0, spread, n))


def rate(rng, shape, n, truth, claimed, family, margin, words, simulations) -> float:
    hits = 0
    for _ in range(simulations):
        verdict = judge_ratio(sample(rng, shape, n, 100.0), sample(rng, shape, n, 100.0 * truth), claimed, family,
                              margin).verdict
        hits += verdict in words
    return hits / simulations


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--simulations", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    refuted = (CONTRADICTED, NO_DIFFERENCE)
    print("| shape | family | margin | n | false hold: ×1.5 vs true ×1.97 | false hold: ×0.905 vs true ×1.18 "
          "| false contradiction: true ×1.5 | false contradiction: true ×1.8 | power: ×1.5 holds |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for shape in SHAPES:
        for name, size in FAMILIES.items():
            family = Family(name, size)
            for margin in MARGINS:
                for n in (6, 10):
                    cells = [
                        rate(rng, shape, n, 1.97, 1.5, family, margin, (HOLDS,), args.simulations),
                        rate(rng, shape, n, 1.18, 0.905, family, margin, (HOLDS,), args.simulations),
                        rate(rng, shape, n, 1.5, 1.5, family, margin, refuted, args.simulations),
                        rate(rng, shape, n, 1.8, 1.5, family, margin, refuted, args.simulations),
                        rate(rng, shape, n, 1.5, 1.5, family, margin, (HOLDS,), args.simulations),
                    ]
                    print(f"| {shape} | {name} ({size}) | {'none' if margin is None else f'{margin:.0%}'} | {n} | "
                          + " | ".join(f"{c:.1%}" for c in cells) + " |")


if __name__ == "__main__":
    main()
