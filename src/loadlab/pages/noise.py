"""Noise on a page: the A/A band of each row of a forest plot (the rule's margin, `loadlab.judgements.margins`), and
the reading of the Docker-or-cgroup isolation measurement."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import pandas as pd

from loadlab.judgements.rule import noise_band


def noise_band_columns(rows: pd.DataFrame, margin_column: str = "noise_margin") -> pd.DataFrame:
    """`rows` with ``noise_low`` / ``noise_high``: each row's own noise band [1/(1+m), 1+m] (NaN where it had none).

    m is the margin the verdict was judged with (its record's `noise_margin`,
    from the A/A run of the verdict's own sitting), so the band drawn is the
    very band the verdict rule called "within noise".
    """
    margins = pd.to_numeric(rows[margin_column], errors="coerce") if margin_column in rows else pd.Series(math.nan, rows.index)
    bands = [noise_band(m) if math.isfinite(m) and m > 0 else (math.nan, math.nan) for m in margins]
    return rows.assign(noise_low=[b[0] for b in bands], noise_high=[b[1] for b in bands])


def verdict_forest_rows(verdicts) -> pd.DataFrame:
    """One forest-plot row per verdict record: label "claim (candidate / baseline)", its metric and its own noise
    band."""
    rows = pd.DataFrame([vars(v) if not isinstance(v, dict) else v for v in verdicts])
    if rows.empty:
        return rows
    rows = rows.assign(
        label=[f"{c} ({cand} / {base})" if isinstance(cand, str) and isinstance(base, str) else c
               for c, cand, base in zip(rows["claim_id"], rows["candidate"], rows["baseline"])],
        metric=[m.get("metric") if isinstance(m, dict) else None for m in rows["measured"]])
    for column in ("measured_ratio", "ratio_ci_low", "ratio_ci_high", "claimed_ratio", "confidence"):
        rows[column] = pd.to_numeric(rows[column], errors="coerce")
    # A ratio without its interval is not what the verdict judged (S5-memory: "the ratio itself cannot be formed",
    # some trials grew by nothing): the row shows its verdict, not a dot.
    judged = rows["ratio_ci_low"].notna() & rows["ratio_ci_high"].notna()
    rows["measured_ratio"] = rows["measured_ratio"].where(judged)
    return noise_band_columns(rows)


def forest_finding(rows: pd.DataFrame) -> str:
    """A forest's finding in a sentence (its alt text): how many verdicts, how many of each word, and which rows
    have no ratio to draw. `rows`: `verdict_forest_rows`."""
    if rows.empty:
        return "No verdicts to draw."
    counts = rows["verdict"].value_counts()
    words = ", ".join(f"{count} {word}" for word, count in counts.items())
    undrawn = rows.loc[rows["measured_ratio"].isna(), "label"].tolist()
    tail = f"; without a ratio to draw: {', '.join(undrawn)}" if undrawn else ""
    return f"{len(rows)} verdict{'s' if len(rows) != 1 else ''}: {words}{tail}."


# Consecutive windows of one quiet instance differ by about 1-2% here (issue 13's measurement); well above that,
# the host itself moved under the measurement (other tenants' CPU, steal time) and the modes cannot be told apart.
QUIET_WITHIN_INSTANCE_CV = 0.03


# Steal below this share of a window's CPU time cannot move throughput by more than the within-instance noise.
NEGLIGIBLE_STEAL_SHARE = 0.005


def isolation_reading(table: pd.DataFrame, spread_p: Mapping[str, float]) -> str:
    """One paragraph reading stats.isolation_noise's table: which mode spread least, and whether that means anything."""
    by_mode = table.set_index("mode")
    parts = [", ".join(f"{mode} {row.between_instance_cv:.1%} between instances and {row.within_instance_cv:.1%} "
                       "within" for mode, row in by_mode.iterrows())]
    noisy_modes = list(by_mode.index[by_mode["within_instance_cv"] > QUIET_WITHIN_INSTANCE_CV])
    quiet_modes = [mode for mode in by_mode.index if mode not in noisy_modes]
    text = f"**Reading.** Coefficients of variation of throughput: {parts[0]}."
    if noisy_modes and quiet_modes:
        # The modes ran interleaved, so a host that was noisy throughout would have shown in every one of them.
        quiet = by_mode.loc[quiet_modes]
        text += (f" Windows of one instance differ by {_listing(noisy_modes, by_mode['within_instance_cv'])} in "
                 f"{' and '.join(noisy_modes)} (a quiet host: 1-2%), against at most "
                 f"{quiet['within_instance_cv'].max():.1%} in {' and '.join(quiet_modes)}, which ran interleaved "
                 f"with them: some of those instances were disturbed during their windows, so their "
                 f"between-instance spread includes that disturbance. In {' and '.join(quiet_modes)}, fresh "
                 f"instances differ by {quiet['between_instance_cv'].min():.1%} to "
                 f"{quiet['between_instance_cv'].max():.1%}: each instance settles at a level of its own.")
    elif noisy_modes:
        text += (f" Windows of one instance already differ by up to {by_mode['within_instance_cv'].max():.0%} (a quiet "
                 f"host: 1-2%): the host itself was noisy during this measurement, so it cannot say where an "
                 f"instance's level comes from.")
    else:
        text += (f" Windows of one instance agree within {by_mode['within_instance_cv'].max():.1%}, yet fresh "
                 f"instances differ by {by_mode['between_instance_cv'].min():.1%} to "
                 f"{by_mode['between_instance_cv'].max():.1%}: each instance settles at a level of its own, "
                 f"whichever way it is isolated.")
    if "server_steal_share_median" in by_mode and by_mode["server_steal_share_median"].notna().any():
        stolen = by_mode.dropna(subset=["server_steal_share_median"])
    else:
        stolen = by_mode.iloc[0:0]
    if len(stolen) and stolen["server_steal_share_max"].max() < NEGLIGIBLE_STEAL_SHARE:
        text += (f" The hypervisor stole at most {stolen['server_steal_share_max'].max():.1%} of the server's CPU "
                 "time in any window, so neighbours on the host did not set the instances' levels.")
    elif len(stolen):
        text += (" The hypervisor took a median of " + ", ".join(
            f"{row.server_steal_share_median:.1%} ({mode}; at most {row.server_steal_share_max:.1%})"
            for mode, row in stolen.iterrows()) + " of the server's CPU time in a window")
        rhos = stolen["steal_throughput_spearman"].dropna()
        text += ("; across instances, throughput and steal went together with Spearman's rho "
                 + ", ".join(f"{rho:+.2f} ({mode})" for mode, rho in rhos.items()) + "." if len(rhos) else ".")
    if spread_p:
        differs = {mode: p for mode, p in spread_p.items() if p < 0.05}
        text += (" The spreads differ (" + ", ".join(f"docker vs {m}: p = {p:.2f}" for m, p in differs.items()) + ")."
                 if differs else " No mode's instances spread differently from Docker's (every p ≥ 0.05).")
    return text


def detectable_effect_text(isolation_table: pd.DataFrame, trials_per_side: int, full_trials_per_side: int,
                           target_ratio: float = 1.03) -> str:
    """The minimum detectable effect at the quick scale from Docker's between-instance CV, and what a target needs.

    Each trial is a fresh container, so the between-instance CV is the
    spread a comparison of trials meets (stats.minimum_detectable_ratio).
    """
    from loadlab.stats import minimum_detectable_ratio, trials_for_detectable_ratio

    docker = isolation_table.set_index("mode").loc["docker"]
    cv = float(docker["between_instance_cv"])
    detectable = minimum_detectable_ratio(cv, trials_per_side)
    full = minimum_detectable_ratio(cv, full_trials_per_side)
    needed = trials_for_detectable_ratio(cv, target_ratio)
    return (f"**Minimum detectable effect at the quick scale** ({trials_per_side} trials a side, each a fresh "
            f"container, 5% two-sided, 80% power): a ratio of ×{detectable:.3f} ({100 * (detectable - 1):.1f}%), from "
            f"the between-instance CV of {cv:.1%} measured here. Smaller true differences are likely to come out "
            f"\"~\" (not significant). The full scale's {full_trials_per_side} trials a side detect ×{full:.3f}; "
            f"detecting ×{target_ratio:.2f} at this spread takes {needed} trials a side.")


def _listing(modes: list[str], values: pd.Series) -> str:
    """"3.6%" for one mode, "3.6% and 4.1%" for two, in the order of `modes`."""
    return " and ".join(f"{values[mode]:.1%}" for mode in modes)


# Levels further apart than this between two runs of the same server and load are a change of sitting, not noise.
SITTING_RATIO = 1.2


def _run_time(run_id: str) -> str:
    """"2026-11-26 04:34 UTC" from a run id's creation stamp (config.new_run_id), or the run id itself."""
    match = re.search(r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})\d{2}Z", run_id)
    return f"{match[1]}-{match[2]}-{match[3]} {match[4]}:{match[5]} UTC" if match else run_id


def sitting_note(first_rps: float, first_run_id: str, second_rps: float, second_run_id: str) -> str:
    """A sentence when two runs of the same server and load (median throughputs, req/s) sat at levels far apart:
    the host's speed moved between sittings. Empty when they agree within SITTING_RATIO."""
    if not (first_rps > 0 and second_rps > 0):
        return ""
    ratio = second_rps / first_rps
    if 1 / SITTING_RATIO <= ratio <= SITTING_RATIO:
        return ""
    return (f"**Between sittings.** The same go-nethttp binary on the same route and load served a median of "
            f"{first_rps:,.0f} req/s in the A/A run ({_run_time(first_run_id)}) and {second_rps:,.0f} req/s in "
            f"Docker here ({_run_time(second_run_id)}): ×{ratio:.2f}. This host's speed moves between sittings far "
            "more than within one, so every comparison in the collection is made between the trials of one run, "
            "never across runs, and the A/A margins are one sitting's.")


def noise_floor_text(noise: Mapping) -> str:
    """The A/A control (stats.noise_floor) in one paragraph: each condition's CV of throughput and, with two
    conditions, the ratio of their medians with its CI and the Mann-Whitney p."""
    text = "**Coefficient of variation of throughput:** " + ", ".join(
        f"{label} {cv:.1%}" for label, cv in noise["cv_by_condition"].items())
    if "ratio" not in noise:
        return text + "."
    return text + (f"; **ratio of medians** B/A = {noise['ratio']:.3f} [{noise['ratio_ci_low']:.3f}, "
                   f"{noise['ratio_ci_high']:.3f}] (Mann-Whitney p = {noise['p_value']:.2f}).")


def spread_test_text(spread_p: Mapping[str, float], isolation_table: pd.DataFrame) -> str:
    """stats.spread_tests_against's p values in a sentence; "" when only Docker was measured."""
    if not spread_p:
        return ""
    return ("**Do the instances of Docker and of a plain cgroup spread alike?** Brown-Forsythe test on the instances' "
            "medians: " + ", ".join(f"docker vs {other}: p = {p:.2f}" for other, p in spread_p.items())
            + f" ({int(isolation_table['instances'].min())} instances a mode).")


def isolation_sitting_note(aa_trials: pd.DataFrame, aa_run_id: str, isolation_table: pd.DataFrame,
                           isolation_run_id: str) -> str:
    """`sitting_note` for the A/A run's ok trials against Docker's instances in the isolation run."""
    aa_rps = float(aa_trials.loc[aa_trials["status"] == "ok", "throughput_rps"].median())
    docker_rps = isolation_table.set_index("mode")["throughput_rps"].get("docker", float("nan"))
    return sitting_note(aa_rps, aa_run_id, float(docker_rps), isolation_run_id)
