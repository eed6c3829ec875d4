"""vegeta: the open-loop command line and its per-request results.

`vegeta encode --to csv` writes one row per request with the columns below;
latencies are folded into an HdrHistogram (microsecond resolution, 3
significant digits) so trials can be merged without averaging percentiles.
Percentiles are read off it by loadlab.stats.latency's one definition.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from hdrh.histogram import HdrHistogram

from loadlab.stats.latency import HdrSource, summary_columns

RESULTS_BIN = "vegeta.bin"
RESULTS_CSV_GZ = "vegeta.csv.gz"
RESULTS_PARQUET = "vegeta-results.parquet"  # the CSV, kept as parquet (csv_to_parquet)
REPORT_JSON = "vegeta-report.json"
CSV_COLUMNS = (
    "timestamp_ns", "code", "latency_ns", "bytes_out", "bytes_in", "error",
    "body_base64", "attack", "seq", "method", "url", "headers_base64",
)
HISTOGRAM_LOWEST_US = 1
HISTOGRAM_HIGHEST_US = 3_600_000_000  # one hour
HISTOGRAM_SIGNIFICANT_DIGITS = 3
HISTOGRAM_UNIT_S = 1e-6  # one recorded unit: the histogram counts microseconds


def read_results_csv(source: Path | str | io.TextIOBase) -> pd.DataFrame:
    """Per-request results: t_s (from the first request), status, latency_s, bytes, error."""
    return _results_frame(_raw_results_csv(source))


def _raw_results_csv(source: Path | str | io.TextIOBase) -> pd.DataFrame:
    """vegeta's CSV as it is: every column (CSV_COLUMNS), as text."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", newline="") as handle:
            rows = list(csv.reader(handle))
    else:
        rows = list(csv.reader(source))
    return pd.DataFrame(
        [row[: len(CSV_COLUMNS)] for row in rows], columns=list(CSV_COLUMNS[: len(rows[0])]) if rows else CSV_COLUMNS
    )


def _results_frame(frame: pd.DataFrame) -> pd.DataFrame:
    if frame.empty:
        return pd.DataFrame(columns=["t_s", "status", "latency_s", "bytes_in", "bytes_out", "error", "seq"])
    timestamps = frame["timestamp_ns"].astype("int64")
    return pd.DataFrame(
        {
            "t_s": (timestamps - timestamps.min()) / 1e9,
            "status": frame["code"].astype("int64"),
            "latency_s": frame["latency_ns"].astype("int64") / 1e9,
            "bytes_in": frame["bytes_in"].astype("int64"),
            "bytes_out": frame["bytes_out"].astype("int64"),
            "error": frame["error"].astype(object).fillna("").astype(str),
            "seq": frame["seq"].astype("int64"),
        }
    )


# Integer columns of vegeta's CSV; timestamps, latencies and sequence numbers are stored as deltas.
_INTEGER_COLUMNS = ("timestamp_ns", "code", "latency_ns", "bytes_out", "bytes_in", "seq")
_DELTA_COLUMNS = ("timestamp_ns", "latency_ns", "seq")


def csv_to_parquet(csv_path: Path, parquet_path: Path) -> None:
    """vegeta's per-request CSV as parquet, every column and row in order, nothing lost.

    At thousands of requests a second the CSV was most of a run's raw data;
    delta-encoded integers and dictionary-encoded text (the same few bodies,
    headers and errors over and over) take about 2.5 times less (560 to 224 KB
    for 35,259 requests).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = _raw_results_csv(csv_path)
    for column in frame.columns:
        frame[column] = frame[column].astype("int64") if column in _INTEGER_COLUMNS else frame[column].astype(str)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    text = [column for column in frame.columns if column not in _INTEGER_COLUMNS]
    deltas = {column: "DELTA_BINARY_PACKED" for column in _DELTA_COLUMNS if column in frame.columns}
    temporary = parquet_path.with_suffix(".tmp")
    pq.write_table(table, temporary, compression="zstd", compression_level=19, use_dictionary=text,
                   column_encoding=deltas)
    temporary.replace(parquet_path)


def keep_as_parquet(directory: Path | str) -> None:
    """Replace the attack's per-request CSV in `directory` by its parquet copy (`csv_to_parquet`), if not done yet."""
    csv_path = Path(directory) / RESULTS_CSV_GZ
    if csv_path.exists():
        csv_to_parquet(csv_path, Path(directory) / RESULTS_PARQUET)
        csv_path.unlink()


def read_results(directory: Path | str) -> pd.DataFrame:
    """Per-request results of the attack whose files are in `directory` (parquet, or the CSV of older runs)."""
    directory = Path(directory)
    parquet_path = directory / RESULTS_PARQUET
    if parquet_path.exists():
        return _results_frame(pd.read_parquet(parquet_path))
    return read_results_csv(directory / RESULTS_CSV_GZ)


def has_results(directory: Path | str) -> bool:
    return (Path(directory) / RESULTS_PARQUET).exists() or (Path(directory) / RESULTS_CSV_GZ).exists()


def latency_histogram(latencies_s: np.ndarray) -> HdrHistogram:
    """Fold latencies (seconds) into an HdrHistogram counting microseconds."""
    histogram = HdrHistogram(HISTOGRAM_LOWEST_US, HISTOGRAM_HIGHEST_US, HISTOGRAM_SIGNIFICANT_DIGITS)
    for value_us in np.clip(np.round(np.asarray(latencies_s) * 1e6), HISTOGRAM_LOWEST_US, HISTOGRAM_HIGHEST_US):
        histogram.record_value(int(value_us))
    return histogram


def latency_summary_columns(histogram: HdrSource) -> dict[str, float]:
    """A trial row's latency_p50_s ... latency_p99_99_s from its histogram (object or encoded string)."""
    return summary_columns(histogram, value_unit_s=HISTOGRAM_UNIT_S)


@dataclass(frozen=True)
class VegetaSummary:
    """One open-loop run. Rates in requests per second, latencies in seconds."""

    requests: int
    rate_offered_rps: float
    throughput_rps: float
    success_ratio: float
    status_codes: dict[str, int]
    errors: list[str]
    duration_s: float


def parse_report(text: str) -> VegetaSummary:
    """`vegeta report -type=json` output."""
    document = json.loads(text)
    return VegetaSummary(
        requests=int(document["requests"]),
        rate_offered_rps=float(document["rate"]),
        throughput_rps=float(document["throughput"]),
        success_ratio=float(document["success"]),
        status_codes={str(k): int(v) for k, v in (document.get("status_codes") or {}).items()},
        errors=list(document.get("errors") or []),
        duration_s=(document["duration"] + document.get("wait", 0)) / 1e9,
    )


def summarize_results(results: pd.DataFrame) -> dict:
    """Counts by kind from per-request results (status 0 means no HTTP answer)."""
    answered = results["status"] > 0
    return {
        "requests": int(len(results)),
        "ok": int(((results["status"] >= 200) & (results["status"] < 400)).sum()),
        "non_2xx_3xx": int((answered & ((results["status"] < 200) | (results["status"] >= 400))).sum()),
        "timeouts": int(results["error"].str.contains("Client.Timeout|timeout", case=False, regex=True).sum()),
        "connect_errors": int(results["error"].str.contains("connect:", regex=False).sum()),
        "other_errors": int((~answered).sum()),
    }


def attack_command(
    url: str, rate_rps: float, duration_s: float, timeout_s: float, max_workers: int, directory: str = "/out",
    connection_per_request: bool = False,
) -> list[str]:
    """A shell command (run by `sh -c` in the loadgen image) that attacks, then encodes and reports.

    Every request's result is kept: vegeta's binary results become a gzip CSV
    and the JSON report, all in `directory` (inside the loadgen container).
    `connection_per_request` turns vegeta's keep-alive off: a new TCP
    connection for every request.
    """
    target = f"GET {url}"
    # vegeta parses -rate's count with strconv.Atoi: "8166.87/s" is refused, so the count is whole.
    rate_whole = max(1, round(rate_rps))
    return [
        "sh", "-c",
        f"mkdir -p {directory} && echo '{target}' | vegeta attack -rate={rate_whole}/s -duration={duration_s:g}s "
        f"-timeout={timeout_s:g}s -max-workers={max_workers} -keepalive={'false' if connection_per_request else 'true'} -output={directory}/{RESULTS_BIN} "
        f"&& vegeta encode --to csv {directory}/{RESULTS_BIN} | gzip -1 > {directory}/{RESULTS_CSV_GZ} "
        f"&& vegeta report -type=json -output={directory}/{REPORT_JSON} {directory}/{RESULTS_BIN} "
        f"&& rm {directory}/{RESULTS_BIN}",
    ]


def throughput_timeline(results: pd.DataFrame, bucket_s: float = 1.0) -> pd.DataFrame:
    """Successful answers per second, by the second in which each request was sent."""
    ok = results[(results["status"] >= 200) & (results["status"] < 400)]
    seconds = np.floor(ok["t_s"] / bucket_s).astype("int64")
    counts = seconds.value_counts().sort_index()
    return pd.DataFrame({"second": counts.index + 1, "throughput_rps": counts.to_numpy() / bucket_s})
