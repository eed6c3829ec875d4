"""Threats to validity (pages.threats) on every committed verdict: both sides of every aspect, read from the
source's declared setup and from what the verdict's run recorded."""

import pytest

from loadlab import claims, pages, paths, rundir
from loadlab.judgements.verdicts import load_verdicts
from loadlab.pages import threats
from loadlab.pages.provenance import RunFacts

_, CLAIMS = claims.load_claims()
SOURCES, _ = claims.load_claims()
VERDICTS = load_verdicts(paths.REPORTS_DIR / "verdicts")


def test_every_source_setup_is_split_into_known_aspects_and_every_direction_names_one():
    assert set(threats.SOURCE_SETUPS) == set(SOURCES)
    for source, setup in threats.SOURCE_SETUPS.items():
        assert set(setup) <= set(threats.ASPECTS), source
    for source, aspect in [*threats.DIRECTIONS, *threats.MEASURED_BY]:
        assert aspect in threats.SOURCE_SETUPS[source], (source, aspect)


def test_every_committed_verdict_has_its_threats_read_from_its_own_run():
    rows = threats.threats_rows(VERDICTS, CLAIMS)
    judged_on_a_run = {v.claim_id for v in VERDICTS if v.run_id}
    assert {claim for row in rows for claim in row["claims"]} == judged_on_a_run
    for row in rows:
        assert row["threats"] and all(t["here"] and t["source"] for t in row["threats"]), row["claims"]
    # What the committed S1 run recorded is what the table says: its route and connection mode, the JVM's GC.
    s1 = next(row for row in rows if "S1-rss" in row["claims"])
    here = {t["aspect"]: t["here"] for t in s1["threats"]}
    s1_run = next(v for v in VERDICTS if v.claim_id == "S1-rss").run_id
    parameters = rundir.RunDirectory(rundir.find_run(s1_run)).read_manifest().parameters
    load = parameters["load"]
    assert f"GET {load['route']}" in here["load"]
    assert ("keep-alive" if load.get("connection_mode", "keep-alive") == "keep-alive"
            else "a new connection per request") in here["load"]
    # S1's Java runs with the flags the run recorded for it (its source's, plans.s1_jvm), else the server's default.
    recorded = {(entry.get("settings") or {}).get("JAVA_OPTS") for entry in parameters["servers"]
                if entry["server"] == "java-threads"}
    assert len(recorded) == 1
    assert here["JVM flags"] == (recorded.pop() or "the server's default (-XX:+UseG1GC)")
    # The listen queue every server's trials found before their load (contract.verify), against the source's unstated
    # one with its runtimes' defaults; and the words when servers differ or the run predates the check.
    assert here["listen queue"] == ("every server's the same, checked before each trial's load: listen queue of 4,096 "
                                    "connections (the contract asks 4,096; net.core.somaxconn caps it at 4,096)")
    assert {t["aspect"]: t["source"] for t in s1["threats"]}["listen queue"].startswith("not stated")
    differing = RunFacts("r-1", "e", None, None, None, None, {}, {}, parameters={}, trial_runs=True,
                         listen_queues={"go": "listen queue of 4,096", "rust": "listen queue of 1,024 (failed)"})
    assert threats.RECORDED["listen queue"](differing) == "go: listen queue of 4,096; rust: listen queue of 1,024 (failed)"
    older = RunFacts("r-1", "e", None, None, None, None, {}, {}, parameters={}, trial_runs=True)
    assert threats.RECORDED["listen queue"](older).startswith("not recorded by the run")
    # A Go microbenchmark has no JVM row; S5's has one, saying the run did not record its flags.
    spawn = next(row for row in rows if "S1-spawn" in row["claims"])
    assert "JVM flags" not in {t["aspect"] for t in spawn["threats"]}
    latch = next(row for row in rows if "S5-time" in row["claims"])
    assert {t["aspect"]: t["here"] for t in latch["threats"]}["JVM flags"].startswith("not recorded")


def test_a_run_that_does_not_record_a_fact_the_table_names_is_an_error_not_an_empty_cell():
    facts = RunFacts("r-1", "e", None, None, None, None, {}, {}, parameters={"servers": []}, trial_runs=True)
    with pytest.raises(threats.MissingFact, match="profilers"):
        threats.RECORDED["profilers attached"](facts)
    with pytest.raises(threats.MissingFact, match="durations.duration_s"):
        threats.RECORDED["window"](facts)


def test_the_table_names_each_block_once_and_escapes_what_it_shows():
    table = pages.threats_html([{"claims": ["S1-rss", "S1-<x>"], "run": "r-1", "threats": [
        {"aspect": "load", "source": "wrk", "here": "a <b>", "could": "", "measured": ""},
        {"aspect": "window", "source": "30 s", "here": "5 s", "could": "less GC", "measured": "01"}]}])
    assert table.count('rowspan="2"') == 1 and "S1-&lt;x&gt;" in table and "a &lt;b&gt;" in table
    assert "not measured" not in table.split("<td>load</td>")[1].split("</tr>")[0]  # agreeing sides: a dash
    assert "not measured" not in table and "\N{EM DASH}" in table
