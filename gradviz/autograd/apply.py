"""Running an op on Tensors: forward on arrays, then (when grad is needed) one Node in the graph.

This is autograd's `Function.apply` for the op records of `gradviz.ops`: the records hold the
math on arrays; this module runs them on Tensors (grad mode, forward-mode tangents, the
Node and its events, views sharing their base's version counter, PyTorch's scalar promotion).
"""
from __future__ import annotations

import numpy as np
from numpy import ndarray   # one global load where np.ndarray is two, on the per-op path

from .. import backend, code_lines, events
from .._args import argument_error, is_number, type_name
from ..dtypes import category_of_scalar, float16, float32, result_type, wrapped_int
from ..ops.core import NUMPY, as_array, namespace, shape_error
from .grad_mode import _formula
from ..ops.op import Op
from ..scope import _state as _scope_state
from ..tensor import INFERENCE, INFERENCE_SAVED, InferenceTensors, Tensor, inherit_inference
from .fast_paths import edges as _edges, forward as _forward   # one global load each, not two
from . import forward_ad as _forward_ad
from .describe import describe_node
from .grad_mode import _state as _grad_state
from .views import arrays_share
from .nodes import Node, _node_types, node_type
from .versions import DEFAULT, MULTI_OUTPUT, NO_GRAD, ViewMeta

_make = Tensor._make   # the classmethod bound once, not once per op
_new_object = object.__new__


def _check_one_device(arrays, params) -> None:
    """torch's error when an op's tensors (index arrays included) live on different devices."""
    devices = []
    for a in (*arrays, *params):
        if backend.is_array(a) and (device := backend.device_of(a)) not in devices:
            devices.append(device)
    if len(devices) > 1:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{devices[0]} and {devices[1]}!")


def apply(op: Op, inputs: tuple, params: tuple = (), dtype=None):
    """Run `op` on Tensors. Builds a Node only when grad mode is on and an input requires grad."""
    if _forward_ad._state.level is not None and not _forward_ad._state.busy:
        return _forward_ad.apply_dual(apply, op, inputs, params, dtype)   # tangents flow forward too
    keeps = op.keeps
    try:
        if keeps is None:
            out = _forward(op, inputs, params)
        else:   # a forward that hands its VJP what it computed on the way
            out, kept = _forward_keeping(op, inputs, params)
    except ValueError as exc:
        raise RuntimeError(shape_error(op, [t._data for t in inputs], exc)) from None
    except TypeError:   # NumPy and CuPy arrays do not mix: say so as torch does
        _check_one_device([t._data for t in inputs], params)
        raise
    if dtype is not None:
        out = out.astype(dtype, copy=False)
    if op.vjp is None or not _grad_state.enabled:
        return _untracked(op, inputs, out)
    edges = _edges(inputs)   # (a view's grad_fn regenerated where its base was written since)
    if edges is None:   # no input requires grad
        return _untracked(op, inputs, out)
    if op.n_outputs == 1:
        if type(out) is not ndarray:
            out = as_array(out)
    else:
        out = tuple(as_array(o) for o in out)
    # __init__ called as a method: calling the class packs the arguments into a tuple and looks
    # __init__ up again (45 of Node's 380 ns)
    node = _new_object(_node_types.get(op) or node_type(op))   # MulBackward0, ...
    node.__init__(op, inputs, params, out, edges[0], edges[1], _scope_state.path)
    if op.n_outputs == 1:
        result = _make(out, node, 0)
        if out.base is not None:
            share_version(result, inputs, op)
        outs = None
    else:
        result = outs = tuple(share_version(Tensor._make(o, node, i), inputs, op) for i, o in enumerate(out))
    if keeps is not None:
        node.kept = kept
    if InferenceTensors.made:
        _refuse_saved_inference(node)
    if code_lines.tracking_sources:
        code_lines.remember_source(node, 2)
    if events._listeners:
        outs = (result,) if outs is None else outs
        info = describe_node(node)
        events.emit(events.NodeCreated(node, tuple(inputs), outs, node.scope, info))
    return result


def _refuse_saved_inference(node) -> None:
    """torch's refusal of an inference tensor that a recorded node would save for its backward
    (one it only passes a gradient to, as add's, is allowed)."""
    names = node.op.arg_names
    for key in node._kept_names():
        if key in names and getattr(node.inputs[names.index(key)], "_inference", False):
            raise RuntimeError(INFERENCE_SAVED)


def _forward_keeping(op: Op, inputs: tuple, params: tuple):
    """`op.keeps` on the inputs' arrays: (output, what the VJP reads of the forward's work)."""
    arrays = [t._data for t in inputs]
    first = arrays[0]
    return op.keeps(NUMPY if type(first) is ndarray else namespace(first), *arrays, *params)


def _untracked(op: Op, inputs: tuple, out):
    """The result of an op no gradient flows through: Tensors without a grad_fn (still views
    of an input when they share its memory)."""
    if op.n_outputs == 1:
        result = _make(out)
        if getattr(out, "base", None) is not None:
            share_version(result, inputs, op)
        return result
    return tuple(share_version(Tensor._make(o), inputs, op) for o in out)


def share_version(view, inputs, op=None):
    """An output that shares an input's memory is a view of it, as in PyTorch: it shares the
    base's version counter (an in-place write through either is seen by every node that
    saved the other) and knows its base (the root), so writes through it are recorded on
    the base (CopySlices)."""
    data = view._data
    if getattr(data, "base", None) is not None:
        xp = NUMPY if type(data) is ndarray else namespace(data)
        for t in inputs:
            if arrays_share(xp, t._data, data):
                if InferenceTensors.made:
                    inherit_inference(t, view)
                counter = view._vc = t._counter()
                meta = t._view
                if meta is not None and meta.creation != DEFAULT:
                    creation = meta.creation            # a view of such a view inherits it
                elif not _grad_state.enabled:
                    creation = NO_GRAD
                elif op is not None and (op.n_outputs > 1 or op.name in _MULTI_VIEW_OPS):
                    creation = MULTI_OUTPUT
                else:
                    creation = DEFAULT
                view._view = ViewMeta(t if meta is None else meta.base, counter.version, creation)
                if xp is NUMPY and not data.flags.writeable and t._data.flags.writeable:
                    data.setflags(write=True)           # NumPy's diagonal/broadcast views are read-only
                break
    return view


_MULTI_VIEW_OPS = frozenset({"split", "unbind"})   # they return a list of views even when it has one


_HALF, _FLOAT = float16.np, float32.np


def coerce_pair(a, b, name: str = "", opmath: bool = False):
    """Two operands (Tensors or Python scalars) -> two Tensors and the result dtype (None: no cast).

    PyTorch's promotion: a Python scalar takes the tensor's dtype unless it is of a
    higher category (1.5 * int tensor -> default float dtype). Anything else (a list, a NumPy
    array, None) is refused as torch's parser refuses it for the function `name`.

    `opmath`: the op is one of torch's kernels (mul, div) that read a Python number `b` of a float16
    op in float32, its op-math type (`original_scalar_value<opmath_t>`), and round once: the number is
    then a float32 constant and the result is cast to float16, where a float16 constant would round
    0.1 to 0.0999755859375 first."""
    a_is_t, b_is_t = isinstance(a, Tensor), isinstance(b, Tensor)
    if a_is_t and b_is_t:
        if a._data.dtype is b._data.dtype or a._data.dtype == b._data.dtype:
            return a, b, None
        return a, b, result_type((a._data, b._data))
    t, s = (a, b) if a_is_t else (b, a)
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor, got {type(a).__name__} and {type(b).__name__}")
    tdt = t._data.dtype
    if not is_number(s):
        if isinstance(s, np.ndarray) and _formula.active:   # a VJP rule on Tensors meets its array params
            s = Tensor._make(s)
            rt = result_type((t._data, s._data))
            return (t, s, rt) if a_is_t else (s, t, rt)
        raise argument_error(name, "other", 2, "Tensor", type_name(s)) if a_is_t else \
            argument_error(name, "input", 1, "Tensor", type_name(s))
    cat = category_of_scalar(s)
    tcat = 0 if tdt.kind == "b" else (2 if tdt.kind == "f" else 1)
    rt = tdt if cat <= tcat else result_type((t._data,), (s,))
    if cat == 1 and rt.kind in "iu" and isinstance(s, int):
        s = wrapped_int(s, rt)
    xp = backend.namespace_of(t._data)
    wide = opmath and a_is_t and rt is _HALF and tdt is _HALF   # (torch reads it so as the second operand only)
    const = Tensor._make(xp.asarray(s, dtype=_FLOAT if wide else rt))
    const._wrapped = True   # torch's wrapped number: saved, but never through saved-tensor hooks
    out_dtype = rt if wide else None if rt == tdt else rt
    return (t, const, out_dtype) if a_is_t else (const, t, out_dtype)
