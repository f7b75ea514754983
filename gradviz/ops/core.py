"""Running an op: forward on arrays, then (when grad is needed) one Node in the graph.

Also the array namespaces the rules are written against, and the coercion of
Python scalars and mixed dtypes with PyTorch's promotion rules.
"""
from __future__ import annotations

import numpy as np

from .. import backend, events
from ..autograd import forward_ad as _forward_ad
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.describe import describe_node
from ..autograd.graph import DEFAULT, MULTI_OUTPUT, NO_GRAD, ViewMeta, _node_types, node_type
from ..dtypes import category_of_scalar, result_type, wrapped_int
from ..scope import _state as _scope_state
from .op import Op




class ArrayNamespace:
    """NumPy (or CuPy) plus the few helpers that VJP rules need beyond it."""

    arrays = True   # rules may branch on data here (the Tensor namespace has arrays = False)

    def __init__(self, xp):
        self.xp = xp
        self.__dict__.update({k: v for k, v in vars(xp).items() if not k.startswith("_")})

    def index_scatter(self, g, shape, index, accumulate=True):
        """zeros(shape) with g added at `index` (the adjoint of indexing)."""
        out = self.xp.zeros(shape, dtype=g.dtype)
        if accumulate:
            backend.scatter_add(self.xp, out, index, g)
        else:
            out[index] = g
        return out

    def scatter_add_zeros(self, shape, dim, index, g):
        """zeros(shape).scatter_add_(dim, index, g) (the adjoint of gather)."""
        out = self.xp.zeros(shape, dtype=g.dtype)
        backend.scatter_add(self.xp, out, scatter_key(self.xp, index, dim), g)
        return out

    def gather_along(self, a, index, dim):
        """a.gather(dim, index): unlike take_along_axis, index may be smaller than a in every dim."""
        return a[scatter_key(self.xp, index, dim)]

    def diagonal_scatter(self, g, shape, offset, dim1, dim2):
        """zeros(shape) with g written on the diagonal (the adjoint of diagonal)."""
        out = self.xp.zeros(shape, dtype=g.dtype)
        view = self.xp.diagonal(out, offset, dim1, dim2)
        view.setflags(write=True) if self.xp is np else None
        view[...] = g
        return out

    def keep(self, g, mask):
        """g where mask holds, +0 elsewhere. Multiplying by the mask is ~8x faster than
        where() on unpredictable masks; adding 0 turns the −0 of (−x)·0 into PyTorch's +0."""
        out = g * mask
        out += 0
        return out

    def index_fill_zero(self, g, basic, adv=None):
        """g with zeros at g[basic][adv] (the adjoint of overwriting a region)."""
        out = g.copy()
        write(out, basic, adv, 0)
        return out

    def erf(self, a):
        if self.xp is np:
            from .special import erf
            return erf(a)
        from cupyx.scipy.special import erf  # pragma: no cover - GPU only
        return erf(a)

    def astype(self, a, dtype):
        return a.astype(dtype, copy=False)


def write(array, basic, adv, v) -> None:
    """array[basic][adv] = v, in place (a basic key ending in ... always gives a view)."""
    view = array[basic] if basic else array
    view[(...,) if adv is None else adv] = v


def scatter_key(xp, index, dim):
    """The key of scatter/gather along dim: index at dim, every other axis in step with it."""
    key = list(xp.indices(index.shape, sparse=True))
    key[dim] = index
    return tuple(key)


NUMPY = ArrayNamespace(np)
_namespaces = {np: NUMPY}


def namespace(array) -> ArrayNamespace:
    if type(array) is np.ndarray:
        return NUMPY
    xp = backend.namespace_of(array)
    if xp not in _namespaces:
        _namespaces[xp] = ArrayNamespace(xp)
    return _namespaces[xp]


def contiguous(a):
    """a, or a C-ordered copy of it (unlike np.ascontiguousarray, keeps 0-d arrays 0-d)."""
    return a if a.flags.c_contiguous else a.copy()


def as_array(data):
    """numpy scalars (what NumPy returns for 0-d results) become 0-d arrays."""
    if isinstance(data, np.generic):
        return np.asarray(data)
    return data


Tensor = None   # gradviz.tensor sets this once the class exists (the class itself imports the ops)


def apply(op: Op, inputs: tuple, params: tuple = (), dtype=None):
    """Run `op` on Tensors. Builds a Node only when grad mode is on and an input requires grad."""
    if _forward_ad._state.level is not None and not _forward_ad._state.busy:
        return _forward_ad.apply_dual(apply, op, inputs, params, dtype)   # tangents flow forward too
    arrays = [t._data for t in inputs]
    first = arrays[0]
    try:
        out = op.forward(NUMPY if type(first) is np.ndarray else namespace(first), *arrays, *params)
    except ValueError as exc:
        raise RuntimeError(shape_error(op, arrays, exc)) from None
    if dtype is not None:
        out = out.astype(dtype, copy=False)
    needs_grad = False
    if op.vjp is not None and _grad_state.enabled:
        for t in inputs:
            # a view's grad_fn may be due for regeneration; its requires_grad says so
            if t._requires_grad or t._grad_fn is not None or (t._view is not None and t.requires_grad):
                needs_grad = True
                break
    if not needs_grad:
        if op.n_outputs == 1:
            result = Tensor._make(out)
            if getattr(out, "base", None) is not None:
                share_version(result, inputs, op)
            return result
        return tuple(share_version(Tensor._make(o), inputs, op) for o in out)
    if op.n_outputs == 1:
        out = as_array(out)
    else:
        out = tuple(as_array(o) for o in out)
    node_cls = _node_types.get(op) or node_type(op)
    node = node_cls(op, inputs, params, out, tuple([t._edge() for t in inputs]), _scope_state.path)
    if op.n_outputs == 1:
        result = Tensor._make(out, node, 0)
        if getattr(out, "base", None) is not None:
            share_version(result, inputs, op)
    else:
        result = tuple(share_version(Tensor._make(o, node, i), inputs, op) for i, o in enumerate(out))
    if events.tracking_sources:
        events.remember_source(node, 2)
    if events._listeners:
        outs = (result,) if op.n_outputs == 1 else result
        info = describe_node(node)
        events.emit(events.NodeCreated(node, tuple(inputs), outs, node.scope, info))
    return result


def share_version(view, inputs, op=None):
    """An output that shares an input's memory is a view of it, as in PyTorch: it shares the
    base's version counter (an in-place write through either is seen by every node that
    saved the other) and knows its base (the root), so writes through it are recorded on
    the base (CopySlices)."""
    data = view._data
    if getattr(data, "base", None) is not None:
        xp = NUMPY if type(data) is np.ndarray else namespace(data)
        for t in inputs:
            if xp.may_share_memory(data, t._data):
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


def shape_error(op: Op, arrays, exc) -> str:
    """PyTorch's words for a broadcast failure, naming the op and both shapes."""
    shapes = [tuple(a.shape) for a in arrays]
    if len(shapes) == 2 and "broadcast" in str(exc):
        a, b = shapes
        for i in range(1, max(len(a), len(b)) + 1):
            da = a[-i] if i <= len(a) else 1
            db = b[-i] if i <= len(b) else 1
            if da != db and da != 1 and db != 1:
                return (f"The size of tensor a ({da}) must match the size of tensor b ({db}) at non-singleton "
                        f"dimension {max(len(a), len(b)) - i} (in {op.torch_name[:-9] or op.name}: shapes "
                        f"{list(a)} and {list(b)}; make the shapes broadcastable, e.g. with unsqueeze or reshape)")
    return f"{op.name}: {exc} (input shapes {', '.join(str(list(s)) for s in shapes)})"


def broadcast_error(a: tuple, b: tuple) -> str | None:
    """PyTorch's words when shapes a and b do not broadcast (None when they do)."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for d in reversed(range(n)):
        if pa[d] != pb[d] and 1 not in (pa[d], pb[d]):
            return (f"The size of tensor a ({pa[d]}) must match the size of tensor b ({pb[d]}) at non-singleton "
                    f"dimension {d}")
    return None


def expand_error(src: tuple, target: tuple, type_name: str) -> str | None:
    """PyTorch's words when a tensor of shape src cannot expand to target (None when it can)."""
    if len(src) > len(target):
        return (f"expand({type_name}{{{list(src)}}}, size={list(target)}): the number of sizes provided "
                f"({len(target)}) must be greater or equal to the number of dimensions in the tensor ({len(src)})")
    for i in range(1, len(src) + 1):
        s, t = src[-i], target[-i]
        if s != t and s != 1:
            return (f"The expanded size of the tensor ({t}) must match the existing size ({s}) at non-singleton "
                    f"dimension {len(target) - i}.  Target sizes: {list(target)}.  Tensor sizes: {list(src)}")
    return None


def coerce_pair(a, b):
    """Two operands (Tensors or Python scalars) -> two Tensors and the result dtype (None: no cast).

    PyTorch's promotion: a Python scalar takes the tensor's dtype unless it is of a
    higher category (1.5 * int tensor -> default float dtype)."""
    a_is_t, b_is_t = isinstance(a, Tensor), isinstance(b, Tensor)
    if a_is_t and b_is_t:
        if a._data.dtype == b._data.dtype:
            return a, b, None
        return a, b, result_type((a._data, b._data))
    t, s = (a, b) if a_is_t else (b, a)
    if not isinstance(t, Tensor):
        raise TypeError(f"expected a Tensor, got {type(a).__name__} and {type(b).__name__}")
    tdt = t._data.dtype
    if isinstance(s, np.ndarray):
        s = Tensor._make(s)
        rt = result_type((t._data, s._data))
        return (t, s, rt) if a_is_t else (s, t, rt)
    cat = category_of_scalar(s)
    tcat = 0 if tdt.kind == "b" else (2 if tdt.kind == "f" else 1)
    rt = tdt if cat <= tcat else result_type((t._data,), (s,))
    if cat == 1 and rt.kind in "iu" and isinstance(s, int):
        s = wrapped_int(s, rt)
    xp = backend.namespace_of(t._data)
    const = Tensor._make(xp.asarray(s, dtype=rt))
    out_dtype = None if rt == tdt else rt
    return (t, const, out_dtype) if a_is_t else (const, t, out_dtype)
