"""The verdict matrix: every claim at a glance, the word and the magnitudes on both sides.

One row per verdict, grouped by source: the verdict's word, in its colour
and as text (colour alone would fail a reader who cannot tell the colours
apart, or a printout), what the source claimed for the two runtimes compared
(its own units), what was measured for the same two (the medians behind the
ratio, this collection's units), and the two ratios with the interval the
verdict used. A forest of ratios alone hides that 92% against 50% user CPU,
or 890 MB against 6.6 MB, is what the reader compares. Each row links to the
claim's row on its notebook's page. The index opens with it; 99 shows it.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping

import pandas as pd

from loadlab.claims import Claim
from loadlab.judgements import rule
from loadlab.units import format_quantity, format_ratio, format_ratio_interval

from .claim_table import COUNT_UNIT, _field, _finite, claim_anchor, claimed_text, measured_text
from .numbers import NO_EVIDENCE

# One colour per verdict word (Okabe-Ito hues, told apart by readers with colour-vision deficiencies); the word
# is always printed too. Judged words in strong colours, the words that judge nothing in greys.
VERDICT_COLOURS = {
    rule.HOLDS: "#009E73",
    rule.DIRECTION_ONLY: "#56B4E9",
    rule.NO_DIFFERENCE: "#E69F00",
    rule.CONTRADICTED: "#D55E00",
    rule.NOT_REPRODUCED: "#CC79A7",
    rule.INCONCLUSIVE: "#999999",
    rule.NOT_TESTABLE: "#BBBBBB",
    rule.IMPOSSIBLE: "#000000",
}
MATRIX_COLUMNS = ("source", "claim", "comparison", "verdict", "claimed", "measured", "ratio", "notebook")

MATRIX_STYLE = (
    "<style>table.loadlab-matrix{border-collapse:collapse;font-size:90%;max-width:100%}"
    "table.loadlab-matrix td,table.loadlab-matrix th{border:1px solid #ccc;padding:.2em .45em;text-align:left !important;"
    "vertical-align:top}"
    # The ratio reads on two lines at most; the measured text, often long (profiles), takes what is left.
    "table.loadlab-matrix td:nth-child(6){min-width:17em}table.loadlab-matrix td:nth-child(4){min-width:12em}"
    "table.loadlab-matrix .word{display:inline-block;padding:0 .45em;border-radius:.3em;font-weight:bold;"
    "white-space:nowrap}</style>"
)


def _claimed_pair(claim: Claim | None, baseline: str | None, candidate: str | None) -> str:
    """The source's numbers for the two runtimes compared ("go 182 MB vs rust 146 MB"); all of the claim's
    values when it has none under those names; its sentence when it has no values."""
    if claim is None:
        return ""
    values = claim.values or {}
    if baseline in values and candidate in values:
        unit = "" if claim.unit == COUNT_UNIT else (claim.unit or "")
        return " vs ".join(f"{side} {format_quantity(values[side], unit, missing=NO_EVIDENCE)}"
                           for side in (candidate, baseline))
    return claimed_text(claim)


def _ratio_pair(verdict) -> str:
    """"claimed ×1.13 → measured ×2.47 [1.92, 3.06] (98.3% CI)"; what exists of it, or why no ratio."""
    claimed, ratio = _field(verdict, "claimed_ratio"), _field(verdict, "measured_ratio")
    low, high, confidence = (_field(verdict, name) for name in ("ratio_ci_low", "ratio_ci_high", "confidence"))
    parts = [f"claimed {format_ratio(claimed)}"] if _finite(claimed) else []
    if _finite(ratio) and _finite(low) and _finite(high):
        level = f" ({confidence * 100:.3g}% CI)" if _finite(confidence) else ""
        parts.append(f"measured {format_ratio_interval(ratio, low, high)}{level}")
    elif _finite(claimed):
        parts.append("measured: no ratio can be formed (see the verdict)")
    return " \N{RIGHTWARDS ARROW} ".join(parts)


def matrix_rows(verdicts: Iterable, claims: Mapping[str, Claim]) -> pd.DataFrame:
    """One row per verdict (MATRIX_COLUMNS), ordered by source and claim as claims.yaml lists them."""
    order = {claim_id: index for index, claim_id in enumerate(claims)}
    rows = []
    for verdict in verdicts:
        claim_id = _field(verdict, "claim_id")
        claim = claims.get(claim_id)
        baseline, candidate = _field(verdict, "baseline"), _field(verdict, "candidate")
        rows.append({
            "source": claim.source if claim is not None else "",
            "claim": claim_id,
            "comparison": f"{candidate} / {baseline}" if baseline and candidate else "",
            "verdict": _field(verdict, "verdict"),
            "claimed": _claimed_pair(claim, baseline, candidate),
            "measured": measured_text(verdict, claim),
            "ratio": _ratio_pair(verdict),
            "notebook": _field(verdict, "notebook") or "",
            "_order": order.get(claim_id, len(order)),
        })
    frame = pd.DataFrame(rows, columns=[*MATRIX_COLUMNS, "_order"])
    return frame.sort_values(["_order", "comparison"], kind="stable").drop(columns="_order").reset_index(drop=True)


def verdict_badge(word: str) -> str:
    """The verdict's word on its colour, as HTML: white text on dark colours, black on light."""
    colour = VERDICT_COLOURS.get(word, "#DDDDDD")
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    text = "#000" if 0.299 * red + 0.587 * green + 0.114 * blue > 140 else "#fff"
    return f'<span class="word" style="background:{colour};color:{text}">{html.escape(word)}</span>'


def matrix_html(rows: pd.DataFrame, link_prefix: str = "") -> str:
    """The rows as an HTML table; each claim links to its row on `link_prefix` + "<notebook>.nocode.html"."""
    header = ("<tr><th>source</th><th>claim</th><th>verdict</th><th>claimed by the source</th>"
              "<th>measured here</th><th>ratio, candidate / baseline</th></tr>")
    body = []
    for row in rows.itertuples(index=False):
        href = f"{link_prefix}{row.notebook}.nocode.html#{claim_anchor(row.claim)}" if row.notebook else ""
        claim = (f'<a href="{html.escape(href)}">{html.escape(row.claim)}</a>' if href else html.escape(row.claim))
        claim += f"<br><small>{html.escape(row.comparison)}</small>" if row.comparison else ""
        body.append(f"<tr><td>{html.escape(row.source)}</td><td>{claim}</td><td>{verdict_badge(row.verdict)}</td>"
                    f"<td>{html.escape(row.claimed)}</td><td>{html.escape(row.measured)}</td>"
                    f"<td>{html.escape(row.ratio)}</td></tr>")
    return MATRIX_STYLE + '<table class="loadlab-matrix">' + header + "".join(body) + "</table>"
