"""The laid-out SVG as a stage: restyle its nodes and edges by id, without Graphviz.

The renderer lays the Trace out once (`gradviz.render.layout_svg`); every node
`<g>` carries the trace node id and every edge `<g>` the trace edge id. The Stage
splits that SVG once at those ids, so applying a frame's state (a `gv-<state>`
class per id) is a join, and it finds where beside each edge the gradient flowing
along it can be written clear of every node (`place`). The HTML player receives the
same spots; it never measures the SVG in the browser.
"""
from __future__ import annotations

import re

from .mathtext import esc

_GROUP = re.compile(r'<g\b[^>]*?\bid="(?P<id>[^"]*)"[^>]*?\bclass="(?P<cls>node|edge)(?P<rest>[^"]*)"[^>]*>')
_GROUP_CLASS_FIRST = re.compile(r'<g\b[^>]*?\bclass="(?P<cls>node|edge)(?P<rest>[^"]*)"[^>]*?\bid="(?P<id>[^"]*)"[^>]*>')
_PATH_D = re.compile(r'<path\b[^>]*?\bd="([^"]*)"')
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
LABEL_GAP = 6       # the renderer writes its own edge labels right of the midpoint; ours go left
CHAR_WIDTH = 6.7    # px per character of the 11px monospace label font (player.css)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def clean_svg(svg: str) -> str:
    """The <svg> element alone: no XML prolog, DOCTYPE or comments, so it can sit inside HTML."""
    start = svg.find("<svg")
    if start < 0:
        raise ValueError("layout_svg returned no <svg> element")
    return _COMMENT.sub("", svg[start:]).strip()


_EDGE = re.compile(r'<g\b[^>]*\bclass="edge[^"]*"[^>]*>.*?</g>', re.DOTALL)
_POLYGON = re.compile(r'<polygon\b[^>]*?\bpoints="([^"]*)"')


def _points(text: str) -> list:
    nums = [float(v) for v in _NUMBER.findall(text)]
    return list(zip(nums[0::2], nums[1::2]))


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def backward_arrows(svg: str) -> str:
    """Each edge with an arrowhead also gets, hidden until backward, the arrowhead turned round at
    its input end (`gv-back`: gradient flows from the consumer to the input) and the stretch of line
    the forward head covered (`gv-tip`), so the player's stylesheet can point every arrow the way
    gradient flows once backward starts, on the same layout."""
    def add(m):
        group = m.group(0)
        path, poly = _PATH_D.search(group), _POLYGON.search(group)
        if path is None or poly is None:
            return group                     # a saved tensor's edge: no arrowhead
        line, head = _points(path.group(1)), _points(poly.group(1))
        if len(line) < 2 or len(head) < 3:
            return group
        (ex, ey), (sx, sy) = line[-1], line[0]
        tx, ty = max(head, key=lambda p: (p[0] - ex) ** 2 + (p[1] - ey) ** 2)
        length = ((tx - ex) ** 2 + (ty - ey) ** 2) ** 0.5
        if length == 0:
            return group
        ux, uy = (tx - ex) / length, (ty - ey) / length
        half = max(abs((px - ex) * uy - (py - ey) * ux) for px, py in head)
        nxt = next(((x, y) for x, y in line[1:] if abs(x - sx) + abs(y - sy) > 1e-6), None)
        if nxt is None:
            return group
        dx, dy = nxt[0] - sx, nxt[1] - sy
        norm = (dx * dx + dy * dy) ** 0.5
        dx, dy = dx / norm, dy / norm
        bx, by = sx + dx * length, sy + dy * length
        corners = [(bx - dy * half, by + dx * half), (sx, sy), (bx + dy * half, by - dx * half)]
        # one decimal and no attributes the stylesheet sets: a 2,000-edge page grows by ~0.2 MB, not ~0.5
        points = " ".join(f"{_num(x)},{_num(y)}" for x, y in corners)
        extra = (f'<path class="gv-tip" d="M{_num(ex)},{_num(ey)}L{_num(tx)},{_num(ty)}"/>'
                 f'<polygon class="gv-back" points="{points}"/>')
        return group[:-len("</g>")] + extra + "</g>"
    return _EDGE.sub(add, svg)


class Stage:
    """An SVG whose node and edge groups can be given state classes and edge labels."""

    def __init__(self, svg: str):
        self.svg = backward_arrows(clean_svg(svg))
        self.kinds: dict = {}           # id -> "node" | "edge"
        self.midpoints: dict = {}       # edge id -> (x, y) in the graph group's coordinates
        self._pieces: list = []         # text, then id, alternating: text id text id ... text
        matches = sorted(list(_GROUP.finditer(self.svg)) + [m for m in _GROUP_CLASS_FIRST.finditer(self.svg)
                                                            if not _GROUP.match(self.svg, m.start())],
                         key=lambda m: m.start())
        self.curves: dict = {}          # edge id -> points along its path (an edge written id first)
        pos = 0
        for m in matches:
            ident = m.group("id")
            cut = m.end("cls")          # the state class goes right after "node"/"edge"
            self._pieces.append(self.svg[pos:cut])
            self._pieces.append(ident)
            pos = cut
            self.kinds[ident] = m.group("cls")
            if m.group("cls") == "edge":
                # the group's first path, read once for its midpoint and its curve
                stop = self.svg.find("</g>", m.end())
                path = _PATH_D.search(self.svg, m.end(), stop if stop >= 0 else len(self.svg))
                points = _points(path.group(1)) if path is not None else None
                mid = _midpoint(points) if points else None
                if mid is not None:
                    self.midpoints[ident] = mid
                if m.re is _GROUP and stop >= 0:
                    self.curves[ident] = _curve(points or [])
        self._pieces.append(self.svg[pos:])
        self.node_boxes = [b for b in (_box(m.group(0)) for m in _NODE.finditer(self.svg)) if b is not None]
        # Graphviz's own texts beside edges (shapes, Σ marks) and on clusters: labels keep off them too
        self.text_boxes = [(m.group("id"), box) for m in _TEXT_OWNER.finditer(self.svg)
                           for box in _text_boxes(m.group(0))]
        self._grid: dict | None = None       # cell -> [(owner, box)]: what a label could hit, by place

    def _near(self, x0: float, y0: float, x1: float, y1: float, skip: str) -> list:
        """The node and text boxes that may overlap the region (those of edge `skip` left out):
        a grid of cells, so placing every label of a big graph is not every label times every node."""
        if self._grid is None:
            self._grid = {}
            for owner, b in [(None, b) for b in self.node_boxes] + self.text_boxes:
                for cx in range(int(b[0] // _CELL), int(b[2] // _CELL) + 1):
                    for cy in range(int(b[1] // _CELL), int(b[3] // _CELL) + 1):
                        self._grid.setdefault((cx, cy), []).append((owner, b))
        found: dict = {}
        for cx in range(int(x0 // _CELL), int(x1 // _CELL) + 1):
            for cy in range(int(y0 // _CELL), int(y1 // _CELL) + 1):
                for owner, b in self._grid.get((cx, cy), ()):
                    if owner != skip:
                        found[id(b)] = b
        return list(found.values())

    def place(self, lengths: dict | None = None, default: int = 28, only=None) -> dict:
        """edge id -> (x, y, left): where a gradient label of lengths[edge id] characters (default
        when not given) sits beside its edge, clear of every node: the point of the edge nearest its
        middle where the text fits left of the line, else right of it (the middle when none does).
        `only`: the edges to place (every edge by default)."""
        lengths = lengths or {}
        out = {}
        for edge_id, mid in self.midpoints.items():
            if only is not None and edge_id not in only:
                continue
            width = CHAR_WIDTH * lengths.get(edge_id, default)
            curve = self.curves.get(edge_id) or [mid]
            xs, ys = [p[0] for p in curve] + [mid[0]], [p[1] for p in curve] + [mid[1]]
            reach, rise = LABEL_GAP + width + _MARGIN, _SHIFT + _TEXT_TOP + _TEXT_BOTTOM + _MARGIN
            # the edge's own shape text is hidden while its gradient is written (player.css)
            boxes = self._near(min(xs) - reach, min(ys) - rise, max(xs) + reach, max(ys) + rise, edge_id)
            out[edge_id] = _free_spot(curve, mid, width, boxes)
        return out

    def render(self, state: dict, labels: dict | None = None) -> str:
        """The SVG with `gv-<state>` on each id in `state` and `labels` written at edge midpoints."""
        out = []
        for i, piece in enumerate(self._pieces):
            if i % 2 == 0:
                out.append(piece)
            else:
                st = state.get(piece)
                if st:
                    out.append(f" gv-{st}")
        svg = "".join(out)
        if labels:
            svg = insert_labels(svg, self.label_markup(labels))
        return svg

    def label_markup(self, labels: dict) -> str:
        spots = self.place({k: len(v) for k, v in labels.items() if v}, only=labels)
        texts = []
        for edge_id, text in labels.items():
            spot = spots.get(edge_id)
            if spot is None or not text:
                continue
            x, y, left = spot
            x, anchor = (x - LABEL_GAP, "end") if left else (x + LABEL_GAP, "start")
            texts.append(f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">{esc(text)}</text>')
        return f'<g class="gv-labels">{"".join(texts)}</g>'


def insert_labels(svg: str, markup: str) -> str:
    """Put `markup` inside the graph group (the last </g> before </svg>), whose transform
    the edge coordinates are in."""
    end = svg.rfind("</svg>")
    close = svg.rfind("</g>", 0, end)
    if close < 0:
        return svg[:end] + markup + svg[end:]
    return svg[:close] + markup + svg[close:]


_NODE = re.compile(r'<g\b[^>]*\bclass="node[^"]*"[^>]*>.*?</g>', re.DOTALL)
_TEXT_OWNER = re.compile(r'<g\b[^>]*\bid="(?P<id>[^"]*)"[^>]*\bclass="(?:edge|cluster)[^"]*"[^>]*>.*?</g>', re.DOTALL)
_TEXT = re.compile(r'<text\b([^>]*)>([^<]*)</text>')
_ATTR = re.compile(r'([\w-]+)="([^"]*)"')
_SHAPE_POINTS = re.compile(r'\b(?:points|d)="([^"]*)"')
_TEXT_TOP, _TEXT_BOTTOM = 11.0, 3.0     # the 11px label font around its baseline
_MARGIN = 2.0
_SHIFT = 28.0      # the farthest a label moves up or down off its edge (_free_spot's line shifts)
_CELL = 160.0      # the grid cell of Stage._near, in SVG units


def _box(group: str):
    """(x0, y0, x1, y1) of a node's outline (its polygons and paths), or None."""
    points = [p for m in _SHAPE_POINTS.finditer(group) for p in _points(m.group(1))]
    if not points:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    return min(xs), min(ys), max(xs), max(ys)


def _text_boxes(group: str) -> list:
    """(x0, y0, x1, y1) of each text in a group (monospace: 0.6 em a character, anchored as drawn)."""
    out = []
    for m in _TEXT.finditer(group):
        attrs = dict(_ATTR.findall(m.group(1)))
        try:
            x, y, size = float(attrs["x"]), float(attrs["y"]), float(attrs.get("font-size", 14))
        except (KeyError, ValueError):
            continue
        width = 0.6 * size * len(m.group(2))
        x -= {"middle": width / 2, "end": width}.get(attrs.get("text-anchor", "start"), 0)
        out.append((x, y - 0.8 * size, x + width, y + 0.2 * size))
    return out


def _curve(points: list) -> list:
    """Points along an edge's first path (`points`, as its d attribute gives them), from its input end
    to its consumer end: each cubic piece sampled at quarters."""
    if len(points) < 4 or (len(points) - 1) % 3:
        return points
    out = []
    for k in range(0, len(points) - 3, 3):
        p0, c1, c2, p1 = points[k:k + 4]
        for t in (0.0, 0.25, 0.5, 0.75):
            u = 1 - t
            out.append(tuple(u ** 3 * a + 3 * u * u * t * b + 3 * u * t * t * c + t ** 3 * d
                             for a, b, c, d in zip(p0, c1, c2, p1)))
    out.append(points[-1])
    return out


def _clear(x0: float, y0: float, x1: float, y1: float, boxes: list, inside: bool = True) -> bool:
    return (x0 >= 0 or not inside) and not any(x0 < b[2] + _MARGIN and x1 > b[0] - _MARGIN and y0 < b[3] + _MARGIN
                               and y1 > b[1] - _MARGIN for b in boxes)


def _free_spot(curve: list, mid: tuple, width: float, boxes: list) -> tuple:
    """(x, y, left) for a label `width` wide beside the edge drawn through `curve`: at the points
    nearest the edge's middle first, then nearer its ends, then a line above or below those."""
    n = len(curve)
    inner = curve[max(1, n // 6): n - max(1, n // 6)] or list(curve)
    middle = (len(inner) - 1) / 2
    nearest_middle = [p for _, p in sorted(enumerate(inner), key=lambda kp: abs(kp[0] - middle))]
    points = [tuple(mid)] + nearest_middle + [p for p in curve if p not in inner]
    # inside the drawing first; past its left side (the camera frames the labels too) only if need be
    for inside in (True, False):
        for dy in (0.0, -_SHIFT / 2, _SHIFT / 2, -_SHIFT, _SHIFT):
            for x, y in points:
                y += dy
                if _clear(x - LABEL_GAP - width, y - _TEXT_TOP, x - LABEL_GAP, y + _TEXT_BOTTOM, boxes, inside):
                    return x, y, True
                if _clear(x + LABEL_GAP, y - _TEXT_TOP, x + LABEL_GAP + width, y + _TEXT_BOTTOM, boxes, inside):
                    return x, y, False
    return mid[0], mid[1], mid[0] - LABEL_GAP - width >= 0


def _midpoint(points: list):
    """The middle of an edge's first path (`points`, as its d attribute gives them)."""
    if len(points) >= 4 and (len(points) - 1) % 3 == 0:
        segments = (len(points) - 1) // 3
        if segments % 2 == 0:           # an even number of cubic pieces: their shared middle point
            return points[3 * (segments // 2)]
        p0, c1, c2, p1 = points[3 * (segments // 2): 3 * (segments // 2) + 4]
        return tuple(0.125 * a + 0.375 * b + 0.375 * c + 0.125 * d for a, b, c, d in zip(p0, c1, c2, p1))
    return points[len(points) // 2]
