"""torch.autograd.Function: user-written forward and backward, run by the same engine.

`Exp.apply(x)` runs `Exp.forward(ctx, x)` without recording a graph, then makes one node
of class `ExpBackward` whose VJP calls `Exp.backward(ctx, ḡ)`. The node *is* the ctx (as in
torch, `y.grad_fn.saved_tensors` works). Its op record says the node runs user code, so
diagrams and step panels show `Exp.backward(ctx, ḡ)` where a built-in op shows its formula.
When the backward itself is differentiable (it uses tensor ops), `create_graph=True`
records it, so double backward runs through a Function as through any op.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable

from .. import code_lines, events
from ..naming import subscript
from ..ops.index import DELAYED_ERROR
from ..ops.op import Op
from ..scope import _state as _scope_state
from ..creation import zeros_like
from ..tensor import Tensor
from . import forward_ad as _forward_ad
from .apply import apply as apply_op
from .grad_mode import _formula, is_grad_enabled, no_grad
from .nodes import Node, edges_apart
from .saved import FREED_MESSAGE
from .versions import IN_CUSTOM_FUNCTION, ViewMeta, modified_message

_ONCE_MESSAGE = "trying to differentiate twice a function that was marked with @once_differentiable"


class FunctionCtx:
    """What forward (or setup_context) may tell backward: saved tensors and output flags."""

    def save_for_backward(self, *tensors) -> None:
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Tensors jvp reads back as ctx.saved_tensors."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you should save "
                                     "non-tensors as attributes on ctx.")
        self._saved_for_forward = tensors

    def mark_dirty(self, *args) -> None:
        """These inputs were modified in place by forward (and are returned): they become outputs."""
        self._dirty = {id(t) for t in args}

    def mark_non_differentiable(self, *args) -> None:
        """These outputs will not require grad; backward receives zeros (or None) for them."""
        self._non_differentiable = {id(t) for t in args}

    def set_materialize_grads(self, value: bool) -> None:
        """False: backward receives None, not zeros, for outputs no gradient reached."""
        self.materialize_grads = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to save_for_backward, checked against in-place changes since (in jvp,
        those given to save_for_forward)."""
        if self.__dict__.get("_in_jvp"):
            return tuple(self.__dict__.get("_saved_for_forward") or ())
        saved = self.__dict__.get("_saved")
        if saved is None:
            if self.__dict__.get("_released"):
                raise RuntimeError(FREED_MESSAGE)
            return tuple(self.__dict__.get("_to_save") or ())
        return tuple(self._unpack(entry) for entry in saved)

    def _unpack(self, entry):
        kind = entry[0]
        if kind == "none":
            return None
        if kind == "output":
            _, nr, counter, version, differentiable = entry
            data = self.out_data if self.op.n_outputs == 1 else self.out_data[nr]
            if counter.version != version:
                raise RuntimeError(modified_message(data, self, nr, counter.version, version))
            t = Tensor._make(data, self if differentiable else None, nr if differentiable else 0)
            t._vc = counter
            return t
        _, t, version = entry
        if t._version != version:
            raise RuntimeError(modified_message(t._data, t.grad_fn, t.output_nr, t._version, version))
        return t

    @property
    def needs_input_grad(self) -> tuple:
        return self._needs_input_grad


class BackwardCFunction(Node, FunctionCtx):
    """The node of one Function call; subclassed per Function as <Name>Backward."""

    _forward_cls: type = None
    materialize_grads = True

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<torch.autograd.function.{type(self).__name__} object at {hex(id(self))}>"

    def free(self) -> None:
        """After a backward without retain_graph the saved tensors are gone; the node itself
        can run again (as torch's) if its backward does not read them."""
        if self.__dict__.get("_saved"):
            self._saved = None
            self._released = True

    def _vjp(self, g) -> list:
        """Call the user's backward and hand the engine one gradient per tensor input."""
        grads = g if isinstance(g, tuple) else (g,)
        grads = tuple(x if x is None or isinstance(x, Tensor) else Tensor._make(x) for x in grads)
        cls = self._forward_cls
        # the user's backward is Python, not one of torch's C++ formulas: `2 * x` in it is
        # MulBackward0 (a wrapped number), as anywhere else in a program
        outer, _formula.active = _formula.active, False
        try:
            result = cls.backward(self, *grads)
        finally:
            _formula.active = outer
        if not isinstance(result, tuple):
            result = (result,)
        n_args, name = self._n_args, type(self).__name__
        if len(result) < n_args or any(r is not None for r in result[n_args:]):
            raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {n_args}, "
                               f"got {len(result)})")
        tensor_positions = self._tensor_positions
        for i, r in enumerate(result[:n_args]):
            if r is not None and i not in tensor_positions:
                raise RuntimeError(f"function {name} returned a gradient different than None at position {i + 1}, "
                                   "but the corresponding forward input was not a Variable")
        create_graph = is_grad_enabled()   # the engine runs VJPs with grad mode = create_graph
        out = []
        for i in tensor_positions:
            r = result[i]
            if r is not None and not isinstance(r, Tensor):
                raise TypeError(f"function {name} returned a gradient of type {type(r).__name__} at position "
                                f"{i + 1}; a backward returns Tensors or None")
            out.append(r if r is None or create_graph else r._data)
        return out


def _function_vjp(xp, g, out, *args):
    """The op record's rule: the node (the last argument) runs the user's backward."""
    return args[-1]._vjp(g)


_ops: dict = {}


def op_for_function(cls: type, names: tuple, n_outputs: int, positions: tuple | None = None) -> Op:
    """The op record of a Function called with these tensor inputs and this many outputs:
    its formulas say that the node runs user code. positions: where each tensor input sits among
    forward's arguments (backward returns a gradient for every argument); by default the first ones."""
    positions = tuple(range(len(names))) if positions is None else tuple(positions)
    key = (cls, names, n_outputs, positions)
    op = _ops.get(key)
    if op is None:
        name = cls.__name__
        # the tensor arguments in apply's order, "…" where forward took something else (the 3.0 of
        # F.apply(y, 3.0, x)); what follows the last tensor is not known here
        args, last = [], -1
        for i, p in enumerate(positions):
            args += ["…"] * (p > last + 1) + ["abdefghijk"[i] if i < 10 else f"x{subscript(i)}"]   # as Op's letters
            last = p
        letters = ", ".join(args)
        out = "c" if n_outputs == 1 else "(" + ", ".join(f"c{i}" for i in range(n_outputs)) + ")"
        # user code has no LaTeX: the one record whose Unicode is written by hand, in the template's
        # letters (views put each node's own symbols in) and as the learner calls it: Name.apply(...)
        op = _ops[key] = Op(name, f"{name}Backward", formula=f"{out} = {name}.apply({letters})  (user code)",
                            forward=None, vjp=_function_vjp, args=names, n_outputs=n_outputs,
                            vjp_formulas=tuple(f"{name}.backward(ctx, ḡ)[{p}]  (user code)"
                                               for p in positions or (0,)))
    return op


def arg_names(forward: Callable, new_style: bool, count: int) -> list:
    """The names forward gives its arguments (after ctx), for display; input0, input1... past them."""
    try:
        params = list(inspect.signature(forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    if not new_style and params:
        params = params[1:]
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return [names[i] if i < len(names) else f"input{i}" for i in range(count)]


class Function:
    """Subclass with static forward(ctx, *args) and backward(ctx, *grads); call Sub.apply(*args).

    New style: forward(*args) without ctx, plus setup_context(ctx, inputs, output)."""

    _backward_cls: type = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(f"{cls.__name__}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": "torch.autograd.function"})

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so "
                      "you should invoke them on the class itself. Instantiating an autograd function will raise "
                      "an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    @staticmethod
    def forward(*args, **kwargs) -> Any:
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output) -> None:
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs) -> Any:
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs) -> Any:
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                                  "forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if cls.forward is Function.forward:
            raise NotImplementedError("You must implement the forward function for custom autograd.Function.")
        new_style = cls.setup_context is not Function.setup_context
        if new_style:   # setup_context sees every argument, defaults filled in
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        ctx = object.__new__(cls._backward_cls)
        grad_on = is_grad_enabled()
        needs = tuple(bool(grad_on and isinstance(a, Tensor) and a.requires_grad) for a in args)
        ctx._needs_input_grad = needs
        dual = _forward_ad._state.level is not None and _forward_ad.is_dual(*args)
        outer_busy, _forward_ad._state.busy = _forward_ad._state.busy, True   # forward's own ops carry no tangents
        try:
            with no_grad():
                if new_style:
                    output = cls.forward(*args, **kwargs)
                    cls.setup_context(ctx, args, output)
                else:
                    output = cls.forward(ctx, *args, **kwargs)
        finally:
            _forward_ad._state.busy = outer_busy
        _mark_dirty(ctx, output)
        if any(needs):
            output = _attach(cls, ctx, args, output, new_style)
        if dual:
            _forward_tangents(cls, ctx, args, output)
        return output


def _forward_tangents(cls, ctx, args: tuple, output) -> None:
    """Forward AD through a Function, as torch's: its jvp(ctx, *input tangents) (None for a non-tensor,
    zeros for a tensor without one unless set_materialize_grads(False)) gives its outputs' tangents."""
    tangents = []
    for a in args:
        t = _forward_ad.tangent_of(a) if isinstance(a, Tensor) else None
        if t is None and isinstance(a, Tensor) and ctx.materialize_grads:
            t = zeros_like(a)
        tangents.append(t)
    ctx._in_jvp = True
    outer_busy, _forward_ad._state.busy = _forward_ad._state.busy, True   # jvp's own ops carry no tangents
    try:
        result = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp, _forward_ad._state.busy = False, outer_busy
    outputs = output if isinstance(output, tuple) else (output,)
    results = result if isinstance(result, tuple) else (result,)
    if len(results) != len(outputs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients (expected {len(outputs)} "
                           f"but got {len(results)})")
    for o, t in zip(outputs, results):
        if isinstance(o, Tensor) and t is not None and o.is_floating_point():
            _forward_ad.set_tangent(o, t)


def _mark_dirty(ctx, output) -> None:
    """The inputs forward wrote in place: each must be returned, and its version moves on."""
    dirty = ctx.__dict__.get("_dirty")
    if not dirty:
        return
    returned = {id(o): o for o in (output if isinstance(output, tuple) else (output,))}
    if any(d not in returned for d in dirty):
        raise RuntimeError("Some elements marked as dirty during the forward method were not returned as output. "
                           "The inputs that are modified inplace must all be outputs of the Function.")
    for d in dirty:
        returned[d]._bump()


def _attach(cls: type, ctx: BackwardCFunction, args: tuple, output, new_style: bool):
    """Make ctx the grad_fn of forward's tensor outputs and resolve what it saved."""
    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    positions = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    inputs = tuple(args[i] for i in positions)
    names = arg_names(cls.forward, new_style, len(args))
    tensor_outs = [o for o in outputs if isinstance(o, Tensor)]
    op = op_for_function(cls, tuple(names[i] for i in positions), len(tensor_outs), positions)
    data = tuple(o._data for o in tensor_outs)
    Node.__init__(ctx, op, inputs, (ctx,), data[0] if len(data) == 1 else data,
                  *edges_apart([t._edge() for t in inputs]), _scope_state.path)
    ctx._n_args = len(args)
    ctx._tensor_positions = positions
    non_diff = ctx.__dict__.get("_non_differentiable", set())
    dirty = ctx.__dict__.get("_dirty", set())
    for t in inputs:
        if id(t) in dirty and t.grad_fn is None and t._requires_grad:
            raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
    input_ids = {id(a) for a in inputs}
    wrapped, nr_of, result = {}, {}, []
    nr = 0
    for o in outputs:
        if not isinstance(o, Tensor):
            result.append(o)
            continue
        nr_of[id(o)] = nr
        if id(o) in dirty:   # an input written in place: its history now ends in this node
            o.grad_fn, o.output_nr = ctx, nr
            made = o
        elif id(o) in non_diff:
            made = o if id(o) not in input_ids else Tensor._make(o._data)
        elif id(o) in input_ids or o.grad_fn is not None or o._requires_grad:
            made = Tensor._make(o._data, ctx, nr)   # an input (or a tensor from outside) returned as is:
            made._vc = o._counter()                 # a new tensor on the same storage, as torch's view
            if id(o) in input_ids:
                made._view = ViewMeta(o if o._view is None else o._view.base, made._vc.version, IN_CUSTOM_FUNCTION)
        else:
            o.grad_fn, o.output_nr = ctx, nr
            made = o
            if o._view is not None:   # a view made in forward: writing into it would bypass this backward
                o._view.creation = IN_CUSTOM_FUNCTION
        wrapped[id(o)] = made
        result.append(made)
        nr += 1
    to_save = ctx.__dict__.pop("_to_save", None)
    if to_save is not None:
        saved = []
        for t in to_save:
            if t is None:
                saved.append(("none",))
            elif id(t) in nr_of and id(t) not in input_ids:
                made = wrapped[id(t)]
                counter = made._counter()
                saved.append(("output", nr_of[id(t)], counter, counter.version, id(t) not in non_diff))
            else:
                saved.append(("tensor", t, t._version))
        ctx._saved = saved
    if code_lines.tracking_sources:   # the user's line that called apply (the frames between are gradviz's)
        code_lines.remember_source(ctx, 2)
    if events._listeners:
        events.emit(events.NodeCreated(ctx, inputs, tuple(r for r in result if isinstance(r, Tensor)), ctx.scope))
    return result[0] if single else tuple(result)


# -- once_differentiable ---------------------------------------------------------------------------
def once_differentiable(fn: Callable) -> Callable:
    """Run backward without recording it; a gradient of its result then raises torch's error."""
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not is_grad_enabled():
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        # each output passes through an error node; its input is made a leaf that requires
        # grad, as torch does, so that the node is recorded at all
        wrapped = tuple(apply_op(DELAYED_ERROR, (o.detach().requires_grad_(),), (_ONCE_MESSAGE,))
                        if isinstance(o, Tensor) and o.is_floating_point() else o
                        for o in ((outputs,) if single else outputs))
        return wrapped[0] if single else wrapped
    return wrapper
