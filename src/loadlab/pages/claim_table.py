"""One row per verdict, the way a reader checks it: claimed and measured side by side, how to redo it.

For every verdict: the claim's own numbers (claims.yaml, in the source's
units), the measured absolute values (the medians behind the ratio, in this
collection's units), both ratios, the command that reproduces it, and links
to its run's rows in the open dataset (reports/data/) and its verdict record. The same rows appear on the
notebook's page and in the index, as an HTML table (links clickable).
"""

from __future__ import annotations

import html
import math
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

import pandas as pd

from loadlab import metrics, paths, rundir
from loadlab.rundir import run_scale
from loadlab.claims import Claim
from loadlab.errors import LoadlabError
from loadlab.units import format_quantity, format_ratio, format_ratio_interval, strip_unit

from .numbers import NO_EVIDENCE, format_mapping

CLAIM_TABLE_STYLE = (
    # A page is read in a window, not scrolled sideways: long commands and run ids wrap inside their cells.
    "<style>table.loadlab-claims{border-collapse:collapse;font-size:90%;max-width:100%}"
    "table.loadlab-claims td,table.loadlab-claims th{border:1px solid #ccc;padding:.2em .4em;"
    "text-align:left !important;vertical-align:top;overflow-wrap:break-word}"
    "table.loadlab-claims code{white-space:normal}"
    # Wide enough for "loadlab notebooks --scale quick" on one line, so commands wrap between words only.
    "table.loadlab-claims td:nth-child(6){min-width:19em}</style>"
)
# claims.yaml's unit for a number of things (threads): printed as the bare number, the quantity named beside it.
COUNT_UNIT = "count"
CLAIM_COLUMNS = ("claim", "comparison", "verdict", "claimed", "measured", "ratio", "why", "reproduce", "data")


def _field(verdict, name, default=None):
    """A verdict's field, whether the verdict is a record object or a mapping (read from JSON)."""
    if isinstance(verdict, Mapping):
        return verdict.get(name, default)
    return getattr(verdict, name, default)


def _finite(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def claimed_text(claim: Claim | None) -> str:
    """"go 182 MB · java-platform 2,100 MB · rust 146 MB", or the claim's sentence when it has no values."""
    if claim is None:
        return ""
    if claim.values:
        if claim.unit == COUNT_UNIT:
            # A count has no unit to print ("go 12 count"): the quantity names what was counted.
            return format_mapping(claim.values) + (f" ({strip_unit(claim.metric)})" if claim.metric else "")
        return format_mapping(claim.values, claim.unit or "")
    return claim.claim or ""


def measured_text(verdict, claim: Claim | None = None) -> str:
    """The measured absolute values behind a verdict, with units; "" when the verdict recorded none."""
    measured = _field(verdict, "measured") or {}
    if not isinstance(measured, Mapping) or not measured:
        return ""
    if "baseline_median" in measured and "candidate_median" in measured:
        metric = str(measured.get("metric", ""))
        unit = metrics.unit(metric)
        baseline, candidate = _field(verdict, "baseline") or "baseline", _field(verdict, "candidate") or "candidate"
        medians = (format_quantity(measured[side], unit, missing=NO_EVIDENCE)
                   for side in ("baseline_median", "candidate_median"))
        return f"{_quantity_words(metric)}: {baseline} {next(medians)}, {candidate} {next(medians)} (medians)"
    # Keys that name the claim's own series (go, swoole) carry the claim's unit (a count carries none).
    claim_keys = set(claim.values) if claim is not None else set()
    unit = claim.unit if claim is not None and claim_keys & set(map(str, measured)) else ""
    return format_mapping(measured, "" if unit == COUNT_UNIT else unit or "")


def _quantity_words(metric: str) -> str:
    """The metric's label without its axis unit ("latency p99", not "latency p99 (s)": the values carry their own,
    scaled); a parenthesis that says more than a unit ("% of its allowance") stays."""
    words = metrics.label(metric)
    head, _, last = words.rpartition(" (")
    return head if head and last.rstrip(")") in {metrics.unit(metric), "MiB", "s", "ms"} else words


def ratio_text(verdict) -> str:
    """"measured ×1.09 [1.07, 1.15], claimed ×0.892", or "" for a verdict that is not a ratio."""
    ratio, low, high = (_field(verdict, name) for name in ("measured_ratio", "ratio_ci_low", "ratio_ci_high"))
    parts = []
    if _finite(ratio):
        parts.append("measured " + (format_ratio_interval(ratio, low, high) if _finite(low) and _finite(high)
                                    else format_ratio(ratio)))  # fmt: skip
    claimed = _field(verdict, "claimed_ratio")
    if _finite(claimed):
        parts.append(f"claimed {format_ratio(claimed)}")
    return ", ".join(parts)


def reproduce_commands(notebook: str, scale: str | None) -> list[str]:
    """The commands that measure the verdict again, and that re-analyse the committed run."""
    number = notebook.split("-", 1)[0]
    scale = scale or "quick"
    return [
        f"loadlab notebooks --scale {scale} --only {number}",
        f"loadlab notebooks --scale {scale} --only {number} --run-id latest",
    ]


def left_out_text(notebook: str, scale: str, what: str) -> str:
    """The line a page shows where its scale leaves a run out (`plans.measured_at`): `what` the run measures, that no
    verdict reads it, and the command that measures it."""
    number = notebook.split("-", 1)[0]
    return (f"**Not measured at the {scale} scale:** {what}. No verdict reads it, and the {scale} scale (the README's "
            f"main command) leaves it out to keep within its time budget; `loadlab notebooks --scale full --only "
            f"{number}` measures it.")


def data_links(run_id: str | None, page_dir: Path, notebook: str | None = None) -> list[tuple[str, str]]:
    """[(name, relative href)], every one inside reports/ so that it holds when the folder is hosted alone: the
    run's row in the open dataset (pages.dataset), and the verdict record of `notebook` when it has one."""
    if not run_id:
        return []
    from .dataset import run_href  # imported where a link is made: the dataset's module builds tables (pandas, runs)

    links = [("dataset", _from_page(paths.REPORTS_DIR / run_href(run_id), page_dir))]
    record = paths.VERDICTS_DIR / f"{notebook}.json"
    if notebook and record.exists():
        links.append(("verdicts", _from_page(record, page_dir)))
    return links


def _from_page(target: Path, page_dir: Path) -> str:
    """`target` (under reports/, "#fragment" kept) as a relative link from a page in `page_dir`."""
    path, _, fragment = str(target).partition("#")
    return Path(os.path.relpath(path, page_dir)).as_posix() + (f"#{fragment}" if fragment else "")


def claim_rows(verdicts: Iterable, claims: Mapping[str, Claim], page_dir: Path | None = None) -> pd.DataFrame:
    """One row per verdict (CLAIM_COLUMNS); `reproduce` and `data` hold lists for `claim_table_html`."""
    page_dir = Path(page_dir or paths.REPORTS_DIR)
    rows = []
    for verdict in verdicts:
        claim = claims.get(_field(verdict, "claim_id"))
        baseline, candidate = _field(verdict, "baseline"), _field(verdict, "candidate")
        run_id = _field(verdict, "run_id")
        rows.append({
            "claim": _field(verdict, "claim_id"),
            "comparison": f"{candidate} / {baseline}" if baseline and candidate else "",
            "verdict": _field(verdict, "verdict"),
            "claimed": claimed_text(claim),
            "measured": measured_text(verdict, claim),
            "ratio": ratio_text(verdict),
            "why": _field(verdict, "explanation") or "",
            "reproduce": reproduce_commands(_field(verdict, "notebook") or "", run_scale(run_id)),
            "data": [(name, href, run_id) for name, href in data_links(run_id, page_dir, _field(verdict, "notebook"))],
        })  # fmt: skip
    return pd.DataFrame(rows, columns=list(CLAIM_COLUMNS))


def claim_anchor(claim_id: str) -> str:
    """The HTML id of a claim's row on its notebook's page (and the index's table): "claim-S1-rss"."""
    return "claim-" + "".join(c if c.isalnum() or c in "-_" else "-" for c in str(claim_id))


def claim_table_html(rows: pd.DataFrame) -> str:
    """The rows as an HTML table: commands as code, data as links, every text escaped."""
    header = ("<tr><th>claim</th><th>verdict</th><th>claimed (source's setup)</th><th>measured here</th>"
              "<th>ratio</th><th>reproduce</th><th>data</th></tr>")  # fmt: skip
    body, anchored = [], set()
    for row in rows.itertuples(index=False):
        claim = html.escape(row.claim) + (f"<br><small>{html.escape(row.comparison)}</small>" if row.comparison else "")
        verdict = f"<b>{html.escape(row.verdict)}</b>" + (f"<br><small>{html.escape(row.why)}</small>" if row.why else "")
        commands = "<br>".join(f"<code>{html.escape(command)}</code>" for command in row.reproduce)
        links = " · ".join(f'<a href="{html.escape(href)}" title="{html.escape(run_id)}">{html.escape(name)}</a>'
                                        for name, href, run_id in row.data)  # fmt: skip
        run = row.data[0][2] if row.data else ""
        data = links + (f"<br><small>{html.escape(run)}</small>" if run else "")
        # A claim judged on two pairs (S1-p99: java / go, rust / go) has two rows; the link goes to its first.
        anchor = claim_anchor(row.claim)
        row_id = f' id="{anchor}"' if anchor not in anchored else ""
        anchored.add(anchor)
        body.append(f'<tr{row_id}><td>{claim}</td><td>{verdict}</td>'
                    f"<td>{html.escape(row.claimed)}</td>"
                    f"<td>{html.escape(row.measured)}</td><td>{html.escape(row.ratio)}</td><td>{commands}</td>"
                    f"<td>{data}</td></tr>")  # fmt: skip
    return CLAIM_TABLE_STYLE + '<table class="loadlab-claims">' + header + "".join(body) + "</table>"


def source_claims_table(claims: Mapping[str, Claim], source: str) -> pd.DataFrame:
    """A source's claims as a notebook shows them before measuring: id, what is claimed, in its units."""
    rows = [{"claim": claim.id, "statement": claim.claim or "", "quantity": strip_unit(claim.metric or ""),
             "claimed values": format_mapping(claim.values, "" if claim.unit == COUNT_UNIT else claim.unit or "")
             if claim.values else "",
             "note": claim.note or ""} for claim in claims.values() if claim.source == source]  # fmt: skip
    return pd.DataFrame(rows, columns=["claim", "statement", "quantity", "claimed values", "note"])


def verdict_runs(verdicts: Iterable) -> list[str]:
    """The run ids behind `verdicts`, in first-seen order, each once."""
    return list(dict.fromkeys(run for run in (_field(v, "run_id") for v in verdicts) if run))


def verdict_sources(verdicts: Iterable, claims: Mapping[str, Claim], sources: Mapping) -> dict:
    """{Source: a run it was judged on}: which run to set beside each judged source's setup.

    A run of trials (a server under load) is preferred to a microbenchmark, because its setup
    (placement, load, window) is what a source's setup talks about.
    """
    chosen: dict = {}
    for verdict in verdicts:
        claim, run = claims.get(_field(verdict, "claim_id")), _field(verdict, "run_id")
        if claim is None or not run or claim.source not in sources:
            continue
        source = sources[claim.source]
        if source not in chosen or (_is_microbenchmark(chosen[source]) and not _is_microbenchmark(run)):
            chosen[source] = run
    return chosen


def _is_microbenchmark(run_id: str) -> bool:
    try:
        return (rundir.find_run(run_id, paths.RAW_DIR) / "results.parquet").exists()
    except LoadlabError:
        return False


def verdict_list(verdicts: Iterable) -> str:
    """One Markdown bullet per verdict: its claim, the pair it compares (candidate / baseline), the verdict and why."""
    return "\n".join(
        f"- **{_field(v, 'claim_id')}**"
        + (f" ({_field(v, 'candidate')} / {_field(v, 'baseline')})" if _field(v, "candidate") and _field(v, "baseline")
           else "")
        + f": **{_field(v, 'verdict')}.** {_field(v, 'explanation')}"
        for v in verdicts)
