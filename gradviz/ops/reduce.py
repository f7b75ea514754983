"""Reductions. The VJP of a reduction broadcasts ḡ back over the reduced axes
(after re-inserting them when keepdim=False)."""
from __future__ import annotations

import builtins

import numpy as np

from ..autograd.apply import apply, coerce_pair
from .core import contiguous
from .op import Op
from .pointwise import maximum, minimum, quiet, sub
from ..tensor import Tensor


def normalize_dims(dim, ndim: int) -> tuple:
    """dim (int, tuple or None) -> sorted tuple of non-negative axes, with PyTorch's range error."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, np.integer):
        dim = int(dim)
    ints = (dim,) if isinstance(dim, int) else dim if isinstance(dim, (tuple, list)) else (None,)
    if isinstance(dim, bool) or [d for d in ints if not isinstance(d, (int, np.integer)) or isinstance(d, bool)]:
        raise TypeError(f"received an invalid combination of arguments - got dim={dim!r} "
                        f"({type(dim).__name__}), but expected an int or a tuple of ints")
    dims = (dim,) if isinstance(dim, int) else tuple(int(d) for d in dim)
    out = []
    for d in dims:
        n = ndim if ndim else 1   # builtins max/min are shadowed below
        lo, hi = -n, n - 1
        if not lo <= d <= hi:
            raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})")
        d = d % n if ndim else 0
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(out))


def restore(xp, g, dims: tuple, keepdim: bool, ndim: int):
    """Put back the reduced axes as size-1 axes so ḡ broadcasts against the input."""
    if keepdim or ndim == 0:
        return g
    shape = list(g.shape)
    for d in dims:
        shape.insert(d, 1)
    return xp.reshape(g, tuple(shape))


def _count(a, dims):
    n = 1
    for d in dims:
        n *= a.shape[d]
    return n


DIMS = ("dim", "keepdim")
_SCALAR_TYPE = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}

SUM = Op("sum", "SumBackward0", "c = Σ a", lambda xp, a: a.sum(),
         vjp=(lambda xp, g, c, a: xp.broadcast_to(g, a.shape),), vjp_formulas=("ḡ broadcast to a",),
         latex=r"$c = \sum $0",
         vjp_latex=(r"\bar{g}\text{ broadcast to the shape of } $0",))
SUM_DIM = Op("sum", "SumBackward1", "c = Σ_dim a", lambda xp, a, dims, keep: a.sum(axis=dims, keepdims=keep),
             vjp=(lambda xp, g, c, a, dims, keep: xp.broadcast_to(restore(xp, g, dims, keep, a.ndim), a.shape),),
             vjp_formulas=("ḡ broadcast over dim",), params=DIMS,
             latex=r"$c = \sum_{\text{dim } $dim} $0$?keepdim{\text{ (keepdim)}}",
             vjp_latex=(r"\bar{g}\text{ broadcast over dim } $dim",))
MEAN = Op("mean", "MeanBackward0", "c = mean a", lambda xp, a: a.mean(),
          vjp=(lambda xp, g, c, a: xp.broadcast_to(g / (_count(a, range(a.ndim)) or 1), a.shape),),
          vjp_formulas=("ḡ / n broadcast to a",),
          latex=r"$c = \frac{1}{n} \sum $0",
          vjp_latex=(r"\frac{\bar{g}}{n} \text{ broadcast to the shape of } $0",))
MEAN_DIM = Op("mean", "MeanBackward1", "c = mean_dim a", lambda xp, a, dims, keep: a.mean(axis=dims, keepdims=keep),
              vjp=(lambda xp, g, c, a, dims, keep:
                   xp.broadcast_to(restore(xp, g, dims, keep, a.ndim) / _count(a, dims), a.shape),),
              vjp_formulas=("ḡ / n broadcast over dim",), params=DIMS,
              latex=r"$c = \operatorname{mean}_{\text{dim } $dim} $0$?keepdim{\text{ (keepdim)}}",
              vjp_latex=(r"\frac{\bar{g}}{n} \text{ broadcast over dim } $dim",))


def _centered(xp, a, dims):
    return a - a.mean(axis=dims, keepdims=True)


def _var_vjp(xp, g, c, a, dims, keep, k):
    return restore(xp, g, dims, keep, a.ndim) * _centered(xp, a, dims) * (2.0 / (_count(a, dims) - k))


def _std_vjp(xp, g, c, a, dims, keep, k):
    # a constant slice (c = 0) gets gradient 0, not 0/0: PyTorch masks it
    return restore(xp, xp.where(c == 0, 0, g / c), dims, keep, a.ndim) * _centered(xp, a, dims) / (_count(a, dims) - k)


VAR = Op("var", "VarBackward0", "c = Σ(a − ā)² / (n − k)",
         quiet(lambda xp, a, dims, keep, k: a.var(axis=dims, keepdims=keep, ddof=k)), vjp=(quiet(_var_vjp),),
         vjp_formulas=("ḡ ⊙ 2(a − ā)/(n − k)",), params=("dim", "keepdim", "correction"), saves=("self",),
         latex=r"$c = \frac{\sum ($0 - \bar{$0})^2}{n - k}",
         vjp_latex=(r"\bar{g} \odot \frac{2 ($0 - \bar{$0})}{n - k}",))
STD = Op("std", "StdBackward0", "c = √(Σ(a − ā)² / (n − k))",
         quiet(lambda xp, a, dims, keep, k: a.std(axis=dims, keepdims=keep, ddof=k)), vjp=(quiet(_std_vjp),),
         vjp_formulas=("ḡ ⊙ (a − ā)/((n − k) c)",), params=("dim", "keepdim", "correction"),
         saves=("self", "result"),
         latex=r"$c = \sqrt{\frac{\sum ($0 - \bar{$0})^2}{n - k}}",
         vjp_latex=(r"\bar{g} \odot \frac{$0 - \bar{$0}}{(n - k)\, $c}",))


def _prod_vjp(xp, g, c, a, dims, keep):
    g, c = restore(xp, g, dims, keep, a.ndim), restore(xp, c, dims, keep, a.ndim)
    zero = (a if xp.arrays else a._data) == 0
    if not zero.any():
        return g * c / a
    # With zeros c / a is 0 / 0. The product of the others is written so that it stays
    # right when differentiated again (create_graph): p, the product of the nonzero
    # entries, times the zero entries other than this one (each 0, but not constant).
    count = zero.sum(axis=dims, keepdims=True)
    safe = xp.where(zero, 1, a)
    p = safe.prod(axis=dims, keepdims=True) if xp.arrays else apply(PROD_DIM, (safe,), (dims, True))
    zeros = xp.sum(xp.where(zero, a, 0), axis=dims, keepdims=True)
    one, two = count == 1, count == 2
    others = xp.where(zero & one, p,
                      xp.where(one, zeros * p / safe,
                               xp.where(zero & two, (zeros - a) * p,
                                        xp.where(count == 0, c / safe, 0))))
    return g * others


PROD = Op("prod", "ProdBackward0", "c = Π a", lambda xp, a, dims, keep: a.prod(),
          vjp=(quiet(_prod_vjp),), vjp_formulas=("ḡ ⊙ c / a",), params=DIMS, saves=("self", "result"),
          latex=r"$c = \prod $0",
          vjp_latex=(r"\bar{g} \odot \frac{$c}{$0}",))
PROD_DIM = Op("prod", "ProdBackward1", "c = Π_dim a", lambda xp, a, dims, keep: a.prod(axis=dims, keepdims=keep),
              vjp=(quiet(_prod_vjp),), vjp_formulas=("ḡ ⊙ c / a",), params=DIMS, saves=("self", "result"),
              latex=r"$c = \prod_{\text{dim } $dim} $0",
              vjp_latex=(r"\bar{g} \odot \frac{$c}{$0}",))


def _evenly_nan(xp, g, c, a, dims, keep):
    """max()/min() of all entries: as _evenly, but a NaN result is where the NaNs are (PyTorch)."""
    g, c = restore(xp, g, dims, keep, a.ndim), restore(xp, c, dims, keep, a.ndim)
    mask = (a == c) | (xp.isnan(a) & xp.isnan(c))
    count = xp.sum(xp.where(mask, g * 0 + 1, g * 0), axis=dims, keepdims=True)
    return xp.where(mask, g / count, 0)


def _scaled_by_count(xp, g, c, a, dims, keep):
    """amax()/amin(): ḡ / count at the extremes, as PyTorch (a NaN extreme has no match: NaN)."""
    g, c = restore(xp, g, dims, keep, a.ndim), restore(xp, c, dims, keep, a.ndim)
    mask = a == c
    count = xp.sum(xp.where(mask, g * 0 + 1, g * 0), axis=dims, keepdims=True)
    return xp.keep(g / count, mask)


def _evenly(xp, g, c, a, dims, keep):
    """max()/amax(): the gradient is shared evenly among tied extremes."""
    g, c = restore(xp, g, dims, keep, a.ndim), restore(xp, c, dims, keep, a.ndim)
    mask = a == c
    count = xp.sum(xp.where(mask, a * 0 + 1, a * 0), axis=dims, keepdims=True)
    return xp.where(mask, g / count, 0)


MAX_ALL = Op("max", "MaxBackward1", "c = max a", lambda xp, a, dims, keep: a.max(),
             vjp=(_evenly_nan,), vjp_formulas=("ḡ to the argmax (shared among ties)",), params=DIMS,
             saves=("self", "result"),
             latex=r"$c = \max $0",
             vjp_latex=(r"\bar{g}\text{ to the argmax (shared among ties)}",))
MIN_ALL = Op("min", "MinBackward1", "c = min a", lambda xp, a, dims, keep: a.min(),
             vjp=(_evenly_nan,), vjp_formulas=("ḡ to the argmin (shared among ties)",), params=DIMS,
             saves=("self", "result"),
             latex=r"$c = \min $0",
             vjp_latex=(r"\bar{g}\text{ to the argmin (shared among ties)}",))
AMAX = Op("amax", "AmaxBackward0", "c = max_dim a", lambda xp, a, dims, keep: a.max(axis=dims, keepdims=keep),
          vjp=(quiet(_scaled_by_count),), vjp_formulas=("ḡ to the maxima (shared among ties)",), params=DIMS, saves=("self", "result"),
          latex=r"$c = \max_{\text{dim } $dim} $0",
          vjp_latex=(r"\bar{g}\text{ to the maxima (shared among ties)}",))
AMIN = Op("amin", "AminBackward0", "c = min_dim a", lambda xp, a, dims, keep: a.min(axis=dims, keepdims=keep),
          vjp=(quiet(_scaled_by_count),), vjp_formulas=("ḡ to the minima (shared among ties)",), params=DIMS, saves=("self", "result"),
          latex=r"$c = \min_{\text{dim } $dim} $0",
          vjp_latex=(r"\bar{g}\text{ to the minima (shared among ties)}",))


def _select_vjp(xp, g, c, a, dim, keep, index):
    if a.ndim == 0:
        return g
    g = g if keep else xp.expand_dims(g, dim)
    return xp.scatter_add_zeros(a.shape, dim, index, g)


def _take(xp, a, dim, keep, index):
    if a.ndim == 0:
        return a.copy()
    out = xp.take_along_axis(a, index, axis=dim)
    return out if keep else out.squeeze(dim)


MAX_DIM = Op("max", "MaxBackward0", "c = max_dim a", _take, vjp=(_select_vjp,),
             vjp_formulas=("ḡ scattered to the indices",), params=("dim", "keepdim", "indices"), saves=("indices",),
             latex=r"$c = \max_{\text{dim } $dim} $0",
             vjp_latex=(r"\bar{g}\text{ scattered to the indices}",))
MIN_DIM = Op("min", "MinBackward0", "c = min_dim a", _take, vjp=(_select_vjp,),
             vjp_formulas=("ḡ scattered to the indices",), params=("dim", "keepdim", "indices"), saves=("indices",),
             latex=r"$c = \min_{\text{dim } $dim} $0",
             vjp_latex=(r"\bar{g}\text{ scattered to the indices}",))


def _norm_forward(xp, a, p, dims, keep):
    if p == 0:   # the number of nonzero entries
        return (a != 0).sum(axis=dims, keepdims=keep).astype(a.dtype)
    if p == 2:
        return xp.sqrt((a * a).sum(axis=dims, keepdims=keep))
    if p == float("inf"):
        return xp.abs(a).max(axis=dims, keepdims=keep)
    if p == -float("inf"):
        return xp.abs(a).min(axis=dims, keepdims=keep)
    return (xp.abs(a) ** p).sum(axis=dims, keepdims=keep) ** (1.0 / p)


def _norm_vjp(xp, g, c, a, p, dims, keep):
    g, c = restore(xp, g, dims, keep, a.ndim), restore(xp, c, dims, keep, a.ndim)
    if p == 0:
        return xp.zeros_like(a)
    if p == 2:
        return xp.where(c == 0, 0, g * a / c)
    if p == 1:
        return g * xp.sign(a)
    if p in (float("inf"), -float("inf")):   # ḡ shared among the entries whose |a| is the norm
        return _evenly(xp, g, c, xp.abs(a), dims, True) * xp.sign(a)
    return xp.where(c == 0, 0, g * a * xp.abs(a) ** (p - 2) / c ** (p - 1))


NORM = Op("norm", "LinalgVectorNormBackward0", "c = ‖a‖ₚ", quiet(_norm_forward), vjp=(quiet(_norm_vjp),),
          vjp_formulas=("ḡ ⊙ a |a|ᵖ⁻² / cᵖ⁻¹",), params=("ord", "dim", "keepdim"), saves=("self", "result"),
          latex=r"$c = \lVert $0 \rVert_{p}",
          vjp_latex=(r"\bar{g} \odot \frac{$0\, |$0|^{p - 2}}{$c^{p - 1}}",))


def _shift(xp, a, axis):
    """The max along axis (kept) that softmax and logsumexp subtract; 0 for empty rows, which
    have no max (their sums are then 0, so logsumexp gives −inf as PyTorch does)."""
    if a.size == 0:
        return xp.zeros(tuple(1 if i in ((axis,) if isinstance(axis, int) else axis) else s
                              for i, s in enumerate(a.shape)), dtype=a.dtype)
    return a.max(axis=axis, keepdims=True)


def _logsumexp(xp, a, dims, keep):
    m = _shift(xp, a, dims)
    m = xp.where(xp.isfinite(m), m, 0)   # rows of ±inf stay ±inf, not nan
    out = xp.log(xp.exp(a - m).sum(axis=dims, keepdims=True)) + m
    return out if keep else out.reshape(tuple(s for i, s in enumerate(out.shape) if i not in dims))


LOGSUMEXP = Op("logsumexp", "LogsumexpBackward0", "c = log Σ eᵃ", quiet(_logsumexp),
               vjp=(lambda xp, g, c, a, dims, keep:
                    restore(xp, g, dims, keep, a.ndim) * xp.exp(a - restore(xp, c, dims, keep, a.ndim)),),
               vjp_formulas=("ḡ ⊙ e^(a − c)",), params=DIMS, saves=("self", "result"),
               latex=r"$c = \log \sum e^{$0}",
               vjp_latex=(r"\bar{g} \odot e^{$0 - $c}",))


def _softmax(xp, a, dim):
    e = xp.exp(a - _shift(xp, a, dim))
    return e / e.sum(axis=dim, keepdims=True)


def _log_softmax(xp, a, dim):
    shifted = a - _shift(xp, a, dim)
    return shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))


SOFTMAX = Op("softmax", "SoftmaxBackward0", "c = eᵃ / Σ eᵃ", quiet(_softmax),
             vjp=(lambda xp, g, c, a, dim: c * (g - (g * c).sum(axis=dim, keepdims=True)),),
             vjp_formulas=("c ⊙ (ḡ − Σ ḡ ⊙ c)",), params=("dim",), saves=("result",),
             latex=r"$c = \frac{e^{$0}}{\sum_{\text{dim } $dim} e^{$0}}",
             vjp_latex=(r"$c \odot \left(\bar{g} - \sum_{\text{dim } $dim} \bar{g} \odot $c\right)",))
LOG_SOFTMAX = Op("log_softmax", "LogSoftmaxBackward0", "c = a − log Σ eᵃ", quiet(_log_softmax),
                 vjp=(lambda xp, g, c, a, dim: g - xp.exp(c) * g.sum(axis=dim, keepdims=True),),
                 vjp_formulas=("ḡ − eᶜ Σ ḡ",), params=("dim",), saves=("result",),
                 latex=r"$c = $0 - \log \sum_{\text{dim } $dim} e^{$0}",
                 vjp_latex=(r"\bar{g} - e^{$c} \sum_{\text{dim } $dim} \bar{g}",))
CUMSUM = Op("cumsum", "CumsumBackward0", "cᵢ = Σ_{j≤i} aⱼ",
            lambda xp, a, dim: xp.cumsum(a, axis=dim) if a.ndim else a.copy(),
            vjp=(lambda xp, g, c, a, dim:
                 xp.flip(xp.cumsum(xp.flip(g, axis=dim), axis=dim), axis=dim) if a.ndim else g,),
            vjp_formulas=("reverse cumulative sum of ḡ",), params=("dim",),
            latex=r"{$c}_i = \sum_{j \le i} $0_j",
            vjp_latex=(r"\text{reverse cumulative sum of } \bar{g}",))


def _contiguous_result(forward):
    """PyTorch's reductions, softmax and cumsum return contiguous tensors whatever the input's
    strides (NumPy's keep them), and contiguity decides how a later reshape is recorded."""
    def run(xp, *args):
        return contiguous(forward(xp, *args))
    return run


for _op in (SUM_DIM, MEAN_DIM, VAR, STD, PROD_DIM, AMAX, AMIN, NORM, LOGSUMEXP, SOFTMAX, LOG_SOFTMAX, CUMSUM):
    _op.forward = _contiguous_result(_op.forward)


# -- public functions ---------------------------------------------------------------
def _dims_keep(input, dim, keepdim):
    # a 0-d tensor accepts dim 0 / -1, but there is no axis to reduce; dim=() reduces all
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        dim = None
    dims = normalize_dims(dim, input.ndim)   # checks dim even on a 0-d tensor (its range is [-1, 0])
    return (dims if input.ndim else ()), bool(keepdim)


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
    if dtype is not None:
        input = input.to(dtype)
    elif input._data.dtype.kind in "bui":
        input = input.long()   # PyTorch sums integers and bools as int64
    if dim is None:
        return apply(SUM, (input,)) if not keepdim else apply(SUM_DIM, (input,), _dims_keep(input, None, True))
    return apply(SUM_DIM, (input,), _dims_keep(input, dim, keepdim))


def mean(input, dim=None, keepdim=False, *, dtype=None):
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
    from ..dtypes import as_np
    return as_np(dtype).kind


def prod(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    elif input._data.dtype.kind in "bui":
        input = input.long()   # PyTorch multiplies integers and bools as int64
    if dim is None:
        return apply(PROD, (input,), _dims_keep(input, None, False))
    return apply(PROD_DIM, (input,), _dims_keep(input, dim, keepdim))


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


def _extreme(input, dim, keepdim, other, full_op, dim_op, arg, name):
    if other is not None:
        return (maximum if name == "max" else minimum)(input, other)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        return apply(full_op, (input,), _dims_keep(input, None, False))
    (d,) = normalize_dims(dim, input.ndim)
    _nonempty(name, input, d)
    index = np.expand_dims(arg(input._data, axis=d), d) if input.ndim else np.zeros((), dtype=np.int64)
    values = apply(dim_op, (input,), (d, bool(keepdim), index))
    return values_indices(name, values, index if keepdim or not input.ndim else index.squeeze(d))


_ALL = object()   # max()/min() without dim= (an explicit dim=None is an error in torch)


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
    _nonempty("amax", input, None if dim == () else dim) if dim != () else None
    return apply(AMAX, (input,), _dims_keep(input, None if dim == () else dim, keepdim))


def amin(input, dim=(), keepdim=False):
    _nonempty("amin", input, None if dim == () else dim) if dim != () else None
    return apply(AMIN, (input,), _dims_keep(input, None if dim == () else dim, keepdim))


def argmax(input, dim=None, keepdim=False):
    _nonempty("argmax", input, dim)
    if dim is None:
        return Tensor._make(np.asarray(np.argmax(input._data), dtype=np.int64))
    (d,) = normalize_dims(dim, input.ndim)
    if input.ndim == 0:
        return Tensor._make(np.zeros((), dtype=np.int64))
    return Tensor._make(np.argmax(input._data, axis=d, keepdims=keepdim).astype(np.int64))


def argmin(input, dim=None, keepdim=False):
    _nonempty("argmin", input, dim)
    if dim is None:
        return Tensor._make(np.asarray(np.argmin(input._data), dtype=np.int64))
    (d,) = normalize_dims(dim, input.ndim)
    if input.ndim == 0:
        return Tensor._make(np.zeros((), dtype=np.int64))
    return Tensor._make(np.argmin(input._data, axis=d, keepdims=keepdim).astype(np.int64))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
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
    import warnings
    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X "
                  "as an argument.", stacklevel=3)
    return 0 if input.ndim in (0, 1, 3) else 1


def cumsum(input, dim, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    (d,) = normalize_dims(dim, input.ndim)
    return apply(CUMSUM, (input,), (d,))


# -- more reductions and scans -------------------------------------------------------------
def _cumprod_vjp(xp, g, c, a, dim):
    if a.ndim == 0:
        return g
    zero = (a if xp.arrays else a._data) == 0
    if not zero.any():   # ∂cⱼ/∂aᵢ = cⱼ / aᵢ for j ≥ i
        return xp.flip(xp.cumsum(xp.flip(g * c, axis=dim), axis=dim), axis=dim) / a
    # With zeros cⱼ / aᵢ is 0 / 0: take the products of the others directly. Row i of P holds
    # cumprod(a with aᵢ replaced by 1); ∂cⱼ/∂aᵢ = P[i, j] for j ≥ i, and 0 before i.
    n = a.shape[dim]
    a_last, g_last = xp.swapaxes(a, dim, -1), xp.swapaxes(g, dim, -1)
    eye, upper = np.eye(n, dtype=bool), np.triu(np.ones((n, n), dtype=bool))
    rows = xp.where(eye, 1, xp.expand_dims(a_last, -2))     # (..., i, k)
    p = _cumprod_last(xp, rows)
    out = xp.sum(xp.where(upper, p, 0) * xp.expand_dims(g_last, -2), axis=-1)
    return xp.swapaxes(out, dim, -1)


def _cumprod_last(xp, a):
    if xp.arrays:
        return xp.cumprod(a, axis=-1)
    return cumprod(a, -1)


CUMPROD = Op("cumprod", "CumprodBackward0", "cᵢ = Π_{j≤i} aⱼ",
             lambda xp, a, dim: contiguous(xp.cumprod(a, axis=dim)) if a.ndim else a.copy(),
             vjp=(quiet(_cumprod_vjp),), vjp_formulas=("Σ_{j≥i} ḡⱼ Π_{k≤j, k≠i} aₖ",), params=("dim",),
             saves=("self", "result"),
             latex=r"{$c}_i = \prod_{j \le i} $0_j",
             vjp_latex=(r"\sum_{j \ge i} \bar{g}_j \prod_{k \le j,\, k \ne i} $0_k",))


def _logcumsumexp(xp, a, dim):
    if a.ndim == 0:
        return a.copy()
    return contiguous(xp.logaddexp.accumulate(a, axis=dim))


def _logcumsumexp_vjp(xp, g, c, a, dim):
    if a.ndim == 0:
        return g
    # ∂cⱼ/∂aᵢ = e^(aᵢ − cⱼ) for j ≥ i: a reverse cumulative sum of ḡⱼ e^(−cⱼ), times e^aᵢ
    if xp.arrays:   # in log space, positive and negative ḡ apart (as PyTorch): no overflow for |a| ≫ 1
        def reverse_lcse(x):
            return xp.flip(xp.logaddexp.accumulate(xp.flip(x, axis=dim), axis=dim), axis=dim)
        lowest = xp.finfo(g.dtype).min
        log_abs = xp.log(xp.abs(g))
        pos = xp.exp(reverse_lcse(xp.where(g > 0, log_abs, lowest) - c) + a)
        neg = xp.exp(reverse_lcse(xp.where(g < 0, log_abs, lowest) - c) + a)
        return pos - neg
    m = a._data.max()
    return xp.exp(a - m) * xp.flip(xp.cumsum(xp.flip(g * xp.exp(m - c), axis=dim), axis=dim), axis=dim)


LOGCUMSUMEXP = Op("logcumsumexp", "LogcumsumexpBackward0", "cᵢ = log Σ_{j≤i} e^aⱼ", quiet(_logcumsumexp),
                  vjp=(quiet(_logcumsumexp_vjp),), vjp_formulas=("e^aᵢ Σ_{j≥i} ḡⱼ e^(−cⱼ)",), params=("dim",),
                  saves=("self", "result"),
                  latex=r"{$c}_i = \log \sum_{j \le i} e^{$0_j}",
                  vjp_latex=(r"e^{$0_i} \sum_{j \ge i} \bar{g}_j\, e^{-{$c}_j}",))
# median() of all entries shares ḡ among tied medians; median(dim) sends it to the index
MEDIAN = Op("median", "MedianBackward0", "c = median a", lambda xp, a, dims, keep, k: xp.sort(a.reshape(-1))[k],
            vjp=(lambda xp, g, c, a, dims, keep, k: _evenly(xp, g, c, a, dims, keep),),
            vjp_formulas=("ḡ to the median (shared among ties)",), params=("dim", "keepdim", "k"),
            saves=("self", "result"),
            latex=r"$c = \operatorname{median} $0",
            vjp_latex=(r"\bar{g}\text{ to the median (shared among ties)}",))
MEDIAN_NAN = Op("median", "MedianBackward0", "c = median a", lambda xp, a, dims, keep, k: xp.asarray(np.nan, a.dtype),
                 vjp=(lambda xp, g, c, a, dims, keep, k: _evenly_nan(xp, g, c, a, dims, keep),),
                 vjp_formulas=("ḡ to the NaNs (shared)",), params=("dim", "keepdim", "k"), saves=("self", "result"),
                latex=r"$c = \operatorname{median} $0",
                vjp_latex=(r"\bar{g}\text{ to the NaNs (shared)}",))
MEDIAN_DIM = Op("median", "MedianBackward1", "c = median_dim a", _take, vjp=(_select_vjp,),
                vjp_formulas=("ḡ scattered to the indices",), params=("dim", "keepdim", "indices"), saves=("indices",),
                latex=r"$c = \operatorname{median}_{\text{dim } $dim} $0",
                vjp_latex=(r"\bar{g}\text{ scattered to the indices}",))


def _std_mean_forward(xp, a, dims, keep, k):
    return contiguous(a.std(axis=dims, keepdims=keep, ddof=k)), contiguous(a.mean(axis=dims, keepdims=keep))


def _var_mean_forward(xp, a, dims, keep, k):
    return contiguous(a.var(axis=dims, keepdims=keep, ddof=k)), contiguous(a.mean(axis=dims, keepdims=keep))


def _mean_part(xp, gm, a, dims, keep):
    return restore(xp, gm, dims, keep, a.ndim) / _count(a, dims)


STD_MEAN = Op("std_mean", "StdMeanBackward0", "(s, m) = (std a, mean a)", quiet(_std_mean_forward),
              vjp=(quiet(lambda xp, g, c, a, dims, keep, k:
                         _std_vjp(xp, g[0], c[0], a, dims, keep, k) + _mean_part(xp, g[1], a, dims, keep)),),
              vjp_formulas=("ḡₛ ⊙ (a − ā)/((n − k) s) + ḡₘ / n",), params=("dim", "keepdim", "correction"),
              saves=("self", "result"), n_outputs=2,
              latex=r"(s,\, m) = (\operatorname{std} $0,\, \operatorname{mean} $0)",
              vjp_latex=(r"\bar{g}_s \odot \frac{$0 - \bar{$0}}{(n - k)\, s} + \frac{\bar{g}_m}{n}",))
VAR_MEAN = Op("var_mean", "VarMeanBackward0", "(v, m) = (var a, mean a)", quiet(_var_mean_forward),
              vjp=(quiet(lambda xp, g, c, a, dims, keep, k:
                         _var_vjp(xp, g[0], c[0], a, dims, keep, k) + _mean_part(xp, g[1], a, dims, keep)),),
              vjp_formulas=("ḡᵥ ⊙ 2(a − ā)/(n − k) + ḡₘ / n",), params=("dim", "keepdim", "correction"),
              saves=("self",), n_outputs=2,
              latex=r"(v,\, m) = (\operatorname{var} $0,\, \operatorname{mean} $0)",
              vjp_latex=(r"\bar{g}_v \odot \frac{2 ($0 - \bar{$0})}{n - k} + \frac{\bar{g}_m}{n}",))


def _aminmax_vjp(xp, g, c, a, dims, keep):
    return _evenly(xp, g[0], c[0], a, dims, keep) + _evenly(xp, g[1], c[1], a, dims, keep)


AMINMAX = Op("aminmax", "AminmaxBackward0", "(lo, hi) = (min a, max a)",
             lambda xp, a, dims, keep: (contiguous(a.min(axis=dims, keepdims=keep)),
                                        contiguous(a.max(axis=dims, keepdims=keep))),
             vjp=(_aminmax_vjp,), vjp_formulas=("ḡ to the extremes (shared among ties)",), params=DIMS,
             saves=("self", "result"), n_outputs=2,
             latex=r"(\mathrm{lo},\, \mathrm{hi}) = (\min $0,\, \max $0)",
             vjp_latex=(r"\bar{g}\text{ to the extremes (shared among ties)}",))
DIST = Op("dist", "DistBackward0", "c = ‖a − b‖ₚ", quiet(lambda xp, a, b, p: _norm_forward(xp, a - b, p, None, False)),
          vjp=(quiet(lambda xp, g, c, a, b, p: _norm_vjp(xp, g, c, a - b, p, tuple(range(builtins.max(a.ndim, b.ndim))), False)),
               quiet(lambda xp, g, c, a, b, p:
                     -_norm_vjp(xp, g, c, a - b, p, tuple(range(builtins.max(a.ndim, b.ndim))), False))),
          vjp_formulas=("∂‖d‖ₚ/∂d at d = a − b", "−∂‖d‖ₚ/∂d at d = a − b"), args=("self", "other"), params=("p",),
          saves=("self", "other", "result"),
          latex=r"$c = \lVert $0 - $1 \rVert_p",
          vjp_latex=(r"\frac{\partial \lVert d \rVert_p}{\partial d} \text{ at } d = $0 - $1", r"-\frac{\partial \lVert d \rVert_p}{\partial d} \text{ at } d = $0 - $1",))


def _bool_reduce(name, input, dim, keepdim):
    data = input._data
    fn = data.all if name == "all" else data.any
    out = np.asarray(fn()) if dim is None else np.asarray(fn(axis=normalize_dims(dim, input.ndim) if input.ndim
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
    return Tensor._make(np.asarray(np.count_nonzero(input._data, axis=axis), dtype=np.int64))


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
    if dim is None:
        dims, _ = _dims_keep(input, None, False)
        if input.numel() == 0 or np.isnan(input._data).any():   # PyTorch: NaN (the NaNs share ḡ)
            return apply(MEDIAN_NAN, (input,), (dims, False, 0))
        return apply(MEDIAN, (input,), (dims, False, (input.numel() - 1) // 2))
    (d,) = normalize_dims(dim, input.ndim)
    if input.ndim == 0:
        index = np.zeros((), dtype=np.int64)
    else:
        order = np.argsort(input._data, axis=d, kind="stable")
        index = np.take(order, [(input.shape[d] - 1) // 2], axis=d)
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
    return _MinMax(apply(AMINMAX, (input,), _dims_keep(input, dim, keepdim)))


def dist(input, other, p=2):
    a, b, dtype = coerce_pair(input, other)
    return apply(DIST, (a, b), (float(p),), dtype)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """a[1:] − a[:-1] along dim, n times: slices and a subtraction, as PyTorch records it."""
    from .index import narrow
    from .shape import cat
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
from ..autograd.forward_ad import defjvp as _defjvp, linear as _linear, pointwise as _symmetric  # noqa: E402

_defjvp(_linear, SUM, SUM_DIM, MEAN, MEAN_DIM, CUMSUM)
_defjvp(_symmetric, SOFTMAX)


# -- more of torch's op table: sums that skip NaN, running extremes, k-th values, the trapezoid rule --
NANSUM = Op("nansum", "NansumBackward0", "c = Σ a (NaN as 0)",
            lambda xp, a, dims, keep: xp.asarray(xp.nansum(a, axis=dims, keepdims=keep)),
            vjp=(lambda xp, g, c, a, dims, keep: xp.where(a != a, 0.0, restore(xp, g, dims, keep, a.ndim)),),
            vjp_formulas=("ḡ where a is not NaN",), params=DIMS,
            latex=r"$c = \sum_{$0 \ne \mathrm{nan}} $0", vjp_latex=(r"\bar{g} \odot [$0 \ne \mathrm{nan}]",))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    elif input._data.dtype.kind in "bui":
        input = input.long()
    return apply(NANSUM, (input,), _dims_keep(input, dim, keepdim))


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """nansum / the count of non-NaN entries, as torch composes it (DivBackward0)."""
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{_SCALAR_TYPE.get(input._data.dtype.name, input._data.dtype.name)}")
    from .pointwise import isnan, logical_not
    count = sum(logical_not(isnan(input)), dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _running(name: str, better):
    def forward_indices(a: np.ndarray, d: int):
        """Running extreme along d and where it was reached (a later tie moves the index, NaN sticks)."""
        x = np.moveaxis(a, d, -1)
        values, index = np.empty_like(x), np.zeros(x.shape, dtype=np.int64)
        if x.shape[-1]:
            best, at = x[..., 0].copy(), np.zeros(x.shape[:-1], dtype=np.int64)
            for i in range(x.shape[-1]):
                v = x[..., i]
                take = (v != v) | ((best == best) & better(v, best))
                best, at = np.where(take, v, best), np.where(take, i, at)
                values[..., i], index[..., i] = best, at
        return np.moveaxis(values, -1, d), np.moveaxis(index, -1, d)
    return forward_indices


_CUMMAX, _CUMMIN = _running("cummax", lambda v, best: v >= best), _running("cummin", lambda v, best: v <= best)


def _scan_vjp(xp, g, c, a, dim, index):
    return xp.scatter_add_zeros(a.shape, dim, index, g) if a.ndim else g


CUMMAX = Op("cummax", "CummaxBackward0", "cᵢ = max_{j≤i} aⱼ",
            lambda xp, a, dim, index: xp.take_along_axis(a, index, dim) if a.ndim else a.copy(), vjp=(_scan_vjp,), vjp_formulas=("ḡ scatter-added to where each max was",),
            params=("dim", "indices"), saves=("indices",),
            latex=r"{$c}_i = \max_{j \le i} {$0}_j", vjp_latex=(r"\bar{g}\text{ scatter-added to where each max was}",))
CUMMIN = Op("cummin", "CumminBackward0", "cᵢ = min_{j≤i} aⱼ", CUMMAX.forward, vjp=(_scan_vjp,),
            vjp_formulas=("ḡ scatter-added to where each min was",), params=("dim", "indices"), saves=("indices",),
            latex=r"{$c}_i = \min_{j \le i} {$0}_j", vjp_latex=(r"\bar{g}\text{ scatter-added to where each min was}",))


def _cumulative_extreme(name: str, op: Op, scan, input, dim):
    (d,) = normalize_dims(dim, input.ndim)
    if not input.ndim:
        index = np.zeros((), dtype=np.int64)
    else:
        _, index = scan(input._data, d)
    return values_indices(name, apply(op, (input,), (d if input.ndim else 0, index)), index)


def cummax(input, dim):
    return _cumulative_extreme("cummax", CUMMAX, _CUMMAX, input, dim)


def cummin(input, dim):
    return _cumulative_extreme("cummin", CUMMIN, _CUMMIN, input, dim)


KTHVALUE = Op("kthvalue", "KthvalueBackward0", "c = k-th smallest along dim", _take, vjp=(_select_vjp,),
              vjp_formulas=("ḡ scattered to the indices",), params=("dim", "keepdim", "indices"), saves=("indices",),
              latex=r"$c = \text{the } k\text{-th smallest of } $0 \text{ along dim } $dim",
              vjp_latex=(r"\bar{g}\text{ scattered to the indices}",))


def kthvalue(input, k, dim=-1, keepdim=False):
    (d,) = normalize_dims(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise IndexError(f"kthvalue(): selected number k out of range for dimension {d}")
    if not input.ndim:
        index = np.zeros((), dtype=np.int64)
        return values_indices("kthvalue", apply(KTHVALUE, (input,), (0, bool(keepdim), index)), index)
    order = np.argsort(input._data, axis=d, kind="stable")   # NaN sorts last, as in torch
    index = np.take(order, [k - 1], axis=d)
    values = apply(KTHVALUE, (input,), (d, bool(keepdim), index))
    return values_indices("kthvalue", values, index if keepdim else index.squeeze(d))


def _trapezoid_parts(y, x, dx, dim, name):
    """(d, left + right, spacing) for the trapezoid rule along d; spacing a Tensor or a number."""
    from .shape import reshape
    from .index import narrow
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
