"""The backward graph: Node (a tensor's grad_fn) and AccumulateGrad (a leaf's sink).

A Node keeps what its VJP needs (inputs, params, output values) until a backward
without retain_graph frees them; ids come from a counter so diagrams stay stable.
"""
from __future__ import annotations

import itertools
import weakref

from ..ops.op import Op

_ids = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


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

    __slots__ = ("id", "op", "next_functions", "inputs", "params", "out_data", "scope", "freed", "hooks",
                 "__weakref__")

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

    def name(self) -> str:
        return self.op.torch_name

    @property
    def formula(self) -> str:
        return self.op.formula

    @property
    def metadata(self) -> dict:
        return {}

    def __repr__(self):
        return f"<{self.op.torch_name} object at {hex(id(self))}>"

    def input_shape(self, i: int) -> tuple:
        return self.inputs[i]._data.shape

    def input_dtype(self, i: int):
        """The NumPy dtype of input i."""
        return self.inputs[i]._data.dtype

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
