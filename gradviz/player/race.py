"""Forward versus reverse mode, side by side: the full Jacobian of a small function built both ways.

`forward_vs_reverse(f, x)` draws the graph of `f` once and steps through n forward passes (one
JVP per input element, each filling a column of J) and then m backward passes (one VJP per
output element, each filling a row). Every frame shows that pass on the graph (the tangent or
the gradient on each edge) and, in the panel, both Jacobians side by side with the passes
counted, so the cost rule is seen: forward mode pays per input, reverse mode per output.
Forward passes are recorded by the ForwardRecorder, backward passes by the Recorder, on the one
layout of the forward graph.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..forward_trace import ForwardRecorder, ForwardTrace
from ..origins import record
from .forward import ForwardAnimation, locals_of, dot
from .frames import Frame, width_level
from .grids import level
from .html import layout, remap
from .jacobian import element_labels
from .mathtext import esc, number, short, subscript
from ..tensor import Tensor
from ..func import jvp
from ..creation import zeros_like

LIMIT = 16   # elements of x and of f(x): a pass per element, and a matrix that fits the panel
KEY = ("forward passes carry a tangent, backward passes a gradient · arrow thickness: its size, ×10 per step",
       "In a forward pass the tangent runs the way the arrows point, from the input to the output; in a backward "
       "pass every arrowhead turns round and the gradient runs from the output to the input. An edge is drawn one "
       "step thicker for every factor of 10 in the largest |entry| it carries.")


class JacobianRace(ForwardAnimation):
    """The animation of forward_vs_reverse: `.matrix` is J (m×n); `.columns` J as forward mode built it,
    `.rows` as reverse mode did (both equal `.matrix`)."""

    legend = KEY
    seeded = False   # frame 0 is the first forward pass

    def __init__(self, *args, columns=None, rows=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.columns = columns
        self.rows = rows
        self.matrix = rows

    def __repr__(self) -> str:
        m, n = self.matrix.shape
        return (f"<gradviz.JacobianRace: J is {m}×{n}: {n} forward passes (columns) against {m} backward passes "
                f"(rows), {len(self.frames)} frames>")


def _partial(J: np.ndarray, filled: np.ndarray, rows: list, cols: list, col: int = -1, row: int = -1) -> str:
    """J with only the `filled` cells drawn (the rest a dot); the column or row of this pass outlined."""
    scale = float(np.abs(J[filled]).max()) if filled.any() else 0.0
    out = ['<table class="gv-jac gv-race">', "<tr><th></th>" + "".join(f"<th>{esc(c)}</th>" for c in cols) + "</tr>"]
    for i, values in enumerate(J):
        cells = []
        for j, v in enumerate(values):
            now = " gv-now-cell" if j == col or i == row else ""
            if filled[i, j]:
                cells.append(f'<td class="gv-j{level(v, scale)}{now}">{number(v)}</td>')
            else:
                cells.append('<td class="gv-unfilled">·</td>')
        out.append(f"<tr><th>{esc(rows[i])}</th>{''.join(cells)}</tr>")
    out.append("</table>")
    return "".join(out)


def _panel(J, kind: str, k: int, n: int, m: int, rows: list, cols: list) -> str:
    done_f = n if kind == "reverse" else k + 1
    done_r = k + 1 if kind == "reverse" else 0
    filled_f = np.zeros(J.shape, bool)
    filled_f[:, :done_f] = True
    filled_r = np.zeros(J.shape, bool)
    filled_r[:done_r, :] = True
    left = _partial(J, filled_f, rows, cols, col=k if kind == "forward" else -1)
    right = _partial(J, filled_r, rows, cols, row=k if kind == "reverse" else -1)
    if kind == "forward":
        say = (f"Forward pass {k + 1} of {n}: the tangent is the one-hot e{subscript(k)} on input {esc(cols[k])}; "
               f"pushed through every op, it comes out as column {k} of J, the derivative of every output "
               f"along that one input.")
    else:
        say = (f"Backward pass {k + 1} of {m}: the seed is the one-hot e{subscript(k)} on output {esc(rows[k])}; "
               f"pulled back through every op, it lands in x.grad as row {k} of J, the gradient of that one "
               f"output with respect to every input.")
    rule = (f"f has n = {n} input element{'s' if n != 1 else ''} and m = {m} output element{'s' if m != 1 else ''}: "
            f"forward mode needs n = {n} passes, reverse mode m = {m}. ")
    rule += ("Here reverse mode is cheaper: few outputs (a loss has one), many inputs." if m < n else
             "Here forward mode is cheaper: few inputs, many outputs." if n < m else
             "Here both need the same number of passes.")
    return (f'<div class="gv-step gv-race"><p class="gv-say">{say}</p>'
            '<div class="gv-race-pair">'
            f'<div><div class="gv-k">forward mode · {done_f} of {n} passes · columns</div>{left}</div>'
            f'<div><div class="gv-k">reverse mode · {done_r} of {m} passes · rows</div>{right}</div></div>'
            f'<p class="gv-say">{rule}</p></div>')


def _edge_map(fw: ForwardTrace, bw) -> dict:
    """Backward trace edge id -> forward graph edge id. Both traces hold the ops of one run of f in the
    order they ran; a leaf's AccumulateGrad stands for the leaf, and the outputs match in order."""
    fw_ops = [s.node for s in fw.tangents]
    bw_ops = [n.id for n in bw.nodes if n.kind == "op"]
    if len(fw_ops) != len(bw_ops):
        return {}
    nodes = dict(zip(bw_ops, fw_ops))
    fw_leaves = [n.id for n in fw.nodes if n.kind == "leaf"]
    bw_accs = [n.id for n in bw.nodes if n.kind == "accumulate"]
    nodes.update(zip(bw_accs, fw_leaves))
    nodes.update(zip(bw.roots, fw.roots))
    by_ends = {(e.src, e.dst, e.slot): e.id for e in fw.edges}
    return {e.id: by_ends[key] for e in bw.edges
            if (key := (nodes.get(e.src), nodes.get(e.dst), e.slot)) in by_ends}


def forward_vs_reverse(f: Callable, x, names: tuple = ("x", "y"), interval_ms: int = 1600,
                       title: str = "gradviz: forward versus reverse mode", **draw_options) -> JacobianRace:
    """The Jacobian of a small function `f` at `x` (one tensor) built both ways on one graph: n forward
    passes, one per input element, each filling a column, against m backward passes, one per output
    element, each filling a row. names: what to call the input and the output."""
    if not isinstance(x, Tensor):
        raise TypeError(f"forward_vs_reverse(): argument 'x' must be Tensor, not {type(x).__name__}")
    x = x.detach()
    in_name, out_name = names
    n = x.numel()
    columns, passes = [], []
    for j in range(n):
        e = zeros_like(x)
        e._data.reshape(-1)[j] = 1
        returned = []
        recorder = ForwardRecorder(jacobians=False)
        with recorder, locals_of(f) as local_names:
            _, col = jvp(lambda t: returned.append(f(t)) or returned[-1], (x,), (e,))
        if not isinstance(returned[0], Tensor):
            raise ValueError("forward_vs_reverse: f(x) must return one Tensor computed from x")
        m = returned[0].numel()
        if n > LIMIT or m > LIMIT:
            raise ValueError(f"forward_vs_reverse draws small Jacobians: x has {n} elements and f(x) has {m}; "
                             f"at most {LIMIT} each")
        columns.append(np.asarray(col.numpy(), dtype=np.float64).reshape(-1))
        passes.append(recorder.trace([(out_name, returned[0])], [(in_name, e)], local_names))
    graph = passes[0]
    leaf = x.clone().requires_grad_()
    y = f(leaf)
    m = y.numel()
    rows, backward = [], []
    for i in range(m):
        seed = zeros_like(y.detach())
        seed._data.reshape(-1)[i] = 1
        bw = record(y, gradient=seed, names={in_name: leaf, out_name: y}).run()
        written = [a for s in bw.steps for a in s.accumulations]
        rows.append(np.asarray(written[-1].total.values, dtype=np.float64).reshape(-1) if written else np.zeros(n))
        backward.append(bw)
    J_rows, J_cols = np.stack(rows), np.stack(columns, axis=1)
    row_labels = element_labels(tuple(y.shape), out_name)
    col_labels = element_labels(tuple(x.shape), in_name)
    svg, owners, _ = layout(graph, draw_options)
    frames = []
    edges = [e.id for e in graph.edges]
    nodes = [nd.id for nd in graph.nodes]
    for j, trace in enumerate(passes):
        labels, widths = {}, {}
        for step in trace.tangents:
            for e in graph.edges:
                if e.dst == step.node and 0 <= e.slot < len(step.tangents_in) and step.tangents_in[e.slot] is not None:
                    labels[e.id] = short(step.tangents_in[e.slot])
                    widths[e.id] = width_level(step.tangents_in[e.slot])
                if e.src == step.node and graph.node(e.dst).kind == "output":
                    labels[e.id] = short(step.tangents_out[e.output_nr])
                    widths[e.id] = width_level(step.tangents_out[e.output_nr])
        changes = {**dict.fromkeys(nodes, "done"), **dict.fromkeys(edges, "carrying")}
        changes.update((leaf_id, "active") for leaf_id, _ in graph.seeds)
        text = _panel(J_cols, "forward", j, n, m, row_labels, col_labels)
        caption = (f"forward pass {j + 1} of {n}: {dot(in_name)} = e{subscript(j)} gives column {j} of J = "
                   f"{', '.join(number(v) for v in J_cols[:, j])}")
        frames.append(Frame(len(frames), "forward", None, graph.seeds[0][0] if graph.seeds else None, changes, labels,
                            f"forward pass {j + 1}/{n} · column {j}", text, caption,
                            {k: v for k, v in widths.items() if v is not None}))
    for i, bw in enumerate(backward):
        emap = _edge_map(graph, bw)
        labels, widths = {}, {}
        for step in bw.steps:
            for edge_id, grad, _ in step.flows:
                if edge_id in emap:
                    labels[emap[edge_id]] = short(grad)
                    widths[emap[edge_id]] = width_level(grad)
        for root in graph.roots:
            into = [e for e in graph.edges if e.dst == root]
            if into:
                labels[into[0].id] = f"seed e{subscript(i)}"
                widths[into[0].id] = width_level(bw.steps[0].grad_in[0]) if bw.steps else None
        changes = {**dict.fromkeys(nodes, "done"), **dict.fromkeys(edges, "flowing")}
        changes.update((root, "active") for root in graph.roots)
        text = _panel(J_rows, "reverse", i, n, m, row_labels, col_labels)
        caption = (f"backward pass {i + 1} of {m}: seed e{subscript(i)} on {row_labels[i]} gives row {i} of J = "
                   f"{', '.join(number(v) for v in J_rows[i])}")
        frames.append(Frame(len(frames), "backward", i, graph.roots[0] if graph.roots else None, changes, labels,
                            f"backward pass {i + 1}/{m} · row {i}", text, caption,
                            {k: v for k, v in widths.items() if v is not None}))
    _as_changes(frames)
    remap(frames, owners)
    return JacobianRace(graph, frames, svg, interval_ms, title, draw_options, result=None, columns=J_cols,
                        rows=J_rows)


def _as_changes(frames: list) -> None:
    """Frames carry only what differs from the frame before (the player folds them in order)."""
    state: dict = {}
    widths: dict = {}
    for frame in frames:
        full, full_widths = frame.changes, frame.widths
        frame.changes = {k: v for k, v in full.items() if state.get(k) != v}
        frame.widths = {k: v for k, v in full_widths.items() if widths.get(k) != v}
        state.update(full)
        widths.update(full_widths)
