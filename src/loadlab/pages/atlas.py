"""The atlas (notebook 07): every runtime on the same axes, read from the newest runs of notebooks 00 and 01.

Each value is a median over trials with its distribution-free 95% interval
(`stats.median_ci`), read from one run at one stated condition; a runtime
drawn in fewer trials than a 95% interval needs (the quick scale's 3 for a
runtime no verdict reads) gets the range of its trials, with the coverage
that range really has (`stats.median_interval`: 75% for 3), and a warning,
as benchstat warns. The atlas measures nothing and judges no claim: it is the
map the claims sit on. A runtime a run lacks is a row saying so, never an
error, so the page renders from runs older than the plans.

The runs are passed as they are loaded (`study.Study`, or anything with
`trials`, `run_id`, `manifest` and `missing`): this module reads their
tables, never their files.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from loadlab import metrics, stats, units
from loadlab.judgements import evidence, regime, s1
from loadlab.judgements.capacity import CAPACITY_HEADROOM_UTILIZATION, capacity_ranking, trials_with_headroom
from loadlab.judgements.evidence import evidence_trials
from loadlab.servers import RUNTIMES

CONFIDENCE = 0.95
# Not runtimes of their own on the atlas: 02's bounded worker pool is Go's runtime with another server design, and
# nginx-baseline answers from its config (00's ceiling, not a contestant).
NOT_ON_THE_ATLAS = ("go-workerpool", "nginx-baseline")
# Every runtime, seeds and new, by the short label the plans give it, in the figures' order.
ATLAS_RUNTIMES = tuple(runtime.label for runtime in RUNTIMES if runtime.name not in NOT_ON_THE_ATLAS)
# The open loop's fractions of each runtime's own capacity the atlas reads p99 at: below the knee (0.5) and near it.
LATENCY_FRACTIONS = (0.5, 0.8)

# Why a runtime's row is empty where its experiment measures it at full only (`full_only`, which the notebook
# passes as plans.measured_only_at_full: pages sit below the plans and do not import them).
FULL_ONLY_REASON = "measured at full only, make reproduce SCALE=full: quick's 100-minute budget has no room for it"
# The experiments each axis reads (without the scale suffix), so a page can name a run that does not exist yet.
# A trial holds fewer than asked when its median held is under this share of the level (a few connections short
# is wrk's reconnects mid-window; the shortfalls seen were a third to two thirds of 10,000).
SHORT_OF_ASKED = 0.99
# Memory per held connection and threads at the top level read 01's keep-alive run (HELD), where every connection
# is held for the whole window: under S1's load (a new connection per request) a server holds only the few whose
# request is in its hands (3 to 540 of 10,000 in a sketch of 2026-11-28), and memory divided by so few is noise.
OVERHEAD, LATENCY, CAPACITY = "01-runtime-overhead", "01-open-loop-latency", "00-server-capacity"
HELD = "01-runtime-overhead-keepalive"


@dataclass(frozen=True)
class Axis:
    """One axis of the atlas: its key in the table, what it measures, its figure label (unit in brackets), the unit
    the table prints, and the run it reads."""

    key: str
    name: str  # what the page's sentences and the table call it
    label: str  # the figure's axis label; two lines where one would outrun its panel
    unit: str  # as the table prints it
    experiment: str
    scale_group: str | None = None  # axes of one quantity at two conditions share the figure's x scale

    @property
    def heading(self) -> str:
        """The table's name for the axis, with its unit: "CPU time per request (µs)"."""
        return f"{self.name} ({self.unit or 'count'})"


AXES = (
    Axis("memory", "memory per held connection", "memory per held connection (KiB)", "KiB", HELD),
    Axis("cpu", "CPU time per request", "CPU time per request (\N{MICRO SIGN}s)", "\N{MICRO SIGN}s", OVERHEAD),
    Axis("p99-0.5", "p99 at 0.5 of capacity", "p99 latency (ms)\nat 0.5 of own capacity", "ms", LATENCY, "p99"),
    Axis("p99-0.8", "p99 at 0.8 of capacity", "p99 latency (ms)\nat 0.8 of own capacity", "ms", LATENCY, "p99"),
    Axis("capacity", "capacity on one core", "capacity on one core (req/s)", "req/s", CAPACITY),
    Axis("threads", "OS threads at the top level", "OS threads (count)\nat the top level", "", HELD),
)
AXIS_BY_KEY = {axis.key: axis for axis in AXES}
# The figure's panels (`plots.atlas_figure`): key, axis label, scale group.
PANELS = tuple((axis.key, axis.label, axis.scale_group) for axis in AXES)
COLUMNS = ["axis", "runtime", "median", "ci_low", "ci_high", "coverage", "n", "run", "condition", "note"]


def panels(latency=None) -> tuple[tuple[str, str, str | None], ...]:
    """`PANELS`, the p99 panels' labels naming the capacity the open-loop run `latency` offered fractions of
    (an older run's basis was the slowest server's, not each runtime's own)."""
    basis = capacity_basis(latency)
    if basis == "own":
        return PANELS
    return tuple((key, label.replace("own capacity", "the slowest's capacity"), group)
                 for key, label, group in PANELS)


def few_trials_note(n: int, confidence: float = CONFIDENCE) -> str:
    """"n=3: the range of 3 trials, a 75% interval (95% needs 6)", or "" when `n` can carry a `confidence` one
    (benchstat's warning, with the coverage the shorter interval has: `stats.median_interval`)."""
    needed = stats.minimum_trials_for_median_ci(confidence)
    if not 0 < n < needed:
        return ""
    if n < 2:
        return f"n={n}: no interval ({confidence:.0%} needs {needed} trials)"
    return f"n={n}: the range of {n} trials, a {1 - 2 * 0.5 ** n:.1%} interval ({confidence:.0%} needs {needed})"


def _coverage(estimate) -> float:
    """The coverage of an estimate's interval (`stats.median_interval`), NaN where one trial gives none."""
    return estimate.confidence if estimate.n >= 2 else math.nan


def estimate_rows(values: pd.DataFrame, column: str, axis: str, run_id: str, condition) -> list[dict]:
    """One row per runtime of `values` (a `label` column and `column`): the median of its finite values with its
    interval, their count, the run and the condition (a string, or a callable of the label giving one)."""
    rows = []
    for label, block in values.groupby("label", sort=False):
        sample = pd.to_numeric(block[column], errors="coerce").to_numpy(dtype=float)
        sample = sample[np.isfinite(sample)]
        if not sample.size:
            continue
        estimate = stats.median_interval(sample, CONFIDENCE)
        rows.append({"axis": axis, "runtime": label, "median": estimate.median, "ci_low": estimate.ci_low,
                     "ci_high": estimate.ci_high, "coverage": _coverage(estimate),
                     "n": int(estimate.n), "run": run_id,
                     "condition": condition(label) if callable(condition) else condition,
                     "note": few_trials_note(int(estimate.n))})
    return rows


def _load_text(trials: pd.DataFrame) -> str:
    """"keep-alive, /json" or "a new connection per request, /plaintext200": the load a run's trials recorded."""
    mode = trials["connection_mode"].dropna().unique() if "connection_mode" in trials else []
    route = trials["route"].dropna().unique() if "route" in trials else []
    modes = {"per-request": "a new connection per request"}
    parts = [", ".join(modes.get(m, m) for m in mode), ", ".join(route)]
    return ", ".join(part for part in parts if part)


def _allowance_text(trials: pd.DataFrame, label: str) -> str:
    """A runtime's CPU as its trials recorded it: "a whole core" or "0.5 of a core" (a quota on its pinned core)."""
    if "cpu_allowance_cores" not in trials:
        return ""
    cores = pd.to_numeric(trials.loc[trials["label"] == label, "cpu_allowance_cores"], errors="coerce").median()
    if not math.isfinite(cores):
        return ""
    return "a whole core" if cores == 1 else f"{units.format_number(float(cores))} of a core"


def memory_rows(trials: pd.DataFrame, run_id: str) -> list[dict]:
    """Memory per held connection (KiB), each top-level evidence trial's: the cgroup's memory in use above its
    runtime's median at the lowest level, per connection held beyond those held there (the kernel's count;
    `judgements.s1.per_connection_at_top_level`, S1-rss's rule). The cgroup counts a page once; process RSS, S1's
    own figure, counts ZGC's heap three times, and is read only where a run has no cgroup figure."""
    data = s1.with_memory_columns(trials)
    per = s1.per_connection_at_top_level(data)
    if per.empty:
        return []
    column, what = "cgroup_per_connection_kib", "cgroup memory in use"
    if per[column].isna().all():
        column, what = "rss_per_connection_kib", "process RSS"
    low, high = sorted(data["level"].unique())[0], sorted(data["level"].unique())[-1]
    held = per.groupby("label")["held"].median()

    def condition(label):
        return (f"{what}, {low:,} to {high:,} connections asked ({held.get(label, math.nan):,.0f} held at the top), "
                f"{_load_text(data)}, {_allowance_text(data, label)}")

    return estimate_rows(per, column, "memory", run_id, condition)


def _top_level_rows(trials: pd.DataFrame, run_id: str, column: str, axis: str, what: str,
                    keep: Callable[[pd.DataFrame], pd.DataFrame] = evidence_trials,
                    also: Callable[[pd.DataFrame], str] = lambda mine: "") -> list[dict]:
    """One row per runtime of `column` over the trials `keep` selects at the run's top level; `also(mine)`, of a
    runtime's kept trials, adds to its condition ("" adds nothing)."""
    top = keep(trials[trials["level"] == trials["level"].max()])
    if top.empty or column not in top:
        return []
    level = int(trials["level"].max())

    def condition(label):
        extra = also(top[top["label"] == label])
        return (f"{what} at {level:,} connections asked, {_load_text(top)}, {_allowance_text(top, label)}"
                + (f"; {extra}" if extra else ""))

    return estimate_rows(top, column, axis, run_id, condition)


def cpu_trials(trials: pd.DataFrame) -> pd.DataFrame:
    """The trials CPU time per request is read from: ok, and either a loadgen with headroom or a server CPU-bound in
    it (`judgements.regime`: CPU_BOUND_PCT of the CPU it was given or more). Busy for the whole window, such a server
    was at its own limit as much as the loadgen was, so each request it answered cost what a request costs it at
    full load; under S1's load at 10,000 connections every server ran at 93-131% of its allowance (the fifth
    sitting), so a saturated loadgen there left none of them idle. A verdict on throughput, latency or CPU share
    still leaves such a trial out (`judgements.evidence`): those are what a loadgen's limit moves."""
    ok = trials[trials["status"] == "ok"]
    busy = (ok["server_cpu_pct_of_allowance"].map(regime.trial_regime) == regime.CPU_BOUND
            if "server_cpu_pct_of_allowance" in ok else pd.Series(False, index=ok.index))
    return ok[~evidence.saturated(ok) | busy]


def _saturated_and_cpu_bound_text(mine: pd.DataFrame) -> str:
    """"2 of its 3 trials with the loadgen saturated and ...": how many of a runtime's kept trials `cpu_trials` kept
    for their CPU-bound server alone; "" when none."""
    count = int(evidence.saturated(mine).sum())
    if not count:
        return ""
    return (f"{count} of its {len(mine)} trials with the loadgen saturated and the server at "
            f"{regime.CPU_BOUND_PCT:.0f}% of its CPU allowance or more (CPU-bound: at its own limit too)")


def cpu_rows(trials: pd.DataFrame, run_id: str) -> list[dict]:
    """CPU time per request (µs): server CPU seconds in the window over the requests answered (`metrics`'
    `cpu_us_per_request`), per trial at the run's top level, where S1's claims are judged, that `cpu_trials` keeps;
    a value counting trials whose loadgen saturated says how many."""
    return _top_level_rows(metrics.with_derived(trials), run_id, "cpu_us_per_request", "cpu", "server CPU / requests",
                           keep=cpu_trials, also=_saturated_and_cpu_bound_text)


def threads_rows(trials: pd.DataFrame, run_id: str) -> list[dict]:
    """OS threads (count): the pids cgroup's peak over the window (`tasks_peak`), per evidence trial at the run's top
    level."""
    return _top_level_rows(trials, run_id, "tasks_peak", "threads", "peak OS threads (pids cgroup)")


# What the open loop's fractions are of (`Load.capacity_basis`): each runtime's own capacity in today's plan; runs
# before it offered every server fractions of the slowest one's.
BASIS_TEXT = {"own": "its own capacity", "slowest": "the slowest server's capacity"}


def capacity_basis(run) -> str:
    """The open-loop run's `capacity_basis` as its manifest recorded it ("own" where it recorded none)."""
    load = run.manifest.parameters.get("load", {}) if run is not None and run.manifest is not None else {}
    return load.get("capacity_basis") or "own"


def latency_rows(trials: pd.DataFrame, run_id: str, fractions: Sequence[float] = LATENCY_FRACTIONS,
                 basis: str = "own") -> list[dict]:
    """p99 latency (ms) of each evidence trial of the open loop at each of `fractions` (the trial's `level`) of
    the capacity `basis` names (`BASIS_TEXT`: its runtime's own, or the slowest server's in older runs)."""
    of = BASIS_TEXT.get(basis, f"the {basis} capacity")
    rows = []
    evidence = evidence_trials(trials)
    for fraction in fractions:
        at = evidence[np.isclose(evidence["level"].astype(float), fraction)]
        if at.empty:
            continue
        at = at.assign(latency_p99_ms=units.seconds_to_ms(at["latency_p99_s"]))
        rows += estimate_rows(at, "latency_p99_ms", f"p99-{fraction:g}", run_id, lambda label, at=at, f=fraction: (
            f"open loop at {f:g} of {of}, {_load_text(at)}, {_allowance_text(at, label)}"))
    return rows


def capacity_rows(trials: pd.DataFrame, run_id: str, pipeline_depth: int | None) -> list[dict]:
    """Capacity on one core (req/s): 00's ranking's median and interval (`judgements.capacity.capacity_ranking`:
    ok trials whose loadgen stayed below CAPACITY_HEADROOM_UTILIZATION busy), n its trials with headroom."""
    ranking = capacity_ranking(trials)
    measured = trials_with_headroom(trials)
    pipelined = f"pipelined {pipeline_depth} deep" if pipeline_depth else "one request per round trip"
    connections = ", ".join(f"{c:,}" for c in sorted(trials["connections"].dropna().unique()))
    rows = []
    for row in ranking.itertuples() if not ranking.empty else ():
        if not row.trials_with_headroom:
            continue
        # The ranking's interval where it has one; below that, the trials' range with its own coverage.
        kept = pd.to_numeric(measured.loc[measured["label"] == row.label, "throughput_rps"], errors="coerce")
        estimate = stats.median_interval(kept.dropna().to_numpy(dtype=float), CONFIDENCE)
        rows.append({"axis": "capacity", "runtime": row.label, "median": row.throughput_rps,
                     "ci_low": estimate.ci_low, "ci_high": estimate.ci_high,
                     "coverage": _coverage(estimate),
                     "n": int(row.trials_with_headroom), "run": run_id,
                     "condition": (f"closed loop, {_load_text(trials)} {pipelined}, {connections} connections, "
                                   f"{_allowance_text(trials, row.label)}, loadgen under "
                                   f"{CAPACITY_HEADROOM_UTILIZATION:.0%} busy"),
                     "note": few_trials_note(int(row.trials_with_headroom))})
    return rows


def _pipeline_depth(run) -> int | None:
    load = run.manifest.parameters.get("load", {}) if run.manifest is not None else {}
    return load.get("pipeline_depth")


def _condition_trials(trials: pd.DataFrame, axis: Axis, label: str) -> tuple[pd.DataFrame, str]:
    """`label`'s trials at the condition `axis` reads, and that condition in words ("at 10,000 connections
    asked")."""
    mine = trials[trials["label"] == label]
    if axis.key.startswith("p99-"):
        fraction = float(axis.key.split("-", 1)[1])
        return mine[np.isclose(mine["level"].astype(float), fraction)], f"at {fraction:g} of its capacity"
    if axis.key == "capacity" or "level" not in trials or trials["level"].dropna().empty:
        return mine, ""
    level = trials["level"].max()
    return mine[mine["level"] == level], f"at {int(level):,} connections asked"


def no_evidence_text(trials: pd.DataFrame, axis: Axis, label: str) -> str:
    """Why a runtime a run measured has no value on `axis`: "its 3 trials at 10,000 connections asked: 3 failed
    (stalled)", each reason's first clause counted (`judgements.evidence.exclusion_reason`); "no evidence trial at
    this condition" where its trials there leave nothing to count."""
    at, where = _condition_trials(trials, axis, label)
    if axis.key == "cpu":
        # The trials cpu_trials keeps are values, not exclusions, whatever their loadgen.
        at = at.drop(index=cpu_trials(at).index)
    reasons = [evidence.exclusion_reason(row) for row in at.to_dict("records")]
    counted = Counter(_first_clause(reason) for reason in reasons if reason)
    if at.empty or not counted:
        return "no evidence trial at this condition"
    listed = ", ".join(f"{n} {reason}" for reason, n in sorted(counted.items(), key=lambda item: -item[1]))
    trials_text = f"its {len(at)} trial{'s' if len(at) != 1 else ''}" + (f" {where}" if where else "")
    return f"{trials_text}: {listed}"


def _first_clause(reason: str) -> str:
    """"failed: stalled: window throughput ..." -> "failed (stalled)"; other reasons up to their detail."""
    if reason.startswith("failed: "):
        return f"failed ({reason.removeprefix('failed: ').split(':', 1)[0]})"
    return reason.split(" (", 1)[0]


def _planned_labels(run) -> set[str]:
    """The labels of the servers `run`'s manifest planned (every label, so nothing reads as unplanned, when it has
    no manifest to say)."""
    manifest = getattr(run, "manifest", None)
    servers = (getattr(manifest, "parameters", None) or {}).get("servers") if manifest is not None else None
    if not servers:
        return set(ATLAS_RUNTIMES) | set(run.trials["label"])
    return {entry.get("label") or entry.get("server") for entry in servers}


def _missing_rows(measured: pd.DataFrame, axis: Axis, run, scale: str, runtimes: Iterable[str],
                  full_only: Callable[[str, str], set[str]] | None = None) -> list[dict]:
    """A row per runtime with no value on `axis`: which run lacks it, and why where the run recorded why (or where
    `full_only(experiment, scale)` names it, that full measures it)."""
    have = set(measured.loc[measured["axis"] == axis.key, "runtime"]) if len(measured) else set()
    rows = []
    for label in runtimes:
        if label in have:
            continue
        if run is None:
            note, run_id = f"not measured: no complete run of {axis.experiment}-{scale} yet", ""
        else:
            # The harness's reason can run to a recipe ("...: set LOADLAB_SWOOLE_PACKAGE=..."); its first clause says why.
            why = ((getattr(run, "missing", None) or {}).get(label) or "").split(":")[0]
            in_run = label in set(run.trials["label"])
            if not why and not in_run and label not in _planned_labels(run):
                why = (FULL_ONLY_REASON if full_only is not None and label in full_only(axis.experiment, scale)
                       else "not in its plan")
            note = (f"not measured in run {run.run_id}" + (f" ({why})" if why else "")
                    + (f" ({no_evidence_text(run.trials, axis, label)})" if in_run else ""))
            run_id = run.run_id
        rows.append({"axis": axis.key, "runtime": label, "median": math.nan, "ci_low": math.nan, "ci_high": math.nan,
                     "coverage": math.nan, "n": 0, "run": run_id, "condition": "", "note": note})
    return rows


def atlas_table(overhead, latency, capacity, scale: str, runtimes: Sequence[str] = ATLAS_RUNTIMES,
                held=None, full_only: Callable[[str, str], set[str]] | None = None) -> pd.DataFrame:
    """The atlas: one row per axis and runtime (`COLUMNS`), each a median with its interval (NaN bounds below the
    trials an interval needs, and a note), its trial count, the run and condition it was read at; a runtime a
    run lacks (or a run that does not exist: None) is a row with n 0 and a note naming the run. Runtimes outside
    `runtimes` that a run has are kept, after them. `scale` names a run that is missing. `full_only(experiment,
    scale)`: the labels an experiment (without its scale suffix) measures at full and not at `scale`
    (plans.measured_only_at_full)."""
    rows: list[dict] = []
    if overhead is not None:
        rows += cpu_rows(overhead.trials, overhead.run_id)
    if held is not None:
        rows += memory_rows(held.trials, held.run_id) + threads_rows(held.trials, held.run_id)
    if latency is not None:
        rows += latency_rows(latency.trials, latency.run_id, basis=capacity_basis(latency))
    if capacity is not None:
        rows += capacity_rows(capacity.trials[capacity.trials["label"].isin(runtimes)], capacity.run_id,
                              _pipeline_depth(capacity))
    measured = pd.DataFrame(rows, columns=COLUMNS)
    runs = {OVERHEAD: overhead, LATENCY: latency, CAPACITY: capacity, HELD: held}
    for axis in AXES:
        rows += _missing_rows(measured, axis, runs[axis.experiment], scale, runtimes, full_only)
    table = pd.DataFrame(rows, columns=COLUMNS)
    order = {label: i for i, label in enumerate([*runtimes, *sorted(set(table["runtime"]) - set(runtimes))])}
    axis_order = {axis.key: i for i, axis in enumerate(AXES)}
    return (table.assign(_a=table["axis"].map(axis_order), _r=table["runtime"].map(order))
            .sort_values(["_a", "_r"]).drop(columns=["_a", "_r"]).reset_index(drop=True))


def _value_text(row, unit: str) -> str:
    """"31 KiB [27.5, 35.1]" (a 95% interval), "31 KiB [27.5, 35.1] (75%)" (a range of 3 trials), the median alone
    where no interval exists, "not measured" where nothing was."""
    if not math.isfinite(row["median"]):
        return "not measured"
    text = units.with_unit(units.format_number(float(row["median"])), unit)
    if math.isfinite(row["ci_low"]) and math.isfinite(row["ci_high"]):
        text += f" [{units.format_number(float(row['ci_low']))}, {units.format_number(float(row['ci_high']))}]"
        coverage = row.get("coverage", math.nan)
        if math.isfinite(coverage) and coverage < CONFIDENCE - 1e-9:
            text += f" ({coverage:.1%})"
    return text


def atlas_display(table: pd.DataFrame, measured_only: bool = True) -> pd.DataFrame:
    """The atlas as the page prints it: per axis and runtime, "median [95% CI]" with its unit, n, the run, and the
    condition it was read at, with any few-trials warning; the rows with no value too unless `measured_only`
    (`not_measured_text` names them, run by run)."""
    if measured_only:
        table = table[table["n"] > 0]
    shown = pd.DataFrame({
        "axis": [AXIS_BY_KEY[key].heading if key in AXIS_BY_KEY else key for key in table["axis"]],
        "runtime": table["runtime"],
        f"median [{CONFIDENCE:.0%} CI, or the coverage marked]": [_value_text(row, AXIS_BY_KEY[row["axis"]].unit)
                                         for _, row in table.iterrows()],
        "n": table["n"].astype(int),
        "run": table["run"],
        "read at": ["; ".join(part for part in (row["condition"], row["note"]) if part) for _, row in table.iterrows()],
    })
    return shown.set_index(["axis", "runtime"])


def basis_text(latency) -> str:
    """Markdown: a warning when the open-loop run offered fractions of another capacity than each runtime's own;
    "" when it offered each its own."""
    basis = capacity_basis(latency)
    if latency is None or basis == "own":
        return ""
    return (f"**The p99 axes are read at another load than today's plan:** run {latency.run_id} offered every "
            f"server fractions of {BASIS_TEXT.get(basis, basis)}, not of its own, so the faster servers ran further "
            "below their knees than the slowest. Measure 01 again for fractions of each runtime's own capacity.")


def not_measured_text(table: pd.DataFrame) -> str:
    """Markdown: which runtimes each run lacks ("not measured in run X: node, erlang"), one line per run; ""
    when every runtime has every value."""
    missing = table[table["n"] == 0]
    if missing.empty:
        return ""
    lines = []
    for note, block in missing.groupby("note", sort=False):
        axes = ", ".join(dict.fromkeys(AXIS_BY_KEY[key].name for key in block["axis"]))
        lines.append(f"- **{', '.join(dict.fromkeys(block['runtime']))}**: {note} ({axes})")
    return "**Not on the map yet**, by run:\n\n" + "\n".join(lines)


def held_short_text(held) -> str:
    """Markdown: the runtimes that held fewer connections than asked at the keep-alive run's top level (the kernel's
    count: established, less those still waiting in the accept queue), per trial, with what the kernel saw instead:
    the accept queue's median length over the window and the handshakes it dropped (`listen_overflows`). "" when
    every trial held what it asked, or without the run. Their memory per held connection divides by what they held,
    and their threads are counted at it: both are read at fewer connections than the other runtimes'."""
    if held is None or held.trials is None or "connections_held_median" not in held.trials:
        return ""
    trials = held.trials
    top = evidence_trials(trials[trials["level"] == trials["level"].max()])
    asked = int(trials["level"].max())
    short = top[pd.to_numeric(top["connections_held_median"], errors="coerce") < SHORT_OF_ASKED * asked]
    if short.empty:
        return ""
    lines = []
    for label, block in short.groupby("label", sort=False):
        trials_of = top[top["label"] == label]
        held_values = pd.to_numeric(block["connections_held_median"], errors="coerce")
        queued = pd.to_numeric(block.get("connections_queued_median"), errors="coerce")
        dropped = pd.to_numeric(block.get("listen_overflows"), errors="coerce")
        lines.append(
            f"- **{label}**: {len(block)} of its {len(trials_of)} trials held {_span(held_values)} connections; "
            f"a median of {_span(queued)} more waited in its accept queue over the window, and the kernel "
            + (f"dropped {_span(dropped)} handshakes on the full queue" if dropped.fillna(0).max() > 0
               else "dropped no handshake"))
    return (f"**Held fewer than asked** at {asked:,} connections (keep-alive run {held.run_id}): connections the "
            "kernel had established and the server had not yet accepted are not counted as held. These servers "
            "were answering the connections they had at full load and accepted the rest slower than the loadgen "
            "opened them, so their memory per held connection divides by what they held, and their threads "
            "were counted with that many held:\n\n" + "\n".join(lines) + "\n\nThe other runtimes held every "
            "connection asked. Every server listens with the contract's backlog (checked before each trial; the "
            "threats table on page 01 gives it), so the shortfall is the runtime's accepting under load, not its "
            "listen queue.")


def _span(values: pd.Series) -> str:
    """"a" or "a-b" (whole numbers with thousands separators) of the finite values; "?" when none."""
    finite = values.dropna() if values is not None else pd.Series(dtype=float)
    if finite.empty:
        return "?"
    low, high = int(round(finite.min())), int(round(finite.max()))
    return f"{low:,}" if low == high else f"{low:,}-{high:,}"


def few_trials_text(table: pd.DataFrame) -> str:
    """Markdown: the values read from fewer trials than a 95% interval needs, grouped by their count of trials (so
    by the coverage their range has); "" if none."""
    few = table[table["note"].str.startswith("n=")]
    if few.empty:
        return ""
    groups = []
    for n, block in sorted(few.groupby("n"), key=lambda item: -item[0]):
        # Every row of a group has the same coverage: the range of n trials (`stats.median_interval`).
        coverage = f"their range, a {block['coverage'].iloc[0]:.1%} interval" if n >= 2 else "no interval"
        values = ", ".join(f"{row.runtime} ({AXIS_BY_KEY[row.axis].name})" for row in block.itertuples())
        groups.append(f"{n} trial{'s' if n != 1 else ''} ({coverage}): {values}")
    needed = stats.minimum_trials_for_median_ci(CONFIDENCE)
    return (f"**Few trials** (a {CONFIDENCE:.0%} interval needs {needed}; drawn dashed, as benchstat warns): "
            + "; ".join(groups) + ".")


def atlas_finding(table: pd.DataFrame) -> str:
    """The figure's finding, for its alt text: per axis, the lowest and highest runtime measured and their medians,
    then the runtimes with no value at all."""
    parts = []
    for axis in AXES:
        block = table[(table["axis"] == axis.key) & table["median"].notna()].sort_values("median")
        if block.empty:
            parts.append(f"{axis.name}: nothing measured")
            continue
        low, high = block.iloc[0], block.iloc[-1]
        parts.append(f"{axis.name}: from {low['runtime']} "
                     f"{units.with_unit(units.format_number(float(low['median'])), axis.unit)} to {high['runtime']} "
                     f"{units.with_unit(units.format_number(float(high['median'])), axis.unit)}")
    measured = set(table.loc[table["median"].notna(), "runtime"])
    absent = [label for label in dict.fromkeys(table["runtime"]) if label not in measured]
    return "; ".join(parts) + "." + (f" Not measured on any axis: {', '.join(absent)}." if absent else "")
