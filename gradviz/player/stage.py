"""The laid-out SVG as a stage: restyle its nodes and edges by id, without Graphviz.

The renderer lays the Trace out once (`gradviz.render.layout_svg`); every node
`<g>` carries the trace node id and every edge `<g>` the trace edge id. The Stage
splits that SVG once at those ids, so applying a frame's state (a `gv-<state>`
class per id) is a join, and it measures where each edge's midpoint is, so the
gradient flowing along an edge can be written next to it. The HTML player receives
the same midpoints; it never measures the SVG in the browser.
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
        points = " ".join(f"{x:.2f},{y:.2f}" for x, y in corners + corners[:1])
        extra = (f'<path class="gv-tip" fill="none" visibility="hidden" d="M{ex:.2f},{ey:.2f}L{tx:.2f},{ty:.2f}"/>'
                 f'<polygon class="gv-back" visibility="hidden" points="{points}"/>')
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
        pos = 0
        for m in matches:
            ident = m.group("id")
            cut = m.end("cls")          # the state class goes right after "node"/"edge"
            self._pieces.append(self.svg[pos:cut])
            self._pieces.append(ident)
            pos = cut
            self.kinds[ident] = m.group("cls")
            if m.group("cls") == "edge":
                mid = _midpoint(self.svg, m.end())
                if mid is not None:
                    self.midpoints[ident] = mid
        self._pieces.append(self.svg[pos:])

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
        texts = []
        for edge_id, text in labels.items():
            mid = self.midpoints.get(edge_id)
            if mid is None or not text:
                continue
            x, anchor = label_anchor(mid[0], text)
            texts.append(f'<text x="{x:.1f}" y="{mid[1]:.1f}" text-anchor="{anchor}">{esc(text)}</text>')
        return f'<g class="gv-labels">{"".join(texts)}</g>'


def label_anchor(x: float, text: str) -> tuple:
    """Left of the edge, unless the text would leave the drawing there (player.js does the same)."""
    if x - LABEL_GAP - CHAR_WIDTH * len(text) < 0:
        return x + LABEL_GAP, "start"
    return x - LABEL_GAP, "end"


def insert_labels(svg: str, markup: str) -> str:
    """Put `markup` inside the graph group (the last </g> before </svg>), whose transform
    the edge coordinates are in."""
    end = svg.rfind("</svg>")
    close = svg.rfind("</g>", 0, end)
    if close < 0:
        return svg[:end] + markup + svg[end:]
    return svg[:close] + markup + svg[close:]


def _midpoint(svg: str, start: int):
    """The middle of the first path in the edge group that starts at `start`."""
    stop = svg.find("</g>", start)
    m = _PATH_D.search(svg, start, stop if stop >= 0 else len(svg))
    if m is None:
        return None
    nums = [float(v) for v in _NUMBER.findall(m.group(1))]
    points = list(zip(nums[0::2], nums[1::2]))
    if not points:
        return None
    if len(points) >= 4 and (len(points) - 1) % 3 == 0:
        segments = (len(points) - 1) // 3
        if segments % 2 == 0:           # an even number of cubic pieces: their shared middle point
            return points[3 * (segments // 2)]
        p0, c1, c2, p1 = points[3 * (segments // 2): 3 * (segments // 2) + 4]
        return tuple(0.125 * a + 0.375 * b + 0.375 * c + 0.125 * d for a, b, c, d in zip(p0, c1, c2, p1))
    return points[len(points) // 2]
