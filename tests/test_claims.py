"""Claims: the project's copy of claims.yaml; verdict records (loadlab.judgements.verdicts) and their files."""

import pytest

from loadlab import claims, judgements, paths
from loadlab.judgements import rule, verdicts


def test_the_project_copy_of_claims_yaml_is_verbatim():
    if not paths.SHARED_CLAIMS_YAML.exists():
        pytest.skip(f"{paths.SHARED_CLAIMS_YAML} is not beside this clone; nothing to compare with")
    assert paths.CLAIMS_YAML.read_bytes() == paths.SHARED_CLAIMS_YAML.read_bytes()


def test_every_claim_loads_with_its_source():
    sources, all_claims = claims.load_claims()
    assert set(sources) == {"S1", "S2", "S3", "S4", "S5"}
    assert len(all_claims) >= 25
    assert all(c.source in sources for c in all_claims.values())
    assert verdicts.claimed_ratio(all_claims["S3-throughput"], "go", "rust") == pytest.approx(48310 / 42850)


def test_verdicts_round_trip_and_reject_unknown_words(tmp_path):
    verdict = judgements.Verdict("S3-cpu", rule.HOLDS, "because", "03-json-api", run_id="r")
    judgements.save_verdicts([verdict], "03-json-api", tmp_path)
    assert judgements.load_verdicts(tmp_path) == [verdict]
    with pytest.raises(ValueError):
        judgements.Verdict("x", "probably", "", "nb")
