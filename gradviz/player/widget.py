"""Stepper: an ipywidgets player whose Next runs the engine's own backward, one node at a time.

The backward really pauses between clicks: Next calls `next()` on the engine's
`backward_steps` generator, so `x.grad` holds exactly what has been accumulated so
far and can be inspected from another cell. Prev (and the slider, going back)
replays frames already recorded; going forward again replays them too until the
newest, then resumes the engine. Reset puts every leaf's .grad back as it was and
starts a fresh backward over the retained graph.

The frames, the panel text and the stylesheet are the ones the HTML player uses;
the SVG is restyled here (Stage.render), since widget HTML runs no script.
"""
from __future__ import annotations

try:
    import ipywidgets as widgets
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("gradviz.step() needs ipywidgets: pip install 'gradviz[notebook]' (or ipywidgets)") from exc

from ..tracing import add_steps
from .explain import tensor_label
from .frames import FrameBuilder, state_at
from .html import record_graph, remap, stylesheet
from .mathtext import esc, preview
from .stage import Stage

SPEEDS = (("0.5×", 0.5), ("1×", 1.0), ("2×", 2.0), ("4×", 4.0))


class Stepper(widgets.VBox):
    """Prev / Next / Play / speed / a slider over steps / Reset, the diagram and the step panel."""

    def __init__(self, tensors, gradient=None, names=None, retain_graph: bool = True, jacobians: bool = True,
                 interval_ms: int = 1200, **draw_options):
        self.roots, self.trace, svg, self._owners = record_graph(tensors, names, draw_options)
        self.gradient = gradient
        self.retain_graph = retain_graph
        self.jacobians = jacobians
        self.stage = Stage(svg)
        self._leaves = [n for n in self.trace.nodes if n.kind == "leaf" and n.ref is not None]
        self._initial_grads = {n.id: _copy_grad(n.ref) for n in self._leaves}
        self._interval = int(interval_ms)
        self._syncing = False

        self.prev_button = widgets.Button(description="◀ Prev", tooltip="replay the previous step")
        self.next_button = widgets.Button(description="Next ▶", tooltip="run one more node of backward")
        self.reset_button = widgets.Button(description="Reset", tooltip="restore .grad and start backward again")
        self.play = widgets.Play(interval=self._interval, min=0, max=1, step=1, description="Play")
        self.speed = widgets.Dropdown(options=SPEEDS, value=1.0, description="speed",
                                      layout=widgets.Layout(width="150px"))
        self.slider = widgets.IntSlider(min=0, max=1, value=0, description="step", continuous_update=False,
                                        layout=widgets.Layout(width="340px"))
        self.count = widgets.Label()
        self.style = widgets.HTML(f"<style>{stylesheet()}</style>")
        self.diagram = widgets.HTML(layout=widgets.Layout(flex="1 1 420px", overflow="auto"))
        self.panel = widgets.HTML(layout=widgets.Layout(flex="1 1 340px"))
        for w in (self.diagram, self.panel):
            w.add_class("gv-root")
        self.diagram.add_class("gv-stepper-diagram")
        self.panel.add_class("gv-stepper-panel")

        self.prev_button.on_click(lambda _: self.prev())
        self.next_button.on_click(lambda _: self.next())
        self.reset_button.on_click(lambda _: self.reset())
        widgets.jslink((self.play, "value"), (self.slider, "value"))
        self.slider.observe(self._on_slider, names="value")
        self.speed.observe(lambda ch: setattr(self.play, "interval", int(self._interval / ch["new"])), names="value")

        bar = widgets.HBox([self.prev_button, self.next_button, self.play, self.slider, self.count,
                            self.speed, self.reset_button], layout=widgets.Layout(flex_flow="row wrap"))
        body = widgets.HBox([self.diagram, self.panel], layout=widgets.Layout(flex_flow="row wrap"))
        super().__init__([self.style, bar, body])
        self.add_class("gv-stepper")
        self._start()

    # -- the engine --------------------------------------------------------------------
    def _start(self) -> None:
        from ..autograd.engine import backward_steps
        self.trace.steps.clear()
        self.run = backward_steps(self.roots, self.gradient, retain_graph=self.retain_graph)
        self.builder = FrameBuilder(self.trace, self.jacobians)
        self._before = {n.id: n.grad for n in self._leaves}
        self.position = 0           # steps shown: 0 = backward not started
        self.finished = False
        expected = sum(n.kind in ("op", "accumulate") for n in self.trace.nodes)
        self._set_range(max(expected, 1))
        self._show()

    def _advance(self) -> bool:
        """Run one node of the engine's backward; False once it has finished."""
        try:
            step = next(self.run)
        except StopIteration:
            self.finished = True
            self._set_range(len(self.frames))
            return False
        add_steps(self.trace, [step], self._before)
        recorded = self.trace.steps[-1]
        for acc in recorded.accumulations:
            self._before[acc.node] = acc.total
        frame = self.builder.add_step(recorded)
        remap([frame], self._owners)
        return True

    @property
    def frames(self) -> list:
        return self.builder.frames

    @property
    def steps(self) -> list:
        return self.trace.steps

    # -- controls ----------------------------------------------------------------------
    def next(self) -> "Stepper":
        """One step forward: replay a recorded frame, or run the next node of backward."""
        if self.position < len(self.frames) or (not self.finished and self._advance()):
            self.position += 1
        self._show()
        return self

    def prev(self) -> "Stepper":
        """One step back (replayed: the engine has already run it and .grad keeps its value)."""
        self.position = max(0, self.position - 1)
        self._show()
        return self

    def goto(self, position: int) -> "Stepper":
        position = max(0, int(position))
        while len(self.frames) < position and not self.finished and self._advance():
            pass
        self.position = min(position, len(self.frames))
        self._show()
        return self

    def run_to_end(self) -> "Stepper":
        while not self.finished and self._advance():
            pass
        return self.goto(len(self.frames))

    def reset(self) -> "Stepper":
        """Put every leaf's .grad back as it was and start a fresh backward over the same graph."""
        from ..tensor import Tensor
        self.play.playing = False
        for n in self._leaves:
            old = self._initial_grads[n.id]
            n.ref.grad = None if old is None else Tensor(old.copy())
        self._start()
        return self

    def _on_slider(self, change) -> None:
        if not self._syncing:
            self.goto(change["new"])

    def _set_range(self, top: int) -> None:
        self._syncing = True
        try:
            self.slider.max = top
            self.play.max = top
        finally:
            self._syncing = False

    # -- drawing -----------------------------------------------------------------------
    def _state(self) -> dict:
        if self.position:
            return state_at(self.frames, self.position - 1)
        # before the first step: what the first backward frame starts from
        return {**dict.fromkeys((n.id for n in self.trace.nodes), "waiting"),
                **dict.fromkeys((e.id for e in self.trace.edges), "idle")}

    def _show(self) -> None:
        frame = self.frames[self.position - 1] if self.position else None
        self.diagram.value = self.stage.render(self._state(), frame.labels if frame else None)
        if frame is None:
            title = "backward has not started"
            text = ('<div class="gv-step"><p class="gv-say">Press Next to run the first node of backward: the engine '
                    "starts at the output with the seed gradient and runs one vector-Jacobian product per step."
                    "</p></div>")
        else:
            title, text = frame.title, frame.text
            if self.position < len(self.frames):
                title += " (replayed)"
        self.panel.value = (f'<div class="gv-title">{title}</div>{text}{self._grads_now()}')
        self._syncing = True
        try:
            self.slider.value = self.position
        finally:
            self._syncing = False
        total = len(self.frames) if self.finished else f"≤{self.slider.max}"
        self.count.value = f"step {self.position} / {total}" + (" · done" if self.finished and
                                                                 self.position == len(self.frames) else "")
        self.prev_button.disabled = self.position == 0
        self.next_button.disabled = self.finished and self.position >= len(self.frames)

    def _grads_now(self) -> str:
        """The leaves' .grad as the engine has left them right now (not as of the frame shown)."""
        rows = []
        for n in self._leaves:
            g = n.ref.grad
            value = "None" if g is None else preview(_preview(g))
            rows.append(f"<div><code>{tensor_label(n)}.grad</code> = <code class=\"gv-val\">{esc(value)}</code></div>")
        if not rows:
            return ""
        return ('<div class="gv-row gv-now"><span class="gv-k">.grad right now</span>'
                f"{''.join(rows)}</div>")

    def _repr_pretty_(self, p, cycle) -> None:
        p.text(f"<gradviz.Stepper: step {self.position} of {len(self.frames)} recorded>")


def _copy_grad(tensor):
    g = tensor.grad
    return None if g is None else g.numpy().copy()


def _preview(g):
    from ..tracing import Preview
    return Preview.of(g._data)


def step(*tensors, gradient=None, names=None, retain_graph: bool = True, jacobians: bool = True,
         interval_ms: int = 1200, **draw_options) -> Stepper:
    """An interactive stepper over the backward of `tensors` (an ipywidgets widget).

    Next runs the next node of the engine's backward (so `x.grad` can be read halfway),
    Prev replays, Play steps on a timer, Reset restores .grad and starts again.
    gradient: as in `tensor.backward(gradient)`. Drawing options are those of `gradviz.draw`.
    """
    return Stepper(tensors, gradient=gradient, names=names, retain_graph=retain_graph, jacobians=jacobians,
                   interval_ms=interval_ms, **draw_options)
