"""Static flame graphs with matplotlib, for papers and PNG/SVG figures.

The same layout and colours as the interactive SVG (flamelayout), drawn as
rectangles: x is the share of all samples (0..1), y the stack depth; labels
where the frame is wide enough for them. With `baseline`, a differential
graph with a colour bar in percentage points of share.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .flamelayout import add_share_change, change_color, change_scale, flame_layout, frame_color

CHAR_WIDTH_EM = 0.6  # average glyph width in em, for fitting labels


def _change_colormap():
    from matplotlib.colors import LinearSegmentedColormap

    # Built from change_color so that the colour bar matches the SVG exactly.
    points = np.linspace(-1, 1, 257)
    colors = [tuple(channel / 255 for channel in change_color(point, 1.0)) for point in points]
    return LinearSegmentedColormap.from_list("share_change", colors)


def flame_figure(
    stacks: pd.DataFrame,
    title: str | None = None,
    baseline: pd.DataFrame | None = None,
    ax: "matplotlib.axes.Axes | None" = None,
    min_fraction: float = 0.002,
    max_depth: int | None = None,
    inverted: bool = False,
    font_size_pt: float = 6.5,
    figsize_in: tuple[float, float] | None = None,
) -> "matplotlib.figure.Figure":
    """A flame graph (root at the bottom; `inverted` for an icicle) as a matplotlib Figure.

    min_fraction: leave out frames below this share of samples (unreadable
    in print anyway). max_depth: cut the graph at this depth (deep JVM
    stacks). baseline: draw a differential graph (see flamelayout).
    """
    # Imported here: reading profiles (loadlab.profiles) should not cost matplotlib's import.
    import matplotlib.pyplot as plt
    from matplotlib.colors import Normalize
    from matplotlib.figure import Figure

    layout = flame_layout(stacks, min_fraction=min_fraction)
    total = layout.attrs["total"]
    if max_depth is not None:
        layout = layout[layout["depth"] <= max_depth]
    differential = baseline is not None
    scale = None
    if differential:
        layout = add_share_change(layout, baseline)
        scale = change_scale(layout)
    depth = int(layout["depth"].max()) + 1 if len(layout) else 1
    if ax is None:
        figsize_in = figsize_in or (7.0, max(1.5, 0.5 + 0.16 * depth))
        # Not through pyplot: like loadlab.plots, the figure is the caller's to show once.
        figure = Figure(figsize=figsize_in, layout="constrained")
        ax = figure.add_subplot()
    else:
        figure = ax.figure
    boxes = _draw_frames(ax, layout, total, scale)
    ax.set_xlim(0, 1)
    ax.set_ylim(depth, 0) if inverted else ax.set_ylim(0, depth)
    _label_frames(ax, figure, layout["name"], boxes, font_size_pt)
    ax.set_xlabel(f"share of samples (total {total:,})")
    ax.set_ylabel("stack depth")
    ax.set_yticks([])
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda value, _: f"{100 * value:.0f}%"))
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    if title:
        ax.set_title(title)
    if differential:
        mappable = plt.cm.ScalarMappable(norm=Normalize(-100 * scale, 100 * scale), cmap=_change_colormap())
        colorbar = figure.colorbar(mappable, ax=ax, fraction=0.04, pad=0.01)
        colorbar.set_label("change in share vs baseline (pp)")
    return figure


def _draw_frames(ax, layout: pd.DataFrame, total: int, scale: float | None) -> tuple[np.ndarray, ...]:
    """One box per frame, coloured by name (or by change in share, when `scale` is set); returns (x, y, width)
    as shares of the samples and depths."""
    from matplotlib.collections import PolyCollection

    x = layout["start"].to_numpy() / total if total else np.zeros(len(layout))
    w = layout["width"].to_numpy() / total if total else np.zeros(len(layout))
    y = layout["depth"].to_numpy().astype(float)
    gap = 0.06
    polygons = [
        [(x0, y0 + gap), (x0 + w0, y0 + gap), (x0 + w0, y0 + 1 - gap), (x0, y0 + 1 - gap)]
        for x0, y0, w0 in zip(x, y, w)
    ]
    if scale is not None:
        colors = [change_color(change, scale) for change in layout["share_change"]]
    else:
        colors = [frame_color(name) for name in layout["name"]]
    facecolors = [(r / 255, g / 255, b / 255) for r, g, b in colors]
    ax.add_collection(PolyCollection(polygons, facecolors=facecolors, edgecolors="white", linewidths=0.3))
    return x, y, w


def _label_frames(ax, figure, names, boxes: tuple[np.ndarray, ...], font_size_pt: float) -> None:
    """Names that fit their box: the axes' width in points tells how many characters fit."""
    x, y, w = boxes
    figure.canvas.draw_idle()
    axes_width_pt = ax.get_position().width * figure.get_size_inches()[0] * 72
    char_pt = CHAR_WIDTH_EM * font_size_pt
    for name, x0, y0, w0 in zip(names, x, y, w):
        fit = int((w0 * axes_width_pt - 2) // char_pt)
        if fit < 5:  # fewer than three letters and ".." says nothing
            continue
        text = name if len(name) <= fit else name[: fit - 2] + ".."
        # parse_math=False: JVM names are full of "$" (Foo$$Lambda), which
        # matplotlib would otherwise read as TeX math and fail on.
        ax.text(x0 + 0.002, y0 + 0.5, text, fontsize=font_size_pt, va="center", ha="left", clip_on=True,
                parse_math=False)
