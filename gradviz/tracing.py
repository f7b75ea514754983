"""Trace: a plain, engine-free snapshot of a graph and of a backward run, and the one
Recorder that builds it from events (module named `tracing` because `gradviz.trace`
is torch.trace, the matrix trace).

Every view (diagrams, frames, the step panel, the Jacobian view, the GIF) reads only
a Trace. It holds plain values — Previews, symbols, constants, source lines — and no
engine object, so `Trace.to_json()` / `Trace.from_json()` round-trip and a saved run
can be reloaded and replayed. Nodes and edges get stable ids (n0, n1, ... / e0, e1,
...) in creation order, so every frame of an animation speaks of the same ids.

Events reach a Recorder two ways: live, while it listens to the bus (`with Recorder()`),
or replayed: `build_trace` walks an existing graph and feeds the Recorder one
NodeCreated per grad_fn, so a graph made before anyone listened is drawn by the same
code. The torch bridge is a third origin of the same events.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
import numpy as np

from . import events
from .code_lines import code_around
from .naming import FREE_LETTERS, assigned_names, assignment, subscript
from .autograd.describe import describe_node, edge_info, tensor_info
from .autograd.engine import backward_steps, broadcast_axes
from .autograd.graph import ACCUMULATE_GRAD, AccumulateGrad
from .previews import Preview
from .records import (EdgeRecord, Flow, InputRecord, NodeRecord, StepRecord, TensorRecord, for_trace, from_json,
                      to_json)

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


# -- the Recorder -------------------------------------------------------------------------------
@dataclass
class Output:
    """A tensor a trace is drawn from: how it looks and which node produced it."""
    tensor: TensorRecord
    edge: InputRecord


class Recorder:
    """Turns events into a Trace: the one place a Trace is built.

    As a context manager it listens to the bus for events emitted on its own thread
    (jacobians=True asks the engine for each step's local Jacobian); `feed(event)`
    hands it events from another origin (a replayed graph, the torch bridge).
    `trace(outputs)` builds the Trace of the graph behind the outputs; steps that
    arrive after that are appended to it, so a stepper can grow it one step at a time.
    """

    def __init__(self, jacobians: bool = False):
        self.nodes: dict = {}       # node key -> NodeRecord as its origin made it, in creation order
        self.step_infos: list = []  # StepRecord as its origin made it, in execution order
        self.orders: dict = {}      # node key -> derivative order, for nodes a backward built
        self.jacobians = jacobians
        self.current: Trace | None = None
        self._ids: dict = {}        # node key -> trace node id (of the current trace)
        self._edge_of: dict = {}    # (trace node id, slot) -> edge id
        self._written: dict = {}    # accumulation target -> trace node id
        self._nodes: dict = {}      # trace node id -> NodeRecord (of the current trace)
        self._open = 0              # backward passes started and not finished
        self._pending: list = []    # nodes created since the last step of an open backward
        self._unsubscribe = None
        self._stack: list = []
        self.implicit_seed: bool | None = None   # of the last backward heard
        self.tensor_names: dict = {}              # node key -> the name of the tensor it made

    def trace_id(self, key):
        """The current Trace's id of the node with this key (None for a node it does not hold)."""
        return self._ids.get(key)

    def __enter__(self):
        self._unsubscribe = events.subscribe(self.feed, thread=threading.get_ident())
        if self.jacobians:
            jac = events.want_jacobians()
            jac.__enter__()
            self._stack.append(jac)
        return self

    def __exit__(self, *exc):
        self._unsubscribe()
        while self._stack:
            self._stack.pop().__exit__(None, None, None)
        return False

    def order_of(self, node) -> int:
        """The derivative order of a node (a live node or its key): 0 for the forward."""
        return self.orders.get(getattr(node, "id", node), 0)

    # -- events ------------------------------------------------------------------------------
    def feed(self, event) -> None:
        kind = type(event)
        if kind is events.NodeCreated:
            info = event.info
            if info is None:
                return
            self.nodes[info.key] = info
            if self._open:
                self._pending.append(info.key)
        elif kind is events.NodeExecuted:
            info = event.info
            if info is None:
                return
            # a node built while a step ran comes from that node's VJP: one order higher
            order = self.orders.get(info.key, 0) + 1
            for key in self._pending:
                self.orders[key] = order
            self._pending.clear()
            self.step_infos.append(info)
            if self.current is not None:
                self._add_step(self.current, info)
        elif kind is events.BackwardStarted:
            self._open += 1
            self.implicit_seed = all(event.implicit) if event.implicit else None
            if self.current is not None:
                self.current.implicit_seed = self.implicit_seed
        elif kind is events.BackwardFinished:
            self._open = max(0, self._open - 1)
            self._pending.clear()

    # -- building the Trace -------------------------------------------------------------------
    def trace(self, outputs=(), show_saved: bool = False, leaf_names: dict | None = None,
              ctx_saved: bool = False) -> Trace:
        """The Trace of the graph behind `outputs` (Output records; none: every node recorded),
        with the steps recorded so far. leaf_names: AccumulateGrad key -> a name for its leaf,
        for leaves named only after they were recorded. ctx_saved: the tensors custom Functions
        saved, as torchviz draws them (a saved leaf is its leaf node; slot -2)."""
        outputs = list(outputs)
        leaf_names = leaf_names or {}
        leaves: dict = {}          # AccumulateGrad key -> TensorRecord of its leaf
        for info in self.nodes.values():
            for inp in info.inputs:
                if inp.leaf is not None:
                    leaves.setdefault(inp.producer, inp.leaf)
        for out in outputs:
            if out.edge.leaf is not None:
                leaves.setdefault(out.edge.producer, out.edge.leaf)
        keys = self._reachable([o.edge.producer for o in outputs]) if outputs else set(self.nodes) | set(leaves)
        trace = Trace(implicit_seed=self.implicit_seed)
        ids: dict = {}
        edge_ids = iter(range(10 ** 12))
        node_ids = iter(range(10 ** 12))

        def add(node: NodeRecord, **values) -> NodeRecord:
            node = for_trace(node, id=f"n{next(node_ids)}", **values)
            trace.nodes.append(node)
            return node

        def link(src, dst, slot, shape, output_nr=0, axes=()):
            trace.edges.append(EdgeRecord(f"e{next(edge_ids)}", src, dst, slot, shape, output_nr, axes))

        written: dict = {}
        ordered = sorted(keys, key=_sort_key)
        for key in ordered:
            if key in leaves and key not in self.nodes:
                var = leaves[key]
                leaf = add(NodeRecord(kind="leaf", name=leaf_names.get(key, var.name), value=var.value,
                                      grad=var.grad, source=var.source))
                acc = add(NodeRecord.of_op(ACCUMULATE_GRAD, 1, kind="accumulate", symbols=("x",), out_symbol="x",
                                           source=var.source))   # its step shows the line that created the leaf
                ids[key] = acc.id
                written[("leaf", key)] = leaf.id
                link(leaf.id, acc.id, 0, tuple(var.shape))
                continue
            info = self.nodes[key]
            node = add(info, order=self.orders.get(key, 0), tensor_name=self.tensor_names.get(key, ""),
                       in_names=tuple(i.name for i in info.inputs))
            ids[key] = node.id
        for key in ordered:
            info = self.nodes.get(key)
            if info is None:
                continue
            out_shape = None if info.value is None else tuple(info.value.shape)
            for slot, inp in enumerate(info.inputs):
                if inp.producer is not None and inp.producer in ids:
                    link(ids[inp.producer], ids[key], slot, inp.shape, inp.output_nr,
                         _static_axes(info, slot, inp.shape, out_shape))
            if show_saved:
                for name, preview in info.saved:
                    saved = add(NodeRecord(kind="saved", name=name, value=preview))
                    link(saved.id, ids[key], -1, None if preview is None else tuple(preview.shape))
            if ctx_saved:
                for preview, leaf_key in info.ctx_saved:
                    src = written.get(("leaf", leaf_key)) or add(NodeRecord(kind="saved", value=preview)).id
                    link(src, ids[key], -2, None if preview is None else tuple(preview.shape))
        roots = []
        for out in outputs:
            src = out.edge.producer
            if src not in ids:
                continue
            node = add(NodeRecord(kind="output", name=out.tensor.name, value=out.tensor.value, grad=out.tensor.grad))
            link(ids[src], node.id, 0, tuple(out.tensor.shape), out.edge.output_nr)
            roots.append(node.id)
            if src in self.nodes:
                written.setdefault(("output", src, out.edge.output_nr), node.id)
        trace.roots = tuple(roots)
        trace.forward = [n.id for n in trace.nodes if n.kind in ("op", "accumulate")]
        trace.code = code_around([n.source for n in trace.nodes if n.source is not None])
        name_tensors(trace)
        self.current = trace
        self._ids = ids
        self._edge_of = {(e.dst, e.slot): e.id for e in trace.edges if e.slot >= 0}
        self._written = written
        self._nodes = {n.id: n for n in trace.nodes}
        for info in self.step_infos:
            self._add_step(trace, info)
        return trace

    def tensor_node(self, key) -> str | None:
        """The trace node id of a live tensor's key from replay(): ("leaf", AccumulateGrad key)
        or ("output", grad_fn key, output_nr)."""
        return self._written.get(tuple(key))

    def _reachable(self, starts) -> set:
        seen, stack = set(), [s for s in starts if s is not None]
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            info = self.nodes.get(key)
            if info is not None:
                stack.extend(inp.producer for inp in info.inputs if inp.producer is not None)
        return seen

    def _add_step(self, trace: Trace, info: StepRecord) -> None:
        node_id = self._ids.get(info.key)
        if node_id is None:
            return
        flows = tuple(Flow(self._edge_of[(node_id, slot)], grad, tuple(axes)) for slot, grad, axes in info.sent
                      if (node_id, slot) in self._edge_of)
        accs = []
        for a in info.accumulations:
            target = self._written.get(tuple(a.target))
            if target is None:
                continue
            accs.append(for_trace(a, node=target))
            self._nodes[target].grad = a.total
        jac = None
        if info.jacobians is not None:
            jac = tuple(None if J is None else np.asarray(J).tolist() for J in info.jacobians)
        trace.steps.append(for_trace(info, index=len(trace.steps), node=node_id, flows=flows,
                                     accumulations=tuple(accs), jacobians=jac))


def _sort_key(key):
    return key if isinstance(key, tuple) else (key,)


def _static_axes(info: NodeRecord, slot: int, in_shape, out_shape) -> tuple:
    """The Σ a diagram marks before any backward ran: the engine's broadcast rule applied to
    the input slots the op declares as broadcasting, where the input is smaller than the
    output and the inputs broadcast together to exactly the output's shape."""
    if in_shape is None or out_shape is None:
        return ()
    if info.broadcasts is not None and slot not in info.broadcasts:
        return ()
    if int(np.prod(in_shape, dtype=np.int64)) >= int(np.prod(out_shape, dtype=np.int64)):
        return ()
    shapes = [tuple(i.shape) for i in info.inputs if i.shape is not None]
    if len(shapes) > 1:
        try:
            if tuple(np.broadcast_shapes(*shapes)) != tuple(out_shape):
                return ()
        except ValueError:
            return ()
    return broadcast_axes(in_shape, out_shape) or ()


# -- one symbol per tensor ---------------------------------------------------------------------
def named(trace: Trace) -> bool:
    """True once name_tensors gave the trace's op nodes their symbols."""
    return all(n.out_names for n in trace.nodes if n.kind == "op")


def name_tensors(trace: Trace) -> None:
    """Give every tensor in the trace one symbol, which every view then uses: the learner's
    names first (leaves, outputs, named intermediates, inputs outside the graph already named), then the variable a line of code assigned
    (`c = z1.T @ z2 / N` names the division's result c), a name held by several tensors numbered
    in creation order (the doubling loop's y₁, y₂, ...), and the rest numbered t₁, t₂, ... in
    creation order (with the first letter the code does not use)."""
    index = {n.id: n for n in trace.nodes}
    into: dict = {}
    out_of: dict = {}
    for e in trace.edges:
        if e.slot >= 0:
            into.setdefault(e.dst, []).append(e)
            out_of.setdefault(e.src, []).append(e)

    def tensor_of(node_id, nr=0):
        # an AccumulateGrad and an output node stand for the tensor on their input edge
        if index[node_id].kind in ("accumulate", "output"):
            edge = next(iter(into.get(node_id, ())), None)
            if edge is not None:
                return tensor_of(edge.src, edge.output_nr)
        return (node_id, nr)

    tensors: list = []      # creation order: a leaf's, an op's inputs without an edge, its outputs
    given: dict = {}        # tensor -> the learner's name
    for node in trace.nodes:
        if node.kind == "leaf":
            tensors.append((node.id, 0))
            if node.name:
                given[(node.id, 0)] = node.name
        elif node.kind == "op":
            consts = {k for k, _ in node.constants if k.isdigit()}
            linked = {e.slot for e in into.get(node.id, ())}
            unlinked = [slot for slot in range(len(node.symbols)) if slot not in linked and str(slot) not in consts]
            tensors.extend((node.id, "in", slot) for slot in unlinked)
            for slot in unlinked:   # an input the recording already knows the learner's name of (W in W @ x)
                if slot < len(node.in_names) and node.in_names[slot]:
                    given[(node.id, "in", slot)] = node.in_names[slot]
            nrs = sorted({e.output_nr for e in out_of.get(node.id, ())}) or [0]
            tensors.extend((node.id, nr) for nr in nrs)
            if node.tensor_name:
                given[(node.id, 0)] = node.tensor_name
    for node in trace.nodes:
        if node.kind == "output" and node.name:
            given.setdefault(tensor_of(node.id), node.name)
    for tensor, name in _assigned_values(trace, index, out_of).items():
        given.setdefault(tensor, name)

    holders: dict = {}
    for tensor in tensors:
        if tensor in given:
            holders.setdefault(given[tensor], []).append(tensor)
    symbol: dict = {}
    for name, held in holders.items():
        for k, tensor in enumerate(held, 1):
            symbol[tensor] = name if len(held) == 1 else name + subscript(k)
    taken = set(holders) | assigned_names(line for _, lines in trace.code.values() for line in lines)
    letter = next((c for c in FREE_LETTERS if c not in taken), "t")
    count = 0
    # the graph's tensors first, then the inputs that are not in it (whose number an origin may not
    # know: torch keeps no trace of the 1 in b * b + 1), so one program numbers its graph alike in both
    for tensor in sorted(tensors, key=lambda t: len(t) == 3):
        if tensor not in symbol:
            count += 1
            symbol[tensor] = letter + subscript(count)

    for node in trace.nodes:
        if node.kind == "leaf":
            node.name = symbol[(node.id, 0)]
        elif node.kind == "output":
            node.name = symbol.get(tensor_of(node.id), node.name)
        elif node.kind == "op":
            top = max((e.output_nr for e in out_of.get(node.id, ())), default=0)
            node.out_names = tuple(symbol.get((node.id, nr), "") for nr in range(top + 1))
            node.in_names = tuple(symbol.get((node.id, "in", slot), "") for slot in range(len(node.symbols)))


def _assigned_values(trace: Trace, index: dict, out_of: dict) -> dict:
    """(op node id, 0) -> the variable a line of code assigned it to: of the nodes one line made
    in a row, the last is the value assigned (`c = z1.T @ z2 / N`: the division). A line that reads
    its own variable in a loop (`y = y * 2`, `h = tanh(h @ W + x)`) makes one value per pass: its
    run of nodes splits into equal passes, each feeding the next, and each pass's last node is a value."""
    runs: list = []
    for node_id in trace.forward:
        node = index[node_id]
        if node.kind != "op":
            continue   # a leaf's AccumulateGrad: made where the leaf was, not by the line running
        if node.source is None:
            runs.append(None)
            continue
        if runs and runs[-1] is not None and runs[-1][0] == node.source[:2]:
            runs[-1][1].append(node)
        else:
            runs.append((node.source[:2], [node], node.source[2]))
    found: dict = {}
    for run in runs:
        if run is None:
            continue
        _, nodes, text = run
        target = assignment(text)
        if target is None:
            continue
        name, reads_itself = target
        period = _pass_length(nodes, out_of) if reads_itself else len(nodes)
        for k in range(period - 1, len(nodes), period):
            found[(nodes[k].id, 0)] = name
    return found


def _pass_length(nodes: list, out_of: dict) -> int:
    """The length of one pass of a loop over one line: the shortest p that splits `nodes` into
    passes of the same ops where each pass reads the one before it's last node."""
    names = [n.name for n in nodes]
    for p in range(1, len(nodes) + 1):
        if len(nodes) % p or names != names[:p] * (len(nodes) // p):
            continue
        chained = all(any(e.dst in {n.id for n in nodes[k + 1:k + 1 + p]} for e in out_of.get(nodes[k].id, ()))
                      for k in range(p - 1, len(nodes) - p, p))
        if chained:
            return p
    return len(nodes)


# -- replaying a live graph ---------------------------------------------------------------------
def _collect(root_nodes) -> list:
    """Every grad_fn reachable from the roots, oldest first (iterative: deep graphs are fine)."""
    seen, stack = set(), list(root_nodes)
    found = []
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        found.append(node)
        stack.extend(nxt for nxt, _ in node.next_functions if nxt is not None)
    return sorted(found, key=lambda n: n.id)


def _names_by_id(names: dict | None) -> dict:
    by_id: dict = {}
    for name, t in (names or {}).items():
        by_id.setdefault(id(t), str(name))   # names={123: x} is shown as text
    return by_id


def outputs_of(roots, names: dict | None = None) -> list:
    """Output records for gradviz tensors (taken now: their value and .grad as they are)."""
    by_id = _names_by_id(names)
    outs = []
    for t in roots:
        if t.grad_fn is not None:
            edge = InputRecord(t.grad_fn.id, t.output_nr, tuple(t.shape))
        elif t.requires_grad:
            edge = edge_info(t._accumulator(), 0, tuple(t.shape), by_id)
        else:
            continue
        outs.append(Output(tensor_info(t, by_id.get(id(t))), edge))
    return outs


def replay(roots, recorder: Recorder, names: dict | None = None, order_of=None) -> dict:
    """Feed `recorder` one NodeCreated per grad_fn behind `roots` (gradviz tensors), oldest
    first, as if it had listened while they were made. Returns {node key: live tensor}
    for the leaves and roots (kept beside the Trace, never in it)."""
    by_id = _names_by_id(names)
    name_intermediates(recorder, names)
    root_nodes = [t.grad_fn if t.grad_fn is not None else (t._accumulator() if t.requires_grad else None)
                  for t in roots]
    held = _held_outputs([*(names or {}).values(), *roots])
    live: dict = {}
    for node in _collect(root_nodes):
        if type(node) is AccumulateGrad:
            live[("leaf", node.id)] = node.variable
            continue
        info = describe_node(node, by_id)
        if node.out_data is None and node.id in held:   # released by a backward: the value is still held
            info.value = Preview.of(held[node.id]._data)
        recorder.feed(events.NodeCreated(node, (), (), tuple(node.scope), info))
        if order_of is not None and order_of(node):
            recorder.orders[node.id] = order_of(node)
    for t in roots:
        if t.grad_fn is not None:
            live[("output", t.grad_fn.id, t.output_nr)] = t
    return live


def _held_outputs(tensors) -> dict:
    """node id -> a tensor the caller still holds that is that node's (only) output, unchanged since
    (version 0): after a backward that released the node, its value is read from there, as the
    learner's own variable still shows it."""
    held: dict = {}
    for t in tensors:
        node = getattr(t, "grad_fn", None)
        if node is not None and t.output_nr == 0 and node.op.n_outputs == 1 and t._version == 0:
            held.setdefault(node.id, t)
    return held


def name_intermediates(recorder: Recorder, names: dict | None) -> None:
    """Tell the recorder the names of the non-leaf tensors among `names` ({name: tensor})."""
    for name, t in (names or {}).items():
        if getattr(t, "grad_fn", None) is not None and t.output_nr == 0:
            recorder.tensor_names.setdefault(t.grad_fn.id, str(name))


def graph_freed(roots) -> bool:
    """True when a backward without retain_graph has freed part of the graph behind `roots`."""
    return any(node.freed for node in _collect([t.grad_fn for t in roots if t.grad_fn is not None]))


def leaf_keys(names: dict) -> dict:
    """AccumulateGrad key -> name, for the leaves among `names` ({name: tensor})."""
    return {t._accumulator().id: name for name, t in names.items()
            if t.grad_fn is None and t.requires_grad}


def build_trace(roots, names: dict | None = None, show_saved: bool = False, order_of=None,
                ctx_saved: bool = False) -> Trace:
    """The Trace of the graph behind `roots` (gradviz tensors): the graph replayed into a Recorder."""
    roots = tuple(roots)
    recorder = Recorder()
    replay(roots, recorder, names, order_of)
    return recorder.trace(outputs_of(roots, names), show_saved, ctx_saved=ctx_saved)


class GradSnapshot:
    """.grad of the given tensors, put back exactly: the same Tensor objects, the same values and
    the same version (accumulating bumps a .grad's version; its old data is valid again)."""

    def __init__(self, tensors):
        self.saved = [(t, t._grad, None if t._grad is None else t._grad._data,
                       None if t._grad is None or not t._grad._vc else t._grad._vc.version) for t in tensors]

    def restore(self) -> None:
        for t, grad, data, version in self.saved:
            t._grad = grad
            if grad is not None:
                grad._data = data
                if version is not None:
                    grad._vc.version = version
                elif grad._vc:
                    grad._vc.version = 0   # the counter was created by the write being undone


def record_backward(roots, gradient=None, names=None, retain_graph=True, show_saved=False,
                    jacobians: bool = False, write_grads: bool = False) -> Trace:
    """Run backward over `roots` step by step and return the Trace with every step.

    Recording changes nothing the user can see: afterwards every .grad (leaves and retained
    non-leaves) is the same object with the same values and version as before, and the graph
    is kept (retain_graph=True), so a later `.backward()` gives the plain gradient. Hooks run
    during the recorded backward (the Trace shows them) and stay registered.
    write_grads=True leaves the .grad the recorded backward wrote, as `.backward()` would;
    retain_graph=False frees the graph as `.backward()` does."""
    roots = tuple(roots)
    recorder = Recorder(jacobians=jacobians)
    live = replay(roots, recorder, names)
    outputs = outputs_of(roots, names)
    snapshot = None if write_grads else GradSnapshot(written_tensors(roots, live))
    try:
        with recorder:
            backward_steps(roots, gradient, retain_graph=retain_graph).run()
    finally:
        if snapshot is not None:
            snapshot.restore()
    return recorder.trace(outputs, show_saved)


def written_tensors(roots, live: dict) -> list:
    """Every tensor a backward from `roots` may write .grad into: the leaves and any
    tensor that called retain_grad() on the way."""
    found = {id(t): t for t in live.values()}
    for node in _collect([t.grad_fn for t in roots if t.grad_fn is not None]):
        hooks = getattr(node, "hooks", None)
        if hooks is not None and hooks.retains:
            for ref in hooks.retains.values():
                t = ref()
                if t is not None:
                    found[id(t)] = t
    for t in roots:
        found[id(t)] = t
    return list(found.values())

