"""Stepper: the HTML player as a notebook widget whose Next runs the engine's own backward, one node at a time
(or, inside a box the diagram folded, the whole run of nodes in it: one frame, as the saved player shows it).

The Stepper is an anywidget: the browser runs the same script and stylesheet as the saved
player (assets/player.js, the theme's CSS), and Python drives the backward through its Recording
(origins.record: gradviz's engine, or torch's through the torch bridge). When the learner steps
past the last recorded frame, the script asks Python for it; Python runs the next node with
`Recording.step()`, so `x.grad` holds exactly what has been accumulated so far and can be read
from another cell, and sends the new frame. Going back replays frames already recorded. Reset
puts every .grad back as it was and starts a fresh backward over the retained graph. Frame 0 is
the moment before backward starts.
"""
from __future__ import annotations

try:
    import anywidget
    import traitlets
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("gradviz.step() needs anywidget: pip install 'gradviz[notebook]' (or anywidget)") from exc

import os

from .explain import tensor_label
from .folded import box_members, fold_runs
from .frames import Frame, FrameBuilder
from .inside import Inside
from . import codeview
from .html import _uids, markup, record_graph, remap, script
from .mathtext import esc, preview
from .stage import Stage

# The widget's module: the player script, then anywidget's entry point wiring it to the model (the data
# it hands the script, and the frames' keys: player/frames.py's docstring).
_BRIDGE = """
export default {
  render({ model, el }) {
    el.innerHTML = model.get("markup") + "</div>";
    const root = el.querySelector(".gv-player"), now = root.querySelector(".gv-now");
    let frames = model.get("frames"), inner = model.get("inner");
    const api = window.gradvizPlayer(root, {
      frames, mid: model.get("mid"), interval: model.get("interval"), lines: model.get("lines"),
      total: model.get("total"), finished: model.get("finished"), zero: model.get("zero"),
      steps: model.get("counts"), boxes: model.get("boxes"), inner: model.get("inner"),
      names: model.get("names").length ? model.get("names") : undefined,
      remote: {
        request: (k) => model.send({ go: k }),                 // Python runs the engine up to frame k
        reset: () => model.send({ reset: true }),
        // a replayed frame is synced state, not a message: no stale echo can pull the player back
        moved: (k) => { if (k !== model.get("position")) { model.set("position", k); model.save_changes(); } },
      },
    });
    function sync() {
      now.innerHTML = model.get("now");
      api.setCounts(model.get("counts"));
      if (model.get("inner") !== inner) {
        inner = model.get("inner");
        api.setInside(model.get("boxes"), inner, model.get("names"));
      }
      if (model.get("frames") !== frames) {
        frames = model.get("frames");
        api.setFrames(frames, model.get("finished"), model.get("total"), model.get("position"));
      } else if (api.frame() !== model.get("position")) {
        api.go(model.get("position"));
      }
    }
    ["frames", "inner", "counts", "position", "now", "finished", "total"].forEach((name) => model.on("change:" + name, sync));
    api.go(model.get("position"), false);
    now.innerHTML = model.get("now");
  },
};
"""


class Stepper(anywidget.AnyWidget):
    """The player over a live backward: Next / Prev / Play / speed / slider / Reset, the camera and the panel."""

    _esm = traitlets.Unicode(script() + _BRIDGE).tag(sync=True)
    markup = traitlets.Unicode("").tag(sync=True)
    frames = traitlets.List([]).tag(sync=True)
    mid = traitlets.Dict({}).tag(sync=True)
    lines = traitlets.Dict({}).tag(sync=True)   # node id -> the key of the code line that made it
    interval = traitlets.Int(1200).tag(sync=True)
    position = traitlets.Int(0).tag(sync=True)
    total = traitlets.Int(1).tag(sync=True)
    boxes = traitlets.Dict({}).tag(sync=True)    # the folded boxes that can be opened (player/inside.py)
    inner = traitlets.List([]).tag(sync=True)    # the frames inside them
    names = traitlets.List([]).tag(sync=True)    # what find looks through (inside.py), once backward has run
    counts = traitlets.List([]).tag(sync=True)
    _inside = None      # the boxes backward has run in so far (player/inside.py), once it has run   # [0, the engine's steps]: the counter counts them, as the panel does
    finished = traitlets.Bool(False).tag(sync=True)
    zero = traitlets.Bool(True).tag(sync=True)   # frame 0 is the moment before the first step (counted as 0)
    now = traitlets.Unicode("").tag(sync=True)

    def __init__(self, tensors, gradient=None, names=None, model=None, retain_graph: bool = True,
                 jacobians: bool = True, interval_ms: int = 1200, unroll: bool = False, inputs=None,
                 **draw_options):
        super().__init__()
        # the backward writes .grad as it runs (read it halfway from another cell); Reset puts it back
        self.recording, svg, self._owners, self._titles = record_graph(
            tensors, names, draw_options, jacobians, gradient=gradient, model=model, retain_graph=retain_graph,
            write_grads=True, unroll=unroll, inputs=inputs, who="step")
        self.trace = self.recording.trace
        self.jacobians = jacobians
        self._draw_options = draw_options      # as the graph was laid out: a box opened is laid out alike
        self._layouts: dict = {}               # box id -> its own layout, made when its steps first run
        self.stage = Stage(svg)
        self._leaves = [n for n in self.trace.nodes if n.kind == "leaf"]   # whose .grad the panel shows
        self._start_frame = self._frame_zero()
        uid = f"gv-stepper-{os.getpid()}-{next(_uids)}"
        with self.hold_sync():
            self.markup = markup(uid, self.stage.render(self._start_frame.changes), 1, self._start_frame.title,
                                 self._start_frame.text, code=codeview.listing(self.trace))
            self.lines = codeview.line_keys(self.trace, box_members(self._owners, self._titles,
                                                                    {n.id for n in self.trace.nodes}))
            self.mid = {k: [round(x, 1), round(y, 1), 1 if left else 0]
                        for k, (x, y, left) in self.stage.place().items()}
            self.interval = int(interval_ms)
        self.on_msg(self._on_msg)
        self._start()

    def _frame_zero(self) -> Frame:
        state = {**dict.fromkeys((n.id for n in self.trace.nodes), "waiting"),
                 **dict.fromkeys((e.id for e in self.trace.edges), "idle")}
        text = ('<div class="gv-step"><p class="gv-say">Press Next to run the first node of backward: the engine '
                "starts at the output with the seed gradient and runs one vector-Jacobian product per step.</p></div>")
        frame = Frame(0, "backward", None, None, state, {}, "backward has not started", text,
                      "Backward has not started. Press Next to run its first node.")
        self._raw_zero = frame.copy()          # on the Trace's own ids, for the frames inside boxes
        remap([frame], self._owners)
        return frame

    # -- the backward, through its Recording ---------------------------------------------------
    def _start(self) -> None:
        self.builder = FrameBuilder(self.trace, self.jacobians)
        self._raw: list = []
        self._inside = None
        self._steps_expected = max(sum(n.kind in ("op", "accumulate") for n in self.trace.nodes), 1)
        self.counts = [0, self._steps_expected]
        self._expected = self._frames_expected()
        self._frames_json = [self._start_frame.to_json()]
        self._is_finished = False
        self._publish(0)

    def _frames_expected(self) -> int:
        """Backward frames to come: one per node the engine runs, one per folded box it runs nodes in
        (exact unless a hook adds work or a box's nodes do not run back to back; corrected as they run)."""
        boxes, alone = set(), 0
        for n in self.trace.nodes:
            if n.kind in ("op", "accumulate"):
                box = self._owners.get(n.id)
                if box in self._titles:
                    boxes.add(box)
                else:
                    alone += 1
        return max(alone + len(boxes), 1)

    def _box_of(self, trace_id):
        box = self._owners.get(trace_id)
        return box if box in self._titles else None

    def _run_step(self) -> bool:
        """Run one node of the backward and keep its raw frame; False once it has finished."""
        recorded = self.recording.step()   # appended to self.trace
        if recorded is None:
            self._is_finished = True
            return False
        self._steps_expected = max(self._steps_expected, len(self.trace.steps))   # a hook can add work
        frame = self.builder.add_step(recorded, self._steps_expected)
        self._raw.append(frame.copy())   # as the unfolded player shows it, for opening a box
        remap([frame], self._owners)
        return True

    def _advance(self, refold: bool = True) -> bool:
        """One more frame: run the next node of backward, and when it lies inside a folded box, every
        node after it in that box that the engine runs next (one frame, as the saved player folds it).
        refold=False leaves the published frames to one `_refold` after many steps (run_to_end)."""
        if not self._run_step():
            return False
        box = self._box_of(self.trace.steps[-1].node)
        while box is not None and self.recording.upcoming() is not None \
                and self._box_of(self.recording.upcoming()) == box:
            self._run_step()
        self._is_finished = self.recording.finished   # nothing is ready: the last node has run
        if refold:
            self._refold()
        return True

    def _refold(self) -> None:
        """The frames as the player shows them, folded, and the boxes backward has run in so far."""
        frames = fold_runs([self._start_frame, *self.builder.frames], self._owners, self._titles, self.trace,
                           self._steps_expected)
        # the boxes run so far, opened in place as in the saved player (each laid out once)
        self._inside = Inside(self.trace, [self._raw_zero, *self._raw], frames, self._owners, self._titles,
                              self._draw_options, self._layouts)
        self._frames_json = [f.to_json() for f in frames]
        if not self._is_finished:
            self._expected = max(self._expected, len(self._frames_json) - 1)

    def _publish(self, position: int) -> None:
        with self.hold_sync():
            if self.counts and self.counts[1] != self._steps_expected:   # a hook added work
                self.counts = [0, self._steps_expected]
            if self._inside is not None and len(self._inside.frames) != len(self.inner):
                self.boxes, self.names = self._inside.boxes, self._inside.names
                self.inner = [f.to_json() for f in self._inside.frames]
            elif self._inside is None and self.inner:
                self.boxes, self.names, self.inner = {}, [], []
            self.frames = list(self._frames_json)
            self.total = len(self._frames_json) if self._is_finished else self._expected + 1
            self.finished = self._is_finished
            self.position = max(0, min(position, len(self._frames_json) - 1))
            self.now = self._grads_now()

    def _on_msg(self, _widget, content, _buffers) -> None:
        if "go" in content:
            self.goto(int(content["go"]))
        elif content.get("reset"):
            self.reset()

    @property
    def steps(self) -> list:
        return self.trace.steps

    @property
    def recorded(self) -> list:
        """The backward frames recorded so far (frame k of the player is recorded[k - 1])."""
        return self.builder.frames

    # -- controls ----------------------------------------------------------------------
    def next(self) -> "Stepper":
        """One step forward: replay a recorded frame, or run the next node of backward."""
        return self.goto(self.position + 1)

    def prev(self) -> "Stepper":
        """One step back (replayed: the engine has already run it and .grad keeps its value)."""
        return self.goto(self.position - 1)

    def goto(self, position: int) -> "Stepper":
        position = max(0, int(position))
        while len(self._frames_json) <= position and not self._is_finished and self._advance():
            pass
        self._publish(position)
        return self

    def run_to_end(self) -> "Stepper":
        while not self._is_finished and self._advance(refold=False):
            pass
        self._refold()
        return self.goto(len(self._frames_json) - 1)

    def reset(self) -> "Stepper":
        """Put every leaf's .grad back as it was and start a fresh backward over the same graph."""
        self.recording.reset()
        self._start()
        return self

    def close(self) -> None:
        """Close the widget and its recording: the backward stops where it stands (no thread or graph
        is kept) and .grad stays as the steps run so far left it."""
        if hasattr(self, "recording"):   # not when recording failed in __init__ (the widget's __del__ closes)
            self.recording.close()
        super().close()

    # -- the panel's live part ----------------------------------------------------------
    def panel(self) -> str:
        """The step panel as the player shows it now (title, text, and the leaves' .grad right now)."""
        frame = self._frames_json[self.position]
        return f'<div class="gv-title">{frame["t"]}</div>{frame["h"]}{self.now}'

    def _grads_now(self) -> str:
        """The leaves' .grad as the engine has left them right now (not as of the frame shown)."""
        rows = []
        grads = self.recording.grads_now()
        for n in self._leaves:
            g = grads.get(n.id)
            value = "None" if g is None else preview(g)
            rows.append(f"<div><code>{tensor_label(n)}.grad</code> = <code class=\"gv-val\">{esc(value)}</code></div>")
        if not rows:
            return ""
        return f'<span class="gv-k">.grad right now</span>{"".join(rows)}'

    def __repr__(self) -> str:
        return f"<gradviz.Stepper: backward {self.position} of {len(self._frames_json) - 1} recorded>"   # as the counter counts


def step(*tensors, gradient=None, names=None, model=None, retain_graph: bool = True, jacobians: bool = True,
         interval_ms: int = 1200, unroll: bool = False, inputs=None, **draw_options) -> Stepper:
    """An interactive stepper over the backward of `tensors` (a notebook widget, the same player as animate()):
    gradviz tensors, real torch tensors (torch's own backward, through the torch bridge), or one
    recorded Trace (its steps handed out again; Reset starts them over).

    Next runs the next node of the backward (so `x.grad` can be read halfway),
    Prev replays, Play steps on a timer, Reset restores .grad and starts again.
    gradient, inputs: as in `tensor.backward(gradient, inputs=...)`. names, model, unroll: as in `animate` (unroll=True
    steps torch's fused nn.LSTM cell by cell; Next then runs one node of the unrolled cells, and the
    LSTM's weights and what feeds it get torch's own gradients). Drawing options are those of
    `gradviz.draw`.
    """
    return Stepper(tensors, gradient=gradient, names=names, model=model, retain_graph=retain_graph,
                   jacobians=jacobians, interval_ms=interval_ms, unroll=unroll, inputs=inputs, **draw_options)
