"""Latency percentiles: one definition, and histograms merged across trials, never percentiles averaged.

**The percentile definition, used everywhere loadlab computes one.** The p-th
percentile of N requests is the smallest recorded latency v with at least
ceil(p/100 * N) requests <= v: the nearest-rank definition (Hyndman & Fan's
type 1, numpy's ``method="inverted_cdf"``). Why this one:

- it never interpolates, so it reports a latency some request actually had,
  and at least p % of requests took no longer (a tail percentile is never
  flattered by rounding down a rank);
- it needs only counts, so it is the same on raw values, on (value, count)
  histograms and on HdrHistograms, and it merges: percentiles of several
  trials come from their summed counts;
- it is checkable against an independent implementation (numpy), as
  tests/test_stats_latency.py does.

For an HdrHistogram each bucket stands for its highest equivalent value, as
HdrHistogram itself reports percentiles (an overestimate by at most the
histogram's precision, 0.1 % at 3 significant figures). HdrHistogram's own
``get_value_at_percentile`` is *not* used: it rounds p/100 * N half up
instead of taking the ceiling, so for small N it can answer one rank low
(p91 of 10 requests: the 9th instead of the 10th). Open-loop trial rows
(loadlab.harness.trial), the latency and merged-latency tables
(loadlab.tables, loadlab.latency_curve) all go through `hdr_percentiles_s` here.

The one exception is measured, not computed here: wrk's closed-loop spectrum
is computed by wrk itself inside the loadgen (servers/loadgen/report.lua
asks wrk for each percentile; wrk's rank is round(p/100 * N + 0.5), which is
the same rank except one higher when p/100 * N is a whole number). It is raw
data and is read as wrk wrote it.

The p99 of two trials together is not the mean of their p99s (a trial with a
stall and one without average to a p99 that neither saw). Percentiles across
trials come from the merged histogram: the counts of every trial added bucket
by bucket, then read off once.

Two sources are supported:

- HdrHistogram (the `hdrhistogram` package; vegeta's open-loop results are
  folded into one), as objects or as the base64 compressed "HISTFAAA..."
  strings that `HdrHistogram.encode()` and other HdrHistogram ports write.
- plain (value, count) histograms, which map a recorded latency to the
  number of requests that took it.

Recorded values are integers in some unit; every function here takes
`value_unit_s`, the length of one recorded unit in seconds (1e-6 for
microseconds, 1e-9 for nanoseconds), and reports seconds. There is no
default because guessing a unit wrong is silent by a factor of 1000.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import NamedTuple, Union

import numpy as np
from hdrh.histogram import HdrHistogram

# The five percentiles a summary reports (a trial's row, LatencySpectrum), besides the maximum.
SUMMARY_PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)
# The dense grid a whole spectrum is reported on: 0.1-percent steps to 99, then finer through
# 99.999 (1,179 points). servers/loadgen/report.lua asks wrk for exactly these; open-loop
# spectra use the same grid so that both loops' latency tables line up.
SPECTRUM_GRID_PERCENTILES = tuple(
    [round(p / 10, 3) for p in range(1, 991)]
    + [round(99 + p / 100, 3) for p in range(1, 91)]
    + [round(99.9 + p / 1000, 3) for p in range(1, 91)]
    + [round(99.99 + p / 1000, 3) for p in range(1, 10)]
)

def percentile_column(percentile: float) -> str:
    """The tidy column of a summary percentile: 50 -> latency_p50_s, 99.9 -> latency_p99_9_s."""
    return f"latency_p{percentile:g}_s".replace(".", "_")


HdrSource = Union[HdrHistogram, str, bytes]
ValueCountSource = Union[Mapping[float, int], Iterable[tuple[float, int]]]


class LatencySpectrum(NamedTuple):
    """Percentile spectrum of merged latencies, all in seconds, and the request count behind it."""

    p50_s: float
    p90_s: float
    p99_s: float
    p99_9_s: float
    p99_99_s: float
    max_s: float
    count: int

    def as_rows(self) -> list[tuple[float, float]]:
        """(percentile, latency_s) pairs, max as percentile 100: handy for a tidy DataFrame."""
        return list(zip((*SUMMARY_PERCENTILES, 100.0), self[:6]))


def _as_histogram(source: HdrSource) -> HdrHistogram:
    if isinstance(source, HdrHistogram):
        return source
    if isinstance(source, str):
        source = source.strip().encode("ascii")
    if isinstance(source, bytes):
        return HdrHistogram.decode(source.strip())
    raise TypeError(f"expected an HdrHistogram or its base64 encoding, got {type(source).__name__}")


def merge_hdr_histograms(histograms: Iterable[HdrSource]) -> HdrHistogram:
    """Sum HdrHistograms (objects or base64 compressed strings) into a new one; inputs are not modified.

    The result can track the widest range among the inputs, so that adding
    a histogram with a larger maximum never fails.
    """
    decoded = [_as_histogram(source) for source in histograms]
    if not decoded:
        raise ValueError("no histograms to merge")
    merged = HdrHistogram(
        min(h.lowest_trackable_value for h in decoded),
        max(h.highest_trackable_value for h in decoded),
        max(h.significant_figures for h in decoded),
    )
    for histogram in decoded:
        merged.add(histogram)
    return merged


def hdr_value_counts(histogram: HdrSource) -> tuple[np.ndarray, np.ndarray]:
    """Non-empty buckets of an HdrHistogram as (values, counts), values in recorded units, ascending.

    Each bucket is represented by its highest equivalent value.
    """
    histogram = _as_histogram(histogram)
    counts = np.ctypeslib.as_array(histogram.counts)[: histogram.counts_len]
    indices = np.flatnonzero(counts)
    values = np.array(
        [histogram.get_highest_equivalent_value(histogram.get_value_from_index(int(i))) for i in indices],
        dtype=float,
    )
    # Bucket indices are ordered by value, but re-sort in case a port differs.
    order = np.argsort(values, kind="stable")
    return values[order], counts[indices][order].astype(np.int64)


def merge_value_counts(histograms: Iterable[ValueCountSource]) -> tuple[np.ndarray, np.ndarray]:
    """Merge (value -> count) histograms by adding counts of equal values.

    Each histogram is a mapping or an iterable of (value, count) pairs, e.g.
    wrk's microsecond buckets. Returns (values, counts), values ascending and
    in the recorded unit; zero-count values are dropped.
    """
    value_chunks: list[np.ndarray] = []
    count_chunks: list[np.ndarray] = []
    for histogram in histograms:
        pairs = list(histogram.items()) if isinstance(histogram, Mapping) else list(histogram)
        if not pairs:
            continue
        array = np.asarray(pairs, dtype=float)
        if array.ndim != 2 or array.shape[1] != 2:
            raise ValueError("each histogram must hold (value, count) pairs")
        value_chunks.append(array[:, 0])
        count_chunks.append(array[:, 1])
    if not value_chunks:
        raise ValueError("no histogram values to merge")
    values = np.concatenate(value_chunks)
    counts = np.concatenate(count_chunks)
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(counts))):
        raise ValueError("histogram values and counts must be finite")
    if np.any(counts < 0) or np.any(counts != np.round(counts)):
        raise ValueError("histogram counts must be non-negative integers")
    if np.any(values < 0):
        raise ValueError("latency values must be >= 0")
    unique_values, inverse = np.unique(values, return_inverse=True)
    summed = np.bincount(inverse, weights=counts).astype(np.int64)
    keep = summed > 0
    return unique_values[keep], summed[keep]


def percentiles_from_counts(
    values: np.ndarray, counts: np.ndarray, percentiles: Iterable[float]
) -> np.ndarray:
    """Nearest-rank percentiles (0 < p <= 100) of a histogram given as ascending values and counts.

    The one percentile definition of loadlab (module docstring).
    """
    values = np.asarray(values, dtype=float)
    cumulative = np.cumsum(np.asarray(counts, dtype=np.int64))
    total = int(cumulative[-1]) if cumulative.size else 0
    if total == 0:
        raise ValueError("the histogram is empty: no requests were recorded")
    wanted = np.asarray(list(percentiles), dtype=float)
    if np.any((wanted <= 0) | (wanted > 100)):
        raise ValueError("percentiles must lie in (0, 100]")
    # Round before ceil so that 99.9 % of 1000 is rank 999, not 1000 by float error.
    ranks = np.ceil(np.round(wanted / 100.0 * total, 9)).astype(np.int64)
    return values[np.searchsorted(cumulative, ranks, side="left")]


def _spectrum(values: np.ndarray, counts: np.ndarray, value_unit_s: float) -> LatencySpectrum:
    if not (value_unit_s > 0 and math.isfinite(value_unit_s)):
        raise ValueError(f"value_unit_s must be a positive number of seconds, got {value_unit_s!r}")
    recorded = percentiles_from_counts(values, counts, (*SUMMARY_PERCENTILES, 100.0))
    seconds = [float(v) * value_unit_s for v in recorded]
    return LatencySpectrum(*seconds, count=int(np.sum(counts)))


def hdr_latency_spectrum(histograms: Iterable[HdrSource], *, value_unit_s: float) -> LatencySpectrum:
    """Merge the trials' HdrHistograms and return p50, p90, p99, p99.9, p99.99 and max in seconds.

    `value_unit_s`: seconds per recorded unit (1e-6 if the histograms
    recorded microseconds).
    """
    values, counts = hdr_value_counts(merge_hdr_histograms(histograms))
    return _spectrum(values, counts, value_unit_s)


def value_count_latency_spectrum(
    histograms: Iterable[ValueCountSource], *, value_unit_s: float
) -> LatencySpectrum:
    """Merge (value, count) histograms (e.g. wrk's, microseconds) and return the spectrum in seconds."""
    values, counts = merge_value_counts(histograms)
    return _spectrum(values, counts, value_unit_s)


def hdr_percentiles_s(histogram: HdrSource, percentiles: Iterable[float], *, value_unit_s: float) -> list[float]:
    """Nearest-rank percentiles of one HdrHistogram, in seconds; NaN for each when it recorded nothing."""
    if not (value_unit_s > 0 and math.isfinite(value_unit_s)):
        raise ValueError(f"value_unit_s must be a positive number of seconds, got {value_unit_s!r}")
    values, counts = hdr_value_counts(histogram)
    percentiles = list(percentiles)
    if not counts.size:
        return [math.nan] * len(percentiles)
    return [float(v) * value_unit_s for v in percentiles_from_counts(values, counts, percentiles)]


def summary_columns(histogram: HdrSource, *, value_unit_s: float) -> dict[str, float]:
    """A trial row's latency_p50_s ... latency_p99_99_s (SUMMARY_PERCENTILES) from one HdrHistogram."""
    seconds = hdr_percentiles_s(histogram, SUMMARY_PERCENTILES, value_unit_s=value_unit_s)
    return {percentile_column(p): value for p, value in zip(SUMMARY_PERCENTILES, seconds)}
