"""A figure's text alternative: what it plots, read from the figure itself.

An exported page shows each figure as an image; a reader who cannot see it
(a screen reader, an image that did not load) gets its alt text. nbconvert
writes "No description has been provided for this image" where none is
given. `describe_figure` says what is drawn (the title, each panel's axes
with their units, the series in the legend); a notebook puts the figure's
finding in front of it (`study.Page.figure(..., finding=...)`).
"""

from __future__ import annotations

from matplotlib.figure import Figure


def _clean(text: str) -> str:
    return " ".join(text.replace("$", "").split())


def _titles(figure: Figure) -> list[str]:
    titles = [figure._suptitle.get_text()] if figure._suptitle is not None else []  # noqa: SLF001 (no public getter)
    return [_clean(t) for t in titles if t.strip()]


def _panel_text(axes) -> str | None:
    y, x = _clean(axes.get_ylabel()), _clean(axes.get_xlabel())
    if not (x or y):
        return None
    title = _clean(axes.get_title())
    what = (f"{y} against {x}" if y else x) if x else y
    return f"{title}: {what}" if title else what


def _series(figure: Figure) -> list[str]:
    legends = list(figure.legends) + [axes.get_legend() for axes in figure.axes if axes.get_legend() is not None]
    names = [_clean(text.get_text()) for legend in legends for text in legend.get_texts()]
    return list(dict.fromkeys(name for name in names if name))


def describe_figure(figure: Figure) -> str:
    """One or two sentences naming what `figure` plots: its title, each panel's y against x (units as the axis
    labels give them), and the legend's entries. Empty when the figure has no title and no labelled axis."""
    parts = []
    titles = _titles(figure)
    panels = list(dict.fromkeys(p for p in (_panel_text(axes) for axes in figure.axes if axes.get_visible()) if p))
    if titles:
        parts.append(f"Figure: {titles[0].rstrip('.')}.")
    if panels:
        parts.append(("Plots " if len(panels) == 1 else "Panels plot ") + "; ".join(panels) + ".")
    series = _series(figure)
    if series and parts:
        parts.append("Legend: " + "; ".join(series) + ".")
    return " ".join(parts)


class FigureImage:
    """A saved figure as a notebook shows it: the SVG that was written, with its alt text in the output's
    metadata (the page template puts it on the <img>). Returned by `study.Page.figure`."""

    def __init__(self, svg: str, alt: str):
        self.svg, self.alt = svg, alt

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": self.svg, "text/plain": self.alt}, {"image/svg+xml": {"alt": self.alt}}
