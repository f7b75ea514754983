"""The step panel: what one forward op or one backward step does, in words and math.

A backward step says, in one plain sentence, which chain-rule step runs; then the
gradient received (∂L/∂out, and the sum it came from when several consumers
contributed), the VJP sent along each input edge with its formula and values, any
sum that undoes broadcasting, the node's local Jacobian (from one-hot VJPs), what
AccumulateGrad wrote into a leaf's .grad, and the hooks that fired, with the gradient
before and after each.

Everything comes from the Trace. Formulas are the op records' LaTeX with this node's
own names and constants put in (`c = 2a`, `b = a + a`), typeset as MathML; tensors
are grids coloured on one scale per step.
"""
from __future__ import annotations

import html

import numpy as np

from ..formatting import preview as preview_text
from ..formatting import shape
from ..previews import Preview
from ..render import latex
from ..render.formula import Formula
from . import grids, jacobian
from .mathtext import esc, subscript


# -- names ---------------------------------------------------------------------------
def node_label(graph, node_id: str) -> str:
    """How the panel names a node, escaped: a leaf's name; an op's PyTorch name with the symbol of
    what it made (MulBackward0 (y₂)), so two nodes of one kind read apart."""
    node = graph.nodes[node_id]
    if node.kind == "accumulate":
        leaf = graph.leaf_of(node_id)
        if leaf is not None:
            return tensor_label(leaf)
    if node.kind in ("leaf", "output", "saved"):
        return tensor_label(node)
    made = ", ".join(n for n in node.out_names if n)
    return f"{esc(node.name)} ({esc(made)})" if made else esc(node.name)


def tensor_label(node) -> str:
    return esc(node.name) if node.name else f"leaf {esc(node.id)}" if node.kind == "leaf" else esc(node.id)


def grad_name(node) -> str:
    """'a.grad' for a named tensor, 'n0.grad' otherwise (escaped)."""
    return f"{esc(node.name) if node.name else esc(node.id)}.grad"


def _values(p, scale: float | None = None) -> str:
    return grids.tensor(p, scale)


def _where(formula, slot: int) -> str:
    """The helpers a VJP defines (ĝ = ḡ ⊙ w), after its values: read before them, the = that follows
    would seem to give ĝ those values."""
    defined = formula.where(slot)
    return f'<div class="gv-where">where {defined}</div>' if defined else ""


def _sum_line(parts: list, total, scale: float | None = None) -> str:
    """The terms drawn as tensors added together, and their total."""
    return grids.equation(parts, total, scale)


def _sum_previews(previews: list):
    """A Preview of the elementwise sum of Previews, when their values are known."""
    if not previews or any(p is None or p.values is None for p in previews):
        return None
    try:
        total = sum((np.asarray(p.values, dtype=np.float64) for p in previews[1:]),
                    np.asarray(previews[0].values, dtype=np.float64))
    except ValueError:
        return None
    return Preview(tuple(total.shape), previews[0].dtype, previews[0].device, values=total)


def _grouped(builder, node_id: str) -> dict:
    """Contributions received so far by `node_id`, per output number."""
    groups: dict = {}
    for edge, grad in builder.received.get(node_id, ()):
        groups.setdefault(builder.graph.output_nr(edge), []).append((edge, grad))
    return groups


# -- forward -------------------------------------------------------------------------
def forward(builder, node_id: str, k: int, count: int) -> tuple:
    graph = builder.graph
    node = graph.nodes[node_id]
    inputs = {}
    for e in graph.into.get(node_id, ()):
        if e.slot < 0:
            continue
        src = graph.nodes[e.src]
        inputs[e.slot] = (node_label(graph, e.src) if src.kind in ("accumulate", "leaf")
                          else f"the output of {node_label(graph, e.src)}")
    # a tensor that needs no grad has no edge, but the formula reads it (the x of t = x w): it is named too
    consts = {k for k, _ in node.constants}
    for slot, name in enumerate(node.in_names):
        if name and slot not in inputs and str(slot) not in consts:
            inputs[slot] = esc(name)
    ins = _join([inputs[slot] for slot in sorted(inputs)]) if inputs else "its inputs"
    # a node a create_graph backward built is not made by the forward pass: its title says which pass,
    # and k of count number the steps of that pass (the counter reads them so, player.js)
    title = f"{_pass_of(node.order)} {k + 1}/{count} · {esc(node.name)}"
    value = f'<div class="gv-row"><span class="gv-k">gives</span> {_values(node.value)}</div>' \
        if node.value is not None else ""
    said = graph.formula(node)
    formula = said.forward()
    text = (f'<div class="gv-step gv-forward"><div class="gv-head"><b>{esc(node.name)}</b> {formula}</div>'
            f'<p class="gv-say">{_made_by(node.order, capital=True)} computes {formula} from {ins}; autograd '
            f"records the node {esc(node.name)} so that backward can later run its vector-Jacobian product.</p>"
            f"{value}</div>")
    value_txt = f" = {preview_text(node.value)}" if node.value is not None else ""
    made = "forward" if node.order == 0 else f"built by {_made_by(node.order)}"
    return title, text, f"{made}: {node.name}  {said.forward_text()}{value_txt}"   # what the panel says


def _pass_of(order: int) -> str:
    """The pass a step title names for a node of this derivative order: "forward", or "first
    backward (create_graph)" for a node the first backward built (never starting with "backward",
    the word of the backward's own steps)."""
    if order == 0:
        return "forward"
    return {1: "first", 2: "second", 3: "third"}.get(order, f"{order}th") + " backward (create_graph)"


def _made_by(order: int, capital: bool = False) -> str:
    """Which pass built a node of this derivative order: the forward for order 0; a node of order k ≥ 1
    was built by the k-th backward, run with create_graph=True (the Recorder's rule)."""
    if order == 0:
        said = "the forward pass"
    else:
        nth = {1: "first", 2: "second", 3: "third"}.get(order)
        said = (f"the {nth} backward" if nth else f"backward number {order}") + " (create_graph=True)"
    return said[0].upper() + said[1:] if capital else said


def _columns(start: int, stop: int) -> str:
    """The heading of a block of Jacobian columns [start, stop): "column 8" for one."""
    return f"column {start}" if stop - start == 1 else f"columns {start}–{stop - 1}"


def _join(words: list) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


# -- backward ------------------------------------------------------------------------
def backward(builder, step, total: int | None) -> tuple:
    """(title, panel HTML, a plain-text caption) for one backward step."""
    node = builder.graph.nodes[step.node]
    count = f"/{total}" if total else ""
    title = f"backward {step.index + 1}{count} · {esc(node.name) if node.kind != 'accumulate' else 'AccumulateGrad'}"
    if node.kind == "accumulate":
        body = _accumulate(builder, step, node)
    else:
        body = _op(builder, step, node)
    caption = "; ".join(_caption_lines(builder, step, node))
    if step.hooks:
        caption += "; hooks: " + ", ".join(h.name for h in step.hooks)
        late = tuple(h for h in step.hooks if node.kind == "accumulate" or h.output_nr is None)
        if late:   # a tensor's hooks are shown where they ran, on what the node received (_received)
            body += _hooks(late)
    return title, f'<div class="gv-step gv-backward">{body}</div>', caption


def _hooks(hooks) -> str:
    """Each hook that fired, with the gradient before it and what it returned."""
    scale = grids.scale_of(*[p for h in hooks for p in (h.before, h.after)])
    rows = []
    for h in hooks:
        before = _values(h.before, scale) if h.before is not None else "—"
        if h.after is None:
            after = '<span class="gv-note">returned None: the gradient goes on unchanged</span>'
        else:
            after = f"returned {_values(h.after, scale)}, which replaces it"
        rows.append(f'<div class="gv-row gv-hook"><span class="gv-k">hook</span> <code>{esc(h.name)}</code> '
                    f"got {before} and {after}</div>")
    return "".join(rows)


def _caption_lines(builder, step, node) -> list:
    """The step's results as plain text (GIF frames, alt text): what flowed and what was written."""
    graph = builder.graph
    if node.kind == "accumulate":
        leaf = graph.leaf_of(node.id)
        lines = []
        for acc in step.accumulations:
            who = graph.nodes[acc.node]
            lines.append(f"{who.name or who.id}.grad = {preview_text(acc.total)}")
        return lines or [f"AccumulateGrad for {leaf.name if leaf is not None else node.id}: nothing written"]
    said = graph.formula(node)          # the panel's formulas, in Unicode: the caption says what it says
    received = ", ".join(f"{_received_name(said, nr, len(step.grad_in))} = {preview_text(g)}"
                         for nr, g in enumerate(step.grad_in)) or "—"
    lines = [f"{node.name}: received {received}"]
    for eid, grad, axes in step.flows:
        edge = graph.edges[eid]
        target = html.unescape(node_label(graph, edge.src))
        where = said.where_text(edge.slot)
        lines.append(f"→ {target}: {said.vjp_text(edge.slot, tuple(axes))} = {preview_text(grad)}"
                     + (f", where {where}" if where else ""))
    return lines


def _received_name(formula: Formula, nr: int, outputs: int) -> str:
    """"ḡ = ∂L/∂y₂" (Unicode): the gradient a node received, named for the tensor it is the gradient of."""
    symbol = formula.output_text(nr) if outputs > 1 else formula.out_text
    return latex.unicode(_gbar(formula, nr, outputs) + r" = \partial L/\partial " + latex.name(0), (symbol,))


def _gbar(formula: Formula, nr: int, outputs: int) -> str:
    """The LaTeX of ḡ for output `nr`, as the node's VJP formulas write it: ḡ for a node of one
    output; ḡ_Q, ḡ_R where the record names its outputs (qr's VJP reads them so, the output's symbol
    the name placeholder 0); ḡ₁, ḡ₂, … for a list of outputs (split's)."""
    if outputs == 1:
        return r"\bar{g}"
    return r"\bar{g}_{" + (latex.name(0) if formula.node.out_symbols else str(nr + 1)) + "}"


def _received(builder, step, node, formula: Formula, scale: float) -> str:
    """The ḡ line: ḡ = ∂L/∂c = values (ḡ is the name the VJP formulas use for what this node
    received), with the sum it came from when several consumers sent gradient."""
    rows = []
    groups = _grouped(builder, node.id)
    for nr, grad in enumerate(step.grad_in):
        symbol = formula.output_text(nr) if len(step.grad_in) > 1 else formula.out_text
        partial = r"\frac{\partial L}{\partial " + latex.name(0) + "}"
        lhs = latex.mathml(_gbar(formula, nr, len(step.grad_in)) + " = " + partial, (symbol,))
        parts = [g for _, g in groups.get(nr, ())]
        hooked = [h for h in step.hooks if h.output_nr == nr and node.kind != "accumulate"]
        if hooked and hooked[0].before is not None:
            # in the order it ran: what arrived, what each hook got and returned, and the result,
            # the ḡ the VJPs below use
            arrived = latex.mathml(partial, (symbol,))
            rows.append(f'<div class="gv-row"><span class="gv-k">received</span> {arrived} = '
                        f"{_values(hooked[0].before, scale)}</div>" + _hooks(hooked))
            rows.append(f'<div class="gv-row"><span class="gv-k">after the hooks</span> {lhs} = '
                        f"{_values(grad, scale)}</div>")
        elif len(parts) > 1:
            senders = ", ".join(node_label(builder.graph, e.dst) for e, _ in groups[nr])
            rows.append(f'<div class="gv-row"><span class="gv-k">received</span> {lhs} = '
                        f"{_sum_line(parts, grad, scale)}"
                        f' <span class="gv-note">one term from each consumer ({senders}): gradients add up where '
                        "a tensor is used more than once</span></div>")
        else:
            rows.append(f'<div class="gv-row"><span class="gv-k">received</span> {lhs} = '
                        f"{_values(grad, scale)}</div>")
    return "".join(rows)


def _start(builder, step, node, formula: Formula) -> str:
    """What the first step says about the seed: the implicit 1 of a scalar, or the gradient passed."""
    graph = builder.graph
    if step.index != 0 or not any(graph.nodes[e.dst].kind == "output" for e in graph.out_of.get(node.id, ())):
        return ""
    dl_out = formula.partial()
    if builder.trace.implicit_seed:
        return (f"Backward starts here: backward() was called with no gradient on a scalar, so it seeds "
                f"{dl_out} = 1 (the loss changes one-for-one with itself); ")
    return (f"Backward starts here with the gradient you passed in (backward()'s gradient, or the grad outputs "
            f"of autograd.grad()) as {dl_out}; ")


def _op(builder, step, node) -> str:
    graph = builder.graph
    formula = graph.formula(node)
    flows = {graph.edges[eid].slot: (eid, grad, axes) for eid, grad, axes in step.flows}
    targets = [node_label(graph, graph.edges[eid].src) for eid, _, _ in step.flows]
    scale = grids.scale_of(*step.grad_in, *(grad for _, grad, _ in step.flows))
    dl_out = formula.partial()
    start = _start(builder, step, node, formula)
    if flows:
        # the chain rule in this node's own symbols: ∂L/∂x = ∂L/∂y · ∂y/∂x for each input x that needs it,
        # a term for each output that received a gradient at a node of several (∂L/∂x = ḡ_Q · ∂Q/∂x + …)
        outputs = len(step.grad_in)
        received = [nr for nr, g in enumerate(step.grad_in) if g is not None] if outputs > 1 else [0]
        names = tuple(formula.names) + tuple(formula.output_text(nr) for nr in received)
        outs = {nr: latex.name(len(formula.names) + k) for k, nr in enumerate(received)} if outputs > 1 else \
            {0: formula.out}

        def gbar(nr):   # _gbar's LaTeX with this output's own placeholder
            return _gbar(formula, nr, outputs).replace(latex.name(0), outs[nr])
        chains = []
        for slot in sorted(flows):
            x = formula.inputs[slot] if slot < len(formula.inputs) else "x"
            terms = " + ".join(gbar(nr) + r" \cdot \frac{\partial " + outs[nr] + r"}{\partial " + x + "}"
                               for nr in received)
            chains.append(latex.mathml(r"\frac{\partial L}{\partial " + x + "} = " + terms, names))
        lead = f"{start}by the chain rule," if start else "By the chain rule,"
        got = ", ".join(latex.mathml(gbar(nr) + r" = \frac{\partial L}{\partial " + outs[nr] + "}", names)
                        for nr in received)
        several = "s" if len(received) > 1 else ""
        say = (f"{lead} {esc(node.name)} multiplies the gradient{several} it received, {got}, by its local "
               f"derivative{several} to send {_join(chains)} back to {_join(targets)}.")
        if node.formula.endswith("(user code)"):   # a custom autograd.Function: its derivative is the learner's code
            cls = node.name.removesuffix("Backward")
            say = (f"{start}{esc(node.name)} runs the backward you wrote: it calls "
                   f"<code>{esc(cls)}.backward(ctx, ḡ)</code> with the gradient it received, {got}, and sends "
                   f"what that returns, {_join(chains)}, back to {_join(targets)}.")
    else:
        say = (f"{start}{esc(node.name)} received {dl_out}, but none of its inputs requires grad, "
               "so no gradient flows further along this path.")
    parts = [f'<div class="gv-head"><b>{esc(node.name)}</b> {formula.forward()}</div>',
             f'<p class="gv-say">{say}</p>', _received(builder, step, node, formula, scale)]
    rows = []
    for slot in sorted(flows):
        eid, grad, axes = flows[slot]
        edge = graph.edges[eid]
        target = node_label(graph, edge.src)
        row = (f'<tr data-edge="{esc(eid)}"><td class="gv-to">→ {target}</td>'
               f"<td>{formula.vjp(slot, tuple(axes))} = {_values(grad, scale)}{_where(formula, slot)}</td></tr>")
        if axes:
            axes_txt = ", ".join(str(a) for a in axes)
            many = "axes" if len(axes) > 1 else "axis"
            sigma = latex.mathml(r"\sum_{\text{" + many + " " + axes_txt + "}}")
            row += (f'<tr class="gv-broadcast"><td></td><td>{sigma}'
                    f" {esc(formula.input_text(slot))} was broadcast in the forward pass, so its gradient is "
                    f"summed over {many} {axes_txt} to return to its shape {esc(shape(grad.shape))}.</td></tr>")
        shared = [s for s in sorted(flows) if graph.edges[flows[s][0]].src == edge.src
                  and graph.edges[flows[s][0]].output_nr == edge.output_nr]
        if len(shared) > 1 and slot == shared[-1]:
            names = _join([esc(formula.input_text(s)) for s in shared])
            row += (f'<tr class="gv-shared"><td></td><td>{target} is used {len(shared)} times by this op '
                    f"(as {names}), so one gradient flows back along each use and they add up.</td></tr>")
        running = _running(builder, edge, grad) if slot == shared[-1] else ""
        if running:
            row += f'<tr class="gv-running"><td></td><td>{running}</td></tr>'
        rows.append(row)
    if rows:
        parts.append('<table class="gv-vjps">' + "".join(rows) + "</table>")
    if builder.jacobians:
        parts.append(_jacobians(step, node, formula))
    return "".join(parts)


def _running(builder, edge, grad) -> str:
    """Where the receiver already got gradient from another consumer: the running sum so far."""
    graph = builder.graph
    receiver = edge.src
    nr = graph.output_nr(edge)
    got = [(e, g) for e, g in builder.received.get(receiver, ()) if graph.output_nr(e) == nr]
    expected = [e for e in graph.gradient_edges_out(receiver) if graph.output_nr(e) == nr]
    if len(expected) < 2:
        return ""
    # the tensor by the symbol the rest of the panel calls it (∂L/∂h), else by the node that made it
    symbol = graph.symbol(receiver, nr)
    name = f"∂L/∂{esc(symbol)}" if symbol else f"∂L/∂(output of {esc(graph.nodes[receiver].name)})"
    parts = [g for _, g in got]
    total = _sum_previews(parts)
    done = len(got) >= len(expected)
    shown = _sum_line(parts, total) if total is not None and len(parts) > 1 else _values(parts[-1])
    state = ("all its consumers have now sent gradient, so it can run next" if done
             else f"{len(got)} of {len(expected)} consumers so far; it runs once all have sent gradient")
    # the state on a line of its own: beside a tall grid it would wrap around the grid's middle
    return f'<span class="gv-k">running sum</span> {name} ← {shown} <div class="gv-note">({state})</div>'


def _jacobians(step, node, formula: Formula) -> str:
    """The local Jacobians recorded with the step (the engine ran the node's VJP on one-hot seeds).
    Row k is the VJP of the one-hot e_k; the rows this step's gradient weighs are outlined."""
    if step.jacobians is None:
        return ""
    g = step.grad_in[0] if len(step.grad_in) == 1 else None
    weighed = ()
    if g is not None and g.values is not None:
        nonzero = np.flatnonzero(np.asarray(g.values, dtype=np.float64).ravel())
        if 0 < nonzero.size < g.values.size:
            weighed = tuple(int(k) for k in nonzero)
    shown = []
    for slot, J in enumerate(step.jacobians):
        if J is None:
            continue
        J = np.asarray(J, dtype=np.float64)
        if J.ndim == 1:
            J = J[None, :]
        wrt = formula.inputs[slot] if slot < len(formula.inputs) else "x"
        cap = latex.mathml(r"\frac{\partial " + formula.out + r"}{\partial " + wrt + "}", tuple(formula.names))
        note = "; the outlined rows are the ones this step's gradient weighs" if weighed else ""
        shown.append(f'<div class="gv-jcap">{cap} ({J.shape[0]}×{J.shape[1]}): row k is the VJP of the '
                     f"one-hot {latex.mathml('e_k')}{note}</div>"
                     + _column_blocks(J, weighed, numbers=J.size <= jacobian.TEXT_CELLS))
    if not shown:
        return ""
    cells = sum(np.asarray(J).size for J in step.jacobians if J is not None)
    opened = " open" if cells <= 32 else ""
    return (f'<details class="gv-jacs"{opened}><summary>local Jacobian, materialized by running '
            f"{esc(node.name)}'s own VJP on one-hot vectors</summary>{''.join(shown)}</details>")


def _column_blocks(J: np.ndarray, weighed: tuple, numbers: bool) -> str:
    """A Jacobian wider than a few columns as labelled blocks of columns, coloured on the one scale
    of the whole matrix; the blocks sit side by side and wrap, so a 1×32 row fits any panel."""
    longest = max((len(grids.number(v)) for v in J.ravel()), default=1) if numbers else 1
    width = grids.GRID_COLS if longest <= 4 else grids.GRID_COLS // 2   # about 40 characters a block
    if J.shape[1] <= width:
        return f'<span class="gv-tensor">{grids.grid(J, highlight_rows=weighed, numbers=numbers)}</span>'
    scale = grids.scale_of(J)
    blocks = []
    for start in range(0, J.shape[1], width):
        stop = min(start + width, J.shape[1])
        block = grids.grid(J[:, start:stop], scale, highlight_rows=weighed, numbers=numbers)
        blocks.append(f'<div class="gv-jblock"><div class="gv-jcols">{_columns(start, stop)}</div>'
                      f'<span class="gv-tensor">{block}</span></div>')
    return f'<div class="gv-jblocks">{"".join(blocks)}</div>'


def _accumulate(builder, step, node) -> str:
    graph = builder.graph
    leaf = graph.leaf_of(node.id)
    label = tensor_label(leaf) if leaf is not None else esc(node.id)
    gname = grad_name(leaf) if leaf is not None else f"{esc(node.id)}.grad"
    acc = next((a for a in step.accumulations if leaf is not None and a.node == leaf.id), None)
    groups = _grouped(builder, node.id).get(0, [])
    contributions = [g for _, g in groups]
    leaf_name = leaf.name if leaf is not None and leaf.name else "x"
    head = latex.mathml(latex.name(0) + r" \text{ += } \bar{g}", (f"{leaf_name}.grad",))
    if acc is None:
        say = (f"AccumulateGrad for {label} received its gradient but did not write it "
               "(backward(inputs=...) left this leaf out).")
        return f'<div class="gv-head"><b>AccumulateGrad</b> {head}</div><p class="gv-say">{say}</p>'
    dl = latex.mathml(r"\frac{\partial L}{\partial " + latex.name(0) + "}", (leaf_name,))
    if acc.before is not None:
        say = (f"AccumulateGrad ends this path: it adds {dl}, the gradient that reached "
               f"{label}, to the {gname} that was already there (from an earlier backward), because gradients "
               "accumulate until you zero them.")
    else:
        say = (f"AccumulateGrad ends this path: {gname} was None, so it writes {dl}, the sum over every path "
               f"from the loss to {label}, into {gname}, which you can read now.")
    terms = ([acc.before] if acc.before is not None else []) + (contributions if len(contributions) > 1
                                                                else [acc.contribution])
    scale = grids.scale_of(*terms, acc.total)
    if len(terms) > 1:
        line = f"{gname} = {_sum_line(terms, acc.total, scale)}"
    else:
        line = f"{gname} = {grids.result(acc.total, scale)}"
    note = ""
    if len(contributions) > 1:
        senders = ", ".join(node_label(graph, e.dst) for e, _ in groups)
        note = (f'<div class="gv-row gv-note">{label} is used {len(contributions)} times ({senders}); '
                "the engine added those gradients before this step, one term per edge.</div>")
    return (f'<div class="gv-head"><b>AccumulateGrad</b> {head}</div>'
            f'<p class="gv-say">{say}</p>'
            f'<div class="gv-row gv-write"><span class="gv-k">writes</span> {line}</div>{note}')
