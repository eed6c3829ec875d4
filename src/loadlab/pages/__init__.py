"""What a report page shows besides its figures: provenance, per-claim rows, numbers, and checks on pages.

- provenance: the block each page opens with (runs, commit, placement,
  versions, the source's setup beside this one);
- claim_rows: per verdict, claimed and measured values, ratios, the command
  that reproduces it and links to its data;
- noise_band_columns: each verdict's own A/A noise band, for forest plots;
- atlas: notebook 07's table of every runtime on the same axes (median [CI], n, run, condition), and what it lacks;
- capacity_ranking_text: notebook 00's ranking of the fastest servers, in sentences,
  open_loop_ceiling_text: the open loop's ceiling, and CEILING_LINES: the two loadgen
  utilizations the ceiling figure is read against;
- overload_over_time and overload_reading: notebook 02's overload over each window, and where its backlog waited;
- overhead: notebook 06's reading of what each profiler costs;
- summary: a run's per-condition table as a page prints it (recorded metrics, milliseconds, `median [low, high]`);
- replication: notebook 99's "does a second run agree?" from reports/replication.json;
- numbers: how numbers and mappings are printed on a page;
- html_checks, links and browser: what the tests (and `loadlab notebooks`) check on
  the exported pages (links: every href and src resolves inside reports/);
- dataset and dictionary: the open dataset hosted with the pages (reports/data/: tidy tables, datapackage.json,
  a landing page with one anchor per run) and every column's unit and meaning.
"""

from .atlas import ATLAS_RUNTIMES, atlas_display, atlas_finding, atlas_table, few_trials_text, not_measured_text
from .atlas import held_short_text as atlas_held_short_text
from .atlas import basis_text as atlas_basis_text
from .atlas import panels as atlas_panels
from .capacity import CEILING_LINES, capacity_ranking_text, open_loop_ceiling_text
from .threats import threats_html, threats_rows
from .verdict_matrix import VERDICT_COLOURS, matrix_html, matrix_rows, verdict_badge
from .claim_table import (claim_anchor, claim_rows, claim_table_html, left_out_text, source_claims_table, verdict_list,
                          verdict_runs, verdict_sources)
from .noise import (
    detectable_effect_text,
    isolation_reading,
    isolation_sitting_note,
    noise_band_columns,
    noise_floor_text,
    sitting_note,
    spread_test_text,
    forest_finding,
    verdict_forest_rows,
)
from .overhead import margin_sentence, overhead_lines, ranked_functions_heading, unmeasured_overhead_line
from .overload import overload_over_time, overload_reading, peak_counts_by_ten_seconds
from .numbers import format_mapping, format_number, use_report_display_options
from .provenance import ProvenanceBlock, provenance_html, runtime_versions
from .replication import machines_text, replication_rows, replication_text
from .summary import format_summary, recorded_metrics, saturation_note, spread_note, with_concurrency, with_milliseconds

__all__ = [
    "ATLAS_RUNTIMES",
    "atlas_basis_text",
    "atlas_display",
    "atlas_finding",
    "atlas_held_short_text",
    "atlas_panels",
    "atlas_table",
    "few_trials_text",
    "not_measured_text",
    "CEILING_LINES",
    "ProvenanceBlock",
    "capacity_ranking_text",
    "open_loop_ceiling_text",
    "detectable_effect_text",
    "isolation_reading",
    "isolation_sitting_note",
    "noise_floor_text",
    "spread_test_text",
    "replication_rows",
    "replication_text",
    "machines_text",
    "claim_rows",
    "claim_table_html",
    "left_out_text",
    "format_mapping",
    "format_number",
    "noise_band_columns",
    "margin_sentence",
    "overhead_lines",
    "unmeasured_overhead_line",
    "ranked_functions_heading",
    "overload_over_time",
    "overload_reading",
    "peak_counts_by_ten_seconds",
    "format_summary",
    "recorded_metrics",
    "saturation_note",
    "spread_note",
    "with_concurrency",
    "with_milliseconds",
    "sitting_note",
    "forest_finding",
    "verdict_forest_rows",
    "VERDICT_COLOURS",
    "claim_anchor",
    "matrix_html",
    "threats_html",
    "threats_rows",
    "matrix_rows",
    "verdict_badge",
    "provenance_html",
    "runtime_versions",
    "source_claims_table",
    "use_report_display_options",
    "verdict_list",
    "verdict_runs",
    "verdict_sources",
]
