"""Trace: a plain, engine-free snapshot of a graph and of a backward run, and its JSON.

Every view (diagrams, frames, the step panel, the Jacobian view, the GIF) reads only a Trace.
It holds plain values (Previews, symbols, constants, source lines) and no engine object, so
`Trace.to_json()` / `Trace.from_json()` round-trip and a saved run can be reloaded and replayed.
Nodes and edges get stable ids (n0, n1, ... / e0, e1, ...) in creation order, so every frame of
an animation speaks of the same ids.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field, fields

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


class LazyTrace(Trace):
    """A Trace made when it is first read: the same fields, filled by `build(trace)` on the first
    read of any of them (on whichever thread reads first; another thread reading meanwhile waits).
    An origin whose graph outlives its backward (the torch bridge) records what torch alone can
    tell while the backward runs and leaves the rest of the Trace to this. Copied or pickled, it
    is a plain Trace."""

    def __init__(self, build):
        self.__dict__["_build"] = build

    def built(self) -> bool:
        return "_build" not in self.__dict__

    def _make(self) -> None:
        with _MAKING:
            build = self.__dict__.get("_build")
            if not callable(build):   # made already, or being made by this thread (build reads its own fields)
                return
            # while it is made, `_build` names the thread making it: its reads of its own fields go
            # straight through (a build reads them hundreds of times), other threads wait in _make
            self.__dict__.update(Trace().__dict__, _build=threading.get_ident())
            try:
                build(self)
            except BaseException:
                self.__dict__["_build"] = build
                raise
            del self.__dict__["_build"]   # last: another thread sees the fields whole

    def __reduce__(self):
        return Trace, tuple(getattr(self, f.name) for f in fields(Trace))


_MAKING = threading.RLock()


def _made_field(name: str) -> property:
    def get(self):
        made = self.__dict__
        if "_build" in made and made["_build"] != threading.get_ident():
            self._make()
        return made[name]

    def put(self, value) -> None:
        made = self.__dict__
        if "_build" in made and made["_build"] != threading.get_ident():
            self._make()
        made[name] = value
    return property(get, put)


for _f in fields(Trace):
    setattr(LazyTrace, _f.name, _made_field(_f.name))
