"""Statistics for trials: medians with CIs, comparisons, tests, effect sizes, latency merging, power, noise.

Everything takes plain arrays (one value per trial) or tidy DataFrames and
returns plain numbers, NamedTuples or DataFrames. See docs/architecture.md, "Statistics".
"""

from .compare import (
    NOT_SIGNIFICANT,
    compare_conditions,
    holm_adjust_table,
    render_comparison_table,
)
from .conditions import compare_at_level, condition_summary
from .effect_size import CliffsDelta, cliffs_delta, cliffs_delta_magnitude
from .latency import (
    SPECTRUM_GRID_PERCENTILES,
    SUMMARY_PERCENTILES,
    LatencySpectrum,
    hdr_latency_spectrum,
    hdr_percentiles_s,
    hdr_value_counts,
    merge_hdr_histograms,
    merge_value_counts,
    percentile_column,
    percentiles_from_counts,
    value_count_latency_spectrum,
)
from .median import (
    DEFAULT_MEDIAN_CI_METHOD,
    MEDIAN_CI_METHODS,
    MedianEstimate,
    median_ci,
    median_interval,
    minimum_trials_for_median_ci,
    sign_test_coverage,
)
from .noise import instance_medians, isolation_noise, isolation_spread_test, noise_floor, spread_tests_against
from .outliers import TukeyFences, tukey_fences, tukey_outliers
from .power import minimum_detectable_ratio, trials_for_detectable_ratio
from .ratio import RatioEstimate, ratio_of_medians_ci
from .shift import ShiftRatioInterval, interval_p_value, minimum_trials_for_shift_interval, shift_ratio_interval
from .significance import MannWhitneyResult, holm_adjust, mann_whitney, minimum_two_sided_p_value

__all__ = [
    "DEFAULT_MEDIAN_CI_METHOD",
    "MEDIAN_CI_METHODS",
    "NOT_SIGNIFICANT",
    "SPECTRUM_GRID_PERCENTILES",
    "SUMMARY_PERCENTILES",
    "CliffsDelta",
    "LatencySpectrum",
    "MannWhitneyResult",
    "MedianEstimate",
    "RatioEstimate",
    "ShiftRatioInterval",
    "TukeyFences",
    "cliffs_delta",
    "cliffs_delta_magnitude",
    "compare_at_level",
    "compare_conditions",
    "condition_summary",
    "hdr_latency_spectrum",
    "hdr_percentiles_s",
    "hdr_value_counts",
    "holm_adjust",
    "holm_adjust_table",
    "instance_medians",
    "isolation_noise",
    "isolation_spread_test",
    "mann_whitney",
    "median_ci",
    "median_interval",
    "merge_hdr_histograms",
    "merge_value_counts",
    "percentile_column",
    "minimum_detectable_ratio",
    "minimum_trials_for_median_ci",
    "noise_floor",
    "interval_p_value",
    "minimum_trials_for_shift_interval",
    "minimum_two_sided_p_value",
    "percentiles_from_counts",
    "ratio_of_medians_ci",
    "render_comparison_table",
    "shift_ratio_interval",
    "spread_tests_against",
    "sign_test_coverage",
    "tukey_fences",
    "trials_for_detectable_ratio",
    "tukey_outliers",
    "value_count_latency_spectrum",
]
