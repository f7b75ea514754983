"""What sorting finds, on Tensors: unique and unique_consecutive (values, inverse, counts),
argwhere, searchsorted and bucketize, quantile and nanquantile, combinations.

unique records the nodes of gradviz.ops.search, which have no derivative (as in torch); the inverse
and the counts never require grad. searchsorted and bucketize run torch's binary search (a NaN
lands where it lands there) and return indices only. quantile is composed as torch composes it: a
sort, a gather of the values below (and above) each rank and a lerp between them, then in-place
squeezes, so its graph (SqueezeBackward4, LerpBackward1, GatherBackward0, SortBackward0) and its
gradient, ties included, are torch's. combinations is torch's meshgrid, masked_select and stack.
isin asks which elements are among the test elements (a bool tensor, no grad). unravel_index turns
flat indices into coordinates, as torch.functional computes them (floor_divide, then %)."""
from __future__ import annotations

import itertools
import numbers
import operator
import warnings
from collections.abc import Sequence

import numpy as np

from .. import backend
from .._args import check_tensor, invalid_arguments, is_number, type_name
from ..autograd.apply import apply
from ..dtypes import SCALAR_TYPE, Size, int64, result_type
from ..autograd.grad_mode import is_grad_enabled
from ..ops.reduce import normalize_dims
from ..ops.search import UNIQUE, UNIQUE_CONSECUTIVE, UNIQUE_DIM
from ..tensor import Tensor
from ..creation import tensor as _tensor
from .index import gather, masked_select, nonzero, sort
from .pointwise import floor_divide, lerp, masked_fill, mul, mul_scalar, remainder, sub
from .shape import expand, flatten, meshgrid, stack, transpose, unbind, unsqueeze, view
from .public import public


def _on_device_of(array, like: Tensor) -> Tensor:
    return Tensor._make(backend.to_device(array, like.device))


def _unique_dim_of(input, dim) -> int:
    if input.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    (d,) = normalize_dims(dim, input.ndim)
    if input.numel() == 0:
        if input.shape[d] != 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
        if list(input.shape).count(0) > 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
    return d


def _insertion_order(rows: np.ndarray) -> np.ndarray:
    """The order torch's std::sort (an insertion sort, for the few rows a NaN-holding input has
    in practice) gives rows under its lexicographic `<`, for which a NaN is neither less nor more."""
    def less(i, j) -> bool:
        for x, y in zip(rows[i], rows[j]):
            if x < y:
                return True
            if x > y:
                return False
        return False
    order = list(range(len(rows)))
    for i in range(1, len(order)):
        value = order[i]
        if less(value, order[0]):
            order[1:i + 1] = order[:i]
            order[0] = value
            continue
        j = i
        while j > 0 and less(value, order[j - 1]):
            order[j] = order[j - 1]
            j -= 1
        order[j] = value
    return np.asarray(order, dtype=np.int64)


def _row_order(rows: np.ndarray) -> np.ndarray:
    if rows.dtype.kind == "f" and np.isnan(rows).any():
        return _insertion_order(rows)
    if rows.shape[1] == 0:
        return np.arange(len(rows))
    return np.lexsort(rows.T[::-1].astype(np.int64) if rows.dtype == bool else rows.T[::-1])


def _runs(first: np.ndarray, n: int, order) -> tuple:
    """(where each run of equal entries starts, inverse, counts) from the run-start flags of the
    sorted (or consecutive) entries; `order` maps sorted positions back to the input's (None: same)."""
    group = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, n)).astype(np.int64)
    inverse = group.astype(np.int64)
    if order is not None:
        inverse = np.empty(n, dtype=np.int64)
        inverse[order] = group
    return starts, inverse, counts


def _unique_arrays(a: np.ndarray, d, consecutive: bool) -> tuple:
    """(values, inverse, counts) as NumPy arrays: the values sorted unless consecutive, each NaN
    its own value (NaN != NaN), ties keeping their order (torch sorts stably)."""
    if d is None:
        flat = a.reshape(-1)
        order = None if consecutive else np.argsort(flat, kind="stable")
        ordered = flat if order is None else flat[order]
        n = ordered.size
        if n == 0:
            return ordered.copy(), np.zeros(a.shape, dtype=np.int64), np.zeros(0, dtype=np.int64)
        first = np.empty(n, dtype=bool)
        first[0] = True
        first[1:] = ordered[1:] != ordered[:-1]
        starts, inverse, counts = _runs(first, n, order)
        return ordered[starts].copy(), inverse.reshape(a.shape), counts
    moved = np.moveaxis(a, d, 0)
    rows = moved.reshape(moved.shape[0], int(np.prod(moved.shape[1:])))
    n = rows.shape[0]
    if n == 0:
        return a.copy(), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = None if consecutive else _row_order(rows)
    ordered = rows if order is None else rows[order]
    first = np.empty(n, dtype=bool)
    first[0] = True
    first[1:] = ~(ordered[1:] == ordered[:-1]).all(axis=1)   # torch's at::equal: rows holding NaN never match
    starts, inverse, counts = _runs(first, n, order)
    picked = starts if order is None else order[starts]
    return np.moveaxis(moved[picked], 0, d).copy(), inverse, counts


def _unique(name: str, op, input, consecutive: bool, return_inverse: bool, return_counts: bool, dim):
    check_tensor(("_unique2" if dim is None else "unique_dim") if name == "unique" else name, "input", input, 1)
    d = None if dim is None else _unique_dim_of(input, dim)
    values, inverse, counts = _unique_arrays(backend.to_numpy(input._data), d, consecutive)
    out = [apply(op, (input,), (backend.to_device(values, input.device),))]
    if return_inverse:
        out.append(_on_device_of(inverse, input))
    if return_counts:
        out.append(_on_device_of(counts, input))
    return out[0] if len(out) == 1 else tuple(out)


@public(method=True)
def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (rows along dim), sorted; with the inverse (where each entry went) and
    the counts when asked. torch sorts on the CPU even with sorted=False, and so does gradviz."""
    op = UNIQUE if dim is None else UNIQUE_DIM
    return _unique("unique", op, input, False, return_inverse, return_counts, dim)


@public(method=True)
def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """One value (row along dim) per run of equal consecutive ones."""
    return _unique("unique_consecutive", UNIQUE_CONSECUTIVE, input, True, return_inverse, return_counts, dim)


@public(method=True)
def argwhere(input):
    """The indices of the nonzero entries, one row each: torch's nonzero(input)."""
    check_tensor("argwhere", "input", input, 1)
    return nonzero(input)


# -- searchsorted / bucketize ---------------------------------------------------------------------
_SEARCHSORTED_SIGNATURES = (
    " * (Tensor sorted_sequence, Tensor input, *, bool out_int32 = False, bool right = False, str side = None, "
    "Tensor sorter = None, Tensor out = None)\n"
    " * (Tensor sorted_sequence, Number self, *, bool out_int32 = False, bool right = False, str side = None, "
    "Tensor sorter = None, Tensor out = None)")
_BUCKETIZE_SIGNATURES = (
    " * (Tensor input, Tensor boundaries, *, bool out_int32 = False, bool right = False, Tensor out = None)\n"
    " * (Number self, Tensor boundaries, *, bool out_int32 = False, bool right = False)")


def _is_number(value) -> bool:
    return isinstance(value, (numbers.Number, np.number)) and not isinstance(value, Tensor)


def _bounds(boundaries: np.ndarray, values: np.ndarray, right: bool) -> np.ndarray:
    """torch's lower (upper) bound, one row of boundaries per row of values, run on every value at
    once: a value moves right past b while !(b >= v) (!(b > v) for right), which puts NaN where
    torch's kernel puts it."""
    rows, m = boundaries.shape
    start = np.zeros(values.shape, dtype=np.int64)
    end = np.full(values.shape, m, dtype=np.int64)
    while True:
        active = start < end
        if not active.any():
            return start
        mid = start + ((end - start) >> 1)
        at = np.take_along_axis(boundaries, np.minimum(mid, m - 1), axis=1)
        with np.errstate(invalid="ignore"):
            onward = ~(at > values) if right else ~(at >= values)
        start = np.where(active & onward, mid + 1, start)
        end = np.where(active & ~onward, mid, end)


_WARNED: set = set()   # torch warns of a non-contiguous operand once per program


def _search(boundaries, input, out_int32: bool, right: bool, side, sorter):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side != "right":
            raise RuntimeError(f"torch.searchsorted(): side and right can't be set to opposites, got side of {side} "
                               "while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    if not scalar and input.device != boundaries.device:
        raise RuntimeError("torch.searchsorted(): boundaries and input value tensors should have same device type, "
                           f"but got boundaries tensor device type {boundaries.device} and input value tensor device "
                           f"type {input.device}")
    if sorter is not None:
        if sorter.device != boundaries.device:
            raise RuntimeError("torch.searchsorted(): sorter and boundary tensors should have same device type, but "
                               f"got sorter tensor device type {sorter.device} and input value tensor device type "
                               f"{boundaries.device}")
        if tuple(sorter.shape) != tuple(boundaries.shape):
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(boundaries.shape)}and got sorter tensor {list(sorter.shape)}")
        if sorter._data.dtype != np.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{SCALAR_TYPE[sorter._data.dtype.name]}")
        order = backend.to_numpy(sorter._data)
        if order.size and (order.min() < 0 or order.max() >= sorter.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    in_shape = () if scalar else tuple(input.shape)
    numel = 1 if scalar else input.numel()
    if not (len(in_shape) > 0 or (numel == 1 and boundaries.ndim == 1)):
        raise RuntimeError("torch.searchsorted(): input value can be a scalar only when boundaries tensor dimension "
                           f"is 1, but we got boundaries tensor dim({boundaries.ndim}) and input value's "
                           f"dim({len(in_shape)}) numel({numel})")
    if boundaries.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if boundaries.ndim != 1 and (boundaries.ndim != len(in_shape)
                                 or tuple(boundaries.shape[:-1]) != in_shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, but we got boundaries "
                           f"tensor {list(boundaries.shape)} and input value tensor {list(in_shape)}")
    for tensor, what in ((None if scalar else input, "input value"), (boundaries, "boundary"), (sorter, "sorter")):
        if tensor is not None and not tensor.is_contiguous() and what not in _WARNED:
            _WARNED.add(what)
            warnings.warn(f"torch.searchsorted(): {what} tensor is non-contiguous, this will lower the performance due "
                          "to extra data copy when converting non-contiguous tensor to contiguous, please use "
                          f"contiguous {what} tensor if possible. This message will only appear once per program.",
                          UserWarning, stacklevel=4)
    bd = backend.to_numpy(boundaries._data)
    if scalar:
        common = result_type((bd,), (input,))
        values = np.asarray(input, dtype=common)
    else:
        values = backend.to_numpy(input._data)
        common = result_type((bd, values))
    if common == np.bool_:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    m = bd.shape[-1]
    rows = bd.astype(common, copy=False).reshape(int(np.prod(bd.shape[:-1])), m)
    if sorter is not None:
        rows = np.take_along_axis(rows, order.reshape(rows.shape), axis=1)
    per_row = values.size // rows.shape[0] if rows.shape[0] else 0
    found = _bounds(rows, values.astype(common, copy=False).reshape(rows.shape[0], per_row), right)
    found = found.reshape(in_shape).astype(np.int32 if out_int32 else np.int64)
    return _on_device_of(found, boundaries)


@public(out=True)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None):
    """Where each value would go in the innermost dim of sorted_sequence to keep it sorted (the
    first such place, or the last with right=True / side='right'); int64 indices (int32 on request)."""
    if not isinstance(sorted_sequence, Tensor) or not (isinstance(input, Tensor) or _is_number(input)):
        raise TypeError(f"searchsorted() received an invalid combination of arguments - got "
                        f"({type_name(sorted_sequence)}, {type_name(input)}), but expected one of:\n"
                        f"{_SEARCHSORTED_SIGNATURES}")
    return _search(sorted_sequence, input, out_int32, right, side, sorter)


@public(out=True)
def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value among 1-D boundaries: i with boundaries[i-1] < x <= boundaries[i]
    (boundaries[i-1] <= x < boundaries[i] with right=True)."""
    if not isinstance(boundaries, Tensor) or not (isinstance(input, Tensor) or _is_number(input)):
        raise TypeError(f"bucketize() received an invalid combination of arguments - got "
                        f"({type_name(input)}, {type_name(boundaries)}), but expected one of:\n"
                        f"{_BUCKETIZE_SIGNATURES}")
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return _search(boundaries, input, out_int32, right, None, None)


# -- quantile / nanquantile -----------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _cpp_double(value: float) -> str:
    """A double as C++'s ostream writes it (six significant digits): 1.5, 2, 1e-20, nan."""
    return f"{value:g}"


def _quantile_signatures(name: str, input, q) -> str:
    return (f"{name}() received an invalid combination of arguments - got ({type_name(input)}, {type_name(q)}), "
            "but expected one of:\n"
            " * (Tensor input, Tensor q, int dim = None, bool keepdim = False, *, str interpolation = \"linear\", "
            "Tensor out = None)\n"
            " * (Tensor input, float q, int dim = None, bool keepdim = False, *, str interpolation = \"linear\", "
            "Tensor out = None)")


def _quantile_checks(input, q, q_ndim: int, interpolation) -> None:
    """torch's checks, in torch's order (the interpolation is read first)."""
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
                           f"got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q_ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input._data.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q._data.dtype != input._data.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        if q.device != input.device:
            raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")


def _weights_of_q(q, data, below, ignore_nan: bool):
    """The linear weights rank − ⌊rank⌋ as torch computes them from a q that requires grad, so
    that q gets its gradient through torch's nodes: q · (n − 1) (MulBackward1; q · count with
    nanquantile, MulBackward0), expanded over the rows, NaN rows' ranks filled, minus ⌊rank⌋."""
    xp = backend.namespace_of(data)
    n = data.shape[-1]
    if ignore_nan:
        ranks = mul(q, Tensor._make((~xp.isnan(data)).sum(axis=-1, keepdims=True) - 1))
        ranks = masked_fill(ranks, Tensor._make(ranks._data < 0), 0)
    else:
        ranks = mul_scalar(q, n - 1)
        has_nan = xp.isnan(data).any(axis=-1, keepdims=True)
        shape = np.broadcast_shapes(tuple(ranks.shape), has_nan.shape)
        if tuple(ranks.shape) != shape:
            ranks = expand(ranks, *shape)
        ranks = masked_fill(ranks, Tensor._make(xp.broadcast_to(has_nan, shape)), n - 1)
    return sub(ranks, Tensor._make(below))


def _quantile(name: str, input, q, dim, keepdim: bool, interpolation, ignore_nan: bool):
    if not isinstance(input, Tensor) or not (isinstance(q, Tensor) or _is_number(q)):
        raise TypeError(_quantile_signatures(name, input, q))
    if not isinstance(q, Tensor) and not 0 <= float(q) <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {_cpp_double(float(q))}")
    q_ndim = q.ndim if isinstance(q, Tensor) else 0
    _quantile_checks(input, q, q_ndim, interpolation)
    d = None if dim is None else normalize_dims(dim, input.ndim)[0]
    xp = backend.namespace_of(input._data)
    dt = input._data.dtype
    q_data = q._data if isinstance(q, Tensor) else xp.asarray(float(q), dtype=dt)
    if isinstance(q, Tensor) and not bool(((q_data >= 0) & (q_data <= 1)).all()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    # the output's shape, then the sorted values viewed as (that shape without q's dim, n)
    if d is not None and input.ndim:
        out_shape = [1 if i == d else s for i, s in enumerate(input.shape)] if keepdim else \
            [s for i, s in enumerate(input.shape) if i != d]
    else:
        out_shape = [1] * input.ndim if keepdim else []
    if d is None:
        reduced = flatten(input)
    elif d == input.ndim - 1:
        reduced = input
    else:
        reduced = transpose(unsqueeze(input, -1), d, -1)
    ordered = sort(reduced).values
    n = ordered.shape[-1]
    ordered = view(ordered, *out_shape, n)
    data = ordered._data
    # the ranks, in the input's dtype as torch computes them
    last = dt.type(n - 1)
    if ignore_nan:
        count = (~xp.isnan(data)).sum(axis=-1, keepdims=True)
        ranks = (q_data * (count - 1).astype(dt)).astype(dt)
        ranks = xp.where(ranks < 0, dt.type(0), ranks)
    else:
        has_nan = xp.isnan(data).any(axis=-1, keepdims=True)
        ranks = xp.where(has_nan, last, (q_data * last).astype(dt))
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.rint(ranks)   # half to even, as torch's round
    below = ranks.astype(np.int64)
    values = gather(ordered, -1, Tensor._make(below))
    if interpolation in ("linear", "midpoint"):
        if interpolation == "midpoint":
            weights = Tensor._make(xp.full_like(ranks, 0.5))
        elif isinstance(q, Tensor) and q.requires_grad and is_grad_enabled():
            weights = _weights_of_q(q, data, below, ignore_nan)
        else:
            weights = Tensor._make((ranks - below.astype(dt)).astype(dt))
        above = gather(ordered, -1, Tensor._make(xp.ceil(ranks).astype(np.int64)))
        values = lerp(values, above, weights)
    if q_ndim == 0:
        return values.squeeze_(-1)
    return values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)


@public(method=True, out=True)
def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles of input (of all its entries, or along dim): the sorted values at rank
    q (n − 1), between two ranks interpolated as `interpolation` says. A NaN makes its quantiles NaN."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


@public(method=True, out=True)
def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile over the values that are not NaN (NaN where there are none)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


# -- combinations ---------------------------------------------------------------------------------
@public
def combinations(input, r=2, with_replacement=False):
    """The r-element combinations of a 1-D tensor's entries, one per row, as torch builds them:
    r views of input in a meshgrid, each masked to i < j < ... (i <= j <= ... with replacement)
    and the r selections stacked."""
    check_tensor("combinations", "input", input, 1)
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    xp = backend.namespace_of(input._data)
    if r == 0:
        return Tensor._make(xp.empty(0, dtype=input._data.dtype))
    index = np.meshgrid(*([np.arange(input.shape[0])] * r), indexing="ij")
    mask = np.ones(index[0].shape, dtype=bool)
    for i in range(r - 1):
        mask &= index[i] <= index[i + 1] if with_replacement else index[i] < index[i + 1]
    mask = _on_device_of(mask, input)
    grids = meshgrid(*([input] * r), indexing="ij")
    return stack([masked_select(grid, mask) for grid in grids], 1)


_ISIN_SIGNATURES = tuple(f"{a}, *, bool assume_unique = False, bool invert = False, Tensor out = None" for a in
                         ("Tensor elements, Tensor test_elements", "Number element, Tensor test_elements",
                          "Tensor elements, Number test_element"))


@public(out=True)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Each of elements: is it among test_elements? (invert: is it not?) Either may be a number."""
    tensors = [isinstance(v, Tensor) for v in (elements, test_elements)]
    if not any(tensors) or not all(t or is_number(v) for t, v in zip(tensors, (elements, test_elements))):
        raise invalid_arguments("isin", (elements, test_elements), {}, _ISIN_SIGNATURES)
    a = elements._data if tensors[0] else np.asarray(elements)
    b = test_elements._data if tensors[1] else np.asarray(test_elements)
    xp = backend.namespace_of(a if tensors[0] else b)
    return Tensor._make(xp.isin(a, b, assume_unique=assume_unique, invert=invert))


@public
def unravel_index(indices, shape):
    """The coordinates in `shape` of flat indices: one tensor per dimension, each of indices' shape."""
    if not isinstance(indices, Tensor):
        raise AttributeError(f"'{type(indices).__name__}' object has no attribute 'is_complex'")
    if indices.is_floating_point() or indices.dtype.name == "bool":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    if not isinstance(shape, (int, Sequence)) or isinstance(shape, (str, bytes)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if isinstance(shape, int):
        shape = Size([shape])
    else:
        for dim in shape:
            if not isinstance(dim, int):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got {type(dim)}")
        shape = Size(shape)
    if not all(dim >= 0 for dim in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    coefs = list(reversed(list(itertools.accumulate(reversed(tuple(shape[1:]) + (1,)), func=operator.mul))))
    steps = _tensor(coefs, dtype=int64, device=indices.device)
    sizes = _tensor(list(shape), dtype=int64, device=indices.device)
    return unbind(remainder(floor_divide(unsqueeze(indices, -1), steps), sizes), -1)
