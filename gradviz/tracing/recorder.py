"""The Recorder: events in, a Trace out (the one place a Trace is built).

Events reach a Recorder two ways: live, while it listens to the bus (`with Recorder()`), or fed
by an origin that is not the bus (a graph replayed by replay.py, the torch bridge).
"""
from __future__ import annotations

import math
import threading
from dataclasses import dataclass
import numpy as np

from .. import events
from ..code_lines import code_around
from ..autograd.describe import step_info
from ..autograd.engine import broadcast_axes
from ..autograd.graph import ACCUMULATE_GRAD
from ..records import EdgeRecord, Flow, InputRecord, NodeRecord, StepRecord, TensorRecord, for_trace
from .names import name_tensors
from .trace import Trace


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
        self.implicit_seed: bool | None = None   # of the last backward heard
        self.tensor_names: dict = {}              # node key -> {output_nr: the name of the tensor it made}

    def trace_id(self, key):
        """The current Trace's id of the node with this key (None for a node it does not hold)."""
        return self._ids.get(key)

    def __enter__(self):
        self._unsubscribe = events.subscribe(self.feed, thread=threading.get_ident())
        return self

    def __exit__(self, *exc):
        self._unsubscribe()
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
            info = event.info if event.info is not None else step_info(event.step, self.jacobians)
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
              ctx_saved: bool = False, into: Trace | None = None) -> Trace:
        """The Trace of the graph behind `outputs` (Output records; none: every node recorded),
        with the steps recorded so far. leaf_names: AccumulateGrad key -> a name for its leaf,
        for leaves named only after they were recorded. ctx_saved: the tensors custom Functions
        saved, as torchviz draws them (a saved leaf is its leaf node; slot -2). into: an empty
        Trace to fill (a LazyTrace being made) instead of a new one."""
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
        trace = Trace() if into is None else into
        trace.implicit_seed = self.implicit_seed
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
        input_keys: dict = {}      # (node id, slot) -> the origin's key of a tensor read there without an edge
        ordered = sorted(keys, key=_sort_key)
        for key in ordered:
            if key in leaves and key not in self.nodes:
                var = leaves[key]
                leaf = add(NodeRecord(kind="leaf", name=leaf_names.get(key, var.name), value=var.value,
                                      grad=var.grad, source=var.source))
                acc = add(_ACCUMULATE, source=var.source)   # its step shows the line that created the leaf
                ids[key] = acc.id
                written[("leaf", key)] = leaf.id
                link(leaf.id, acc.id, 0, tuple(var.shape))
                continue
            info = self.nodes[key]
            named = self.tensor_names.get(key, {})
            names = tuple(named.get(nr, "") for nr in range(max(named, default=0) + 1))
            node = add(info, order=self.orders.get(key, 0), tensor_name=names[0],
                       tensor_names=names if len(names) > 1 else (), in_names=tuple(i.name for i in info.inputs))
            ids[key] = node.id
            input_keys.update({(node.id, slot): i.tensor for slot, i in enumerate(info.inputs)
                               if i.tensor is not None})
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
        name_tensors(trace, input_keys)
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


# every leaf's AccumulateGrad node, less its id and source (made once: of_op costs more than copying it)
_ACCUMULATE = NodeRecord.of_op(ACCUMULATE_GRAD, 1, kind="accumulate", symbols=("x",), out_symbol="x")


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
    if math.prod(in_shape) >= math.prod(out_shape):   # (np.prod costs more than the rest of a small node)
        return ()
    shapes = [tuple(i.shape) for i in info.inputs if i.shape is not None]
    if len(shapes) > 1:
        try:
            if tuple(np.broadcast_shapes(*shapes)) != tuple(out_shape):
                return ()
        except ValueError:
            return ()
    return broadcast_axes(in_shape, out_shape) or ()
