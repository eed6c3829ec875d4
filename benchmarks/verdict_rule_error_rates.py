"""How often the verdict rule errs, by simulation (a benchmark, not a test; put its table in the issue note).

For each data shape (log-normal spread; two-level throughput: each container
settles at one of two levels ±5%, as measured here) and trials per side n:

- A/A (true ratio 1): how often a claimed ×1.5 is upheld ("holds" or "holds in
  direction only": a false claim upheld), and how often a claimed ×1.0 is
  refuted ("contradicted": a true claim refuted);
- a true ×1.5: how often a claimed ×1.5 is refuted ("contradicted" or "no
  difference"), and how often it is found ("holds": the power).

Each interval is at a family of 4 (98.75%), the A/A noise margin 5%.

    .venv/bin/python benchmarks/verdict_rule_error_rates.py [--simulations 400]
"""

from __future__ import annotations

import argparse

import numpy as np

from loadlab.judgements.rule import CONTRADICTED, DIRECTION_ONLY, HOLDS, NO_DIFFERENCE, Family, judge_ratio

FAMILY = Family("simulation", 4)
MARGIN = 0.05


def sample(rng, shape: str, n: int, scale: float) -> np.ndarray:
    if shape == "two-level":
        return scale * rng.choice([0.95, 1.05], n) * np.exp(rng.normal(0, 0.015, n))
    spread = {"log-normal 2%": 0.02, "log-normal 10%": 0.10}[shape]
    return scale * np.exp(rng.normal(0, spread, n))


def rates(rng, shape: str, n: int, true_ratio: float, claimed: float, simulations: int) -> dict[str, float]:
    counts: dict[str, int] = {}
    for _ in range(simulations):
        verdict = judge_ratio(sample(rng, shape, n, 100.0), sample(rng, shape, n, 100.0 * true_ratio), claimed, FAMILY,
                              MARGIN).verdict
        counts[verdict] = counts.get(verdict, 0) + 1
    return {k: v / simulations for k, v in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--simulations", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{'shape':16} {'n':>3}  {'A/A: x1.5 upheld':>17} {'A/A: x1.0 refuted':>18} "
          f"{'x1.5: refuted':>14} {'x1.5: holds':>12}")
    for shape in ("log-normal 2%", "log-normal 10%", "two-level"):
        for n in (6, 10, 15):
            aa_false = rates(rng, shape, n, 1.0, 1.5, args.simulations)
            aa_true = rates(rng, shape, n, 1.0, 1.0, args.simulations)
            effect = rates(rng, shape, n, 1.5, 1.5, args.simulations)
            print(f"{shape:16} {n:>3}  {aa_false.get(HOLDS, 0) + aa_false.get(DIRECTION_ONLY, 0):>17.1%} "
                  f"{aa_true.get(CONTRADICTED, 0):>18.1%} "
                  f"{effect.get(CONTRADICTED, 0) + effect.get(NO_DIFFERENCE, 0):>14.1%} {effect.get(HOLDS, 0):>12.1%}")


if __name__ == "__main__":
    main()
