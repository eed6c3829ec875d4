"""S4 (notebook 04): Go vs PHP Swoole on JSON after 10 ms of simulated I/O, 400 connections (swoole / go)."""

from __future__ import annotations

import pandas as pd

from loadlab import metrics
from loadlab.claims import Claim
from loadlab.judgements import margins as noise_margins
from loadlab.judgements import open_loop as open_loop_judging
from loadlab.judgements.evidence import evidence_trials
from loadlab.judgements._common import both_at_allowance, judge_claimed_ratio, setup_text, with_metrics
from loadlab.judgements.rule import HOLDS, IMPOSSIBLE, INCONCLUSIVE, NOT_REPRODUCED, NOT_TESTABLE, Family
from loadlab.judgements.verdicts import Verdict
from loadlab.manifest import Manifest

FAMILY = Family("S4", 4)
LABELS = ("go", "swoole")
IO_S = 0.010
CLAIM_LEVEL = 400
SOURCE_SETUP = "the source: wrk -t4 -c400 -d30s on 4 cores"
RATIO_CLAIMS = {"S4-throughput": "throughput_rps", "S4-memory": "memory_peak_mib", "S4-cpu": "server_cpu_pct"}
LATENCY_CLAIM, LATENCY_METRIC = "S4-latency", "latency_mean_ms"
CLOSED_LOOP_MEAN = ("a closed loop's mean latency is its connections over its throughput (Little's law), so judged "
                    "there it would be S4-throughput's verdict again")
# Fewer expected errors than this cannot tell a 0.02% error rate from none.
ERRORS_TO_TELL = 10


def io_coroutines(trials: pd.DataFrame, manifest: Manifest, claims: dict[str, Claim], margins: dict[str, float],
                  notebook: str, run_id: str, missing: dict[str, str] | None = None,
                  open_loop: tuple[pd.DataFrame, dict, str] | None = None) -> list[Verdict]:
    """S4's verdicts from 04's closed loop at 400 connections; S4-latency from `open_loop` (its trials, manifest
    and run id: `latency`), and not testable without one."""
    level = CLAIM_LEVEL if CLAIM_LEVEL in set(trials["level"]) else trials["level"].max()
    context = f"{setup_text(manifest, level)}; {SOURCE_SETUP}"
    if "swoole" not in set(trials["label"]):
        reason = (missing or {}).get("swoole", "no Swoole trials in this run")
        return [Verdict(claim_id, NOT_TESTABLE, f"Swoole could not be measured here: {reason}", notebook, run_id,
                        context=context) for claim_id in (*RATIO_CLAIMS, LATENCY_CLAIM, "S4-errors")] + \
               [littles_law(trials, claims, level, notebook, run_id, context), stack(notebook, run_id)]
    data = with_metrics(trials, manifest)  # memory_peak_mib, server_cpu_pct, latency_mean_ms (loadlab.metrics)
    verdicts = []
    for claim_id, metric in RATIO_CLAIMS.items():
        saturated = both_at_allowance(data, LABELS, level, manifest) if metric == "server_cpu_pct" else None
        if saturated:
            verdicts.append(Verdict(
                claim_id, NOT_TESTABLE, "both servers used their whole CPU allowance (" +
                ", ".join(f"{k} {v:.0%}" for k, v in saturated.items()) + "), so their CPU shares cannot differ here",
                notebook, run_id, baseline="go", candidate="swoole", context=context,
                measured={"cpu_share_of_allowance": saturated}))
            continue
        verdicts.append(judge_claimed_ratio(claims[claim_id], data, metric, LABELS, LABELS, FAMILY, margins, notebook,
                                            run_id, level, context))
    if open_loop is None:
        verdicts.append(Verdict(LATENCY_CLAIM, NOT_TESTABLE, f"no open-loop run to judge it on: {CLOSED_LOOP_MEAN}",
                                notebook, run_id, baseline="go", candidate="swoole", context=context))
    else:
        verdicts.append(latency(*open_loop, claims[LATENCY_CLAIM], notebook))
    verdicts.append(errors(data, claims["S4-errors"], level, notebook, run_id, context))
    verdicts.append(littles_law(data, claims, level, notebook, run_id, context))
    verdicts.append(stack(notebook, run_id))
    return verdicts


def latency(open_trials: pd.DataFrame, manifest: Manifest, run_id: str, claim: Claim, notebook: str) -> Verdict:
    """S4-latency on an open loop at fractions of each server's capacity: the trials' mean latency (the quantity
    S4 names) at the highest fraction below both knees (`open_loop.latency_fraction`), against the noise margin
    of that load (go's and swoole's own trials there: `margins.margins_from_replicates`)."""
    present = set(open_trials["label"]) if not open_trials.empty else set()
    if not set(LABELS) <= present:
        return Verdict(LATENCY_CLAIM, NOT_TESTABLE, "the open loop measured " + (", ".join(sorted(present)) or "no server")
                       + ", not both of go and swoole (a server without a closed-loop capacity gets no rate)",
                       notebook, run_id, baseline="go", candidate="swoole")
    fraction, judged = open_loop_judging.judged_at(open_trials, LABELS, manifest, FAMILY)
    load = manifest.parameter("load")
    duration = manifest.parameter("durations").get("duration_s", "?")
    context = (f"{judged}, on {load.get('route', '?')}, at most "
               f"{load.get('max_in_flight', '?')} requests in flight, {duration} s windows; the mean of all of a "
               f"trial's requests, the quantity S4 names; the source's mean was a closed loop's ({CLOSED_LOOP_MEAN}); "
               f"{SOURCE_SETUP}")
    data = metrics.with_derived(open_trials)  # latency_mean_ms
    margins = noise_margins.margins_from_replicates(data, LABELS, fraction, [LATENCY_METRIC], run_id,
                                                    f"open loop on {load.get('route', '?')}")
    return judge_claimed_ratio(claim, data, LATENCY_METRIC, LABELS, LABELS, FAMILY, margins, notebook, run_id,
                               fraction, context)


def errors(trials: pd.DataFrame, claim: Claim, level, notebook: str, run_id: str, context: str) -> Verdict:
    ok = trials[(trials["status"] == "ok") & (trials["level"] == level) & trials["label"].isin(LABELS)]
    totals = ok.groupby("label")[["errors_total", "requests"]].sum()
    rates = {label: float(100 * row.errors_total / row.requests) for label, row in totals.iterrows() if row.requests}
    swoole_requests = int(totals.loc["swoole", "requests"]) if "swoole" in totals.index else 0
    expected = float(claim.values["swoole"]) / 100 * swoole_requests
    measured = {"error_rate_pct": rates, "swoole_requests": swoole_requests}
    if swoole_requests and totals.loc["swoole", "errors_total"] == 0 and expected >= ERRORS_TO_TELL:
        return Verdict("S4-errors", NOT_REPRODUCED,
                       f"no Swoole errors in {swoole_requests:,} requests, where a 0.02% rate would give about "
                       f"{expected:.0f}; the source's errors did not appear here", notebook, run_id, context=context,
                       measured=measured)
    if swoole_requests and totals.loc["swoole", "errors_total"] > totals.loc["go", "errors_total"]:
        return Verdict("S4-errors", HOLDS, "Swoole had more errors than Go", notebook, run_id, context=context,
                       measured=measured)
    return Verdict("S4-errors", INCONCLUSIVE, "too few requests to tell a 0.02% error rate from none", notebook, run_id,
                   context=context, measured=measured)


def littles_law(trials: pd.DataFrame, claims: dict[str, Claim], level, notebook: str, run_id: str, context: str) -> Verdict:
    """Little's law: 400 connections / 10 ms bounds throughput at 40,000 req/s; the claims and each runtime against it."""
    bound = CLAIM_LEVEL / IO_S
    claimed = claims["S4-throughput"].values
    ok = trials[(trials["status"] == "ok") & (trials["level"] == level)]
    bound_here = level / IO_S
    share = {label: float(value / bound_here) for label, value in ok.groupby("label")["throughput_rps"].median().items()}
    within = all(float(value) <= bound for value in claimed.values())
    return Verdict(
        "S4-littles-law", HOLDS if within else IMPOSSIBLE,
        f"bound {bound:,.0f} req/s; the claimed " + " and ".join(f"{float(v):,.0f}" for v in claimed.values()) +
        (" req/s respect it" if within else " req/s exceed it") + "; measured share of the bound (medians): " +
        ", ".join(f"{label} {value:.0%}" for label, value in share.items()),
        notebook, run_id, context=context, measured={"share_of_bound": share})


def stack(notebook: str, run_id: str) -> Verdict:
    """S4-stack, from the runtimes' own sources (the sizes are constants, not measurements)."""
    return Verdict(
        "S4-stack", HOLDS,
        "as documented at the sources: a goroutine starts on a 2 KiB stack (Go runtime/stack.go, "
        "stackMin = 2048; since Go 1.19 the start size may grow to the average stack use seen), measured here at "
        "2,048 B per parked goroutine (notebook 01's microbenchmark); a Swoole coroutine gets an 8 KiB PHP VM stack "
        "page (SW_DEFAULT_PHP_STACK_PAGE_SIZE = 8 KiB in Swoole's php_swoole_coroutine.h) on top of its C stack "
        "(SW_DEFAULT_C_STACK_SIZE = 2 MiB of address space in swoole_config.h, touched only as used), so '8 KB' is the PHP stack, not the whole cost",
        notebook, run_id)


def memory_per_request_kib(summary: pd.DataFrame) -> pd.Series:
    """Per server, the extra memory per in-flight request (KiB): the median peak memory (`memory_peak_mib`, a
    condition summary's column) at the highest level less that at the lowest, over the connections between them;
    empty with fewer than two levels."""
    memory = summary.pivot(index="label", columns="level", values="memory_peak_mib")
    if memory.shape[1] < 2:
        return pd.Series(dtype=float, name="extra memory per in-flight request (KiB, medians)")
    low, high = min(memory.columns), max(memory.columns)
    return ((memory[high] - memory[low]) * 1024 / (high - low)).rename("extra memory per in-flight request (KiB, medians)")


# A server whose CPU (share of its allowance, %) stayed under this had room on its core: CPU did not set its pace.
CPU_ROOM_PCT = 90


def littles_law_gap_text(trials: pd.DataFrame) -> str:
    """Why each runtime falls short of Little's law's bound, from the evidence trials (markdown, computed).

    In a closed loop throughput is exactly L / W: the shortfall is the time W
    a request took beyond the 10 ms sleep. At the lowest level, with the CPU
    mostly idle, that excess is the sleep's own overshoot (timer slack and
    wake-up); at the top level each server's CPU share (% of its allowance)
    says whether its core, and so its concurrency model's cost per request,
    could have set the pace, or whether it had room and waited on timers.
    """
    data = evidence_trials(trials)  # loaded trials carry the derived metrics (loadlab.metrics)
    medians = data.groupby(["level", "label"])[["server_cpu_pct_of_allowance", "latency_mean_ms",
                                                "throughput_rps"]].median()  # fmt: skip
    levels = sorted(medians.index.get_level_values("level").unique())
    if not levels:
        return "*No evidence trial: nothing to set against Little's law.*"
    low = medians.loc[levels[0]]
    parts = [
        f"**Where the bound is lost.** In a closed loop throughput is exactly connections / W, so the shortfall is "
        f"the time W a request took beyond its {IO_S * 1e3:g} ms sleep. At {levels[0]:,} connections, with the CPU "
        f"{_span(low['server_cpu_pct_of_allowance'], '%')} busy, a request took "
        f"{_span(low['latency_mean_ms'], ' ms')}: the sleep itself overshoots by "
        f"{_span(low['latency_mean_ms'] - IO_S * 1e3, ' ms')} before any queueing "
        f"({', '.join(f'{label} {value:.1f} ms' for label, value in low['latency_mean_ms'].items())})."
    ]
    if len(levels) > 1:
        top = medians.loc[levels[-1]]
        room = top[top["server_cpu_pct_of_allowance"] < CPU_ROOM_PCT]
        full = top[top["server_cpu_pct_of_allowance"] >= CPU_ROOM_PCT]
        bound = levels[-1] / IO_S
        each = lambda rows: "; ".join(  # noqa: E731 (one phrase per server)
            f"{label} {row.server_cpu_pct_of_allowance:.0f}% CPU, W {row.latency_mean_ms:.1f} ms, "
            f"{row.throughput_rps / bound:.0%} of the bound" for label, row in rows.iterrows())
        if not room.empty:
            parts.append(f"At {levels[-1]:,} connections these servers had room on their core (under {CPU_ROOM_PCT}% "
                         f"of their allowance), so CPU, and the concurrency model's cost in it, did not set their pace: the "
                         f"time a request waited beyond its sleep did (the overshoot, and waiting for a wake-up): "
                         f"{each(room)}.")
        if not full.empty:
            parts.append(f"These ran their core at {CPU_ROOM_PCT}% or more, where the cost per request does bound "
                         f"them: {each(full)}.")
    return " ".join(parts)


def _span(values: pd.Series, unit: str) -> str:
    """'46–71%' (or one value) for a server-by-server column."""
    low, high = float(values.min()), float(values.max())
    digits = 0 if unit == "%" else 1
    return f"{low:.{digits}f}{unit}" if round(low, digits) == round(high, digits) else \
        f"{low:.{digits}f}\N{EN DASH}{high:.{digits}f}{unit}"
