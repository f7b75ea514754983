"""Predict mode's data: for each backward step of a Trace, what its node sent to each input, so that a
page can ask the learner for it before showing the step and check the answer (assets/predict.js)
with the notebook checkers' tolerances and grid of differences (gradviz.exercises)."""
from __future__ import annotations

import math

import numpy as np

from ..tracing import Trace

LIMIT = 24               # the largest gradient (in elements) a learner is asked to type
RTOL, ATOL = 1e-4, 1e-5  # every check of a learner's answer (here and gradviz.exercises): float32 done in
                         # another order than the engine's stays within these


def label(trace: Trace, node_id: str) -> str:
    """How a learner calls a node: the tensor it made, or the leaf an AccumulateGrad writes."""
    n = trace.node(node_id)
    if n.kind == "accumulate":
        leaf = next((e.src for e in trace.edges_into(node_id)), None)
        return trace.node(leaf).name if leaf is not None else n.name
    return n.tensor_name or n.name


def _tensor(trace: Trace, node_id: str) -> str:
    """The tensor a node made, as the picture names it: the learner's name, else its symbol (t₁)."""
    n = trace.node(node_id)
    made = label(trace, node_id)
    if made == n.name and n.kind == "op" and getattr(n, "out_names", None) and n.out_names[0]:
        return n.out_names[0]
    return made


def _called(trace: Trace, node_id: str) -> str:
    """A node as the diagram names it: its grad_fn and the tensor it made (MulBackward0 (t₁))."""
    n, made = trace.node(node_id), _tensor(trace, node_id)
    return n.name if made == n.name else f"{n.name} ({made})"


class _Indexed:
    """A Trace's `node` and `edges_into` (what naming a node reads), looked up in dicts made once:
    Trace's own scan the nodes, and a page of 20,000 steps asks them 60,000 times."""

    def __init__(self, trace: Trace):
        self.steps = trace.steps
        self._nodes = {n.id: n for n in trace.nodes}
        self._into: dict = {}
        for e in trace.edges:
            self._into.setdefault(e.dst, []).append(e)

    def node(self, node_id: str):
        return self._nodes[node_id]

    def edges_into(self, node_id: str) -> list:
        return sorted(self._into.get(node_id, ()), key=lambda e: e.slot)


def payload(trace: Trace, steps=None) -> dict:
    """{backward step number (from 1): {"node": its name, "sends": [{"to", "shape", "values"}]}} for
    every op step whose sent gradients were all kept and are small enough to type; `steps`: only
    these step numbers (the ones a page shows one by one: a folded page asks nothing of the steps
    its boxes run together, so it need not hold their answers)."""
    edges = {e.id: e for e in trace.edges}
    out: dict = {}
    trace = _Indexed(trace)
    for k, step in enumerate(trace.steps, 1):
        if steps is not None and k not in steps:
            continue
        node = trace.node(step.node)
        if node.kind != "op":
            continue
        sends = []
        for edge_id, flow, *_ in step.flows:
            if flow is None or math.prod(flow.shape) > LIMIT or flow.values is None or edge_id not in edges:
                continue
            edge = edges[edge_id]
            sends.append({"to": _tensor(trace, edge.src), "slot": edge.slot, "shape": list(flow.shape),
                          "values": np.asarray(flow.values, dtype=float).ravel().tolist()})
        names = [s["to"] for s in sends]
        for s in sends:   # one tensor on two inputs (h * h): the input's position tells them apart
            s["to"] = s["to"] if names.count(s["to"]) == 1 else f"{s['to']} (input {s['slot']})"
        if sends:
            out[str(k)] = {"node": _called(trace, node.id), "sends": sends}
    return out
