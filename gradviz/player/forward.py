"""Forward mode, animated: the tangent flowing forward along the edges, one op at a time.

`animate_jvp(func, primals, tangents)` runs `gradviz.func.jvp` while a ForwardRecorder
listens and returns an Animation whose `.result` is what jvp returned, `(output, jvp_out)`.
`record_forward()` records any other forward-mode code the same way (`autograd.functional.jvp`
or `hvp`, dual tensors made by hand with `forward_ad`). The frames use the backward player's
layout, camera, panel, code listing and themes; only the edge states differ (`ahead`,
`carrying`, `carried`, styled in assets/forward.css), since a tangent travels the way the edges
are drawn and the arrowheads stay as they are. Each frame shows one op: its value, the tangents
that came in, and the JVP it applied, ṫ_out = J ṫ_in, with the local Jacobian's numbers.
"""
from __future__ import annotations

import inspect
import sys
from contextlib import contextmanager

import numpy as np

from ..forward_trace import ForwardRecorder, ForwardTrace
from ..naming import names_in
from ..naming import dotted as dot
from . import grids
from .explain import _join, node_label
from .folded import fold_runs
from .frames import FrameBuilder
from .html import Animation, layout, remap, with_key
from .mathtext import esc, short
from .orders import separate_orders
from ..func import jvp
from ..autograd.functional import hvp
from ..tensor import Tensor
from ..autograd.forward_ad import _key


KEY = ("forward mode: arrows point the way the tangent flows · arrow thickness: size of the tangent, ×10 per step",
       "Forward mode pushes a tangent (a direction) through the graph with the values, in the order the ops ran, "
       "the way the arrows point. An edge that has carried a tangent is drawn one step thicker for every factor "
       "of 10 in its largest |entry|, as in backward. A tensor read by several ops sends each of them a copy of "
       "its tangent: nothing is summed going forward.")


class TangentFrames(FrameBuilder):
    """Frames of a ForwardTrace: a seed frame, then one frame per op that pushed a tangent."""

    def _settle(self) -> None:
        for ident, st in list(self.state.items()):
            if st == "active":
                self._set(ident, "done")
            elif st == "carrying":
                self._set(ident, "carried")

    def add_seeds(self) -> None:
        trace: ForwardTrace = self.trace
        for n in trace.nodes:
            self._set(n.id, "waiting")
        for e in trace.edges:
            self._set(e.id, "ahead")
        for leaf_id, _ in trace.seeds:
            self._set(leaf_id, "active")
        title, text, caption = seeds_panel(self)
        self._emit("forward", None, trace.seeds[0][0] if trace.seeds else None, {}, title, text, caption)

    def add_tangent(self, step, total: int) -> None:
        g = self.graph
        self._settle()
        labels: dict = {}
        self._set(step.node, "active")
        for e in g.into.get(step.node, ()):
            t = step.tangents_in[e.slot] if 0 <= e.slot < len(step.tangents_in) else None
            if t is None:
                continue
            self._set(e.id, "carrying")
            self._width(e.id, t)
            labels[e.id] = short(t)
        for e in g.out_of.get(step.node, ()):
            if g.nodes[e.dst].kind == "output" and e.output_nr < len(step.tangents_out):
                t = step.tangents_out[e.output_nr]
                self._set(e.id, "carrying")
                self._set(e.dst, "written")
                self._width(e.id, t)
                labels[e.id] = short(t)
        title, text, caption = tangent_panel(self, step, total)
        self._emit("forward", step.index, step.node, labels, title, text, caption)

    def build(self, forward: bool = True) -> list:
        self.add_seeds()
        for step in self.trace.tangents:
            self.add_tangent(step, len(self.trace.tangents))
        return self.frames


# -- the panel ---------------------------------------------------------------------------
def seeds_panel(builder) -> tuple:
    graph = builder.graph
    rows, said = [], []
    for leaf_id, tangent in builder.trace.seeds:
        name = node_label(graph, leaf_id)
        said.append(name)
        rows.append(f'<tr><td class="gv-to">{name}</td><td>{grids.tensor(graph.nodes[leaf_id].value)}</td>'
                    f'<td class="gv-to">{esc(dot(graph.nodes[leaf_id].name))} =</td>'
                    f"<td>{grids.tensor(tangent)}</td></tr>")
    inputs = _join(said) if said else "the inputs"
    text = ('<div class="gv-step gv-forward"><p class="gv-say">Forward mode gives each input a tangent, the '
            f"direction to differentiate along, and carries it through the ops with the values: {inputs} "
            "start with theirs. Each op will turn the tangents it receives into its output's tangent with its "
            "Jacobian-vector product, ṫ<sub>out</sub> = J ṫ<sub>in</sub>, in the order the code ran.</p>"
            f'<table class="gv-vjps">{"".join(rows)}</table></div>')
    caption = "forward mode: tangents " + ", ".join(
        f"{dot(graph.nodes[n].name)} = {short(t)}" for n, t in builder.trace.seeds)
    return "forward mode: the tangents", text, caption


def tangent_panel(builder, step, total: int) -> tuple:
    """(title, panel HTML, caption) for one op pushing its tangent forward."""
    graph = builder.graph
    node = graph.nodes[step.node]
    formula = graph.formula(node)
    slots = [e for e in graph.into.get(step.node, ())
             if 0 <= e.slot < len(step.tangents_in) and step.tangents_in[e.slot] is not None]
    out_dot = r"\dot{" + formula.out + "}"
    terms = [r"\frac{\partial " + formula.out + r"}{\partial " + formula.inputs[e.slot] + r"}\,\dot{"
             + formula.inputs[e.slot] + "}" for e in slots if e.slot < len(formula.inputs)]
    rule = formula.render(out_dot + " = " + (" + ".join(terms) if terms else "0"))
    senders = _join([node_label(graph, e.src) if graph.nodes[e.src].kind == "leaf"
                     else f"the output of {node_label(graph, e.src)}" for e in slots]) if slots else "no input"
    say = (f"{esc(node.name)} computes its value and, with its Jacobian-vector product, the tangent of its output "
           f"from the tangent{'s' if len(slots) > 1 else ''} that came from {senders}: {rule}.")
    out_t = step.tangents_out[0] if step.tangents_out else None
    scale = grids.scale_of(*step.tangents_in, *step.tangents_out)
    parts = [f'<div class="gv-head"><b>{esc(node.name)}</b> {formula.forward()}</div>',
             f'<p class="gv-say">{say}</p>']
    if node.value is not None:
        parts.append(f'<div class="gv-row"><span class="gv-k">value</span> {grids.tensor(node.value)}</div>')
    rows = []
    for e in slots:
        name = formula.inputs[e.slot] if e.slot < len(formula.inputs) else "x"
        tin = formula.render(r"\dot{" + name + "}")
        rows.append(f'<tr data-edge="{esc(e.id)}"><td class="gv-to">from {node_label(graph, e.src)}</td><td>{tin} = '
                    f"{grids.tensor(step.tangents_in[e.slot], scale)}</td></tr>")
    for nr, t in enumerate(step.tangents_out):
        rows.append(f'<tr><td class="gv-to">sends</td><td>{formula.render(out_dot)} = '
                    f"{grids.tensor(t, scale)}</td></tr>")
    parts.append('<table class="gv-vjps">' + "".join(rows) + "</table>")
    parts.append(_jacobian_product(step, slots, formula, out_t, scale))
    title = f"forward mode {step.index + 1}/{total} · {esc(node.name)}"
    ins = ", ".join(f"{dot(formula.input_text(e.slot))} = {short(step.tangents_in[e.slot])}" for e in slots)
    caption = (f"forward mode: {node.name}  {formula.forward_text()}; {ins} -> "
               f"{dot(formula.out_text)} = {short(out_t) if out_t is not None else '—'}")
    return title, f'<div class="gv-step gv-forward">{"".join(parts)}</div>', caption


def _jacobian_product(step, slots, formula, out_t, scale) -> str:
    """ṫ_out = J₁ ṫ₁ + J₂ ṫ₂ with the numbers: each local Jacobian times its incoming tangent (as a
    column), adding up to the output's tangent."""
    if step.jacobians is None or out_t is None or out_t.values is None:
        return ""
    pieces = []
    for e in slots:
        J = step.jacobians[e.slot] if e.slot < len(step.jacobians) else None
        t = step.tangents_in[e.slot]
        if J is None or t is None or t.values is None:
            return ""
        J = np.asarray(J, dtype=np.float64)
        if J.ndim != 2 or not J.size or J.shape[0] > grids.GRID_ROWS or J.shape[1] > grids.GRID_COLS:
            return ""   # an empty tensor has no numbers; a big Jacobian would not fit the panel
        column = np.asarray(t.values, dtype=np.float64).reshape(-1, 1)
        if pieces:
            pieces.append('<span class="gv-op">+</span>')
        pieces.append(f'<span class="gv-tensor">{grids.grid(J)}</span><span class="gv-op">·</span>'
                      f'<span class="gv-tensor">{grids.grid(column, scale)}</span>')
    if not pieces:
        return ""
    result = np.asarray(out_t.values, dtype=np.float64).reshape(-1, 1)
    pieces.append(f'<span class="gv-op">=</span><span class="gv-tensor">{grids.grid(result, scale)}</span>')
    cap = ("the local Jacobian J = " + ", ".join(
        formula.render(r"\frac{\partial " + formula.out + r"}{\partial " + formula.inputs[e.slot] + "}")
        for e in slots) + ", found by running the op's own JVP on one-hot tangents, times each incoming tangent")
    return f'<div class="gv-jcap">{cap}</div><span class="gv-eq">{"".join(pieces)}</span>'


# -- the Animation -----------------------------------------------------------------------
class ForwardAnimation(Animation):
    """An Animation of forward mode: `.trace` is a ForwardTrace, `.result` what the recorded call returned."""

    legend = KEY
    seeded = True   # frame 0 shows the seed tangents, before the first op runs

    def __init__(self, *args, result=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.result = result

    @property
    def steps(self) -> list:
        return self.trace.tangents

    def fragment(self, page: bool = False) -> str:
        return with_key(super().fragment(page), self.legend)

    def data(self) -> dict:
        # a seed frame comes before the first op: the counter calls it "forward 0 of N", so frame k is
        # "forward k of N" beside the panel's "forward mode k/N"
        return {**super().data(), "zero": self.seeded}

    def stepper(self):
        """The notebook Stepper over these frames (needs anywidget): Next, Prev, Play, Reset."""
        from .forward_widget import ForwardStepper
        return ForwardStepper(self)

    def __repr__(self) -> str:
        return (f"<gradviz.Animation: {len(self.frames)} frames (forward mode: {len(self.trace.tangents)} "
                f"JVPs) over {len(self.trace.nodes)} nodes>")


def animation_of(trace: ForwardTrace, result=None, interval_ms: int = 1200,
                 title: str = "gradviz: forward mode, step by step", **draw_options) -> ForwardAnimation:
    """The player of a recorded ForwardTrace (also one reloaded from JSON)."""
    svg, owners, titles = layout(separate_orders(trace), draw_options)
    frames = TangentFrames(trace).build()
    remap(frames, owners)
    frames = fold_runs(frames, owners, titles, trace)
    return ForwardAnimation(trace, frames, svg, interval_ms, title, draw_options, result=result)


class ForwardRecording:
    """What `record_forward()` yields: after the block, `.trace` and `.animation()` (a record of forward
    mode run in a block, not a tracing.Recording, which drives a backward)."""

    def __init__(self, recorder: ForwardRecorder, names: dict):
        self.recorder = recorder
        self.names = names
        self.local_names: dict = {}
        self.trace: ForwardTrace | None = None

    def animation(self, outputs=None, result=None, **options) -> ForwardAnimation:
        """The player of what the block recorded; outputs: {name: tensor} to draw as results (default:
        every tensor no recorded op consumed)."""
        trace = self.trace if outputs is None else self.recorder.trace(list(outputs.items()), self.names,
                                                                       self.local_names)
        return animation_of(trace, result, **options)


@contextmanager
def record_forward(names: dict | None = None, jacobians: bool = True):
    """Record forward-mode code run in the block (jvp, hvp, dual tensors).

    names: {name: tensor}: the input whose primal or tangent is that tensor is drawn with that name.

    Example::

        with gradviz.record_forward({"x": v}) as rec:
            gradviz.autograd.functional.jvp(f, x, v)
        rec.animation().save("jvp.html")
    """
    recorder = ForwardRecorder(jacobians=jacobians)
    named = list((names or {}).items())
    recording = ForwardRecording(recorder, named)
    with recorder:
        yield recording
    recording.trace = recorder.trace((), named)


def _flatten(obj) -> list:
    if isinstance(obj, (tuple, list)):
        return [leaf for item in obj for leaf in _flatten(item)]
    if isinstance(obj, dict):
        return [leaf for item in obj.values() for leaf in _flatten(item)]
    return [obj] if hasattr(obj, "shape") else []


def _parameter_names(func, count: int) -> list:
    try:
        params = [p.name for p in inspect.signature(func).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return params[:count] + [f"primal{k}" for k in range(len(params), count)]


@contextmanager
def locals_of(func):
    """Yields a dict that, after the block, maps the forward_ad key of each tensor `func` held in a local
    variable when it returned to that variable's name (its first name, in the order they were assigned),
    then of each tensor a global or closure variable of `func` alone holds (the W of `W @ x`): the
    learner's names for the intermediate tensors and the constants."""
    code = getattr(func, "__code__", None)
    found: dict = {}
    previous = sys.getprofile()

    def profile(frame, event, arg):
        if event == "return" and frame.f_code is code and not found:
            for name, value in frame.f_locals.items():
                if isinstance(value, Tensor):
                    found.setdefault(_key(value), name)
            for name, value in names_in(frame, lambda v: isinstance(v, Tensor)).items():
                found.setdefault(_key(value), name)
        if previous is not None:
            previous(frame, event, arg)

    if code is not None:
        sys.setprofile(profile)
    try:
        yield found
    finally:
        if code is not None:
            sys.setprofile(previous)


def animate_hvp(func, inputs, v, *, names=None, interval_ms: int = 1200,
                title: str = "gradviz: a Hessian-vector product, forward over reverse",
                **draw_options) -> ForwardAnimation:
    """`autograd.functional.hvp(func, inputs, v)` animated end to end: the tangent v pushed forward through
    func's ops and then through the ops of its gradient (the backward, run with create_graph=True, drawn
    in a box of its own), so the tangent of the gradient, `grad`, is H v. `.result` is what hvp returns,
    (func(inputs), H v)."""
    primals = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    labels = list(names) if names is not None else _parameter_names(func, len(primals))
    recorder = ForwardRecorder()
    with recorder, locals_of(func) as local_names:
        result = hvp(func, inputs, v)
    # what no op consumed: func's output, and the gradient the backward built, whose tangent is H v
    trace = recorder.trace((), list(zip(labels, primals)), local_names, end_names=("out", "grad"))
    return animation_of(trace, result, interval_ms, title, **draw_options)


def animate_jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False, names=None,
                jacobians: bool = True, interval_ms: int = 1200, title: str = "gradviz: forward mode, step by step",
                **draw_options) -> ForwardAnimation:
    """`torch.func.jvp(func, primals, tangents)` run in forward mode and animated op by op.

    `.result` is exactly what `gradviz.func.jvp` returns, `(output, jvp_out)` (and `aux` with has_aux,
    whose tensors are not drawn as results). The inputs are drawn
    with `func`'s parameter names (or `names`, one per primal); the frames show the tangent flowing
    forward along the edges, each op's value and the JVP it applied. Other keyword arguments are
    drawing options of `gradviz.draw`."""
    returned: list = []

    def traced(*args):
        out = func(*args)
        returned.append(out)
        return out

    recorder = ForwardRecorder(jacobians=jacobians)
    with recorder, locals_of(func) as local_names:
        result = jvp(traced, primals, tangents, strict=strict, has_aux=has_aux)
    count = len(primals)
    labels = list(names) if names is not None else _parameter_names(func, count)
    leaf_names = [(str(n), t) for t, n in zip(tangents, labels) if isinstance(t, Tensor)]
    drawn = returned[0][0] if returned and has_aux else (returned[0] if returned else ())
    outs = [t for t in _flatten(drawn) if isinstance(t, Tensor)]
    out_names = ["out"] if len(outs) == 1 else [f"out{k}" for k in range(len(outs))]
    trace = recorder.trace(list(zip(out_names, outs)), leaf_names, local_names)
    return animation_of(trace, result, interval_ms, title, **draw_options)
