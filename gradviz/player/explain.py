"""The step panel: what one forward op or one backward step does, in words and math.

A backward step says, in one plain sentence, which chain-rule step runs; then the
gradient received (∂L/∂out, and the sum it came from when several consumers
contributed), the VJP sent along each input edge with its formula and values, any
sum that undoes broadcasting, the node's local Jacobian (from one-hot VJPs), what
AccumulateGrad wrote into a leaf's .grad, and the hooks that fired.
"""
from __future__ import annotations

import html

import numpy as np

from ..tracing import Preview
from . import jacobian, mathtext
from .mathtext import esc, math, partial


# -- names ---------------------------------------------------------------------------
def node_label(graph, node_id: str) -> str:
    """How the panel names a node, escaped: a leaf's name, an op's PyTorch name."""
    node = graph.nodes[node_id]
    if node.kind == "accumulate":
        leaf = graph.leaf_of(node_id)
        if leaf is not None:
            return tensor_label(leaf)
    if node.kind in ("leaf", "output", "saved"):
        return tensor_label(node)
    return esc(node.name)


def tensor_label(node) -> str:
    return esc(node.name) if node.name else f"leaf {esc(node.id)}" if node.kind == "leaf" else esc(node.id)


def grad_name(node) -> str:
    """'a.grad' for a named tensor, 'n0.grad' otherwise (escaped)."""
    return f"{esc(node.name) if node.name else esc(node.id)}.grad"


def _values(p) -> str:
    return f'<code class="gv-val">{esc(mathtext.preview(p))}</code>'


def _sum_line(parts: list, total) -> str:
    """'2.0 + 3.0 = 5.0': the terms' values (or shapes) and the total."""
    terms = " + ".join(esc(mathtext.preview(p)) for p in parts)
    return f'<code class="gv-val">{terms} = {esc(mathtext.preview(total))}</code>'


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
    inputs = []
    for e in graph.into.get(node_id, ()):
        if e.slot < 0:
            continue
        src = graph.nodes[e.src]
        inputs.append(node_label(graph, e.src) if src.kind in ("accumulate", "leaf")
                      else f"the output of {node_label(graph, e.src)}")
    ins = _join(inputs) if inputs else "its inputs"
    title = f"forward {k + 1}/{count} · {esc(node.name)}"
    value = f", giving {_values(node.value)}" if node.value is not None else ""
    text = (f'<div class="gv-step gv-forward"><div class="gv-head"><b>{esc(node.name)}</b> {math(node.formula)}'
            f'</div><p class="gv-say">The forward pass computes {math(node.formula)} from {ins}{value}; autograd '
            f"records the node {esc(node.name)} so that backward can later run its vector-Jacobian product.</p>"
            "<p class=\"gv-note\">What you run is what you differentiate: the graph is built as the code runs.</p>"
            "</div>")
    value_txt = f" = {mathtext.preview(node.value)}" if node.value is not None else ""
    return title, text, f"forward: {node.name}  {node.formula}{value_txt}"


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
        names = ", ".join(f"<code>{esc(h.name)}</code>" for h in step.hooks)
        body += f'<div class="gv-row gv-hooks"><span class="gv-k">hooks fired</span> {names} (a hook may replace the gradient)</div>'
    return title, f'<div class="gv-step gv-backward">{body}</div>', caption


def _caption_lines(builder, step, node) -> list:
    """The step's results as plain text (GIF frames, alt text): what flowed and what was written."""
    graph = builder.graph
    if node.kind == "accumulate":
        leaf = graph.leaf_of(node.id)
        lines = []
        for acc in step.accumulations:
            who = graph.nodes[acc.node]
            lines.append(f"{who.name or who.id}.grad = {mathtext.preview(acc.total)}")
        return lines or [f"AccumulateGrad for {leaf.name if leaf is not None else node.id}: nothing written"]
    received = ", ".join(mathtext.preview(g) for g in step.grad_in) or "—"
    lines = [f"{node.name}: received {received}"]
    for eid, grad, axes in step.flows:
        edge = graph.edges[eid]
        sym, formula = node.symbol(edge.slot), node.vjp_formula(edge.slot)
        summed = f" (Σ over axis {', '.join(map(str, axes))})" if axes else ""
        target = html.unescape(node_label(graph, edge.src))
        lines.append(f"→ {target}: grad_{sym} = {formula} = {mathtext.preview(grad)}{summed}")
    return lines


def _received(builder, step, node, symbol: str) -> str:
    """The ḡ line: ∂L/∂c = values, with the sum it came from when several consumers sent gradient."""
    rows = []
    groups = _grouped(builder, node.id)
    for nr, grad in enumerate(step.grad_in):
        sym = symbol if len(step.grad_in) == 1 else f"{symbol}{mathtext.subscript(nr)}"
        lhs = f'<math>{partial("L", sym)}<mo>=</mo><mover><mi>g</mi><mo>‾</mo></mover></math>'
        parts = [g for _, g in groups.get(nr, ())]
        if len(parts) > 1:
            senders = ", ".join(node_label(builder.graph, e.dst) for e, _ in groups[nr])
            rows.append(f'<div class="gv-row"><span class="gv-k">received</span> {lhs} = {_sum_line(parts, grad)}'
                        f' <span class="gv-note">one term from each consumer ({senders}): gradients add up where '
                        "a tensor is used more than once</span></div>")
        else:
            rows.append(f'<div class="gv-row"><span class="gv-k">received</span> {lhs} = {_values(grad)}</div>')
    return "".join(rows)


def _op(builder, step, node) -> str:
    graph = builder.graph
    out = node.out_symbol
    flows = {graph.edges[eid].slot: (eid, grad, axes) for eid, grad, axes in step.flows}
    targets = [node_label(graph, graph.edges[eid].src) for eid, _, _ in step.flows]
    dl_out = f"<math>{partial('L', out)}</math>"
    if step.index == 0 and any(graph.nodes[e.dst].kind == "output" for e in graph.out_of.get(node.id, ())):
        seed = step.grad_in[0] if step.grad_in else None
        ones = seed is not None and seed.values is not None and np.all(seed.values == 1)
        start = ("Backward starts here with the seed " + dl_out + " = 1 (the loss changes one-for-one with itself); "
                 if ones else "Backward starts here with the gradient you passed to backward() as " + dl_out + "; ")
    else:
        start = ""
    if flows:
        chain = (f"<math>{partial('L', 'x')}<mo>=</mo>{partial('L', out)}<mo>·</mo>{partial(out, 'x')}</math>")
        lead = f"{start}by the chain rule," if start else "By the chain rule,"
        say = (f"{lead} {esc(node.name)} multiplies the gradient it received, {dl_out}, by its local derivative "
               f"to send {chain} back to each input that needs it ({_join(targets)}).")
    else:
        say = (f"{start}{esc(node.name)} received {dl_out}, but none of its inputs requires grad, "
               "so no gradient flows further along this path.")
    parts = [f'<div class="gv-head"><b>{esc(node.name)}</b> {math(node.formula)}</div>',
             f'<p class="gv-say">{say}</p>', _received(builder, step, node, out)]
    rows = []
    for slot in sorted(flows):
        eid, grad, axes = flows[slot]
        edge = graph.edges[eid]
        sym, formula = node.symbol(slot), node.vjp_formula(slot)
        target = node_label(graph, edge.src)
        row = (f'<tr data-edge="{esc(eid)}"><td class="gv-to">→ {target}</td>'
               f'<td>{math(f"grad_{sym} = {formula}")} = {_values(grad)}</td></tr>')
        if axes:
            axes_txt = ", ".join(str(a) for a in axes)
            many = "axes" if len(axes) > 1 else "axis"
            row += (f'<tr class="gv-broadcast"><td></td><td><math><munder><mo>Σ</mo><mtext>{many} {axes_txt}'
                    f"</mtext></munder></math> {target} was broadcast in the forward pass, so its gradient is "
                    f"summed over {many} {axes_txt} to return to its shape {tuple(grad.shape)}.</td></tr>")
        shared = [s for s in sorted(flows) if graph.edges[flows[s][0]].src == edge.src
                  and graph.edges[flows[s][0]].output_nr == edge.output_nr]
        if len(shared) > 1 and slot == shared[-1]:
            names = _join([node.symbol(s) for s in shared])
            row += (f'<tr class="gv-shared"><td></td><td>{target} is the input {names} of this op at once, '
                    f"so it receives {_join([f'grad_{node.symbol(s)}' for s in shared])}, one term per use."
                    "</td></tr>")
        running = _running(builder, edge, grad) if slot == shared[-1] else ""
        if running:
            row += f'<tr class="gv-running"><td></td><td>{running}</td></tr>'
        rows.append(row)
    if rows:
        parts.append('<table class="gv-vjps">' + "".join(rows) + "</table>")
    if builder.jacobians:
        parts.append(_jacobians(step, node, out))
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
    who = graph.nodes[receiver]
    leaf = graph.leaf_of(receiver)
    name = grad_name(leaf) if leaf is not None else f"∂L/∂(output of {esc(who.name)})"
    parts = [g for _, g in got]
    total = _sum_previews(parts)
    done = len(got) >= len(expected)
    shown = _sum_line(parts, total) if total is not None and len(parts) > 1 else _values(parts[-1])
    state = ("all its consumers have now sent gradient, so it can run next" if done
             else f"{len(got)} of {len(expected)} consumers so far; it runs once all have sent gradient")
    return f'<span class="gv-k">running sum</span> {name} ← {shown} <span class="gv-note">({state})</span>'


def _jacobians(step, node, out: str) -> str:
    """The local Jacobians recorded with the step (the engine ran the node's VJP on one-hot seeds)."""
    if step.jacobians is None:
        return ""
    mats = [None if J is None else np.asarray(J, dtype=np.float64) for J in step.jacobians]
    shown = []
    for slot, J in enumerate(mats):
        if J is None:
            continue
        sym = node.symbol(slot)
        cap = f"{math(f'∂{out}/∂{sym}')} ({J.shape[0]}×{J.shape[1]}): row k is the VJP of the one-hot e_k"
        shown.append(jacobian.heatmap(J, caption=cap))
    if not shown:
        return ""
    cells = sum(J.size for J in mats if J is not None)
    opened = " open" if cells <= 32 else ""
    return (f'<details class="gv-jacs"{opened}><summary>local Jacobian, materialized by running '
            f"{esc(node.name)}'s own VJP on one-hot vectors</summary>{''.join(shown)}</details>")


def _accumulate(builder, step, node) -> str:
    graph = builder.graph
    leaf = graph.leaf_of(node.id)
    label = tensor_label(leaf) if leaf is not None else esc(node.id)
    gname = grad_name(leaf) if leaf is not None else f"{esc(node.id)}.grad"
    acc = next((a for a in step.accumulations if leaf is not None and a.node == leaf.id), None)
    groups = _grouped(builder, node.id).get(0, [])
    contributions = [g for _, g in groups]
    formula = node.formula.replace("x.grad", f"{_plain(leaf)}.grad", 1) if leaf is not None and leaf.name \
        else node.formula
    if acc is None:
        say = (f"AccumulateGrad for {label} received its gradient but did not write it "
               "(backward(inputs=...) left this leaf out).")
        return (f'<div class="gv-head"><b>AccumulateGrad</b> {math(formula)}</div>'
                f'<p class="gv-say">{say}</p>')
    if acc.before is not None:
        say = (f"AccumulateGrad ends this path: it adds {math(f'∂L/∂{_plain(leaf)}')}, the gradient that reached "
               f"{label}, to the {gname} already there, because gradients accumulate until you zero them.")
    else:
        say = (f"AccumulateGrad ends this path: it writes {math(f'∂L/∂{_plain(leaf)}')}, the sum over every path "
               f"from the loss to {label}, into {gname}, which you can read now.")
    terms = ([acc.before] if acc.before is not None else []) + (contributions if len(contributions) > 1
                                                                else [acc.contribution])
    if len(terms) > 1:
        line = f"{gname} = {_sum_line(terms, acc.total)}"
    else:
        line = f"{gname} = {_values(acc.total)}"
    note = ""
    if len(contributions) > 1:
        senders = ", ".join(node_label(graph, e.dst) for e, _ in groups)
        note = (f'<div class="gv-row gv-note">{label} is used {len(contributions)} times ({senders}); '
                "the engine added those gradients before this step, one term per edge.</div>")
    return (f'<div class="gv-head"><b>AccumulateGrad</b> {math(formula)}</div>'
            f'<p class="gv-say">{say}</p>'
            f'<div class="gv-row gv-write"><span class="gv-k">writes</span> {line}</div>{note}')


def _plain(leaf) -> str:
    """A name fit for a formula string (math() escapes it)."""
    return leaf.name if leaf is not None and leaf.name else "x"
