"""Every figure renders on small data to a valid SVG and PNG, in one fixed style."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree

import matplotlib

matplotlib.use("Agg")

import matplotlib.colors  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from loadlab.plots import (  # noqa: E402
    RUNTIME_COLOURS,
    axis_label,
    forest_figure,
    gc_pause_figure,
    latency_knee_figure,
    latency_spectrum_figure,
    loadgen_ceiling_figure,
    percentile_to_nines,
    resources_over_time_figure,
    runtime_colour,
    runtime_order,
    save_figure,
    spans_decades,
    throughput_figure,
)
from loadlab.plots.palette import FALLBACK_COLOURS, series_style  # noqa: E402
from loadlab.servers import RUNTIMES  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SERVERS = ["go-nethttp", "rust-tokio", "java-virtual", "java-virtual-jdk25"]


def throughput_data() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    rows = []
    for peak, server in zip([72_000, 120_000, 41_000, 44_000], SERVERS):
        for concurrency in [1, 16, 256, 1024]:
            for trial in range(6):
                rate = peak * min(1.0, concurrency / 40) ** 0.7 * rng.lognormal(0, 0.03)
                rows.append({"server": server, "concurrency": concurrency, "trial": trial, "throughput_rps": rate})
    return pd.DataFrame(rows)


def latency_data(trials: int) -> pd.DataFrame:
    rng = np.random.default_rng(2)
    rows = []
    for base_s, server in zip([1e-3, 6e-4, 2e-3], SERVERS[:3]):
        for trial in range(trials):
            for percentile, factor in zip([50, 90, 99, 99.9, 99.99, 100], [1, 1.8, 4, 12, 40, 90]):
                latency = base_s * factor * rng.lognormal(0, 0.1)
                rows.append({"server": server, "trial": trial, "percentile": percentile, "latency_s": latency})
    return pd.DataFrame(rows)


def resources_data() -> pd.DataFrame:
    rows = []
    for server, memory_bytes, tasks in [("go-nethttp", 180e6, 12), ("java-platform", 2.1e9, 100_017), ("rust-tokio", 146e6, 9)]:
        for t_s in np.arange(0.0, 10.0, 0.25):
            ramp = min(1.0, t_s / 3)
            rows.append({"server": server, "trial": 0, "t_s": t_s, "memory_in_use_bytes": memory_bytes * (0.1 + 0.9 * ramp),
                         "tasks": max(1.0, tasks * ramp)})  # fmt: skip
    return pd.DataFrame(rows)


def gc_data() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(3)
    rows = []
    for server, scale_s, count in [("go-nethttp", 3e-4, 30), ("java-platform", 8e-3, 10)]:
        for trial in range(6):
            for _ in range(count):
                rows.append({"server": server, "trial": trial, "pause_s": scale_s * rng.lognormal(0, 0.8)})
    trials = pd.DataFrame([{"server": s, "trial": t} for s in ["go-nethttp", "java-platform", "rust-tokio"] for t in range(6)])
    return pd.DataFrame(rows), trials


def forest_data() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"label": "S3 throughput: rust-tokio / go-nethttp", "ratio": 1.62, "ratio_ci_low": 1.5, "ratio_ci_high": 1.7,
             "server": "rust-tokio", "claimed": 1.13},
            {"label": "S5 time: java-virtual / java-platform", "ratio": 0.31, "ratio_ci_low": 0.25, "ratio_ci_high": 0.4,
             "server": "java-virtual", "claimed": 0.17},
            {"label": "S1 RSS: java-platform / go-nethttp", "ratio": 9.5, "ratio_ci_low": np.nan, "ratio_ci_high": np.nan,
             "server": "java-platform", "claimed": 11.5},
        ]
    )  # fmt: skip


def ceiling_data(pipelined: bool) -> pd.DataFrame:
    rng = np.random.default_rng(4 if pipelined else 5)
    rows = []
    for server, capacity_rps in [("nginx-baseline", 190_000), ("rust-tokio", 160_000), ("go-nethttp", 62_000)]:
        for trial in range(6):
            # One loadgen core sends about 120k req/s one at a time, several times that pipelined.
            loadgen_rps = 600_000 if pipelined else 120_000
            throughput = min(capacity_rps, loadgen_rps) * rng.normal(1, 0.02)
            rows.append({"label": server, "status": "ok", "throughput_rps": throughput,
                         "loadgen_cpu_utilization": min(0.99, throughput / loadgen_rps * 0.99),
                         "loadgen_saturated": throughput / loadgen_rps > 0.95})
    return pd.DataFrame(rows)


def knee_data():
    """Open-loop trials of three servers at three fractions of capacity; rust falls behind at 1.2."""
    from loadlab import latency_curve

    rng = np.random.default_rng(7)
    rows = []
    for server, floor_s in [("go", 0.0008), ("java-platform", 0.002), ("rust", 0.0005)]:
        for level in (0.5, 0.8, 1.2):
            for trial in range(6):
                served = 1.0 if level < 1 or server != "rust" else 0.83
                p99 = floor_s * (1 + 4 * level**4) * (40 if served < 1 else 1) * rng.normal(1, 0.1)
                rows.append({"trial": len(rows) + 1, "label": server, "level": level, "status": "ok",
                             "loadgen_saturated": False, "throughput_rps": 4000 * level * served,
                             "rate_offered_rps": 4000 * level, "latency_p50_s": p99 / 5, "latency_p99_s": p99})
    trials = pd.DataFrame(rows)
    curve = latency_curve.latency_curve(trials)
    return trials, curve, latency_curve.knee_levels(curve)


FIGURES = {
    "latency_knee": lambda: latency_knee_figure(*knee_data(), served_share_line=0.95, title="open loop"),
    "throughput": lambda: throughput_figure(throughput_data(), title="closed loop"),
    "latency_merged": lambda: latency_spectrum_figure(latency_data(trials=1)),
    "latency_trials": lambda: latency_spectrum_figure(latency_data(trials=6)),
    "resources": lambda: resources_over_time_figure(resources_data()),
    "gc": lambda: gc_pause_figure(*gc_data()[:1], trials=gc_data()[1]),
    "ceiling": lambda: loadgen_ceiling_figure({"one request per round trip": ceiling_data(False),
                                               "pipelined 16 deep": ceiling_data(True)}, headroom=0.8, saturated=0.95),
    "forest": lambda: forest_figure(forest_data(), group_column="server", claimed_column="claimed", noise_band=(0.95, 1.05)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_renders_to_valid_svg_and_png(name, tmp_path):
    saved = save_figure(FIGURES[name](), name, tmp_path)
    assert saved.svg == tmp_path / f"{name}.svg" and saved.png == tmp_path / f"{name}.png"
    png = saved.png.read_bytes()
    assert png.startswith(PNG_SIGNATURE)
    assert len(png) > 20_000
    root = ElementTree.parse(saved.svg).getroot()
    assert root.tag.endswith("svg")
    assert saved.svg.stat().st_size > 10_000
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{name}.png", f"{name}.svg"]  # no partial files


def test_png_is_written_at_300_dpi(tmp_path):
    from PIL import Image

    figure = throughput_figure(throughput_data())
    saved = save_figure(figure, "dpi", tmp_path)
    with Image.open(saved.png) as image:
        assert image.info["dpi"] == pytest.approx((300, 300), abs=0.5)


def test_svg_is_reproducible(tmp_path):
    first = save_figure(FIGURES["forest"](), "a", tmp_path).svg.read_bytes()
    second = save_figure(FIGURES["forest"](), "b", tmp_path).svg.read_bytes()
    assert first == second


def test_save_figure_refuses_paths_as_names(tmp_path):
    with pytest.raises(ValueError, match="name"):
        save_figure(FIGURES["forest"](), "../escape", tmp_path)
    with pytest.raises(ValueError, match="name"):
        save_figure(FIGURES["forest"](), "figure.png", tmp_path)


def test_figures_leave_the_callers_rcparams_alone():
    before = dict(matplotlib.rcParams)
    FIGURES["throughput"]()
    assert dict(matplotlib.rcParams) == before


# --- one colour per runtime across the collection --------------------------------------------


def legend_colours(figure) -> dict[str, str]:
    """{label: colour} of the figure's legend entries."""
    legend = figure.legends[0]
    return {text.get_text(): matplotlib.colors.to_hex(handle.get_color())
            for text, handle in zip(legend.get_texts(), legend.legend_handles) if hasattr(handle, "get_color")}


def drawn_colours(figure) -> set[str]:
    colours = set()
    for axes in figure.axes:
        colours |= {matplotlib.colors.to_hex(line.get_color()) for line in axes.get_lines()}
        for collection in axes.collections:
            colours |= {matplotlib.colors.to_hex(c) for c in collection.get_facecolors()}
            colours |= {matplotlib.colors.to_hex(c) for c in collection.get_edgecolors()}
    return colours


def test_a_runtime_has_the_same_colour_in_every_figure():
    expected = matplotlib.colors.to_hex(RUNTIME_COLOURS["rust-tokio"])
    figures = [FIGURES["throughput"](), FIGURES["latency_merged"](),
               resources_over_time_figure(resources_data().assign(server="rust-tokio"))]  # fmt: skip
    for figure in figures:
        assert legend_colours(figure)["rust-tokio"] == expected
        assert expected in drawn_colours(figure)
    assert legend_colours(figures[0])["go-nethttp"] == legend_colours(figures[1])["go-nethttp"] == RUNTIME_COLOURS["go-nethttp"].lower()


def test_every_server_of_the_design_has_its_own_fixed_colour():
    servers = ["go-nethttp", "go-workerpool", "java-platform", "java-virtual", "rust-tokio", "php-swoole",
               "python-asyncio", "node-eventloop", "erlang-otp", "nginx-baseline"]  # fmt: skip
    colours = [runtime_colour(server) for server in servers]
    assert len(set(colours)) == len(servers)
    assert runtime_order(reversed(servers)) == servers


def test_variants_and_twins_differ_in_shade_marker_and_line_style():
    for base, variant in [("java-virtual", "java-virtual-jdk25"), ("go-nethttp-A", "go-nethttp-B"),
                          ("java-virtual-jdk21-pinned", "java-virtual-jdk25-pinned")]:  # fmt: skip
        first, second = series_style(base), series_style(variant)
        assert first.colour != second.colour and first.marker != second.marker and first.linestyle != second.linestyle
        # Same hue family: the shade is a mix with black or white.
        hue = matplotlib.colors.rgb_to_hsv(matplotlib.colors.to_rgb(first.colour))[0]
        assert matplotlib.colors.rgb_to_hsv(matplotlib.colors.to_rgb(second.colour))[0] == pytest.approx(hue, abs=0.02)
    assert series_style("java-virtual-jdk21") == series_style("java-virtual")  # JDK 21 is the reference variant
    assert runtime_colour("java-threads-virtual") == runtime_colour("java-virtual")
    assert runtime_colour("java-threads-platform-jdk25") == runtime_colour("java-platform-jdk25")
    assert runtime_colour("go") == runtime_colour("go-nethttp")


# Machado, Oliveira & Fernandes (2009), severity 1.0, applied to linear RGB.
COLOUR_VISION = {
    "normal": np.eye(3),
    "protanopia": np.array([[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]]),
}  # fmt: skip


def lab_under(vision: np.ndarray, colour: str) -> np.ndarray:
    """CIELAB (D65) of `colour` as seen with a colour-vision deficiency."""
    srgb = np.array(matplotlib.colors.to_rgb(colour))
    linear = np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)
    seen = np.clip(vision @ linear, 0, 1)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ seen
    f = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(f > 0.008856, np.cbrt(f), 7.787 * f + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


@pytest.mark.parametrize("vision", sorted(COLOUR_VISION))
def test_runtime_colours_stay_apart_for_every_colour_vision(vision):
    # CIELAB distance 18 is well above the ~2.3 of a just-noticeable difference; white is the background.
    colours = dict(RUNTIME_COLOURS, background="#FFFFFF")
    seen = {name: lab_under(COLOUR_VISION[vision], colour) for name, colour in colours.items()}
    distances = {(a, b): float(np.linalg.norm(seen[a] - seen[b])) for a in seen for b in seen if a < b}
    closest = min(distances, key=distances.get)
    assert distances[closest] >= 18, f"{closest} are {distances[closest]:.1f} apart under {vision}"


def test_unknown_servers_get_a_deterministic_fallback_colour():
    # Not a runtime of RUNTIMES (erlang-cowboy was, until erlang-otp joined: it draws as an erlang variant now).
    assert "ocaml" not in {runtime.label for runtime in RUNTIMES}
    colour = runtime_colour("ocaml-eio")
    assert colour == runtime_colour("ocaml-eio")
    assert colour in FALLBACK_COLOURS
    assert colour not in RUNTIME_COLOURS.values()


# --- axes ---------------------------------------------------------------------------------------


def test_log_axes_where_data_span_decades_and_labels_carry_units():
    axes = FIGURES["throughput"]().axes[0]
    assert axes.get_xscale() == "log"  # 1 to 1024 connections
    assert axes.get_xlabel() == "concurrency (connections)"
    assert axes.get_ylabel() == "throughput (req/s)"
    resources = FIGURES["resources"]().axes
    assert [a.get_yscale() for a in resources] == ["log", "log"]
    assert resources[0].get_ylabel() == "memory in use (MiB)"
    assert resources[-1].get_xlabel() == "time in the measured window (s)"
    assert spans_decades([1, 9.9]) is False and spans_decades([1, 10]) is True


def test_latency_x_axis_is_in_nines():
    assert percentile_to_nines([50, 90, 99, 99.9, 99.99]) == pytest.approx([np.log10(2), 1, 2, 3, 4])
    axes = FIGURES["latency_merged"]().axes[0]
    labels = [tick.get_text() for tick in axes.get_xticklabels()]
    assert labels == ["50", "90", "99", "99.9", "99.99", "max"]
    assert axes.get_yscale() == "log"


def test_throughput_band_is_the_median_ci_and_absent_below_six_trials():
    data = throughput_data()
    with_band = throughput_figure(data).axes[0]
    without_band = throughput_figure(data[data["trial"] < 5]).axes[0]

    def band_area(axes) -> int:
        return sum(len(collection.get_paths()) for collection in axes.collections if collection.get_paths()
                   and collection.__class__.__name__ == "FillBetweenPolyCollection")  # fmt: skip

    assert band_area(with_band) > 0
    assert band_area(without_band) == 0


def test_missing_columns_are_named():
    with pytest.raises(KeyError, match="throughput_rps"):
        throughput_figure(pd.DataFrame({"server": ["a"], "concurrency": [1]}))


@pytest.mark.parametrize(
    ("column", "label"),
    [("latency_p99_s", "latency p99 (s)"), ("peak_rss_bytes", "peak rss (MiB)"), ("t_s", "time in the measured window (s)"),
     ("latency_mean_ms", "latency mean (ms)"), ("memory_peak_mib", "peak memory in use (MiB)")],
)
def test_axis_labels_come_from_unit_carrying_names(column, label):
    assert axis_label(column) == label


def test_forest_figure_survives_missing_intervals_and_a_missing_noise_band(tmp_path):
    import math

    from loadlab.plots import forest_figure, save_figure

    data = pd.DataFrame({"label": ["a", "b"], "ratio": [1.2, 0.7], "ratio_ci_low": [math.nan, 0.6],
                         "ratio_ci_high": [math.nan, 0.8], "claimed": [1.1, math.nan]})
    figure = forest_figure(data, claimed_column="claimed", noise_band=(math.nan, math.nan))
    saved = save_figure(figure, "forest-nan", tmp_path)
    assert saved.png.stat().st_size > 1000


def test_the_ceiling_figure_draws_the_thresholds_it_is_given_and_decides_none():
    figure = loadgen_ceiling_figure({"one request per round trip": ceiling_data(False)}, headroom=0.7, saturated=0.9)
    lines = {round(line.get_xdata()[0], 3) for line in figure.axes[0].get_lines() if len(set(line.get_xdata())) == 1}
    assert {0.7, 0.9} <= lines
    labels = [text.get_text() for legend in figure.legends for text in legend.get_texts()]
    assert "70% busy: headroom ends" in labels and "90% busy: saturated" in labels
    with pytest.raises(TypeError):
        loadgen_ceiling_figure({"one request per round trip": ceiling_data(False)}, headroom=0.7)


def test_a_spectrum_draws_a_server_whose_every_trial_was_excluded_without_a_band():
    # Met in a smoke run of 01: every java-platform trial of the open loop was flagged (its generator's own delay),
    # so its median summary was empty and the band had no numbers to fill between.
    data = latency_data(trials=2).assign(status="ok", loadgen_saturated=False)
    data.loc[data["server"] == SERVERS[1], "loadgen_saturated"] = True
    figure = latency_spectrum_figure(data)
    assert figure.axes and figure.axes[0].lines  # the other servers' medians, and the excluded trials dashed


def test_the_forest_legend_names_the_estimator_and_each_familys_level_and_never_assumes_95():
    from loadlab.plots import forest_figure

    data = pd.DataFrame({"label": ["S3-throughput", "S1-rss", "S5-time"], "ratio": [2.47, 11.0, 0.6],
                         "ratio_ci_low": [1.92, 9.0, 0.5], "ratio_ci_high": [3.06, 13.0, 0.7],
                         "confidence": [0.98333, 0.99375, 0.975]})

    def legend_labels(figure):
        # A long entry wraps at plots._common.LEGEND_WRAP_CHARACTERS; the words are what is checked.
        return [" ".join(text.get_text().split()) for legend in figure.legends for text in legend.get_texts()]

    labels = legend_labels(forest_figure(data, estimator="Hodges-Lehmann ratio", confidence_column="confidence"))
    assert "measured Hodges-Lehmann ratio, 97.5-99.4% CI (each family's simultaneous level)" in labels
    one = legend_labels(forest_figure(data.assign(confidence=0.95), estimator="Hodges-Lehmann ratio",
                                      confidence_column="confidence"))
    assert "measured Hodges-Lehmann ratio, 95% CI" in one
    assert "measured ratio of medians, interval (level not given)" in legend_labels(forest_figure(data))


def test_a_forest_over_one_or_two_decades_labels_more_than_a_lone_x1():
    from loadlab.plots import forest_figure

    # 03's forest: x0.7 to x3 zoomed, so its "every row" panel spans under two decades.
    data = pd.DataFrame({"label": ["a", "b"], "ratio": [2.47, 0.7], "ratio_ci_low": [1.92, 0.6],
                         "ratio_ci_high": [3.06, 0.8]})
    figure = forest_figure(data)
    every_row = figure.axes[0]
    labelled = [tick for tick in every_row.get_xticks() if every_row.get_xlim()[0] <= tick <= every_row.get_xlim()[1]]
    assert len(labelled) >= 3 and 1.0 in labelled


def test_a_verdict_whose_ratio_cannot_be_formed_is_a_row_without_a_dot():
    from loadlab.pages import verdict_forest_rows

    # S5-memory, as the committed verdict records it: a ratio of medians but no interval ("cannot be formed").
    rows = verdict_forest_rows([{"claim_id": "S5-memory", "verdict": "contradicted", "baseline": "java-virtual",
                                 "candidate": "java-platform", "measured_ratio": 0.37, "ratio_ci_low": None,
                                 "ratio_ci_high": None, "claimed_ratio": 0.126, "confidence": None,
                                 "measured": {"metric": "peak_rss_growth_bytes"}}])
    assert rows["measured_ratio"].isna().all() and rows["claimed_ratio"].iloc[0] == 0.126


def test_a_legend_entry_keeps_its_own_line_break_and_wraps_each_line_alone():
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from loadlab.plots._common import LEGEND_WRAP_CHARACTERS, legend_below

    figure = plt.figure(figsize=(6, 4))
    figure.add_subplot()
    long_line = "a second line " + "of many words " * 5
    legend_below(figure, [Line2D([], [], label="few trials: bar is their range\n(a 75% interval for 3 trials)"),
                          Line2D([], [], label="first line\n" + long_line.strip())])
    texts = [text.get_text() for text in figure.legends[0].get_texts()]
    # The break is where the label put it, not in the middle of "(75% for 3)" as the old single-line label had it.
    assert texts[0] == "few trials: bar is their range\n(a 75% interval for 3 trials)"
    first, *rest = texts[1].split("\n")
    assert first == "first line" and len(rest) >= 2
    assert all(len(line) <= LEGEND_WRAP_CHARACTERS for line in rest)
    plt.close(figure)


def test_a_log_axis_of_connections_held_takes_its_limits_from_the_positive_counts():
    """A trial whose server held no connection at its level (0 held) has no place on a log axis: the limits come from
    the positive counts, without matplotlib's warning (printed on the 01 page of 2026-11-29)."""
    import warnings

    import pandas as pd

    from loadlab import plots

    data = pd.DataFrame({"label": ["go"] * 4 + ["python"] * 2, "held": [8, 9, 1200, 1400, 0, 3],
                         "memory_peak_mib": [10.0, 11.0, 90.0, 95.0, 20.0, 21.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure = plots.throughput_figure(data, x_column="held", y_column="memory_peak_mib", group_column="label",
                                         ticks_at_levels=False)
    low, high = figure.axes[0].get_xlim()
    assert low == pytest.approx(3 / 1.6) and high == pytest.approx(1400 * 1.6)
