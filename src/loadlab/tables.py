"""Raw run folder -> tidy tables (parquet), rebuilt from raw alone.

Tables (data/processed/<experiment>/<run-id>/<table>.parquet):

- trials: one row per trial (every trial, failed ones included, with reason),
  with condition, label, level and block from the manifest. The outcome rule
  (loadlab.outcome) is applied here too, so a trial recorded "ok" before the
  rule existed that did no work is `failed` / `stalled` in the table;
  `status_recorded` keeps what the raw trial said. `load_run` adds the derived
  metrics (loadlab.metrics: `server_cpu_pct`, `memory_peak_mib`, ...) on load.
- latency: the percentile spectrum per ok trial (trial, percentile, latency_s).
  Closed loop: wrk's dense spectrum; open loop: from the HdrHistogram of
  every request's latency, on the same grid. Open-loop percentiles here and
  in `trials` are read off the histogram with loadlab.stats.latency's one
  definition (nearest rank), also for trials recorded before it.
- timeseries: the 4 Hz resource samples per trial, with the CPU share each
  interval used (server_cpu_utilization, loadgen_cpu_utilization).
- throughput_timeline: throughput per second, for the warm-up (phase
  'warmup') and, in open loop, the measured window (phase 'measure').
- gc_events: every GC cycle from the trials' captures (Go gctrace, JFR
  jdk.GarbageCollection), in the schema of loadlab.profiles.schema, with
  `t_window_s` (seconds from the start of the measured window) and `in_window`.
- gc_pauses: every stop-the-world pause, same columns: JFR jdk.GCPhasePause
  (timed), and Go's runtime/metrics pause histogram between the expvar
  snapshots taken at the window's start and end (no time of their own, so
  `t_window_s` is NaN and `in_window` true by construction). A cycle has
  several pauses: sum one table or the other, never both.
- thread_counts: goroutine / thread counts over the window (Go expvar
  series, JFR thread statistics), with `t_window_s`.
- pinned_events: JFR jdk.VirtualThreadPinned events (a virtual thread that
  blocked while pinned to its carrier), with `t_window_s`.
- cpu_stacks, cpu_functions, gc_cycles, probe_counts, blocking_events: the CPU profiles
  (pprof, JFR execution samples, perf, py-spy) as stacks and per-function
  shares, Go gctrace's whole cycle lines, uprobe call counts and JFR's lock/park/sleep events
  (loadlab.profile_tables says what each holds). gc_cycles and
  blocking_events have `t_window_s` and `in_window` like gc_events.

Nothing here talks to Docker.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd

from loadlab import metrics, outcome, paths, profile_tables
from loadlab.loadgen import openloop, vegeta, wrk
from loadlab.rundir import RunDirectory, read_json, write_json_atomic, write_parquet_atomic
from loadlab.stats.latency import SPECTRUM_GRID_PERCENTILES, hdr_percentiles_s
from loadlab.manifest import Manifest

# Bumped whenever processing changes what a table holds: processed tables of an
# older version are rebuilt from raw on load, whatever their file times say.
TABLES_VERSION = 9  # 9: an open-loop window is never stalled against its warm-up (outcome.stall_detail)
TABLES = ("trials", "latency", "timeseries", "throughput_timeline", "gc_events", "gc_pauses", "thread_counts",
          "pinned_events", "cpu_stacks", "cpu_functions", "gc_cycles", "probe_counts",
          "blocking_events")


def processed_dir_for(run_dir: Path, processed_root: Path = paths.PROCESSED_DIR) -> Path:
    run_dir = Path(run_dir)
    return Path(processed_root) / run_dir.parent.name / run_dir.name


def _trial_rows(run: RunDirectory, manifest: Manifest) -> pd.DataFrame:
    conditions = {c["condition"]: c for c in manifest.conditions}
    order = {t["trial"]: t for t in manifest.trial_order}
    rows = []
    for number in run.finished_trials():
        trial_dir = run.trial_dir(number)
        result = read_json(trial_dir / "result.json")
        record = read_json(trial_dir / "trial.json") if (trial_dir / "trial.json").exists() else {}
        scheduled = order.get(number, {})
        condition = conditions.get(scheduled.get("condition"), {})
        row = {
            "trial": number,
            "condition": scheduled.get("condition", result.get("condition")),
            "label": condition.get("label", result.get("server")),
            "level": condition.get("level", result.get("connections")),
            "block": scheduled.get("block"),
            # A spare made up for a trial the loadgen spoiled, run after the blocks (harness.spares).
            "spare": bool(scheduled.get("spare", False)),
            **{k: v for k, v in result.items() if k not in ("trial", "condition")},
            "status_recorded": result.get("status"),
            "failure_detail": record.get("failure_detail"),
        }
        if isinstance(result.get("latency_histogram_hdr"), str):  # open loop: one percentile definition, whenever recorded
            row.update(vegeta.latency_summary_columns(result["latency_histogram_hdr"]))
        # The harness's verdict on a finished window is judged again by the current rule, both ways: runs
        # recorded before the rule (or before its profiler exemption) are judged as new ones would be.
        if row.get("status") == "ok" or row.get("failure_reason") == outcome.STALLED:
            timeline_path = trial_dir / "warmup" / "timeline.json"
            timeline = json.loads(timeline_path.read_text()) if timeline_path.exists() else None
            stalled = outcome.stall_detail(result, timeline, (record.get("config") or {}).get("profilers") or ())
            if stalled is not None:
                row.update({"status": "failed", "failure_reason": outcome.STALLED, "failure_detail": stalled})
            elif outcome.successful_requests(result) is not None:
                row.update({"status": "ok", "failure_reason": None, "failure_detail": None})
        rows.append(row)
    frame = pd.DataFrame(rows)
    if not frame.empty:
        frame = frame.sort_values("trial").reset_index(drop=True)
    return frame


def _latency_rows(run: RunDirectory, trials: pd.DataFrame) -> pd.DataFrame:
    frames = []
    for row in trials.itertuples():
        if row.status != "ok":
            continue
        trial_dir = run.trial_dir(row.trial)
        stored = wrk.stored_report(trial_dir)
        if stored is not None:
            report = wrk.read_report(stored)
            spectrum = sorted(report.spectrum_s.items())
            source = "wrk"
        else:
            encoded = getattr(row, "latency_histogram_hdr", None)
            if not isinstance(encoded, str):
                continue
            seconds = hdr_percentiles_s(encoded, SPECTRUM_GRID_PERCENTILES, value_unit_s=vegeta.HISTOGRAM_UNIT_S)
            spectrum = list(zip(SPECTRUM_GRID_PERCENTILES, seconds))
            generator = getattr(row, "open_loop_generator", None)
            source = generator if isinstance(generator, str) else "vegeta"  # runs before openloop: vegeta's
        frames.append(pd.DataFrame({
            "trial": row.trial, "condition": row.condition, "percentile": [p for p, _ in spectrum],
            "latency_s": [v for _, v in spectrum], "source": source,
        }))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["trial", "condition", "percentile", "latency_s", "source"])


def _timeseries_rows(run: RunDirectory, trials: pd.DataFrame) -> pd.DataFrame:
    frames = []
    for row in trials.itertuples():
        path = run.trial_dir(row.trial) / "timeseries.csv"
        if not path.exists():
            continue
        frame = pd.read_csv(path)
        if frame.empty:
            continue
        interval_s = frame["t_s"].diff()
        frame["server_cpu_utilization"] = frame["server_cpu_seconds"].diff() / interval_s
        if "loadgen_cpu_seconds" in frame:
            frame["loadgen_cpu_utilization"] = frame["loadgen_cpu_seconds"].diff() / interval_s
        frame.insert(0, "condition", row.condition)
        frame.insert(0, "trial", row.trial)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["trial", "condition", "t_s"])


def _throughput_rows(run: RunDirectory, trials: pd.DataFrame) -> pd.DataFrame:
    frames = []
    for row in trials.itertuples():
        trial_dir = run.trial_dir(row.trial)
        timeline_path = trial_dir / "warmup" / "timeline.json"
        if timeline_path.exists():
            warmup = pd.DataFrame(json.loads(timeline_path.read_text()))
            frames.append(warmup.assign(trial=row.trial, condition=row.condition, phase="warmup")[
                ["trial", "condition", "phase", "second", "throughput_rps"]])
        for phase, directory in (("warmup", trial_dir / "warmup"), ("measure", trial_dir)):
            if vegeta.has_results(directory):
                timeline = vegeta.throughput_timeline(vegeta.read_results(directory))
            elif phase == "measure" and openloop.has_report(directory):  # its warm-up wrote timeline.json
                timeline = openloop.throughput_timeline(openloop.read_report(directory / openloop.REPORT_NAME))
            else:
                continue
            frames.append(timeline.assign(trial=row.trial, condition=row.condition, phase=phase)[
                ["trial", "condition", "phase", "second", "throughput_rps"]])
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["trial", "condition", "phase", "second", "throughput_rps"])


def _window(row) -> tuple[float | None, float | None]:
    """(server start, window start) in unix seconds, when the trial recorded them."""
    started = getattr(row, "server_started_unix_s", None)
    measured = getattr(row, "measured_unix_s", None)
    valid = lambda v: v is not None and v == v  # noqa: E731  (NaN check)
    return (started if valid(started) else None), (measured if valid(measured) else None)


def _profile_rows(run: RunDirectory, trials: pd.DataFrame) -> tuple[pd.DataFrame, ...]:
    """(gc_events, gc_pauses, thread_counts, pinned_events) from every trial's profiles/ folder."""
    from loadlab import profiles

    gc_frames, pause_frames, thread_frames, pinned_frames = [], [], [], []
    # Failed trials too: a stalled server's captures (its pinned threads, its GC) are the evidence of why.
    for row in trials.itertuples():
        directory = run.trial_dir(row.trial) / "profiles"
        started, measured = _window(row)
        window_offset = (measured - started) if started is not None and measured is not None else None
        if (directory / "gctrace.txt").exists():
            events = profiles.gctrace_gc_events(profiles.read_gctrace(directory / "gctrace.txt"), "go", row.trial)
            # gctrace's clock starts with the process, a moment after the container did.
            events["t_window_s"] = events["t_s"] - window_offset if window_offset is not None else float("nan")
            gc_frames.append(events.assign(condition=row.condition))
        if (directory / "expvar-before.json").exists() and (directory / "expvar-after.json").exists():
            pauses = profiles.go_metrics_gc_events(profiles.read_expvar(directory / "expvar-after.json"),
                                                   before=profiles.read_expvar(directory / "expvar-before.json"),
                                                   runtime="go", trial=row.trial)
            pause_frames.append(pauses.assign(t_window_s=float("nan"), in_window=True, condition=row.condition))
        origin = measured if measured is not None else None
        jfr_tables = profile_tables.jfr_runtime_tables(directory, row.trial, origin)
        if jfr_tables is not None:
            cycles, pauses, counts, pinned = jfr_tables
            cycles["t_window_s"] = cycles["t_s"] if origin is not None else float("nan")
            gc_frames.append(cycles.assign(condition=row.condition))
            pauses["t_window_s"] = pauses["t_s"] if origin is not None else float("nan")
            pause_frames.append(pauses.assign(in_window=_within(pauses["t_window_s"], getattr(row, "duration_s", None)),
                                              condition=row.condition))
            counts["t_window_s"] = counts["t_s"] if origin is not None else float("nan")
            thread_frames.append(counts.assign(condition=row.condition))
            pinned["t_window_s"] = pinned["t_s"] if origin is not None else float("nan")
            pinned_frames.append(pinned.assign(condition=row.condition))
        # gzip since 2026-11-25; plain text before
        snapshots = _json_lines(directory / "expvar-series.jsonl.gz") or _json_lines(directory / "expvar-series.jsonl")
        if snapshots is not None:
            base = measured if measured is not None else (snapshots[0]["t_unix_s"] if snapshots else 0.0)
            counts = profiles.go_thread_counts([(s["t_unix_s"] - base, s) for s in snapshots], "go", row.trial)
            counts["t_window_s"] = counts["t_s"]
            thread_frames.append(counts.assign(condition=row.condition))
        samples = _json_lines(directory / "connections-series.jsonl.gz")
        if samples is not None:
            base = measured if measured is not None else (samples[0]["t_unix_s"] if samples else 0.0)
            counts = profiles.schema.thread_counts_frame(
                [{"runtime": "go", "trial": row.trial, "t_s": sample["t_unix_s"] - base, "metric": "connections",
                  "count": int(sample["established"]), "source": "proc_net_tcp"} for sample in samples])
            counts["t_window_s"] = counts["t_s"]
            thread_frames.append(counts.assign(condition=row.condition))
    gc = pd.concat(gc_frames, ignore_index=True) if gc_frames else profiles.schema.gc_events_frame().assign(
        t_window_s=pd.Series(dtype=float), condition=pd.Series(dtype="string"))
    threads = pd.concat(thread_frames, ignore_index=True) if thread_frames else profiles.schema.thread_counts_frame().assign(
        t_window_s=pd.Series(dtype=float), condition=pd.Series(dtype="string"))
    if not gc.empty:
        duration = trials.set_index("trial")["duration_s"]
        gc["in_window"] = (gc["t_window_s"] >= 0) & (gc["t_window_s"] <= gc["trial"].map(duration).astype(float))
    else:
        gc["in_window"] = pd.Series(dtype=bool)
    pauses = pd.concat(pause_frames, ignore_index=True) if pause_frames else profiles.schema.gc_events_frame().assign(
        t_window_s=pd.Series(dtype=float), in_window=pd.Series(dtype=bool), condition=pd.Series(dtype="string"))
    pinned = pd.concat(pinned_frames, ignore_index=True) if pinned_frames else pd.DataFrame(
        columns=["runtime", "trial", "t_s", "duration_s", "java_thread_id", "frame", "t_window_s", "condition"])
    return gc, pauses, threads, pinned


def _capture_rows(run: RunDirectory, trials: pd.DataFrame) -> tuple[pd.DataFrame, ...]:
    """(cpu_stacks, cpu_functions, gc_cycles, probe_counts, blocking_events) from every trial's profiles/ folder."""
    stack_frames, cycle_frames, probe_frames, blocking_frames = [], [], [], []
    for row in trials.itertuples():
        directory = run.trial_dir(row.trial) / "profiles"
        if not directory.is_dir():
            continue
        measured = _window(row)[1]
        duration_s = pd.to_numeric(getattr(row, "duration_s", None), errors="coerce")
        window = (measured, measured + float(duration_s)) if measured is not None and duration_s == duration_s else None
        stack_frames.append(profile_tables.cpu_stacks(directory, row.trial, window))
        cycles = profile_tables.gc_cycles(directory, row.trial)
        if cycles is not None:
            started, measured = _window(row)
            offset = (measured - started) if started is not None and measured is not None else float("nan")
            cycles["t_window_s"] = cycles["t_s"] - offset
            cycles["in_window"] = _within(cycles["t_window_s"], getattr(row, "duration_s", None))
            cycle_frames.append(cycles.assign(condition=row.condition))
        probes = profile_tables.probe_counts(directory, row.trial)
        if probes is not None:
            probe_frames.append(probes.assign(condition=row.condition))
        blocking = profile_tables.blocking_events(directory, row.trial)
        if blocking is not None:
            # The recording runs from the JVM's start: verify's requests and the warm-up are in it too.
            measured = _window(row)[1]
            blocking["t_window_s"] = blocking["start_unix_s"] - measured if measured is not None else float("nan")
            blocking["in_window"] = _within(blocking["t_window_s"], getattr(row, "duration_s", None))
            blocking_frames.append(blocking)
    stacks = pd.concat(stack_frames, ignore_index=True) if stack_frames else profile_tables.empty_cpu_stacks()
    cycles = pd.concat(cycle_frames, ignore_index=True) if cycle_frames else pd.DataFrame()
    probes = pd.concat(probe_frames, ignore_index=True) if probe_frames else pd.DataFrame(
        columns=list(profile_tables.PROBE_COLUMNS))
    blocking = pd.concat(blocking_frames, ignore_index=True) if blocking_frames else pd.DataFrame(
        columns=[*profile_tables.BLOCKING_COLUMNS, "t_window_s", "in_window"])
    return stacks, profile_tables.cpu_functions(stacks), cycles, probes, blocking


def _json_lines(path: Path) -> list[dict] | None:
    """A capture's JSON-lines series (gzip when the name ends in .gz), or None when it was not captured."""
    if not path.exists():
        return None
    text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _within(t_window_s: pd.Series, duration_s) -> pd.Series:
    """Whether each time (seconds from the window's start) falls inside a window of `duration_s` (False if unknown)."""
    try:
        duration_s = float(duration_s)
    except (TypeError, ValueError):
        duration_s = float("nan")
    return (t_window_s >= 0) & (t_window_s <= duration_s)


def process_run(run_dir: Path, processed_root: Path = paths.PROCESSED_DIR) -> dict[str, pd.DataFrame]:
    """Build every table of a run from its raw folder and write them as parquet."""
    run = RunDirectory(run_dir)
    manifest = run.read_manifest()
    trials = _trial_rows(run, manifest)
    tables = {
        "trials": trials,
        "latency": _latency_rows(run, trials) if not trials.empty else pd.DataFrame(),
        "timeseries": _timeseries_rows(run, trials) if not trials.empty else pd.DataFrame(),
        "throughput_timeline": _throughput_rows(run, trials) if not trials.empty else pd.DataFrame(),
    }
    empty = (pd.DataFrame(),) * 4
    tables["gc_events"], tables["gc_pauses"], tables["thread_counts"], tables["pinned_events"] = (
        _profile_rows(run, trials) if not trials.empty else empty)
    tables["cpu_stacks"], tables["cpu_functions"], tables["gc_cycles"], tables["probe_counts"], tables["blocking_events"] = (
        _capture_rows(run, trials) if not trials.empty else (pd.DataFrame(),) * 5)
    out = processed_dir_for(run.path, processed_root)
    out.mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        write_parquet_atomic(out / f"{name}.parquet", table)
    (out / "manifest.json").write_text(json.dumps(manifest.to_dict(), indent=2, default=str))
    write_json_atomic(out / "tables-version.json", {"tables_version": TABLES_VERSION})
    return tables


def _tables_version(out: Path) -> int | None:
    try:
        return int(json.loads((out / "tables-version.json").read_text())["tables_version"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def cpu_allowance_cores(manifest: Manifest, label: str | None = None) -> float:
    """The CPU (cores) a server could use in this run: its own quota, the run's quota, or its pinned CPUs."""
    parameters = manifest.parameters or {}
    if isinstance(parameters, list):
        # An ad-hoc trial (`loadlab trial`) records its one trial's config, whose quota and CPUs are its placement.
        parameters = {"placement": parameters[0] if parameters else {}}
    placement = parameters.get("placement") or {}
    for entry in parameters.get("servers") or []:
        if label is not None and (entry.get("label") or entry.get("server")) == label and entry.get("cpu_quota"):
            return float(entry["cpu_quota"])
    quota = placement.get("cpu_quota")
    if quota:
        return float(quota)
    cpus = str(placement.get("server_cpus") or "1")
    count = 0
    for part in cpus.split(","):
        low, _, high = part.partition("-")
        count += int(high) - int(low) + 1 if high else 1
    return float(count)


def with_metrics(trials: pd.DataFrame, manifest: Manifest) -> pd.DataFrame:
    """`trials` with the cores each trial's server was given (`cpu_allowance_cores`, from the manifest) and every
    metric derivable from its columns (`loadlab.metrics.with_derived`); a column already there is kept."""
    if "label" in trials and "cpu_allowance_cores" not in trials:
        cores = {label: cpu_allowance_cores(manifest, label) for label in trials["label"].unique()}
        trials = trials.assign(cpu_allowance_cores=trials["label"].map(cores))
    return metrics.with_derived(trials)


def load_run(run: str | Path, raw_dir: Path = paths.RAW_DIR, processed_root: Path = paths.PROCESSED_DIR) -> dict:
    """A run's tables for a notebook: {'trials', 'latency', 'timeseries', 'throughput_timeline', 'manifest'}.

    `run` is a run id or a raw run folder. Tables are (re)built from raw when
    missing or older than the raw manifest. The trials carry what was recorded
    and, derived on load, every metric of `loadlab.metrics` whose inputs they
    have (`with_metrics`): the parquet files hold the recorded columns only.
    """
    from loadlab.rundir import find_run

    run_dir = Path(run) if Path(run).is_dir() else find_run(str(run), raw_dir)
    out = processed_dir_for(run_dir, processed_root)
    manifest_time = (run_dir / "manifest.json").stat().st_mtime
    fresh = _tables_version(out) == TABLES_VERSION and all(
        (out / f"{t}.parquet").exists() and (out / f"{t}.parquet").stat().st_mtime >= manifest_time for t in TABLES)
    tables = {t: pd.read_parquet(out / f"{t}.parquet") for t in TABLES} if fresh else process_run(run_dir, processed_root)
    tables["manifest"] = RunDirectory(run_dir).read_manifest()
    tables["trials"] = with_metrics(tables["trials"], tables["manifest"])
    return tables
