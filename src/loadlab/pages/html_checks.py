"""Checks on exported HTML pages: what a reader sees must hold no Python reprs and no runaway precision.

Only text a reader sees is checked: not code cells (a notebook's source may
well contain ``{'``), not <script> or <style>, not attributes (an SVG's
coordinates). A repr is a ``{'`` or ``('`` in that text; runaway precision
is a decimal number with more than `MAX_SIGNIFICANT_DIGITS` significant
digits (``1.0397839321397173``). Integers are not counted: a request count
of 1,234,567 is exact, and run ids and hashes are not numbers.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from loadlab.plots.lint import alt_text_problems

MAX_SIGNIFICANT_DIGITS = 6
REPR_MARKERS = ("{'", "('")
# A decimal number standing alone (not part of a word, a version like 1.2.3 or a hash).
_DECIMAL = re.compile(r"(?<![\w.])[-+]?(\d[\d,]*\.\d+)(?:[eE][-+]?\d+)?(?![\w.]|\.\d)")
# An output a cell wrote to stderr, as nbconvert's "lab" template exports it (its stylesheet names the type too).
_STDERR_OUTPUT = re.compile(r'<div class="[^"]*jp-RenderedText[^"]*" data-mime-type="application/vnd\.jupyter\.stderr"'
                            r'[^>]*>(.*?)</div>', re.DOTALL)
# Classes of nbconvert's "lab" template that hold a code cell's source.
_CODE_CLASSES = {"jp-InputArea", "jp-InputArea-editor", "jp-CodeMirrorEditor", "highlight"}
_SKIPPED_TAGS = {"script", "style", "head", "title"}
_VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Finding:
    page: str
    kind: str  # "repr", "precision", "alt text" or "stderr"
    text: str  # the offending text with some context

    def __str__(self) -> str:
        return f"{self.page}: {self.kind}: {self.text!r}"


class _VisibleText(HTMLParser):
    """Collects the text of an HTML page outside code cells, scripts and styles."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []  # per open element: is it (inside) a skipped region?
        self.chunks: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in _VOID_TAGS:
            return
        classes = set((dict(attrs).get("class") or "").split())
        skipped = bool(self.stack and self.stack[-1]) or tag in _SKIPPED_TAGS or bool(classes & _CODE_CLASSES)
        self.stack.append(skipped)

    def handle_startendtag(self, tag, attrs):
        pass

    def handle_endtag(self, tag):
        if tag not in _VOID_TAGS and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not (self.stack and self.stack[-1]):
            self.chunks.append(data)


def visible_text(page_html: str) -> str:
    """The text of `page_html` a reader sees outside code cells (one string, chunks joined by newlines)."""
    parser = _VisibleText()
    parser.feed(page_html)
    parser.close()
    return "\n".join(parser.chunks)


def significant_digits(number_text: str) -> int:
    """Significant digits of a decimal written out: "0.001230" -> 4, "12.5" -> 3, "1,234.5" -> 5."""
    mantissa = re.split(r"[eE]", number_text.lstrip("+-"))[0].replace(",", "")
    digits = mantissa.replace(".", "").lstrip("0")
    return len(digits)


_IMG_ALT = re.compile(r"<img\b[^>]*?\balt=\"([^\"]*)\"|<img\b(?![^>]*\balt=)[^>]*>", re.IGNORECASE)
# Fewer words than this is a label, not a sentence saying what the figure shows.
MIN_ALT_WORDS = 6


def missing_alt_texts(page_html: str) -> list[str]:
    """Each <img> whose alt text is missing, empty, nbconvert's default, or shorter than a sentence: its alt."""
    bad = []
    for match in _IMG_ALT.finditer(page_html):
        alt = html.unescape(match.group(1) or "")
        # Missing, blank or nbconvert's default: the figure lint's own rule (plots.lint), then the length.
        if alt_text_problems(alt) or len(alt.split()) < MIN_ALT_WORDS:
            bad.append(alt or "(none)")
    return bad


def check_page(path: Path) -> list[Finding]:
    """Every repr and every over-precise decimal in the visible text of one exported page, every image without an
    alt text that says what it shows, and every output a cell wrote to stderr."""
    page_html = Path(path).read_text(encoding="utf-8")
    text = visible_text(page_html)
    findings = [Finding(Path(path).name, "alt text", alt) for alt in missing_alt_texts(page_html)]
    for marker in REPR_MARKERS:
        for match in re.finditer(re.escape(marker), text):
            findings.append(Finding(Path(path).name, "repr", text[max(0, match.start() - 40): match.end() + 40]))
    # A warning or traceback a cell printed is shown to the reader in red: it is the code's to fix, not the page's.
    for match in _STDERR_OUTPUT.finditer(page_html):
        findings.append(Finding(Path(path).name, "stderr", " ".join(visible_text(match.group(1)).split())[:200]))
    for match in _DECIMAL.finditer(text):
        if significant_digits(match.group(0)) > MAX_SIGNIFICANT_DIGITS:
            findings.append(Finding(Path(path).name, "precision", text[max(0, match.start() - 40): match.end() + 20]))
    return findings
