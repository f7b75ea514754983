"""The backward graph: Node (a tensor's grad_fn) and AccumulateGrad (a leaf's sink).

A Node keeps what its VJP needs (inputs, params, output values) until a backward
without retain_graph frees them: then, as in PyTorch, it keeps only the shapes and
dtypes of its inputs and outputs. Ids come from a counter so diagrams stay stable.
Also the hooks torch.autograd.graph offers around them: saved_tensors_hooks and
save_on_cpu (pack a saved tensor when the node is made, unpack it when the VJP reads it),
_raw_saved_* (SavedTensor) with register_hooks, register_multi_grad_hook, and anomaly
mode (each node remembers the forward line that made it).
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import os
import re
import threading
import traceback
import warnings
import weakref

import numpy as _numpy
from numpy import ndarray   # one global load where np.ndarray is two, on the per-op path

from .. import backend as _backend
from ..dtypes import SCALAR_TYPE
from ..ops.core import _formula  # noqa: F401  (the engine switches it while a rule records)
from ..ops.op import Op

_ids = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


class TensorKind:
    """What the graph and the engine need of the layer above them, handed down once it exists: the
    Tensor class (to wrap an array, to recognise a Tensor), `apply` (to record an op on Tensors) and
    the Tensor namespace (a VJP rule's `xp` when backward records its own graph). A Tensor holds its
    node, so the node's module sits below Tensor and reaches it only through this."""

    __slots__ = ("tensor", "apply", "namespace")

    def __init__(self):
        self.tensor = self.apply = self.namespace = None


KIND = TensorKind()   # filled by gradviz.tensor, gradviz.autograd.apply and .tensor_namespace


class _RunningBackward(threading.local):
    run = None


_running = _RunningBackward()   # the backward pass running on this thread (set by the engine)


def current_backward():
    """The backward pass running on this thread (the latest one started), or None."""
    return _running.run


class _Clock:
    """Counts in-place writes anywhere; Node.epoch is its reading when the node was created,
    so a node with nothing written since skips its version checks."""

    __slots__ = ("now",)

    def __init__(self):
        self.now = 0

    def tick(self) -> int:
        self.now += 1
        return self.now


_clock = _Clock()


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


class VersionCounter:
    """A tensor's count of in-place writes (PyTorch's _version), created at its first write
    or when a view or detach() starts sharing it. One int: bounded however long it lives."""

    __slots__ = ("version",)

    def __init__(self):
        self.version = 0

    def bump(self) -> None:
        self.version += 1
        _clock.tick()


# How a view was made (PyTorch's CreationMeta): writing into a view made by a function that
# returns several views, or made in no_grad mode, cannot be recorded, so it is refused.
DEFAULT, MULTI_OUTPUT, NO_GRAD = 0, 1, 2


class ViewMeta:
    """What a view knows of its base: the base (the root, never a view itself), how it was
    made, and the version at which its grad_fn was last set (a write to the base or to any
    view of it since means the grad_fn is regenerated, as PyTorch's AsStridedBackward0)."""

    __slots__ = ("base", "version", "creation")

    def __init__(self, base, version: int, creation: int):
        self.base = base
        self.version = version
        self.creation = creation


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
        Tensor = KIND.tensor
        return Tensor._make(ghost(array))
    by_shape = _ghosts.get(array.dtype)
    if by_shape is None:
        by_shape = _ghosts[array.dtype] = {}
    t = by_shape.get(array.shape)
    if t is None:
        Tensor = KIND.tensor
        if len(by_shape) > 4096:
            by_shape.clear()
        data = _numpy.broadcast_to(_numpy.full((), _fill(array.dtype), dtype=array.dtype), array.shape)
        t = by_shape[array.shape] = Tensor._make(data)
    return t


def ghost_tensor(tensor):
    return ghost_tensor_of(tensor._data)


def modified_message(array, grad_fn, output_nr: int, version: int, expected: int) -> str:
    """PyTorch's words for a saved tensor modified in place ("output 0 of Mul" names its grad_fn)."""
    where = ""
    if grad_fn is not None:
        name = grad_fn if isinstance(grad_fn, str) else grad_fn.name()
        where = f", which is output {output_nr} of {re.sub(r'Backward[0-9]*$', '', name)},"
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"[torch.{SCALAR_TYPE[array.dtype.name]}Tensor [{', '.join(map(str, array.shape))}]]{where} is at "
            f"version {version}; expected version {expected} instead. Hint: " + (
                "the backtrace further above shows the operation that failed to compute its gradient. The variable "
                "in question was changed in there or anywhere later. Good luck!" if _anomaly.enabled else
                "enable anomaly detection to find the operation that failed to compute its gradient, with "
                "torch.autograd.set_detect_anomaly(True, check_nan=False)."))


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

    __slots__ = ("tensor", "retains", "pre", "post", "post_accumulate")

    def __init__(self):
        self.tensor: dict = {}    # output_nr -> [hook(grad)] registered on the output tensor
        self.retains: dict = {}   # output_nr -> weakref to a tensor that called retain_grad()
        self.pre: list = []       # fn(grad_outputs), before the VJP
        self.post: list = []      # fn(grad_inputs, grad_outputs), after the VJP
        self.post_accumulate: list = []   # fn(tensor), after AccumulateGrad wrote tensor.grad


class Node:
    """A grad_fn. `next_functions` is PyTorch's tuple of (node or None, output_nr)."""

    materialize_grads = True   # outputs no gradient reached get zeros (a custom Function may say None)

    __slots__ = ("id", "op", "next_functions", "inputs", "params", "out_data", "scope", "freed", "hooks",
                 "epoch", "saved_versions", "result_counter", "result_version", "result_of", "out_meta", "_metadata",
                 "saved", "order", "__weakref__")

    def __init__(self, op: Op, inputs: tuple, params: tuple, out_data, next_functions: tuple, scope: tuple = ()):
        self.id = next(_ids)
        self.order = _building.now
        self.op = op
        self.inputs = inputs
        self.params = params
        self.out_data = out_data
        self.next_functions = next_functions
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
            if len(inputs) == 2:   # most nodes: no list built
                a, b = inputs
                da, db = a._data, b._data
                self.inputs = (a if a._requires_grad or not da.ndim else ghosts[da.dtype][da.shape],
                               b if b._requires_grad or not db.ndim else ghosts[db.dtype][db.shape])
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
        if self.op.saves:
            self.freed = True

    def output_data(self):
        """The output values, or their ghosts once freed (for rules that only read shapes)."""
        out = self.out_data
        return self.out_meta if out is None else out

    def output(self, nr: int = 0):
        """The node's output `nr` as a Tensor whose grad_fn is this node (for create_graph)."""
        Tensor = KIND.tensor
        out = self.output_data()
        data = out if self.op.n_outputs == 1 else out[nr]
        return Tensor._make(data, self, nr)

    def __dir__(self):
        names = self._kept_names()
        return sorted(set(super().__dir__()) | {f"_saved_{k}" for k in self.op.saves} |
                      {f"_raw_saved_{k}" for k in names})

    def __getattr__(self, name: str):
        # PyTorch exposes saved values as _saved_self, _saved_other, _saved_result, _saved_dim...
        if name.startswith("_raw_saved_"):
            key = name[len("_raw_saved_"):]
            if key in self._kept_names():
                return self._kept(key)
        if name.startswith("_saved_"):
            key = name[len("_saved_"):]
            op = object.__getattribute__(self, "op")
            if key in op.saves and key not in op.param_names:
                if key not in self._kept_names():
                    return None   # torch saves it only when another input's gradient needs it
                if self.freed:
                    raise RuntimeError(FREED_MESSAGE)
                self.check_versions()
                if self.saved is not None and key in self.saved:
                    return self.saved[key].unpack()
                if key == "result":
                    return self.output(0)
                return self.inputs[op.arg_names.index(key)]
            if key in op.param_names:
                return self.params[op.param_names.index(key)]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

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
                if not any(self.next_functions[op.arg_names.index(k)][0] is not None for k in wanted):
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
CPP_NODES = frozenset({"AccumulateGrad", "CopyBackwards", "CopySlices", "NotImplemented"})


def node_type(op: Op) -> type:
    """The Node subclass for `op`, named as PyTorch's (type(y.grad_fn) prints <class 'MulBackward0'>)."""
    cls = _node_types.get(op)
    if cls is None:
        cls = _node_types[op] = type(op.torch_name, (Node,), {"__slots__": (), "__module__": "builtins",
                                                                "__doc__": f"grad_fn of {op.name}: {op.formula}"})
    return cls


ACCUMULATE_GRAD = Op("accumulate_grad", "AccumulateGrad", r"$c.\mathrm{grad} \mathrel{+}= \bar{g}", forward=None,
                     vjp_latex=(r"$c.\mathrm{grad} \mathrel{+}= \bar{g}",), args=(), out_symbol="x")


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


# Which inputs need each saved input, for the ops where torch saves an input only when the
# other input's gradient is wanted (a product's gradient for a reads b, and vice versa).
_SAVED_FOR = {
    "MulBackward0": {"self": ("other",), "other": ("self",)},
    "DivBackward0": {"self": ("other",)},
    "MmBackward0": {"self": ("mat2",), "mat2": ("self",)},
    "BmmBackward0": {"self": ("mat2",), "mat2": ("self",)},
    "MvBackward0": {"self": ("vec",), "vec": ("self",)},
    "DotBackward0": {"self": ("tensor",), "tensor": ("self",)},
}


# -- saved tensors and their hooks ------------------------------------------------------------
class _HookState(threading.local):
    stack: list = []


_hook_state = _HookState()


class _Watch:
    """Process-wide: is any thread inside saved_tensors_hooks, or anomaly mode on?"""
    hooks = 0
    on = False

    def update(self) -> None:
        self.on = self.hooks > 0 or _anomaly.enabled


_watch = _Watch()


class SavedTensor:
    """One tensor a node saved for its VJP (torch's _raw_saved_* objects). With hooks,
    pack(tensor) ran when the node was made and unpack(packed) gives it back to the VJP."""

    __slots__ = ("node", "key", "pack", "unpack_hook", "packed")

    def __init__(self, node: Node, key: str):
        self.node, self.key = node, key
        self.pack = self.unpack_hook = self.packed = None

    def _set_hooks(self, pack, unpack) -> None:
        self.pack, self.unpack_hook = pack, unpack
        self.packed = pack(self.node._kept_value(self.key))

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """Pack this saved tensor now, unpack it when it is used; one pair at a time."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, "
                            "arg1: collections.abc.Callable) -> None")
        if self.node.freed:
            raise RuntimeError("Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
                               "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
                               "retain_graph=True if you need to backward through the graph a second time or if you "
                               "need to access saved variables after calling backward.")
        if self.pack is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: only "
                               "one pair of hooks is allowed at a time.")
        self._set_hooks(pack_hook, unpack_hook)

    def unpack(self):
        if self.node.freed:
            raise RuntimeError(FREED_MESSAGE)
        if self.pack is None:
            return self.node._kept_value(self.key)
        value = self.unpack_hook(self.packed)
        Tensor = KIND.tensor
        if not isinstance(value, Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(value).__name__}")
        if self.key == "result":   # as in torch, the unpacked output is again the node's output
            return Tensor._make(value._data, self.node, 0)
        alias = Tensor._make(value._data, value._grad_fn, value.output_nr)   # as in torch, a new tensor object
        alias._vc = value._counter()                                         # over the same memory and history
        if value._grad_fn is None and value._requires_grad:
            alias._requires_grad, alias._accum = True, value._accumulator()   # a leaf's gradient still reaches it
        return alias

    @property
    def data(self):
        return self.unpack().detach()

    def __repr__(self):
        return f"<torch._C._autograd.SavedTensor object at {hex(id(self))}>"


class saved_tensors_hooks:
    """Inside the context every saved tensor is packed with pack_hook(tensor) when its node is
    made and given back by unpack_hook(packed) when the VJP (or _saved_*) reads it."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        _hook_state.stack = _hook_state.stack + [(self.pack_hook, self.unpack_hook)]
        _watch.hooks += 1
        _watch.update()
        return self

    def __exit__(self, *exc):
        _hook_state.stack = _hook_state.stack[:-1]
        _watch.hooks -= 1
        _watch.update()
        return False


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept as copies in CPU memory and go back to their device when used."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda"):
        def pack(tensor):
            return tensor.device, tensor.detach().cpu().clone()

        def unpack(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack, unpack)


def disable_saved_tensors_hooks(error_message: str):
    """A context in which creating a node that saves tensors under hooks raises error_message."""
    @contextlib.contextmanager
    def ctx():
        def refuse(_):
            raise RuntimeError(error_message)
        with saved_tensors_hooks(refuse, refuse):
            yield
    return ctx()


# -- hooks over several tensors -----------------------------------------------------------------
class _MultiHandle:
    def __init__(self, handles):
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()


def register_multi_grad_hook(tensors, fn, *, mode: str = "all"):
    """mode='all': fn(grads) once per backward, when every tensor's gradient that this backward
    computes is known (None for the others); mode='any': fn(grad) for the first one."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    state = {"run": None, "grads": None, "count": 0, "expected": 0}

    def reset(run):
        state["run"], state["grads"], state["count"] = run, [None] * len(tensors), 0
        state["expected"] = sum(1 for t in tensors if run is None or run.will_reach(t))

    def make(i):
        def hook(grad):
            run = current_backward()
            if state["run"] is not run or run is None:
                reset(run)
            if mode == "any":
                if state["count"] == 0:
                    state["count"] = 1
                    fn(grad)
                return None
            state["grads"][i] = grad
            state["count"] += 1
            if state["count"] == state["expected"]:
                fn(list(state["grads"]))   # a list, as torch passes it
            return None
        return hook
    return _MultiHandle([t.register_hook(make(i)) for i, t in enumerate(tensors) if t.requires_grad])


# -- anomaly mode --------------------------------------------------------------------------
class _Anomaly:
    enabled = False
    check_nan = True


_anomaly = _Anomaly()
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _forward_stack() -> list:
    """The caller's stack as traceback lines, without gradviz's own frames."""
    frames = [f for f in traceback.extract_stack()[:-1] if not os.path.abspath(f.filename).startswith(_PACKAGE_DIR)]
    return traceback.format_list(frames)


def is_anomaly_enabled() -> bool:
    return _anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _anomaly.check_nan


class set_detect_anomaly:
    """Turns anomaly detection on or off at once (and back when used as a context)."""

    def __init__(self, mode: bool, check_nan: bool = True):
        self.prev, self.prev_check_nan = _anomaly.enabled, _anomaly.check_nan
        _anomaly.enabled, _anomaly.check_nan = bool(mode), bool(check_nan)
        _watch.update()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _anomaly.enabled, _anomaly.check_nan = self.prev, self.prev_check_nan
        _watch.update()
        return False


class detect_anomaly:
    """While on, each node remembers the forward line that made it; an error in its VJP (or a
    nan it returns, with check_nan) warns with that line before the error is raised."""

    def __init__(self, check_nan: bool = True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime and should only be "
                      "enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev, self.prev_check_nan = _anomaly.enabled, _anomaly.check_nan
        _anomaly.enabled, _anomaly.check_nan = True, self.check_nan
        _watch.update()
        return self

    def __exit__(self, *exc):
        _anomaly.enabled, _anomaly.check_nan = self.prev, self.prev_check_nan
        _watch.update()
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


def anomaly_warning(node: Node) -> None:
    """torch's warning naming the forward line of the node whose VJP failed."""
    stack = node.metadata.get("traceback_")
    if stack is None:
        warnings.warn(f"Error detected in {node.name()}. No forward pass information available. Enable detect "
                      "anomaly during forward pass for more information.", UserWarning, stacklevel=4)
        return
    warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
                  + "".join(stack), UserWarning, stacklevel=4)
