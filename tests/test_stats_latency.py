"""Latency across trials: merged histograms, never averaged percentiles."""

from __future__ import annotations

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

from loadlab.stats import (
    SPECTRUM_GRID_PERCENTILES,
    SUMMARY_PERCENTILES,
    hdr_latency_spectrum,
    hdr_percentiles_s,
    merge_hdr_histograms,
    merge_value_counts,
    percentiles_from_counts,
    value_count_latency_spectrum,
)

MICROSECOND_S = 1e-6


def nearest_rank(values: np.ndarray, percentile: float) -> float:
    """Independent reference: numpy's 'inverted_cdf' is the nearest-rank definition."""
    return float(np.percentile(values, percentile, method="inverted_cdf"))


def histogram_of(values_us) -> HdrHistogram:
    histogram = HdrHistogram(1, 60_000_000, 3)
    for value in values_us:
        histogram.record_value(int(value))
    return histogram


@pytest.fixture
def two_trials_us() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(12)
    calm = rng.lognormal(np.log(800), 0.3, 20_000).astype(int) + 1
    # The second trial stalls: 2 % of its requests take ~200 ms.
    stalled = rng.lognormal(np.log(800), 0.3, 20_000).astype(int) + 1
    stalled[:400] = rng.integers(150_000, 250_000, 400)
    return calm, stalled


def test_merged_hdr_spectrum_matches_the_pooled_raw_values(two_trials_us):
    calm, stalled = two_trials_us
    spectrum = hdr_latency_spectrum([histogram_of(calm), histogram_of(stalled)], value_unit_s=MICROSECOND_S)
    pooled = np.concatenate([calm, stalled])
    assert spectrum.count == pooled.size
    for percentile, seconds in zip(SUMMARY_PERCENTILES, spectrum[:5]):
        # HdrHistogram keeps 3 significant figures and reports a bucket's upper end.
        assert seconds == pytest.approx(nearest_rank(pooled, percentile) * MICROSECOND_S, rel=2e-3)
    assert spectrum.max_s == pytest.approx(pooled.max() * MICROSECOND_S, rel=2e-3)


def test_averaging_percentiles_would_have_been_wrong(two_trials_us):
    calm, stalled = two_trials_us
    spectrum = hdr_latency_spectrum([histogram_of(calm), histogram_of(stalled)], value_unit_s=MICROSECOND_S)
    averaged_p99_s = np.mean([nearest_rank(calm, 99), nearest_rank(stalled, 99)]) * MICROSECOND_S
    # Pooled, exactly 1 % of the requests stalled: p99 is still a calm request (~2 ms) and
    # p99.9 is in the stall. Averaging the trials' p99s (~2 ms and ~150 ms) reports ~80 ms,
    # a latency that 99 % of requests never came near and that no request's rank supports.
    assert spectrum.p99_s < 0.005
    assert spectrum.p99_9_s > 0.1
    assert averaged_p99_s > 0.05


def test_base64_encoded_histograms_decode_and_merge(two_trials_us):
    calm, stalled = two_trials_us
    objects = [histogram_of(calm), histogram_of(stalled)]
    encoded = [h.encode() for h in objects]
    assert isinstance(encoded[0], bytes) and encoded[0].startswith(b"HISTF")
    from_strings = hdr_latency_spectrum([e.decode("ascii") for e in encoded], value_unit_s=MICROSECOND_S)
    from_objects = hdr_latency_spectrum(objects, value_unit_s=MICROSECOND_S)
    assert from_strings == from_objects


def test_merging_leaves_the_inputs_untouched_and_widens_the_range():
    small = histogram_of([100, 200])
    wide = HdrHistogram(1, 3_600_000_000, 3)
    wide.record_value(3_000_000_000)
    merged = merge_hdr_histograms([small, wide])
    assert merged.get_total_count() == 3
    assert small.get_total_count() == 2 and wide.get_total_count() == 1


def test_wrk_style_value_count_histograms_merge_by_adding_counts():
    first = {100: 5, 200: 3, 5_000: 1}
    second = [(100, 2), (300, 4), (5_000, 1)]
    values, counts = merge_value_counts([first, second])
    assert values.tolist() == [100, 200, 300, 5_000]
    assert counts.tolist() == [7, 3, 4, 2]
    spectrum = value_count_latency_spectrum([first, second], value_unit_s=MICROSECOND_S)
    raw = np.repeat(values, counts)
    assert spectrum.count == 16
    assert spectrum.p50_s == pytest.approx(nearest_rank(raw, 50) * MICROSECOND_S)
    assert spectrum.p90_s == pytest.approx(nearest_rank(raw, 90) * MICROSECOND_S)
    assert spectrum.max_s == pytest.approx(5_000e-6)


def test_nearest_rank_agrees_with_numpy_inverted_cdf_on_seeded_data():
    rng = np.random.default_rng(4)
    raw = rng.integers(1, 500, 997)
    values, counts = np.unique(raw, return_counts=True)
    for percentile in (1, 25, 50, 90, 99, 99.9, 100):
        assert percentiles_from_counts(values, counts, [percentile])[0] == nearest_rank(raw, percentile)


def test_spectrum_rows_for_a_dataframe():
    spectrum = value_count_latency_spectrum([{1000: 10}], value_unit_s=MICROSECOND_S)
    rows = spectrum.as_rows()
    assert [p for p, _ in rows] == [50.0, 90.0, 99.0, 99.9, 99.99, 100.0]
    assert all(latency == pytest.approx(1e-3) for _, latency in rows)


@pytest.mark.parametrize(
    ("histograms", "message"),
    [([], "no histogram"), ([{100: -1}], "non-negative"), ([{100: 0}], "empty")],
)
def test_bad_histograms_are_refused(histograms, message):
    with pytest.raises(ValueError, match=message):
        value_count_latency_spectrum(histograms, value_unit_s=MICROSECOND_S)


def test_the_unit_is_required_and_must_be_positive():
    with pytest.raises(TypeError):
        value_count_latency_spectrum([{100: 1}])  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="value_unit_s"):
        value_count_latency_spectrum([{100: 1}], value_unit_s=0)


# ---- the one percentile definition, wherever a percentile is computed --------


def test_one_histogram_reads_off_nearest_rank_not_hdrhistograms_rounding():
    # p91 of ten requests: nearest rank is the 10th (ceil(9.1)); HdrHistogram's own
    # get_value_at_percentile rounds 9.1 half up to the 9th and answers one rank low.
    values_us = [1000 * k for k in range(1, 11)]
    histogram = histogram_of(values_us)
    (p91_s,) = hdr_percentiles_s(histogram, [91], value_unit_s=MICROSECOND_S)
    assert p91_s == pytest.approx(nearest_rank(np.array(values_us), 91) * MICROSECOND_S, rel=1e-3)
    assert p91_s == pytest.approx(10e-3, rel=1e-3)
    assert histogram.get_value_at_percentile(91) * MICROSECOND_S == pytest.approx(9e-3, rel=1e-3)


def test_one_histogram_and_the_merged_spectrum_agree(two_trials_us):
    calm, _ = two_trials_us
    histogram = histogram_of(calm)
    alone = hdr_latency_spectrum([histogram], value_unit_s=MICROSECOND_S)
    assert hdr_percentiles_s(histogram.encode().decode(), SUMMARY_PERCENTILES, value_unit_s=MICROSECOND_S) == list(alone[:5])


def test_an_empty_histogram_has_no_percentiles():
    empty = HdrHistogram(1, 60_000_000, 3)
    assert all(np.isnan(hdr_percentiles_s(empty, [50, 99], value_unit_s=MICROSECOND_S)))
    with pytest.raises(ValueError, match="value_unit_s"):
        hdr_percentiles_s(empty, [50], value_unit_s=0)


def test_the_spectrum_grid_is_the_one_wrk_reports_on():
    import json
    from pathlib import Path

    report = json.loads((Path(__file__).parent / "fixtures" / "wrk" / "json-c16-2s.json").read_text())
    assert tuple(p for p, _ in report["spectrum_us"]) == SPECTRUM_GRID_PERCENTILES
    assert len(SPECTRUM_GRID_PERCENTILES) == 1179 and SUMMARY_PERCENTILES[0] == 50.0
