"""make_dot: torchviz's function, drawn from a gradviz (or torch-bridge) graph.

Same signature, same colours, same plain labels: grad_fn nodes by their PyTorch
name (with their saved attributes when show_attrs), leaves light blue named from
`params`, saved tensors orange, outputs darkolivegreen1; AccumulateGrad shown.
The same nodes and edges as torchviz: a view output's base darkolivegreen3 with a
dotted edge to it, a leaf output one node, a saved tensor that is a leaf drawn as
the leaf's node. Unlike torchviz, nodes are named by stable trace ids and carry
`id` attributes.
"""
from __future__ import annotations

import graphviz

from ..naming import parameter_name
from ..origins import trace_of
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
    # torchviz draws the base of an output that is a view (darkolivegreen3, a dotted edge to the view):
    # traced as one more output
    bases = []
    for r in roots:
        base = _base_of(r)
        if base is not None and not any(base is t for t in roots + tuple(bases)):
            bases.append(base)
    tensors = roots + tuple(bases)
    # gradviz tensors, or real torch tensors; torchviz always draws what custom Functions saved
    trace = trace_of(tensors, params, show_saved=show_saved, ctx_saved=True)
    index = {n.id: n for n in trace.nodes}
    into = {}
    for edge in trace.edges:
        into.setdefault(edge.dst, []).append(edge)
    drawn = [t for t in tensors if t.grad_fn is not None or t.requires_grad]
    out_of = dict(zip(trace.roots, drawn)) if len(drawn) == len(trace.roots) else {}
    tensor_of = _tensors_of(trace, index, into, out_of)
    fill, label, merged, dropped = {}, {}, {}, set()   # merged: node id -> the id torchviz draws it as
    node_of = {id(t): i for i, t in out_of.items()}
    for r in roots:   # torchviz colours a tensor when it first draws it: an output, or a base before that
        for t, colour in ((r, "darkolivegreen1"), (_base_of(r), "darkolivegreen3")):
            if t is not None and id(t) in node_of:
                fill.setdefault(node_of[id(t)], colour)
    for out_id, tensor in out_of.items():
        (edge,) = into[out_id]
        if index[edge.src].kind != "accumulate":
            continue
        # a leaf output is one node in torchviz (its id is the leaf's): the leaf's own, drawn light
        # blue, when the graph reaches it through its AccumulateGrad, else the output's alone
        dropped.add(edge.id)
        (leaf_edge,) = into[edge.src]
        if any(e.src == edge.src and e.id != edge.id and e.dst not in out_of for e in trace.edges):
            merged[out_id] = leaf_edge.src
        else:
            dropped.update({edge.src, leaf_edge.src, leaf_edge.id})
    leaves = {id(t): node_id for node_id, t in tensor_of.items() if index[node_id].kind == "leaf"}
    merges, last = _saved_leaf_merges(trace, index, tensor_of, leaves, show_saved)
    for saved_id, key in merges:
        merged[saved_id] = leaves[key]
    for key, (colour, name) in last.items():
        if name is not None:
            fill[leaves[key]], label[leaves[key]] = colour, name
    ctx_saved_leaves = {e.src for e in trace.edges if e.slot == -2}
    dot = graphviz.Digraph(node_attr=_NODE_ATTR, graph_attr=dict(size="12,12"))
    given = {parameter_name(str(k)): str(k) for k in (params or {})}
    for node in trace.nodes:
        if node.id in dropped or node.id in merged:
            continue
        if node.kind in ("op", "accumulate"):
            dot.node(node.id, dot_text(_fn_label(node, show_attrs, max_attr_chars)), id=node.id)
            continue
        shape = node.value.shape if node.value is not None else ()
        colour = fill.get(node.id) or {"leaf": "lightblue", "output": "darkolivegreen1", "saved": "orange"}[node.kind]
        # torchviz names a leaf or an output only by params (a saved tensor by its attribute, a saved leaf
        # merged into its leaf by the attribute drawn last); the recording's own symbols (t₁, ...) are not drawn
        # (by the key given: torchviz draws 2.bias, which the recording's symbols write [2].bias)
        name = node.name if node.kind == "saved" else given.get(node.name, "")
        if node.id in ctx_saved_leaves:
            colour = "orange"   # torchviz redraws a leaf that a custom Function saved as a saved tensor
        dot.node(node.id, dot_text(f"{label.get(node.id, name)}\n {_size(shape)}"), fillcolor=colour, id=node.id)
    for edge in trace.edges:
        if edge.id in dropped:
            continue
        src, dst = merged.get(edge.src, edge.src), merged.get(edge.dst, edge.dst)
        if edge.slot == -2:
            dot.edge(src, dst, dir="none", id=edge.id)   # torchviz's ctx.saved_tensors point at the node
        elif index[edge.src].kind == "saved":
            dot.edge(dst, src, dir="none", id=edge.id)   # torchviz hangs saved tensors off their node
        else:
            dot.edge(src, dst, id=edge.id)
    names = {id(v): k for k, v in (params or {}).items()}
    for i, t in enumerate(tensors):   # a tensor outside autograd has no node in the trace; torchviz draws it
        if not any(t is d for d in drawn):
            colour = "darkolivegreen3" if any(t is b for b in bases) else "darkolivegreen1"
            dot.node(f"t{i}", dot_text(f"{names.get(id(t), '')}\n {_size(t.shape)}"), fillcolor=colour, id=f"t{i}")
            out_of[f"t{i}"] = t
    for out_id, tensor in out_of.items():   # a view's base -> the view, dotted
        base = _base_of(tensor)
        base_id = next((i for i, t in out_of.items() if t is base), None)
        if base_id is not None:
            dot.edge(merged.get(base_id, base_id), merged.get(out_id, out_id), style="dotted", id=f"view-{out_id}")
    _resize(dot)
    return dot


def _base_of(tensor):
    """The tensor a view was made from (torch's and gradviz's `_base`), or None."""
    return getattr(tensor, "_base", None)


def _tensors_of(trace, index, into, out_of: dict) -> dict:
    """Trace node id -> the grad_fn (op, accumulate) or tensor (leaf, output) it was drawn from, found by
    walking the tensors' own graph beside the trace: an op's input slot i is its next_functions[i]."""
    found = dict(out_of)
    stack = []
    for out_id, tensor in out_of.items():
        (edge,) = into[out_id]
        if tensor.grad_fn is not None:
            stack.append((edge.src, tensor.grad_fn))
        elif index[edge.src].kind == "accumulate":
            found[into[edge.src][0].src] = tensor
    while stack:
        node_id, fn = stack.pop()
        if node_id in found:
            continue
        found[node_id] = fn
        if index[node_id].kind == "accumulate":
            leaf_edges = into.get(node_id, [])
            if leaf_edges and hasattr(fn, "variable"):
                found[leaf_edges[0].src] = fn.variable
            continue
        nexts = getattr(fn, "next_functions", ())
        for edge in into.get(node_id, []):
            if edge.slot >= 0 and index[edge.src].kind in ("op", "accumulate") and edge.slot < len(nexts) \
                    and nexts[edge.slot][0] is not None:
                stack.append((edge.src, nexts[edge.slot][0]))
    return found


def _saved_leaf_merges(trace, index, tensor_of: dict, leaves: dict, show_saved: bool) -> tuple:
    """([(saved node id, leaf key)], {leaf key: (fill, label) it ends with}) for the saved tensors that are
    drawn leaves themselves (leaf key: id() of the leaf). torchviz names a node by its tensor's id, so it
    draws the two as one node, with the attributes its depth-first walk drew last: a saved tensor's on
    reaching the node that saved it (before that node's inputs), the leaf's on reaching its AccumulateGrad."""
    if not show_saved or not leaves:
        return [], {}
    saved_of = {(e.dst, index[e.src].name): e.src for e in trace.edges if e.slot == -1 and index[e.src].kind == "saved"}
    fn_ids = {id(fn): node_id for node_id, fn in tensor_of.items() if index[node_id].kind in ("op", "accumulate")}
    merges, last, seen = [], {}, set()
    stack = [tensor_of[o].grad_fn for o in reversed(trace.roots)
             if o in tensor_of and tensor_of[o].grad_fn is not None]
    while stack:   # torchviz's walk, without its recursion (a long chain would exceed Python's limit)
        fn = stack.pop()
        if id(fn) in seen or id(fn) not in fn_ids:
            continue
        seen.add(id(fn))
        for attr in dir(fn):   # torchviz reads the _saved_ attributes in dir()'s order
            if not attr.startswith("_saved_"):
                continue
            value = getattr(fn, attr)
            for i, t in enumerate(value if isinstance(value, tuple) else (value,)):
                name = attr[len("_saved_"):] + (f"[{i}]" if isinstance(value, tuple) else "")
                if id(t) in leaves and (fn_ids[id(fn)], name) in saved_of:
                    merges.append((saved_of[(fn_ids[id(fn)], name)], id(t)))
                    last[id(t)] = ("orange", name)
        if id(getattr(fn, "variable", None)) in leaves:
            last[id(fn.variable)] = ("lightblue", None)
        stack.extend(nxt for nxt, _ in reversed(getattr(fn, "next_functions", ())) if nxt is not None)
    return merges, last


def _resize(dot: graphviz.Digraph, size_per_element: float = 0.15, min_size: float = 12) -> None:
    """torchviz's resize_graph: grow the page with the graph so big graphs stay legible."""
    size = max(min_size, len(dot.body) * size_per_element)
    dot.graph_attr.update(size=f"{size},{size}")
