"""Threats to validity, claim by claim: where this collection's setup differs from the source's, what the
difference could do to the verdict, and whether the collection measured it.

The facts come from two places only, so the table cannot drift from the provenance block:
- the source's side is `SOURCE_SETUPS`, each source's setup (claims.yaml's `setup` text) split into the aspects
  below, word for word where the source gives them;
- this collection's side is read from what the verdict's run recorded (its manifest: placement, load, window,
  server settings, profilers; its trials' runtime versions), by `RECORDED`. A run that does not carry a fact an
  aspect names is an error (`MissingFact`), not an empty cell: tests/test_threats.py reads every committed verdict.

What a difference could do (`DIRECTIONS`) and where the collection measured it (`MEASURED_BY`) are this
collection's reasoning, written once per source and aspect.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable, Iterable, Mapping

from loadlab.experiment import trials_text
from loadlab.judgements.regime import CPU_BOUND, CPU_BOUND_PCT, WAITING, comparison_regimes, regime_differences, regime_text

from .claim_table import _field
from .provenance import RunFacts, _load_text, _placement_text, connection_mode, hardware_text, run_facts

ASPECTS = ("cores and placement", "load", "listen queue", "window", "runtime versions", "JVM flags",
           "profilers attached", "in-process or over HTTP")
REGIME_ASPECT = "regime"  # a row of its own after ASPECTS: measured per verdict, not read from the run's setup

# No source states the listen queue (the backlog a server passes to listen(2), capped by net.core.somaxconn);
# where the source names its runtimes, their defaults are said beside it (servers/CONTRACT.md lists them).
LISTEN_QUEUE_NOT_STATED = "not stated"

SOURCE_SETUPS: dict[str, dict[str, str]] = {
    "S1": {"cores and placement": "4 cores, 8 GB, each server pinned to one core",
           "load": "wrk -t4 -c100000 -d30s: 100,000 concurrent short-lived requests, 200-byte body",
           "listen queue": LISTEN_QUEUE_NOT_STATED + ": left at each runtime's own, Go's net/http asks the kernel's "
                           "net.core.somaxconn and tokio's TcpListener::bind 1,024",
           "window": "30 s, metrics averaged over seconds 15-25",
           "runtime versions": "Go 1.22, OpenJDK 21, Rust tokio 1.37",
           "JVM flags": "ZGC, -Xmx512m",
           "profilers attached": "none stated (flame graphs taken in the same runs)",
           "in-process or over HTTP": "over HTTP"},
    "S2": {"cores and placement": "4 cores (not stated further)",
           "load": "2,000 req/s offered, each request 10 ms of CPU then 5 ms of sleep",
           "window": "60 s",
           "runtime versions": "Go (version not stated)",
           "profilers attached": "gctrace and pprof implied by the GC and scheduler numbers",
           "in-process or over HTTP": "a server, load over HTTP implied"},
    "S3": {"cores and placement": "4 cores, 8 GB",
           "load": "hey -n 100000 -c 256, GET /api/users (10 users as JSON)",
           "listen queue": LISTEN_QUEUE_NOT_STATED + ": left at each runtime's own, Go's net/http asks the kernel's "
                           "net.core.somaxconn and axum's tokio TcpListener::bind 1,024",
           "window": "100,000 requests; 3 runs, median",
           "runtime versions": "Go 1.22 net/http, Rust 1.78 axum on tokio",
           "profilers attached": "none stated",
           "in-process or over HTTP": "over HTTP"},
    "S4": {"cores and placement": "4 cores, 8 GB",
           "load": "wrk -t4 -c400 -d30s, JSON echo after 10 ms of simulated I/O",
           "listen queue": LISTEN_QUEUE_NOT_STATED,
           "window": "30 s; 3 runs, median",
           "runtime versions": "Go 1.22, PHP 8.2 with Swoole 5.1.3",
           "profilers attached": "none stated",
           "in-process or over HTTP": "over HTTP"},
    "S5": {"cores and placement": "i7-13700K, 32 GB",
           "load": "10,000 threads each computing one square root, then counting down a latch",
           "window": "JMH iterations (not stated)",
           "runtime versions": "OpenJDK 21.0.2",
           "JVM flags": "JMH defaults (not stated)",
           "profilers attached": "none stated",
           "in-process or over HTTP": "in-process (JMH)"},
}

# The regime the source's servers were in (judgements.regime), as its setup lets one know it; "not stated" otherwise.
# This collection's side is measured per trial and shown in the threats table's "regime" row.
SOURCE_REGIMES: dict[str, tuple[str | None, str]] = {
    "S1": (None, "not stated"),
    "S2": (CPU_BOUND, "CPU-bound by design: 2,000 req/s of 10 ms CPU work is 20 cores' work offered to 4"),
    "S3": (None, "not stated"),
    "S4": (WAITING, "waiting: each request sleeps 10 ms (simulated I/O), 400 connections on 4 cores"),
    "S5": (None, "not stated (in-process)"),
}
REGIME_DIRECTION = ("a server short of CPU answers later and serves fewer requests than one waiting on its sleeps: a "
                    "ratio across regimes, or in another regime than the source's, measures something else")
REGIME_MEASURED = f"each trial's server CPU against its allowance (CPU-bound at {CPU_BOUND_PCT:g}% or more)"

LISTEN_QUEUE_DIRECTION = ("a runtime left at a small default queue drops handshakes when connections arrive "
                          "faster than it accepts them; each costs its client a SYN retransmission (1 s, then 3 s), "
                          "which reads as that runtime's tail latency and lost throughput, not its model's")
# What a difference in each aspect could do to a verdict. Ratios are judged, not absolute numbers, so a
# difference matters where it moves one runtime more than the other.
DIRECTIONS: dict[tuple[str, str], str] = {
    ("S1", "cores and placement"): "one core, or a quota of it, caps throughput and makes CPU a share of what the "
                                   "server was given; a runtime that would spread over the source's cores loses more",
    ("S1", "load"): "fewer connections than the source's 100,000 (this machine's open-file limit): memory and "
                    "threads at 100,000 are judged by their slope, not measured there; a thread per request grows most",
    ("S1", "listen queue"): LISTEN_QUEUE_DIRECTION,
    ("S3", "listen queue"): LISTEN_QUEUE_DIRECTION,
    ("S4", "listen queue"): LISTEN_QUEUE_DIRECTION,
    ("S1", "window"): "a shorter window sees less GC and heap growth; it favours the JVM's memory",
    ("S1", "runtime versions"): "newer Go, JDK and tokio may be faster or leaner than the source's",
    ("S1", "JVM flags"): "another GC or heap bound changes the JVM's RSS and pauses directly",
    ("S1", "profilers attached"): "a profiler in the window costs the server CPU and can lengthen its tail",
    ("S2", "cores and placement"): "fewer cores than the source's: rates are scaled to the cores given (100 req/s "
                                   "of 10 ms work a core), so overload is the same multiple of capacity",
    ("S2", "load"): "the offered rate is the same multiple of capacity as S2's; absolute rates are not comparable",
    ("S2", "profilers attached"): "gctrace and runtime metrics cost little; the scheduler probes (uprobes) more",
    ("S2", "in-process or over HTTP"): "over HTTP the backlog waits in the kernel's listen queue, not in the "
                                       "process, so memory and goroutines grow less than in-process",
    ("S3", "cores and placement"): "a quota caps throughput and CPU (the ratio of two capped servers can shrink); "
                                   "memory is not capped",
    ("S3", "window"): "a few seconds' window against the source's 100,000 requests: a slow start or a late GC weighs "
                      "more or less; medians over 6 trials, not 3 runs",
    ("S4", "window"): "shorter windows than the source's 30 s see less heap growth and fewer GC cycles: memory peaks "
                      "can be lower for both",
    ("S3", "runtime versions"): "other Go, Rust and axum versions than the source's can move throughput either "
                                "way",
    ("S4", "cores and placement"): "on one core Swoole's single worker and Go's scheduler compete alike; on 4, Go "
                                   "would spread and Swoole would need 4 workers",
    ("S4", "load"): "a closed loop's mean latency is connections / throughput: latency is judged on the open "
                    "loop at a stated fraction of capacity instead",
    ("S4", "runtime versions"): "a newer Swoole and PHP than the source's can be faster or leaner",
    ("S5", "cores and placement"): "fewer cores than the source's: fewer carrier threads for virtual threads, and "
                                   "platform threads contend for fewer cores",
    ("S5", "runtime versions"): "another JDK 21 update can start threads faster or slower; JDK 25 changes pinning",
    ("S5", "in-process or over HTTP"): "in-process here too: fresh JVMs per repetition instead of JMH forks",
}

LISTEN_QUEUE_MEASURED = ("every trial's listen overflows (listen_overflows: handshakes the kernel dropped in its "
                         "window), beside its latency")
# Where the collection measured what a difference does ("" : not measured).
MEASURED_BY: dict[tuple[str, str], str] = {
    ("S1", "load"): "01's keep-alive extension (connections held for the window)",
    ("S1", "cores and placement"): "00's capacity on a whole core",
    ("S1", "profilers attached"): "06's profiler overhead (each profiler on and off)",
    ("S1", "listen queue"): LISTEN_QUEUE_MEASURED,
    ("S3", "listen queue"): LISTEN_QUEUE_MEASURED,
    ("S4", "listen queue"): LISTEN_QUEUE_MEASURED,
    ("S2", "in-process or over HTTP"): "02 judges the in-process program; the HTTP run (full scale) is its extension",
    ("S2", "profilers attached"): "06's profiler overhead (uprobes)",
    ("S5", "runtime versions"): "05 runs JDK 21 and JDK 25",
}


class MissingFact(KeyError):
    """A run that does not carry a fact its threats table names."""


def _parameter(facts: RunFacts, *path: str):
    value = facts.parameters
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            raise MissingFact(f"run {facts.run_id} records no {'.'.join(path)}")
        value = value[key]
    return value


def _jvm_flags(facts: RunFacts) -> str:
    servers = _parameter(facts, "servers")
    flags = sorted({(entry.get("settings") or {}).get("JAVA_OPTS") or "the server's default (-XX:+UseG1GC)"
                    for entry in servers if entry.get("server") == "java-threads"})
    return "; ".join(flags) if flags else ""


def _profilers(facts: RunFacts) -> str:
    names = set(_parameter(facts, "profilers"))
    names |= {name for entry in _parameter(facts, "servers") for name in entry.get("profilers") or []}
    return ", ".join(sorted(names)) if names else "none"


def _window(facts: RunFacts) -> str:
    if not facts.trial_runs:
        return "a fresh process per repetition"
    return (f"{_parameter(facts, 'durations', 'duration_s'):g} s after a warm-up; "
            f"{trials_text(facts.parameters)}, medians")


def _listen_queue(facts: RunFacts) -> str:
    """The listen queues the run's trials found before their load, one phrase when every server's was the same."""
    if not facts.trial_runs:
        return ""
    queues = facts.listen_queues
    if not queues:
        return "not recorded by the run (measured before the check existed, 2026-11-29)"
    if len(set(queues.values())) == 1:
        return f"every server's the same, checked before each trial's load: {next(iter(queues.values()))}"
    return "; ".join(f"{label}: {detail}" for label, detail in sorted(queues.items()))


# This collection's side of each aspect, read from the run (RunFacts).
RECORDED: dict[str, Callable[[RunFacts], str]] = {
    "cores and placement": lambda f: (f"{hardware_text(f)}; " + _placement_text(f.parameters)) if f.trial_runs
    else f"{hardware_text(f)}; CPU set {f.parameters.get('cpuset', 'as recorded')}",
    "load": lambda f: f"{_load_text(f.parameters)}; {connection_mode(_parameter(f, 'load'))}" if f.trial_runs
    else ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in f.parameters.items()),
    "listen queue": _listen_queue,
    "window": _window,
    "runtime versions": lambda f: "; ".join(f"{k}: {v}" for k, v in f.runtime_versions.items()) or
    "as the image was built (see the page's runs)",
    "JVM flags": lambda f: _jvm_flags(f) if f.trial_runs else "not recorded by the run (the JVM's defaults)",
    "profilers attached": lambda f: _profilers(f) if f.trial_runs else "none",
    "in-process or over HTTP": lambda f: "over HTTP" if f.trial_runs else "in-process microbenchmark",
}


def _about_a_jvm(verdict, source: str) -> bool:
    """Whether a verdict compares a JVM (its pair names java, or its source is S5, all Java)."""
    names = " ".join(str(_field(verdict, key) or "") for key in ("claim_id", "baseline", "candidate"))
    return source == "S5" or "java" in names


def claim_threats(verdict, source: str) -> list[dict[str, str]]:
    """[{aspect, source, here, could, measured}] for one verdict: every aspect its source's setup names. The run's
    facts come from the verdict's run; MissingFact when it does not carry one."""
    run_id = _field(verdict, "run_id")
    facts = run_facts(run_id)
    rows = []
    for aspect in ASPECTS:
        theirs = SOURCE_SETUPS.get(source, {}).get(aspect)
        if theirs is None or (aspect == "JVM flags" and not _about_a_jvm(verdict, source)):
            continue
        ours = RECORDED[aspect](facts)
        if not ours:
            continue  # e.g. JVM flags in a run without a JVM
        rows.append({"aspect": aspect, "source": theirs, "here": ours,
                     "could": DIRECTIONS.get((source, aspect), ""), "measured": MEASURED_BY.get((source, aspect), "")})
    return rows


def threats_rows(verdicts: Iterable, claims: Mapping) -> list[dict]:
    """One entry per source and run: {claims, run, threats}. Claims of one source judged on one run share every
    fact of both sides, so they share one block of rows (S1-rss, S1-cpu-user and S1-threads on 01's run)."""
    groups: dict[tuple[str, str], dict] = {}
    for verdict in verdicts:
        claim_id, run_id = _field(verdict, "claim_id"), _field(verdict, "run_id")
        claim = claims.get(claim_id)
        if claim is None or not run_id:
            continue
        key = (claim.source, run_id)
        if key not in groups:
            groups[key] = {"claims": [], "run": run_id, "threats": claim_threats(verdict, claim.source)}
        if claim_id not in groups[key]["claims"]:
            groups[key]["claims"].append(claim_id)
            groups[key].setdefault("verdicts", []).append(verdict)
    for (source, run_id), group in groups.items():
        row = regime_row(group.pop("verdicts"), source, run_id)
        if row:
            group["threats"].append(row)
    return list(groups.values())


@functools.lru_cache(maxsize=32)
def _trials(run_id: str):
    from loadlab import tables

    return tables.load_run(run_id)["trials"]


def regime_row(verdicts: list, source: str, run_id: str) -> dict[str, str] | None:
    """The "regime" row: each verdict's servers, over the trials it used, CPU-bound or waiting, and what differs
    from each other or from the source (judgements.regime). None for a run without trials (a microbenchmark)."""
    if not run_facts(run_id).trial_runs:
        return None
    source_regime, source_text = SOURCE_REGIMES.get(source, (None, "not stated"))
    texts: dict[str, list[str]] = {}
    for verdict in verdicts:
        trial_ids = _field(verdict, "trial_ids") or {}
        if not trial_ids:
            continue
        by_label = comparison_regimes(_trials(run_id), trial_ids)
        text = " ".join([regime_text(by_label) + ".", *regime_differences(by_label, source_regime)])
        texts.setdefault(text, []).append(_field(verdict, "claim_id"))
    if not texts:
        return None
    here = " ".join(f"{', '.join(claims)}: {text}" if len(texts) > 1 else text for text, claims in texts.items())
    return {"aspect": REGIME_ASPECT, "source": source_text, "here": here, "could": REGIME_DIRECTION,
            "measured": REGIME_MEASURED}


THREATS_STYLE = ("<style>table.loadlab-threats{border-collapse:collapse;font-size:88%}table.loadlab-threats td,"
                 "table.loadlab-threats th{border:1px solid #ccc;padding:.2em .4em;text-align:left !important;"
                 "vertical-align:top}</style>")


def threats_html(rows: list[dict]) -> str:
    """The rows as one HTML table: a block's first row names its claims and their run; one row per aspect."""
    header = ("<tr><th>claims</th><th>aspect</th><th>the source</th><th>here (as the run recorded it)</th>"
              "<th>what the difference could do</th><th>measured here?</th></tr>")
    body = []
    for row in rows:
        for index, threat in enumerate(row["threats"]):
            claim = (f'<td rowspan="{len(row["threats"])}"><b>{html.escape(", ".join(row["claims"]))}</b><br>'
                     f'<small>{html.escape(row["run"])}</small></td>') if index == 0 else ""
            # No direction written: the two sides agree, or the difference cannot move a ratio; nothing to measure.
            measured = threat["measured"] or ("not measured" if threat["could"] else "\N{EM DASH}")
            body.append(f"<tr>{claim}<td>{html.escape(threat['aspect'])}</td><td>{html.escape(threat['source'])}</td>"
                        f"<td>{html.escape(threat['here'])}</td><td>{html.escape(threat['could'])}</td>"
                        f"<td>{html.escape(measured)}</td></tr>")
    return THREATS_STYLE + '<table class="loadlab-threats">' + header + "".join(body) + "</table>"
