"""Flame graph layout, interactive SVG and matplotlib figure, from real profiles."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from loadlab.profiles import flamefigure, flamegraph, flamelayout, jfr, perf, pprof  # noqa: E402
from loadlab.profiles.folded import leaf_counts, total_count  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "profiles"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def perf_stacks():
    return perf.read_perf_script(FIXTURES / "perf-script.txt")


@pytest.fixture(scope="module")
def pprof_stacks():
    return pprof.read_pprof_stacks(FIXTURES / "go-cpu.pb.gz")


def test_layout_widths_add_up(perf_stacks):
    layout = flamelayout.flame_layout(perf_stacks)
    total = total_count(perf_stacks)
    root = layout.iloc[0]
    assert (root["name"], root["depth"], root["start"], root["width"]) == ("all", 0, 0, total)
    assert layout["self_count"].sum() == total
    children = layout[layout["parent"] >= 0].groupby("parent")["width"].sum()
    for parent, width in children.items():
        row = layout.iloc[parent]
        assert width + row["self_count"] == row["width"]
    # Children lie inside their parent, one level up.
    for row in layout.iloc[1:].itertuples():
        parent = layout.iloc[row.parent]
        assert row.depth == parent["depth"] + 1
        assert parent["start"] <= row.start and row.start + row.width <= parent["start"] + parent["width"]


def test_layout_self_counts_are_the_leaves(perf_stacks):
    layout = flamelayout.flame_layout(perf_stacks)
    self_by_name = layout.groupby("name")["self_count"].sum()
    leaves = leaf_counts(perf_stacks)
    for name, count in leaves.items():
        assert self_by_name[name] == count


def test_min_fraction_prunes(perf_stacks):
    full = flamelayout.flame_layout(perf_stacks)
    pruned = flamelayout.flame_layout(perf_stacks, min_fraction=0.05)
    total = total_count(perf_stacks)
    assert len(pruned) < len(full)
    assert (pruned["width"] >= 0.05 * total).all()
    assert "main.hotXorshift" in set(pruned["name"])


def test_share_change_between_two_profiles(perf_stacks, pprof_stacks):
    same = flamelayout.add_share_change(flamelayout.flame_layout(perf_stacks), perf_stacks)
    assert np.allclose(same["share_change"], 0)
    differential = flamelayout.add_share_change(flamelayout.flame_layout(pprof_stacks), perf_stacks)
    assert differential["share_change"].iloc[0] == pytest.approx(0)
    # perf's stacks all start with the command name, pprof's never: every
    # pprof frame is new, so its change is its whole share.
    assert np.allclose(differential["share_change"].iloc[1:], differential["share"].iloc[1:])


def test_colours_are_stable_and_diverging():
    assert flamelayout.frame_color("main.hotXorshift") == flamelayout.frame_color("main.hotXorshift")
    red, blue, none = (flamelayout.change_color(value, 0.1) for value in (0.1, -0.1, 0.0))
    assert red[0] == 255 and red[2] < 100
    assert blue[2] == 255 and blue[0] < 100
    assert none == (255, 255, 255)


def _frames(svg_text: str):
    root = ElementTree.fromstring(svg_text)
    return root, [g for g in root.iter(f"{SVG}g") if g.get("class") == "frame"]


def test_svg_is_self_contained_and_complete(perf_stacks):
    text = flamegraph.flamegraph_svg(perf_stacks, title="perf: gofixture", min_width_px=0)
    root, frames = _frames(text)
    layout = flamelayout.flame_layout(perf_stacks)
    assert root.tag == f"{SVG}svg" and root.get("id", "").startswith("flamegraph-")
    assert len(frames) == len(layout)
    assert "http" not in text.replace("http://www.w3.org/2000/svg", "")  # nothing external
    assert root.find(f"{SVG}script") is not None
    total = total_count(perf_stacks)
    titles = {g.get("data-name"): g.find(f"{SVG}title").text for g in frames}
    hot = layout[layout["name"] == "main.hotXorshift"]["width"].sum()
    assert titles["main.hotXorshift"].startswith(f"main.hotXorshift ({hot:,} samples, {100 * hot / total:.2f}%")
    assert titles["all"] == f"all ({total:,} samples, 100.00%)"


def test_svg_frames_sit_where_the_layout_says(perf_stacks):
    width_px, pad = 1000, 10
    _, frames = _frames(flamegraph.flamegraph_svg(perf_stacks, width_px=width_px, min_width_px=0))
    layout = flamelayout.flame_layout(perf_stacks)
    total = total_count(perf_stacks)
    for g, row in zip(frames, layout.itertuples()):
        rect = g.find(f"{SVG}rect")
        assert float(g.get("data-x")) == pytest.approx(row.start / total, abs=1e-8)
        assert float(rect.get("width")) == pytest.approx(row.width / total * (width_px - 2 * pad), abs=0.01)


def test_svg_is_deterministic_and_ids_differ_between_graphs(perf_stacks, pprof_stacks):
    first = flamegraph.flamegraph_svg(perf_stacks)
    assert first == flamegraph.flamegraph_svg(perf_stacks)
    other = flamegraph.flamegraph_svg(pprof_stacks)
    assert ElementTree.fromstring(first).get("id") != ElementTree.fromstring(other).get("id")
    assert ElementTree.fromstring(flamegraph.flamegraph_svg(perf_stacks, element_id="g1")).get("id") == "g1"


def test_svg_min_width_leaves_out_thin_frames(perf_stacks):
    _, everything = _frames(flamegraph.flamegraph_svg(perf_stacks, min_width_px=0))
    _, wide = _frames(flamegraph.flamegraph_svg(perf_stacks, min_width_px=20))
    assert 0 < len(wide) < len(everything)


def test_differential_svg(perf_stacks, pprof_stacks):
    text = flamegraph.flamegraph_svg(pprof_stacks, baseline=perf_stacks, title="pprof vs perf")
    _, frames = _frames(text)
    assert "differential" in text
    title = next(g.find(f"{SVG}title").text for g in frames if g.get("data-name") == "main.hotXorshift")
    assert "pp vs baseline" in title


def test_inverted_svg_puts_the_root_on_top(perf_stacks):
    _, flame = _frames(flamegraph.flamegraph_svg(perf_stacks))
    _, icicle = _frames(flamegraph.flamegraph_svg(perf_stacks, inverted=True))
    flame_root_y = float(flame[0].find(f"{SVG}rect").get("y"))
    icicle_root_y = float(icicle[0].find(f"{SVG}rect").get("y"))
    assert icicle_root_y < flame_root_y


def test_figure(perf_stacks, pprof_stacks, tmp_path):
    figure = flamefigure.flame_figure(perf_stacks, title="perf: gofixture")
    path = tmp_path / "flame.png"
    figure.savefig(path, dpi=80)
    assert path.stat().st_size > 5000
    labels = {text.get_text() for text in figure.axes[0].texts}
    assert "main.hotXorshift" in labels
    plt.close(figure)
    differential = flamefigure.flame_figure(pprof_stacks, baseline=perf_stacks)
    assert len(differential.axes) == 2  # the graph and its colour bar
    plt.close(differential)


def test_figure_of_jvm_names(tmp_path):
    # Lambda and inner class names carry "$", which matplotlib would read as TeX.
    events = jfr.read_jfr_json(FIXTURES / "jfr-jdk21.json.gz")
    stacks = jfr.jfr_stacks(events, thread_root=True)
    assert stacks["stack"].str.contains("$", regex=False).any()
    figure = flamefigure.flame_figure(stacks, min_fraction=0.0)
    figure.savefig(tmp_path / "jfr.png", dpi=80)
    assert any("$" in text.get_text() for text in figure.axes[0].texts)
    plt.close(figure)


def test_figure_on_given_axes(perf_stacks):
    figure, axes = plt.subplots(1, 2, figsize=(10, 3))
    returned = flamefigure.flame_figure(perf_stacks, ax=axes[1], max_depth=5, inverted=True)
    assert returned is figure
    assert axes[1].get_ylim()[0] > axes[1].get_ylim()[1]
    plt.close(figure)
