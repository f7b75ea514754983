"""Forward mode as a Trace: the ops that pushed a tangent forward, recorded from TangentComputed events.

A `ForwardRecorder` listens while forward-mode code runs (`gradviz.func.jvp`,
`autograd.functional.jvp` or `hvp`, or `forward_ad` dual tensors by hand) and builds a
`ForwardTrace`: a plain Trace of the graph the tangents ran through (the inputs that carry
a tangent as leaves, one op node per op that pushed one, the outputs) plus `tangents`, one
`TangentStep` per op in the order it ran, with the tangent that came in on each input edge,
the tangent it sent out and, for small tensors, its local Jacobian J (so ṫ_out = J ṫ_in can
be shown with numbers). Forward mode needs no grad_fn, so the graph is built from the events
themselves: a tensor's producer is found by the key forward mode itself uses for it. Its tensors
are named as a backward Trace's are (tracing.name_tensors), so both directions write one symbol.

Like a Trace, a ForwardTrace holds plain values only and round-trips through JSON.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from . import events
from .code_lines import code_around, user_source
from .autograd import forward_ad
from .autograd.describe import op_constants
from .autograd.graph import _building
from .autograd.grad_mode import no_grad
from .previews import Preview
from .records import EdgeRecord, InputRecord, NodeRecord, for_trace, from_json, to_json
from .tracing import Trace, name_tensors
from .creation import zeros_like

JACOBIAN_LIMIT = 64   # materialize an op's local Jacobian when its input and output have at most this many elements


@dataclass
class TangentStep:
    index: int
    node: str                    # the op node that pushed the tangent
    tangents_in: tuple[Preview | None, ...]    # per input slot: the tangent that came in (None: the slot has none)
    tangents_out: tuple[Preview | None, ...]   # per output: the tangent sent on
    rule: str = "explicit"       # how the JVP was obtained (forward_ad.rule_kind)
    jacobians: tuple | None = None   # per input slot: ∂out/∂in as nested lists (None where not small)


@dataclass
class ForwardTrace(Trace):
    tangents: list = field(default_factory=list)   # TangentStep per op, in the order forward mode ran them
    seeds: tuple = ()                              # (leaf node id, Preview of the tangent it was given)

    def to_json(self) -> dict:
        data = super().to_json()
        data["tangents"] = to_json(self.tangents)
        data["seeds"] = to_json(self.seeds)
        return data

    @classmethod
    def from_json(cls, data: dict) -> "ForwardTrace":
        base = Trace.from_json(data)
        steps = [from_json(TangentStep, s) for s in data.get("tangents", ())]
        seeds = tuple((n, Preview.from_json(p)) for n, p in data.get("seeds", ()))
        return cls(**{f: getattr(base, f) for f in base.__dataclass_fields__}, tangents=steps, seeds=seeds)


@dataclass
class _Record:
    """One TangentComputed, kept as plain values plus the keys that link it to its neighbours."""
    op: object
    in_keys: tuple               # forward_ad key per input
    out_keys: tuple
    tangents_in: tuple           # Preview or None per input
    tangents_out: tuple          # Preview per output
    values_in: tuple             # Preview per input (a leaf's value)
    value: Preview | None        # the (single) output's value
    shapes_in: tuple
    constants: tuple
    rule: str
    jacobians: tuple | None
    source: tuple | None
    order: int                   # derivative order: 1 for an op a create_graph backward ran (hvp's gradient)


class ForwardRecorder:
    """Listens (on its own thread) for TangentComputed events and builds a ForwardTrace.

    `jacobians=True` also runs each small op's JVP rule on one-hot tangents, giving the local
    Jacobian J whose product with the incoming tangent the op applied."""

    def __init__(self, jacobians: bool = True, sources: bool = True):
        self.jacobians = jacobians
        self.sources = sources
        self.records: list = []
        self._keep: list = []          # the tensors the keys name stay alive, so no id() is reused
        self._unsubscribe = None

    def __enter__(self) -> "ForwardRecorder":
        self._unsubscribe = events.subscribe(self.feed, thread=threading.get_ident())
        return self

    def __exit__(self, *exc) -> bool:
        self._unsubscribe()
        return False

    def feed(self, event) -> None:
        if type(event) is not events.TangentComputed:
            return
        op, inputs, outputs = event.op, event.inputs, event.outputs
        self._keep.append(event)
        out_tangents = []
        for o, t in zip(outputs, event.tangents_out):
            attached = forward_ad.tangent_of(o)    # as the next op sees it (cast and expanded to the output)
            out_tangents.append(Preview.of(attached if attached is not None else t))
        in_info = tuple(InputRecord(None if t is None else 0, 0, tuple(x.shape))
                        for x, t in zip(inputs, event.tangents_in))
        self.records.append(_Record(
            op, tuple(forward_ad._key(x) for x in inputs), tuple(forward_ad._key(o) for o in outputs),
            tuple(None if t is None else Preview.of(t) for t in event.tangents_in),
            tuple(out_tangents),
            tuple(Preview.of(x._data) for x in inputs),
            Preview.of(outputs[0]._data) if len(outputs) == 1 else None,
            tuple(tuple(x.shape) for x in inputs), op_constants(op, event.params, inputs, in_info), event.rule,
            self._local_jacobians(event) if self.jacobians else None,
            user_source(2) if self.sources else None, _building.now))

    @staticmethod
    def _local_jacobians(event) -> tuple | None:
        """Per input slot with a tangent: J = ∂out/∂in, column k the op's JVP of the one-hot e_k (the
        rule itself, so J is exactly the map the op applied). None for multi-output or large ops."""
        op, inputs, outputs = event.op, event.inputs, event.outputs
        if len(outputs) != 1 or outputs[0].numel() > JACOBIAN_LIMIT:
            return None
        out = outputs[0]
        found = []
        with no_grad():
            for slot, (x, t) in enumerate(zip(inputs, event.tangents_in)):
                if t is None or x.numel() > JACOBIAN_LIMIT:
                    found.append(None)
                    continue
                columns = []
                for k in range(x.numel()):
                    e = zeros_like(x)
                    e._data.reshape(-1)[k] = 1
                    tangents = tuple(e if j == slot else None for j in range(len(inputs)))
                    col = forward_ad._jvp(op, tangents, out, inputs, event.params)
                    col = np.zeros(out.numel()) if col is None else \
                        np.broadcast_to(np.asarray(col._data, dtype=np.float64), tuple(out.shape)).reshape(-1)
                    columns.append(col)
                found.append((np.stack(columns, axis=1) + 0.0).tolist() if columns else None)   # no -0.0
        return tuple(found)

    def _key_of(self, tensor, producer: dict):
        """The key of the recorded output that `tensor` is, or a detached copy of (sharing its memory):
        jvp and hvp hand back their results detached."""
        key = forward_ad._key(tensor)
        if key in producer:
            return key
        for event, rec in zip(reversed(self._keep), reversed(self.records)):
            for out, out_key in zip(event.outputs, rec.out_keys):
                if tuple(out.shape) == tuple(tensor.shape) and np.may_share_memory(out._data, tensor._data):
                    return out_key
        return key

    # -- the Trace ---------------------------------------------------------------------------
    def trace(self, outputs=(), leaf_names: dict | None = None, tensor_names: dict | None = None,
              end_names: tuple = ()) -> ForwardTrace:
        """The ForwardTrace of what was recorded. outputs: (name, tensor) for the results to draw
        (none: every tensor no recorded op consumed); leaf_names: (name, tensor) pairs: an input is drawn
        with the name of the tensor that is its primal or its tangent or shares their memory (how a dual
        tensor made inside jvp() is known by the learner's name);
        tensor_names: forward_ad key -> the learner's name of that tensor (an input, one with no tangent
        read by an op, or an op's result);
        end_names: without outputs, the names of the unconsumed tensors drawn as results, in order."""
        leaf_names = list(leaf_names or ())
        tensor_names = tensor_names or {}
        trace = ForwardTrace()
        producer: dict = {}     # forward_ad key -> (node id, output_nr)
        leaves: dict = {}       # forward_ad key of an input that carries a tangent -> leaf node id
        consumed = set()
        counter = iter(range(10 ** 12))
        edges = iter(range(10 ** 12))

        def add(node: NodeRecord) -> NodeRecord:
            node = for_trace(node, id=f"n{next(counter)}")
            trace.nodes.append(node)
            return node

        def link(src, dst, slot, shape, output_nr=0):
            trace.edges.append(EdgeRecord(f"e{next(edges)}", src, dst, slot, shape, output_nr))

        seeds = []
        input_keys: dict = {}   # (node id, slot) -> the key of a tensor read without a tangent (one name per key)
        for k, rec in enumerate(self.records):
            slots = []
            for slot, key in enumerate(rec.in_keys):
                if key in producer:
                    slots.append((slot, *producer[key]))
                elif rec.tangents_in[slot] is not None:
                    if key not in leaves:
                        event = self._keep[k]
                        name = _name_of(leaf_names, event.inputs[slot], event.tangents_in[slot]) or \
                            tensor_names.get(key, "")
                        leaf = add(NodeRecord(kind="leaf", name=name, value=rec.values_in[slot]))
                        leaves[key] = leaf.id
                        seeds.append((leaf.id, rec.tangents_in[slot]))
                    slots.append((slot, leaves[key], 0))
            op = rec.op
            linked = {slot for slot, _, _ in slots}
            in_names = tuple("" if slot in linked else tensor_names.get(key, "")   # W of W @ x: no tangent
                             for slot, key in enumerate(rec.in_keys))
            node = add(NodeRecord.of_op(
                op, len(rec.in_keys), name=op.name, value=rec.value, constants=rec.constants, source=rec.source,
                order=rec.order, tensor_name=tensor_names.get(rec.out_keys[0], "") if len(rec.out_keys) == 1 else "",
                in_names=in_names))
            input_keys.update({(node.id, slot): key for slot, key in enumerate(rec.in_keys) if slot not in linked})
            for slot, src, nr in slots:
                link(src, node.id, slot, rec.shapes_in[slot], nr)
                consumed.add(rec.in_keys[slot])
            for nr, key in enumerate(rec.out_keys):
                producer[key] = (node.id, nr)
            trace.tangents.append(TangentStep(k, node.id, rec.tangents_in, rec.tangents_out, rec.rule,
                                              rec.jacobians))
        if outputs:
            ends = [(name, self._key_of(t, producer), t) for name, t in outputs]
        else:
            ends = [(name, key, None) for key, name in zip([k for k in producer if k not in consumed],
                                                          [*end_names, *[""] * len(producer)])]
        roots = []
        for name, key, tensor in ends:
            if key not in producer:
                continue
            src, nr = producer[key]
            made = next(r for r in self.records if key in r.out_keys)
            value = Preview.of(tensor._data) if tensor is not None else (made.value if nr == 0 else None)
            out = add(NodeRecord(kind="output", name=name, value=value))
            link(src, out.id, 0, None if value is None else tuple(value.shape), nr)
            roots.append(out.id)
        trace.roots = tuple(roots)
        trace.seeds = tuple(seeds)
        trace.forward = [s.node for s in trace.tangents]
        trace.code = code_around([n.source for n in trace.nodes if n.source is not None])
        name_tensors(trace, input_keys)   # one naming for both directions: the Recorder's rules and code
        return trace


def _name_of(named: list, primal, tangent) -> str:
    """The name among (name, tensor) of the tensor that is `primal` or `tangent` or shares memory with one."""
    for name, t in named:
        if t is primal or t is tangent:
            return str(name)
    for name, t in named:
        for mine in (primal, tangent):
            if mine is not None and tuple(mine.shape) == tuple(t.shape) and \
                    np.may_share_memory(getattr(mine, "_data", None), getattr(t, "_data", None)):
                return str(name)
    return ""
