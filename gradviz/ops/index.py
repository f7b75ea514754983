"""Indexing: basic indexing as a chain of select/slice/unsqueeze views (as PyTorch
records it), advanced indexing as one IndexBackward0 whose VJP scatter-adds ḡ, so
repeated indices accumulate."""
from __future__ import annotations

import numpy as np

from .core import apply
from .op import Op
from .reduce import normalize_dims
from .shape import unsqueeze


def _at(dim, item):
    return (slice(None),) * dim + (item,)


SELECT = Op("select", "SelectBackward0", "c = a[…, i]", lambda xp, a, dim, i: a[_at(dim, i)],
            vjp=(lambda xp, g, c, a, dim, i: xp.index_scatter(g, a.shape, _at(dim, i), False),),
            vjp_formulas=("ḡ placed at index i of zeros",), params=("dim", "index"))
SLICE = Op("slice", "SliceBackward0", "c = a[…, start:end:step]",
           lambda xp, a, dim, start, end, step: a[_at(dim, slice(start, end, step))],
           vjp=(lambda xp, g, c, a, dim, start, end, step:
                xp.index_scatter(g, a.shape, _at(dim, slice(start, end, step)), False),),
           vjp_formulas=("ḡ placed in the slice of zeros",), params=("dim", "start", "end", "step"))
INDEX = Op("index", "IndexBackward0", "c = a[idx]", lambda xp, a, idx: a[idx],
           vjp=(lambda xp, g, c, a, idx: xp.index_scatter(g, a.shape, idx, True),),
           vjp_formulas=("ḡ scatter-added at idx (repeats accumulate)",), params=("indices",), saves=("indices",))
INDEX_PUT = Op("index_put", "CopySlices", "c = a; c[idx] = v", lambda xp, a, v, idx: _put(a, v, idx),
               vjp=(lambda xp, g, c, a, v, idx: xp.index_fill_zero(g, idx), lambda xp, g, c, a, v, idx: g[idx]),
               vjp_formulas=("ḡ with zeros at idx", "ḡ[idx]"), args=("self", "values"), params=("indices",))
GATHER = Op("gather", "GatherBackward0", "cᵢⱼ = a[i, idx[i, j]]",
            lambda xp, a, dim, index: xp.take_along_axis(a, index, axis=dim),
            vjp=(lambda xp, g, c, a, dim, index: xp.scatter_add_zeros(a.shape, dim, index, g),),
            vjp_formulas=("ḡ scatter-added back along dim",), params=("dim", "index"), saves=("index",))
SCATTER_ADD = Op("scatter_add", "ScatterAddBackward0", "c = a; c[idx] += src",
                 lambda xp, a, src, dim, index: a + xp.scatter_add_zeros(a.shape, dim, index, src[_region(index)]),
                 vjp=(lambda xp, g, c, a, src, dim, index: g,
                      lambda xp, g, c, a, src, dim, index: _pad_to(xp, xp.take_along_axis(g, index, axis=dim), src)),
                 vjp_formulas=("ḡ", "gather(ḡ, dim, idx)"), args=("self", "src"), params=("dim", "index"),
                 saves=("index",))
INDEX_SELECT = Op("index_select", "IndexSelectBackward0", "c = a.index_select(dim, idx)",
                  lambda xp, a, dim, index: xp.take(a, index, axis=dim),
                  vjp=(lambda xp, g, c, a, dim, index: xp.index_scatter(g, a.shape, _at(dim, index), True),),
                  vjp_formulas=("ḡ scatter-added at idx",), params=("dim", "index"), saves=("index",))


def _put(a, v, idx):
    out = a.copy()
    out[idx] = v
    return out


def _region(index):
    return tuple(slice(0, s) for s in index.shape)


def _pad_to(xp, g, src):
    """gather(ḡ) has index's shape; src may be larger (only its leading region is used)."""
    if tuple(g.shape) == tuple(src.shape):
        return g
    return xp.index_scatter(g, src.shape, _region(g), False)


# -- the adjoints as differentiable ops, for the Tensor namespace (create_graph=True) --
INDEX_SCATTER = Op("index_scatter", "IndexPutBackward0", "c = zeros; c[idx] += g",
                   lambda xp, g, shape, idx, acc: xp.index_scatter(g, shape, idx, acc),
                   vjp=(lambda xp, gg, c, g, shape, idx, acc: gg[idx],), vjp_formulas=("ḡ[idx]",),
                   params=("shape", "indices", "accumulate"))
SCATTER_ADD_ZEROS = Op("scatter_add", "ScatterAddBackward0", "c = zeros; c[idx] += g",
                       lambda xp, g, shape, dim, index: xp.scatter_add_zeros(shape, dim, index, g),
                       vjp=(lambda xp, gg, c, g, shape, dim, index: xp.take_along_axis(gg, index, axis=dim),),
                       vjp_formulas=("gather(ḡ)",), params=("shape", "dim", "index"))
DIAGONAL_SCATTER = Op("diagonal_scatter", "DiagonalScatterBackward0", "c = zeros; diag(c) = g",
                      lambda xp, g, shape, offset, d1, d2: xp.diagonal_scatter(g, shape, offset, d1, d2),
                      vjp=(lambda xp, gg, c, g, shape, offset, d1, d2: xp.diagonal(gg, offset, d1, d2),),
                      vjp_formulas=("diag(ḡ)",), params=("shape", "offset", "dim1", "dim2"))
INDEX_FILL_ZERO = Op("index_fill", "IndexFillBackward0", "c = g; c[idx] = 0",
                     lambda xp, g, idx: xp.index_fill_zero(g, idx),
                     vjp=(lambda xp, gg, c, g, idx: xp.index_fill_zero(gg, idx),), vjp_formulas=("ḡ, 0 at idx",),
                     params=("indices",))


# -- public functions ---------------------------------------------------------------
def _as_index(item):
    from ..tensor import Tensor
    if isinstance(item, Tensor):
        return item._data
    if isinstance(item, (list, np.ndarray)):
        return np.asarray(item)
    if isinstance(item, (bool, np.bool_)):
        return np.asarray(item)
    return item


def parse_index(key):
    key = key if isinstance(key, tuple) else (key,)
    items = tuple(_as_index(k) for k in key)
    advanced = any(isinstance(k, np.ndarray) for k in items)
    return items, advanced


def getitem(tensor, key):
    items, advanced = parse_index(key)
    if advanced:
        for k in items:
            if isinstance(k, np.ndarray) and k.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return apply(INDEX, (tensor,), (items,))
    real = sum(1 for k in items if k is not None and k is not Ellipsis)
    if real > tensor.ndim:
        raise IndexError(f"too many indices for tensor of dimension {tensor.ndim}")
    out, dim = tensor, 0
    for k in items:
        if k is Ellipsis:
            dim += tensor.ndim - real
        elif k is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(k, slice):
            size = out.shape[dim]
            start, stop, step = k.indices(size)
            if step <= 0:
                raise ValueError("step must be greater than zero")
            if (start, stop, step) != (0, size, 1):
                out = apply(SLICE, (out,), (dim, start, max(stop, start), step))
            dim += 1
        else:
            i = int(k)
            size = out.shape[dim]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
            out = apply(SELECT, (out,), (dim, i % size))
    if out is tensor and tensor.ndim:   # x[:] is still a view in PyTorch's graph
        out = apply(SLICE, (tensor,), (0, 0, tensor.shape[0], 1))
    return out


def index_put(tensor, key, values):
    """The out-of-place result of tensor[key] = values (CopySlices in PyTorch)."""
    from ..tensor import Tensor
    items, _ = parse_index(key)
    if not isinstance(values, Tensor):
        values = Tensor(values, dtype=tensor.dtype)
    return apply(INDEX_PUT, (tensor, values), (items,))


def gather(input, dim, index):
    (d,) = normalize_dims(dim, input.ndim)
    idx = index._data
    if idx.ndim != input.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    return apply(GATHER, (input,), (d, idx))


def scatter_add(input, dim, index, src):
    (d,) = normalize_dims(dim, input.ndim)
    return apply(SCATTER_ADD, (input, src), (d, index._data))


def index_select(input, dim, index):
    (d,) = normalize_dims(dim, input.ndim)
    idx = index._data if hasattr(index, "_data") else np.asarray(index)
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    return apply(INDEX_SELECT, (input,), (d, idx.reshape(-1)))
