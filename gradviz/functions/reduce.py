"""Reductions on Tensors: dim/keepdim/dtype arguments and named (values, indices) results as
torch has them, then the records of gradviz.ops.reduce."""
from __future__ import annotations

import warnings

import numpy as np

from .. import backend, dtypes
from .._args import check_bool, invalid_arguments, type_name
from ..autograd.apply import apply, coerce_pair
from ..ops.op import Op
from ..dtypes import as_np
from .index import entries_along, narrow, values_indices
from .pointwise import isnan, logical_not, maximum, minimum, sub
from .shape import cat, reshape
from ..tensor import Tensor
from ..autograd.forward_ad import defjvp as _defjvp, linear as _linear, pointwise as _symmetric
from ..ops.reduce import (AMAX, AMIN, AMINMAX, CUMMAX, CUMMIN, CUMPROD, CUMSUM, DIST, KTHVALUE, LOGCUMSUMEXP,
                          LOGSUMEXP, LOG_SOFTMAX, MAX_ALL, MAX_DIM, MEAN, MEAN_DIM, MEDIAN, MEDIAN_DIM, MEDIAN_NAN,
                          MIN_ALL, MIN_DIM, NANSUM, NORM, PROD, PROD_DIM, SOFTMAX, STD, STD_MEAN, SUM, SUM_DIM, VAR,
                          VAR_MEAN, _ALL, _CUMMAX, _CUMMIN, _SCALAR_TYPE, _dims_keep, normalize_dims)


# -- public functions ---------------------------------------------------------------
def _nonempty(name: str, input, dim) -> None:
    """max/argmax-like reductions have no value over an empty dim: PyTorch's IndexError."""
    if input.numel():
        return
    if dim is None:
        raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
    for d in normalize_dims(dim, input.ndim):
        if input.ndim and input.shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def sum(input, dim=None, keepdim=False, *, dtype=None):
    check_bool("sum", "keepdim", keepdim)
    if dtype is not None and not isinstance(dtype, dtypes.dtype) and dtype not in (float, int, bool, complex):
        if dim is not None:
            raise TypeError(f"sum(): argument 'dtype' must be torch.dtype, not {type_name(dtype)}")
        raise invalid_arguments("sum", (), {"dtype": dtype}, (
            "*, torch.dtype dtype = None", "tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None"))
    if dtype is not None:
        input = input.to(dtype)
    elif input._data.dtype.kind in "bui":
        input = input.long()   # PyTorch sums integers and bools as int64
    if dim is None:
        return apply(SUM, (input,)) if not keepdim else apply(SUM_DIM, (input,), _dims_keep(input, None, True))
    return apply(SUM_DIM, (input,), _dims_keep(input, dim, keepdim))


def mean(input, dim=None, keepdim=False, *, dtype=None):
    check_bool("mean", "keepdim", keepdim)
    if dtype is not None and dtypes_np_kind(dtype) not in "fc":
        raise RuntimeError("mean(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {_SCALAR_TYPE.get(str(dtype)[6:], str(dtype)[6:])}")
    if dtype is not None:
        input = input.to(dtype)
    if not input.dtype.is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {_SCALAR_TYPE.get(input.dtype.name, input.dtype.name)}")
    if dim is None and not keepdim:
        return apply(MEAN, (input,))
    return apply(MEAN_DIM, (input,), _dims_keep(input, dim, keepdim))


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


def _moments(op, input, dim, unbiased, keepdim, correction):
    check_bool(op.name, "keepdim", keepdim)
    if input._data.dtype.kind not in "fc":
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if isinstance(dim, bool):   # var(unbiased) positional form
        dim, unbiased = None, dim
    return apply(op, (input,), _dims_keep(input, dim, keepdim) + (_correction(unbiased, correction),))


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments(VAR, input, dim, unbiased, keepdim, correction)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments(STD, input, dim, unbiased, keepdim, correction)


def dtypes_np_kind(dtype) -> str:
    return as_np(dtype).kind


def prod(input, dim=None, keepdim=False, *, dtype=None):
    check_bool("prod", "keepdim", keepdim)
    if dtype is not None:
        input = input.to(dtype)
    elif input._data.dtype.kind in "bui":
        input = input.long()   # PyTorch multiplies integers and bools as int64
    if dim is None:
        return apply(PROD, (input,), _dims_keep(input, None, False))
    return apply(PROD_DIM, (input,), _dims_keep(input, dim, keepdim))


def _extreme(input, dim, keepdim, other, full_op, dim_op, arg, name):
    check_bool(name, "keepdim", keepdim)
    if other is not None:
        return (maximum if name == "max" else minimum)(input, other)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        return apply(full_op, (input,), _dims_keep(input, None, False))
    (d,) = normalize_dims(dim, input.ndim)
    _nonempty(name, input, d)
    xp = backend.namespace_of(input._data)
    index = xp.expand_dims(arg(input._data, axis=d), d) if input.ndim else xp.zeros((), dtype=np.int64)
    values = apply(dim_op, (input,), (d, bool(keepdim), index))
    return values_indices(name, values, index if keepdim or not input.ndim else index.squeeze(d))


def _extreme_signature(name: str) -> str:
    return (f"{name}() received an invalid combination of arguments - got (dim=NoneType, ), but expected one of:\n"
            " * ()\n * (Tensor other)\n * (int dim, bool keepdim)\n * (name dim, bool keepdim)")


def max(input, dim=_ALL, keepdim=False, *, other=None):
    if dim is None:
        raise TypeError(_extreme_signature("max"))
    dim = None if dim is _ALL else dim
    if isinstance(dim, Tensor):
        return _extreme(input, None, False, dim, MAX_ALL, MAX_DIM, None, "max")
    return _extreme(input, dim, keepdim, other, MAX_ALL, MAX_DIM, np.argmax, "max")


def min(input, dim=_ALL, keepdim=False, *, other=None):
    if dim is None:
        raise TypeError(_extreme_signature("min"))
    dim = None if dim is _ALL else dim
    if isinstance(dim, Tensor):
        return _extreme(input, None, False, dim, MIN_ALL, MIN_DIM, None, "min")
    return _extreme(input, dim, keepdim, other, MIN_ALL, MIN_DIM, np.argmin, "min")


def amax(input, dim=(), keepdim=False):
    check_bool("amax", "keepdim", keepdim)
    _nonempty("amax", input, None if dim == () else dim) if dim != () else None
    return apply(AMAX, (input,), _dims_keep(input, None if dim == () else dim, keepdim))


def amin(input, dim=(), keepdim=False):
    check_bool("amin", "keepdim", keepdim)
    _nonempty("amin", input, None if dim == () else dim) if dim != () else None
    return apply(AMIN, (input,), _dims_keep(input, None if dim == () else dim, keepdim))


def argmax(input, dim=None, keepdim=False):
    check_bool("argmax", "keepdim", keepdim)
    _nonempty("argmax", input, dim)
    xp = backend.namespace_of(input._data)
    if dim is None:
        return Tensor._make(xp.asarray(xp.argmax(input._data), dtype=np.int64))
    (d,) = normalize_dims(dim, input.ndim)
    if input.ndim == 0:
        return Tensor._make(xp.zeros((), dtype=np.int64))
    return Tensor._make(xp.argmax(input._data, axis=d, keepdims=keepdim).astype(np.int64))


def argmin(input, dim=None, keepdim=False):
    check_bool("argmin", "keepdim", keepdim)
    _nonempty("argmin", input, dim)
    xp = backend.namespace_of(input._data)
    if dim is None:
        return Tensor._make(xp.asarray(xp.argmin(input._data), dtype=np.int64))
    (d,) = normalize_dims(dim, input.ndim)
    if input.ndim == 0:
        return Tensor._make(xp.zeros((), dtype=np.int64))
    return Tensor._make(xp.argmin(input._data, axis=d, keepdims=keepdim).astype(np.int64))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    check_bool("norm", "keepdim", keepdim)
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {str(input.dtype)[6:].capitalize().replace('Int64', 'Long')}")
    if p in ("fro", None):
        p = 2
    if p == "nuc":   # the sum of singular values, as torch.linalg.matrix_norm
        from .linalg import matrix_norm
        return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)
    if isinstance(p, str):
        raise RuntimeError(f"norm: ord {p!r} is not supported here; use a number, inf, -inf or 'fro'")
    return apply(NORM, (input,), (float(p),) + _dims_keep(input, dim, keepdim))


def logsumexp(input, dim, keepdim=False):
    check_bool("logsumexp", "keepdim", keepdim)
    return apply(LOGSUMEXP, (input,), _dims_keep(input, dim, keepdim))


def softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    (d,) = normalize_dims(_implicit_dim(input, dim), input.ndim)
    return apply(SOFTMAX, (input,), (d,))


def log_softmax(input, dim=None, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    (d,) = normalize_dims(_implicit_dim(input, dim), input.ndim)
    return apply(LOG_SOFTMAX, (input,), (d,))


def _implicit_dim(input, dim):
    if dim is not None:
        return dim
    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=3)
    return 0 if input.ndim in (0, 1, 3) else 1


def cumsum(input, dim, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    (d,) = normalize_dims(dim, input.ndim)
    return apply(CUMSUM, (input,), (d,))


def _bool_reduce(name, input, dim, keepdim):
    check_bool(name, "keepdim", keepdim)
    data = input._data
    fn = data.all if name == "all" else data.any
    xp = backend.namespace_of(data)
    out = xp.asarray(fn()) if dim is None else xp.asarray(fn(axis=normalize_dims(dim, input.ndim) if input.ndim
                                                               else None, keepdims=keepdim))
    return Tensor._make(out.astype(np.uint8) if data.dtype == np.uint8 else out)


def all(input, dim=None, keepdim=False):
    """True where every entry is nonzero (bool; uint8 for a uint8 input, as in PyTorch)."""
    return _bool_reduce("all", input, dim, keepdim)


def any(input, dim=None, keepdim=False):
    return _bool_reduce("any", input, dim, keepdim)


def count_nonzero(input, dim=None):
    axis = None if dim is None else normalize_dims(dim, input.ndim)
    if input.ndim == 0:   # dim 0 / -1 of a 0-d tensor: nothing to reduce
        axis = None
    xp = backend.namespace_of(input._data)
    return Tensor._make(xp.asarray(xp.count_nonzero(input._data, axis=axis), dtype=np.int64))


def cumprod(input, dim, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    elif input._data.dtype.kind in "bui":
        input = input.long()
    (d,) = normalize_dims(dim, input.ndim)
    return apply(CUMPROD, (input,), (d,))


def logcumsumexp(input, dim):
    (d,) = normalize_dims(dim, input.ndim)
    return apply(LOGCUMSUMEXP, (input,), (d,))


def median(input, dim=None, keepdim=False):
    """The lower of the two middle values (PyTorch's median, unlike NumPy's, never averages)."""
    check_bool("median", "keepdim", keepdim)
    if dim is None:
        dims, _ = _dims_keep(input, None, False)
        has_nan = bool(backend.namespace_of(input._data).isnan(input._data).any())
        if input.numel() == 0 or has_nan:   # PyTorch: NaN (the NaNs share ḡ)
            return apply(MEDIAN_NAN, (input,), (dims, False, 0))
        return apply(MEDIAN, (input,), (dims, False, (input.numel() - 1) // 2))
    (d,) = normalize_dims(dim, input.ndim)
    xp = backend.namespace_of(input._data)
    if input.ndim == 0:
        index = xp.zeros((), dtype=np.int64)
    else:
        order = xp.argsort(input._data, axis=d, kind="stable")
        middle = (input.shape[d] - 1) // 2
        index = entries_along(order, middle, middle + 1, d)
    values = apply(MEDIAN_DIM, (input,), (d, bool(keepdim), index))
    return values_indices("median", values, index if keepdim or not input.ndim else index.squeeze(d))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments(STD_MEAN, input, dim, unbiased, keepdim, correction)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments(VAR_MEAN, input, dim, unbiased, keepdim, correction)


class _MinMax(tuple):
    """torch.return_types.aminmax: a (min, max) pair with names."""

    min = property(lambda self: self[0])
    max = property(lambda self: self[1])

    def __repr__(self):
        return f"torch.return_types.aminmax(\nmin={self[0]!r},\nmax={self[1]!r})"


def aminmax(input, *, dim=None, keepdim=False):
    check_bool("aminmax", "keepdim", keepdim)
    return _MinMax(apply(AMINMAX, (input,), _dims_keep(input, dim, keepdim)))


def dist(input, other, p=2):
    a, b, dtype = coerce_pair(input, other)
    return apply(DIST, (a, b), (float(p),), dtype)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """a[1:] − a[:-1] along dim, n times: slices and a subtraction, as PyTorch records it."""
    if n == 0:   # PyTorch returns the input itself, ignoring prepend and append
        return input
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    if prepend is not None or append is not None:
        input = cat([t for t in (prepend, input, append) if t is not None], dim)
    (d,) = normalize_dims(dim, input.ndim)
    for _ in range(n):
        size = input.shape[d]
        if size == 0:
            break
        input = sub(narrow(input, d, 1, size - 1), narrow(input, d, 0, size - 1))
    return input


# -- forward mode (autograd.forward_ad) ------------------------------------------------------
# sums, means and cumulative sums are linear; softmax's Jacobian diag(c) − c cᵀ is symmetric,
# so, as for an elementwise op, J·t is its VJP of t. The rest use the transpose of the VJP.
_defjvp(_linear, SUM, SUM_DIM, MEAN, MEAN_DIM, CUMSUM)
_defjvp(_symmetric, SOFTMAX)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    check_bool("nansum", "keepdim", keepdim)
    if dtype is not None:
        input = input.to(dtype)
    elif input._data.dtype.kind in "bui":
        input = input.long()
    return apply(NANSUM, (input,), _dims_keep(input, dim, keepdim))


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """nansum / the count of non-NaN entries, as torch composes it (DivBackward0)."""
    check_bool("nanmean", "keepdim", keepdim)
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_SCALAR_TYPE.get(input._data.dtype.name, input._data.dtype.name)}")
    count = sum(logical_not(isnan(input)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _cumulative_extreme(name: str, op: Op, scan, input, dim):
    (d,) = normalize_dims(dim, input.ndim)
    if not input.ndim:
        index = backend.namespace_of(input._data).zeros((), dtype=np.int64)
    else:
        _, index = scan(input._data, d)
    return values_indices(name, apply(op, (input,), (d if input.ndim else 0, index)), index)


def cummax(input, dim):
    return _cumulative_extreme("cummax", CUMMAX, _CUMMAX, input, dim)


def cummin(input, dim):
    return _cumulative_extreme("cummin", CUMMIN, _CUMMIN, input, dim)


def kthvalue(input, k, dim=-1, keepdim=False):
    check_bool("kthvalue", "keepdim", keepdim)
    (d,) = normalize_dims(dim, input.ndim)
    _nonempty("kthvalue", input, d)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    xp = backend.namespace_of(input._data)
    if not input.ndim:
        index = xp.zeros((), dtype=np.int64)
        return values_indices("kthvalue", apply(KTHVALUE, (input,), (0, bool(keepdim), index)), index)
    order = xp.argsort(input._data, axis=d, kind="stable")   # NaN sorts last, as in torch
    index = entries_along(order, k - 1, k, d)
    values = apply(KTHVALUE, (input,), (d, bool(keepdim), index))
    return values_indices("kthvalue", values, index if keepdim else index.squeeze(d))


def _trapezoid_parts(y, x, dx, dim, name):
    """(d, left + right, spacing) for the trapezoid rule along d; spacing a Tensor or a number."""
    (d,) = normalize_dims(dim, y.ndim)
    n = y.shape[d]
    if x is not None and dx is not None:
        raise RuntimeError(f"{name}: received both x and dx, but only one may be passed")
    k = n - 1 if n else 0   # (max and min are this module's reductions)
    left, right = narrow(y, d, 0, k), narrow(y, d, 1 if n else 0, k)
    if x is None or not isinstance(x, Tensor):
        return d, left + right, (1.0 if dx is None else dx) if x is None else x
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        x = reshape(x, *[n if i == d else 1 for i in range(y.ndim)])
    m = x.shape[d] - 1 if x.shape[d] else 0
    return d, left + right, narrow(x, d, 1 if m else 0, m) - narrow(x, d, 0, m)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """∫ y by the trapezoid rule along dim: Σ spacing ⊙ (yᵢ + yᵢ₊₁) / 2."""
    d, pairs, spacing = _trapezoid_parts(y, x, dx, dim, "trapezoid")
    if isinstance(spacing, Tensor):
        return sum(spacing * pairs, d) / 2.0
    return sum(pairs, d) * (spacing / 2.0)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    d, pairs, spacing = _trapezoid_parts(y, x, dx, dim, "cumulative_trapezoid")
    if isinstance(spacing, Tensor):
        return cumsum(spacing * pairs, d) / 2.0
    return cumsum(pairs * (spacing / 2.0), d)


_defjvp(_linear, NANSUM)
