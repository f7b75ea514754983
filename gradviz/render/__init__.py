"""Diagrams of the backward graph: Trace -> Graphviz DOT -> SVG (and PNG/PDF with system dot).

Public API:
  draw(*tensors, ...) -> Diagram         the diagram of the graph behind tensors (or of a Trace)
  make_dot(var, params=None, ...)        torchviz's drop-in, returning a graphviz.Digraph
  layout_svg(trace, **options) -> str    one laid-out SVG whose node/edge <g> ids are the trace ids
  to_dot(trace, **options) -> str        the DOT source behind it
  render_backend() -> "system" | "wasm"  which Graphviz lays diagrams out
"""
from __future__ import annotations

from ..origins import check_tensors, flat, trace_of
from ..naming import caller_namespace
from ..tracing import Trace
from .backends import GraphvizNotFoundError, GraphvizRenderError, GraphvizTimeoutError, render_backend
from .classic import make_dot
from .collapse import View, plan
from .diagram import Diagram
from .dot import DrawOptions, options, to_digraph, to_dot
from .theme import DARK, LIGHT, Theme

__all__ = ["draw", "make_dot", "layout_svg", "to_dot", "to_digraph", "render_backend", "Diagram", "Theme",
           "LIGHT", "DARK", "DrawOptions", "View", "plan", "GraphvizNotFoundError", "GraphvizRenderError",
           "GraphvizTimeoutError"]


def draw(*tensors, names=None, model=None, show_values: bool = True, show_grads: bool = True, show_saved: bool = False,
         show_attrs: bool = False, show_shapes: bool = True, rankdir: str = "TB", theme=None,
         max_nodes: int | str | None = "auto", collapse=None, order_of=None) -> Diagram:
    """The diagram of the backward graph behind `tensors` (or of one Trace); gradviz tensors or
    real torch tensors (drawn through gradviz.torch_bridge).

    names: {name: tensor} (like torchviz's params) or a Module; by default the calling code's variable
    names (a tensor held by exactly one variable); unnamed tensors use `.name`. model: a Module whose
    parameter names label the leaves (`draw(loss, model=model)`).
    show_values / show_grads: "data | grad" on nodes (values up to 16 elements, else min/mean/max).
    show_saved: the tensors each grad_fn saved for backward, in orange.
    show_attrs: each grad_fn's arguments (dim, keepdim, ...).
    rankdir: "TB" (leaves on top) or "LR". theme: "light", "dark", a Theme or a dict of overrides.
    max_nodes: "auto" folds chains, modules and deep repeated blocks into boxes when the drawing
    would exceed a few screens (render/size.py); a number folds to that many drawn nodes; None
    folds nothing by itself.
    collapse: "scopes" draws every outermost scope as one box; or a scope name / list of names;
    False folds nothing.
    order_of: node -> derivative order (e.g. tracing.Recorder().order_of) to colour create_graph graphs.
    Real torch tensors become a Trace through gradviz.origins (the torch bridge); the renderer
    itself only reads Traces.
    """
    opts = options(show_values=show_values, show_grads=show_grads, show_saved=show_saved, show_attrs=show_attrs,
                   show_shapes=show_shapes, rankdir=rankdir, theme=theme, max_nodes=max_nodes, collapse=collapse)
    if len(tensors) == 1 and isinstance(tensors[0], Trace):
        trace = tensors[0]
    else:
        tensors = flat(tensors)
        if not tensors:
            raise TypeError("draw() needs at least one tensor (or a Trace)")
        check_tensors(tensors, "draw")
        missing = [i for i, t in enumerate(tensors) if not getattr(t, "requires_grad", False)]
        if missing:
            raise ValueError(f"tensor {missing[0]} passed to draw() does not require grad, so it has no graph "
                             "to draw; create its inputs with requires_grad=True")
        trace = trace_of(tensors, names, show_saved=show_saved, order_of=order_of, model=model,
                         caller=caller_namespace())
    return Diagram(trace, opts)


def layout_svg(trace: Trace, **draw_options) -> str:
    """Lay a Trace out once and return the SVG.

    Every drawn node's <g> has id = the trace node id (n0, n1, ...) and class "node <kind>";
    every edge's <g> has id = the trace edge id (e0, ...) and class "edge ...". Nodes folded
    by max_nodes/collapse are drawn by placeholders g0, g1, ...; `plan(trace, ...)` says which
    placeholder (View.owner) or edge (View.edge_owner) stands for a hidden id.
    """
    if not isinstance(trace, Trace):
        raise TypeError(f"layout_svg() takes a Trace (from gradviz.tracing), not {type(trace).__name__}")
    return Diagram(trace, options(**draw_options)).svg()
