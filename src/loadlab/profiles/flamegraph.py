"""Interactive flame graph SVG from folded stacks, for HTML reports.

`flamegraph_svg` returns the SVG text: self-contained (inline style and
script, no external files), so it can be saved as .svg and opened in a
browser, or put inline in an HTML page (in a notebook,
IPython.display.HTML(svg); plain SVG display would strip the script).

In the browser: hover a frame for its name, samples and share (title
tooltip and the line at the bottom); click to zoom to it (its ancestors
stay, greyed, to click back down); "Reset zoom" or a click on the root goes
back; "Search" highlights frames matching a regular expression and prints
their share. Several graphs on one page work independently (the script
only touches its own <svg>, found by id).

The layout and colours come from flamelayout (the same as the matplotlib
figure in flamefigure); with `baseline` it is a differential graph.
"""

from __future__ import annotations

import dataclasses
import html
import zlib

import pandas as pd

from .flamelayout import add_share_change, change_color, change_scale, flame_layout, frame_color
from .schema import MIN_PROFILE_SAMPLES

CHAR_WIDTH_EM = 0.59  # average glyph width of Verdana/DejaVu Sans, in em (flamegraph.pl uses the same)

_SCRIPT = """
(function () {
  var svg = document.getElementById("__ID__");
  var frames = Array.prototype.slice.call(svg.querySelectorAll("g.frame"));
  var details = svg.querySelector(".details");
  var reset = svg.querySelector(".reset");
  var searchButton = svg.querySelector(".search");
  var matched = svg.querySelector(".matched");
  var left = __PAD__, usable = __USABLE__, charWidth = __CHARW__;
  var baseDetails = details.textContent;
  function num(g, name) { return parseFloat(g.getAttribute(name)); }
  function label(g, widthPx) {
    var name = g.getAttribute("data-name");
    var fit = Math.floor((widthPx - 6) / charWidth);
    if (fit < 5) return "";
    return name.length <= fit ? name : name.substring(0, fit - 2) + "..";
  }
  function place(g, x, w) {
    var rect = g.querySelector("rect"), text = g.querySelector("text");
    rect.setAttribute("x", (left + x * usable).toFixed(2));
    rect.setAttribute("width", Math.max(0, w * usable).toFixed(2));
    text.setAttribute("x", (left + x * usable + 3).toFixed(2));
    text.textContent = label(g, w * usable);
  }
  function zoom(target) {
    var zx = num(target, "data-x"), zw = num(target, "data-w"), zd = num(target, "data-depth");
    frames.forEach(function (g) {
      var x = num(g, "data-x"), w = num(g, "data-w"), d = num(g, "data-depth");
      var inside = x >= zx - 1e-12 && x + w <= zx + zw + 1e-12;
      g.classList.remove("hide", "parent");
      if (d >= zd && inside) {
        place(g, (x - zx) / zw, w / zw);
      } else if (d < zd && x <= zx + 1e-12 && x + w >= zx + zw - 1e-12) {
        g.classList.add("parent");  /* an ancestor: full width, greyed */
        place(g, 0, 1);
      } else {
        g.classList.add("hide");
      }
    });
    reset.classList.toggle("hide", zd === 0);
  }
  frames.forEach(function (g) {
    g.addEventListener("click", function () { zoom(g); });
    g.addEventListener("mouseover", function () {
      details.textContent = g.querySelector("title").textContent;
    });
    g.addEventListener("mouseout", function () { details.textContent = baseDetails; });
  });
  reset.addEventListener("click", function () { zoom(frames[0]); });
  searchButton.addEventListener("click", function () {
    var term = window.prompt("Search frames (regular expression)", "");
    frames.forEach(function (g) {
      var rect = g.querySelector("rect");
      rect.setAttribute("fill", rect.getAttribute("data-fill"));
    });
    matched.textContent = "";
    if (!term) return;
    var pattern;
    try { pattern = new RegExp(term); } catch (e) { matched.textContent = "bad expression"; return; }
    /* The matched share counts each sample once: skip frames inside a matched one. */
    var covered = [], share = 0;
    frames.forEach(function (g) {
      if (!pattern.test(g.getAttribute("data-name"))) return;
      g.querySelector("rect").setAttribute("fill", "rgb(230,0,230)");
      var x = num(g, "data-x"), w = num(g, "data-w");
      for (var i = 0; i < covered.length; i++) {
        if (x >= covered[i][0] - 1e-12 && x + w <= covered[i][1] + 1e-12) return;
      }
      covered.push([x, x + w]);
      share += w;
    });
    matched.textContent = "Matched: " + (100 * share).toFixed(1) + "%";
  });
})();
"""


def _svg_id(stacks: pd.DataFrame, title: str) -> str:
    # Deterministic, so the same report renders to the same bytes.
    digest = zlib.crc32(title.encode())
    for stack, count in zip(stacks["stack"], stacks["count"]):
        digest = zlib.crc32(f"{stack} {count}\n".encode(), digest)
    return f"flamegraph-{digest:08x}"


def _label(name: str, width_px: float, char_px: float) -> str:
    fit = int((width_px - 6) // char_px)
    if fit < 5:  # fewer than three letters and ".." says nothing
        return ""
    return name if len(name) <= fit else name[: fit - 2] + ".."


def _too_few_samples_svg(title: str, counted: int, needed: int, width_px: int, font_size_px: float) -> str:
    note = (f"No flame graph for {title}: {counted:,} samples, fewer than the {needed:,} a share of them needs "
            "(not testable here).")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="{width_px}" height="28" '
            f'class="loadlab-too-few-samples"><text x="10" y="18" '
            f'style="font-family: Verdana, \'DejaVu Sans\', sans-serif; font-size: {font_size_px}px; font-style: italic">'
            f'{html.escape(note)}</text></svg>')


def flamegraph_svg(
    stacks: pd.DataFrame,
    title: str = "Flame graph",
    baseline: pd.DataFrame | None = None,
    width_px: int = 1200,
    frame_height_px: int = 16,
    font_size_px: float = 11,
    min_width_px: float = 0.1,
    inverted: bool = False,
    count_name: str = "samples",
    element_id: str | None = None,
    min_samples: int | None = None,
) -> str:
    """The interactive flame graph of `stacks` (schema.stacks_frame) as SVG text.

    A profile of fewer than `min_samples` samples (default: schema.MIN_PROFILE_SAMPLES,
    when `count_name` is "samples") is not drawn: the SVG then holds one line saying so, with the count.

    baseline: another stacks table; then the graph is differential (widths
    from `stacks`, red/blue by the change in each frame's share of samples
    since `baseline`, in percentage points; see flamelayout).
    min_width_px: frames narrower than this are left out (as flamegraph.pl's
    --minwidth), which keeps graphs of huge profiles small.
    inverted: an icicle graph (root at the top) instead of a flame graph.
    count_name: what `count` counts, for the tooltips ("samples", "ns", ...).
    element_id: the <svg> id (default: derived from the content).
    """
    pad = 10
    usable = width_px - 2 * pad
    if min_samples is None:
        min_samples = MIN_PROFILE_SAMPLES if count_name == "samples" else 0
    counted = int(pd.to_numeric(stacks["count"], errors="coerce").fillna(0).sum()) if "count" in stacks else 0
    if counted < min_samples:
        return _too_few_samples_svg(title, counted, min_samples, width_px, font_size_px)
    layout = flame_layout(stacks, min_fraction=min_width_px / usable)
    total = layout.attrs["total"]
    differential = baseline is not None
    if differential:
        layout = add_share_change(layout, baseline)
        scale = change_scale(layout)
    max_depth = int(layout["depth"].max()) if len(layout) else 0
    top, bottom = 34, 28
    height = top + (max_depth + 1) * frame_height_px + bottom
    svg_id = element_id or _svg_id(stacks, title)
    char_px = CHAR_WIDTH_EM * font_size_px

    subtitle = (
        f"differential: red = larger share than in the baseline, blue = smaller; "
        f"full colour = {100 * scale:.2f} percentage points"
        if differential
        else "click a frame to zoom, hover for details"
    )
    geometry = _Geometry(pad, usable, top, frame_height_px, max_depth, inverted, char_px, total, count_name,
                         scale if differential else None)
    parts = _svg_head(svg_id, width_px, height, font_size_px, title, subtitle, geometry)
    parts += [_frame_element(row, geometry) for row in layout.itertuples(index=False)]
    script = (
        _SCRIPT.replace("__ID__", svg_id)
        .replace("__PAD__", str(pad))
        .replace("__USABLE__", str(usable))
        .replace("__CHARW__", f"{char_px:.3f}")
    )
    parts.append(f'<script type="text/ecmascript"><![CDATA[{script}]]></script>')
    parts.append("</svg>")
    return "\n".join(parts)


@dataclasses.dataclass
class _Geometry:
    """Where frames go (pixels) and what their tooltips count; `scale` is set for a differential graph."""

    pad: int
    usable: int
    top: int
    frame_height_px: int
    max_depth: int
    inverted: bool
    char_px: float
    total: int
    count_name: str
    scale: float | None


def _svg_head(svg_id: str, width_px: int, height: int, font_size_px: float, title: str, subtitle: str,
              geometry: _Geometry) -> list[str]:
    """The <svg> element, its style, the title lines, the zoom and search buttons and the details line."""
    pad = geometry.pad
    return [
        f'<svg id="{svg_id}" xmlns="http://www.w3.org/2000/svg" version="1.1" '
        f'width="{width_px}" height="{height}" viewBox="0 0 {width_px} {height}" class="loadlab-flamegraph">',
        "<style>"
        f"#{svg_id} text {{ font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: {font_size_px}px; fill: #000; }}"
        f" #{svg_id} g.frame {{ cursor: pointer; }}"
        f" #{svg_id} g.frame:hover rect {{ stroke: #000; stroke-width: 0.5; }}"
        f" #{svg_id} g.frame text {{ pointer-events: none; }}"
        f" #{svg_id} .hide {{ display: none; }}"
        f" #{svg_id} g.parent {{ opacity: 0.5; }}"
        f" #{svg_id} .button {{ cursor: pointer; fill: #333; text-decoration: underline; }}"
        "</style>",
        f'<rect x="0" y="0" width="{width_px}" height="{height}" fill="#f8f8f8"/>',
        f'<text x="{width_px / 2}" y="16" text-anchor="middle" style="font-size:{font_size_px + 4}px">'
        f"{html.escape(title)}</text>",
        f'<text x="{width_px / 2}" y="29" text-anchor="middle" fill="#555">{html.escape(subtitle)}</text>',
        f'<text class="button reset hide" x="{pad}" y="16">Reset zoom</text>',
        f'<text class="button search" x="{width_px - pad}" y="16" text-anchor="end">Search</text>',
        f'<text class="matched" x="{width_px - pad}" y="{height - 10}" text-anchor="end"></text>',
        f'<text class="details" x="{pad}" y="{height - 10}">'
        f"{html.escape(f'{geometry.total:,} {geometry.count_name}')}</text>",
    ]


def _frame_element(row, geometry: _Geometry) -> str:
    """One frame as an SVG group: its box, its tooltip and the part of its name that fits."""
    total, count_name = geometry.total, geometry.count_name
    x_fraction = row.start / total if total else 0.0
    w_fraction = row.width / total if total else 0.0
    level = row.depth if geometry.inverted else geometry.max_depth - row.depth
    y = geometry.top + level * geometry.frame_height_px
    x_px = geometry.pad + x_fraction * geometry.usable
    w_px = w_fraction * geometry.usable
    share = 100 * w_fraction
    name = row.name
    tooltip = f"{name} ({row.width:,} {count_name}, {share:.2f}%)"
    if geometry.scale is not None:
        color = change_color(row.share_change, geometry.scale)
        tooltip += f", {100 * row.share_change:+.2f} pp vs baseline ({100 * row.baseline_share:.2f}%)"
    else:
        color = frame_color(name)
    fill = f"rgb({color[0]},{color[1]},{color[2]})"
    escaped = html.escape(name)
    return (
        f'<g class="frame" data-name="{escaped}" data-x="{x_fraction:.9g}" data-w="{w_fraction:.9g}" '
        f'data-depth="{row.depth}"><title>{html.escape(tooltip)}</title>'
        f'<rect x="{x_px:.2f}" y="{y}" width="{w_px:.2f}" height="{geometry.frame_height_px - 1}" '
        f'fill="{fill}" data-fill="{fill}" rx="2" ry="2"/>'
        f'<text x="{x_px + 3:.2f}" y="{y + geometry.frame_height_px - 4.5:.1f}">'
        f"{html.escape(_label(name, w_px, geometry.char_px))}</text></g>"
    )
