"""Flame graph geometry and colours, shared by the SVG and matplotlib views.

A flame graph draws every distinct stack prefix once: a frame's width is
the samples whose stack starts with that prefix, its children sit on top
(flame) or below (icicle), sorted by name as flamegraph.pl sorts them, so
the same stacks always give the same picture. A root frame "all" spans
everything.

Differential view (Brendan Gregg's differential flame graphs, with shares
instead of raw counts so that profiles of different lengths compare):
widths come from the profile shown, and each frame's colour says how its
share of all samples changed from the baseline, in percentage points.
Frames that vanished since the baseline have no width and are not drawn:
swap the two profiles to see them.
"""

from __future__ import annotations

import zlib

import numpy as np
import pandas as pd

ROOT_NAME = "all"

LAYOUT_COLUMNS = ("name", "depth", "start", "width", "self_count", "parent", "path")


def _trie(stacks: pd.DataFrame) -> dict:
    # node = [inclusive count, self count, {child name: node}]
    root = [0, 0, {}]
    for stack, count in zip(stacks["stack"], stacks["count"]):
        count = int(count)
        if count <= 0:
            continue
        node = root
        node[0] += count
        for frame in stack.split(";"):
            children = node[2]
            child = children.get(frame)
            if child is None:
                child = children[frame] = [0, 0, {}]
            child[0] += count
            node = child
        node[1] += count
    return root


def flame_layout(stacks: pd.DataFrame, min_fraction: float = 0.0) -> pd.DataFrame:
    """One row per frame to draw, root ("all", depth 0) first, depth-first.

    Columns: name; depth (0 = root); start and width in samples (x = start /
    total); self_count (samples where it is the leaf); parent (row index,
    -1 for the root); path (the stack prefix, frames joined by ";").
    Frames narrower than `min_fraction` of all samples are left out, with
    everything above them (they could not be seen anyway).
    """
    root = _trie(stacks)
    total = root[0]
    threshold = min_fraction * total
    rows: list[tuple] = [(ROOT_NAME, 0, 0, total, root[1], -1, "")]
    # Iterative depth-first walk: deep stacks (recursion) would overflow Python's stack.
    pending = [(root, 0, 0, "")]
    while pending:
        node, index, start, path = pending.pop()
        depth = rows[index][1] + 1
        offset = start
        children = []
        for name in sorted(node[2]):
            child = node[2][name]
            if child[0] > 0 and child[0] >= threshold:
                child_path = f"{path};{name}" if path else name
                rows.append((name, depth, offset, child[0], child[1], index, child_path))
                children.append((child, len(rows) - 1, offset, child_path))
            offset += child[0]
        # Reversed so that the pop order is name order (stable output).
        pending.extend(reversed(children))
    layout = pd.DataFrame.from_records(rows, columns=list(LAYOUT_COLUMNS))
    layout.attrs["total"] = total
    return layout


def prefix_counts(stacks: pd.DataFrame) -> dict[str, int]:
    """Samples per stack prefix ("a", "a;b", ...): each frame's inclusive count by path."""
    counts: dict[str, int] = {}
    for stack, count in zip(stacks["stack"], stacks["count"]):
        count = int(count)
        end = -1
        while True:
            end = stack.find(";", end + 1)
            prefix = stack if end < 0 else stack[:end]
            counts[prefix] = counts.get(prefix, 0) + count
            if end < 0:
                break
    return counts


def add_share_change(layout: pd.DataFrame, baseline: pd.DataFrame) -> pd.DataFrame:
    """`layout` with share, baseline_share and share_change (fractions of all samples).

    share_change > 0: the frame (with everything it calls) takes a larger
    share of the profile than in `baseline`.
    """
    total = layout.attrs["total"]
    baseline_counts = prefix_counts(baseline)
    baseline_total = int(baseline["count"].sum())
    result = layout.copy()
    result["share"] = result["width"] / total if total else 0.0
    baseline_width = [baseline_total if path == "" else baseline_counts.get(path, 0) for path in result["path"]]
    result["baseline_share"] = np.asarray(baseline_width, dtype=float) / baseline_total if baseline_total else 0.0
    result["share_change"] = result["share"] - result["baseline_share"]
    return result


def frame_color(name: str) -> tuple[int, int, int]:
    """flamegraph.pl's "hot" palette, but hashed (crc32) so a name always has one colour."""
    if name == ROOT_NAME:
        return (200, 200, 200)
    digest = zlib.crc32(name.encode("utf-8", errors="replace"))
    v1, v2, v3 = (((digest >> shift) & 0xFF) / 255 for shift in (0, 8, 16))
    return (205 + int(50 * v3), int(230 * v1), int(55 * v2))


def change_color(change: float, scale: float) -> tuple[int, int, int]:
    """Red for a growing share, blue for a shrinking one, white for none; |change| = scale is full colour."""
    if not scale or not np.isfinite(change):
        return (245, 245, 245)
    t = max(-1.0, min(1.0, change / scale))
    fade = int(round(255 * (1 - 0.8 * abs(t))))
    return (255, fade, fade) if t > 0 else (fade, fade, 255)


def change_scale(layout: pd.DataFrame) -> float:
    """The |share_change| that gets full colour: the largest, ignoring the root."""
    changes = layout["share_change"].to_numpy()[1:]
    return float(np.max(np.abs(changes))) if len(changes) else 0.0
