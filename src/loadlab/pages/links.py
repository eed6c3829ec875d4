"""Every link on the exported pages resolves inside reports/, so the folder can be hosted alone.

`broken_links(reports_dir)` follows every href and src of every HTML page
under `reports_dir` (the dataset's page included): a relative file link must
name a file inside `reports_dir` that exists, and a fragment (`#Section`,
`page.html#run-...`) must be an id (or a named anchor) on its target page.
Links with a scheme (https:, mailto:) and inline data (data:) leave the folder
by design and are not followed; a path that climbs out of the folder (`../`)
is broken, whether or not the file exists in a clone.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

_LINK_ATTRIBUTES = {"href", "src", "xlink:href"}


class _Links(HTMLParser):
    """The links and the ids of one page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name in _LINK_ATTRIBUTES:
                self.links.append(value)
            elif name == "id" or (name == "name" and tag == "a"):
                self.ids.add(value)

    handle_startendtag = handle_starttag


def page_links(page: Path) -> tuple[list[str], set[str]]:
    """(every href/src on the page, every id on it)."""
    parser = _Links()
    parser.feed(Path(page).read_text(encoding="utf-8", errors="replace"))
    parser.close()
    return parser.links, parser.ids


def broken_links(reports_dir: Path, pages: list[Path] | None = None) -> list[str]:
    """"page: link (why)" for every link of every HTML page under `reports_dir` (or of `pages` alone) that does
    not resolve inside `reports_dir` (module docstring)."""
    root = Path(reports_dir).resolve()
    pages = sorted(root.rglob("*.html")) if pages is None else [Path(page).resolve() for page in pages]
    ids: dict[Path, set[str]] = {}
    problems = []
    for page in pages:
        links, ids[page] = page_links(page)
        for link in dict.fromkeys(links):
            why = _unresolved(root, page, link, ids)
            if why:
                problems.append(f"{page.relative_to(root)}: {link} ({why})")
    return problems


def _unresolved(root: Path, page: Path, link: str, ids: dict[Path, set[str]]) -> str | None:
    parts = urlsplit(link)
    if parts.scheme or link.startswith("//"):
        return None  # https:, mailto:, data: leave the folder by design
    target = page if not parts.path else (page.parent / unquote(parts.path)).resolve()
    if not target.is_relative_to(root):
        return "outside reports/"
    if not target.exists():
        return "no such file"
    if target.is_dir():
        return "a folder, which a web server does not list"
    if parts.fragment and target.suffix == ".html":
        if target not in ids:
            ids[target] = page_links(target)[1]
        # As a browser does (HTML's "find a potential indicated element"): the fragment as written, then decoded.
        if parts.fragment not in ids[target] and unquote(parts.fragment) not in ids[target]:
            return f"no id {unquote(parts.fragment)!r} on {target.name}"
    return None
