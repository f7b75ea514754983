"""Indexing on Tensors: x[key] parsed as torch parses it, gather/scatter/index_* with torch's
checks and errors, each running the records of gradviz.ops.index; sort/topk/msort and the
(values, indices) pairs torch returns (reduce's max/min/median use them too), repeat_interleave
(an index_select)."""
from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence

import numpy as np

from .. import backend
from .._args import argument_error, check_bool, check_flags, check_tensor, type_name
from ..dtypes import SCALAR_TYPE
from ..autograd.apply import apply
from ..ops.core import broadcast_shape, scatter_key, write
from ..ops.op import Op
from ..ops.reduce import normalize_dims
from .shape import clone, expand, flatten, reshape, unsqueeze
from ..tensor import Tensor
from ..ops.index import (ALIAS, COPY_SLICES, DIAGONAL_SCATTER_SRC, GATHER, INDEX, INDEX_ADD, INDEX_FILL,
                         INDEX_COPY, INDEX_FILL_TENSOR, INDEX_PUT, INDEX_PUT_ACC, INDEX_SELECT, MASKED_SCATTER, MASKED_SELECT, PACK_PADDED_SEQUENCE,
                         SCATTER, SCATTER_ADD, SCATTER_REDUCE, SCATTER_VALUE, SELECT, SELECT_SCATTER, SLICE, SLICE_SCATTER, SORT, TAKE,
                         TOPK, _at)
from .public import public


# -- public functions ---------------------------------------------------------------
def _index_items(key) -> tuple:
    """The indices in x[key], as torch reads a key (its treatSequenceAsTuple): a tuple's items; a
    short non-tuple sequence (a list) holding a sequence, tensor, slice, None or Ellipsis is taken
    as that tuple, with torch's deprecation warning; anything else (an int, a tensor, a list of
    ints) is one index."""
    if isinstance(key, tuple):
        return key
    if isinstance(key, Tensor) or backend.is_array(key) or not isinstance(key, Sequence) or len(key) >= 32:
        return (key,)
    if not any(k is None or k is Ellipsis or isinstance(k, (slice, Tensor, Sequence)) or backend.is_array(k)
               for k in key):
        return (key,)
    warnings.warn("Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in "
                  "pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as "
                  "tensor index, x[torch.tensor(seq)], which will result either in an error or a different result",
                  UserWarning, stacklevel=5)
    return tuple(key)


def _as_index(item):
    if isinstance(item, Tensor):
        data = item._data   # a 0-d integer tensor indexes as its int (torch selects with it), a byte one as a bool
        return int(data) if data.ndim == 0 and data.dtype.kind in "iu" and data.dtype != np.uint8 else data
    if isinstance(item, (list, tuple)) and not item:
        return np.zeros(0, dtype=np.int64)   # x[[]] selects nothing (an empty long index)
    if isinstance(item, range):
        return np.arange(item.start, item.stop, item.step, dtype=np.int64)   # a sequence of ints, as in torch
    if isinstance(item, (list, tuple, np.ndarray)):   # (a tuple only inside the key's tuple)
        return np.asarray(item)
    return item


def _is_bool_scalar(k) -> bool:
    """True, False, or a 0-d bool or byte array (torch reads a 0-d byte index as a bool)."""
    return isinstance(k, (bool, np.bool_)) or (backend.is_array(k) and k.ndim == 0 and k.dtype in (bool, np.uint8))


def _is_byte_mask(k) -> bool:
    return backend.is_array(k) and k.ndim > 0 and k.dtype == np.uint8


def _key_items(shape: tuple, key) -> tuple[list, bool, int]:
    """The key's items (a byte mask read as a bool mask), whether one was a byte mask, and how
    many dims they index; torch's errors for a key that cannot index `shape`."""
    items = [_as_index(k) for k in _index_items(key)]
    byte_mask = any(_is_byte_mask(k) for k in items)
    if byte_mask:
        items = [k.astype(bool) if _is_byte_mask(k) else k for k in items]

    def width(k):
        if k is None or k is Ellipsis or _is_bool_scalar(k):
            return 0
        if backend.is_array(k) and k.dtype == bool:
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
    return items, byte_mask, specified


def _advanced_key(adv: dict):
    """The NumPy key of the tensor indices {dim: array} (slices between them), once they are checked
    to broadcast together (a bool mask counts as its nonzero indices); None when there are none."""
    if not adv:
        return None
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
    return tuple(adv_key)


def parse_index(shape: tuple, key, single_slice: bool = False, fill: bool = False):
    """PyTorch's reading of `x[key]`: ints, slices and None apply first, left to right, as
    views (SelectBackward0, SliceBackward0, UnsqueezeBackward0); the tensor indices then index
    that view at the dims they landed on (one IndexBackward0). NumPy would instead count ints
    as advanced indices, which moves the result's dims when an int and a tensor are apart.

    Returns (steps, basic, adv): the views to record [(kind, dim, arg)], the same view as a
    NumPy basic key (() when it is the whole tensor), and the key of slices and integer/bool
    arrays for that view (None when there is none). A full slice records nothing, except
    for a bare `x[:]`, which PyTorch always records.

    A byte (uint8) index is a bool mask, with torch's deprecation warning. fill says the caller
    writes one value there (torch's index_put_ then hands a lone mask to masked_fill_, which
    refuses a byte mask)."""
    items, byte_mask, specified = _key_items(shape, key)
    ndim = len(shape)
    cur = list(shape)
    steps, basic, adv, dim = [], [], {}, 0
    for position, k in enumerate(items):   # torch's range error names the position in the key
        if k is Ellipsis:
            basic.append(k)
            dim += ndim - specified
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
        elif backend.is_array(k) and (k.ndim or k.dtype.kind not in "iu"):
            if k.dtype == bool:
                if tuple(k.shape) != tuple(cur[dim:dim + k.ndim]):
                    bad = next(i for i, (m, s) in enumerate(zip(k.shape, cur[dim:])) if m != s)
                    raise IndexError(f"The shape of the mask {list(k.shape)} at index {bad} does not match the "
                                     f"shape of the indexed tensor {cur} at index {dim + bad}")
            elif k.dtype not in (np.int64, np.int32):
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            elif k.size:   # torch's advanced indexing counts only the tensor-indexed dims
                _check_bounds(k, cur[dim], sum(a.ndim if a.dtype == bool else 1 for a in adv.values()))
            adv[dim] = k
            n = k.ndim if k.dtype == bool else 1
            basic += [slice(None)] * n
            dim += n
        else:
            if isinstance(k, str):
                raise TypeError("new(): invalid data type 'str'")
            if not _is_int(k):
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are "
                                 f"valid indices (got {type(k).__name__})")
            i = operator.index(k)
            size = cur[dim]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {position} with size {size}")
            steps.append(("select", dim, i % size))
            basic.append(i)
            del cur[dim]
    if not steps:
        basic = ()
    elif not any(k is Ellipsis for k in basic):
        basic.append(Ellipsis)   # so that even a 0-d result is a view, not a NumPy scalar
    if byte_mask:
        if fill and len(adv) == 1:
            raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype unsigned char")
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead.",
                      UserWarning, stacklevel=4)
    return steps, tuple(basic), _advanced_key(adv)


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


def _keys_beside(adv, array):
    """The index arrays of an advanced key, moved to array's device (torch takes CPU indices for any
    device; CuPy wants its own arrays)."""
    if adv is None or backend.on_cpu(array):
        return adv
    return tuple(backend.to_device(k, backend.device_of(array)) if isinstance(k, np.ndarray) else k for k in adv)


@public
def getitem(tensor, key):
    steps, _, adv = parse_index(tensor.shape, key, isinstance(key, slice))
    adv = _keys_beside(adv, tensor._data)
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
    write(array, basic, _keys_beside(adv, array), value)


@public(method=True)
def index_put(input, indices, values, accumulate=False):
    """torch.index_put: input with input[indices] = values (IndexPutBackward0), out of place; indices
    is a tuple (or list) of index tensors, one per dim; accumulate=True adds, repeated indices adding up."""
    check_put("index_put", input, indices, values, accumulate)
    return put(input, tuple(indices), values, accumulate)


@public(method=True)
def index_put_(input, indices, values, accumulate=False):
    """torch.index_put_ and Tensor.index_put_: index_put written into input."""
    check_put("index_put_", input, indices, values, accumulate)
    return input._inplace_op(put, tuple(indices), values, accumulate)


def check_put(fn: str, input, indices, values, accumulate) -> None:
    """index_put's arguments as torch's parser takes them: a tuple of tensors, a tensor of input's dtype."""
    if not isinstance(indices, (tuple, list)):
        raise argument_error(fn, "indices", 2, "tuple of Tensors", type_name(indices))
    for k, index in enumerate(indices):
        if not isinstance(index, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument 1, but got {type_name(index)}")
    check_tensor(fn, "values", values, 3)
    check_bool(fn, "accumulate", accumulate)
    if values.dtype != input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{SCALAR_TYPE[input._data.dtype.name]} for the destination and "
                           f"{SCALAR_TYPE[values._data.dtype.name]} for the source.")


def put(tensor, key, values, accumulate=False):
    """The out-of-place result of tensor[key] = values for any key x[key] reads (CopySlices or
    IndexPutBackward0); with accumulate=True, tensor[key] += values with repeated indices adding up."""
    if not isinstance(values, Tensor):
        values = Tensor(values, dtype=tensor.dtype, device=tensor.device)
    steps, basic, adv = parse_index(tensor.shape, key, fill=not accumulate and values.numel() == 1)
    adv = _keys_beside(adv, tensor._data)
    if accumulate:
        return apply(INDEX_PUT_ACC, (tensor, values), (basic, adv))
    op = INDEX_PUT if adv is not None and not steps else COPY_SLICES
    return apply(op, (tensor, values), (basic, adv))


def _int_index(index, message: str, exc=RuntimeError, fn: str = "") -> np.ndarray:
    """The array of an index tensor, which must be of an integer dtype (PyTorch's check); the
    function `fn` (when named) takes only a tensor, third after input and dim."""
    if fn:
        check_tensor(fn, "index", index, 3)
    idx = index._data if hasattr(index, "_data") else np.asarray(index)
    if idx.dtype.kind not in "iu":
        raise exc(message)
    return idx


def _check_src_dims(ishape: tuple, src) -> None:
    """scatter's src has the index's dims: torch reads src.size(k) for each of them, so a src of fewer
    dims fails on its first missing dim (a 0-d src stands for one entry of a 1-d index)."""
    if src.ndim > len(ishape) or src.ndim == 0 and len(ishape) > 1:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
    if 0 < src.ndim < len(ishape):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-src.ndim}, {src.ndim - 1}], but "
                         f"got {src.ndim})")


def _check_along(name: str, input, d: int, idx, src=None) -> None:
    """gather/scatter's checks: index no larger than input (and src) apart from dim, in range."""
    shape, ishape = tuple(input.shape) or (1,), tuple(idx.shape) or (1,)
    if len(ishape) != len(shape):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as "
                           f"{'input' if name == 'gather' else 'self'} tensor")
    if src is not None:
        _check_src_dims(ishape, src)
    bad = [k for k, (i, s) in enumerate(zip(ishape, shape)) if k != d and i > s]
    if src is not None and src.ndim:
        bad += [k for k, (i, s) in enumerate(zip(ishape, src.shape)) if i > s]
    if src is not None and name != "gather" and src._data.dtype != input._data.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
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


@public(method=True, out=True)
def gather(input, dim, index):
    (d,) = normalize_dims(dim, input.ndim)
    idx = _int_index(index, "gather(): Expected dtype int32/int64 for index", fn="gather")
    if idx.size == 0 and idx.ndim != max(input.ndim, 1):   # PyTorch takes any empty index
        return input.reshape(-1)[:0].reshape(idx.shape)
    _check_along("gather", input, d, idx)
    if input.ndim == 0:   # a 0-d input takes a 0-d (or one-element) index, as PyTorch
        return apply(GATHER, (input.reshape(1),), (0, idx.reshape(1))).reshape(idx.shape)
    return apply(GATHER, (input,), (d, idx))


@public(method=True)
def scatter_add(input, dim, index, src):
    (d,) = normalize_dims(dim, input.ndim)
    idx = _int_index(index, "scatter(): Expected dtype int32/int64 for index", fn="scatter_add")
    _check_along("scatter_add", input, d, idx, src)
    if input.ndim == 0:
        return apply(SCATTER_ADD, (input.reshape(1), src.reshape(1)), (0, idx.reshape(1))).reshape(())
    return apply(SCATTER_ADD, (input, src), (d, idx))


@public(method=True)
def scatter_reduce(input, dim, index, src, reduce=None, *, include_self=True):
    if reduce is None:
        raise TypeError('scatter_reduce() missing 1 required positional arguments: "reduce"')
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    (d,) = normalize_dims(dim, input.ndim)
    idx = _int_index(index, "scatter(): Expected dtype int32/int64 for index", fn="scatter_reduce")
    _check_along("scatter_reduce", input, d, idx, src)
    params = (reduce, bool(include_self))
    if input.ndim == 0:
        return apply(SCATTER_REDUCE, (input.reshape(1), src.reshape(1)), (0, idx.reshape(1)) + params).reshape(())
    return apply(SCATTER_REDUCE, (input, src), (d, idx) + params)


@public(method=True, out=True)
def index_select(input, dim, index):
    (d,) = normalize_dims(dim, input.ndim)
    idx = _int_index(index, "index_select(): Expected dtype int32 or int64 for index", fn="index_select")
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if input.ndim == 0:
        _in_range(idx, 1)
        return apply(INDEX_SELECT, (input.reshape(1),), (0, idx.reshape(-1))).reshape(())
    if input.ndim != 2 or d != 1 or not input.shape[1]:
        _in_range(idx, input.shape[d])
    else:   # torch's CPU kernel for the columns of a matrix checks them in its own words
        bad = idx[(idx < 0) | (idx >= input.shape[d])]
        if bad.size:
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad.reshape(-1)[0])} "
                               f"axis_dim={input.shape[d]}")
    return apply(INDEX_SELECT, (input,), (d, idx.reshape(-1)))


def _order(a, dim: int, descending: bool):
    """A stable argsort along dim (ties keep their order, as PyTorch's stable sort)."""
    xp = backend.namespace_of(a)
    keys = a.astype(np.int64) if a.dtype.kind in "bu" else a
    if descending and keys.dtype.kind == "f" and xp.isnan(keys).any():   # NaN is the largest: first
        nan = xp.isnan(keys)   # sort by value, then (stably) NaN first: a lexsort along dim
        by_value = xp.argsort(xp.where(nan, 0, -keys), axis=dim, kind="stable")
        nan_first = xp.argsort(~xp.take_along_axis(nan, by_value, axis=dim), axis=dim, kind="stable")
        return xp.take_along_axis(by_value, nan_first, axis=dim)
    return xp.argsort(-keys if descending else keys, axis=dim, kind="stable")


def entries_along(a, start: int, stop: int, dim: int):
    """a's entries start:stop along dim, as a new contiguous array (np.take(a, range(start, stop), dim)
    in any array namespace)."""
    return a[(slice(None),) * dim + (slice(start, stop),)].copy()


def _values_indices(name: str, op: Op, input, dim: int, index: np.ndarray):
    return values_indices(name, apply(op, (input,), (dim, index)), index)


def _scalar_values_indices(name: str, op: Op, input, k: int):
    """sort/topk of a 0-d tensor: itself (or nothing, k = 0), index 0, as 0-d tensors."""
    index = backend.namespace_of(input._data).zeros(k, dtype=np.int64)
    values = apply(op, (input.reshape(1),), (0, index))
    return values_indices(name, values.reshape(()) if k else values, index.reshape(()) if k else index)


# sort's and argsort's overloads as torch's parser lists them
_SORT_OVERLOADS = {
    "sort": ("Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors out = None",
             "Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None"),
    "argsort": ("Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None",
                "Tensor input, int dim = -1, bool descending = False")}


def _check_sort_flags(name: str, input, descending, stable) -> None:
    """descending= and stable= are bools (stable may be None); torch's parser refuses 1 or 'yes'."""
    check_flags(name, input, _SORT_OVERLOADS[name],
                descending=None if descending is False else descending, stable=None if stable is False else stable)


@public(out=True)
def sort(input, dim=-1, descending=False, stable=False):
    """torch.sort: (values, indices) along dim."""
    _check_sort_flags("sort", input, descending, stable)
    (d,) = normalize_dims(dim, input.ndim)
    if input.ndim == 0:   # a 0-d tensor sorts to itself, index 0
        return _scalar_values_indices("sort", SORT, input, 1)
    return _values_indices("sort", SORT, input, d, _order(input._data, d, descending))


@public
def argsort(input, dim=-1, descending=False, stable=False):
    _check_sort_flags("argsort", input, descending, stable)
    return sort(input, dim, descending, stable).indices


@public(out=True)
def topk(input, k, dim=-1, largest=True, sorted=True):
    """torch.topk: the k largest (or smallest) values along dim and their indices."""
    if input._data.dtype.kind == "b":
        raise RuntimeError("topk does not support bool dtypes on CPU")
    (d,) = normalize_dims(dim, input.ndim)
    if not 0 <= k <= (input.shape[d] if input.ndim else 1):
        raise RuntimeError("selected index k out of range")
    if input.ndim == 0:
        return _scalar_values_indices("topk", TOPK, input, k)
    index = entries_along(_order(input._data, d, largest), 0, k, d)
    return _values_indices("topk", TOPK, input, d, index)


@public(out=True)
def narrow(input, dim, start, length):
    """torch's checks in its order: a tensor start (0-d, integral), the input's dims, length, start's range."""
    if isinstance(start, Tensor):
        if start.ndim != 0 or start._data.dtype.kind not in "iu":
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = start.item()
    if input.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    (d,) = normalize_dims(dim, input.ndim)
    size = input.shape[d]
    start = int(start)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return apply(SLICE, (input,), (d, start, start + length, 1))


@public
def select(input, dim, index):
    (d,) = normalize_dims(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    return apply(SELECT, (input,), (d, index % size))


@public(out=True)
def take_along_dim(input, indices, dim=None):
    """gather after broadcasting input and indices against each other (all but dim), as PyTorch."""
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


@public(out=True)
def masked_select(input, mask):
    m = mask._data if hasattr(mask, "_data") else np.asarray(mask)
    if m.dtype != bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shape(m.shape, tuple(input.shape))
    return apply(MASKED_SELECT, (input,), (np.broadcast_to(m, shape),))


@public(out=True)
def nonzero(input, *, as_tuple=False):
    xp = backend.namespace_of(input._data)
    found = xp.nonzero(input._data) if input.ndim else xp.nonzero(input._data.reshape(1))
    if as_tuple:
        return tuple(Tensor._make(i.astype(np.int64)) for i in found)
    return Tensor._make(xp.stack(found, axis=1).astype(np.int64) if input.ndim
                        else xp.zeros((len(found[0]), 0), dtype=np.int64))


def _fill_index(index):
    """index_fill_'s index as a vector, with torch's checks in torch's order (the dtype first)."""
    check_tensor("index_fill", "index", index, 3)
    idx = index._data
    if idx.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if idx.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    return idx.reshape(-1)


def _add_index(input, d: int, index, source, alpha):
    """index_add_'s index as a vector, after torch's checks (index_func_meta_impl and its CPU kernel's
    bounds check) in torch's order: the index a vector of int32/int64, source of input's dtype with
    as many slices along dim as there are indices and the same shape elsewhere, every index in range."""
    check_tensor("index_add", "index", index, 3)
    check_tensor("index_add", "source", source, 4)
    idx = index._data
    if idx.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
                         f"{SCALAR_TYPE[idx.dtype.name]} and size: {list(idx.shape)}")
    if idx.dtype.name not in ("int32", "int64"):
        raise RuntimeError(f"index_add_(): Expected dtype int32/int64 for index but got: {SCALAR_TYPE[idx.dtype.name]}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"index_add_(): self ({SCALAR_TYPE[input._data.dtype.name]}) and source "
                           f"({SCALAR_TYPE[source._data.dtype.name]}) must have the same scalar type")
    if d != 0 and d >= source.ndim:
        raise RuntimeError(f"index_add_(): Indexing dim {d} is out of bounds of the source tensor with dim {source.ndim}")
    if idx.size != (source.shape[d] if source.ndim else 1):
        if not source.ndim:   # torch's message reads source.size(0), which a 0-d source refuses
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        raise RuntimeError(f"index_add_(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                           f"({source.shape[d]}), for dim: {d}")
    both = input.ndim and source.ndim
    if [n for i, n in enumerate(input.shape) if i != d or not both] != [n for i, n in enumerate(source.shape)
                                                                         if i != d or not both]:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {list(input.shape)} source.shape = {list(source.shape)}")
    size = input.shape[d] if input.ndim else 1
    bad = idx[(idx < 0) | (idx >= size)].reshape(-1)
    if bad.size:   # torch's kernel adds a vector, or with alpha ≠ 1 slice by slice, checking as embedding does;
        if input.ndim <= 1 or alpha != 1:   # otherwise it is an accumulating index_put_, with index_put_'s words
            raise IndexError("index out of range in self")
        raise RuntimeError(f"index {int(bad[0])} is out of bounds for dimension {d} with size {size}")
    return idx.reshape(-1)


def _as_vector(input):
    """A 0-d tensor as a one-element vector: index_add/index_fill/scatter accept dim 0 of it."""
    return input.reshape(1) if input.ndim == 0 else input


def _as_input(result, input):
    return result.reshape(()) if input.ndim == 0 else result


@public(method=True)
def index_add(input, dim, index, source, *, alpha=1):
    (d,) = normalize_dims(dim, input.ndim)
    if isinstance(alpha, Tensor):   # torch reads a 0-d tensor as the Scalar it holds
        alpha = alpha.item()
    idx = _add_index(input, d, index, source, alpha)
    return _as_input(apply(INDEX_ADD, (_as_vector(input), _as_vector(source)), (d, idx, alpha)), input)


@public(method=True)
def index_copy(input, dim, index, source):
    """input with its slices `index` along dim replaced by source's, with torch's checks in torch's order."""
    (d,) = normalize_dims(dim, input.ndim)
    check_tensor("index_copy", "source", source, 4)
    idx = index._data
    if idx.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    if source.ndim and idx.size != source.shape[d if d < source.ndim else 0]:
        raise IndexError(f"index_copy_(): Number of indices ({idx.size}) should be equal to source.size(dim) "
                         f"({source.shape[d]})")
    if idx.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {SCALAR_TYPE[idx.dtype.name]}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{SCALAR_TYPE[input._data.dtype.name]} and (source) {SCALAR_TYPE[source._data.dtype.name]}")
    if input.ndim and source.ndim:
        if input.ndim != source.ndim:
            raise IndexError("index_copy_(): When source and destination are not scalars, their dimensionality must "
                             f"match. Source dimensionality ({source.ndim}), destination dimensionality ({input.ndim})")
        if [n for i, n in enumerate(input.shape) if i != d] != [n for i, n in enumerate(source.shape) if i != d]:
            def others(shape):
                return " ".join(str(n) for i, n in enumerate(shape) if i != d)
            raise RuntimeError("index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                               f"shape: {others(input.shape)} at dimension {d} and source slice shape: "
                               f"{others(source.shape)} at dimension 0.")
    size = input.shape[d] if input.ndim else 1
    bad = idx[(idx < 0) | (idx >= size)]
    if bad.size:
        raise IndexError(f"index_copy_(): index {int(bad.reshape(-1)[0])} is out of bounds for dimension {d} with size {size}")
    vector, idx = _as_vector(input), idx.reshape(-1)
    written = backend.namespace_of(vector._data).zeros(vector.shape, dtype=bool)
    written[_at(d, idx)] = True
    src = source.reshape(tuple(len(idx) if i == d else n for i, n in enumerate(vector.shape))) if source.ndim < 2 else source
    return _as_input(apply(INDEX_COPY, (vector, src), (d, idx, written)), input)


@public(method=True)
def masked_scatter(input, mask, source):
    """input, broadcast with mask, whose entries where mask holds take source's first entries in order."""
    check_tensor("masked_scatter", "source", source, 3)
    m = mask._data
    if m.dtype != bool:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{SCALAR_TYPE[m.dtype.name]}")
    if source._data.dtype != input._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{SCALAR_TYPE[input._data.dtype.name]} and {SCALAR_TYPE[source._data.dtype.name]}")
    xp = backend.namespace_of(m)
    m = xp.broadcast_to(m, broadcast_shape(m.shape, tuple(input.shape)))
    if int(m.sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return apply(MASKED_SCATTER, (input, source), (m,))


@public
def index_fill(input, dim, index, value):
    (d,) = normalize_dims(dim, input.ndim)
    idx = _fill_index(index)
    size = input.shape[d] if input.ndim else 1
    if idx.size and (int(idx.min()) < -size or int(idx.max()) >= size):
        bad = int(idx.min()) if int(idx.min()) < -size else int(idx.max())
        raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {size}")
    vector = _as_vector(input)
    key = _at(d, idx)
    written = backend.namespace_of(vector._data).zeros(vector.shape, dtype=bool)
    written[key] = True
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        if value.requires_grad:   # the value's gradient is the sum of ḡ over the filled entries
            return _as_input(apply(INDEX_FILL_TENSOR, (vector, value.to(input.dtype)), (d, idx, written)), input)
        value = value.item()
    return _as_input(apply(INDEX_FILL, (vector,), (d, idx, written, value)), input)


@public
def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    if reduce is not None:
        raise NotImplementedError("scatter(reduce=...) is not supported here; use scatter_add or scatter_reduce")
    (d,) = normalize_dims(dim, input.ndim)
    idx = _int_index(index, "scatter(): Expected dtype int32/int64 for index")
    if src is None:
        src = value
    _check_along("scatter", input, d, idx, src if isinstance(src, Tensor) else None)
    vector, idx = _as_vector(input), (idx.reshape(1) if idx.ndim == 0 else idx)
    xp = backend.namespace_of(vector._data)
    written = xp.zeros(vector.shape, dtype=bool)
    written[scatter_key(xp, idx, d)] = True
    if isinstance(src, Tensor):
        return _as_input(apply(SCATTER, (vector, _as_vector(src)), (d, idx, written)), input)
    return _as_input(apply(SCATTER_VALUE, (vector,), (d, idx, written, src)), input)


# -- forward mode (autograd.forward_ad): selecting, gathering and scattering are linear --------
# (the ops that overwrite part of a tensor are affine in it; their JVP comes from the VJP)


@public(method=True, out=True)
def take(input, index):
    idx = _int_index(index, "take(): Expected a long tensor for index, but got " + str(getattr(index, "dtype", "")))
    n = input.numel()
    bad = idx[(idx >= n) | (idx < -n)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad.reshape(-1)[0])} on a tensor of {n} elements.")
    return apply(TAKE, (input,), (np.where(idx < 0, idx + n, idx),))


def _region_of(g, key):
    return g[key]


def _check_src(name: str, region_shape: tuple, src) -> None:
    if tuple(src.shape) != tuple(region_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(region_shape)}")


@public(method=True)
def select_scatter(input, src, dim, index):
    (d,) = normalize_dims(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(input.shape)} at "
                         f"dimension {d}")
    region = input._data[_at(d, index % size)]
    _check_src("select_scatter", region.shape, src)
    return apply(SELECT_SCATTER, (input, src.to(input.dtype)), (d, index % size))


@public(method=True)
def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    (d,) = normalize_dims(dim, input.ndim)
    s, e, st = slice(start, end, step).indices(input.shape[d])
    region = input._data[_at(d, slice(s, e, st))]
    _check_src("slice_scatter", region.shape, src)
    return apply(SLICE_SCATTER, (input, src.to(input.dtype)), (d, s, e, st))


@public(method=True)
def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    (d1,), (d2,) = normalize_dims(dim1, input.ndim), normalize_dims(dim2, input.ndim)
    region = np.diagonal(input._data, offset, d1, d2)
    _check_src("diagonal_scatter", region.shape, src)
    return apply(DIAGONAL_SCATTER_SRC, (input, src.to(input.dtype)), (offset, d1, d2))




class _ValuesIndices(tuple):
    """torch.return_types.max: a (values, indices) pair with names."""

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])

    def __repr__(self):
        return f"torch.return_types.{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"


def values_indices(name: str, values, index):
    """torch.return_types.<name>(values, indices), the indices as an int64 Tensor."""
    result = _ValuesIndices((values, Tensor._make(index.astype(np.int64))))
    result._name = name
    return result


@public(method=True)
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each slice along dim repeated repeats[i] times: an index_select with the repeated indices
    (with no repeats, input holds the counts and the result is those indices; a number of repeats
    is _repeat_each's)."""
    if repeats is None:   # torch.repeat_interleave(counts)
        counts = input._data
        if counts.ndim != 1 or counts.dtype.kind not in "iu":
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        return Tensor._make(np.repeat(np.arange(len(counts)), counts))
    if not isinstance(repeats, Tensor):
        return _repeat_each(input, int(repeats), dim, output_size)
    if dim is None:
        input, d = reshape(input, -1), 0
    else:
        (d,) = normalize_dims(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    # the index is worked out on the host: its length depends on the counts' values
    counts = backend.to_numpy(repeats._data).reshape(-1) if isinstance(repeats, Tensor) else np.array([int(repeats)])
    if counts.size == 1:
        counts = np.full(n, int(counts[0]))
    if counts.ndim != 1 or len(counts) != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{len(counts)} and input.size({d}) = {n}")
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    index = np.repeat(np.arange(n), counts)
    if output_size is not None and len(index) != output_size:
        raise RuntimeError("allocated size does not match required size")
    return index_select(input, d, Tensor._make(backend.to_device(index, input.device)))


def _repeat_each(input, repeats: int, dim, output_size):
    """Every slice along dim repeated `repeats` times, as torch's int overload records it: a new axis
    after dim, expanded, cloned contiguous and flattened into dim (no index on the host)."""
    if dim is None:
        input, d = flatten(input), 0
    else:
        (d,) = normalize_dims(dim, input.ndim)
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    x = unsqueeze(input, d + 1)
    x = expand(x, *x.shape[:d + 1], repeats, *x.shape[d + 2:])
    if output_size is not None and output_size != x.shape[d] * repeats:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {x.shape[d] * repeats} but got "
                           f"{output_size}")
    return flatten(clone(x, contiguous=True), d, d + 1)


@public(method=True)
def msort(input):
    return sort(input, 0)[0]


def pack_padded(input, lengths: list, batch_first: bool):
    """torch._pack_padded_sequence: the rows of a padded batch (T, B, *) (or (B, T, *)) that `lengths`
    (longest first) says are real, step by step, as one node; and how many rows each step has."""
    batch_sizes = [sum(n > t for n in lengths) for t in range(lengths[0])]
    steps = np.repeat(np.arange(len(batch_sizes)), batch_sizes)
    rows = np.concatenate([np.arange(b) for b in batch_sizes])
    return apply(PACK_PADDED_SEQUENCE, (input,), ((rows, steps) if batch_first else (steps, rows),)), batch_sizes
