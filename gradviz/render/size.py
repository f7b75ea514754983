"""How big a drawing will be, estimated before Graphviz lays it out.

Folding by default has to decide without a layout (a layout of the unfolded graph is what
takes minutes). A node's box comes from its label text (monospace: characters x lines); the
drawing's height from its ranks (the longest path from the outputs, as dot's ranking puts
a leaf next to its consumer) and its width from its widest rank. The estimate errs large
rather than small; tests compare it with real layouts.

The budget, "a few screens": the drawing at the size it is drawn inline (1 pt of the SVG
to 1 CSS px, where the default 10 pt font is readable) covers at most 3 screens of
1280x720 in area, and is at most 2 screen widths wide (inline it is shrunk to the
container's width, so a wider one would shrink its text under 5 px) and 4 screen heights
tall. Graphs of up to SMALL drawn nodes are never folded: they are read by zooming.
"""
from __future__ import annotations

from dataclasses import dataclass
from ..progress import progress
from . import labels

SCREEN = (1280.0, 720.0)
SCREENS = 3
MAX_WIDTH = 2 * SCREEN[0]
MAX_HEIGHT = 4 * SCREEN[1]
SMALL = 40

CHAR_W = 6.0        # pt per character of the 10 pt monospace font
LINE_H = 11.0       # pt per line
PAD_W, PAD_H = 14.0, 12.0     # a node's margins and border
NODESEP = 18.0      # dot's nodesep 0.25 in
RANKSEP = 22.0      # dot's ranksep 0.3 in
EDGE_LABEL = (44.0, 8.0)   # a shape label on an edge ("(3, 4)"): its width, and what it adds between ranks
SLACK = 1.15        # clusters, and dot's own spacing, on top of the sum of the parts
VIRTUAL_W = 10.0    # an edge passing a rank takes this much of its width (dot's virtual node)


@dataclass(frozen=True)
class Budget:
    """The size a drawing may take, in points (see the module)."""
    width: float = MAX_WIDTH
    height: float = MAX_HEIGHT
    area: float = SCREENS * SCREEN[0] * SCREEN[1]
    small: int = SMALL

    def fits(self, size: tuple) -> bool:
        w, h = size
        return w <= self.width and h <= self.height and w * h <= self.area

    def describe(self) -> str:
        return f"about {SCREENS} screens of {SCREEN[0]:.0f}x{SCREEN[1]:.0f}"


def text_box(lines: list) -> tuple:
    """(width, height) in points of a node whose label has these lines of text."""
    chars = max((len(line) for line in lines), default=1)
    return (max(chars, 3) * CHAR_W + PAD_W, max(len(lines), 1) * LINE_H + PAD_H)


def estimate(vertices: list, edges, sizes: dict, rankdir: str = "TB", labelled: bool = False,
             default: tuple = (60.0, 30.0)) -> tuple:
    """(width, height) in points of the drawing of `vertices` (ids) joined by `edges` ((src, dst)
    pairs, input to consumer) whose boxes are `sizes` (id -> (w, h); `default` for one not there);
    labelled: edges carry labels (dot then puts a rank of labels between every two ranks)."""
    consumers: dict = {}
    pending: dict = {v: 0 for v in vertices}
    for s, d in set(edges):    # edges between the same two boxes are drawn as one
        if s in pending and d in pending and s != d:
            consumers.setdefault(d, []).append(s)    # walk from consumer to input
            pending[s] += 1
    # rank = the longest path from an output: a node sits one rank past its farthest consumer
    rank = {v: 0 for v in vertices}
    ready = [v for v, n in pending.items() if n == 0]
    seen = 0
    while ready:
        v = ready.pop()
        seen += 1
        for s in consumers.get(v, ()):
            rank[s] = max(rank[s], rank[v] + 1)
            pending[s] -= 1
            if pending[s] == 0:
                ready.append(s)
    widths: dict = {}
    heights: dict = {}
    for v in vertices:
        w, h = sizes.get(v, default)
        if rankdir in ("LR", "RL"):
            w, h = h, w
        r = rank[v]
        widths[r] = widths.get(r, -NODESEP) + w + NODESEP
        heights[r] = max(heights.get(r, 0.0), h)
    # what edges add to the ranks they pass: a label (dot puts it halfway), a thin virtual node
    extra = EDGE_LABEL[0] + NODESEP if labelled else 0.0
    passing = [0] * (max(rank.values(), default=0) + 2)    # a difference array: O(edges + ranks)
    for d, inputs in consumers.items():
        for s in inputs:
            lo, hi = rank[d], rank[s]
            if extra:
                mid = (lo + hi) // 2
                widths[mid] = widths.get(mid, 0.0) + extra
            if hi > lo + 1:
                passing[lo + 1] += 1
                passing[hi] -= 1
    count = 0
    for r in range(len(passing)):
        count += passing[r]
        if count:
            widths[r] = widths.get(r, 0.0) + count * (VIRTUAL_W + NODESEP)
    ranks = len(heights)
    gap = RANKSEP + (EDGE_LABEL[1] if labelled else 0.0)
    # clusters (scopes) add margins and titles that the ranks above do not see
    width = max(widths.values(), default=0.0) * SLACK + 16.0
    height = (sum(heights.values()) + max(ranks - 1, 0) * gap) * SLACK + 16.0
    return (height, width) if rankdir in ("LR", "RL") else (width, height)


FLOOR = text_box([])    # the smallest box: no label is smaller


class Sizes:
    """The boxes of a trace's labels (trace node id -> (width, height) in `known`), measured when
    first asked for: `estimate` only grows with the boxes, so a drawing that is too big with every
    box not measured yet at FLOOR is too big, and folding a big graph measures only the nodes of the
    drawings it cannot decide that way (those near the budget), not every node it folds away."""

    def __init__(self, trace, ctx):
        self.index = {n.id: n for n in trace.nodes}
        self.ctx = ctx      # the labels.LabelContext the diagram draws with
        self.known: dict = {}

    def measure(self, ids) -> dict:
        """`known`, with the boxes of the trace nodes among `ids` measured."""
        todo = [i for i in ids if i not in self.known and i in self.index]
        for node_id in progress(todo, "sizing labels", unit="node"):
            self.known[node_id] = node_size(self.index[node_id], self.ctx)
        return self.known


def node_size(node, ctx) -> tuple:
    """(width, height) of a trace node's box, from the text its label will hold
    (ctx: the labels.LabelContext the diagram draws with)."""
    lines = list(labels.header_lines(node, ctx, sizing=True))
    grad = None
    if node.kind == "op":
        grad = ctx.received.get(node.id)
    elif node.kind in ("leaf", "output"):
        grad = node.grad
    value = node.value if node.kind != "accumulate" else None
    blocks = []
    if ctx.show_values and value is not None and (value.values is not None or value.stats is not None):
        blocks.append(["data"] + labels.values_text(value).split("\n"))
    if ctx.show_grads and grad is not None:
        blocks.append(["grad"] + labels.values_text(grad).split("\n"))
    elif ctx.show_grads and node.kind == "leaf":
        blocks.append([labels.NOT_COMPUTED])
    if blocks:
        # data | grad sit side by side under the header
        width = sum(max(len(x) for x in b) for b in blocks) + 2 * (len(blocks) - 1)
        tall = max(len(b) for b in blocks)
        if tall == 2 and all(len(b) <= 2 and len(" ".join(b)) <= 21 for b in blocks):
            tall, width = 1, sum(len(" ".join(b)) for b in blocks) + 2 * (len(blocks) - 1)
        lines.append("x" * width)
        lines.extend([""] * (tall - 1))
    return text_box(lines)
