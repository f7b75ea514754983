"""Writes through views, recorded as PyTorch records them.

A view (x[0], x[:2], x.T, x.view(...), x.expand(...)) shares its base's memory and
version counter (gradviz.autograd.apply.share_version). An in-place op on a view of a tensor
in the graph writes into the base and rebases the *base's* history: its new grad_fn is
CopySlices, which hands the base's gradient on unchanged except in the view's region,
where the in-place op's own VJP runs. The view's grad_fn becomes AsStridedBackward0 of
the base's, and so does every other view of that base once it is next read (its
version no longer matches), as PyTorch regenerates them.

Regions are described as PyTorch's as_strided describes them: sizes, strides and a
storage offset relative to the base's memory, turned into the flat index of every
element only when a backward needs it.
"""
from __future__ import annotations

import re
from math import prod
from typing import NamedTuple

import numpy as np

from .. import backend, events
from ..ops.op import Op
from ..scope import _state as _scope_state
from .engine import node_vjp
from .nodes import edges_apart, ghost_tensor, Node, node_type, saved_attributes
from .versions import DEFAULT, IN_CUSTOM_FUNCTION, MULTI_OUTPUT, ViewMeta


DETACH_VIEW = ("Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
               "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
               "detach_() cannot be called on these gradients. To fix this error, please refer to the "
               "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")


class Geometry(NamedTuple):
    """A view's elements within its base, in elements: the base's own layout, then the
    view's sizes, strides and offset from the base's first element (as_strided's terms)."""
    base_shape: tuple
    base_strides: tuple
    size: tuple
    stride: tuple
    storage_offset: int


def _address(a) -> int:
    return a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else a.data.ptr


def geometry(base, view) -> Geometry:
    """Where the array `view` lies inside the array `base` (they share memory)."""
    item = base.itemsize
    return Geometry(tuple(base.shape), tuple(s // item for s in base.strides), tuple(view.shape),
                    tuple(s // item for s in view.strides), (_address(view) - _address(base)) // item)


def view_index(geom: Geometry) -> np.ndarray:
    """For each element of the view, the flat (C-order) index of the base element it is."""
    # lay the base's flat indices out in a buffer shaped like its memory, then read the
    # buffer through the view's strides: any layout, any strides (even negative) work
    lo = sum((n - 1) * s for n, s in zip(geom.base_shape, geom.base_strides) if s < 0 and n)
    hi = sum((n - 1) * s for n, s in zip(geom.base_shape, geom.base_strides) if s > 0 and n)
    buf = np.zeros(hi - lo + 1, dtype=np.intp)
    start = buf[-lo:]
    step = buf.itemsize
    np.lib.stride_tricks.as_strided(start, geom.base_shape, tuple(s * step for s in geom.base_strides))[...] = \
        np.arange(prod(geom.base_shape)).reshape(geom.base_shape)
    return np.lib.stride_tricks.as_strided(start[geom.storage_offset:], geom.size,
                                           tuple(s * step for s in geom.stride)).copy()


def _flat_index(xp, geom: Geometry):
    idx = view_index(geom)
    return xp.asarray(idx) if xp.arrays and xp.xp is not np else idx   # on the GPU, moved there


def _as_strided_vjp(xp, g, c, a, geom):
    # the adjoint of reading the view's elements: add ḡ into zeros at them (overlapping
    # views, such as an expand, add up)
    idx = _flat_index(xp, geom)
    return xp.reshape(xp.index_scatter(g, (prod(geom.base_shape),), idx, True), geom.base_shape)


def _copy_slices_vjp(xp, g, c, base, *rest):
    """ḡ for the base as it was, with the view's region replaced by the in-place op's
    gradient for the view's old values; the op's other inputs get theirs as usual."""
    geom, fn = rest[-2], rest[-1]
    idx = _flat_index(xp, geom)
    n = prod(geom.base_shape)
    flat = xp.reshape(g, (n,))
    region = xp.reshape(flat[idx.reshape(-1)], geom.size)
    sent, _ = node_vjp(fn, region, not xp.arrays)
    if xp.arrays:
        out = flat.copy()
        out[idx] = 0 if sent[0] is None else sent[0]
    else:
        out = xp.index_fill_zero(flat, (), (idx,))
        if sent[0] is not None:
            out = out + xp.index_scatter(sent[0], (n,), idx, True)
    return [xp.reshape(out, geom.base_shape)] + list(sent[1:])


AS_STRIDED = Op("as_strided", "AsStridedBackward0",
                r"$c = $0 \text{ seen through a strided view (size, stride, offset)}",
                forward=None,
                vjp=(_as_strided_vjp,),
                params=("geometry",),
                vjp_latex=(r"\bar{g} \text{ added into zeros at the view's elements}",))
COPY_SLICES = Op("copy_slices", "CopySlices", r"$c = $0;\; $c[\text{view}] = f($0[\text{view}],\, \dots)", forward=None,
                 vjp=_copy_slices_vjp,
                 args=("self",), params=("geometry", "fn"),
                 vjp_latex=(r"\bar{g}\text{, with } f\text{'s VJP of } \bar{g}[\text{view}] \text{ in the view's region}",))


class CopySlices(Node):
    """The base's grad_fn after an in-place op wrote through one of its views; `fn` is that
    op's own node (not in the graph: CopySlices runs it on the view's region)."""

    __slots__ = ()
    __module__ = "builtins"

    @property
    def fn(self) -> Node:
        return self.params[1]

    def free(self) -> None:
        self.params[1].free()
        super().free()


for _name, _attribute in saved_attributes(COPY_SLICES).items():   # _saved_geometry, _saved_fn
    setattr(CopySlices, _name, _attribute)


def as_strided_node(base, view) -> Node:
    """AsStridedBackward0: the view's grad_fn regenerated from its base's current one."""
    node = node_type(AS_STRIDED)(AS_STRIDED, (ghost_tensor(base),), (geometry(base._data, view._data),), None,
                                 *edges_apart((base._edge(),)), _scope_state.path)
    if events._listeners:
        events.emit(events.NodeCreated(node, (base,), (view,), node.scope))
    return node


def _short(name: str) -> str:
    return re.sub(r"Backward[0-9]*$", "", name)


def creation_error(view, meta: ViewMeta, indirect: bool) -> RuntimeError:
    """PyTorch's refusal to record a write into a view that was made by a function returning
    several views, in no_grad mode, or by a custom Function."""
    modified = "its base or another view of its base has been" if indirect else "is being"
    node = view._grad_fn
    if node is not None:
        msg = f"Output {view.output_nr} of {_short(node.name())} is a view and {modified} modified inplace."
    else:
        msg = f"A view was created in no_grad mode and {modified} modified inplace with grad mode enabled."
    if meta.creation == MULTI_OUTPUT:
        msg += (" This view is the output of a function that returns multiple views. Such functions do not allow "
                "the output views to be modified inplace. You should replace the inplace operation by an "
                "out-of-place one.")
    elif meta.creation == IN_CUSTOM_FUNCTION:
        msg += (" This view was created inside a custom Function (or because an input was returned as-is) and the "
                "autograd logic to handle view+inplace would override the custom backward associated with the custom "
                "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning "
                "the output of the custom Function.")
    else:
        msg += (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code "
                "by moving both the view and the inplace either both inside the no_grad block (if you don't want "
                "the inplace to be tracked) or both outside (if you want the inplace to be tracked).")
    return RuntimeError(msg)


def view_grad_fn(view, meta: ViewMeta):
    """A view's grad_fn, regenerated (AsStridedBackward0) if its base or another view of it
    was written in place since it was last set."""
    node = view._grad_fn
    base = meta.base
    if node is None and not base.requires_grad:
        return None
    version = view._vc.version
    if meta.version != version:
        if meta.creation != DEFAULT:
            raise creation_error(view, meta, indirect=True)
        if not shares_memory(base, view):
            return node                         # the base's storage was replaced (x.data = ...)
        old, old_nr = node, view.output_nr
        node = view._grad_fn = as_strided_node(base, view)
        view.output_nr = 0
        meta.version = version
        follow_retain(view, old, old_nr, node)
    return node


def shares_memory(base, view) -> bool:
    a = base._data
    return arrays_share(backend.namespace_of(a), a, view._data)


def arrays_share(xp, a, view) -> bool:
    """Is the array `view` a view of a's memory? An empty one owns no bytes to overlap, but is
    still a view (x[0:0] = v writes through it in PyTorch): it shares a's owning array."""
    if view.size == 0:
        return _owner(a) is _owner(view)
    return bool(xp.may_share_memory(view, a))


def _owner(array):
    while getattr(array, "base", None) is not None:
        array = array.base
    return array


def check_view_write(view, meta: ViewMeta) -> None:
    """PyTorch's checks before recording an in-place op on a view (check_inplace)."""
    if meta.creation != DEFAULT:
        raise creation_error(view, meta, indirect=False)
    if view.requires_grad and meta.base.is_leaf:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def rebase_base(view, meta: ViewMeta, fn: Node) -> None:
    """After `fn` (the in-place op's node) wrote through `view`: the base's grad_fn becomes
    CopySlices over its old one, and the view's its AsStridedBackward0 (the caller has
    bumped the shared version)."""
    base = meta.base
    old, old_nr = base._grad_fn, base.output_nr
    node = CopySlices(COPY_SLICES, (ghost_tensor(base),) + tuple(fn.inputs[1:]), (geometry(base._data, view._data), fn),
                      None, *edges_apart((base._edge(),) + fn.next_functions[1:]), _scope_state.path)
    base._grad_fn, base.output_nr = node, 0
    follow_retain(base, old, old_nr, node)
    if events._listeners:
        events.emit(events.NodeCreated(node, (base,) + tuple(fn.inputs[1:]), (base,), node.scope))
    old, old_nr = view._grad_fn, view.output_nr
    view._grad_fn = as_strided_node(base, view)
    view.output_nr = 0
    meta.version = view._vc.version
    follow_retain(view, old, old_nr, view._grad_fn)


def follow_retain(tensor, old, old_nr: int, node) -> None:
    """retain_grad() follows a tensor whose grad_fn an in-place op replaced, as in PyTorch."""
    retains = old.hooks.retains if old is not None and old.hooks is not None else None
    if retains and old_nr in retains and retains[old_nr]() is tensor:
        del retains[old_nr]
        node._retain(tensor.output_nr, tensor)
