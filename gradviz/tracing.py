"""Trace: a plain, engine-free snapshot of a graph and of a backward run (module named
`tracing` because `gradviz.trace` is torch.trace, the matrix trace).

Nodes and edges get stable ids (n0, n1, ... / e0, e1, ...) in creation order, so
every frame of an animation, the diagram, the HTML player and the widget all
speak of the same ids. The Recorder listens to the engine's events; `build_trace`
walks grad_fn from the roots. The torch bridge produces the same Trace.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import backend, events

PREVIEW_MAX = 16   # tensors up to this many elements show their values


@dataclass
class Preview:
    """What a label can say about a tensor: shape, dtype, and its values or a summary."""
    shape: tuple
    dtype: str
    device: str = "cpu"
    values: np.ndarray | None = None     # a copy, when numel <= PREVIEW_MAX
    stats: tuple | None = None           # (min, mean, max) otherwise

    @classmethod
    def of(cls, array, limit: int = PREVIEW_MAX) -> "Preview | None":
        if array is None:
            return None
        if not hasattr(array, "shape"):
            array = np.asarray(array)
        dev = str(backend.device_of(array))
        a = backend.to_numpy(array)
        shape = tuple(a.shape)
        dtype = str(a.dtype)
        if a.size <= limit:
            return cls(shape, dtype, dev, values=np.array(a, copy=True))
        if a.size and a.dtype.kind in "fiub":
            af = a.astype(np.float64)
            return cls(shape, dtype, dev, stats=(float(af.min()), float(af.mean()), float(af.max())))
        return cls(shape, dtype, dev)


@dataclass
class TraceNode:
    id: str                      # stable: n0, n1, ...
    kind: str                    # "op" | "accumulate" | "leaf" | "output" | "saved"
    name: str                    # MulBackward0, AccumulateGrad, or the tensor's name
    formula: str = ""
    vjp_formulas: tuple = ()
    value: Preview | None = None  # the op's output (or the tensor's value)
    grad: Preview | None = None   # a leaf's .grad after the run; None: not computed yet
    scope: tuple = ()
    order: int = 0               # derivative order: 1 for nodes built by a create_graph backward
    engine_id: int | None = None  # the engine's node counter (not drawn)
    ref: Any = field(default=None, repr=False, compare=False)  # the live grad_fn / tensor, when known


@dataclass
class TraceEdge:
    id: str                      # stable: e0, e1, ...
    src: str                     # the input side (where the gradient ends up)
    dst: str                     # the consumer (where the gradient comes from)
    slot: int = 0                # which input of dst
    shape: tuple | None = None   # the shape that flows forward (and the gradient's shape backward)
    output_nr: int = 0           # which output of src flows (ops like split have several)


@dataclass
class Accumulation:
    node: str                    # the leaf (or retained tensor) node id whose .grad changed
    contribution: Preview
    total: Preview
    before: Preview | None       # .grad before this step (None: it was None)


@dataclass
class TraceStep:
    index: int
    node: str                    # the node that ran
    grad_in: tuple               # Preview per output of the node (ḡ received)
    flows: tuple                 # (edge id, Preview of the gradient sent, axes summed for broadcasting)
    accumulations: tuple = ()
    hooks: tuple = ()            # hook names that fired
    ref: Any = field(default=None, repr=False, compare=False)   # the engine Step


@dataclass
class Trace:
    nodes: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    steps: list = field(default_factory=list)
    forward: list = field(default_factory=list)   # op node ids in the order the forward created them
    roots: tuple = ()                              # output node ids

    def node(self, node_id: str) -> TraceNode:
        return self._index()[node_id]

    def _index(self) -> dict:
        return {n.id: n for n in self.nodes}

    def edges_into(self, node_id: str) -> list:
        return sorted((e for e in self.edges if e.dst == node_id), key=lambda e: e.slot)


# -- walking a graph ----------------------------------------------------------------
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


def _tensor_name(tensor, names: dict) -> str | None:
    """The name to show for tensor, as a string (names={123: x} and x.name = 42 are allowed)."""
    for name, t in names.items():
        if t is tensor:
            return str(name)
    return None if tensor.name is None else str(tensor.name)


def build_trace(roots, names: dict | None = None, show_saved: bool = False, order_of=None) -> Trace:
    """The Trace of the graph behind `roots` (tensors), walking grad_fn."""
    from .autograd.graph import AccumulateGrad
    names = dict(names or {})
    roots = tuple(roots)
    # a leaf's root is its AccumulateGrad, made on demand as backward() would
    root_nodes = [t.grad_fn if t.grad_fn is not None else (t._accumulator() if t.requires_grad else None)
                  for t in roots]
    trace = Trace()
    ids: dict = {}
    counter = iter(range(10 ** 9))

    def add(kind, name, **kw):
        node = TraceNode(f"n{next(counter)}", kind, name, **kw)
        trace.nodes.append(node)
        return node

    edge_counter = iter(range(10 ** 9))

    def link(src, dst, slot, shape, output_nr=0):
        trace.edges.append(TraceEdge(f"e{next(edge_counter)}", src, dst, slot, shape, output_nr))

    collected = _collect(root_nodes)
    for node in collected:
        if isinstance(node, AccumulateGrad):
            var = node.variable
            leaf = add("leaf", _tensor_name(var, names) or "", value=Preview.of(var._data),
                       grad=Preview.of(None if var.grad is None else var.grad._data), ref=var)
            acc = add("accumulate", "AccumulateGrad", formula=node.op.formula, vjp_formulas=node.op.vjp_formulas,
                      engine_id=node.id, ref=node)
            ids[node] = acc.id
            link(leaf.id, acc.id, 0, tuple(var.shape))
            continue
        out = node.out_data if node.op.n_outputs == 1 else None
        value = Preview.of(out) if out is not None else _freed_preview(node)
        tn = add("op", node.op.torch_name, formula=node.op.formula, vjp_formulas=node.op.vjp_formulas,
                 value=value, scope=tuple(node.scope),
                 order=order_of(node) if order_of else 0, engine_id=node.id, ref=node)
        ids[node] = tn.id
    for node in collected:
        for slot, (nxt, nr) in enumerate(node.next_functions):
            if nxt is not None:
                link(ids[nxt], ids[node], slot, tuple(node.input_shape(slot)), nr)
        if show_saved and not node.freed and not isinstance(node, AccumulateGrad):
            for slot, arg in enumerate(node.op.arg_names):
                if arg in node.op.saves and slot < len(node.inputs):
                    t = node.inputs[slot]
                    saved = add("saved", f"{arg}", value=Preview.of(t._data), ref=t)
                    link(saved.id, ids[node], -1, tuple(t.shape))
            if "result" in node.op.saves:
                saved = add("saved", "result", value=Preview.of(node.out_data))
                link(saved.id, ids[node], -1, tuple(node.out_data.shape) if node.op.n_outputs == 1 else None)
    root_ids = []
    for t, rn in zip(roots, root_nodes):
        if rn is None:
            continue
        out = add("output", _tensor_name(t, names) or "", value=Preview.of(t._data),
                  grad=Preview.of(None if t._grad is None else t._grad._data), ref=t)
        link(ids[rn], out.id, 0, tuple(t.shape), t.output_nr if t.grad_fn is not None else 0)
        root_ids.append(out.id)
    trace.roots = tuple(root_ids)
    trace.forward = [n.id for n in trace.nodes if n.kind in ("op", "accumulate")]
    trace._by_engine = ids
    return trace


def _freed_preview(node) -> Preview | None:
    """A node freed by backward keeps its output's shape and dtype, not its values."""
    meta = getattr(node, "out_meta", None)
    if meta is None or node.op.n_outputs != 1:
        return None
    return Preview(tuple(meta.shape), str(meta.dtype), str(backend.device_of(meta)))


def add_steps(trace: Trace, steps, before_grads: dict | None = None) -> Trace:
    """Attach recorded engine Steps (from backward_steps) to a Trace of the same graph."""
    ids = trace._by_engine
    edge_of = {(e.dst, e.slot): e.id for e in trace.edges}
    tensor_node = {id(n.ref): n.id for n in trace.nodes if n.kind in ("leaf", "output") and n.ref is not None}
    before = dict(before_grads or {})
    for step in steps:
        nid = ids.get(step.node)
        if nid is None:
            continue
        flows = []
        for slot, g in enumerate(step.grad_inputs):
            if g is not None and (nid, slot) in edge_of:
                axes = step.reduced_axes[slot] if slot < len(step.reduced_axes) else ()
                flows.append((edge_of[(nid, slot)], Preview.of(_raw(g)), tuple(axes)))
        accs = []
        for tensor, contribution, total in step.accumulated:
            key = tensor_node.get(id(tensor))
            if key is None:
                continue
            accs.append(Accumulation(key, Preview.of(_raw(contribution)), Preview.of(_raw(total)),
                                     before.get(key)))
            before[key] = Preview.of(_raw(total))
        hooks = tuple(getattr(h, "__name__", "hook") for _, h, _, _ in step.hooks)
        trace.steps.append(TraceStep(len(trace.steps), nid, tuple(Preview.of(_raw(g)) for g in step.grad_outputs),
                                     tuple(flows), tuple(accs), hooks, ref=step))
    for n in trace.nodes:
        if n.kind in ("leaf", "output") and n.ref is not None and n.ref._grad is not None:
            n.grad = Preview.of(n.ref._grad._data)
    return trace


def _raw(g):
    return getattr(g, "_data", g)


class Recorder:
    """Listens to the engine's events while active: forward node order, backward steps, and
    the derivative order of nodes built by a create_graph backward (pass `order_of` to
    build_trace or draw to colour them)."""

    def __init__(self):
        self.created: list = []     # engine Nodes in creation order
        self.steps: list = []       # engine Steps in execution order
        self.orders: dict = {}      # engine Node -> derivative order, for nodes a backward built
        self._open = 0              # backward passes started and not finished
        self._pending: list = []    # nodes created since the last step of an open backward
        self._unsubscribe = None

    def __enter__(self):
        self._unsubscribe = events.subscribe(self._on_event)
        return self

    def __exit__(self, *exc):
        self._unsubscribe()
        return False

    def order_of(self, node) -> int:
        return self.orders.get(node, 0)

    def _on_event(self, event) -> None:
        if isinstance(event, events.NodeCreated):
            self.created.append(event.node)
            if self._open:
                self._pending.append(event.node)
        elif isinstance(event, events.NodeExecuted):
            self.steps.append(event.step)
            # a node built while a step ran comes from that node's VJP: one order higher
            order = self.order_of(event.step.node) + 1
            for node in self._pending:
                self.orders[node] = order
            self._pending.clear()
        elif isinstance(event, events.BackwardStarted):
            self._open += 1
        elif isinstance(event, events.BackwardFinished):
            self._open = max(0, self._open - 1)
            self._pending.clear()


def record_backward(roots, gradient=None, names=None, retain_graph=True, show_saved=False) -> Trace:
    """Run backward over `roots` step by step and return the Trace with every step."""
    from .autograd.engine import backward_steps
    roots = tuple(roots)
    trace = build_trace(roots, names, show_saved)
    before = {n.id: n.grad for n in trace.nodes if n.kind == "leaf"}
    run = backward_steps(roots, gradient, retain_graph=retain_graph)
    return add_steps(trace, list(run), before)
