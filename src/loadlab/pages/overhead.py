"""Notebook 06's readings: the functions each profile ranks (or why not), and what each profiler costs."""

from __future__ import annotations

import pandas as pd

from loadlab.judgements.profiler_overhead import COSTS, FASTER, overhead_effect


def margin_sentence(margin: float | None) -> str:
    """The A/A noise margin for throughput (a share, 0.03 = 3%) as the band a with/without ratio is read against;
    "" without a margin."""
    if not margin:
        return ""
    return (f"The A/A noise margin for throughput (this sitting's A/A control) is {margin:.1%}: a ratio whose interval "
            f"lies inside [{1 / (1 + margin):.3f}, {1 + margin:.3f}] is within what two fresh instances of one server "
            "differ by.")


def overhead_lines(overhead: pd.DataFrame) -> str:
    """One Markdown bullet per profiler with a ratio (judgements.profiler_overhead's table): its with/without
    throughput ratio and interval, and what the interval says (`overhead_effect`)."""
    lines = []
    for row in overhead.dropna(subset=["ratio"]).to_dict("records"):
        trials = f"{row['n_without']} + {row['n_with']} trials"
        if pd.isna(row["ci_low"]) or pd.isna(row["ci_high"]):
            # Too few trials for an exact 95% interval (3 + 3 give p >= 0.1): the ratio is said, not read.
            lines.append(f"- **{row['with']}**: ×{row['ratio']:.3f}, no interval: {trials} are too few for an "
                         "exact 95% one: a point estimate, not a test.")
            continue
        measured = f"×{row['ratio']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
        effect = overhead_effect(row["ci_low"], row["ci_high"])
        if effect == COSTS:
            lines.append(f"- **{row['with']}**: {measured}, costs {100 * (1 - row['ci_high']):.0f}% to "
                         f"{100 * (1 - row['ci_low']):.0f}% of the throughput (the interval lies below 1).")
        elif effect == FASTER:
            lines.append(f"- **{row['with']}**: {measured}, faster with the profiler: the comparison is noise or a bug.")
        else:
            lines.append(f"- **{row['with']}**: {measured} ~: not told apart from no profiler at {trials} (an overhead "
                         f"under about {100 * (1 - row['ci_low']):.0f}% would hide here).")
    return "\n".join(lines)


def unmeasured_overhead_line(unmeasured: list[tuple[str, str]], scale_name: str) -> str:
    """The line naming the profilers this scale leaves out (plans.profiler_overhead_unmeasured), or ""."""
    if not unmeasured:
        return ""
    names = ", ".join(with_label for _without, with_label in unmeasured)
    return (f"Not measured at the {scale_name} scale: {names}. These run only in the profile trials above, which "
            "feed no ratio verdict; `make reproduce SCALE=full` measures their cost.")


def ranked_functions_heading(label: str, cpu_functions: pd.DataFrame, trial_ids, ranked: pd.DataFrame | None) -> str:
    """The line above a runtime's ranked functions (judgements.s1_profiles.ranked_functions), or, when it ranked
    none, why: its samples in all, fewer than MIN_SAMPLES per trial."""
    from loadlab.judgements.s1_profiles import MIN_SAMPLES

    ids = list(trial_ids)
    source = cpu_functions["source"].iloc[0] if len(cpu_functions) else "?"
    if ranked is not None:
        return f"**{label}** ({source}, {len(ids)} trials): median share of samples, %"
    samples = cpu_functions[cpu_functions["trial"].isin(ids)].groupby("trial")["trial_samples"].first()
    return (f"**{label}** ({source}, {len(ids)} trials): {int(samples.sum())} samples in all, fewer than {MIN_SAMPLES} "
            "per trial, too few to rank functions (JFR samples only threads running Java code; a thread blocked in "
            "socket I/O is not one).")
