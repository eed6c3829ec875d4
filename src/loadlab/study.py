"""What a notebook calls: open its page, measure an experiment (or reuse a run) and get its tables.

    PAGE = open_page(NOTEBOOK, scale, run_id)
    study = measure_or_load(plans.json_api(scale), run_id=run_id)
    study.trials, study.latency, study.timeseries, study.missing

`run_id` None measures anew; "latest" reuses the newest complete run of the
same experiment (what `make report` does); anything else names a run. A
server whose image cannot be built here (Swoole without a PECL package) is
left out before the run starts, and `missing` says why, so the notebook can
say it too.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from loadlab import paths, rundir
from loadlab import tables as tidy_tables
from loadlab.errors import LoadlabError
from loadlab.experiment import Experiment
from loadlab.microbench_plans import TablePlan
from loadlab.servers import get_server
from loadlab.manifest import Manifest

# The trial columns a per-second or per-request table is read with (which condition, and whether it is evidence).
TRIAL_COLUMNS = ["trial", "label", "level", "status", "failure_reason", "loadgen_saturated"]


@dataclass
class Study:
    experiment: Experiment
    run_id: str
    run_dir: Path
    tables: dict
    missing: dict[str, str] = field(default_factory=dict)
    # How the notebook's plan today differs from the one the run was measured under (`plan_differences`); empty
    # for a run of today's plan.
    plan_changes: list[str] = field(default_factory=list)

    @property
    def trials(self) -> pd.DataFrame:
        return self.tables["trials"]

    @property
    def ok_trials(self) -> pd.DataFrame:
        trials = self.tables["trials"]
        return trials[trials["status"] == "ok"] if not trials.empty else trials

    @property
    def latency(self) -> pd.DataFrame:
        return self.tables["latency"]

    @property
    def timeseries(self) -> pd.DataFrame:
        return self.tables["timeseries"]

    @property
    def throughput_timeline(self) -> pd.DataFrame:
        return self.tables["throughput_timeline"]

    @property
    def manifest(self) -> Manifest:
        return self.tables["manifest"]

    def failures(self) -> pd.DataFrame:
        trials = self.tables["trials"]
        if trials.empty:
            return trials
        return trials[trials["status"] != "ok"][["trial", "condition", "failure_reason"]]

    def with_trial_columns(self, table: str) -> pd.DataFrame:
        """One of the run's tables ("timeseries", "latency", ...) with each row's trial's TRIAL_COLUMNS."""
        return self.tables[table].merge(self.trials[TRIAL_COLUMNS], on="trial")

    def series_at_top_level(self) -> pd.DataFrame:
        """The sampler's series (4 a second) of the trials at the run's highest level, with their TRIAL_COLUMNS and
        the names the over-time figures read (`memory_in_use_bytes`, `tasks`)."""
        series = self.with_trial_columns("timeseries")
        return series[series["level"] == series["level"].max()].rename(
            columns={"server_memory_in_use_bytes": "memory_in_use_bytes", "server_tasks": "tasks"})

    def open_file_limits(self) -> list[int]:
        """The open-file limits the server containers ran with (each trial's raw record), distinct and sorted."""
        limits = {rundir.read_json(self.run_dir / rundir.TRIALS / str(trial) / "trial.json").get("open_file_limit")
                  for trial in self.trials["trial"]}
        return sorted(limit for limit in limits if limit)


def buildable(experiment: Experiment, client, log=print) -> tuple[Experiment, dict[str, str]]:
    """The experiment without servers whose image cannot be built here, and why each is missing.

    Only an optional image whose input cannot be had (BuildInputUnavailable)
    is left out; any other build failure is raised, never hidden.
    """
    from loadlab.errors import BuildInputUnavailable
    from loadlab.harness import images

    kept, missing = [], {}
    for entry in experiment.servers:
        spec = get_server(entry.server)
        try:
            images.ensure_image(client, spec, entry.variant, log=log)
            kept.append(entry)
        except BuildInputUnavailable as unavailable:
            missing[entry.display_label()] = unavailable.reason
    if not kept:
        raise LoadlabError(f"no server of {experiment.name} can be built here: {missing}")
    return dataclasses.replace(experiment, servers=kept).validate(), missing


def ensure_aa_control(scale: str, raw_dir: Path = paths.RAW_DIR, progress: bool = True, log=print) -> Path:
    """The A/A control of this sitting (`loadlab.judgements.margins`): the run already measured, or one measured now.

    `loadlab notebooks` measures it once, in notebook 00, for every notebook of
    the sitting; a notebook measured alone measures its own here.
    """
    from loadlab import hostfacts, plans
    from loadlab.judgements.margins import aa_run_in_sitting

    found = aa_run_in_sitting(hostfacts.sitting(), raw_dir)
    if found is not None:
        return found
    log("no A/A control in this sitting yet: measuring it now (notebook 00's plan), so that this run's verdicts get "
        "a noise margin from their own sitting")
    return measure_or_load(plans.noise(scale), None, progress=progress, raw_dir=raw_dir, log=log).run_dir


# What a plan decides about its measurements; a run recorded under other values measured something else.
PLAN_FIELDS = ("servers", "load", "durations", "placement", "trials_per_condition", "profilers")


def plan_differences(experiment: Experiment, manifest: Manifest) -> list[str]:
    """What differs between a plan and the experiment a run recorded (its manifest), as a reader reads it:
    "load.route: /json -> /plaintext200", "server java-platform: JAVA_OPTS unset -> -XX:+UseZGC", over
    PLAN_FIELDS; empty when the run measured the plan as it stands. A server the run left out because its image
    could not be built here (annotated as missing) is not a difference: the page says so."""
    recorded_experiment = Experiment.from_record(manifest.parameters)
    missing = set(manifest.missing_servers)
    experiment = dataclasses.replace(experiment, servers=[entry for entry in experiment.servers
                                                          if entry.display_label() not in missing])
    plan, recorded = experiment.to_dict(), recorded_experiment.to_dict()
    changes = []
    for name in PLAN_FIELDS:
        before, after = recorded.get(name), plan.get(name)
        if before == after:
            continue
        if name == "servers":
            was = {entry.display_label(): _flat_entry(entry) for entry in recorded_experiment.servers}
            now = {entry.display_label(): _flat_entry(entry) for entry in experiment.servers}
            for label in sorted(set(was) | set(now)):
                if label not in was or label not in now:
                    changes.append(f"server {label}: {'added' if label in now else 'removed'}")
                    continue
                changes += [f"server {label}: {key} {_plain(was[label].get(key))} -> {_plain(now[label].get(key))}"
                            for key in sorted(set(was[label]) | set(now[label]))
                            if was[label].get(key) != now[label].get(key)]
        elif name == "durations":
            changes += _warm_up_differences(recorded_experiment, experiment)
        elif isinstance(before, dict) and isinstance(after, dict):
            changes += [f"{name}.{key}: {_plain(before.get(key))} -> {_plain(after.get(key))}"
                        for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key)]
        else:
            changes.append(f"{name}: {_plain(before)} -> {_plain(after)}")
    return changes


def _warm_up_differences(recorded: Experiment, plan: Experiment) -> list[str]:
    """The window's length, and each server's warm-up as its trials get it (`Experiment.warmup_bounds_s`): a JIT
    allowance that only the JVMs take is no difference for a run of JVMs alone."""
    changes = []
    if recorded.durations.duration_s != plan.durations.duration_s:
        changes.append(f"durations.duration_s: {recorded.durations.duration_s} -> {plan.durations.duration_s}")
    was = {entry.display_label(): recorded.warmup_bounds_s(entry) for entry in recorded.servers}
    for entry in plan.servers:
        label = entry.display_label()
        if label in was and was[label] != plan.warmup_bounds_s(entry):
            changes.append(f"server {label}: warm-up {_bounds_text(was[label])} -> {_bounds_text(plan.warmup_bounds_s(entry))}")
    return changes


def _bounds_text(bounds: tuple[int, int | None]) -> str:
    low, high = bounds
    return f"{low:g}-{high:g} s" if high is not None and high != low else f"{low:g} s"


def _flat_entry(entry) -> dict:
    """A server entry's fields with its settings as fields of their own (JAVA_OPTS beside cpu_quota)."""
    fields = dataclasses.asdict(entry)
    return {**{k: v for k, v in fields.items() if k != "settings"}, **(fields.get("settings") or {})}


def _plain(value) -> str:
    """A value as a reader reads it: no quotes or brackets."""
    if value is None or value == [] or value == {}:
        return "unset"
    if isinstance(value, (list, tuple)):
        return ", ".join(_plain(item) for item in value)
    if isinstance(value, dict):
        return ", ".join(f"{key} {_plain(item)}" for key, item in value.items())
    if isinstance(value, float) and not value.is_integer():
        # A measured capacity (req/s) is a plan's input: a page prints it as its tables do, not to 17 digits.
        return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.4g}"
    return str(value)


def measure_or_load(experiment: Experiment, run_id: str | None = None, progress: bool = True,
                    raw_dir: Path = paths.RAW_DIR, processed_root: Path = paths.PROCESSED_DIR, log=print,
                    aa_control: bool = False, missing_ok: bool = False) -> Study | None:
    """Measure `experiment` (run_id None) or load a run of it; `aa_control` also makes sure, when measuring, that
    this sitting has its A/A control (`ensure_aa_control`), which the verdicts on this run take their margins from.
    `missing_ok`: None, instead of an error, when run_id is "latest" and the experiment has no complete run (a
    page's supplement that the committed runs predate)."""
    if run_id == "latest":
        run_dir = rundir.latest_run(experiment.name, raw_dir)
        if run_dir is None and missing_ok:
            return None
        if run_dir is None:
            raise LoadlabError(f"no complete run of {experiment.name} yet: run the notebook with run_id=None first")
    elif run_id:
        run_dir = rundir.find_run(run_id, raw_dir)
    else:
        # Only measuring needs the engine; re-analysis reads raw files alone.
        from loadlab.harness import engine, runner

        experiment.validate(check_host=True)  # before anything is built or started
        client = engine.ensure_engine()
        if aa_control:
            from loadlab.plans import SCALE_NAMES

            scale = experiment.name.rsplit("-", 1)[-1]  # plans name experiments "<name>-<scale>"
            if scale not in SCALE_NAMES:
                raise LoadlabError(f"aa_control needs an experiment of the plans (named '<name>-<scale>', scale one "
                                   f"of {', '.join(SCALE_NAMES)}), got {experiment.name!r}")
            ensure_aa_control(scale, raw_dir, progress, log)
        runnable, missing = buildable(experiment, client, log=log)
        run_dir = runner.run_experiment(runnable, raw_dir=raw_dir, progress=progress, log=log,
                                        annotations={"missing_servers": missing}).path
    tables = tidy_tables.load_run(run_dir, raw_dir, processed_root)
    manifest = tables["manifest"]
    # A page's prose describes today's plan: a run of an earlier one is still re-analysed as the fact it is, but the
    # page says so at its top (pages.provenance), and for "latest" so does this line.
    plan_changes = plan_differences(experiment, manifest) if run_id else []
    if plan_changes and run_id == "latest":
        log(f"warning: the newest run of {experiment.name} ({Path(run_dir).name}) was measured under an earlier plan: "
            + "; ".join(plan_changes) + ". Measure it again (run_id=None) for today's plan.")
    recorded = Experiment.from_record(manifest.parameters)
    return Study(recorded, manifest.run_id, Path(run_dir), tables, manifest.missing_servers, plan_changes)


def recorded_manifest(name: str, run_id: str, raw_dir: Path = paths.RAW_DIR) -> Manifest | None:
    """The manifest of the run `measure_or_load` reads for experiment `name` and `run_id` ("latest" or a run id);
    None when there is no such run."""
    run_dir = rundir.latest_run(name, raw_dir) if run_id == "latest" else rundir.find_run(run_id, raw_dir)
    return rundir.RunDirectory(run_dir).read_manifest() if run_dir is not None else None


def measure_or_load_frame(name: str, measure, run_id: str | None = None, raw_dir: Path = paths.RAW_DIR,
                          parameters: dict | None = None) -> tuple[pd.DataFrame, str]:
    """For measurements that are one table (the microbenchmarks): measure and keep, or reuse.

    `measure()` returns the table of the tool's own records (one row per JSON
    line it printed). It is kept as data/raw/<name>/<run-id>/results.parquet
    with a manifest (provenance, parameters), so "latest" can re-analyse it
    without measuring. Returns (table, run id).
    """
    from loadlab.config import new_run_id
    from loadlab.rundir import RunDirectory, write_parquet_atomic

    if run_id is not None:
        run_dir = rundir.latest_run(name, raw_dir) if run_id == "latest" else rundir.find_run(run_id, raw_dir)
        if run_dir is None:
            raise LoadlabError(f"no complete run of {name} yet: run the notebook with run_id=None first")
        return pd.read_parquet(Path(run_dir) / "results.parquet"), Path(run_dir).name
    from loadlab.harness import provenance  # measuring only: re-analysis never needs the harness

    started, facts = rundir.now_utc(), provenance.collect()  # before measuring: the run's start and its speed index
    frame = measure()
    provenance.record_speed(facts, "end")
    run = RunDirectory.create(name, new_run_id(name), raw_dir)
    write_parquet_atomic(run.path / "results.parquet", frame)
    # One table, no trials: the manifest's trial keys stay out, as in the microbenchmark runs recorded so far.
    run.write_manifest(Manifest(
        run_id=run.run_id, experiment=name, status=rundir.STATUS_COMPLETE, created_utc=started,
        updated_utc=rundir.now_utc(), parameters=parameters or {}, provenance=facts,
        absent=frozenset({"conditions", "images", "runtime_versions", "annotations"}),
    ))
    return frame, run.run_id


def measure_or_load_table(plan: TablePlan, run_id: str | None = None, raw_dir: Path = paths.RAW_DIR
                          ) -> tuple[pd.DataFrame, str]:
    """`measure_or_load_frame` for a plan of `loadlab.microbench_plans`: the harness function it names is called
    (with the engine's client first where it needs one) only when measuring."""
    return measure_or_load_frame(plan.name, lambda: _measure_table(plan), run_id, raw_dir, plan.parameters)


def _measure_table(plan: TablePlan) -> pd.DataFrame:
    import importlib

    from loadlab.harness import engine

    module, function = plan.function.rsplit(".", 1)
    measure = getattr(importlib.import_module(f"loadlab.harness.{module}"), function)
    return measure(engine.ensure_engine(), **plan.arguments) if plan.needs_engine else measure(**plan.arguments)


@dataclass
class Page:
    """What a notebook's cells use, set up by its first call (`open_page`): where its figures go, the claims and
    their sources, and the provenance block at the top of the page, which `show` fills in at the end."""

    notebook: str
    figures: Path  # reports/figures/<notebook>/
    sources: dict  # source id -> claims.Source
    claims: dict  # claim id -> claims.Claim
    provenance: object  # pages.ProvenanceBlock
    # The figures this execution saved, by name: the page's record lists them, and the export removes any other
    # file in the page's figure folder (a figure the page no longer shows).
    saved_figures: list[str] = field(default_factory=list)

    def figure(self, figure, name: str, finding: str | None = None):
        """Save `figure` as <figures>/<name>.svg and .png (plots.save_figure lints it first); returns it to show,
        as the saved SVG with its alt text: `finding` (a sentence the page computed, what the figure shows)
        followed by what it plots (`plots.describe_figure`). A figure with neither cannot be described to a
        reader who cannot see it, and is refused."""
        from loadlab import plots

        saved = plots.save_figure(figure, name, self.figures)
        self.saved_figures.append(name)
        from loadlab.plots.lint import alt_text_problems

        alt = " ".join(part.strip() for part in (finding, plots.describe_figure(figure)) if part and part.strip())
        if alt_text_problems(alt):
            raise ValueError(f"figure {name!r} has no title, no labelled axis and no finding: nothing to say in its "
                             "alt text; give it a title or pass finding=")
        return plots.FigureImage(saved.svg.read_text(), alt)

    def introduce(self, study: Study, versions: bool = True) -> None:
        """A run's opening lines: its id, the runtimes' versions (`versions`), the servers left out and why, and
        the trials that failed."""
        from IPython.display import Markdown, display

        from loadlab import pages

        print("run:", study.run_id)
        if versions:
            display(pd.Series(pages.runtime_versions(study.run_dir), name="runtime version").to_frame())
        if study.missing:
            display(Markdown("**Left out (image cannot be built here):** "
                             + "; ".join(f"{k}: {v}" for k, v in study.missing.items())))
        display(study.failures())

    def summary(self, trials: pd.DataFrame, metrics: list[str], divisors: dict[str, float] | None = None,
                columns: dict[str, str] | None = None, note: bool = True) -> pd.DataFrame:
        """Show each condition's median [CI] of `metrics` (a metric divided by its factor in `divisors`, columns renamed by
        `columns`), and under it (`note`) what its trial count can support; the summary's numbers, for later cells."""
        from IPython.display import Markdown, display

        from loadlab import pages, stats

        summary = stats.condition_summary(trials, metrics)
        display(pages.format_summary(summary, metrics, divisors=divisors).rename(columns=columns or {}))
        spread = pages.spread_note(int(summary["trials_ok"].min())) if note and len(summary) else ""
        if spread:
            display(Markdown(f"*{spread}.*"))
        return summary

    def say(self, text: str) -> None:
        """Show `text` as Markdown; nothing when it is empty (a note that has nothing to say)."""
        from IPython.display import Markdown, display

        if text:
            display(Markdown(text))

    def record(self, verdicts: list) -> object:
        """Save the page's verdicts (reports/verdicts/<notebook>.json) and list them, to show."""
        from IPython.display import Markdown

        from loadlab import judgements, pages

        judgements.save_verdicts(verdicts, self.notebook)
        return Markdown(pages.verdict_list(verdicts))

    def show(self, runs, sources=None, verdicts: list | None = None) -> None:
        """Fill in the provenance block with the runs the page used; with `verdicts`, show each beside its claim, and
        the threats to validity of each claim (pages.threats)."""
        from IPython.display import HTML, Markdown, display

        from loadlab import pages

        self.provenance.show(runs, sources, figures=self.saved_figures)
        if verdicts is not None:
            display(HTML(pages.claim_table_html(pages.claim_rows(verdicts, self.claims))))
            threats = pages.threats_rows(verdicts, self.claims)
            if threats:
                display(Markdown("**Threats to validity.** Where this setup differs from the source's, claim by "
                                 "claim: the source's side from its setup, this side as the run recorded it, what "
                                 "the difference could do to the verdict, and whether this collection measured it."))
                display(HTML(pages.threats_html(threats)))


def open_page(notebook: str, scale: str, run_id: str | None, figures_dir: Path = paths.FIGURES_DIR) -> Page:
    """A notebook's first call: figures inline as SVG, tables printed as the reports print them, the claims read,
    and the provenance block's placeholder shown at the top of the page (filled in by `Page.show`)."""
    from loadlab import claims, pages

    _inline_svg_figures()
    pd.set_option("display.width", 200, "display.max_columns", 30)
    pages.use_report_display_options()  # tables print at most 4 significant digits
    sources, claimed = claims.load_claims()
    provenance = pages.ProvenanceBlock(notebook, scale, run_id)
    provenance.placeholder()
    return Page(notebook, Path(figures_dir) / notebook, sources, claimed, provenance)


def _inline_svg_figures() -> None:
    """What `%matplotlib inline` does, from code, and figures embedded as SVG (vector graphics in the HTML reports).
    Outside IPython (a script, a test) nothing changes."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    shell.enable_matplotlib("inline")
    set_matplotlib_formats("svg")
