"""The verdict matrix (pages.verdict_matrix) on the committed verdicts: every verdict, its word in colour and in
text, the magnitudes on both sides, and a link that lands on the claim's row of its page."""

import dataclasses
import math
import re

from loadlab import claims, pages, paths
from loadlab.judgements import rule
from loadlab.judgements.verdicts import load_verdicts

_, CLAIMS = claims.load_claims()
VERDICTS = load_verdicts(paths.REPORTS_DIR / "verdicts")


def test_every_committed_verdict_is_a_row_with_its_word_in_colour_and_in_text():
    rows = pages.matrix_rows(VERDICTS, CLAIMS)
    assert len(rows) == len(VERDICTS) > 30
    assert set(pages.VERDICT_COLOURS) == set(rule.VERDICTS)
    table = pages.matrix_html(rows)
    for word in set(rows["verdict"]):
        assert f">{word}</span>" in table.replace("&quot;", '"')


def test_the_magnitudes_on_both_sides_are_printed_with_units():
    rows = pages.matrix_rows(VERDICTS, CLAIMS).set_index(["claim", "comparison"])
    rss = rows.loc[("S1-rss", "rust / go")]
    assert rss["claimed"] == "rust 146 MB vs go 182 MB"
    cpu = rows.loc[("S1-cpu-user", "rust / go")]
    assert cpu["claimed"] == "rust 94% vs go 92%" and re.search(r"go [\d.]+%, rust [\d.]+%", cpu["measured"])
    # A count has no unit to print: "java-platform 100,017 vs go 12", never "12 count".
    threads = rows.loc[("S1-threads", "java-platform / go")]
    assert threads["claimed"] == "java-platform 100,017 vs go 12" and "count" not in threads["claimed"]
    assert "(os threads)" in pages.claim_rows([v for v in VERDICTS if v.claim_id == "S1-threads"], CLAIMS)["claimed"][0]
    # Where a verdict forms no ratio, the matrix says so and prints none (S5-memory formed none in an earlier
    # reference and forms one in this one; a synthetic verdict keeps the case tested whatever the data).
    memory = next(v for v in VERDICTS if v.claim_id == "S5-memory")
    unformed = pages.matrix_rows([dataclasses.replace(memory, measured_ratio=math.nan, ratio_ci_low=math.nan,
                                                     ratio_ci_high=math.nan)],
                                 CLAIMS)
    assert unformed["ratio"].iloc[0].endswith("measured: no ratio can be formed (see the verdict)")
    s3 = rows.loc[("S3-throughput", "rust / go")]
    # The measured figures are the committed run's: the format is what is checked (three significant digits, so a
    # ratio of 2.40 reads ×2.4).
    number = r"\d+(?:\.\d+)?"
    assert re.fullmatch(rf"claimed ×1\.13 → measured ×{number} \[{number}, {number}\] \(98\.3% CI\)", s3["ratio"])


def test_each_claim_links_to_its_row_on_its_notebooks_page():
    rows = pages.matrix_rows(VERDICTS, CLAIMS)
    table = pages.matrix_html(rows)
    for notebook, claim in rows[["notebook", "claim"]].drop_duplicates("claim").itertuples(index=False):
        anchor = pages.claim_anchor(claim)
        assert f'href="{notebook}.nocode.html#{anchor}"' in table
        page_rows = pages.claim_rows([v for v in VERDICTS if v.notebook == notebook], CLAIMS)
        page_table = pages.claim_table_html(page_rows)
        assert page_table.count(f'id="{anchor}"') == 1, (notebook, claim)
