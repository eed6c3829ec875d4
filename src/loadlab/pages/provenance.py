"""The block every report page opens with: what was run, where, when, with what, and how it differs.

Everything comes from the runs' raw folders (manifest.json, each trial's
health.json) and from the checkout rendering the page; nothing is typed by
hand. A notebook shows a placeholder at its top (`ProvenanceBlock.placeholder`)
and fills it in from its last cell (`ProvenanceBlock.show`), once it knows
which runs it measured or re-analysed, so the block is first on the page in
JupyterLab and in the exported HTML alike.
"""

from __future__ import annotations

import datetime as dt
import gzip
import html
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from loadlab import hostfacts, paths, rundir
from loadlab.claims import Source
from loadlab.contract.verify import LISTEN_QUEUE_CHECK
from loadlab.experiment import trials_text
from loadlab.rundir import write_json_atomic

from .numbers import format_number

# What a source's setup text talks about, tried in this order on each clause of it.
ASPECTS = (
    ("hardware and placement", re.compile(r"\bcores?\b|\d+\s*GB\b|\bi[3579]-|\bpinned\b", re.I)),
    ("servers and runtimes", re.compile(
        r"\bGo\b|OpenJDK|\bJava\b|\bRust\b|tokio|\bPHP\b|Swoole|axum|net/http|[Tt]hread|goroutine|\bpool\b", re.I)),
    ("load and requests", re.compile(r"\bwrk\b|\bhey\b|\bJMH\b|request|req/s|connection|concurrent|GET\s|JSON|\bload\b",
                                     re.I)),
    ("window and repetitions", re.compile(r"\d+\s*s\b|-d\d+s|\bruns?\b|median|averag|seconds", re.I)),
)  # fmt: skip
OTHER_ASPECT = "other"
COLLECTION = "the collection"  # the index's block: every page's runs, no page of its own
RECORD_DIR = "provenance"  # under reports/: which runs each page used, for the index
# The open dataset's page under reports/ (pages.dataset writes it, with an anchor "run-<id>" per run; pages.dataset
# reads this module's records, so the name is repeated here, and tests/test_links.py keeps the two equal).
DATASET_PAGE = "data/index.html"
PLACEHOLDER_TEXT = ("Provenance: this block is filled in by the notebook's last cell, which has not run "
                    "(yet, or the notebook stopped before it).")  # fmt: skip
STYLE = (
    "<style>.loadlab-provenance{border:1px solid #bbb;background:#f7f7f7;padding:.5em .8em;margin:.3em 0 1em}"
    ".loadlab-provenance table{border-collapse:collapse;margin:.3em 0;font-size:90%}"
    ".loadlab-provenance td,.loadlab-provenance th{border:1px solid #ccc;padding:.15em .4em;text-align:left;"
    "vertical-align:top;text-align:left !important}.loadlab-provenance p{margin:.3em 0}"
    ".loadlab-earlier-plan{border-left:4px solid #d95f02;background:#fff3e6;padding:.3em .6em}</style>"
)


def short_version(runtime: str | None, version: str | None, health: Mapping) -> str | None:
    """A runtime's version as a reader names it.

    php-swoole's /health reports PHP's version as ``runtime_version`` and
    Swoole's own as ``swoole_version``; the runtime under test is Swoole, so
    its version leads ("Swoole 6.1.9 on PHP 8.4.24"). rustc's build notes in
    parentheses are dropped; a bare number gets its runtime's name.
    """
    if not version:
        return None
    if health.get("swoole_version"):
        return f"Swoole {health['swoole_version']} on PHP {version}"
    version = version.split(" (", 1)[0]
    if runtime and not version.lower().startswith(runtime.lower()[:2]):
        return f"{runtime} {version}"
    return version


def _first_per_label(run_dir: Path, manifest, filename: str, read) -> dict[str, str]:
    """{label: read(path)} from the first trial of each label whose file `filename` exists and reads as a value
    (`read` answers None or "" for none), in trial order."""
    labels = {c["condition"]: c.get("label") for c in manifest.conditions}
    found: dict[str, str] = {}
    for number, trial in sorted(manifest.trials.items(), key=lambda item: int(item[0])):
        label = labels.get(trial.condition)
        path = run_dir / rundir.TRIALS / str(number) / filename
        if label is None or label in found or not path.exists():
            continue
        value = read(path)
        if value:
            found[label] = value
    return found


def runtime_versions(run_dir: Path, manifest=None) -> dict[str, str]:
    """{label: version} from the trials' /health answers (the manifest's copy predates the Swoole fix). `manifest`:
    the run's, when the caller has read it already."""
    run_dir = Path(run_dir)
    manifest = manifest or rundir.RunDirectory(run_dir).read_manifest()

    def version(path: Path) -> str | None:
        health = rundir.read_json(path)
        return short_version(health.get("runtime"), health.get("runtime_version"), health)

    versions = _first_per_label(run_dir, manifest, "health.json", version)
    if not versions:  # a run without health answers on disk: the manifest's record is all there is
        versions = dict(manifest.runtime_versions)
    return versions


def listen_queues(run_dir: Path, manifest=None) -> dict[str, str]:
    """{label: what the kernel reported of the server's listen queue} from the contract check each trial ran
    before its load (its verify report; the first trial of each label). Empty for a run measured before the check
    existed (2026-11-29) or where it could not be taken (the server in another network namespace). `manifest`:
    the run's, when the caller has read it already."""
    run_dir = Path(run_dir)

    def queue(path: Path) -> str | None:
        report = json.loads(gzip.decompress(path.read_bytes()))
        return next((str(check.get("detail") or "") + ("" if check.get("passed") else " (failed)")
                     for check in report.get("results") or [] if check.get("name") == LISTEN_QUEUE_CHECK), None)

    return _first_per_label(run_dir, manifest or rundir.RunDirectory(run_dir).read_manifest(), rundir.VERIFY_REPORT,
                            queue)


@dataclass
class RunFacts:
    """What one run folder says about how it was measured."""

    run_id: str
    experiment: str
    created_utc: str | None
    updated_utc: str | None
    commit: str | None
    dirty: bool | None
    host: dict
    engine: dict
    parameters: dict
    runtime_versions: dict = field(default_factory=dict)
    trial_runs: bool = True  # False: a microbenchmark, one table of the tool's own records
    connection_limits: dict = field(default_factory=dict)  # hostfacts.connection_limits; runs from 2026-11-25 on
    sitting: dict = field(default_factory=dict)  # hostfacts.sitting(): id, boot id, machine fingerprint
    host_speed: dict = field(default_factory=dict)  # {"start"/"end": hostfacts.host_speed_index()}; from 2026-11-28
    listen_queues: dict = field(default_factory=dict)  # listen_queues(): {label: the kernel's listen queue bound}

    @property
    def scale(self) -> str | None:
        from loadlab.rundir import run_scale

        return run_scale(self.run_id)


def _run_dir(run) -> Path:
    if hasattr(run, "run_dir"):
        return Path(run.run_dir)
    if isinstance(run, Path) or (isinstance(run, str) and "/" in run):
        return Path(run)
    return rundir.find_run(str(run), paths.RAW_DIR)


def run_facts(run) -> RunFacts:
    """The facts of a run given as a Study, a raw run folder or a run id."""
    run_dir = _run_dir(run)
    manifest = rundir.RunDirectory(run_dir).read_manifest()
    provenance = manifest.provenance
    trial_runs = not (run_dir / "results.parquet").exists()
    return RunFacts(
        run_id=manifest.run_id, experiment=manifest.experiment,
        created_utc=manifest.created_utc, updated_utc=manifest.updated_utc,
        commit=provenance.get("git_commit"), dirty=provenance.get("git_dirty"), host=provenance.get("host") or {},
        engine=provenance.get("engine") or {}, parameters=manifest.parameters,
        runtime_versions=runtime_versions(run_dir, manifest) if trial_runs else {}, trial_runs=trial_runs,
        connection_limits=provenance.get("connection_limits") or {},
        sitting=provenance.get("sitting") or {}, host_speed=provenance.get("host_speed") or {},
        listen_queues=listen_queues(run_dir, manifest) if trial_runs else {},
    )  # fmt: skip


def _when(start: str | None, end: str | None) -> str:
    if not start:
        return "unknown"
    day, start_time = start[:10], start[11:16]
    end_time = end[11:16] if end and end[:10] == day else (end[:16].replace("T", " ") if end else "")
    return f"{day} {start_time}" + (f"\N{EN DASH}{end_time}" if end_time and end_time != start_time else "") + " UTC"


def _commit(commit: str | None, dirty: bool | None) -> str:
    if not commit:
        return "unknown"
    state = {True: "with uncommitted changes", False: "clean"}.get(dirty, "state unknown")
    return f"{commit[:10]} ({state})"


def connection_mode(load: Mapping) -> str:
    """Keep-alive or a new connection per request, as the run recorded it."""
    if load.get("connection_mode") == "per-request":
        return "a new connection per request (every request asks `Connection: close`)"
    return "keep-alive (each connection reused for many requests)"


def _load_text(parameters: Mapping) -> str:
    load = parameters.get("load") or {}
    closed = load.get("mode", "closed") == "closed"
    fractions = load.get("capacity_fractions") or []
    levels = load.get("connections") if closed else (fractions or load.get("rate_rps"))
    basis = "the slowest server's capacity, offered to every server" if load.get("capacity_basis") == "slowest" \
        else "each server's capacity offered"
    unit = "connections" if closed else (f"of {basis}" if fractions else "req/s offered")
    tool = "closed loop (wrk)" if closed else f"open loop ({load.get('open_loop_generator') or 'vegeta'})"
    pipeline = f", pipelined {load['pipeline_depth']} deep" if load.get("pipeline_depth", 1) > 1 else ""
    texts = [format_number(level) for level in levels or []]
    level_text = ", ".join(texts[:-1]) + " and " + texts[-1] if len(texts) > 2 else " and ".join(texts)
    return f"{tool}, GET {load.get('route', '?')}, {level_text} {unit}{pipeline}"


def _placement_text(parameters: Mapping) -> str:
    placement = parameters.get("placement") or {}
    quota = placement.get("cpu_quota")
    own = [f"{entry.get('label') or entry.get('server')} {format_number(entry['cpu_quota'])} CPU"
           for entry in parameters.get("servers") or [] if entry.get("cpu_quota")]
    return (f"server on CPU {placement.get('server_cpus', '?')}"
            + (f" with a quota of {format_number(quota)} CPU" if quota else "")
            + (f" (quotas: {', '.join(own)})" if own else "")
            + (f", granted in {format_number(placement['cpu_period_ms'])} ms CFS periods"
               if placement.get("cpu_period_ms") else "")
            + f", loadgen on CPU {placement.get('loadgen_cpus', '?')}, "
            f"memory limit {format_number(placement.get('memory_limit_mib', float('nan')))} MiB")  # fmt: skip


def _warmup_text(durations: Mapping) -> str:
    low, high = durations.get("warmup_s"), durations.get("warmup_max_s")
    jit = durations.get("jit_warmup_max_s")
    jit_text = f"; up to {format_number(jit)} s for a JIT runtime (the JVMs)" if jit and jit != high else ""
    if high and high != low:
        return f"{format_number(low)} to {format_number(high)} s, until throughput is steady{jit_text} (discarded)"
    return f"{format_number(low)} s{jit_text} (discarded)"


def run_row(facts: RunFacts) -> dict[str, str]:
    """One run as a row of the provenance table."""
    row = {"run": facts.run_id, "measured": _when(facts.created_utc, facts.updated_utc),
           "commit": _commit(facts.commit, facts.dirty)}  # fmt: skip
    parameters = facts.parameters
    if not facts.trial_runs:
        row.update({"trials per condition": "microbenchmark: a fresh process per repetition",
                    "window": "", "warm-up": "", "placement": "", "connections": "",
                    "load": _microbenchmark_text(parameters),
                    "runtime versions": ""})  # fmt: skip
        return row
    durations = parameters.get("durations") or {}
    row.update({
        "trials per condition": f"{trials_text(parameters, short=True)}, a fresh container each, order randomized",
        "window": f"{format_number(durations.get('duration_s', float('nan')))} s",
        "warm-up": _warmup_text(durations),
        "placement": _placement_text(parameters),
        "connections": connection_mode(parameters.get("load") or {}),
        "load": _load_text(parameters),
        "runtime versions": "; ".join(f"{label}: {version}" for label, version in facts.runtime_versions.items()),
    })  # fmt: skip
    return row


def connection_ceiling_text(limits: Mapping) -> str:
    """"; at most 19,936 connections per process on this host (open files: 20,000, ...)" or "" if not recorded."""
    if not limits.get("max_connections"):
        return ""
    parts = [f"open files {format_number(limits['open_files_hard'])}" if limits.get("open_files_hard") else "",
             f"client ports per target address {format_number(limits['ephemeral_ports'])}"
             if limits.get("ephemeral_ports") else ""]
    return (f"; at most {format_number(limits['max_connections'])} connections per process on the measuring host "
            f"({', '.join(part for part in parts if part)})")


def hardware_text(facts: RunFacts) -> str:
    host, engine = facts.host, facts.engine
    memory = engine.get("memory_bytes")
    parts = [f"{host.get('cpu_model', 'unknown CPU')}, {host.get('cpu_count', '?')} CPUs"]
    if memory:
        parts.append(f"{format_number(memory / 2**30, 3)} GiB")
    parts.append(f"Linux {host.get('kernel', '?')}")
    if engine.get("docker_version"):
        parts.append(f"Docker {engine['docker_version']} (cgroup v{engine.get('cgroup_version', '?')})")
    return ", ".join(parts)


def _microbenchmark_text(parameters: Mapping) -> str:
    return ", ".join(f"{key.replace('_', ' ')} " + (" and ".join(map(format_number, value)) if isinstance(value, list)
                                                    else format_number(value)) for key, value in parameters.items())  # fmt: skip


def this_setup(facts: RunFacts) -> dict[str, str]:
    """This run's setup in the aspects a source's setup is split into."""
    parameters = facts.parameters
    if not facts.trial_runs:
        return {"hardware and placement": hardware_text(facts), "servers and runtimes": "",
                "load and requests": f"microbenchmark ({facts.experiment}): {_microbenchmark_text(parameters)}",
                "window and repetitions": "a fresh process per repetition, medians across repetitions",
                OTHER_ASPECT: ""}  # fmt: skip
    durations = parameters.get("durations") or {}
    return {
        "hardware and placement": f"{hardware_text(facts)}; {_placement_text(parameters)}",
        "servers and runtimes": "; ".join(f"{label}: {version}" for label, version in facts.runtime_versions.items()),
        "load and requests": f"{_load_text(parameters)}; {connection_mode(parameters.get('load') or {})}"
                             + connection_ceiling_text(facts.connection_limits),
        "window and repetitions": (f"{format_number(durations.get('duration_s', float('nan')))} s window after "
                                   f"{_warmup_text(durations)} warm-up; {trials_text(parameters)}, medians with 95% CIs"),
        OTHER_ASPECT: "",
    }  # fmt: skip


def source_clauses(setup: str) -> list[tuple[str, str]]:
    """[(aspect, clause)] of a source's setup text, split at ";" and at sentence ends, in order."""
    clauses = [c.strip() for part in re.split(r";|\.\s+", setup) for c in [part] if c.strip()]
    result = []
    for clause in clauses:
        aspect = next((name for name, pattern in ASPECTS if pattern.search(clause)), OTHER_ASPECT)
        result.append((aspect, clause.rstrip(".")))
    return result


def setup_comparison(source: Source, facts: RunFacts) -> list[tuple[str, str, str]]:
    """[(aspect, the source's setup, this run's)]: every clause of the source's setup, none dropped."""
    by_aspect: dict[str, list[str]] = {}
    for aspect, clause in source_clauses(source.setup):
        by_aspect.setdefault(aspect, []).append(clause)
    ours = this_setup(facts)
    names = [name for name, _ in ASPECTS] + [OTHER_ASPECT]
    return [(name, "; ".join(by_aspect.get(name, [])), ours[name]) for name in names
            if by_aspect.get(name) or ours[name]]  # fmt: skip


def _table(header: list[str], rows: Iterable[Iterable[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _mode(facts: list[RunFacts], started_utc: str, run_id_parameter: str | None, notebook: str) -> str:
    """Measured now or re-analysed, from when the runs were measured against when this page started."""
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    fresh = [f for f in facts if f.created_utc and f.created_utc >= started_utc]
    earlier = [f for f in facts if f not in fresh]
    first = min((f.created_utc for f in earlier if f.created_utc), default=None)
    last = max((f.updated_utc or f.created_utc for f in earlier if f.created_utc), default=None)
    parameter = f" (run_id {html.escape(str(run_id_parameter))})" if run_id_parameter else ""
    if facts and not earlier:
        return f"<b>Measured now</b>: every run below was measured by this execution of {html.escape(notebook)}"
    if fresh:
        return (f"<b>Partly measured now</b>: {len(fresh)} run(s) by this execution, the others re-analysed from "
                f"{html.escape(_when(first, last))}{parameter}")  # fmt: skip
    return f"<b>Re-analysed</b> on {now} from runs measured {html.escape(_when(first, last))}{parameter}"


def provenance_html(notebook: str, scale: str, run_id_parameter: str | None, runs: Iterable,
                    sources: Mapping[Source, object] | None = None, started_utc: str | None = None,
                    runs_folded: bool = False) -> str:
    """The block's HTML. `runs`: Studies, raw folders or run ids; `sources`: {Source: the run judged on it}.
    `runs_folded`: the runs' table behind a <details> line that names how many (the index, whose block covers
    every run and would otherwise push the verdicts a screen down).

    `started_utc` (ISO time, default now): when the page's execution began; a
    run created after it was measured by this execution, any other re-analysed.
    """
    runs = list(runs)
    facts = [run_facts(run) for run in runs]
    started_utc = started_utc or dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    mode = _mode(facts, started_utc, run_id_parameter, notebook)
    analysis = hostfacts.git_state()
    parts = [
        STYLE,
        '<div class="loadlab-provenance">',
        f"<p>{mode}, scale <b>{html.escape(scale)}</b>. Page rendered at commit "
        f"{html.escape(_commit(analysis['git_commit'], analysis['git_dirty']))}.</p>",
    ]
    if facts:
        parts.append(sitting_html(facts, analysis))
    for run in runs:
        changes = getattr(run, "plan_changes", None)
        if changes:
            parts.append(
                f'<p class="loadlab-earlier-plan"><b>Measured under an earlier plan.</b> Run '
                f"{html.escape(str(getattr(run, 'run_id', run)))} was measured before this notebook's plan changed "
                f"({html.escape('; '.join(changes))}). The prose describes today's plan; this run's numbers and "
                "verdicts are the earlier plan's. Measure again (run_id=None) for today's.</p>")
    if facts:
        rows = [run_row(f) for f in facts]
        header = list(rows[0])
        table = _table(header, ([row.get(h, "") for h in header] for row in rows))
        hardware = f"<p>Hardware (as the first run recorded it): {html.escape(hardware_text(facts[0]))}.</p>"
        if runs_folded:
            table = (f"<details><summary>The {len(rows)} runs behind these pages: when, at which commit, and how "
                     f"each was measured</summary>{table}</details>")
        parts += [table, hardware]
    parts.append(data_links_html(notebook, [f.run_id for f in facts]))
    for source, run in (sources or {}).items():
        comparison = setup_comparison(source, run_facts(run))
        parts.append(f"<p><b>{html.escape(source.id)}</b>, {html.escape(source.title)}: its setup beside this one</p>")
        parts.append(_table(["aspect", f"{source.id} (claims.yaml)", "here"], comparison))
    parts.append("</div>")
    return "\n".join(parts)


def sitting_html(facts: list[RunFacts], rendered_git_state: Mapping) -> str:
    """The one-sitting rule's sentence (pages.sitting) and the host speed index of the runs."""
    from .sitting import reference_problems, sitting_sentence, speed_lines

    def items(lines: list[str]) -> str:
        return "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in lines) + "</ul>" if lines else ""

    problems = reference_problems(facts, rendered_git_state)
    rule = (f"<p><b>Not one sitting</b> (one machine, one commit, clean, in one sitting is the rule):</p>"
            f"{items(problems)}" if problems else f"<p><b>{html.escape(sitting_sentence(facts, rendered_git_state))}</b></p>")
    head, *lines = speed_lines(facts)
    return rule + f"<p>{html.escape(head)}</p>" + items(lines)


def data_links_html(notebook: str, run_ids: Iterable[str]) -> str:
    """Where the page's data is, as links inside reports/ (they hold when the folder is hosted alone): each run's
    row in the open dataset, the page's verdicts, its provenance record and its executed notebook when they exist."""
    reports = Path(paths.REPORTS_DIR)
    links = [f'<a href="{DATASET_PAGE}">the open dataset</a> (every trial, verdict, noise margin and run behind '
             "these pages, as CSV and parquet, with a data dictionary)"]
    if notebook != COLLECTION:  # the index lists every run, each linked to its row, further down
        runs = [f'<a href="{DATASET_PAGE}#run-{html.escape(run)}">{html.escape(run)}</a>' for run in run_ids]
        links += ["each run's row in it: " + ", ".join(runs)] if runs else []
        # The provenance record is written right after this block is shown (ProvenanceBlock.show); the verdicts
        # and the executed notebook are linked where they exist (a page without claims has no verdicts).
        links.append(f'<a href="{RECORD_DIR}/{html.escape(notebook)}.json">which runs it used</a>')
        links += [f'<a href="{html.escape(target)}">{name}</a>' for name, target in (
            ("its verdicts", f"verdicts/{notebook}.json"), ("the executed notebook", f"notebooks/{notebook}.ipynb"))
            if (reports / target).exists()]
    return "<p>Data: " + "; ".join(links) + ".</p>"


class ProvenanceBlock:
    """The page's provenance block: a placeholder at the top, filled in by the last cell."""

    def __init__(self, notebook: str, scale: str, run_id: str | None):
        self.notebook, self.scale, self.run_id = notebook, scale, run_id
        self.display_id = f"loadlab-provenance-{notebook}"
        # Runs created after this moment were measured by this execution (see provenance_html).
        self.started_utc = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")

    def placeholder(self) -> None:
        from IPython.display import HTML, display

        display(HTML(f'<div class="loadlab-provenance"><p>{html.escape(PLACEHOLDER_TEXT)}</p></div>'),
                display_id=self.display_id)  # fmt: skip

    def show(self, runs: Iterable, sources: Mapping[Source, object] | None = None,
             figures: Iterable[str] | None = None) -> None:
        """Replace the placeholder with the block (in JupyterLab and in the executed notebook's saved output).

        Also records which runs the page used (reports/provenance/<notebook>.json), for the index page and the
        dataset, and the names of the `figures` it saved, for the export to remove any other (report).
        """
        from IPython.display import HTML, display

        runs = [run for run in runs if run is not None]  # a run the scale left out (plans.measured_at)
        block = HTML(provenance_html(self.notebook, self.scale, self.run_id, runs, sources, self.started_utc))
        display(block, display_id=self.display_id, update=True)
        write_json_atomic(paths.REPORTS_DIR / RECORD_DIR / f"{self.notebook}.json", {
            "notebook": self.notebook, "scale": self.scale, "run_id_parameter": self.run_id,
            "started_utc": self.started_utc, "runs": [_run_dir(run).name for run in runs],
            "sources": {source.id: _run_dir(run).name for source, run in (sources or {}).items()},
            **({"figures": sorted(set(figures))} if figures is not None else {}),
        })  # fmt: skip


def read_records(reports_dir: Path | None = None) -> list[dict]:
    """What each executed page recorded about its runs (ProvenanceBlock.show), in notebook order."""
    directory = Path(reports_dir or paths.REPORTS_DIR) / RECORD_DIR
    return [rundir.read_json(path) for path in sorted(directory.glob("*.json"))]
