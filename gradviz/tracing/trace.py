"""Trace: a plain, engine-free snapshot of a graph and of a backward run, and its JSON.

Every view (diagrams, frames, the step panel, the Jacobian view, the GIF) reads only a Trace.
It holds plain values (Previews, symbols, constants, source lines) and no engine object, so
`Trace.to_json()` / `Trace.from_json()` round-trip and a saved run can be reloaded and replayed.
Nodes and edges get stable ids (n0, n1, ... / e0, e1, ...) in creation order, so every frame of
an animation speaks of the same ids.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..records import EdgeRecord, NodeRecord, StepRecord, from_json, to_json
from .names import name_tensors, named

FORMAT_VERSION = 1


@dataclass
class Trace:
    """A recorded graph and its backward, as plain values: what every view draws.

    `nodes` and `edges` (stable ids n0, e0, ...), the backward `steps` in the order they ran, the
    `forward` order of the op nodes, the output `roots`, and the `code` that made the nodes. It holds
    no engine object, so it round-trips through `to_json()` / `Trace.from_json()`.
    """
    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    forward: list = field(default_factory=list)   # op node ids in the order the forward created them
    roots: tuple = ()                              # output node ids
    implicit_seed: bool | None = None              # backward() made the seed (no gradient given); None: no backward
    code: dict = field(default_factory=dict)       # file -> (first line, lines): the code that made the nodes

    def node(self, node_id: str) -> NodeRecord:
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)

    def edges_into(self, node_id: str) -> list:
        return sorted((e for e in self.edges if e.dst == node_id), key=lambda e: e.slot)

    # -- JSON ---------------------------------------------------------------------------
    def to_json(self) -> dict:
        """Plain JSON-able data (json.dumps takes it as is)."""
        return {"version": FORMAT_VERSION,
                "nodes": to_json(self.nodes), "edges": to_json(self.edges), "steps": to_json(self.steps),
                "forward": list(self.forward), "roots": list(self.roots), "implicit_seed": self.implicit_seed,
                "code": {f: [first, list(lines)] for f, (first, lines) in self.code.items()}}

    @classmethod
    def from_json(cls, data: dict) -> "Trace":
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(f"cannot read a gradviz trace of format version {data.get('version')!r} "
                             f"(this gradviz reads version {FORMAT_VERSION})")
        nodes = [from_json(NodeRecord, n) for n in data["nodes"]]
        edges = [from_json(EdgeRecord, e) for e in data["edges"]]
        steps = [from_json(StepRecord, s) for s in data["steps"]]
        code = {f: (first, list(lines)) for f, (first, lines) in data.get("code", {}).items()}
        trace = cls(nodes, edges, steps, list(data["forward"]), tuple(data["roots"]), data.get("implicit_seed"), code)
        if not named(trace):   # saved before tensors had one symbol each
            name_tensors(trace)
        return trace
