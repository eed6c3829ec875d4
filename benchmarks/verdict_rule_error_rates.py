"""How often the verdict rule errs, by simulation (a benchmark, not a test; put its table in the issue note).

Two errors, at each committed family size (S1 9, S2 4, S4 4, S3 3, S5 2 ratio verdicts) and margin (none, as
a run without an A/A in its sitting has, and 10%, what 3.5% between instances gives), with 6 and 10 trials a
side, on two data shapes (log-normal 3.5% between instances; two-level: each instance settles at one of two
levels ±5%, as measured here):

- **false hold**: the truth rules the claim out (true ratio outside the claim's band), and the rule says
  "holds". Cases: claimed ×1.5 against a true ×1.0; claimed ×0.905 against a true ×1.18 (the issue's S1-p99
  example, which rule v2 called "holds" 98.5% of the time at 6 + 6 trials and a family of 9).
- **false contradiction**: the claim is true (true ratio = claimed), and the rule says "contradicted" or
  "no difference". Cases: ×1.5 and ×0.8.
- beside them, the power: how often a true ×1.5 "holds".

    .venv/bin/python benchmarks/verdict_rule_error_rates.py [--simulations 400]
"""

from __future__ import annotations

import argparse

import numpy as np

from loadlab.judgements.rule import CONTRADICTED, HOLDS, NO_DIFFERENCE, Family, judge_ratio

FAMILIES = {"S1": 9, "S2/S4": 4, "S3": 3, "S5": 2}
MARGINS = (None, 0.10)


def sample(rng, shape: str, n: int, scale: float) -> np.ndarray:
    if shape == "two-level":
        return scale * rng.choice([0.95, 1.05], n) * np.exp(rng.normal(0, 0.015, n))
    return scale * np.exp(rng.normal(0, 0.035, n))


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
    print("| shape | family | margin | n | false hold: ×1.5 vs true ×1.0 | false hold: ×0.905 vs true ×1.18 "
          "| false contradiction: ×1.5 | false contradiction: ×0.8 | power: ×1.5 holds |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for shape in ("log-normal 3.5%", "two-level"):
        for name, size in FAMILIES.items():
            family = Family(name, size)
            for margin in MARGINS:
                for n in (6, 10):
                    cells = [
                        rate(rng, shape, n, 1.0, 1.5, family, margin, (HOLDS,), args.simulations),
                        rate(rng, shape, n, 1.18, 0.905, family, margin, (HOLDS,), args.simulations),
                        rate(rng, shape, n, 1.5, 1.5, family, margin, refuted, args.simulations),
                        rate(rng, shape, n, 0.8, 0.8, family, margin, refuted, args.simulations),
                        rate(rng, shape, n, 1.5, 1.5, family, margin, (HOLDS,), args.simulations),
                    ]
                    print(f"| {shape} | {name} ({size}) | {'none' if margin is None else f'{margin:.0%}'} | {n} | "
                          + " | ".join(f"{c:.1%}" for c in cells) + " |")


if __name__ == "__main__":
    main()
