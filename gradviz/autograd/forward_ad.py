"""Forward-mode AD, named as torch.autograd.forward_ad: dual_level, make_dual, unpack_dual.

A dual tensor is a tensor with a tangent attached. While a level is open every op
that sees a tangent on an input computes its output's tangent J·t with the op's JVP
rule, and emits a TangentComputed event. Rules come from the op registry's `jvp`
field; where an op has none, the JVP is derived from its VJP:

- `pointwise`: the Jacobian is diagonal (elementwise ops, softmax is symmetric), so
  J·t is the VJP applied to t itself, summed over the inputs;
- `linear`: the op is linear in its tensors, so J·t is the op applied to the tangents;
- `bilinear`: J·(ta, tb) = op(ta, b) + op(a, tb);
- a record's own rule, `jvp=rule(xp, tangents, c, *inputs, *params)`, where the VJP's transpose
  is not torch's JVP (Cholesky reads the tangent unsymmetrized) or needs what is not recorded;
- otherwise the transpose trick: the VJP g ↦ Jᵀg is linear in g, so
  J·t = ∂/∂g ⟨Jᵀg, t⟩, one small reverse pass through the VJP rule itself.

Tangents are Tensors computed with the Tensor namespace, so when a primal or a
tangent requires grad the tangent is itself differentiable (reverse over forward).
"""
from __future__ import annotations

import functools
import weakref
from collections import namedtuple
from typing import Callable

from .. import events
from ..ops.index import ALIAS
from .engine import grad
from .grad_mode import _formula, enable_grad
from ..tensor import Tensor

__all__ = ["dual_level", "enter_dual_level", "exit_dual_level", "make_dual", "unpack_dual", "UnpackedDualTensor"]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__module__ = "torch.autograd.forward_ad"


class _State:
    """Forward-AD levels are process-wide, as torch's; a plain object keeps the per-op check cheap."""
    level = None      # the open level (0) or None: ops check this one attribute
    busy = False      # inside a JVP rule: its own ops carry no tangents
    tangents: dict = {}


_state = _State()


def _key(tensor):
    """A non-leaf is known by (grad_fn, output_nr), so the engine's fresh handle on a saved
    output (Node.output) finds the tangent too; any other tensor by its identity."""
    node = tensor.grad_fn
    return (node.id, tensor.output_nr) if node is not None else id(tensor)


def tangent_of(tensor):
    """The tangent attached to `tensor` at the open level, or None."""
    if _state.level is None:
        return None
    entry = _state.tangents.get(_key(tensor))
    if entry is None:
        return None
    ref, tangent = entry
    return tangent if ref is None or ref() is tensor else None


def _attach(tensor, tangent) -> None:
    key = _key(tensor)
    tangents = _state.tangents
    if isinstance(key, tuple):
        tangents[key] = (None, tangent)
    else:
        tangents[key] = (weakref.ref(tensor, lambda _, k=key, d=tangents: d.pop(k, None)), tangent)


def is_dual(*objs) -> bool:
    """Does any of these (Tensors or other values) carry a tangent?"""
    return any(isinstance(o, Tensor) and tangent_of(o) is not None for o in objs)


def carry(result, target) -> None:
    """An in-place write: `target` now holds `result`'s values, so it takes its tangent."""
    tangent = tangent_of(result)
    if tangent is not None:
        _attach(target, tangent)


def overwrite(target, source=None) -> None:
    """A write with no history (x.zero_(), x.fill_(v), x.copy_(src) outside autograd): `target` takes
    the tangent of `source`, broadcast and cast to it, or a zero tangent where the values are constants."""
    tangent = tangent_of(source) if source is not None else None
    if tangent is None and tangent_of(target) is None:
        return
    _attach(target, _zeros(target) if tangent is None else tangent.expand(target.shape).to(target.dtype))


# -- the public API ----------------------------------------------------------------------
def enter_dual_level() -> int:
    if _state.level is not None:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    _state.level = 0
    _state.tangents = {}
    return 0


def exit_dual_level(*, level: int | None = None) -> None:
    if _state.level is None or (level is not None and level != _state.level):
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that was created. "
                           "This is not supported.")
    _state.level = None
    _state.tangents = {}   # leaving the level drops every tangent, as in torch


class dual_level:
    """`with dual_level():` opens the (single) forward-AD level and closes it on exit."""

    def __enter__(self) -> int:
        return enter_dual_level()

    def __exit__(self, *exc) -> None:
        exit_dual_level()

    def __call__(self, fn: Callable) -> Callable:

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with dual_level():
                return fn(*args, **kwargs)
        return wrapper


def _check_size(tensor, tangent) -> None:
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(tensor.shape)} while the given "
                           f"forward gradient is of size {list(tangent.shape)}.")


def set_tangent(tensor, tangent) -> None:
    """`tensor` carries `tangent` from now on (a custom Function's jvp result), in its dtype."""
    _check_size(tensor, tangent)
    _attach(tensor, tangent if tangent.dtype == tensor.dtype else tangent.to(tensor.dtype))


def make_dual(tensor, tangent, *, level: int | None = None):
    """A view of `tensor` that carries `tangent` (the direction of the derivative)."""
    if _state.level is None:
        raise RuntimeError("Trying to create a dual Tensor for forward AD but no level exists, make sure to "
                           "enter_dual_level() first.")
    _check_size(tensor, tangent)
    if not tensor.is_floating_point():
        raise ValueError(f"Expected primal to be floating point or complex, but got: {tensor.dtype}")
    if not tangent.is_floating_point():
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {tangent.dtype}")
    _state.busy = True
    try:
        dual = Tensor._namespace.view(tensor, tuple(tensor.shape))
    finally:
        _state.busy = False
    if tangent.dtype != tensor.dtype:
        tangent = tangent.to(tensor.dtype)
    _attach(dual, tangent)
    return dual


def unpack_dual(tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent): a view of `tensor` without its tangent, and the tangent (or None)."""
    apply = Tensor._namespace.apply
    tangent = tangent_of(tensor)
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    _state.busy = True
    try:
        primal = apply(ALIAS, (tensor,))
    finally:
        _state.busy = False
    return UnpackedDualTensor(primal, tangent)


# -- propagation through an op ---------------------------------------------------------------
def apply_dual(run: Callable, op, inputs: tuple, params: tuple, dtype):
    """apply with a level open: run the op, then give its output(s) their tangent."""
    tangents = tuple(tangent_of(t) for t in inputs)
    _state.busy = True
    try:
        result = run(op, inputs, params, dtype)
        if any(t is not None for t in tangents) and op.vjp is not None:
            outs = result if op.n_outputs != 1 else (result,)
            out_tangents = _jvp(op, tangents, result, inputs, params)
            out_tangents = out_tangents if op.n_outputs != 1 else (out_tangents,)
            for o, t in zip(outs, out_tangents):
                if t is not None and o.is_floating_point():
                    if t.dtype != o.dtype:
                        t = t.to(o.dtype)
                    if tuple(t.shape) != tuple(o.shape):
                        t = t.expand(*o.shape)
                    _attach(o, t)
            _emit(op, inputs, outs, tangents, out_tangents, params)
    finally:
        _state.busy = False
    return result


def _emit(op, inputs, outs, tangents, out_tangents, params=()) -> None:
    if events._listeners:
        events.emit(events.TangentComputed(op, tuple(inputs), tuple(outs), tuple(tangents), tuple(out_tangents),
                                           rule_kind(op), tuple(params)))


def rule_kind(op) -> str:
    """How the op's JVP is obtained: 'explicit', one of the derived kinds, or 'transpose'."""
    rule = op.jvp
    if type(rule) is str:   # a record names its kind
        return rule
    return getattr(rule, "kind", "explicit") if rule is not None else "transpose"


def _jvp(op, tangents, out, inputs, params):
    rule = op.jvp
    if rule is None:
        return _transpose_jvp(op, tangents, out, inputs, params)
    if type(rule) is str:
        return DERIVED[rule](op, tangents, out, inputs, params)
    if hasattr(rule, "kind"):   # a derived rule given by defjvp
        return rule(op, tangents, out, inputs, params)
    # a record's own rule reads as its VJPs do, with the tangents (None where an input has none) for ḡ
    return rule(Tensor._namespace, tangents, out, *inputs, *params)


DERIVED: dict = {}   # kind -> rule: the JVPs derived from an op's VJP or its structure


def _derived(kind: str):
    def mark(fn):
        fn.kind = kind
        DERIVED[kind] = fn
        return fn
    return mark


def _vjp_parts(op, xp, g, out, inputs, params):
    """Every input's VJP of `g` (the rule may be one function or one per input)."""
    rule = op.vjp
    if type(rule) is not tuple:
        return list(rule(xp, g, out, *inputs, *params))
    return [None if f is None else f(xp, g, out, *inputs, *params) for f in rule]


@_derived("pointwise")
def pointwise(op, tangents, out, inputs, params):
    """A diagonal (or symmetric) Jacobian is its own transpose: J·t is the VJP of t."""
    TENSOR = Tensor._namespace
    total = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        rule = op.vjp[i] if type(op.vjp) is tuple else None
        part = rule(TENSOR, t, out, *inputs, *params) if rule is not None else \
            _vjp_parts(op, TENSOR, t, out, inputs, params)[i]
        if part is not None:
            total = part if total is None else total + part
    return total


@_derived("linear")
def linear(op, tangents, out, inputs, params):
    """An op linear in its tensors maps tangents as it maps values (zeros where none)."""
    apply = Tensor._namespace.apply
    if all(t is None for t in tangents):
        return None
    return apply(op, tuple(t if t is not None else _zeros(x) for t, x in zip(tangents, inputs)), params)


@_derived("bilinear")
def bilinear(op, tangents, out, inputs, params):
    """Product rule: J·(ta, tb) = op(ta, b) + op(a, tb)."""
    apply = Tensor._namespace.apply
    (ta, tb), (a, b) = tangents, inputs
    left = apply(op, (ta, b), params) if ta is not None else None
    right = apply(op, (a, tb), params) if tb is not None else None
    return right if left is None else (left if right is None else left + right)


def _zeros(x):
    return Tensor._namespace.zeros_like(x)


def _transpose_jvp(op, tangents, out, inputs, params):
    """J·t = ∂/∂g ⟨Jᵀg, t⟩: the VJP rule is linear in g, so one reverse pass through it
    (recorded with the Tensor namespace) transposes it. Events of that inner pass are
    not the user's computation, so listeners are paused while it runs."""
    TENSOR = Tensor._namespace
    outs = out if op.n_outputs != 1 else (out,)
    seeds = [_zeros(o).requires_grad_() if o.is_floating_point() else None for o in outs]
    with events._lock:
        paused, events._listeners = events._listeners, ()
    outer = _formula.active
    try:
        with enable_grad():
            _formula.active = True   # a VJP rule runs on Tensors, as in a create_graph backward
            g = seeds[0] if op.n_outputs == 1 else tuple(s if s is not None else _zeros(o)
                                                          for s, o in zip(seeds, outs))
            parts = _vjp_parts(op, TENSOR, g, out, inputs, params)
            inner = None
            for part, t in zip(parts, tangents):
                if part is None or t is None:
                    continue
                term = (part * t).sum()
                inner = term if inner is None else inner + term
        _formula.active = outer
        live = [s for s in seeds if s is not None]
        if inner is None or not inner.requires_grad:
            found = [None] * len(live)
        else:
            differentiable = any(x.requires_grad for x in inputs) or any(
                t is not None and t.requires_grad for t in tangents)
            found = list(grad(inner, live, create_graph=differentiable, allow_unused=True))
    finally:
        _formula.active = outer
        with events._lock:
            events._listeners = paused + events._listeners
    it = iter(found)
    result = [None if s is None else next(it) for s in seeds]
    result = [r if r is not None or s is None else _zeros(o) for r, s, o in zip(result, seeds, outs)]
    return result[0] if op.n_outputs == 1 else tuple(result)


def defjvp(rule: Callable, *ops) -> None:
    """Give each op in `ops` the JVP `rule` (a derived kind or an explicit rule)."""
    for op in ops:
        op.jvp = rule
