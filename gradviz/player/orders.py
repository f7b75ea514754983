"""A create_graph gradient's own graph, drawn apart: its nodes boxed by derivative order.

A gradient made with `create_graph=True` is a tensor with a graph of its own (TanhBackwardBackward0,
...), built by the backward from the forward graph it differentiates and linked to it by the values
it reads. Every node of order k ≥ 1 is put in a box named for its order (the Trace's scope path, which
the renderer draws as a cluster), so the forward graph and the gradient's graph read as two graphs
with the edges between them in plain view.
"""
from __future__ import annotations

from ..tracing import Trace

# short enough to be read whole in a player half a 960 px column wide (the legend says who built it)
_NAMES = {1: "the gradient's graph (create_graph=True)",
          2: "the second derivative's graph (order 2)"}


def box_title(order: int) -> str:
    return _NAMES.get(order, f"the graph of derivative order {order}")


def separate_orders(trace: Trace) -> Trace:
    """Put each node of derivative order k ≥ 1 (and a leaf's AccumulateGrad is never one) in the box of
    order k, in front of its own scope path; nothing changes in a trace of order 0 only, nor in one
    whose nodes are in their boxes already (a recorded Trace stepped again)."""
    for node in trace.nodes:
        if node.order > 0 and node.kind == "op" and node.scope[:1] != (box_title(node.order),):
            node.scope = (box_title(node.order), *node.scope)
    return trace
