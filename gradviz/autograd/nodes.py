"""The backward graph's nodes: Node (a tensor's grad_fn) and AccumulateGrad (a leaf's sink).

A Node keeps what its VJP needs (inputs, params, output values) until a backward
without retain_graph frees them: then, as in PyTorch, it keeps only the shapes and
dtypes of its inputs and outputs (ghosts). Ids come from a counter so diagrams stay stable.
"""
from __future__ import annotations

import itertools
import types
import weakref
from collections import OrderedDict

import numpy as _numpy
from numpy import ndarray   # one global load where np.ndarray is two, on the per-op path

from .. import backend as _backend
from ..ops.op import Op
from .anomaly import _anomaly, _forward_stack, _watch
from .hooks import NodeHooks, RemovableHandle, add_hook
from ..tensor import Tensor
from .saved import _SAVED_FOR, FREED_MESSAGE, SavedTensor, _hook_state
from .versions import _clock, modified_message

_ids = itertools.count()


class _BuildOrder:
    """The derivative order of the nodes being created: 0 in the forward, k + 1 while a create_graph
    backward runs the VJP of a node of order k (the gradient's own graph, a double backward's)."""

    __slots__ = ("now",)

    def __init__(self):
        self.now = 0


_building = _BuildOrder()


def node_order(node) -> int:
    """A node's derivative order: 0 for the forward's nodes, 1 for a gradient's own graph, ..."""
    return node.order


def ghost(array):
    """An array of `array`'s shape and dtype that holds one element (a zero-stride
    broadcast): what a freed node keeps of a tensor. NaN for floats, so a rule that
    wrongly read freed values would say so. Read-only, so NumPy's are shared."""
    if type(array) is ndarray:
        return ghost_tensor_of(array)._data
    xp = _backend.namespace_of(array)
    return xp.broadcast_to(xp.full((), _fill(array.dtype), dtype=array.dtype), array.shape)


def _fill(dtype):
    return float("nan") if dtype.kind in "fc" else 0


# dtype -> shape -> ghost Tensor: a handful of shapes per model, reused by every node (two
# lookups are cheaper than one keyed by a (shape, dtype) pair, whose hash NumPy recomputes)
_ghosts: dict = {}


def ghost_tensor_of(array):
    """A Tensor over a ghost of `array` (NumPy: one shared per shape and dtype)."""
    if type(array) is not ndarray:
        return Tensor._make(ghost(array))
    by_shape = _ghosts.get(array.dtype)
    if by_shape is None:
        by_shape = _ghosts[array.dtype] = {}
    t = by_shape.get(array.shape)
    if t is None:
        if len(by_shape) > 4096:
            by_shape.clear()
        data = _numpy.broadcast_to(_numpy.full((), _fill(array.dtype), dtype=array.dtype), array.shape)
        t = by_shape[array.shape] = Tensor._make(data)
    return t


def ghost_tensor(tensor):
    return ghost_tensor_of(tensor._data)


class Node:
    """A grad_fn. `next_functions` is PyTorch's tuple of (node or None, output_nr), kept apart as
    `next_nodes` and `next_nrs`: most output numbers are 0, so `next_nrs` is then a shared tuple, and a
    node holds one tuple of edges where it held one per edge more (every object the collector tracks
    that lives until the backward costs the forward about 0.1 µs)."""

    materialize_grads = True   # outputs no gradient reached get zeros (a custom Function may say None)

    __slots__ = ("id", "op", "next_nodes", "next_nrs", "inputs", "params", "out_data", "scope", "freed", "hooks",
                 "epoch", "saved_versions", "result_counter", "result_version", "result_of", "out_meta", "_metadata",
                 "saved", "order", "kept", "__weakref__")   # kept: set by apply for an op whose forward keeps

    def __init__(self, op: Op, inputs: tuple, params: tuple, out_data, next_nodes: tuple, next_nrs: tuple,
                 scope: tuple = ()):
        self.id = next(_ids)
        self.order = _building.now
        self.op = op
        self.inputs = inputs
        self.params = params
        self.out_data = out_data
        self.next_nodes = next_nodes   # per input: the node its gradient goes to (None: nowhere)
        self.next_nrs = next_nrs       # and which of that node's outputs it is
        self.scope = scope
        self.freed = False
        self.hooks = None
        # The version of each saved input that has a counter (one never written has none:
        # version 0), checked before the VJP reads it; the clock's reading lets a node with
        # no write anywhere since skip that check. A saved result is watched through the
        # output's counter, attached only if it is ever written.
        self.epoch = _clock.now
        saved = None
        if op.saves:
            for i in op.saved_inputs:
                counter = inputs[i]._vc
                if counter:
                    if saved is None:
                        saved = {}
                    saved[i] = counter.version
        self.saved_versions = saved
        self.result_counter = None
        self.result_of = None     # the name of a view's grad_fn, when the saved result was written through one
        self.out_meta = None
        self.saved = None        # name -> SavedTensor, once saved-tensor hooks are involved
        if _watch.on:   # saved-tensor hooks or anomaly mode somewhere: one check per node otherwise
            if _hook_state.stack and op.saves:
                self._pack_all(*_hook_state.stack[-1])
            if _anomaly.enabled:
                self.metadata["traceback_"] = _forward_stack()   # the key torch's anomaly mode uses

    @property
    def next_functions(self) -> tuple:
        return tuple(zip(self.next_nodes, self.next_nrs))

    def name(self) -> str:
        """PyTorch's name(): nodes it implements in C++'s torch::autograd namespace carry it."""
        name = self.op.torch_name
        return f"torch::autograd::{name}" if name in CPP_NODES else name

    @property
    def formula(self) -> str:
        return self.op.formula

    @property
    def metadata(self) -> dict:
        """A dict kept with the node for the user's own annotations, as torch's."""
        try:
            return self._metadata
        except AttributeError:
            self._metadata = {}
            return self._metadata

    def __repr__(self):
        return f"<{self.op.torch_name} object at {hex(id(self))}>"

    def input_shape(self, i: int) -> tuple:
        return self.inputs[i]._data.shape

    def input_dtype(self, i: int):
        """The NumPy dtype of input i."""
        return self.inputs[i]._data.dtype

    def check_versions(self) -> None:
        """PyTorch's error when a saved tensor was modified in place after it was saved."""
        epoch = self.epoch
        if epoch == _clock.now:
            return   # no in-place write anywhere since this node was made: nothing to look at
        inputs = self.inputs
        saved = self.saved_versions
        op, kept = self.op, self._kept_names()   # an input torch did not keep (y of y * 3) may be written
        for i in op.saved_inputs:
            if op.arg_names[i] not in kept:
                continue
            counter = inputs[i]._vc
            if counter:
                expected = saved.get(i, 0) if saved else 0
                if counter.version != expected:
                    t = inputs[i]
                    raise RuntimeError(modified_message(t._data, t.grad_fn, t.output_nr, counter.version, expected))
        counter = self.result_counter
        if counter is not None and counter.version != self.result_version and self.out_data is not None:
            raise RuntimeError(modified_message(self.out_data, self.result_of or self, 0, counter.version,
                                                self.result_version))

    def free(self) -> None:
        """After a backward without retain_graph: the node lets go of its tensors and
        output values, keeping only their shapes and dtypes (ghosts), as PyTorch's nodes keep
        input metadata. Ops that saved something cannot run again (any later VJP or _saved_
        access raises); the others (AddBackward0, views) can, like PyTorch's."""
        inputs, out = self.inputs, self.out_data
        # Every node of every backward passes here: one dict lookup per array when the
        # shapes were seen before (one op's arrays all live on one device). A leaf that
        # requires grad is kept (its AccumulateGrad keeps it alive anyway), and so is a
        # 0-d tensor (a scalar operand, which PyTorch's nodes keep as a Scalar).
        try:
            if inputs and type(inputs[0]._data) is not ndarray:
                raise KeyError
            ghosts = _ghosts
            n_inputs = len(inputs)
            # most nodes have one or two inputs: no list built, one dtype looked up (NumPy hashes a dtype
            # slowly), one read of each array's shape (every read of an array's attribute is a lookup)
            if n_inputs == 2 or n_inputs == 1:
                a = inputs[0]
                da = a._data
                dtype = da.dtype
                by_shape = ghosts[dtype]
                if not a._requires_grad and (shape := da.shape):   # (a 0-d shape is empty)
                    a = by_shape[shape]
                if n_inputs == 1:
                    self.inputs = (a,)
                else:
                    b = inputs[1]
                    db = b._data
                    if not b._requires_grad and (shape := db.shape):
                        b = (by_shape if db.dtype is dtype else ghosts[db.dtype])[shape]
                    self.inputs = (a, b)
                if type(out) is ndarray:
                    self.out_meta = (by_shape if out.dtype is dtype else ghosts[out.dtype])[out.shape]._data
            else:
                self.inputs = tuple([t if t._requires_grad or not t._data.ndim else
                                     ghosts[t._data.dtype][t._data.shape] for t in inputs])
                if type(out) is ndarray:
                    self.out_meta = ghosts[out.dtype][out.shape]._data
        except KeyError:
            self.inputs = tuple([t if t._requires_grad or not t._data.ndim else ghost_tensor_of(t._data)
                                 for t in inputs])
            if type(out) is ndarray:
                self.out_meta = ghost(out)
        if out is not None:
            if type(out) is not ndarray:
                self.out_meta = tuple([ghost(o) for o in out]) if type(out) is tuple else ghost(out)
            self.out_data = None
        if self.result_counter is not None:   # set only when the output was written in place
            self.result_counter = None
            self.result_of = None
        op = self.op
        if op.saves:
            self.freed = True
            if op.keeps is not None:
                self.kept = None   # what the forward kept for the VJP goes with the saved tensors

    def output_data(self):
        """The output values, or their ghosts once freed (for rules that only read shapes)."""
        out = self.out_data
        return self.out_meta if out is None else out

    def output(self, nr: int = 0):
        """The node's output `nr` as a Tensor whose grad_fn is this node (for create_graph)."""
        out = self.output_data()
        data = out if self.op.n_outputs == 1 else out[nr]
        return Tensor._make(data, self, nr)

    def __dir__(self):
        names = self._kept_names()
        own = {n for n in super().__dir__() if not n.startswith(("_saved_", "_raw_saved_"))}
        return sorted(own | {f"_saved_{k}" for k in self.op.saves} | {f"_raw_saved_{k}" for k in names})

    # -- saved tensors ----------------------------------------------------------------
    def _kept_names(self) -> tuple:
        """The tensors this node saves, as torch chooses them: an input another input's
        gradient needs is saved only when that input requires grad (_saved_mat2 is None
        when self needs no gradient)."""
        op = self.op
        needs = _SAVED_FOR.get(op.torch_name)
        names = []
        for key in op.saves:
            if key in op.param_names:
                continue
            if key != "result" and key not in op.arg_names:
                continue
            if needs is not None and key in needs:
                wanted = needs[key]
                if not any(self.next_nodes[op.arg_names.index(k)] is not None for k in wanted):
                    continue
            names.append(key)
        return tuple(names)

    def _kept_value(self, key: str):
        return self.output(0) if key == "result" else self.inputs[self.op.arg_names.index(key)]

    def _kept(self, key: str) -> "SavedTensor":
        if self.saved is None:
            self.saved = {}
        if key not in self.saved:
            self.saved[key] = SavedTensor(self, key)
        return self.saved[key]

    def _pack_all(self, pack, unpack) -> None:
        for key in self._kept_names():
            if self.op.n_outputs != 1 and key == "result":
                continue
            if key != "result" and getattr(self._kept_value(key), "_wrapped", False):
                continue   # a Python number (x * 3): torch's SavedVariable skips the hooks for it
            self._kept(key)._set_hooks(pack, unpack)

    def unpacked(self) -> tuple:
        """(inputs, output data) for the VJP, with every hooked saved tensor unpacked."""
        inputs = list(self.inputs)
        out = self.out_data
        for key, saved in self.saved.items():
            if saved.pack is None:
                continue
            value = saved.unpack()
            if key == "result":
                out = value._data
            else:
                inputs[self.op.arg_names.index(key)] = value
        return tuple(inputs), out

    # -- hooks ----------------------------------------------------------------------
    def _hooks(self) -> NodeHooks:
        if self.hooks is None:
            self.hooks = NodeHooks()
        return self.hooks

    def register_hook(self, fn) -> RemovableHandle:
        """fn(grad_inputs, grad_outputs) runs after this node's VJP; may return new grad_inputs."""
        return add_hook(self._hooks().post, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """fn(grad_outputs) runs before this node's VJP; may return new grad_outputs."""
        return add_hook(self._hooks().pre, fn)

    def _add_tensor_hook(self, nr: int, fn) -> RemovableHandle:
        return add_hook(self._hooks().tensor.setdefault(nr, OrderedDict()), fn)

    def _retain(self, nr: int, tensor) -> None:
        self._hooks().retains[nr] = weakref.ref(tensor)


_node_types: dict = {}


# grad_fns that PyTorch writes by hand in C++ rather than generating them (type names stay bare)
CPP_NODES = frozenset({"AccumulateGrad", "CopyBackwards", "CopySlices", "Error", "NotImplemented"})


def node_type(op: Op) -> type:
    """The Node subclass for `op`, named as PyTorch's (type(y.grad_fn) prints <class 'MulBackward0'>)."""
    cls = _node_types.get(op)
    if cls is None:
        cls = _node_types[op] = type(op.torch_name, (Node,), {"__slots__": (), "__module__": "builtins",
                                                                "__doc__": f"grad_fn of {op.name}: {op.formula}",
                                                                **{name: own_copy(getattr(Node, name)) for name in PER_CLASS},
                                                                **saved_attributes(op)})
    return cls


# The methods that run once per node, copied into each node class. CPython (3.11+) remembers where
# an attribute lives per line of code, for one class at a time: a chain of MulBackward0 and
# AddBackward0 nodes running one shared copy misses at every slot it reads or writes (about 12 ns
# more each); with a copy per class every class's lines stay remembered, and a node is built as its
# own class at once (no __class__ assignment after a plain Node's __init__).
PER_CLASS = ("__init__", "free")


def own_copy(fn):
    """`fn` with a code object of its own (so its remembered attribute places are its own)."""
    copy = types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__, copy.__qualname__, copy.__doc__ = fn.__kwdefaults__, fn.__qualname__, fn.__doc__
    return copy


class _Saved:
    """A node class's `_saved_<key>` (or, raw, `_raw_saved_<key>`) attribute: as PyTorch's nodes expose
    what they saved (_saved_self, _saved_other, _saved_result; None where torch saves nothing) and
    their arguments (_saved_dim, ...)."""

    __slots__ = ("key", "raw")

    def __init__(self, key: str, raw: bool = False):
        self.key, self.raw = key, raw

    def __get__(self, node, owner=None):
        if node is None:
            return self
        key, op = self.key, node.op
        if self.raw:   # the SavedTensor itself, for a tensor this node keeps
            if key in node._kept_names():
                return node._kept(key)
            raise AttributeError(f"'{type(node).__name__}' object has no attribute '_raw_saved_{key}'")
        if key in op.param_names:
            return node.params[op.param_names.index(key)]
        if key not in node._kept_names():
            return None   # torch saves it only when another input's gradient needs it
        if node.freed:
            raise RuntimeError(FREED_MESSAGE)
        node.check_versions()
        if node.saved is not None and key in node.saved:
            return node.saved[key].unpack()
        return node.output(0) if key == "result" else node.inputs[op.arg_names.index(key)]


def saved_attributes(op: Op) -> dict:
    """The `_saved_*` and `_raw_saved_*` attributes of `op`'s node class. Class attributes and not a
    `__getattr__`: CPython reads every attribute of an object whose class has `__getattr__` on its slow
    path (a fifth of the instructions of a chain's backward)."""
    attributes = {f"_saved_{key}": _Saved(key) for key in (*op.saves, *op.param_names)}
    attributes.update({f"_raw_saved_{key}": _Saved(key, raw=True) for key in op.saves if key not in op.param_names})
    return attributes


ACCUMULATE_GRAD = Op("accumulate_grad", "AccumulateGrad", r"$c.\mathrm{grad} \mathrel{+}= \bar{g}", forward=None,
                     vjp_latex=(r"$c.\mathrm{grad} \mathrel{+}= \bar{g}",), args=(), out_symbol="x")


class AccumulateGrad(Node):
    """The sink for a leaf that requires grad: adds incoming gradient into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(ACCUMULATE_GRAD, (), (), None, (), ())
        self.variable = variable

    def input_shape(self, i: int) -> tuple:
        return self.variable._data.shape

    def input_dtype(self, i: int):
        return self.variable._data.dtype


_ZEROS = tuple((0,) * n for n in range(8))   # the next_nrs of most nodes: shared, not made per node


def edges_apart(edges) -> tuple:
    """(node, output_nr) pairs -> (the nodes, their output numbers), as a Node keeps them."""
    if not edges:
        return (), ()
    nodes, nrs = zip(*edges)
    return nodes, (_ZEROS[len(nrs)] if len(nrs) < len(_ZEROS) and not any(nrs) else nrs)


class GradientEdge(tuple):
    """torch.autograd.graph.GradientEdge: (node, output_nr), where a gradient enters the graph; grad()
    takes one as an input (the gradient that flows into that node's slot)."""

    __slots__ = ()

    def __new__(cls, node, output_nr: int):
        return super().__new__(cls, (node, output_nr))

    node = property(lambda self: self[0])
    output_nr = property(lambda self: self[1])

    def __repr__(self) -> str:
        return f"GradientEdge(node={self.node!r}, output_nr={self.output_nr})"


GradientEdge.__module__ = "torch.autograd.graph"


def get_gradient_edge(tensor) -> GradientEdge:
    """The edge a tensor's gradient arrives by: its grad_fn's output slot, or a leaf's AccumulateGrad."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does not require gradients")
    node = tensor.grad_fn
    return GradientEdge(node, tensor.output_nr) if node is not None else GradientEdge(tensor._accumulator(), 0)


def increment_version(tensor) -> None:
    """torch.autograd.graph.increment_version: count an in-place change made behind autograd's back, so
    a node that saved the tensor refuses to use it (one tensor or an iterable of them)."""
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._bump()
