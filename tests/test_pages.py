"""What a report page shows besides figures: numbers, per-claim rows, provenance, and the checks on exported pages.

Run on the committed reference runs (data/raw) and verdicts (reports/verdicts).
"""

from __future__ import annotations

import json
import math
import re
import os

import pandas as pd
import pytest

from loadlab import claims, judgements, pages, paths, rundir
from loadlab.pages import claim_table, html_checks, numbers, provenance
from loadlab.manifest import Manifest

SOURCES, CLAIMS = claims.load_claims()


def reference_run(experiment: str):
    run = rundir.latest_run(experiment)
    assert run is not None, f"no committed run of {experiment}"
    return run


# --- numbers ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [(1.0397839321397173, "1.04"), (59345.636985, "59,346"), (0.012345, "0.01235"), (7.0, "7"), (100017, "100,017"),
     (math.nan, "n/a"), (0.0, "0"), ("8.4.24", "8.4.24")],
)  # fmt: skip
def test_numbers_are_printed_with_few_digits(value, text):
    assert numbers.format_number(value) == text


def test_mappings_read_as_text_with_units():
    assert numbers.format_mapping({"go": 0.0, "swoole": 0.02}, "%") == "go 0% \N{MIDDLE DOT} swoole 0.02%"
    assert numbers.format_mapping({"spawn_join_ms": 361.24, "rss_delta_bytes": 281_018_368}) == (
        "spawn join 361.2 ms \N{MIDDLE DOT} rss delta 268 MiB")
    assert numbers.format_mapping({"gc_pause_total_s": 5.15e-05}) == "gc pause total 51.5 \N{MICRO SIGN}s"
    assert numbers.format_mapping({"gopark_per_s": {"g127": 42800, "g32": 8100}}) == "gopark (g127 42,800 /s, g32 8,100 /s)"


# --- per-claim rows on the committed verdicts ---------------------------------------------------


def test_every_verdict_row_has_claimed_and_measured_values_a_command_and_its_data():
    verdicts = judgements.load_verdicts()
    rows = claim_table.claim_rows(verdicts, CLAIMS)
    assert len(rows) == len(verdicts) > 0
    ratio_rows = rows[[v.measured_ratio is not None for v in verdicts]]
    assert (ratio_rows["measured"].str.contains(r"\(medians\)")).all()
    assert all(row.claimed for row in rows.itertuples() if CLAIMS[row.claim].values)
    for verdict, row in zip(verdicts, rows.itertuples()):
        assert row.reproduce[0] == f"loadlab notebooks --scale quick --only {verdict.notebook[:2]}"
        assert row.data, f"{row.claim}: no link to its run's data"
        links = dict((name, href) for name, href, _ in row.data)
        assert links["dataset"] == f"data/index.html#run-{verdict.run_id}"
        assert (paths.REPORTS_DIR / links["verdicts"]).is_file(), links["verdicts"]
    throughput = rows[(rows["claim"] == "S4-throughput")].iloc[0]
    assert throughput.claimed == "go 24,850 req/s \N{MIDDLE DOT} swoole 22,160 req/s"
    assert throughput.measured.startswith("throughput: go ") and "req/s" in throughput.measured
    assert throughput.reproduce == ["loadlab notebooks --scale quick --only 04",
                                    "loadlab notebooks --scale quick --only 04 --run-id latest"]  # fmt: skip


def test_the_claim_table_html_escapes_and_links():
    verdicts = judgements.load_verdicts()
    table = claim_table.claim_table_html(claim_table.claim_rows(verdicts, CLAIMS))
    assert table.count("<tr") == len(verdicts) + 1
    assert table.count('<tr id="claim-') == len({v.claim_id for v in verdicts})  # one anchor a claim
    assert '<a href="data/index.html#run-' in table and "<code>loadlab notebooks" in table
    assert '"../' not in table  # every link stays inside reports/
    assert "{'" not in table


# --- provenance ----------------------------------------------------------------------------------


def test_swoole_reports_its_own_version_not_php_s():
    versions = provenance.runtime_versions(reference_run("04-io-coroutines-quick"))
    assert re.fullmatch(r"Swoole 6\.1\.9 on PHP 8\.4\.\d+", versions["swoole"])  # Debian's PHP point release moves
    assert versions["go"] == "go1.24.4" and versions["rust"] == "rustc 1.85.1" and versions["python"] == "python 3.13.5"


def test_the_block_says_what_was_run_where_and_how():
    run = reference_run("03-json-api-quick")
    block = provenance.provenance_html("03-json-api", "quick", "latest", [run], {SOURCES["S3"]: run})
    commit = json.loads((run / "manifest.json").read_text())["provenance"]["git_commit"][:10]
    for expected in ("Re-analysed", run.name, f"{commit} (clean)", "a fresh container each", "5 s",
                     "2 s (discarded)", "server on CPU 1", "loadgen on CPU 0",
                     "memory limit 2,048 MiB", "keep-alive", "closed loop (wrk), GET /api/users, 256 connections",
                     "go: go1.24.4", ", 2 CPUs", "hey -n 100000 -c 256", "Go 1.22 net/http vs Rust 1.78 axum"):
        assert expected in block, expected
    # Started before the run was created: the run was measured by this execution.
    measured_now = provenance.provenance_html("03-json-api", "quick", None, [run], started_utc="2000-01-01T00:00:00+00:00")
    assert "Measured now" in measured_now and "Re-analysed" not in measured_now


def test_every_clause_of_every_source_setup_lands_in_exactly_one_aspect():
    for source in SOURCES.values():
        clauses = provenance.source_clauses(source.setup)
        words = "".join("".join(clause.split()) for _, clause in clauses)
        assert words == "".join(source.setup.replace(";", "").rstrip(".").replace(". ", "").split()), source.id
        assert {aspect for aspect, _ in clauses} <= {name for name, _ in provenance.ASPECTS} | {provenance.OTHER_ASPECT}
    hardware = [clause for aspect, clause in provenance.source_clauses(SOURCES["S1"].setup) if aspect == "hardware and placement"]
    assert hardware == ["4 cores, 8 GB, each server pinned to one core"]


def test_microbenchmark_runs_are_described_by_their_parameters():
    run = reference_run("05-microbench-sqrt-latch-quick")
    setup = dict((aspect, ours) for aspect, _, ours in provenance.setup_comparison(SOURCES["S5"], provenance.run_facts(run)))
    assert setup["load and requests"].startswith("microbenchmark (05-microbench-sqrt-latch-quick): tasks 10,000")
    assert "?" not in " ".join(setup.values())


# --- noise bands per metric -----------------------------------------------------------------------


def test_each_metric_gets_the_a_a_margin_of_the_same_quantity():
    from loadlab import rundir, tables
    from loadlab.judgements.margins import margins_from_aa

    trials = tables.load_run(rundir.latest_run("00-aa-noise-quick"))["trials"]
    found = margins_from_aa(trials, ["throughput_rps", "memory_peak_mib", "latency_p99_ms", "server_cpu_pct",
                                     "gc_pause_total_s"])
    assert set(found) == {"throughput_rps", "memory_peak_mib", "latency_p99_ms", "server_cpu_pct"}
    # A ratio has no unit: MiB and bytes, ms and s give the same margin.
    assert found["memory_peak_mib"] == margins_from_aa(trials, ["memory_peak_bytes"])["memory_peak_bytes"]
    assert found["latency_p99_ms"] == margins_from_aa(trials, ["latency_p99_s"])["latency_p99_s"]
    for margin in found.values():
        assert 0 <= margin < 1


def test_a_forest_row_draws_the_noise_band_its_verdict_was_judged_with():
    rows = pages.noise_band_columns(pd.DataFrame({"noise_margin": [0.1, None]}))
    assert rows["noise_low"].iloc[0] == pytest.approx(1 / 1.1) and rows["noise_high"].iloc[0] == pytest.approx(1.1)
    assert rows["noise_low"].isna().iloc[1]


# --- the page checks ------------------------------------------------------------------------------


def test_reprs_and_runaway_precision_are_found_in_what_a_reader_sees(tmp_path):
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><script>var x = {'a': 1.2345678901};</script><style>p{}</style></head><body>"
        "<div class='jp-InputArea'><pre>print({'go': 0.0}, 3.14159265358)</pre></div>"
        "<p>noise band (0.9963492178866805, 1.0944612237048557)</p><p>{'go': 0.0}</p>"
        "<p>version 21.0.12.1, 1,234,567 requests, ratio 1.04, run 20261121T112543Z</p>"
        '<svg><path d="M 0.123456789 1.23456789"/></svg></body></html>'
    )
    findings = html_checks.check_page(page)
    assert sorted(f.kind for f in findings) == ["precision", "precision", "repr"], [str(f) for f in findings]
    assert html_checks.significant_digits("0.001230") == 4 and html_checks.significant_digits("1,234.5") == 5


def test_the_text_check_finds_what_a_cell_printed_to_stderr(tmp_path):
    # As nbconvert's lab template exports a cell's warning (the 01 page of 2026-11-29 showed matplotlib's twice).
    page = tmp_path / "page.html"
    page.write_text(
        "<html><head><style>.jp-RenderedText[data-mime-type='application/vnd.jupyter.stderr'] {}</style></head><body>"
        '<div class="jp-RenderedText jp-OutputArea-output" data-mime-type="application/vnd.jupyter.stderr" '
        'tabindex="0"><pre>throughput.py:128: UserWarning: Attempt to set non-positive xlim on a log-scaled axis\n'
        "  axes.set_xlim(0, 16000)</pre></div>"
        '<div class="jp-RenderedText jp-OutputArea-output" data-mime-type="text/plain"><pre>fine</pre></div>'
        "</body></html>")
    findings = html_checks.check_page(page)
    assert [f.kind for f in findings] == ["stderr"]
    assert "UserWarning: Attempt to set non-positive xlim" in findings[0].text


def test_the_browser_check_finds_console_errors_broken_images_and_a_dead_flame_graph(tmp_path):
    from loadlab.pages import browser
    from loadlab.profiles import flamegraph_svg
    from loadlab.profiles.schema import stacks_frame

    if browser.find_chromium() is None:
        pytest.skip("no chromium on PATH: install Debian's chromium (make test does, as root)")
    stacks = stacks_frame([("main;serve;parse", 30), ("main;serve;write", 50), ("main;idle", 20)])
    graph = flamegraph_svg(stacks, title="live")
    dead = graph.replace('<script type="text/ecmascript">', '<script type="text/plain">')  # zooming disabled
    good, bad = tmp_path / "good.html", tmp_path / "bad.html"
    good.write_text(f"<html><body>{graph}</body></html>")
    bad.write_text(f"<html><body>{dead}<img src='missing.png'><script>console.error('boom')</script></body></html>")
    checks = browser.check_pages([good, bad], tmp_path / "screens")
    assert checks[0].problems == [] and checks[0].flame_graphs == 1
    problems = checks[1].problems
    assert any("boom" in p for p in problems) and any("image not loaded" in p for p in problems)
    assert any("flame graph did not zoom" in p for p in problems)
    assert all(check.screenshot.stat().st_size > 1000 for check in checks)


def test_relative_links_point_from_the_reports_folder_into_it():
    # Not to data/raw or data/processed: reports/ is hosted alone (tests/test_links.py follows every link).
    run = reference_run("03-json-api-quick")
    links = dict(claim_table.data_links(run.name, paths.REPORTS_DIR))
    assert links == {"dataset": f"data/index.html#run-{run.name}"}


def test_an_open_loop_on_the_slowest_capacity_says_every_server_got_the_same_rate():
    from loadlab.judgements._common import setup_text

    load = {"mode": "open", "route": "/json", "capacity_fractions": [0.5], "capacity_basis": "slowest"}
    assert "0.5 of the slowest server's capacity, offered to every server" in provenance._load_text({"load": load})
    own = provenance._load_text({"load": {**load, "capacity_basis": "own"}})
    assert "0.5 of each server's capacity offered" in own
    assert "0.5 of the slowest server's capacity, the same rate for every server" in setup_text(Manifest("run", "exp", "complete", parameters={"load": load}), 0.5)


def test_the_block_names_each_servers_quota_and_the_cfs_period_it_was_granted_in():
    from loadlab.judgements._common import quota_text

    parameters = {"load": {"mode": "open", "route": "/json", "capacity_fractions": [0.5, 0.8, 1.2]},
                  "placement": {"server_cpus": "1", "loadgen_cpus": "0", "memory_limit_mib": 4096, "cpu_period_ms": 20.0},
                  "servers": [{"server": "go-nethttp", "label": "go", "cpu_quota": 0.053},
                              {"server": "rust-tokio", "label": "rust", "cpu_quota": 0.05}]}
    assert "0.5, 0.8 and 1.2 of each server's capacity offered" in provenance._load_text(parameters)
    assert "(quotas: go 0.053 CPU, rust 0.05 CPU), granted in 20 ms CFS periods" in provenance._placement_text(parameters)
    assert quota_text(Manifest("run", "exp", "complete", parameters=parameters)) == (", go capped at 0.053 core, rust capped at 0.05 core by a quota "
                                                      "granted in 20 ms CFS periods")


def test_the_block_says_whether_connections_were_reused():
    assert "keep-alive" in provenance.connection_mode({"mode": "closed"})
    assert provenance.connection_mode({"connection_mode": "per-request"}).startswith("a new connection per request")


def test_the_capacity_ranking_is_told_with_the_tables_numbers():
    """On the committed ceiling run (3 trials a server): nginx at one loadgen core's limit has no trial with
    headroom; go has 3, fewer than a 95% interval needs, so neither is ranked, and the text says so."""
    from loadlab import tables
    from loadlab.judgements import capacity

    trials = tables.load_run(reference_run("00-loadgen-ceiling-quick"))["trials"]
    ranking = capacity.capacity_ranking(trials)
    text = pages.capacity_ranking_text(ranking, capacity.CAPACITY_HEADROOM_UTILIZATION, "a whole core",
                                       {"swoole": "no image"})
    nginx = ranking.set_index("label").loc["nginx-baseline"]
    assert pd.isna(nginx["rank"]) and nginx["loadgen_utilization_max"] >= 0.8
    assert f"not ranked: **nginx-baseline**, {nginx['trials_with_headroom']} of {nginx['trials_ok']} ok trials" in text
    go = ranking.set_index("label").loc["go"]
    assert pd.isna(go["rank"]) and go["trials_with_headroom"] == go["trials_ok"] == 3
    assert "not measured: **swoole**: no image" in text and "no server had enough trials with headroom" in text


def test_the_hosts_connection_ceiling_is_said_when_the_run_recorded_it():
    from loadlab import hostfacts

    text = provenance.connection_ceiling_text(hostfacts.connection_limits())
    limits = hostfacts.connection_limits()
    assert f"at most {pages.format_number(limits['max_connections'])} connections per process" in text
    assert provenance.connection_ceiling_text({}) == ""  # runs before the limits were recorded say nothing


def test_the_pipelined_capacity_run_ranks_servers_with_loadgen_headroom():
    """On the committed capacity run: every ranked server had its loadgen below 80% busy in the trials used."""
    from loadlab import tables
    from loadlab.judgements import capacity

    trials = tables.load_run(reference_run("00-server-capacity-quick"))["trials"]
    ranking = capacity.capacity_ranking(trials)
    ranked = ranking[ranking["rank"].notna()]
    assert len(ranked) >= 2 and ranked["rank"].iloc[0] == 1
    assert (ranked["throughput_rps"].diff().dropna() <= 0).all()  # ranked from the fastest down
    used = trials[(trials["status"] == "ok") & (trials["loadgen_cpu_utilization"] < 0.8)]
    for row in ranked.itertuples():
        assert row.trials_with_headroom == int((used["label"] == row.label).sum()) >= 6
    text = pages.capacity_ranking_text(ranking, capacity.CAPACITY_HEADROOM_UTILIZATION, "pipelined")
    first = ranked.iloc[0]
    assert f"1. **{first['label']}**: {pages.format_number(first['throughput_rps'])} req/s" in text


def test_the_isolation_reading_says_when_the_host_was_too_noisy_to_tell():
    table = pd.DataFrame([{"mode": "docker", "between_instance_cv": 0.12, "within_instance_cv": 0.09},
                          {"mode": "cgroup", "between_instance_cv": 0.18, "within_instance_cv": 0.12}])
    text = pages.isolation_reading(table, {"cgroup": 0.5})
    assert "docker 12.0% between instances and 9.0% within" in text and "the host itself was noisy" in text
    assert "No mode's instances spread differently" in text
    quiet = table.assign(within_instance_cv=[0.01, 0.012])
    assert "noisy" not in pages.isolation_reading(quiet, {"cgroup": 0.01}) and "docker vs cgroup: p = 0.01" in \
        pages.isolation_reading(quiet, {"cgroup": 0.01})


def test_the_isolation_reading_says_what_the_hypervisor_took_when_it_was_recorded():
    table = pd.DataFrame([{"mode": "docker", "between_instance_cv": 0.03, "within_instance_cv": 0.01,
                           "server_steal_share_median": 0.021, "server_steal_share_max": 0.09,
                           "steal_throughput_spearman": -0.71}])
    text = pages.isolation_reading(table, {})
    assert "a median of 2.1% (docker; at most 9.0%) of the server's CPU time" in text and "rho -0.71 (docker)" in text
    # A quiet host: no steal worth the name, and instances that still differ.
    quiet = pd.DataFrame([{"mode": "docker", "between_instance_cv": 0.062, "within_instance_cv": 0.019,
                           "server_steal_share_median": 0.0, "server_steal_share_max": 0.0, "steal_throughput_spearman": None},
                          {"mode": "cgroup", "between_instance_cv": 0.032, "within_instance_cv": 0.015,
                           "server_steal_share_median": 0.0, "server_steal_share_max": 0.003, "steal_throughput_spearman": -0.1}])
    text = pages.isolation_reading(quiet, {"cgroup": 0.12})
    assert "stole at most 0.3% of the server's CPU time in any window" in text and "did not set" in text
    assert "agree within 1.9%, yet fresh instances differ by 3.2% to 6.2%" in text and "noisy" not in text


def test_the_isolation_reading_names_the_modes_whose_windows_were_disturbed():
    # The committed run of 2026-11-26 09:38: two plain-cgroup instances each had one window a third down.
    table = pd.DataFrame([{"mode": "docker", "between_instance_cv": 0.035, "within_instance_cv": 0.021},
                          {"mode": "cgroup-no-aslr", "between_instance_cv": 0.034, "within_instance_cv": 0.012},
                          {"mode": "cgroup", "between_instance_cv": 0.033, "within_instance_cv": 0.036}])
    text = pages.isolation_reading(table, {"cgroup": 0.69, "cgroup-no-aslr": 0.74})
    assert "differ by 3.6% in cgroup (a quiet host: 1-2%), against at most 2.1% in docker and cgroup-no-aslr" in text
    assert "In docker and cgroup-no-aslr, fresh instances differ by 3.4% to 3.5%" in text
    assert "the host itself was noisy" not in text


def test_the_detectable_effect_text_gives_quick_full_and_the_trials_a_target_needs():
    from loadlab import stats

    table = pd.DataFrame([{"mode": "docker", "between_instance_cv": 0.035, "within_instance_cv": 0.021},
                          {"mode": "cgroup", "between_instance_cv": 0.05, "within_instance_cv": 0.02}])
    text = pages.detectable_effect_text(table, 6, 10)
    quick, full = stats.minimum_detectable_ratio(0.035, 6), stats.minimum_detectable_ratio(0.035, 10)
    assert f"a ratio of ×{quick:.3f}" in text and "between-instance CV of 3.5%" in text
    assert f"The full scale's 10 trials a side detect ×{full:.3f}" in text
    assert f"detecting ×1.03 at this spread takes {stats.trials_for_detectable_ratio(0.035, 1.03)} trials a side" in text


def test_the_overload_reading_says_where_the_backlog_waited_from_the_reference_run(tmp_path):
    from conftest import committed_run

    from loadlab import tables
    from loadlab.judgements import s2

    run_dir = committed_run("02-worker-pool-quick")
    if run_dir is None:
        pytest.skip("no committed run of 02-worker-pool-quick")
    run = tables.load_run(run_dir, processed_root=tmp_path)  # never rewrite the committed tables
    trials = s2.with_runtime_metrics(run)
    level = trials["level"].max()
    backlog = s2.accept_backlog(run["manifest"])
    assert backlog == run["manifest"].provenance["connection_limits"]["accept_backlog"]
    text = pages.overload_reading(trials, level, backlog)
    ok = trials[(trials["level"] == level) & (trials["status"] == "ok")]
    held = int((ok["connections_peak"] <= backlog * (1 + pages.overload.QUEUE_SLACK_SHARE)).sum())
    for label in sorted(set(ok["label"])):
        assert f"{label} served {pages.format_number(float(ok.loc[ok['label'] == label, 'throughput_rps'].median()))} req/s" in text
    if held:
        assert f"In {held} of {len(ok)} windows" in text and f"listen queue's {backlog:,} places" in text
    if held < len(ok):
        assert f"In {len(ok) - held} (" in text and "kept accepting" in text
    # Without the host's listen-queue size the reading says only what was served and held.
    assert "listen queue" not in pages.overload_reading(trials, level, None)


def test_the_sitting_note_speaks_only_when_two_runs_sat_at_different_levels():
    text = pages.sitting_note(45_500.0, "00-aa-noise-quick-20261125T062557Z-147c67", 92_513.0,
                              "00-isolation-noise-quick-20261126T043439Z-137efd")
    assert "45,500 req/s in the A/A run (2026-11-25 06:25 UTC)" in text and "92,513 req/s" in text and "×2.03" in text
    assert pages.sitting_note(45_500.0, "a", 47_000.0, "b") == ""  # within one sitting's spread
    assert pages.sitting_note(float("nan"), "a", 47_000.0, "b") == ""


def test_the_open_loop_ceiling_names_the_highest_rate_held_and_why_the_next_was_not():
    from loadlab.pages import open_loop_ceiling_text

    rows = []
    for rate, served, behind in ((10_000, 10_000, False), (30_000, 29_990, False), (50_000, 49_000, True),
                                 (70_000, 52_000, True)):
        for trial in range(3):
            rows.append({"rate_offered_rps": rate, "throughput_rps": served, "status": "ok",
                         "loadgen_saturated": behind and trial > 0})
    text = open_loop_ceiling_text(pd.DataFrame(rows))
    assert text.startswith("**The open loop held 30,000 req/s**")
    assert "at 50,000 req/s it did not (2 of 3 trials had the generator fall behind; the lowest trial answered 98%" in text


def test_the_ceiling_figure_is_read_against_the_headroom_and_saturation_the_analysis_uses():
    from loadlab import config
    from loadlab.judgements import capacity

    assert pages.CEILING_LINES == {"headroom": capacity.CAPACITY_HEADROOM_UTILIZATION,
                                   "saturated": config.LOADGEN_SATURATION_UTILIZATION}


def test_the_warm_up_line_names_the_jit_allowance_when_a_plan_gives_one():
    assert provenance._warmup_text({"warmup_s": 2, "warmup_max_s": 6}) == \
        "2 to 6 s, until throughput is steady (discarded)"
    assert provenance._warmup_text({"warmup_s": 2, "warmup_max_s": 6, "jit_warmup_max_s": 12}) == \
        "2 to 6 s, until throughput is steady; up to 12 s for a JIT runtime (the JVMs) (discarded)"
    assert provenance._warmup_text({"warmup_s": 6, "warmup_max_s": 6, "jit_warmup_max_s": 12}) == \
        "6 s; up to 12 s for a JIT runtime (the JVMs) (discarded)"


def test_an_image_without_a_sentence_of_alt_text_is_a_finding():
    page = ('<img alt="No description has been provided for this image" src="a.svg">'
            '<img src="b.svg"><img alt="" src="c.svg"><img alt="throughput" src="d.svg">'
            '<img alt="Figure: throughput. Plots throughput (req/s) against connections." src="e.svg">')
    assert html_checks.missing_alt_texts(page) == ["No description has been provided for this image", "(none)",
                                                   "(none)", "throughput"]


def test_a_figure_shown_by_its_page_carries_its_finding_and_what_it_plots_as_alt_text(tmp_path):
    from matplotlib.figure import Figure

    from loadlab import study

    page = study.Page("99-test", tmp_path, {}, {}, None)
    figure = Figure()
    axes = figure.subplots()
    axes.plot([1, 2], [3, 4], label="go")
    axes.set_xlabel("connections")
    axes.set_ylabel("throughput (req/s)")
    figure.suptitle("Throughput by connections")
    figure.legend()
    shown = page.figure(figure, "throughput", finding="Go serves 4 req/s at 2 connections.")
    data, metadata = shown._repr_mimebundle_()
    assert data["image/svg+xml"] == (tmp_path / "throughput.svg").read_text()
    assert metadata["image/svg+xml"]["alt"] == ("Go serves 4 req/s at 2 connections. Figure: Throughput by "
                                               "connections. Plots throughput (req/s) against connections. Legend: go.")
    with pytest.raises(ValueError, match="alt text"):
        page.figure(Figure(), "blank")


def test_a_run_the_scale_left_out_is_named_with_the_command_that_measures_it():
    from loadlab import pages

    text = pages.left_out_text("05-virtual-threads", "quick", "virtual threads inside `synchronized`")
    assert text.startswith("**Not measured at the quick scale:** virtual threads inside `synchronized`.")
    assert "No verdict reads it" in text and "`loadlab notebooks --scale full --only 05`" in text
