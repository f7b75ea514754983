"""Indexing: basic indexing as a chain of select/slice/unsqueeze views (as PyTorch
records it), advanced indexing as one IndexBackward0 whose VJP scatter-adds ḡ, so
repeated indices accumulate."""
from __future__ import annotations

import operator

import numpy as np

from .. import backend
from ..autograd.apply import apply
from .core import contiguous, scatter_key, write
from .op import Op
from .reduce import normalize_dims, values_indices
from .shape import unsqueeze
from ..tensor import Tensor


def _at(dim, item):
    return (slice(None),) * dim + (item,)


# a[..., i, ...] with a trailing ... is a view even when it picks one element (NumPy would
# return a copied scalar), so writes into x[0] reach x as in PyTorch
SELECT = Op("select", "SelectBackward0", "c = a[…, i]", lambda xp, a, dim, i: a[_at(dim, i) + (Ellipsis,)],
            vjp=(lambda xp, g, c, a, dim, i: xp.index_scatter(g, a.shape, _at(dim, i), False),),
            vjp_formulas=("ḡ placed at index i of zeros",), params=("dim", "index"),
            latex=r"$c = $0_{[\dots,\, i]}",
            vjp_latex=(r"\bar{g}\text{ placed at index } i \text{ of zeros}",))
SLICE = Op("slice", "SliceBackward0", "c = a[…, start:end:step]",
           lambda xp, a, dim, start, end, step: a[_at(dim, slice(start, end, step))],
           vjp=(lambda xp, g, c, a, dim, start, end, step:
                xp.index_scatter(g, a.shape, _at(dim, slice(start, end, step)), False),),
           vjp_formulas=("ḡ placed in the slice of zeros",), params=("dim", "start", "end", "step"),
           latex=r"$c = $0_{[\dots,\, \mathrm{start}:\mathrm{end}:\mathrm{step}]}",
           vjp_latex=(r"\bar{g}\text{ placed in the slice of zeros}",))
INDEX = Op("index", "IndexBackward0", "c = a[idx]", lambda xp, a, idx: contiguous(a[idx]),
           vjp=(lambda xp, g, c, a, idx: xp.index_scatter(g, a.shape, idx, True),),
           vjp_formulas=("ḡ scatter-added at idx (repeats accumulate)",), params=("indices",), saves=("indices",),
           latex=r"$c = $0[\mathrm{idx}]",
           vjp_latex=(r"\bar{g}\text{ scatter-added at idx (repeats accumulate)}",))
# x[key] = v on a tensor in the graph. With only tensor indices PyTorch records one
# IndexPutBackward0; with ints/slices/None it writes into a view, recorded as CopySlices.
# `basic` is a NumPy basic key (a view), `adv` the tensor indices applied to that view.
_PUT_VJP = (lambda xp, g, c, a, v, basic, adv: xp.index_fill_zero(g, basic, adv),
            lambda xp, g, c, a, v, basic, adv: _written(g, basic, adv))
COPY_SLICES = Op("index_put", "CopySlices", "c = a; c[idx] = v", lambda xp, a, v, basic, adv: _put(a, v, basic, adv),
                 vjp=_PUT_VJP, vjp_formulas=("ḡ with zeros at idx", "ḡ[idx]"), args=("self", "values"),
                 params=("basic", "indices"), symbols=("a", "v"), broadcasts=(),
                 latex=r"$c = $0;\; $c[\mathrm{idx}] = $1",
                 vjp_latex=(r"\bar{g}\text{ with zeros at idx}", r"\bar{g}[\mathrm{idx}]",))
INDEX_PUT = Op("index_put", "IndexPutBackward0", "c = a; c[idx] = v",
               lambda xp, a, v, basic, adv: _put(a, v, basic, adv),
               vjp=_PUT_VJP, vjp_formulas=("ḡ with zeros at idx", "ḡ[idx]"), args=("self", "values"),
               params=("basic", "indices"), saves=("indices",), symbols=("a", "v"), broadcasts=(),
               latex=r"$c = $0;\; $c[\mathrm{idx}] = $1",
               vjp_latex=(r"\bar{g}\text{ with zeros at idx}", r"\bar{g}[\mathrm{idx}]",))
ALIAS = Op("alias", "AliasBackward0", "c = a", lambda xp, a: a[...], vjp=(lambda xp, g, c, a: g,),
           vjp_formulas=("ḡ",),
           latex=r"$c = $0",
           vjp_latex=(r"\bar{g}",))
GATHER = Op("gather", "GatherBackward0", "cᵢⱼ = a[i, idx[i, j]]",
            lambda xp, a, dim, index: xp.gather_along(a, index, dim),
            vjp=(lambda xp, g, c, a, dim, index: xp.scatter_add_zeros(a.shape, dim, index, g),),
            vjp_formulas=("ḡ scatter-added back along dim",), params=("dim", "index"), saves=("index",),
            latex=r"{$c}_{ij} = $0[i,\, \mathrm{idx}_{ij}]",
            vjp_latex=(r"\bar{g}\text{ scatter-added back along dim } $dim",))
SCATTER_ADD = Op("scatter_add", "ScatterAddBackward0", "c = a; c[idx] += src",
                 lambda xp, a, src, dim, index: a + xp.scatter_add_zeros(a.shape, dim, index, src[_region(index)]),
                 vjp=(lambda xp, g, c, a, src, dim, index: g,
                      lambda xp, g, c, a, src, dim, index: _pad_to(xp, xp.gather_along(g, index, dim), src)),
                 vjp_formulas=("ḡ", "gather(ḡ, dim, idx)"), args=("self", "src"), params=("dim", "index"),
                 saves=("index",), symbols=("a", "src"), broadcasts=(),
                 latex=r"$c = $0;\; $c[\mathrm{idx}] \text{ += } $1",
                 vjp_latex=(r"\bar{g}", r"\operatorname{gather}(\bar{g},\, $dim,\, \mathrm{idx})",))
INDEX_SELECT = Op("index_select", "IndexSelectBackward0", "c = a.index_select(dim, idx)",
                  lambda xp, a, dim, index: xp.take(a, index, axis=dim),
                  vjp=(lambda xp, g, c, a, dim, index: xp.index_scatter(g, a.shape, _at(dim, index), True),),
                  vjp_formulas=("ḡ scatter-added at idx",), params=("dim", "index"), saves=("index",),
                  latex=r"$c = $0[\mathrm{idx}] \text{ along dim } $dim",
                  vjp_latex=(r"\bar{g}\text{ scatter-added at idx}",))


def _put(a, v, basic, adv):
    out = a.copy()
    write(out, basic, adv, v)
    return out


def _written(x, basic, adv):
    """x[basic][adv]: the region that index_put overwrote (arrays or Tensors)."""
    if basic:
        x = x[basic]
    return x if adv is None else x[adv]


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
                   params=("shape", "indices", "accumulate"), symbols=("g",),
                   latex=r"$c = 0;\; $c[\mathrm{idx}] \text{ += } $0",
                   vjp_latex=(r"\bar{g}[\mathrm{idx}]",))
SCATTER_ADD_ZEROS = Op("scatter_add", "ScatterAddBackward0", "c = zeros; c[idx] += g",
                       lambda xp, g, shape, dim, index: xp.scatter_add_zeros(shape, dim, index, g),
                       vjp=(lambda xp, gg, c, g, shape, dim, index: xp.gather_along(gg, index, dim),),
                       vjp_formulas=("gather(ḡ)",), params=("shape", "dim", "index"), symbols=("g",),
                       latex=r"$c = 0;\; $c[\mathrm{idx}] \text{ += } $0",
                       vjp_latex=(r"\operatorname{gather}(\bar{g})",))
DIAGONAL_SCATTER = Op("diagonal_scatter", "DiagonalScatterBackward0", "c = zeros; diag(c) = g",
                      lambda xp, g, shape, offset, d1, d2: xp.diagonal_scatter(g, shape, offset, d1, d2),
                      vjp=(lambda xp, gg, c, g, shape, offset, d1, d2: xp.diagonal(gg, offset, d1, d2),),
                      vjp_formulas=("diag(ḡ)",), params=("shape", "offset", "dim1", "dim2"),
                      latex=r"$c = 0;\; \operatorname{diag}($c) = $0",
                      vjp_latex=(r"\operatorname{diag}(\bar{g})",))
INDEX_FILL_ZERO = Op("index_fill", "IndexFillBackward0", "c = g; c[idx] = 0",
                     lambda xp, g, basic, adv: xp.index_fill_zero(g, basic, adv),
                     vjp=(lambda xp, gg, c, g, basic, adv: xp.index_fill_zero(gg, basic, adv),),
                     vjp_formulas=("ḡ, 0 at idx",), params=("basic", "indices"),
                     latex=r"$c = $0;\; $c[\mathrm{idx}] = 0",
                     vjp_latex=(r"\bar{g}\text{, 0 at idx}",))


# -- public functions ---------------------------------------------------------------
def _as_index(item):
    if isinstance(item, Tensor):
        return item._data
    if isinstance(item, list) and not item:
        return np.zeros(0, dtype=np.int64)   # x[[]] selects nothing (an empty long index)
    if isinstance(item, range):
        return np.arange(item.start, item.stop, item.step, dtype=np.int64)   # a sequence of ints, as in torch
    if isinstance(item, (list, np.ndarray)):
        return np.asarray(item)
    return item


def _is_bool_scalar(k) -> bool:
    return isinstance(k, (bool, np.bool_)) or (isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype == bool)


def parse_index(shape: tuple, key, single_slice: bool = False):
    """PyTorch's reading of `x[key]`: ints, slices and None apply first, left to right, as
    views (SelectBackward0, SliceBackward0, UnsqueezeBackward0); the tensor indices then index
    that view at the dims they landed on (one IndexBackward0). NumPy would instead count ints
    as advanced indices, which moves the result's dims when an int and a tensor are apart.

    Returns (steps, basic, adv): the views to record [(kind, dim, arg)], the same view as a
    NumPy basic key (() when it is the whole tensor), and the key of slices and integer/bool
    arrays for that view (None when there is none). A full slice records nothing, except
    for a bare `x[:]`, which PyTorch always records."""
    items = [_as_index(k) for k in (key if isinstance(key, tuple) else (key,))]

    def width(k):
        if k is None or k is Ellipsis or _is_bool_scalar(k):
            return 0
        if isinstance(k, np.ndarray) and k.dtype == bool:
            return k.ndim
        return 1

    ndim = len(shape)
    specified = sum(width(k) for k in items)
    if ndim == 0 and specified and any(isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in items):
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in "
                         "C++ to convert a 0-dim tensor to a number")
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    while sum(k is Ellipsis for k in items) > 1 and items[-1] is Ellipsis:
        items = items[:-1]   # torch lets a later ellipsis run past the last dimension, where it selects nothing
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    cur = list(shape)
    steps, basic, adv, dim = [], [], {}, 0
    src = 0   # the dimension of the indexed tensor that k reads (torch's messages count these)
    for k in items:
        if k is Ellipsis:
            basic.append(k)
            dim += ndim - specified
            src += ndim - specified
        elif k is None or _is_bool_scalar(k):
            steps.append(("unsqueeze", dim, None))
            basic.append(None)
            cur.insert(dim, 1)
            if k is not None:   # x[True] is x[None][[0]]; x[False] selects nothing
                adv[dim] = np.zeros(1 if k else 0, dtype=np.int64)
            dim += 1
        elif isinstance(k, slice):
            start, stop, step = k.indices(cur[dim])
            if step <= 0:
                raise ValueError("step must be greater than zero")
            stop = max(stop, start)
            if single_slice or (start, stop, step) != (0, cur[dim], 1):
                steps.append(("slice", dim, (start, stop, step)))
            basic.append(k)
            cur[dim] = len(range(start, stop, step))
            dim += 1
            src += 1
        elif isinstance(k, np.ndarray) and (k.ndim or k.dtype.kind not in "iu"):
            if k.dtype == bool:
                if tuple(k.shape) != tuple(cur[dim:dim + k.ndim]):
                    bad = next(i for i, (m, s) in enumerate(zip(k.shape, cur[dim:])) if m != s)
                    raise IndexError(f"The shape of the mask {list(k.shape)} at index {bad} does not match the "
                                     f"shape of the indexed tensor {cur} at index {dim + bad}")
            elif k.dtype.kind not in "iu":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            elif k.size:   # torch's advanced indexing counts only the tensor-indexed dims
                _check_bounds(k, cur[dim], sum(a.ndim if a.dtype == bool else 1 for a in adv.values()))
            adv[dim] = k
            n = k.ndim if k.dtype == bool else 1
            basic += [slice(None)] * n
            dim += n
            src += n
        else:
            if isinstance(k, str):
                raise TypeError("new(): invalid data type 'str'")
            if not _is_int(k):
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                                 f"valid indices (got {type(k).__name__})")
            i = operator.index(k)
            size = cur[dim]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {src} with size {size}")
            src += 1
            steps.append(("select", dim, i % size))
            basic.append(i)
            del cur[dim]
    if not steps:
        basic = ()
    elif not any(k is Ellipsis for k in basic):
        basic.append(Ellipsis)   # so that even a 0-d result is a view, not a NumPy scalar
    adv_key = None
    if adv:
        # the index tensors must broadcast together (a bool mask counts as its nonzero indices)
        shapes = [(int(k.sum()),) if k.dtype == bool else k.shape for k in adv.values()]
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together with shapes "
                             + ", ".join(str(list(s)) for s in shapes)) from None
        adv_key, d = [], 0
        for pos in sorted(adv):
            adv_key += [slice(None)] * (pos - d)
            adv_key.append(adv[pos])
            d = pos + (adv[pos].ndim if adv[pos].dtype == bool else 1)
        adv_key = tuple(adv_key)
    return steps, tuple(basic), adv_key


def _is_int(k) -> bool:
    try:
        operator.index(k)
    except TypeError:
        return False
    return not _is_bool_scalar(k)


def _check_bounds(index, size: int, dim: int) -> None:
    """torch's words for an integer index array reaching past the dimension it indexes."""
    bad = (index >= size) | (index < -size)
    if bad.any():
        first = int(index.reshape(-1)[np.argmax(bad.reshape(-1))])
        raise IndexError(f"index {first} is out of bounds for dimension {dim} with size {size}")


def getitem(tensor, key):
    steps, _, adv = parse_index(tensor.shape, key, isinstance(key, slice))
    out = tensor
    for kind, dim, arg in steps:
        if kind == "unsqueeze":
            out = unsqueeze(out, dim)
        elif kind == "slice":
            out = apply(SLICE, (out,), (dim,) + arg)
        else:
            out = apply(SELECT, (out,), (dim, arg))
    if adv is not None:
        return apply(INDEX, (out,), (adv,))
    if out is tensor:   # x[...] and x[:, :] are still a new node in PyTorch's graph
        return apply(ALIAS, (tensor,))
    return out


def setitem(array, key, value) -> None:
    """array[key] = value with PyTorch's reading of key (no graph)."""
    _, basic, adv = parse_index(array.shape, key)
    write(array, basic, adv, value)


def index_put(tensor, key, values, accumulate=False):
    """The out-of-place result of tensor[key] = values (CopySlices or IndexPutBackward0);
    with accumulate=True, tensor[key] += values with repeated indices adding up."""
    if isinstance(key, list) and key and all(isinstance(k, Tensor) for k in key):
        key = tuple(key)   # torch.index_put's list of index tensors, one per dim
    steps, basic, adv = parse_index(tensor.shape, key)
    if not isinstance(values, Tensor):
        values = Tensor(values, dtype=tensor.dtype)
    if accumulate:
        return apply(INDEX_PUT_ACC, (tensor, values), (basic, adv))
    op = INDEX_PUT if adv is not None and not steps else COPY_SLICES
    return apply(op, (tensor, values), (basic, adv))


def _put_add(xp, a, v, basic, adv):
    out = a.copy()
    view = out[basic] if basic else out
    key = (...,) if adv is None else adv
    backend.scatter_add(xp.xp, view, key, xp.broadcast_to(v, view[key].shape))
    return out


INDEX_PUT_ACC = Op("index_put", "IndexPutBackward0", "c = a; c[idx] += v", _put_add,
                   vjp=(lambda xp, g, c, a, v, basic, adv: g,
                        lambda xp, g, c, a, v, basic, adv: _written(g, basic, adv)),
                   vjp_formulas=("ḡ", "ḡ[idx]"), args=("self", "values"), params=("basic", "indices"),
                   saves=("indices",),
                   latex=r"$c = $0;\; $c[\mathrm{idx}] \text{ += } $1",
                   vjp_latex=(r"\bar{g}", r"\bar{g}[\mathrm{idx}]",))


def _int_index(index, message: str, exc=RuntimeError) -> np.ndarray:
    """The array of an index tensor, which must be of an integer dtype (PyTorch's check)."""
    idx = index._data if hasattr(index, "_data") else np.asarray(index)
    if idx.dtype.kind not in "iu":
        raise exc(message)
    return idx


def _check_along(name: str, input, d: int, idx, src=None) -> None:
    """gather/scatter's checks: index no larger than input (and src) apart from dim, in range."""
    shape, ishape = tuple(input.shape) or (1,), tuple(idx.shape) or (1,)
    if len(ishape) != len(shape):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as "
                           f"{'input' if name == 'gather' else 'self'} tensor")
    bad = [k for k, (i, s) in enumerate(zip(ishape, shape)) if k != d and i > s]
    if src is not None and src.ndim:
        bad += [k for k, (i, s) in enumerate(zip(ishape, src.shape)) if i > s]
    if bad:
        what = f"expected index {list(ishape)} to be no larger than self {list(shape)} apart from dimension {d}"
        if name == "gather":
            raise RuntimeError(f"Size does not match at dimension {bad[0]} {what}")
        raise RuntimeError(f"E{what[1:]} and to be no larger size than src {list(src.shape)}")
    if idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= shape[d]:
            raise RuntimeError(f"index {lo if lo < 0 else hi} is out of bounds for dimension {d} with size "
                               f"{shape[d]}")


def _in_range(idx, size: int) -> None:
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= size):
        raise IndexError("index out of range in self")


def gather(input, dim, index):
    (d,) = normalize_dims(dim, input.ndim)
    idx = _int_index(index, "gather(): Expected dtype int32/int64 for index")
    if idx.size == 0 and idx.ndim != max(input.ndim, 1):   # PyTorch takes any empty index
        return input.reshape(-1)[:0].reshape(idx.shape)
    _check_along("gather", input, d, idx)
    if input.ndim == 0:   # a 0-d input takes a 0-d (or one-element) index, as PyTorch
        return apply(GATHER, (input.reshape(1),), (0, idx.reshape(1))).reshape(idx.shape)
    return apply(GATHER, (input,), (d, idx))


def scatter_add(input, dim, index, src):
    (d,) = normalize_dims(dim, input.ndim)
    idx = _int_index(index, "scatter(): Expected dtype int32/int64 for index")
    _check_along("scatter_add", input, d, idx, src)
    if input.ndim == 0:
        return apply(SCATTER_ADD, (input.reshape(1), src.reshape(1)), (0, idx.reshape(1))).reshape(())
    return apply(SCATTER_ADD, (input, src), (d, idx))


def index_select(input, dim, index):
    (d,) = normalize_dims(dim, input.ndim)
    idx = _int_index(index, "index_select(): Expected dtype int32 or int64 for index")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.ndim == 0:
        _in_range(idx, 1)
        return apply(INDEX_SELECT, (input.reshape(1),), (0, idx.reshape(-1))).reshape(())
    _in_range(idx, input.shape[d])
    return apply(INDEX_SELECT, (input,), (d, idx.reshape(-1)))


# -- sorting: values are a gather along dim, so their VJP scatters ḡ back ---------------
def _gather_op(name: str, torch_name: str, formula: str, **display) -> Op:
    display.setdefault("vjp_latex", (r"\bar{g}\text{ scattered back to where each value came from}",))
    return Op(name, torch_name, formula, lambda xp, a, dim, index: xp.take_along_axis(a, index, axis=dim),
              vjp=(lambda xp, g, c, a, dim, index: xp.scatter_add_zeros(a.shape, dim, index, g),),
              vjp_formulas=("ḡ scattered back to where each value came from",), params=("dim", "indices"),
              saves=("indices",), **display)


SORT = _gather_op("sort", "SortBackward0", "c = sort(a)",
                  latex=r"$c = \operatorname{sort}($0)")
TOPK = _gather_op("topk", "TopkBackward0", "c = topk(a, k)",
                  latex=r"$c = \operatorname{topk}($0,\, k)")


def _order(a: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """A stable argsort along dim (ties keep their order, as PyTorch's stable sort)."""
    keys = a.astype(np.int64) if a.dtype.kind in "bu" else a
    if descending and keys.dtype.kind == "f" and np.isnan(keys).any():   # NaN is the largest: first
        nan = np.isnan(keys)
        return np.lexsort((np.where(nan, 0, -keys), ~nan), axis=dim)
    return np.argsort(-keys if descending else keys, axis=dim, kind="stable")


def _values_indices(name: str, op: Op, input, dim: int, index: np.ndarray):
    return values_indices(name, apply(op, (input,), (dim, index)), index)


def _scalar_values_indices(name: str, op: Op, input, k: int):
    """sort/topk of a 0-d tensor: itself (or nothing, k = 0), index 0, as 0-d tensors."""
    index = np.zeros(k, dtype=np.int64)
    values = apply(op, (input.reshape(1),), (0, index))
    return values_indices(name, values.reshape(()) if k else values, index.reshape(()) if k else index)


def sort(input, dim=-1, descending=False, stable=False):
    """torch.sort: (values, indices) along dim."""
    (d,) = normalize_dims(dim, input.ndim)
    if input.ndim == 0:   # a 0-d tensor sorts to itself, index 0
        return _scalar_values_indices("sort", SORT, input, 1)
    return _values_indices("sort", SORT, input, d, _order(input._data, d, descending))


def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending, stable).indices


def topk(input, k, dim=-1, largest=True, sorted=True):
    """torch.topk: the k largest (or smallest) values along dim and their indices."""
    (d,) = normalize_dims(dim, input.ndim)
    if not 0 <= k <= (input.shape[d] if input.ndim else 1):
        raise RuntimeError("selected index k out of range")
    if input.ndim == 0:
        return _scalar_values_indices("topk", TOPK, input, k)
    index = np.take(_order(input._data, d, largest), np.arange(k), axis=d)
    return _values_indices("topk", TOPK, input, d, index)


# -- more indexing: narrow, take_along_dim, masked_select, index_add/fill, scatter ----------
MASKED_SELECT = Op("masked_select", "MaskedSelectBackward0", "c = a[mask]",
                   lambda xp, a, mask: xp.broadcast_to(a, mask.shape)[mask],
                   vjp=(lambda xp, g, c, a, mask: xp.index_scatter(g, mask.shape, mask, False),),
                   vjp_formulas=("ḡ placed where mask holds",), params=("mask",), saves=("mask",),
                   latex=r"$c = $0[\mathrm{mask}]",
                   vjp_latex=(r"\bar{g}\text{ placed where mask holds}",))


def _index_add(xp, a, src, dim, index, alpha):
    out = a.copy()
    xp.add.at(out, _at(dim, index), src * alpha if alpha != 1 else src)
    return out


INDEX_ADD = Op("index_add", "IndexAddBackward0", "c = a; c[…, idx] += α src", _index_add,
               vjp=(lambda xp, g, c, a, src, dim, index, alpha: g,
                    lambda xp, g, c, a, src, dim, index, alpha: _times(xp.take(g, index, axis=dim) if xp.arrays
                                                                       else apply(INDEX_SELECT, (g,), (dim, index)),
                                                                       alpha)),
               vjp_formulas=("ḡ", "α ḡ[…, idx]"), args=("self", "source"), params=("dim", "index", "alpha"),
               saves=("index",), symbols=("a", "src"), broadcasts=(),
               latex=r"$c = $0;\; $c[\dots,\, \mathrm{idx}] \text{ += } $alpha\, $1",
               vjp_latex=(r"\bar{g}", r"$alpha\, \bar{g}[\dots,\, \mathrm{idx}]",))


def _times(g, alpha):
    return g if alpha == 1 else g * alpha


def _fill_at(a, key, value):
    out = a.copy()
    out[key] = value
    return out


# `written` marks the entries replaced by the op: they get no gradient
INDEX_FILL = Op("index_fill", "IndexFillBackward0", "c = a; c[…, idx] = v",
                lambda xp, a, key, written, value: _fill_at(a, key, value),
                vjp=(lambda xp, g, c, a, key, written, value: xp.where(written, 0, g),),
                vjp_formulas=("ḡ, 0 at idx",), params=("index", "written", "value"),
                latex=r"$c = $0;\; $c[\dots,\, \mathrm{idx}] = $value",
                vjp_latex=(r"\bar{g}\text{, 0 at idx}",))
SCATTER = Op("scatter", "ScatterBackward0", "c = a; c[idx] = src (along dim)",
             lambda xp, a, src, dim, index, written: _scattered(xp, a, dim, index, src[_region(index)]),
             vjp=(lambda xp, g, c, a, src, dim, index, written: xp.where(written, 0, g),
                  lambda xp, g, c, a, src, dim, index, written:
                  _pad_to(xp, xp.gather_along(g, index, dim), src)),
             vjp_formulas=("ḡ, 0 at idx", "gather(ḡ, dim, idx)"), args=("self", "src"),
             params=("dim", "index", "written"), saves=("index",), symbols=("a", "src"), broadcasts=(),
             latex=r"$c = $0;\; $c[\mathrm{idx}] = $1 \text{ (along dim } $dim\text{)}",
             vjp_latex=(r"\bar{g}\text{, 0 at idx}", r"\operatorname{gather}(\bar{g},\, $dim,\, \mathrm{idx})",))
SCATTER_VALUE = Op("scatter", "ScatterBackward1", "c = a; c[idx] = v (along dim)",
                   lambda xp, a, dim, index, written, value: _scattered(xp, a, dim, index, value),
                   vjp=(lambda xp, g, c, a, dim, index, written, value: xp.where(written, 0, g),),
                   vjp_formulas=("ḡ, 0 at idx",), params=("dim", "index", "written", "value"),
                   latex=r"$c = $0;\; $c[\mathrm{idx}] = $value \text{ (along dim } $dim\text{)}",
                   vjp_latex=(r"\bar{g}\text{, 0 at idx}",))


def _scattered(xp, a, dim, index, src):
    out = a.copy()
    out[scatter_key(xp, index, dim)] = src
    return out


def narrow(input, dim, start, length):
    (d,) = normalize_dims(dim, input.ndim)
    size = input.shape[d]
    start = int(start)
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return apply(SLICE, (input,), (d, start, start + length, 1))


def select(input, dim, index):
    (d,) = normalize_dims(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return apply(SELECT, (input,), (d, index % size))


def take_along_dim(input, indices, dim=None):
    """gather after broadcasting input and indices against each other (all but dim), as PyTorch."""
    from .shape import expand, reshape
    idx = indices._data
    if dim is None:
        return apply(GATHER, (reshape(input, -1),), (0, idx.reshape(-1)))
    (d,) = normalize_dims(dim, input.ndim)
    shape_in, shape_idx = list(input.shape), list(idx.shape)
    shape_in[d] = shape_idx[d] = 1
    common = list(np.broadcast_shapes(tuple(shape_in), tuple(shape_idx)))
    in_shape, idx_shape = list(common), list(common)
    in_shape[d], idx_shape[d] = input.shape[d], idx.shape[d]
    return apply(GATHER, (expand(input, *in_shape),), (d, np.broadcast_to(idx, idx_shape)))


def masked_select(input, mask):
    m = mask._data if hasattr(mask, "_data") else np.asarray(mask)
    if m.dtype != bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = np.broadcast_shapes(tuple(input.shape), m.shape)
    return apply(MASKED_SELECT, (input,), (np.broadcast_to(m, shape),))


def nonzero(input, *, as_tuple=False):
    found = np.nonzero(input._data) if input.ndim else np.nonzero(input._data.reshape(1))
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64)) for i in found)
    return Tensor._make(np.stack(found, axis=1).astype(np.int64) if input.ndim
                        else np.zeros((len(found[0]), 0), dtype=np.int64))


def _index_vector(index, name: str = "index_add_"):
    idx = index._data if hasattr(index, "_data") else np.asarray(index)
    if idx.dtype.kind not in "iu":
        if name == "index_fill_":
            raise IndexError("index_fill_(): Expected dtype int64 for index.")
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: "
                           f"{str(idx.dtype).capitalize().replace('64', '').replace('32', '')}")
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    return idx.reshape(-1)


def _as_vector(input):
    """A 0-d tensor as a one-element vector: index_add/index_fill/scatter accept dim 0 of it."""
    return input.reshape(1) if input.ndim == 0 else input


def _as_input(result, input):
    return result.reshape(()) if input.ndim == 0 else result


def index_add(input, dim, index, source, *, alpha=1):
    (d,) = normalize_dims(dim, input.ndim)
    idx = _index_vector(index)
    _in_range(idx, input.shape[d] if input.ndim else 1)
    return _as_input(apply(INDEX_ADD, (_as_vector(input), _as_vector(source)), (d, idx, alpha)), input)


def index_fill(input, dim, index, value):
    (d,) = normalize_dims(dim, input.ndim)
    idx = _index_vector(index, "index_fill_")
    size = input.shape[d] if input.ndim else 1
    if idx.size and (int(idx.min()) < -size or int(idx.max()) >= size):
        bad = int(idx.min()) if int(idx.min()) < -size else int(idx.max())
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    vector = _as_vector(input)
    key = _at(d, idx)
    written = np.zeros(vector.shape, dtype=bool)
    written[key] = True
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        if value.requires_grad:   # the value's gradient is the sum of ḡ over the filled entries
            return _as_input(apply(INDEX_FILL_TENSOR, (vector, value.to(input.dtype)), (key, written)), input)
        value = value.item()
    return _as_input(apply(INDEX_FILL, (vector,), (key, written, value)), input)


INDEX_FILL_TENSOR = Op("index_fill", "IndexFillBackward1", "c = a; c[…, idx] = v",
                       lambda xp, a, v, key, written: _fill_at(a, key, v),
                       vjp=(lambda xp, g, c, a, v, key, written: xp.where(written, 0, g),
                            lambda xp, g, c, a, v, key, written: xp.sum(xp.where(written, g, 0))),
                       vjp_formulas=("ḡ, 0 at idx", "Σ ḡ at idx"), args=("self", "value"),
                       params=("index", "written"),
                       latex=r"$c = $0;\; $c[\dots,\, \mathrm{idx}] = $1",
                       vjp_latex=(r"\bar{g}\text{, 0 at idx}", r"\sum \bar{g}\text{ at idx}",))


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if reduce is not None:
        raise NotImplementedError("scatter(reduce=...) is not supported here; use scatter_add or scatter_reduce")
    (d,) = normalize_dims(dim, input.ndim)
    idx = _int_index(index, "scatter(): Expected dtype int32/int64 for index")
    if src is None:
        src = value
    _check_along("scatter", input, d, idx, src if isinstance(src, Tensor) else None)
    vector, idx = _as_vector(input), (idx.reshape(1) if idx.ndim == 0 else idx)
    written = np.zeros(vector.shape, dtype=bool)
    written[scatter_key(np, idx, d)] = True
    if isinstance(src, Tensor):
        return _as_input(apply(SCATTER, (vector, _as_vector(src)), (d, idx, written)), input)
    return _as_input(apply(SCATTER_VALUE, (vector,), (d, idx, written, src)), input)


# -- forward mode (autograd.forward_ad): selecting, gathering and scattering are linear --------
# (the ops that overwrite part of a tensor are affine in it; their JVP comes from the VJP)
from ..autograd.forward_ad import defjvp as _defjvp, linear as _linear  # noqa: E402

_defjvp(_linear, SELECT, SLICE, INDEX, ALIAS, GATHER, SCATTER_ADD, INDEX_SELECT, INDEX_SCATTER, SCATTER_ADD_ZEROS,
        DIAGONAL_SCATTER, INDEX_FILL_ZERO, MASKED_SELECT, INDEX_ADD, COPY_SLICES, INDEX_PUT)


# -- more of torch's op table: take and the scatters that write one tensor into a region of another --
def _take_vjp(xp, g, c, a, idx):
    n = int(np.prod(a.shape))
    flat = xp.index_scatter(xp.reshape(g, (-1,)), (n,), (idx.reshape(-1),), True)
    return xp.reshape(flat, tuple(a.shape))


TAKE = Op("take", "TakeBackward0", "c = flat(a)[idx]", lambda xp, a, idx: a.reshape(-1)[idx],
          vjp=(_take_vjp,), vjp_formulas=("ḡ scatter-added into flat(a) at idx",), params=("index",),
          saves=("index",), shown=(),
          latex=r"$c = \operatorname{flat}($0)[\mathrm{idx}]",
          vjp_latex=(r"\bar{g}\text{ scatter-added into } \operatorname{flat}($0) \text{ at idx}",))


def take(input, index):
    idx = _int_index(index, "take(): Expected a long tensor for index, but got " + str(getattr(index, "dtype", "")))
    n = input.numel()
    bad = idx[(idx >= n) | (idx < -n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad.reshape(-1)[0])} on a tensor of {n} elements.")
    return apply(TAKE, (input,), (np.where(idx < 0, idx + n, idx),))


def _region_of(g, key):
    return g[key]


def _scatter_op(name: str, torch_name: str, formula: str, region: str, key, **display) -> Op:
    """c = a with src written into a region (a select, a slice, a diagonal): ḡ outside the region
    goes to a, ḡ inside it to src."""
    def forward(xp, a, src, *params):
        out = a.copy()
        view = key(xp, out, *params)
        view[...] = src
        return out

    def vjp_self(xp, g, c, a, src, *params):
        if xp.arrays:
            out = g.copy()
            key(xp, out, *params)[...] = 0
            return out
        return apply(OPS_BY_NAME[torch_name], (g, _zeros_of(key(xp, g, *params))), params)

    def vjp_src(xp, g, c, a, src, *params):
        part = key(xp, g, *params)
        return part.copy() if xp.arrays else part

    return Op(name, torch_name, formula, forward, vjp=(vjp_self, vjp_src),
              vjp_formulas=(f"ḡ with zeros in the {region}", f"ḡ in the {region}"), args=("self", "src"),
              symbols=("a", "s"), **display)


def _zeros_of(t):
    from ..creation import zeros_like
    return zeros_like(t)


def _diagonal_view(xp, a, offset, d1, d2):
    if xp.arrays:
        view = np.diagonal(a, offset, d1, d2)
        view.setflags(write=True)
        return view
    from .linalg import diagonal
    return diagonal(a, offset, d1, d2)


SELECT_SCATTER = _scatter_op("select_scatter", "SelectScatterBackward0", "c = a; c[…, i] = s", "selected slice",
                             lambda xp, a, dim, i: a[_at(dim, i) + (Ellipsis,)], params=("dim", "index"),
                             latex=r"$c = $0;\; {$c}_{[\dots,\, $index]} = $1",
                             vjp_latex=(r"\bar{g}\text{ with zeros at index } $index", r"\bar{g}_{[\dots,\, $index]}"))
SLICE_SCATTER = _scatter_op("slice_scatter", "SliceScatterBackward0", "c = a; c[…, start:end:step] = s", "slice",
                            lambda xp, a, dim, start, end, step: a[_at(dim, slice(start, end, step))],
                            params=("dim", "start", "end", "step"),
                            latex=r"$c = $0;\; {$c}_{[\dots,\, $start:$end:$step]} = $1",
                            vjp_latex=(r"\bar{g}\text{ with zeros in the slice}",
                                       r"\bar{g}_{[\dots,\, $start:$end:$step]}"))
DIAGONAL_SCATTER_SRC = _scatter_op("diagonal_scatter", "DiagonalScatterBackward0", "c = a; diag(c) = s", "diagonal",
                                   _diagonal_view, params=("offset", "dim1", "dim2"),
                                   latex=r"$c = $0;\; \operatorname{diag}_{$offset}($c) = $1",
                                   vjp_latex=(r"\bar{g}\text{ with zeros on the diagonal}",
                                              r"\operatorname{diag}_{$offset}(\bar{g})"))
OPS_BY_NAME = {op.torch_name: op for op in (SELECT_SCATTER, SLICE_SCATTER, DIAGONAL_SCATTER_SRC)}


def _check_src(name: str, region_shape: tuple, src) -> None:
    if tuple(src.shape) != tuple(region_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(region_shape)}")


def select_scatter(input, src, dim, index):
    (d,) = normalize_dims(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    region = input._data[_at(d, index % size)]
    _check_src("select_scatter", region.shape, src)
    return apply(SELECT_SCATTER, (input, src.to(input.dtype)), (d, index % size))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    (d,) = normalize_dims(dim, input.ndim)
    s, e, st = slice(start, end, step).indices(input.shape[d])
    region = input._data[_at(d, slice(s, e, st))]
    _check_src("slice_scatter", region.shape, src)
    return apply(SLICE_SCATTER, (input, src.to(input.dtype)), (d, s, e, st))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    (d1,), (d2,) = normalize_dims(dim1, input.ndim), normalize_dims(dim2, input.ndim)
    region = np.diagonal(input._data, offset, d1, d2)
    _check_src("diagonal_scatter", region.shape, src)
    return apply(DIAGONAL_SCATTER_SRC, (input, src.to(input.dtype)), (offset, d1, d2))


from ..autograd.forward_ad import defjvp as _defjvp_more, linear as _linear_more  # noqa: E402

_defjvp_more(_linear_more, TAKE, SELECT_SCATTER, SLICE_SCATTER, DIAGONAL_SCATTER_SRC)
