"""Reductions on Tensors: dim/keepdim/dtype arguments and named (values, indices) results as
torch has them, then the records of gradviz.ops.reduce."""
from __future__ import annotations

import warnings

import numpy as np

from .._warn import warn
from .. import backend, dtypes
from .._args import argument_error, check_bool, check_flags, invalid_arguments, type_name
from ..autograd.apply import apply, coerce_pair
from ..ops.op import Op
from ..ops.stdsort import nth_element, std_sort
from ..autograd.grad_mode import is_grad_enabled
from ..dtypes import SCALAR_TYPE, as_np, floating_kernel, get_default_dtype, kernel_missing
from .index import entries_along, narrow, select, values_indices
from .pointwise import bool_subtraction, div_scalar, isnan, logical_not, logical_xor, maximum, minimum, mul_scalar, sub
from .shape import cat, reshape
from ..tensor import Tensor
from ..ops.reduce import (AMAX, AMIN, AMINMAX, CUMMAX, CUMMIN, CUMPROD, CUMSUM, DIST, KTHVALUE, LOGCUMSUMEXP,
                          LOGSUMEXP, LOG_SOFTMAX, MAX_ALL, MAX_DIM, MEAN, MEAN_DIM, MEDIAN, MEDIAN_DIM, MEDIAN_NAN, MODE,
                          NANMEDIAN, NANMEDIAN_DIM,
                          MIN_ALL, MIN_DIM, NANSUM, PROD, PROD_DIM, RENORM, SOFTMAX, STD, STD_MEAN, SUM, SUM_DIM, VAR,
                          VAR_MEAN, _ALL, _CUMMAX, _CUMMIN, _dims_keep, normalize_dims)
from .public import public


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


def _invalid_combination(name: str, got: str, overloads: tuple) -> TypeError:
    """torch's argument parser refusing a method call that fits none of its overloads."""
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got}, ), but expected one "
                     "of:\n" + "".join(f" * {overload}\n" for overload in overloads))


# the overloads of the reductions whose dim may be left out, as torch's argument parser lists them
_OVERLOADS = {name: ("(*, torch.dtype dtype = None)",
                     f"({kind} dim, bool keepdim = False, *, torch.dtype dtype = None)")
              for name, kind in (("sum", "tuple of ints"), ("mean", "tuple of ints"), ("prod", "int"))}


def _all_dims(name: str, dim, keepdim, dtype):
    """dim of sum, mean or prod: None (every dim) when left out. keepdim= without dim= fits none of
    torch's overloads (a dim=None given does)."""
    if keepdim is not None:
        check_bool(name, "keepdim", keepdim)
    if dim is not _ALL:
        return dim
    if keepdim is not None:
        if dtype is not None:
            raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
        raise _invalid_combination(name, f"keepdim={type(keepdim).__name__}", _OVERLOADS[name])
    return None


def _accumulated(input, dtype):
    """dtype= of a sum, mean or product as its op takes it: a NumPy dtype the op casts the input to
    before it runs, or None for torch's default (int64 for bool and integers). A result that is not
    floating has no gradient, which torch refuses for an input that requires one."""
    if dtype is None:
        return None
    dtype = as_np(dtype)
    if dtype.kind not in "fc" and input.requires_grad and is_grad_enabled():
        raise RuntimeError(f"Autograd not support dtype: {SCALAR_TYPE[dtype.name]}")
    return dtype


@public(out=True)
def sum(input, dim=_ALL, keepdim=None, *, dtype=None):
    if dtype is not None and not isinstance(dtype, dtypes.dtype) and dtype not in (float, int, bool, complex):
        if dim is not _ALL:
            raise TypeError(f"sum(): argument 'dtype' must be torch.dtype, not {type_name(dtype)}")
        raise invalid_arguments("sum", (), {"dtype": dtype}, (
            "*, torch.dtype dtype = None", "tuple of ints dim, bool keepdim = False, *, torch.dtype dtype = None"))
    dim = _all_dims("sum", dim, keepdim, dtype)
    dtype = _accumulated(input, dtype)
    if dim is None and not keepdim:
        return apply(SUM, (input,), (dtype,))
    return apply(SUM_DIM, (input,), _dims_keep(input, dim, keepdim) + (dtype,))


def _float_dtype(name: str, dtype) -> None:
    """mean's and nanmean's dtype=: floating point only."""
    if dtype is not None and as_np(dtype).kind not in "fc":
        raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be either a floating point "
                           f"or complex dtype. Got: {SCALAR_TYPE[as_np(dtype).name]}")


@public(out=True)
def mean(input, dim=_ALL, keepdim=None, *, dtype=None):
    dim = _all_dims("mean", dim, keepdim, dtype)
    _float_dtype("mean", dtype)
    if dtype is None and not input.dtype.is_floating_point:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           f"complex dtype. Got: {SCALAR_TYPE[input.dtype.name]}")
    dtype = _accumulated(input, dtype)
    if dim is None and not keepdim:
        return apply(MEAN, (input,), (dtype,))
    return apply(MEAN_DIM, (input,), _dims_keep(input, dim, keepdim) + (dtype,))


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


# std's, var's, std_mean's and var_mean's overloads as torch's parser lists them (the last two take no out=)
_MOMENT_OVERLOADS = ("Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False, *, Tensor out = None",
                     "Tensor input, tuple of ints dim = None, *, Number correction = None, bool keepdim = False, "
                     "Tensor out = None",
                     "Tensor input, bool unbiased = True")
_MOMENT_MEAN_OVERLOADS = tuple(s.replace(", *, Tensor out = None", "").replace(", Tensor out = None", "")
                               for s in _MOMENT_OVERLOADS)


def _moments(op, input, dim, unbiased, keepdim, correction):
    check_flags(op.name, input, _MOMENT_MEAN_OVERLOADS if op in (STD_MEAN, VAR_MEAN) else _MOMENT_OVERLOADS, unbiased=unbiased)
    check_bool(op.name, "keepdim", keepdim)
    if input._data.dtype.kind not in "fc":
        name = op.name if op in (STD_MEAN, VAR_MEAN) else "std and var"
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    if isinstance(dim, bool):   # var(unbiased) positional form
        dim, unbiased = None, dim
    dims, keep = _dims_keep(input, dim, keepdim)
    k = _correction(unbiased, correction)
    out_numel = int(np.prod([n for d, n in enumerate(input.shape) if d not in dims]))
    if (input.numel() // out_numel if out_numel else 0) - k <= 0:   # ATen's reduction factor, less k
        warn(f"{op.name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                          "reduction factor (input numel divided by output numel).")
    return apply(op, (input,), (dims, keep, k))


@public(out=True)
def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments(VAR, input, dim, unbiased, keepdim, correction)


@public(out=True)
def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments(STD, input, dim, unbiased, keepdim, correction)


@public(out=True)
def prod(input, dim=_ALL, keepdim=None, *, dtype=None):
    if dim is None:   # prod's dim is one int: None fits none of its overloads
        raise _invalid_combination("prod", "dim=NoneType", _OVERLOADS["prod"])
    dim = _all_dims("prod", dim, keepdim, dtype)
    dtype = _accumulated(input, dtype)
    if dim is None:
        return apply(PROD, (input,), _dims_keep(input, None, False) + (dtype,))
    return apply(PROD_DIM, (input,), _dims_keep(input, dim, keepdim) + (dtype,))


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


def _extreme_dim(name: str, input, dim, keepdim):
    """dim of max or min: None (every entry) when left out; a dim=None given, or keepdim= without
    dim=, fits none of torch's overloads, nor does an input that is no Tensor (max(2, t))."""
    if not isinstance(input, Tensor):
        given = tuple(v for v in (input, dim, keepdim) if v is not None and v is not _ALL)
        raise invalid_arguments(name, given, {}, ("Tensor input, *, Tensor out = None",
                                                  "Tensor input, Tensor other, *, Tensor out = None",
                                                  "Tensor input, int dim, bool keepdim = False, *, "
                                                  "tuple of Tensors out = None"))
    if dim is None or (dim is _ALL and keepdim is not None):
        wrong, value = ("dim", dim) if dim is None else ("keepdim", keepdim)
        note = f"\n      didn't match because some of the keywords were incorrect: {wrong}"
        raise _invalid_combination(name, f"{wrong}={type(value).__name__}",
                                   (f"(){note}", f"(Tensor other){note}", "(int dim, bool keepdim = False)"))
    return None if dim is _ALL else dim


@public(out=True)
def max(input, dim=_ALL, keepdim=None, *, other=None):
    dim = _extreme_dim("max", input, dim, keepdim)
    if isinstance(dim, Tensor):
        return _extreme(input, None, False, dim, MAX_ALL, MAX_DIM, None, "max")
    keepdim = False if keepdim is None else keepdim
    return _extreme(input, dim, keepdim, other, MAX_ALL, MAX_DIM, np.argmax, "max")


@public(out=True)
def min(input, dim=_ALL, keepdim=None, *, other=None):
    dim = _extreme_dim("min", input, dim, keepdim)
    if isinstance(dim, Tensor):
        return _extreme(input, None, False, dim, MIN_ALL, MIN_DIM, None, "min")
    keepdim = False if keepdim is None else keepdim
    return _extreme(input, dim, keepdim, other, MIN_ALL, MIN_DIM, np.argmin, "min")


@public(out=True)
def amax(input, dim=(), keepdim=False):
    check_bool("amax", "keepdim", keepdim)
    _nonempty("amax", input, None if dim == () else dim) if dim != () else None
    return apply(AMAX, (input,), _dims_keep(input, None if dim == () else dim, keepdim))


@public(out=True)
def amin(input, dim=(), keepdim=False):
    check_bool("amin", "keepdim", keepdim)
    _nonempty("amin", input, None if dim == () else dim) if dim != () else None
    return apply(AMIN, (input,), _dims_keep(input, None if dim == () else dim, keepdim))


def _arg_extreme(name: str, input, dim, keepdim):
    """argmax/argmin: the flat index over every entry when dim is None (each dim kept as size 1
    with keepdim), else the index along dim."""
    check_bool(name, "keepdim", keepdim)
    if input._data.dtype == np.bool_:
        raise RuntimeError(f"{name}(): does not support bool input")
    _nonempty(name, input, dim)
    xp = backend.namespace_of(input._data)
    find = xp.argmax if name == "argmax" else xp.argmin
    if dim is None:
        shape = (1,) * input.ndim if keepdim else ()
        return Tensor._make(xp.asarray(find(input._data), dtype=np.int64).reshape(shape))
    (d,) = normalize_dims(dim, input.ndim)
    if input.ndim == 0:
        return Tensor._make(xp.zeros((), dtype=np.int64))
    return Tensor._make(find(input._data, axis=d, keepdims=keepdim).astype(np.int64))


@public(out=True)
def argmax(input, dim=None, keepdim=False):
    return _arg_extreme("argmax", input, dim, keepdim)


@public(out=True)
def argmin(input, dim=None, keepdim=False):
    return _arg_extreme("argmin", input, dim, keepdim)


@public(out=True)
def logsumexp(input, dim, keepdim=False):
    check_bool("logsumexp", "keepdim", keepdim)
    if input._data.dtype.kind in "bui":   # torch promotes bool and integers to the default float dtype
        input = input.to(get_default_dtype())
    return apply(LOGSUMEXP, (input,), _dims_keep(input, dim, keepdim))


def _softmax(op: Op, input, dim, dtype):
    """softmax or log_softmax: the input cast to dtype= first (ToCopyBackward0, as torch records it)."""
    if dtype is not None:
        input = input.to(dtype)
    if dim is _ALL:   # torch.softmax's dim has no default (nn.functional's has: implicit_dim)
        raise TypeError(f'{op.name}() missing 1 required positional arguments: "dim"')
    if dim is None:
        raise argument_error(op.name, "dim", 2, "int", "NoneType")
    (d,) = normalize_dims(dim, input.ndim)
    if input.numel():   # an empty tensor of any dtype passes through, as in torch
        lastdim = "_lastdim" if d == input.ndim - 1 or not input.ndim else ""
        floating_kernel(f"{op.name}{lastdim}_kernel_impl", input._data.dtype)
    return apply(op, (input,), (d,))


@public
def softmax(input, dim=_ALL, dtype=None):
    return _softmax(SOFTMAX, input, dim, dtype)


@public
def log_softmax(input, dim=_ALL, dtype=None):
    return _softmax(LOG_SOFTMAX, input, dim, dtype)


def implicit_dim(input, dim, name: str, stacklevel: int):
    """softmax's (log_softmax's, softmin's) dim when none is given, with torch's warning naming it."""
    if dim is not None:
        return dim
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=stacklevel)
    return 0 if input.ndim in (0, 1, 3) else 1


def _scan(op: Op, input, dim, dtype):
    """cumsum or cumprod, in dtype= (cast first) or torch's default (int64 for bool and integers)."""
    (d,) = normalize_dims(dim, input.ndim)
    if dtype is not None and as_np(dtype).kind == "b" and input.ndim and input.numel():
        floating_kernel(f"{op.name}_out_cpu", np.dtype(np.bool_))
    return apply(op, (input,), (d, _accumulated(input, dtype)))


@public(out=True)
def cumsum(input, dim, *, dtype=None):
    return _scan(CUMSUM, input, dim, dtype)


def _bool_reduce(name, input, dim, keepdim):
    check_bool(name, "keepdim", keepdim)
    data = input._data
    fn = data.all if name == "all" else data.any
    xp = backend.namespace_of(data)
    axis = normalize_dims(dim, input.ndim) if dim is not None and input.ndim else None
    out = xp.asarray(fn(axis=axis, keepdims=bool(keepdim)))
    return Tensor._make(out.astype(np.uint8) if data.dtype == np.uint8 else out)


@public
def all(input, dim=None, keepdim=False):
    """True where every entry is nonzero (bool; uint8 for a uint8 input, as in PyTorch)."""
    return _bool_reduce("all", input, dim, keepdim)


@public
def any(input, dim=None, keepdim=False):
    return _bool_reduce("any", input, dim, keepdim)


@public
def count_nonzero(input, dim=None):
    axis = None if dim is None else normalize_dims(dim, input.ndim)
    if input.ndim == 0:   # dim 0 / -1 of a 0-d tensor: nothing to reduce
        axis = None
    xp = backend.namespace_of(input._data)
    return Tensor._make(xp.asarray(xp.count_nonzero(input._data, axis=axis), dtype=np.int64))


@public(out=True)
def cumprod(input, dim, *, dtype=None):
    return _scan(CUMPROD, input, dim, dtype)


@public(method=True, out=True)
def logcumsumexp(input, dim):
    floating_kernel("logcumsumexp_out_cpu", input._data.dtype)
    (d,) = normalize_dims(dim, input.ndim)
    return apply(LOGCUMSUMEXP, (input,), (d,))


@public(out=True)
def median(input, dim=None, keepdim=False):
    """The lower of the two middle values (PyTorch's median, unlike NumPy's, never averages)."""
    check_bool("median", "keepdim", keepdim)
    if input._data.dtype.kind == "b":
        raise kernel_missing("median_cpu" if dim is None else "median_out", bool)
    if dim is None:
        dims, _ = _dims_keep(input, None, False)
        has_nan = bool(backend.namespace_of(input._data).isnan(input._data).any())
        if input.numel() == 0 or has_nan:   # PyTorch: NaN (the NaNs share ḡ)
            return apply(MEDIAN_NAN, (input,), (dims, False, 0))
        return apply(MEDIAN, (input,), (dims, False, (input.numel() - 1) // 2))
    return _median_along("median", MEDIAN_DIM, input, dim, keepdim, skip_nan=False)


@public(method=True, out=True)
def nanmedian(input, dim=None, keepdim=False):
    """median of the entries that are not NaN (NaN where there are none)."""
    check_bool("nanmedian", "keepdim", keepdim)
    if input._data.dtype.kind == "b":
        raise kernel_missing("median_cpu" if dim is None else "median_out", bool)
    if dim is None:
        dims, _ = _dims_keep(input, None, False)
        counted = int((input._data == input._data).sum())
        return apply(NANMEDIAN, (input,), (dims, False, (counted - 1) // 2 if counted else -1))
    return _median_along("nanmedian", NANMEDIAN_DIM, input, dim, keepdim, skip_nan=True)


def _median_along(name: str, op: Op, input, dim, keepdim, skip_nan: bool):
    """median(dim) / nanmedian(dim): the entry at the lower middle of a stable sort along dim, where
    NaN sorts last: nanmedian counts only the other entries; median takes a slice's first NaN."""
    def middle(xp, a, d):
        order = xp.argsort(a, axis=d, kind="stable")
        counted = (a == a).sum(axis=d, keepdims=True)
        middle = xp.maximum(counted - 1, 0) // 2 if skip_nan else \
            xp.where(counted < a.shape[d], counted, (a.shape[d] - 1) // 2)
        index = xp.take_along_axis(order, middle, d)
        if skip_nan and not counted.all():   # a slice of NaNs only: the one nth_element leaves first
            index[counted == 0] = nth_element(list(range(a.shape[d])), 0, lambda i, j: False)[0]
        return index
    return _picked_along(name, "median", op, input, dim, keepdim, middle)


@public(method=True, out=True)
def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim (the smallest of equally frequent ones) and the index torch's CPU
    kernel reports: the last of its run after libstdc++'s std::sort, which is not stable."""
    check_bool("mode", "keepdim", keepdim)

    def most_frequent(xp, a, d):
        rows = xp.moveaxis(a, d, -1)
        found = [_mode_index(row) for row in backend.to_numpy(rows).reshape(-1, rows.shape[-1]).tolist()]
        return xp.expand_dims(xp.asarray(found, dtype=np.int64).reshape(rows.shape[:-1]), d)
    return _picked_along("mode", "mode", MODE, input, dim, keepdim, most_frequent)


def _picked_along(name: str, checked_as: str, op: Op, input, dim, keepdim, index_of):
    """(values, indices) of the entry `index_of(xp, array, dim)` picks in each slice along dim (its
    indices with dim kept), recorded by `op`: median, nanmedian and mode along a dim."""
    (d,) = normalize_dims(dim, input.ndim)
    _nonempty(checked_as, input, d)
    xp = backend.namespace_of(input._data)
    index = xp.zeros((), dtype=np.int64) if input.ndim == 0 else index_of(xp, input._data, d)
    values = apply(op, (input,), (d, bool(keepdim), index))
    return values_indices(name, values, index if keepdim or not input.ndim else index.squeeze(d))


def _by_value(x, y) -> bool:
    return x[0] < y[0]


def _mode_index(row: list) -> int:
    """torch's mode_kernel_impl on one slice: sort (value, position) pairs by value, then take the end of
    the first longest run of equal values (NaN equals nothing: a run of one)."""
    pairs, best, run, found = std_sort([(v, i) for i, v in enumerate(row)], _by_value), 0, 0, 0
    for i, (value, position) in enumerate(pairs):
        run += 1
        if i == len(pairs) - 1 or value != pairs[i + 1][0]:
            if run > best:
                best, found = run, position
            run = 0
    return found


@public   # torch.std_mean; torch's Tensor has no std_mean method
def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments(STD_MEAN, input, dim, unbiased, keepdim, correction)


@public   # torch.var_mean; torch's Tensor has no var_mean method
def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _moments(VAR_MEAN, input, dim, unbiased, keepdim, correction)


class _MinMax(tuple):
    """torch.return_types.aminmax: a (min, max) pair with names."""

    _name = "aminmax"   # aminmax_out when written into out= tensors (gradviz._calling.write_out)
    min = property(lambda self: self[0])
    max = property(lambda self: self[1])

    def __repr__(self):
        return f"torch.return_types.{self._name}(\nmin={self[0]!r},\nmax={self[1]!r})"


@public(out=True)
def aminmax(input, *, dim=None, keepdim=False):
    check_bool("aminmax", "keepdim", keepdim)
    if dim is None and input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if dim is not None and input.ndim and input.shape[normalize_dims(dim, input.ndim)[0]] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
    return _MinMax(apply(AMINMAX, (input,), _dims_keep(input, dim, keepdim)))


@public(out=True)
def dist(input, other, p=2):
    a, b, dtype = coerce_pair(input, other, "dist")
    if a._data.dtype.kind == "b" and b._data.dtype.kind == "b":   # dist subtracts first, as torch's
        raise bool_subtraction()
    if (dtype or a._data.dtype).kind in "iu":
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {SCALAR_TYPE[(dtype or a._data.dtype).name]} instead.")
    return apply(DIST, (a, b), (float(p),), dtype)


@public(out=True)
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """a[1:] − a[:-1] along dim, n times: slices and a subtraction, as PyTorch records it (bools
    differ by logical_xor, as there)."""
    if input.ndim < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for other in (prepend, append):
        if other is not None:
            (d,) = normalize_dims(dim, input.ndim)
            if other.ndim != input.ndim:
                raise RuntimeError("diff expects prepend or append to be the same dimension as input")
            for i in range(other.ndim):
                if i != d and other.shape[i] != input.shape[i]:
                    raise RuntimeError("diff expects the shape of tensor to prepend or append to match that of input "
                                       f"except along the differencing dimension; input.size({i}) = {input.shape[i]}, "
                                       f"but got tensor.size({i}) = {other.shape[i]}")
    if n == 0:   # PyTorch copies the input (CopyBackwards), ignoring prepend and append
        return input.new_empty(tuple(input.shape)).copy_(input)
    if prepend is not None or append is not None:
        input = cat([t for t in (prepend, input, append) if t is not None], dim)
    (d,) = normalize_dims(dim, input.ndim)
    step = logical_xor if input._data.dtype == np.bool_ else sub
    for _ in range(n):
        size = input.shape[d]
        if size == 0:
            break
        input = step(narrow(input, d, 1, size - 1), narrow(input, d, 0, size - 1))
    return input


# -- forward mode (autograd.forward_ad) ------------------------------------------------------
# sums, means and cumulative sums are linear; softmax's Jacobian diag(c) − c cᵀ is symmetric,
# so, as for an elementwise op, J·t is its VJP of t. The rest use the transpose of the VJP.


@public(method=("sum_to_size",), function=False)
def sum_to_size(input, *size):
    """Tensor.sum_to_size, as torch's at::sum_to: the leading dims and the dims size asks to be 1 summed in
    one sum(keepdim=True), then a view without the leading ones; input itself when nothing is summed."""
    if not size:
        raise TypeError('sum_to_size() missing 1 required positional arguments: "size"')
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size
    shape = tuple(input.shape)
    lead = len(shape) - len(size)
    if lead < 0 or [n for n, m in zip(size, shape[lead:]) if n != 1 and n != m]:
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size {{{list(shape)}}}.")
    dims = list(range(lead)) + [lead + i for i, n in enumerate(size) if n == 1 and shape[lead + i] != 1]
    if not dims:
        return input
    summed = sum(input, dims, True)
    return summed.view(*size) if lead else summed


@public(method=True)
def renorm(input, p, dim, maxnorm):
    """Each slice along dim whose p-norm is over maxnorm, scaled to norm maxnorm (less 1e-7's worth)."""
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    (d,) = normalize_dims(dim, input.ndim)
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if input._data.dtype.kind != "f":
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {SCALAR_TYPE[input._data.dtype.name]}")
    return apply(RENORM, (input,), (float(p), d, float(maxnorm)))


@public(method=True)
def nansum(input, dim=None, keepdim=False, *, dtype=None):
    check_bool("nansum", "keepdim", keepdim)
    return apply(NANSUM, (input,), _dims_keep(input, dim, keepdim) + (_accumulated(input, dtype),))


@public(method=True)
def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """nansum / the count of non-NaN entries, as torch composes it (DivBackward0)."""
    check_bool("nanmean", "keepdim", keepdim)
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{SCALAR_TYPE[input._data.dtype.name]}")
    _float_dtype("nanmean", dtype)
    count = sum(logical_not(isnan(input)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _cumulative_extreme(name: str, op: Op, scan, input, dim):
    (d,) = normalize_dims(dim, input.ndim)
    if not input.ndim:
        index = backend.namespace_of(input._data).zeros((), dtype=np.int64)
    else:
        _, index = scan(input._data, d)
    return values_indices(name, apply(op, (input,), (d if input.ndim else 0, index)), index)


@public(method=True)
def cummax(input, dim):
    return _cumulative_extreme("cummax", CUMMAX, _CUMMAX, input, dim)


@public(method=True)
def cummin(input, dim):
    return _cumulative_extreme("cummin", CUMMIN, _CUMMIN, input, dim)


@public(method=True, out=True)
def kthvalue(input, k, dim=-1, keepdim=False):
    check_bool("kthvalue", "keepdim", keepdim)
    if input._data.dtype.kind == "b":
        raise kernel_missing("kthvalue_cpu", bool)
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


def _trapezoid_spacing(y, x, dx, dim, name):
    """(d, spacing) for the trapezoid rule along d: a number, or a Tensor of the steps of x."""
    (d,) = normalize_dims(dim, y.ndim)
    n = y.shape[d]
    if x is not None and dx is not None:
        raise RuntimeError(f"{name}: received both x and dx, but only one may be passed")
    if x is None or not isinstance(x, Tensor):
        return d, (1.0 if dx is None else dx) if x is None else x
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        x = reshape(x, *[n if i == d else 1 for i in range(y.ndim)])
    m = x.shape[d] - 1 if x.shape[d] else 0
    return d, narrow(x, d, 1 if m else 0, m) - narrow(x, d, 0, m)


def _pair_sums(y, d):
    """yᵢ + yᵢ₊₁ along d."""
    n = y.shape[d]
    k = n - 1 if n else 0   # (max and min are this module's reductions)
    return narrow(y, d, 0, k) + narrow(y, d, 1 if n else 0, k)


@public
def trapezoid(y, x=None, *, dx=None, dim=-1):
    """∫ y by the trapezoid rule along dim, as torch's kernel writes it: with a spacing of dx,
    (Σ y − (y₀ + yₙ) · ½) · dx; with the steps of x, Σ (yᵢ + yᵢ₊₁) ⊙ Δx / 2; zeros along an empty dim."""
    _no_bool_y(y, "trapezoid")
    d, spacing = _trapezoid_spacing(y, x, dx, dim, "trapezoid")
    if isinstance(spacing, Tensor):
        return div_scalar(sum(_pair_sums(y, d) * spacing, d), 2.0)
    if y.shape[d] == 0:
        return Tensor._make(backend.namespace_of(y._data).zeros(y.shape[:d] + y.shape[d + 1:], y._data.dtype))
    ends = select(y, d, 0) + select(y, d, -1)
    return mul_scalar(sum(y, d) - mul_scalar(ends, 0.5), spacing)


def _no_bool_y(y, name: str) -> None:
    if isinstance(y, Tensor) and y._data.dtype.kind == "b":
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")


@public
def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


@public
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    _no_bool_y(y, "cumulative_trapezoid")
    d, spacing = _trapezoid_spacing(y, x, dx, dim, "cumulative_trapezoid")
    pairs = _pair_sums(y, d)
    if isinstance(spacing, Tensor):
        return cumsum(spacing * pairs, d) / 2.0
    return cumsum(pairs * (spacing / 2.0), d)


