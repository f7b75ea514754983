"""make_dot: torchviz's function, drawn from a gradviz (or torch-bridge) graph.

Same signature, same colours, same plain labels: grad_fn nodes by their PyTorch
name (with their saved attributes when show_attrs), leaves light blue named from
`params`, saved tensors orange, outputs darkolivegreen1; AccumulateGrad shown.
Unlike torchviz, nodes are named by stable trace ids and carry `id` attributes.
"""
from __future__ import annotations

import graphviz

from ..sources import trace_of
from .escape import dot_text
from .labels import node_attrs, truncate

_NODE_ATTR = dict(style="filled", shape="box", align="left", fontsize="10", ranksep="0.1", height="0.2",
                  fontname="monospace")


def _size(shape) -> str:
    return "(" + ", ".join("%d" % v for v in shape) + ")"


def _fn_label(node, show_attrs: bool, max_attr_chars: int) -> str:
    name = node.name
    if not show_attrs:
        return name
    attrs = node_attrs(node)
    if not attrs:
        return name
    # torchviz's two-column table of attributes under a rule as wide as the widest row
    max_attr_chars = max(max_attr_chars, 3)
    col1 = max(len(k) for k in attrs)
    col2 = min(max(len(str(v)) for v in attrs.values()), max_attr_chars)
    sep = "-" * max(col1 + col2 + 2, len(name))
    rows = "\n".join(f"{k:<{col1}}: {truncate(str(v), col2):>{col2}}" for k, v in attrs.items())
    return name + "\n" + sep + "\n" + rows


def make_dot(var, params: dict | None = None, show_attrs: bool = False, show_saved: bool = False,
             max_attr_chars: int = 50) -> graphviz.Digraph:
    """torchviz.make_dot: the Digraph of the graph behind `var` (a gradviz or torch tensor, or a
    tuple of them); `params` maps names to tensors (e.g. dict(model.named_parameters()))."""
    if params is not None:
        bad = [k for k, v in params.items() if not (hasattr(v, "grad_fn") and hasattr(v, "requires_grad"))]
        if bad:
            raise TypeError(f"params must map names to tensors; {bad[0]!r} maps to "
                            f"{type(params[bad[0]]).__name__}")
    roots = tuple(var) if isinstance(var, (tuple, list)) else (var,)
    # gradviz tensors, or real torch tensors; torchviz always draws what custom Functions saved
    trace = trace_of(roots, params, show_saved=show_saved, ctx_saved=True)
    ctx_saved_leaves = {e.src for e in trace.edges if e.slot == -2}
    dot = graphviz.Digraph(node_attr=_NODE_ATTR, graph_attr=dict(size="12,12"))
    for node in trace.nodes:
        if node.kind in ("op", "accumulate"):
            dot.node(node.id, dot_text(_fn_label(node, show_attrs, max_attr_chars)), id=node.id)
            continue
        shape = node.value.shape if node.value is not None else ()
        # torchviz names a leaf or an output only by params (a saved tensor by its attribute); the
        # recording's own symbols (t₁, ...) are not drawn
        name = node.name if node.kind == "saved" or (params and node.name in params) else ""
        label = dot_text(f"{name}\n {_size(shape)}")
        fill = {"leaf": "lightblue", "output": "darkolivegreen1", "saved": "orange"}[node.kind]
        if node.id in ctx_saved_leaves:
            fill = "orange"   # torchviz redraws a leaf that a custom Function saved as a saved tensor
        dot.node(node.id, label, fillcolor=fill, id=node.id)
    index = {n.id: n for n in trace.nodes}
    for edge in trace.edges:
        if edge.slot == -2:
            dot.edge(edge.src, edge.dst, dir="none", id=edge.id)   # torchviz's ctx.saved_tensors point at the node
        elif index[edge.src].kind == "saved":
            dot.edge(edge.dst, edge.src, dir="none", id=edge.id)   # torchviz hangs saved tensors off their node
        else:
            dot.edge(edge.src, edge.dst, id=edge.id)
    _resize(dot)
    return dot


def _resize(dot: graphviz.Digraph, size_per_element: float = 0.15, min_size: float = 12) -> None:
    """torchviz's resize_graph: grow the page with the graph so big graphs stay legible."""
    size = max(min_size, len(dot.body) * size_per_element)
    dot.graph_attr.update(size=f"{size},{size}")
