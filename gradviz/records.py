"""The plain records a graph and a backward run are described with, shared by the events and
the Trace: a node, an edge, a step (with the gradients that flowed, the accumulations and the
hooks it ran), a leaf or output tensor and a node's input slot. Their tensors are Previews.

The origin of a record (autograd.describe's `describe_node` and `step_info`, the torch bridge) fills it
with its own keys (`key`, `target`) and the graph's wiring a Recorder reads (`inputs`, `sent`, ...);
the Recorder gives it the Trace's stable ids with `for_trace`, which clears those fields, so a Trace
holds exactly what its JSON holds. `to_json` / `from_json` turn any record into JSON and back from
its fields and their types (Previews through their own codec), with the same keys as its fields.
A PendingNodeRecord is a NodeRecord whose constants and attribute texts its origin makes when a view
first reads them.
"""
from __future__ import annotations

import functools
import threading
import types
import typing
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, NamedTuple

from .previews import Preview


def origin_field(default: Any = None) -> Any:
    """A field the record's origin fills with its own keys or the graph's wiring: the Recorder reads
    it, a Trace and its JSON leave it out."""
    return field(default=default, metadata={"json": False})


@dataclass
class TensorRecord:
    """A leaf or an output tensor, as a view sees it."""
    name: str
    value: Preview | None
    grad: Preview | None
    shape: tuple
    source: tuple | None = None   # (file, line, text) of the user code that made it require grad (a leaf)


@dataclass
class InputRecord:
    """One input slot of a node: where its gradient goes (next_functions) and what flowed in."""
    producer: Any            # the key of the node that produced the input, or None (a constant / no grad)
    output_nr: int
    shape: tuple | None
    leaf: TensorRecord | None = None    # when `producer` is a leaf's AccumulateGrad
    constant: Preview | None = None     # a small input that needs no gradient (the 2 in x * 2)
    name: str = ""                      # the learner's name for an input that needs no gradient (a target)
    tensor: Any = None                  # the origin's key of such an input (the tensor's identity): a tensor
                                        # that several nodes read without a gradient is one tensor, one symbol


@dataclass
class NodeRecord:
    """One node: an op (a grad_fn), a leaf's AccumulateGrad, a leaf, an output or a saved tensor."""
    id: str = ""                 # the Trace's stable id: n0, n1, ...
    kind: str = "op"             # "op" | "accumulate" | "leaf" | "output" | "saved"
    name: str = ""               # MulBackward0, AccumulateGrad, or the tensor's name
    formula: str = ""
    vjp_formulas: tuple = ()
    value: Preview | None = None  # the op's output (or the tensor's value)
    grad: Preview | None = None   # a leaf's .grad after the run; None: not computed yet
    scope: tuple = ()
    order: int = 0               # derivative order: 1 for nodes built by a create_graph backward
    symbols: tuple = ()          # the symbols of this node's inputs, one per input slot
    out_symbol: str = "c"
    out_symbols: tuple = ()      # an op of several outputs: its record's symbol for each ($c, $c1, ...)
    latex: str = ""
    vjp_latex: tuple = ()
    constants: tuple[tuple, ...] = ()   # (name, value): the 2 of x * 2, the 3 of pow(3), dim, keepdim, alpha
    attrs: tuple[tuple, ...] = ()       # (name, text): the grad_fn's arguments and saved tensors (show_attrs)
    source: tuple | None = None  # (file, line, text) of the user code that created it
    tensor_name: str = ""        # an op node: the learner's name for the tensor it made (names=, or a variable)
    tensor_names: tuple = ()     # a node of several outputs: the learner's name for each ("" where none)
    # The recording's one symbol per tensor (name_tensors): an op node's per output, and per input
    # slot that has no edge and is no constant (a tensor that does not require grad); "" elsewhere.
    # A leaf's symbol is its name; an AccumulateGrad's and an output's, its input's.
    out_names: tuple = ()
    in_names: tuple = ()
    # per input slot, a tensor input that needs no gradient (the y of x * y): its values when it has
    # at most CONSTANT_VALUES elements, else its shape and dtype; None for the other slots
    in_values: tuple[Preview | None, ...] = ()
    # what the origin saw of the graph, read by the Recorder
    key: Any = origin_field()           # the origin's stable node key (gradviz: the node counter)
    broadcasts: tuple | None = origin_field(())   # input slots whose gradient may be summed (None: every slot)
    inputs: tuple = origin_field(())    # InputRecord per input slot
    saved: tuple = origin_field(())     # (name, Preview) the node saved for its backward
    ctx_saved: tuple = origin_field(())  # (Preview, AccumulateGrad key of a saved leaf or None): a custom
                                         # Function's ctx.saved_tensors, which torchviz always draws
    n_outputs: int = origin_field(1)

    @classmethod
    def of_op(cls, op, n_inputs: int, **values) -> "NodeRecord":
        """A node of the op record `op` with `n_inputs` inputs: the display fields copied from the
        record (the one place they are), then `values` (which win). A loss reads as its reduction says."""
        op = op.reduced(dict(values.get("constants", ())).get("reduction"))
        shown = dict(name=op.torch_name, formula=op.formula, vjp_formulas=tuple(op.vjp_formulas),
                     symbols=op.input_symbols(n_inputs), out_symbol=op.out_symbol, out_symbols=op.out_symbols, latex=op.latex,
                     vjp_latex=op.vjp_latex, broadcasts=op.broadcasts, n_outputs=op.n_outputs)
        return cls(**{**shown, **values})

    def vjp_formula(self, slot: int) -> str:
        """The VJP formula for input `slot` (ops over a list of tensors share one formula)."""
        if not self.vjp_formulas:
            return "ḡ · J"
        return self.vjp_formulas[min(slot, len(self.vjp_formulas) - 1)]

    def symbol(self, slot: int) -> str:
        return self.symbols[slot] if 0 <= slot < len(self.symbols) else f"x{slot}"

    def constant_slots(self) -> frozenset:
        """The input slots `constants` gives as numbers (the 2 of x * 2)."""
        return frozenset(int(k) for k, _ in self.constants if k.isdigit())


class PendingNodeRecord(NodeRecord):
    """A NodeRecord whose attribute texts and constants (`PENDING`, what an origin takes longest to
    read) are made when one of them is first read, by `complete()`: a dict of those fields (on
    whichever thread reads first; another reading meanwhile waits). The origin reads them from what
    it kept at record time, so they are the fields it would have given at once. It equals, copies
    and pickles as the plain NodeRecord of the same fields."""

    def __init__(self, complete, constant_slots: frozenset, **values):
        # the fields set as NodeRecord's __init__ sets them, without its call of 28 arguments
        unknown = values.keys() - _field_names(NodeRecord)
        if unknown:
            raise TypeError(f"NodeRecord has no field {sorted(unknown)[0]!r}")
        self.__dict__.update(_defaults(NodeRecord), **values, _complete=complete, _slots=constant_slots)

    def constant_slots(self) -> frozenset:
        """Known before the constants are made (a Trace names the inputs without an edge)."""
        return self.__dict__["_slots"]

    def _made(self) -> None:
        with _COMPLETING:
            made = self.__dict__
            complete = made.get("_complete")
            if complete is None:   # completed by another thread meanwhile
                return
            values = complete()
            made.update({name: values[name] for name in PENDING})
            del made["_complete"]   # last: another thread sees the fields whole

    def __eq__(self, other):
        if not isinstance(other, NodeRecord):
            return NotImplemented
        return all(getattr(self, f.name) == getattr(other, f.name) for f in fields(NodeRecord))

    __hash__ = None

    def __reduce__(self):
        return NodeRecord, tuple(getattr(self, f.name) for f in fields(NodeRecord))


PENDING = ("constants", "attrs")
_COMPLETING = threading.RLock()


def _pending_field(name: str) -> property:
    def get(self):
        made = self.__dict__
        if "_complete" in made:
            self._made()
        return made[name]

    def put(self, value) -> None:
        made = self.__dict__
        if "_complete" in made:
            self._made()
        made[name] = value
    return property(get, put)


for _name in PENDING:
    setattr(PendingNodeRecord, _name, _pending_field(_name))


@dataclass
class EdgeRecord:
    id: str                      # stable: e0, e1, ...
    src: str                     # the input side (where the gradient ends up)
    dst: str                     # the consumer (where the gradient comes from)
    slot: int = 0                # which input of dst (-1: a saved tensor; -2: one a custom Function's ctx saved)
    shape: tuple | None = None   # the shape that flows forward (and the gradient's shape backward)
    output_nr: int = 0           # which output of src flows (ops like split have several)
    axes: tuple = ()             # axes a gradient along it is summed over to undo broadcasting


class Flow(NamedTuple):
    """A gradient sent along an edge (a tuple, so `edge_id, grad, axes = flow` reads it)."""
    edge: str                    # the edge id
    grad: Preview | None
    axes: tuple = ()             # axes summed to undo broadcasting


@dataclass
class Accumulation:
    """A .grad written by a step."""
    node: str = ""               # the Trace's id of the leaf (or retained tensor) node whose .grad changed
    contribution: Preview | None = None
    total: Preview | None = None
    before: Preview | None = None   # .grad before this step (None: it was None)
    target: Any = origin_field()    # ("leaf", AccumulateGrad key) or ("output", grad_fn key, output_nr)


@dataclass
class Hook:
    """A hook that fired on a step."""
    name: str
    output_nr: int | None
    before: Preview | None
    after: Preview | None        # None: the hook left the gradient as it was


@dataclass
class StepRecord:
    """One VJP run by a backward."""
    index: int = 0               # its position in the Trace's steps
    node: str = ""               # the Trace's id of the node that ran
    grad_in: tuple[Preview | None, ...] = ()   # Preview per output of the node (ḡ received)
    flows: tuple[Flow, ...] = ()               # per edge the gradient was sent along
    accumulations: tuple[Accumulation, ...] = ()
    hooks: tuple[Hook, ...] = ()               # per hook that fired
    jacobians: tuple | None = None   # per input slot: the local Jacobian (arrays; nested lists in a Trace) or None
    key: Any = origin_field()        # the origin's key of the node that ran
    sent: tuple = origin_field(())   # (input slot, Preview, axes summed) per slot a gradient was sent to


def for_trace(record, **ids):
    """The record as a Trace keeps it: `ids` set, its origin's keys and wiring cleared. A copy of
    its fields, not a call of its __init__ (`dataclasses.replace` costs more than a small node's VJP)."""
    kind = type(record)
    if not ids.keys() <= _field_names(kind):
        raise TypeError(f"{kind.__name__} has no field {sorted(ids.keys() - _field_names(kind))[0]!r}")
    copied = object.__new__(kind)
    copied.__dict__.update(record.__dict__)
    copied.__dict__.update(_cleared(kind), **ids)
    return copied


@functools.cache
def _defaults(kind) -> dict:
    """name -> default of every field of a record class (NodeRecord's are all plain, immutable values)."""
    return {f.name: f.default for f in fields(kind)}


@functools.cache
def _cleared(kind) -> dict:
    """name -> default of the fields of a record class that a Trace leaves out."""
    return {f.name: f.default for f in fields(kind) if not f.metadata.get("json", True)}


@functools.cache
def _field_names(kind) -> frozenset:
    return frozenset(f.name for f in fields(kind))


# -- JSON ---------------------------------------------------------------------------------------
def to_json(value):
    """A record (or a value in one) as JSON data: Previews by their codec, records as a dict of
    the fields a Trace keeps, tuples as lists."""
    if isinstance(value, Preview):
        return value.to_json()
    if is_dataclass(value):
        return {f.name: to_json(getattr(value, f.name)) for f in _json_fields(type(value))}
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    return value


def from_json(kind, data):
    """The value of type `kind` (a record class, Preview, or a field's type) that `to_json` wrote
    as `data`; a field missing from `data` (a Trace saved before it existed) gets its default."""
    if data is None:
        return None
    if isinstance(kind, types.UnionType):   # X | None
        kind = next(k for k in typing.get_args(kind) if k is not type(None))
    if kind is Preview:
        return Preview.from_json(data)
    if is_dataclass(kind):
        hints = _hints(kind)
        return kind(**{f.name: from_json(hints[f.name], data[f.name]) for f in _json_fields(kind) if f.name in data})
    if kind is Flow:
        hints = _hints(Flow)
        return Flow(*(from_json(hints[name], v) for name, v in zip(Flow._fields, data)))
    if typing.get_origin(kind) is tuple:
        return tuple(from_json(typing.get_args(kind)[0], v) for v in data)
    if kind is tuple:
        return tuple(data)   # its items stay as JSON wrote them (a constant [0, 1] stays a list)
    return data


@functools.cache
def _json_fields(kind) -> tuple:
    return tuple(f for f in fields(kind) if f.metadata.get("json", True))


@functools.cache
def _hints(kind) -> dict:
    return typing.get_type_hints(kind)
