"""The backward graph: Node (a tensor's grad_fn) and AccumulateGrad (a leaf's sink).

A Node keeps what its VJP needs (inputs, params, output values) until a backward
without retain_graph frees them; ids come from a counter so diagrams stay stable.
"""
from __future__ import annotations

import itertools
import re
import weakref

from ..dtypes import SCALAR_TYPE
from ..ops.op import Op

_ids = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


_saved_inputs_of: dict = {}


class _Clock:
    """Counts in-place writes; Node.epoch is its reading when the node was created."""

    __slots__ = ("now",)

    def __init__(self):
        self.now = 0

    def tick(self) -> int:
        self.now += 1
        return self.now


_clock = _Clock()


class VersionCounter:
    """A tensor's in-place history, created at its first in-place write (or detach(), which
    shares it): the clock stamp of every write, so its length is PyTorch's _version."""

    __slots__ = ("stamps",)

    def __init__(self):
        self.stamps: list = []

    def bump(self) -> None:
        self.stamps.append(_clock.tick())


def _saved_inputs(op: Op) -> tuple:
    """Indices of the inputs an op saves for its VJP (cached per op)."""
    idx = _saved_inputs_of.get(op)
    if idx is None:
        idx = _saved_inputs_of[op] = tuple(i for i, name in enumerate(op.arg_names) if name in op.saves)
    return idx


def modified_message(array, grad_fn, output_nr: int, version: int, expected: int) -> str:
    """PyTorch's words for a saved tensor modified in place ("output 0 of Mul" names its grad_fn)."""
    where = ""
    if grad_fn is not None:
        where = f", which is output {output_nr} of {re.sub(r'Backward[0-9]*$', '', grad_fn.name())},"
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[torch.{SCALAR_TYPE[array.dtype.name]}Tensor [{', '.join(map(str, array.shape))}]]{where} is at "
            f"version {version}; expected version {expected} instead. Hint: enable anomaly detection to find the "
            "operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, "
            "check_nan=False).")


class RemovableHandle:
    """Returned by register_hook; .remove() unregisters the hook."""

    __slots__ = ("_hooks", "_hook")

    def __init__(self, hooks: list, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class NodeHooks:
    """Everything hooked onto one node; a node without hooks keeps None (checked once per step)."""

    __slots__ = ("tensor", "retains", "pre", "post")

    def __init__(self):
        self.tensor: dict = {}    # output_nr -> [hook(grad)] registered on the output tensor
        self.retains: dict = {}   # output_nr -> weakref to a tensor that called retain_grad()
        self.pre: list = []       # fn(grad_outputs), before the VJP
        self.post: list = []      # fn(grad_inputs, grad_outputs), after the VJP


class Node:
    """A grad_fn. `next_functions` is PyTorch's tuple of (node or None, output_nr)."""

    materialize_grads = True   # outputs no gradient reached get zeros (a custom Function may say None)

    __slots__ = ("id", "op", "next_functions", "inputs", "params", "out_data", "scope", "freed", "hooks",
                 "epoch", "result_counter", "result_version", "_metadata", "__weakref__")

    def __init__(self, op: Op, inputs: tuple, params: tuple, out_data, next_functions: tuple, scope: tuple = ()):
        self.id = next(_ids)
        self.op = op
        self.inputs = inputs
        self.params = params
        self.out_data = out_data
        self.next_functions = next_functions
        self.scope = scope
        self.freed = False
        self.hooks = None
        # In-place writes are stamped by a clock; a saved input stamped after this node
        # was created was modified (checked before the VJP reads it). A saved result is
        # watched through the output's counter, attached only if it is ever written.
        self.epoch = _clock.now
        self.result_counter = None

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
        for i in _saved_inputs(self.op):
            counter = inputs[i]._vc
            if counter and counter.stamps and counter.stamps[-1] > epoch:
                t = inputs[i]
                saved = sum(1 for stamp in counter.stamps if stamp <= epoch)
                raise RuntimeError(modified_message(t._data, t.grad_fn, t.output_nr, len(counter.stamps), saved))
        counter = self.result_counter
        if counter is not None and len(counter.stamps) != self.result_version and self.out_data is not None:
            raise RuntimeError(modified_message(self.out_data, self, 0, len(counter.stamps), self.result_version))

    def free(self) -> None:
        """After a backward without retain_graph: saved values are gone, as in PyTorch.

        Only ops that save something are freed (AddBackward0 can run twice, like PyTorch's);
        the output values are dropped and any later VJP or _saved_ access raises."""
        if self.op.saves:
            self.out_data = None
            self.freed = True

    def output(self, nr: int = 0):
        """The node's output `nr` as a Tensor whose grad_fn is this node (for create_graph)."""
        from ..tensor import Tensor
        data = self.out_data if self.op.n_outputs == 1 else self.out_data[nr]
        return Tensor._make(data, self, nr)

    def __getattr__(self, name: str):
        # PyTorch exposes saved values as _saved_self, _saved_other, _saved_result, _saved_dim...
        if name.startswith("_saved_"):
            key = name[len("_saved_"):]
            op = object.__getattribute__(self, "op")
            if key in op.saves and key not in op.param_names:
                if self.freed:
                    raise RuntimeError(FREED_MESSAGE)
                self.check_versions()
                if key == "result":
                    return self.output(0)
                return self.inputs[op.arg_names.index(key)]
            if key in op.param_names:
                return self.params[op.param_names.index(key)]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    # -- hooks ----------------------------------------------------------------------
    def _hooks(self) -> NodeHooks:
        if self.hooks is None:
            self.hooks = NodeHooks()
        return self.hooks

    def register_hook(self, fn) -> RemovableHandle:
        """fn(grad_inputs, grad_outputs) runs after this node's VJP; may return new grad_inputs."""
        hooks = self._hooks().post
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """fn(grad_outputs) runs before this node's VJP; may return new grad_outputs."""
        hooks = self._hooks().pre
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def _add_tensor_hook(self, nr: int, fn) -> RemovableHandle:
        hooks = self._hooks().tensor.setdefault(nr, [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def _retain(self, nr: int, tensor) -> None:
        self._hooks().retains[nr] = weakref.ref(tensor)


_node_types: dict = {}


# grad_fns that PyTorch writes by hand in C++ rather than generating them (type names stay bare)
CPP_NODES = frozenset({"AccumulateGrad", "CopySlices", "NotImplemented"})


def node_type(op: Op) -> type:
    """The Node subclass for `op`, named as PyTorch's (type(y.grad_fn) prints <class 'MulBackward0'>)."""
    cls = _node_types.get(op)
    if cls is None:
        cls = _node_types[op] = type(op.torch_name, (Node,), {"__slots__": (), "__module__": "builtins",
                                                                "__doc__": f"grad_fn of {op.name}: {op.formula}"})
    return cls


ACCUMULATE_GRAD = Op("accumulate_grad", "AccumulateGrad", "x.grad += ḡ", forward=None,
                     vjp_formulas=("x.grad += ḡ",), args=())


class AccumulateGrad(Node):
    """The sink for a leaf that requires grad: adds incoming gradient into `variable.grad`."""

    __slots__ = ("variable",)

    def __init__(self, variable):
        super().__init__(ACCUMULATE_GRAD, (), (), None, ())
        self.variable = variable

    def input_shape(self, i: int) -> tuple:
        return self.variable._data.shape

    def input_dtype(self, i: int):
        return self.variable._data.dtype
