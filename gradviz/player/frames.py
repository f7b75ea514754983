"""Trace -> frames: what changes on the diagram at each step, plus the step panel's text.

One Graphviz layout serves a whole animation; a frame never carries an SVG. It
carries only the state changes (a CSS class per node or edge id) relative to the
previous frame, the short texts drawn on the edges gradient flows along in that
frame, and the panel's HTML. The HTML player folds the changes in JavaScript; the
ipywidgets Stepper folds them here (`state_at`) and styles the SVG server-side.

Forward frames come first (the graph grows op by op, in creation order), then one
frame per backward step (one VJP, or one AccumulateGrad write).

The player's format, documented here only (the front end is assets/player.js,
`gradvizPlayer(root, data)`, for the saved player and the Stepper alike):

A frame (`Frame.to_json`, the one place its keys are written):
  "c"  {node or edge id: state}: only the states that changed since the previous frame
       (NODE_STATES, EDGE_STATES; the script sets class gv-<state>)
  "l"  {edge id: text}: the labels drawn on the edges in this frame (the gradient flowing)
  "t"  the step panel's title (HTML); a forward frame's starts with "forward", or, for a node a
       create_graph backward built, says which backward: "first backward (create_graph) 3/7 · …"
  "h"  the step panel (HTML)
  "n"  the node created or run (the camera frames it, the code listing marks its line), or null
  "s"  the caption: the step's results as plain text (the screen reader's narration)
  "w"  {edge id: width level} (width_level, class gv-w<level>), only what changed; absent when nothing did
  "i"  [start, stop]: where a folded box's frame can be opened, its frames inside the box (the data's
       "inner"); absent on other frames
  "k"  [first, last]: the steps of its phase the frame shows, from 1 (Frame.span: the node created, or
       the engine's steps; a folded box's frame spans several); absent on a frame of no step
A saved player packs its frames (pack.py): a packed frame carries "b" (the index of an earlier
frame) and "H" (pieces of new text and copies of that frame's "h") instead of "h".

The data the script is given (the saved player: Animation.data() in html.py, as JSON in a
<script class="gv-data">; the Stepper: the model's traits, handed over by widget.py's bridge):
  "frames"    the frames above, in order
  "mid"       {edge id: [x, y, left]}: where an edge's label goes (stage.place; left 1: left of the point)
  "interval"  milliseconds per frame when playing
  "lines"     {node id: "block:line"}: the code listing's line that made each node, a folded box's the list of
              its nodes' lines where several made them (codeview.line_keys)
  "boxes"     {box id: {"svg", "mid", "title"}}: each folded box that can be opened, laid out unfolded
              (player/inside.py), with where its edges' labels go
  "inner"     the frames inside the boxes, packed as "frames" are; a frame's "i" says which are its own
  "steps"     [forward, backward]: how many steps each phase has (the counter: "backward 9–39 of 134")
  "predict"   {backward step from 1: {"node", "sends": [{"to", "slot", "shape", "values"}]}}: what each
              step sent, for predict mode (player/predict.py, assets/predict.js); saved players only
  "rtol", "atol"  the tolerances predict mode checks an answer within (predict.RTOL, ATOL); with "predict"
  Stepper only: "total" (the frames there will be), "finished" (backward has run to the end),
  "zero" (frame 0 is the graph before backward: the counter starts at the next one) and "remote"
  (callbacks asking Python for a frame: the engine runs only as far as the learner steps).
"""
from __future__ import annotations

import math
from collections import Counter
from functools import partial

from ..render.formula import Graph
from ..progress import progress
from ..records import StepRecord
from ..tracing import Trace
from . import explain
from .mathtext import short

# Node states: hidden (not created yet), new (created in this frame), built (created
# earlier), waiting (backward has not reached it), pending (has received part of its
# gradient), active (running its VJP now), done, written (a tensor whose .grad was written).
NODE_STATES = ("hidden", "new", "built", "waiting", "pending", "active", "done", "written")
# Edge states: hidden, new, built (forward); idle, flowing (gradient moves along it now), done.
EDGE_STATES = ("hidden", "new", "built", "idle", "flowing", "done")

# An edge that has carried gradient in backward is drawn as thick as that gradient is large: its
# width level (class gv-w<level>) is set by the largest |entry| of the gradient it carried last,
# one level per factor of 10 on an absolute scale, so a scalar loss's seed (1) is level 5 and a
# vanishing gradient reads thin in any graph. Absolute, not relative to the largest gradient of the
# run: the Stepper draws each step before the later ones exist, and must agree with the player.
WIDTH_LEVELS = (1e-3, 1e-2, 1e-1, 1.0, 10.0)   # level 1 below the first bound, level 6 from the last


def width_level(grad) -> int | None:
    """The width level of an edge carrying the gradient Preview `grad`: 0 for an all-zero gradient,
    1 to 6 by decades of max |g| (see WIDTH_LEVELS); None when the Preview holds no numbers."""
    if grad is None:
        return None
    ends = grad.extremes()   # (a large lazy preview reads these alone, not its mean and heatmap)
    if ends is not None:
        biggest = max(abs(ends[0]), abs(ends[1]))
    elif grad.values is not None and getattr(grad.values, "size", 0) and grad.values.dtype.kind in "fiub":
        biggest = float(abs(grad.values.astype(float)).max())
    else:
        return None
    if math.isnan(biggest) or biggest >= WIDTH_LEVELS[-1]:
        return len(WIDTH_LEVELS) + 1
    if biggest == 0:
        return 0
    return 1 + sum(biggest >= bound for bound in WIDTH_LEVELS)


class Frame:
    """One frame: its state changes and edge labels, and its panel (title, HTML, caption). The panel
    may be given as `panel`, a function returning (title, text, caption), made only when first read:
    a view that shows few of the frames (a folded player) never typesets the others."""

    __slots__ = ("index", "phase", "step", "node", "changes", "labels", "widths", "span", "source", "inner",
                 "_panel", "_texts")

    def __init__(self, index: int, phase: str, step: int | None, node: str | None, changes: dict | None = None,
                 labels: dict | None = None, title: str = "", text: str = "", caption: str = "",
                 widths: dict | None = None, panel=None, span: tuple | None = None):
        self.index = index
        self.phase = phase                  # "forward" | "backward"
        self.step = step                    # index into trace.steps, for backward frames
        self.node = node                    # the node created (forward) or run (backward)
        self.changes = {} if changes is None else changes   # id -> state, only what differs from the previous frame
        self.labels = {} if labels is None else labels      # edge id -> text drawn on the edge in this frame
        self.widths = {} if widths is None else widths      # edge id -> width level (width_level), only what changed
        # (first, last): the steps of its phase this frame shows, counted from 1 (forward: the node
        # created; backward: the engine's steps); a folded box's frame spans several. The counter and
        # the panel's title count the same steps.
        self.span = span
        self.source = None       # (first, last): the unfolded frames a folded box's frame stands for
        self.inner = None        # (start, stop): its frames inside the box (inside.py), where it can be opened
        self._panel = panel
        self._texts = None if panel is not None else (title, text, caption)

    def _made(self) -> tuple:
        if self._texts is None:
            self._texts = tuple(self._panel())
            self._panel = None
        return self._texts

    @property
    def title(self) -> str:
        """The step panel's title (HTML)."""
        return self._made()[0]

    @property
    def text(self) -> str:
        """The step panel (HTML)."""
        return self._made()[1]

    @property
    def caption(self) -> str:
        """The step's results as plain text (GIF, alt text, the screen reader's narration)."""
        return self._made()[2]

    def with_panel_of(self, other: "Frame") -> "Frame":
        """This frame showing `other`'s panel, made (once, shared) only when read."""
        self._texts, self._panel = (None, other._made) if other._texts is None else (other._texts, None)
        return self

    def copy(self) -> "Frame":
        """The same frame (its dicts shared, its panel made once for both)."""
        return Frame(self.index, self.phase, self.step, self.node, self.changes, self.labels, widths=self.widths,
                     span=self.span).with_panel_of(self)

    def __repr__(self) -> str:
        return f"Frame({self.index}, {self.phase!r}, step={self.step}, node={self.node!r})"

    def to_json(self) -> dict:
        """The frame as the player's script reads it (the keys: this module's docstring)."""
        out = {"c": self.changes, "l": self.labels, "t": self.title, "h": self.text, "n": self.node,
               "s": self.caption}
        if self.widths:
            out["w"] = self.widths
        if self.span:
            out["k"] = list(self.span)
        if self.inner:
            out["i"] = list(self.inner)
        return out


class _AsOf:
    """What the panel of one step reads of a FrameBuilder, as it was right after that step: the
    gradient contributions received so far by the nodes the panel speaks of."""

    def __init__(self, builder: "FrameBuilder", ids):
        self.graph, self.trace, self.jacobians = builder.graph, builder.trace, builder.jacobians
        self.received = {i: list(builder.received[i]) for i in ids if i in builder.received}


_SETTLING = ("new", "active", "flowing")   # states that last one frame: new -> built, the others -> done


class FrameBuilder:
    """Builds frames one at a time, so the Stepper can add a frame per engine step."""

    def __init__(self, trace: Trace, jacobians: bool = True):
        self.trace = trace
        self.graph = Graph(trace)
        self.jacobians = jacobians
        self.frames: list = []
        self.state: dict = {}        # id -> state after the last frame
        self._pending: dict = {}     # changes of the frame being built
        self.widths: dict = {}       # edge id -> width level after the last frame
        self._pending_widths: dict = {}
        self.received: dict = {}     # node id -> [(edge, Preview)] gradient contributions so far
        self._backward_started = False
        self._live: dict = {}        # ids now new, active or flowing: what the next frame settles

    # -- state ----------------------------------------------------------------------
    def _set(self, ident: str, state: str) -> None:
        if self.state.get(ident) != state or ident in self._pending:
            self._pending[ident] = state
            self.state[ident] = state
            if state in _SETTLING:
                self._live[ident] = None
            else:
                self._live.pop(ident, None)

    def _width(self, edge_id: str, grad) -> None:
        level = width_level(grad)
        if level is not None and self.widths.get(edge_id) != level:
            self.widths[edge_id] = self._pending_widths[edge_id] = level

    def _emit(self, phase: str, step, node, labels, title="", text="", caption="", panel=None,
              number: int | None = None) -> "Frame":
        """The frame of what changed since the last one; its panel as texts, or `panel` to make them later."""
        frame = Frame(len(self.frames), phase, step, node, dict(self._pending), labels, title, text, caption,
                      dict(self._pending_widths), panel, None if number is None else (number, number))
        self._pending = {}
        self._pending_widths = {}
        self.frames.append(frame)
        return frame

    def _settle(self) -> None:
        """What was happening in the previous frame becomes history."""
        for ident in list(self._live):
            self._set(ident, "built" if self.state[ident] == "new" else "done")

    # -- forward --------------------------------------------------------------------
    def forward_order(self) -> list:
        """Op node ids in the order the forward created them."""
        ops = {n.id for n in self.trace.nodes if n.kind == "op"}
        order = [i for i in self.trace.forward if i in ops]
        return order or [n.id for n in self.trace.nodes if n.kind == "op"]

    def add_forward(self) -> list:
        g = self.graph
        order = self.forward_order()
        if not order:
            return []
        for n in self.trace.nodes:
            self._set(n.id, "hidden")
        for e in self.trace.edges:
            self._set(e.id, "hidden")
        # each step numbered within its pass (the forward, or the backward that built the node with
        # create_graph=True), as its title and the counter say: "first backward (create_graph) 1/3"
        passes = [g.nodes[i].order for i in order]
        sizes = Counter(passes)
        seen: Counter = Counter()
        within = []
        for p in passes:
            within.append(seen[p])
            seen[p] += 1
        made = []
        for k, node_id in enumerate(order):
            if k:
                self._settle()
            self._set(node_id, "new")
            for e in g.into.get(node_id, ()):
                self._set(e.id, "new")
                if self.state.get(e.src) == "hidden":
                    self._set(e.src, "new")
                    for e2 in g.into.get(e.src, ()):     # a leaf behind its AccumulateGrad
                        self._set(e2.id, "new")
                        self._set(e2.src, "new")
            for e in g.out_of.get(node_id, ()):
                if g.nodes[e.dst].kind == "output":
                    self._set(e.id, "new")
                    self._set(e.dst, "new")
            made.append(self._emit("forward", None, node_id, {}, number=k + 1,
                                   panel=partial(explain.forward, self, node_id, within[k], sizes[passes[k]])))
        return made

    # -- backward -------------------------------------------------------------------
    def _start_backward(self) -> None:
        for n in self.trace.nodes:
            self._set(n.id, "waiting")
        for e in self.trace.edges:
            self._set(e.id, "idle")
        self._backward_started = True

    def add_step(self, step: StepRecord, total: int | None = None) -> "Frame":
        g = self.graph
        if not self._backward_started:
            self._start_backward()
        else:
            self._settle()
        node_id = step.node
        labels: dict = {}
        self._set(node_id, "active")
        for e in g.out_of.get(node_id, ()):           # the seed arrives from an output
            if g.nodes[e.dst].kind == "output" and g.nodes[e.dst].id in self.trace.roots:
                if self.state.get(e.dst) in ("waiting", None):
                    self._set(e.dst, "done")
                    self._set(e.id, "flowing")
                    if step.grad_in:
                        labels[e.id] = "seed " + short(step.grad_in[0])
                        self._width(e.id, step.grad_in[0])
        for edge_id, grad, axes in step.flows:
            e = g.edges[edge_id]
            self._set(edge_id, "flowing")
            self._width(edge_id, grad)
            labels[edge_id] = short(grad) + (" Σ" + ",".join(map(str, axes)) if axes else "")
            if self.state.get(e.src) in ("waiting", "pending"):
                self._set(e.src, "pending")
            self.received.setdefault(e.src, []).append((e, grad))
        for acc in step.accumulations:
            self._set(acc.node, "written")
            for e in g.into.get(node_id, ()):
                if e.src == acc.node:
                    self._set(e.id, "flowing")
                    self._width(e.id, acc.contribution)
                    labels[e.id] = short(acc.total)
        # the panel is typeset when it is shown, from the contributions as they stood after this step
        now = _AsOf(self, {node_id, *(g.edges[edge_id].src for edge_id, _, _ in step.flows)})
        return self._emit("backward", step.index, node_id, labels, panel=lambda: explain.backward(now, step, total),
                          number=step.index + 1)

    def build(self, forward: bool = True) -> list:
        if forward:
            self.add_forward()
        for step in progress(self.trace.steps, "frames"):
            self.add_step(step, len(self.trace.steps))
        return self.frames


def build_frames(trace: Trace, forward: bool = True, jacobians: bool = True) -> list:
    """Every frame of an animation of `trace`: forward frames (optional), then one per step."""
    return FrameBuilder(trace, jacobians).build(forward)


def widths_at(frames: list, index: int) -> dict:
    """The full edge id -> width level map after frame `index`."""
    widths: dict = {}
    for frame in frames[:index + 1]:
        widths.update(frame.widths)
    return widths


def state_at(frames: list, index: int) -> dict:
    """The full id -> state map after frame `index` (folding the changes from the start)."""
    state: dict = {}
    for frame in frames[:index + 1]:
        state.update(frame.changes)
    return state
