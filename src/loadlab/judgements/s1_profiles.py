"""S1's flame-graph claims (notebook 06), judged on the CPU profiles of experiment 06-cpu-profiles.

Each runtime is profiled by its own ecosystem's profiler (plans.CPU_PROFILERS):
Go by pprof, Java by JFR execution samples (plus its park, monitor and sleep
events), Rust by perf. A function's share is the per cent of a trial's CPU
samples whose stack holds a frame matching it ("total", as a flame graph's
width) or whose top frame does ("self"). Shares are summarised across
trials as the median with its exact order-statistic interval
(loadlab.stats.median_ci): trials, not samples, are the unit, so the
interval carries the variation between server instances.

A claim that a share is "under" or "over" a threshold holds when the whole
interval lies on the claimed side, is contradicted when the whole interval
lies on the other side, and is inconclusive otherwise.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from loadlab import stats
from loadlab.claims import Claim
from loadlab.judgements import evidence as evidence_policy
from loadlab.judgements.rule import CONTRADICTED, HOLDS, INCONCLUSIVE, NOT_TESTABLE
from loadlab.judgements.verdicts import Verdict
from loadlab.profiles.folded import FRAME_SEPARATOR
from loadlab.profiles.schema import MIN_PROFILE_SAMPLES

# A trial whose profile holds fewer samples than this gives no share worth an interval (profiles.schema says why).
MIN_SAMPLES = MIN_PROFILE_SAMPLES
TOO_FEW_SAMPLES = "too few profile samples"

CONFIDENCE = 0.95
SOURCES = {"go": "pprof", "java-platform": "jfr", "java-virtual": "jfr", "rust": "perf", "python": "py-spy"}


def _frames(stack: str) -> list[str]:
    return stack.split(FRAME_SEPARATOR)


def trial_shares(cpu_stacks: pd.DataFrame, patterns: dict[str, str], source: str) -> pd.DataFrame:
    """Per trial: `<name>_total_pct` and `<name>_self_pct` for each regex in `patterns` (matched with re.search)."""
    compiled = {name: re.compile(pattern) for name, pattern in patterns.items()}
    rows = []
    for trial, stacks in cpu_stacks[cpu_stacks["source"] == source].groupby("trial"):
        total = int(stacks["samples"].sum())
        row = {"trial": int(trial), "samples": total}
        for name, regex in compiled.items():
            inclusive = leaf = 0
            for stack, samples in zip(stacks["stack"], stacks["samples"]):
                frames = _frames(stack)
                if any(regex.search(frame) for frame in frames):
                    inclusive += int(samples)
                if regex.search(frames[-1]):
                    leaf += int(samples)
            row[f"{name}_total_pct"] = 100 * inclusive / total if total else math.nan
            row[f"{name}_self_pct"] = 100 * leaf / total if total else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def evidence_shares(trials: pd.DataFrame, cpu_stacks: pd.DataFrame, label: str, patterns: dict[str, str]) -> tuple[pd.DataFrame, list]:
    """trial_shares for the evidence trials of `label` (ok, loadgen not saturated, at least MIN_SAMPLES profile
    samples), and the trials left out with why."""
    rows = trials[trials["label"] == label]
    keep = evidence_policy.evidence_rows(rows)
    excluded = [{"trial": int(r["trial"]), "label": label, "reason": evidence_policy.exclusion_reason(r)}
                for r in rows.to_dict("records") if int(r["trial"]) not in set(keep["trial"])]
    shares = trial_shares(cpu_stacks[cpu_stacks["trial"].isin(keep["trial"])], patterns, SOURCES[label])
    if not shares.empty:
        few = shares["samples"] < MIN_SAMPLES
        excluded += [{"trial": int(r["trial"]), "label": label,
                      "reason": evidence_policy.with_detail(TOO_FEW_SAMPLES, int(r["samples"]))}
                     for r in shares[few].to_dict("records")]
        shares = shares[~few].reset_index(drop=True)
    return shares, excluded


def too_few_samples(claim: Claim, label: str, excluded: list, notebook: str, run_id: str, context: str) -> Verdict | None:
    """"not testable here" with the counts, when every evidence trial of `label` had too few profile samples."""
    counts = evidence_policy.details(excluded, label, TOO_FEW_SAMPLES)
    if not counts:
        return None
    return Verdict(claim.id, NOT_TESTABLE,
                   f"{SOURCES[label]} sampled too few stacks: {', '.join(counts)} samples in the evidence trials' windows, "
                   f"fewer than the {MIN_SAMPLES} per trial a share needs (profiles.MIN_PROFILE_SAMPLES)",
                   notebook, run_id, context=context, excluded=excluded)


def summary(values) -> stats.MedianEstimate:
    return stats.median_ci(list(values), CONFIDENCE)


def _text(estimate) -> str:
    if math.isfinite(estimate.ci_low):
        return f"{estimate.median:.1f}% [{estimate.ci_low:.1f}, {estimate.ci_high:.1f}]"
    return f"{estimate.median:.1f}% (n={estimate.n}: too few trials for an interval)"


def side_of(estimate, threshold: float) -> str | None:
    """"below" / "above" when the whole interval lies on one side of `threshold` (per cent), else None."""
    if not math.isfinite(estimate.ci_low):
        return None
    if estimate.ci_high < threshold:
        return "below"
    if estimate.ci_low > threshold:
        return "above"
    return None


def top_functions(cpu_functions: pd.DataFrame, trial_ids, column: str = "self_pct", n: int = 8) -> pd.DataFrame:
    """The n functions with the largest median share (`column`) over the given trials (0 where absent)."""
    rows = cpu_functions[cpu_functions["trial"].isin(list(trial_ids))]
    if rows.empty:
        return pd.DataFrame(columns=["function", column])
    wide = rows.pivot_table(index="trial", columns="function", values=column, aggfunc="sum").fillna(0.0)
    return wide.median().sort_values(ascending=False).head(n).rename(column).reset_index()


# --- S1-flame-go ---------------------------------------------------------------------------------
GO_PATTERNS = {
    "gopark": r"^runtime\.gopark$",
    "conn_read": r"^net\.\(\*conn\)\.Read$",
    "conn_write": r"^net\.\(\*conn\)\.Write$",
    "handler": r"^main\.",
    "gc": r"^runtime\.gcBgMarkWorker$|^runtime\.gcAssistAlloc$",
    "scheduler": r"^runtime\.schedule$",
}


def flame_go(trials: pd.DataFrame, cpu_stacks: pd.DataFrame, claim: Claim, notebook: str, run_id: str,
             context: str = "") -> Verdict:
    """S1-flame-go: runtime.gopark under 3% of samples, and the main cost in net.(*conn).Read."""
    threshold = float(str(claim.values.get("runtime.gopark", "< 3")).lstrip("<").strip())
    shares, excluded = evidence_shares(trials, cpu_stacks, "go", GO_PATTERNS)
    if shares.empty:
        return too_few_samples(claim, "go", excluded, notebook, run_id, context) or Verdict(
            claim.id, INCONCLUSIVE, "no Go CPU profile from an evidence trial", notebook, run_id, context=context,
            excluded=excluded)
    estimates = {name: summary(shares[f"{name}_total_pct"]) for name in GO_PATTERNS}
    gopark_side = side_of(estimates["gopark"], threshold)
    # "The main cost": net.(*conn).Read's share against each other part a Go server's profile splits into.
    rivals = [name for name in ("conn_write", "handler", "gc", "scheduler")
              if estimates[name].median > estimates["conn_read"].median]
    read_beaten = [name for name in rivals if math.isfinite(estimates[name].ci_low)
                   and estimates[name].ci_low > estimates["conn_read"].ci_high]
    parts = ", ".join(f"{name.replace('_', ' ')} {_text(est)}" for name, est in estimates.items())
    gopark_text = {"below": f"holds: runtime.gopark is under {threshold:g}%",
                   "above": f"fails: runtime.gopark is over {threshold:g}%"}.get(gopark_side, "runtime.gopark's interval meets the threshold")
    if read_beaten:
        read_text = f"fails: {', '.join(n.replace('_', ' ') for n in read_beaten)} cost more than net.(*conn).Read"
    elif not rivals:
        read_text = "holds: net.(*conn).Read has the largest share of the parts compared"
    else:
        read_text = "undecided: " + ", ".join(n.replace("_", " ") for n in rivals) + " reach further, within the intervals"
    if gopark_side == "above" or read_beaten:
        verdict = CONTRADICTED
    elif gopark_side == "below" and not rivals:
        verdict = HOLDS
    else:
        verdict = INCONCLUSIVE
    explanation = (f"share of CPU samples with the frame on the stack (median of {len(shares)} trials, "
                   f"{CONFIDENCE:.0%} interval): {parts}. Part 1 {gopark_text}; part 2 {read_text}")
    return Verdict(claim.id, verdict, explanation, notebook, run_id, context=context, excluded=excluded,
                   n_candidate=len(shares), trial_ids={"go": shares["trial"].tolist()},
                   measured={name: {"median_pct": est.median, "ci_low_pct": est.ci_low, "ci_high_pct": est.ci_high}
                             for name, est in estimates.items()})


# --- S1-flame-java -------------------------------------------------------------------------------
JAVA_PATTERNS = {
    "thread_sleep": r"^java\.lang\.Thread\.sleep",
    "aqs": r"^java\.util\.concurrent\.locks\.AbstractQueuedSynchronizer\.",
    "locks": r"^java\.util\.concurrent\.locks\.",
}
# A "significant hot spot": at least this per cent of the CPU samples, or of the windows' time spent blocked there.
HOT_SPOT_PCT = 5.0


def flame_java(trials: pd.DataFrame, cpu_stacks: pd.DataFrame, blocking_events: pd.DataFrame, claim: Claim,
               notebook: str, run_id: str, label: str = "java-platform", context: str = "") -> Verdict:
    """S1-flame-java: Thread.sleep and AbstractQueuedSynchronizer as lock-contention hot spots.

    Contention is waiting, and a waiting thread is on no CPU: the evidence is
    JFR's blocking events inside the windows (every sleep, park and monitor
    wait of 10 ms or more, with its stack), and beside them the claimed
    frames' share of the CPU samples, where a trial has MIN_SAMPLES of them.
    """
    rows = trials[trials["label"] == label]
    used = set(evidence_policy.evidence_rows(rows)["trial"])
    excluded = [{"trial": int(r["trial"]), "label": label, "reason": evidence_policy.exclusion_reason(r)}
                for r in rows.to_dict("records") if int(r["trial"]) not in used]
    if not used:
        return Verdict(claim.id, INCONCLUSIVE, f"no evidence trial of {label}", notebook, run_id, context=context,
                       excluded=excluded)
    window_s = float(trials.loc[trials["trial"].isin(used), "duration_s"].sum())
    events = outside = pd.DataFrame(columns=["type", "duration_s", "stack"])
    if blocking_events is not None and not blocking_events.empty:
        mine = blocking_events[blocking_events["trial"].isin(used)]
        events, outside = mine[mine["in_window"] == True], mine[mine["in_window"] != True]  # noqa: E712
    claimed_sites = events[events["stack"].str.contains(r"java\.lang\.Thread\.sleep|AbstractQueuedSynchronizer", regex=True)]
    claimed_blocked_s = float(claimed_sites["duration_s"].sum())
    per_type = events.groupby("type")["duration_s"].agg(["size", "sum"]) if not events.empty else pd.DataFrame(columns=["size", "sum"])
    # Where threads waited: the innermost frame of each event's stack (the synchronized method, the park call).
    sites = (events.assign(site=events["stack"].str.rsplit(FRAME_SEPARATOR, n=1).str[-1].replace("", "[no frame]"))
             .groupby(["type", "site"])["duration_s"].agg(["size", "sum"]).sort_values("size", ascending=False).head(3)
             if not events.empty else pd.DataFrame())
    blocking_text = (f"JFR's blocking events of 10 ms or more inside the {len(used)} windows ({window_s:.0f} s): " + (", ".join(
        f"{kind} {int(row['size'])} ({row['sum']:.2f} s blocked)" for kind, row in per_type.iterrows())
        + "; most often at " + ", ".join(f"{site} ({kind.removeprefix('jdk.')}, {int(row['size'])} times)"
                                         for (kind, site), row in sites.iterrows())
        if not per_type.empty else "none (no park, monitor wait or sleep of 10 ms or more)")
        + f"; in Thread.sleep or AbstractQueuedSynchronizer: {len(claimed_sites)} ({claimed_blocked_s:.2f} s)")
    if not outside.empty:
        site = outside["stack"].str.rsplit(FRAME_SEPARATOR, n=1).str[-1].replace("", "[no frame]").value_counts()
        blocking_text += (f"; before the windows (start-up, contract check, warm-up) {len(outside)} more, most often at "
                          f"{site.index[0]} ({int(site.iloc[0])} times)")
    shares = trial_shares(cpu_stacks[cpu_stacks["trial"].isin(used)], JAVA_PATTERNS, SOURCES[label])
    samples = int(shares["samples"].sum()) if not shares.empty else 0
    sampled = shares[shares["samples"] >= MIN_SAMPLES] if not shares.empty else shares
    estimates = {name: summary(sampled[f"{name}_total_pct"]) for name in JAVA_PATTERNS} if len(sampled) else {}
    if estimates:
        cpu_text = (f"share of JFR execution samples with the frame on the stack (median of {len(sampled)} trials with "
                    f"{MIN_SAMPLES} samples or more, {CONFIDENCE:.0%} interval): " + ", ".join(
                        f"{name.replace('_', ' ')} {_text(est)}" for name, est in estimates.items()))
    else:
        cpu_text = (f"JFR sampled only {samples} stacks in the windows ({MIN_SAMPLES} per trial are needed for a share): "
                    "it samples only threads running Java code, and these threads spend their time in socket I/O "
                    "and waiting, outside Java")
    cpu_hot = any(side_of(est, HOT_SPOT_PCT) == "above" for name, est in estimates.items() if name != "locks")
    # A hot spot: the claimed sites hold threads blocked for at least this share of the window's wall time.
    if claimed_blocked_s > HOT_SPOT_PCT / 100 * window_s or cpu_hot:
        verdict, why = HOLDS, "threads blocked in the claimed frames for a significant share of the windows"
    elif claimed_blocked_s == 0 and all(side_of(est, HOT_SPOT_PCT) != "above" for est in estimates.values()):
        verdict = CONTRADICTED
        why = ("no thread waited 10 ms or more in Thread.sleep or AbstractQueuedSynchronizer inside the windows, and "
               "the server's /json handler neither sleeps nor takes a lock; the waits JFR recorded are elsewhere")
    else:
        verdict, why = INCONCLUSIVE, "the claimed frames blocked threads briefly, short of a hot spot's share"
    return Verdict(claim.id, verdict, f"{why}. {blocking_text}. CPU: {cpu_text}", notebook, run_id, context=context,
                   excluded=excluded, n_candidate=len(used), trial_ids={label: sorted(used)},
                   measured={**{name: {"median_pct": est.median, "ci_low_pct": est.ci_low, "ci_high_pct": est.ci_high}
                                for name, est in estimates.items()},
                             "jfr_samples_in_windows": samples, "claimed_sites_blocked_s": claimed_blocked_s,
                             "blocking_events": {kind: int(row["size"]) for kind, row in per_type.iterrows()}})


# --- S1-flame-rust -------------------------------------------------------------------------------
# tokio 0.2's io::driver::poll lives on as tokio::runtime::io::driver::Driver::{turn,park} (tokio 1.x);
# bytes' Buf::advance is implemented per buffer type ("<bytes::bytes_mut::BytesMut as bytes::buf::buf_impl::Buf>::advance").
RUST_PATTERNS = {
    "io_driver": r"tokio::(runtime::)?io::driver",
    "buf_advance": r"bytes::.*Buf.*::advance",
    "claimed_either": r"tokio::(runtime::)?io::driver|bytes::.*Buf.*::advance",
    "scheduler": r"tokio::runtime::scheduler",
    "syscalls": r"^\[?(entry_SYSCALL|do_syscall|__x64_sys|__GI___libc_(read|write|send|recv)|__libc_(read|write|send|recv)|(__)?(recv|send|read|write|epoll_wait))",
}
ALMOST_ENTIRELY_PCT = 75.0


def flame_rust(trials: pd.DataFrame, cpu_stacks: pd.DataFrame, claim: Claim, notebook: str, run_id: str,
               context: str = "") -> Verdict:
    """S1-flame-rust: samples almost entirely in tokio's I/O driver poll and Buf::advance."""
    shares, excluded = evidence_shares(trials, cpu_stacks, "rust", RUST_PATTERNS)
    if shares.empty:
        return too_few_samples(claim, "rust", excluded, notebook, run_id, context) or Verdict(
            claim.id, INCONCLUSIVE, "no perf profile from an evidence trial of rust", notebook, run_id,
            context=context, excluded=excluded)
    estimates = {name: summary(shares[f"{name}_total_pct"]) for name in RUST_PATTERNS}
    side = side_of(estimates["claimed_either"], ALMOST_ENTIRELY_PCT)
    verdict = {"below": CONTRADICTED, "above": HOLDS}.get(side, INCONCLUSIVE)
    why = {CONTRADICTED: f"the two claimed functions together hold well under {ALMOST_ENTIRELY_PCT:g}% of the samples",
           HOLDS: f"the two claimed functions together hold over {ALMOST_ENTIRELY_PCT:g}% of the samples",
           INCONCLUSIVE: f"the interval of the claimed functions' share meets {ALMOST_ENTIRELY_PCT:g}%"}[verdict]
    scheduler_self = summary(shares["scheduler_self_pct"])
    explanation = (f"{why} (almost entirely: {ALMOST_ENTIRELY_PCT:g}% or more). Share of perf samples with the "
                   f"frame on the stack (median of {len(shares)} trials, {CONFIDENCE:.0%} interval): " + ", ".join(
                       f"{name.replace('_', ' ')} {_text(est)}" for name, est in estimates.items() if name != "scheduler")
                   + f"; the scheduler's own code (tokio::runtime::scheduler on top of the stack; it is under every "
                   f"task, so its total share says nothing) {_text(scheduler_self)}"
                   + ". Matched: tokio's io::driver (tokio 1.x: tokio::runtime::io::driver) and any bytes Buf "
                   "implementation's advance")
    return Verdict(claim.id, verdict, explanation, notebook, run_id, context=context, excluded=excluded,
                   n_candidate=len(shares), trial_ids={"rust": shares["trial"].tolist()},
                   measured={**{name: {"median_pct": est.median, "ci_low_pct": est.ci_low, "ci_high_pct": est.ci_high}
                                for name, est in estimates.items()},
                             "scheduler_self": {"median_pct": scheduler_self.median, "ci_low_pct": scheduler_self.ci_low,
                                                "ci_high_pct": scheduler_self.ci_high}})


def enough_samples(*counts: int) -> bool:
    """Whether every one of `counts` (CPU samples) reaches MIN_SAMPLES, the fewest a share of them needs."""
    return min(counts) >= MIN_SAMPLES


def ranked_functions(cpu_functions: pd.DataFrame, trial_ids, n: int = 8) -> pd.DataFrame | None:
    """The `n` functions with the largest median share on top of the stack over `trial_ids`, with their share
    anywhere in it; None when the median trial sampled fewer than MIN_SAMPLES stacks (too few to rank)."""
    per_trial = cpu_functions[cpu_functions["trial"].isin(list(trial_ids))].groupby("trial")["trial_samples"].first()
    if per_trial.empty or per_trial.median() < MIN_SAMPLES:
        return None
    return top_functions(cpu_functions, trial_ids, "self_pct", n).merge(
        top_functions(cpu_functions, trial_ids, "total_pct", 10_000), on="function", how="left")
