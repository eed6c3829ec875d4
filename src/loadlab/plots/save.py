"""Saving a figure: lint it at its saved size, then write it as SVG and 300 dpi PNG.

Above both `style` (the look, the PNG resolution) and `lint` (the legibility
checks), so that neither imports the other.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path
from typing import NamedTuple

from matplotlib.figure import Figure

from .lint import lint_figure
from .style import PNG_DPI, style_context

# Set to "1" (the test suite does) to make `save_figure` raise on a lint problem instead of warning.
STRICT_ENVIRONMENT_VARIABLE = "LOADLAB_STRICT_FIGURES"


class SavedFigure(NamedTuple):
    """Where `save_figure` wrote the two files."""

    svg: Path
    png: Path


_NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def save_figure(fig: Figure, name: str, directory: str | os.PathLike) -> SavedFigure:
    """Lint `fig` (`lint.lint_figure`), then write it as ``<directory>/<name>.svg`` and ``.png`` (300 dpi).

    A lint problem (overlapping tick labels, a legend over a title or the
    data, an unreadable number of ticks) is a warning, or an error when the
    environment variable LOADLAB_STRICT_FIGURES is "1" (the test suite sets
    it when it executes the notebooks). Returns both paths.

    `name` is a file stem: letters, digits, dot, dash, underscore. Each file
    is written to a temporary name and renamed, so a reader never sees half
    a figure. The SVG carries no date, so re-rendering unchanged data gives
    an identical file.
    """
    if not _NAME_PATTERN.match(name) or name.endswith((".svg", ".png")):
        raise ValueError(f"name={name!r} is not allowed: name must be a file stem of letters, digits, '.', '-', '_'")
    report = lint_figure(fig)
    if report.problems:
        message = f"figure {name!r} is not legible: " + "; ".join(report.problems)
        if os.environ.get(STRICT_ENVIRONMENT_VARIABLE) == "1":
            raise ValueError(message)
        warnings.warn(message, stacklevel=2)
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    paths = SavedFigure(target / f"{name}.svg", target / f"{name}.png")
    with style_context():
        for path, options in (
            (paths.svg, {"format": "svg", "metadata": {"Date": None}}),
            (paths.png, {"format": "png", "dpi": PNG_DPI}),
        ):
            # Not mkstemp: its 0600 mode would make report figures unreadable to others.
            temporary = target / f".{name}.{os.getpid()}.partial{path.suffix}"
            try:
                fig.savefig(temporary, facecolor="white", **options)
                os.replace(temporary, path)
            except BaseException:
                temporary.unlink(missing_ok=True)
                raise
    return paths
