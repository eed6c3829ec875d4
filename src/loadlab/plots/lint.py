"""A figure lint: is a figure legible at the size it is saved?

The checks a reviewer does by eye, done with matplotlib's renderer bounding
boxes (``get_window_extent``) after the figure has been laid out at its
saved size:

- no two tick labels overlap (on one axis or between axes);
- no legend overlaps a title, an axis label, a tick label, another legend or
  the plotting area of an axes (legends go outside the data, e.g. below);
- titles overlap neither each other nor tick labels, axis labels or the data;
- no axis carries more labelled ticks than a reader can read: at most
  `MAX_NUMBER_TICK_LABELS` numbers, or `MAX_CATEGORY_TICK_LABELS` category
  names (the rows of a forest plot are categories);
- every label and legend lies inside the figure (nothing is cut off);
- an axis label's unit, "(ms)", is the unit its tick labels are in: ticks
  that carry a unit of their own ("100 µs", "1 ms") under a label that
  names another ("(s)") say two units at once;
- a legend entry for an interval ("95% CI", "interval") names the estimator
  the interval is around (median, mean, Hodges-Lehmann...): a bar alone does
  not say what it bounds (`estimator_legend_problems`);
- a figure's alt text is present and is not nbconvert's default
  (`alt_text_problems`, run by `study.Page.figure` on the text it builds).

Overlap means the boxes share area; boxes that only touch do not overlap.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from matplotlib.axis import Axis
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from .style import style_context

MAX_NUMBER_TICK_LABELS = 12
MAX_CATEGORY_TICK_LABELS = 40
# Boxes are shrunk by this many pixels (at 100 dpi) before the overlap test, so that
# glyph boxes which merely touch (adjacent rows, a label on its tick) do not count.
TOLERANCE_PX = 0.5


@dataclass
class Element:
    """One box on the figure: what it is, a name for messages, its box in display pixels."""

    kind: str  # "tick", "title", "axis label", "legend", "plot area", "text"
    name: str
    box: Bbox
    axes_index: int | None = None


@dataclass
class LintReport:
    """What `lint_figure` found; `problems` is empty for a legible figure."""

    problems: list[str] = field(default_factory=list)
    tick_labels_checked: int = 0
    elements_checked: int = 0


# Pairs of kinds that must never share area.
_FORBIDDEN_OVERLAPS = {
    frozenset({"tick"}), frozenset({"tick", "title"}), frozenset({"tick", "axis label"}), frozenset({"tick", "legend"}),
    frozenset({"title"}), frozenset({"title", "axis label"}), frozenset({"title", "legend"}),
    frozenset({"title", "plot area"}), frozenset({"legend"}), frozenset({"legend", "axis label"}),
    frozenset({"legend", "plot area"}), frozenset({"legend", "text"}), frozenset({"axis label"}),
    frozenset({"tick", "text"}), frozenset({"title", "text"}),
}  # fmt: skip


def _shrunk(box: Bbox) -> Bbox:
    return Bbox.from_extents(box.x0 + TOLERANCE_PX, box.y0 + TOLERANCE_PX, box.x1 - TOLERANCE_PX, box.y1 - TOLERANCE_PX)


def _in_view(axis: Axis, location: float) -> bool:
    low, high = sorted(axis.get_view_interval())
    span = high - low
    return low - 1e-9 * abs(span) <= location <= high + 1e-9 * abs(span)


def _tick_labels(axis: Axis, renderer) -> list[tuple[str, Bbox]]:
    """(text, box) of each tick label the reader sees on `axis`, major and minor."""
    labels = []
    for tick in axis.get_major_ticks() + axis.get_minor_ticks():
        if not _in_view(axis, tick.get_loc()):
            continue
        for label in (tick.label1, tick.label2):
            if label.get_visible() and label.get_text().strip():
                labels.append((label.get_text(), label.get_window_extent(renderer)))
    return labels


# A tick label that is a number (with a sign, a ×, separators, an SI prefix or a unit after it).
_NUMBER_LABEL = re.compile(r"^[-+\u2212\u00d7]?\d[\d.,\u202f ]*(e[-+]?\d+)?\s*[kMGTmµ\u00b5n]?(s|B|iB|%|\u00d7)?$")


def _is_category_axis(labels: list[str]) -> bool:
    """Names (a forest plot's rows, servers) rather than numbers: judged by what the reader sees."""
    names = sum(1 for text in labels if not _NUMBER_LABEL.match(text.strip().replace("\N{NO-BREAK SPACE}", " ")))
    return names > len(labels) / 2


def _collect(figure: Figure, renderer, report: LintReport) -> list[Element]:
    elements: list[Element] = []
    for attribute, kind in (("_suptitle", "title"), ("_supxlabel", "axis label"), ("_supylabel", "axis label")):
        text = getattr(figure, attribute, None)
        if text is not None and text.get_visible() and text.get_text().strip():
            elements.append(Element(kind, f"figure {kind} {text.get_text()!r}", text.get_window_extent(renderer)))
    for index, axes in enumerate(figure.axes):
        if not axes.get_visible():
            continue
        for title in (axes.title, axes._left_title, axes._right_title):
            if title.get_visible() and title.get_text().strip():
                elements.append(Element("title", f"axes title {title.get_text()!r}", title.get_window_extent(renderer), index))
        for text in axes.texts:
            if text.get_visible() and text.get_text().strip():
                elements.append(Element("text", f"text {text.get_text()[:40]!r}", text.get_window_extent(renderer), index))
        legend = axes.get_legend()
        if legend is not None and legend.get_visible():
            elements.append(Element("legend", f"legend of axes {index + 1}", legend.get_window_extent(renderer), index))
        if not axes.axison:
            continue  # a panel of text only (e.g. a forest plot's value column): its texts are checked above
        elements.append(Element("plot area", f"plot area of axes {index + 1}", axes.bbox, index))
        for name, axis in (("x", axes.xaxis), ("y", axes.yaxis)):
            if axis.label.get_visible() and axis.label.get_text().strip():
                elements.append(Element("axis label", f"{name} axis label {axis.label.get_text()!r}",
                                        axis.label.get_window_extent(renderer), index))  # fmt: skip
            labels = _tick_labels(axis, renderer)
            report.tick_labels_checked += len(labels)
            limit = MAX_CATEGORY_TICK_LABELS if _is_category_axis([text for text, _ in labels]) else MAX_NUMBER_TICK_LABELS
            if len(labels) > limit:
                report.problems.append(
                    f"{name} axis of axes {index + 1} has {len(labels)} labelled ticks (at most {limit} are readable)"
                )
            for text, box in labels:
                elements.append(Element("tick", f"{name} tick label {text!r} (axes {index + 1})", box, index))
    for number, legend in enumerate(figure.legends, start=1):
        if legend.get_visible():
            elements.append(Element("legend", f"figure legend {number}", legend.get_window_extent(renderer)))
    return elements


# An axis label's unit: the last parenthesised word, "single GC pause (ms)" -> "ms".
_LABEL_UNIT = re.compile(r"\(([^()]+)\)\s*$")
# A tick label's own unit after its number: "100 µs" -> "µs", "10k" -> "" (a count's SI prefix is no unit).
_TICK_UNIT = re.compile(r"^[-+\u2212\u00d7]?[\d.,\u202f ]+(?:e[-+]?\d+)?\s*((?:[mµ\u00b5nk]?s)|%|[KMGT]?i?B)$")


def tick_unit_problems(figure: Figure) -> list[str]:
    """Axes whose label names a unit other than the one their tick labels carry (figure drawn beforehand)."""
    problems = []
    for index, axes in enumerate(figure.axes):
        if not axes.get_visible() or not axes.axison:
            continue
        for name, axis in (("x", axes.xaxis), ("y", axes.yaxis)):
            label = axis.label.get_text().strip()
            if not label:
                continue
            stated = _LABEL_UNIT.search(label)
            ticks = [tick.label1.get_text().replace("\N{NO-BREAK SPACE}", " ").strip()
                     for tick in axis.get_major_ticks() + axis.get_minor_ticks()
                     if _in_view(axis, tick.get_loc()) and tick.label1.get_visible()]  # fmt: skip
            carried = {match.group(1) for match in map(_TICK_UNIT.match, ticks) if match}
            # "(% of its core busy)" states "%": the unit is the first word in the brackets.
            if stated and carried and carried != {stated.group(1).split()[0]}:
                problems.append(f"{name} axis of axes {index + 1} is labelled {label!r} but its ticks are in "
                                f"{', '.join(sorted(carried))}")  # fmt: skip
    return problems


def _overlaps(first: Element, second: Element) -> bool:
    if frozenset({first.kind, second.kind}) not in _FORBIDDEN_OVERLAPS:
        return False
    a, b = _shrunk(first.box), _shrunk(second.box)
    return a.width > 0 and a.height > 0 and b.width > 0 and b.height > 0 and a.overlaps(b)


# What an interval's legend entry must name as the thing it is around.
ESTIMATOR_WORDS = ("median", "mean", "hodges-lehmann", "ratio", "estimate", "quantile", "p99", "p50")
_INTERVAL = re.compile(r"\bCI\b|interval", re.IGNORECASE)
DEFAULT_ALT = "No description has been provided for this image"


def estimator_legend_problems(figure: Figure) -> list[str]:
    """Legend entries that name an interval (CI, interval) but not the estimator it is around."""
    legends = list(figure.legends) + [axes.get_legend() for axes in figure.axes if axes.get_legend() is not None]
    problems = []
    for text in (t.get_text() for legend in legends for t in legend.get_texts()):
        if _INTERVAL.search(text) and not any(word in text.lower() for word in ESTIMATOR_WORDS):
            problems.append(f"legend entry {text!r} names an interval but not its estimator")
    return problems


def alt_text_problems(alt: str | None) -> list[str]:
    """Why `alt` cannot stand for a figure: missing, blank, or nbconvert's default sentence."""
    if alt is None or not alt.strip():
        return ["figure has no alt text"]
    if DEFAULT_ALT.lower() in alt.lower():
        return [f"figure's alt text is nbconvert's default {DEFAULT_ALT!r}"]
    return []


def lint_figure(figure: Figure) -> LintReport:
    """Lay `figure` out at its saved size and check it; see the module docstring for the rules."""
    report = LintReport()
    with style_context():
        canvas = figure.canvas if isinstance(figure.canvas, FigureCanvasAgg) else FigureCanvasAgg(figure)
        canvas.draw()
        renderer = canvas.get_renderer()
        elements = _collect(figure, renderer, report)
        report.problems.extend(tick_unit_problems(figure))
        report.problems.extend(estimator_legend_problems(figure))
    report.elements_checked = len(elements)
    for first, second in itertools.combinations(elements, 2):
        if _overlaps(first, second):
            report.problems.append(f"{first.name} overlaps {second.name}")
    width, height = figure.bbox.width, figure.bbox.height
    for element in elements:
        if element.kind == "plot area":
            continue
        box = element.box
        if box.x0 < -1 or box.y0 < -1 or box.x1 > width + 1 or box.y1 > height + 1:
            report.problems.append(f"{element.name} is cut off at the figure's edge")
    return report


__all__ = ["LintReport", "lint_figure", "tick_unit_problems", "estimator_legend_problems", "alt_text_problems", "MAX_NUMBER_TICK_LABELS", "MAX_CATEGORY_TICK_LABELS"]
