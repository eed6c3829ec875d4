"""S1-spawn and S1-spawn-heap on the source's benchmark as written, from spawn-bench-go's real output
(tests/fixtures/microbench/README.md says how it was captured)."""

import pytest
from conftest import fixture_path

from loadlab import claims
from loadlab.harness import microbench
from loadlab.judgements import rule, s1

_, CLAIMS = claims.load_claims()


@pytest.fixture(scope="module")
def bench():
    text = open(fixture_path("microbench", "go-spawn-exit-100000.jsonl")).read()
    return microbench.tidy(microbench.parse_output(text))


def test_every_run_reports_go_tests_figures_and_the_last_carries_its_profile(bench):
    assert (bench["tasks"] == 100_000).all() and (bench["n"] >= 1).all()
    assert (bench["bytes_per_op"] > 0).all() and (bench["allocs_per_op"] > 0).all()
    assert bench["allocs_profile_gzip_b64"].notna().sum() == 1
    assert bench["allocs_profile_gzip_b64"].iloc[-1].startswith("H4sI")  # gzip, base64


def test_allocation_shares_are_per_cent_of_allocated_space_by_allocating_function(bench):
    shares = s1.allocation_shares(bench["allocs_profile_gzip_b64"].iloc[-1])
    assert shares.sum() == pytest.approx(100.0)
    assert shares.get("runtime.goready", 0.0) == 0.0  # it allocates nothing
    assert shares.idxmax() in {"main.spawnAndWait", "runtime.malg", "runtime.newproc1"}


def test_the_spawn_verdict_follows_the_measured_allocation(bench):
    verdict = s1.spawn(bench, CLAIMS["S1-spawn"], "01-runtime-overhead", "fixture")
    measured_mb = verdict.measured["mb_per_op"]
    claimed_mb = CLAIMS["S1-spawn"].values["go_spawn_alloc_mb"]
    far = not (1 / s1.ALLOCATION_FACTOR <= claimed_mb / measured_mb <= s1.ALLOCATION_FACTOR)
    assert verdict.verdict == (rule.CONTRADICTED if far else rule.HOLDS)
    assert "not judged" in verdict.explanation  # the time depends on the machine


def test_the_heap_verdict_names_each_claimed_function(bench):
    verdict = s1.spawn_heap(bench, CLAIMS["S1-spawn-heap"], "01-runtime-overhead", "fixture")
    assert set(CLAIMS["S1-spawn-heap"].values) <= set(verdict.measured)
    assert verdict.measured["runtime.goready"]["max_pct"] == 0.0
    assert verdict.verdict == rule.CONTRADICTED  # goready's claimed 18% cannot be within 10 points of 0
