"""Reductions. The VJP of a reduction broadcasts ḡ back over the reduced axes
(after re-inserting them when keepdim=False)."""
from __future__ import annotations

import numpy as np

from .core import apply, contiguous
from .op import Op
from .pointwise import quiet


def normalize_dims(dim, ndim: int) -> tuple:
    """dim (int, tuple or None) -> sorted tuple of non-negative axes, with PyTorch's range error."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
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
    return xp.reshape(g, _kept_shape(g.shape, dims, ndim))


def _kept_shape(shape, dims, ndim):
    shape = list(shape)
    for d in dims:
        shape.insert(d, 1)
    return tuple(shape)


def _count(a, dims):
    n = 1
    for d in dims:
        n *= a.shape[d]
    return n


DIMS = ("dim", "keepdim")
_SCALAR_TYPE = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}

SUM = Op("sum", "SumBackward0", "c = Σ a", lambda xp, a: a.sum(),
         vjp=(lambda xp, g, c, a: xp.broadcast_to(g, a.shape),), vjp_formulas=("ḡ broadcast to a",))
SUM_DIM = Op("sum", "SumBackward1", "c = Σ_dim a", lambda xp, a, dims, keep: a.sum(axis=dims, keepdims=keep),
             vjp=(lambda xp, g, c, a, dims, keep: xp.broadcast_to(restore(xp, g, dims, keep, a.ndim), a.shape),),
             vjp_formulas=("ḡ broadcast over dim",), params=DIMS)
MEAN = Op("mean", "MeanBackward0", "c = mean a", lambda xp, a: a.mean(),
          vjp=(lambda xp, g, c, a: xp.broadcast_to(g / (_count(a, range(a.ndim)) or 1), a.shape),),
          vjp_formulas=("ḡ / n broadcast to a",))
MEAN_DIM = Op("mean", "MeanBackward1", "c = mean_dim a", lambda xp, a, dims, keep: a.mean(axis=dims, keepdims=keep),
              vjp=(lambda xp, g, c, a, dims, keep:
                   xp.broadcast_to(restore(xp, g, dims, keep, a.ndim) / _count(a, dims), a.shape),),
              vjp_formulas=("ḡ / n broadcast over dim",), params=DIMS)


def _centered(xp, a, dims):
    return a - a.mean(axis=dims, keepdims=True)


VAR = Op("var", "VarBackward0", "c = Σ(a − ā)² / (n − k)",
         quiet(lambda xp, a, dims, keep, k: a.var(axis=dims, keepdims=keep, ddof=k)),
         vjp=(quiet(lambda xp, g, c, a, dims, keep, k:
                    restore(xp, g, dims, keep, a.ndim) * _centered(xp, a, dims) * (2.0 / (_count(a, dims) - k))),),
         vjp_formulas=("ḡ ⊙ 2(a − ā)/(n − k)",), params=("dim", "keepdim", "correction"), saves=("self",))
STD = Op("std", "StdBackward0", "c = √(Σ(a − ā)² / (n − k))",
         quiet(lambda xp, a, dims, keep, k: a.std(axis=dims, keepdims=keep, ddof=k)),
         vjp=(quiet(lambda xp, g, c, a, dims, keep, k:
                    restore(xp, g / c, dims, keep, a.ndim) * _centered(xp, a, dims) / (_count(a, dims) - k)),),
         vjp_formulas=("ḡ ⊙ (a − ā)/((n − k) c)",), params=("dim", "keepdim", "correction"),
         saves=("self", "result"))


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
          vjp=(quiet(_prod_vjp),), vjp_formulas=("ḡ ⊙ c / a",), params=DIMS, saves=("self", "result"))
PROD_DIM = Op("prod", "ProdBackward1", "c = Π_dim a", lambda xp, a, dims, keep: a.prod(axis=dims, keepdims=keep),
              vjp=(quiet(_prod_vjp),), vjp_formulas=("ḡ ⊙ c / a",), params=DIMS, saves=("self", "result"))


def _evenly(xp, g, c, a, dims, keep):
    """max()/amax(): the gradient is shared evenly among tied extremes."""
    g, c = restore(xp, g, dims, keep, a.ndim), restore(xp, c, dims, keep, a.ndim)
    mask = a == c
    count = xp.sum(xp.where(mask, a * 0 + 1, a * 0), axis=dims, keepdims=True)
    return xp.where(mask, g / count, 0)


MAX_ALL = Op("max", "MaxBackward1", "c = max a", lambda xp, a, dims, keep: a.max(),
             vjp=(_evenly,), vjp_formulas=("ḡ to the argmax (shared among ties)",), params=DIMS,
             saves=("self", "result"))
MIN_ALL = Op("min", "MinBackward1", "c = min a", lambda xp, a, dims, keep: a.min(),
             vjp=(_evenly,), vjp_formulas=("ḡ to the argmin (shared among ties)",), params=DIMS,
             saves=("self", "result"))
AMAX = Op("amax", "AmaxBackward0", "c = max_dim a", lambda xp, a, dims, keep: a.max(axis=dims, keepdims=keep),
          vjp=(_evenly,), vjp_formulas=("ḡ to the maxima (shared among ties)",), params=DIMS, saves=("self", "result"))
AMIN = Op("amin", "AminBackward0", "c = min_dim a", lambda xp, a, dims, keep: a.min(axis=dims, keepdims=keep),
          vjp=(_evenly,), vjp_formulas=("ḡ to the minima (shared among ties)",), params=DIMS, saves=("self", "result"))


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
             vjp_formulas=("ḡ scattered to the indices",), params=("dim", "keepdim", "indices"), saves=("indices",))
MIN_DIM = Op("min", "MinBackward0", "c = min_dim a", _take, vjp=(_select_vjp,),
             vjp_formulas=("ḡ scattered to the indices",), params=("dim", "keepdim", "indices"), saves=("indices",))


def _norm_forward(xp, a, p, dims, keep):
    if p == 0:   # the number of nonzero entries
        return (a != 0).sum(axis=dims, keepdims=keep).astype(a.dtype)
    if p == 2:
        return xp.sqrt((a * a).sum(axis=dims, keepdims=keep))
    if p == float("inf"):
        return xp.abs(a).max(axis=dims, keepdims=keep)
    return (xp.abs(a) ** p).sum(axis=dims, keepdims=keep) ** (1.0 / p)


def _norm_vjp(xp, g, c, a, p, dims, keep):
    g, c = restore(xp, g, dims, keep, a.ndim), restore(xp, c, dims, keep, a.ndim)
    if p == 0:
        return xp.zeros_like(a)
    if p == 2:
        return xp.where(c == 0, 0, g * a / c)
    if p == 1:
        return g * xp.sign(a)
    if p == float("inf"):
        return _evenly(xp, g, c, xp.abs(a), dims, True) * xp.sign(a)
    return xp.where(c == 0, 0, g * a * xp.abs(a) ** (p - 2) / c ** (p - 1))


NORM = Op("norm", "LinalgVectorNormBackward0", "c = ‖a‖ₚ", quiet(_norm_forward), vjp=(quiet(_norm_vjp),),
          vjp_formulas=("ḡ ⊙ a |a|ᵖ⁻² / cᵖ⁻¹",), params=("ord", "dim", "keepdim"), saves=("self", "result"))


def _logsumexp(xp, a, dims, keep):
    m = a.max(axis=dims, keepdims=True)
    m = xp.where(xp.isfinite(m), m, m * 0)   # all -inf rows stay -inf, not nan
    out = xp.log(xp.exp(a - m).sum(axis=dims, keepdims=True)) + m
    return out if keep else out.reshape(tuple(s for i, s in enumerate(out.shape) if i not in dims))


LOGSUMEXP = Op("logsumexp", "LogsumexpBackward0", "c = log Σ eᵃ", quiet(_logsumexp),
               vjp=(lambda xp, g, c, a, dims, keep:
                    restore(xp, g, dims, keep, a.ndim) * xp.exp(a - restore(xp, c, dims, keep, a.ndim)),),
               vjp_formulas=("ḡ ⊙ e^(a − c)",), params=DIMS, saves=("self", "result"))


def _softmax(xp, a, dim):
    e = xp.exp(a - a.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _log_softmax(xp, a, dim):
    shifted = a - a.max(axis=dim, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True))


SOFTMAX = Op("softmax", "SoftmaxBackward0", "c = eᵃ / Σ eᵃ", quiet(_softmax),
             vjp=(lambda xp, g, c, a, dim: c * (g - (g * c).sum(axis=dim, keepdims=True)),),
             vjp_formulas=("c ⊙ (ḡ − Σ ḡ ⊙ c)",), params=("dim",), saves=("result",))
LOG_SOFTMAX = Op("log_softmax", "LogSoftmaxBackward0", "c = a − log Σ eᵃ", quiet(_log_softmax),
                 vjp=(lambda xp, g, c, a, dim: g - xp.exp(c) * g.sum(axis=dim, keepdims=True),),
                 vjp_formulas=("ḡ − eᶜ Σ ḡ",), params=("dim",), saves=("result",))
CUMSUM = Op("cumsum", "CumsumBackward0", "cᵢ = Σ_{j≤i} aⱼ",
            lambda xp, a, dim: xp.cumsum(a, axis=dim) if a.ndim else a.copy(),
            vjp=(lambda xp, g, c, a, dim:
                 xp.flip(xp.cumsum(xp.flip(g, axis=dim), axis=dim), axis=dim) if a.ndim else g,),
            vjp_formulas=("reverse cumulative sum of ḡ",), params=("dim",))


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
    if dim is not None and not isinstance(dim, int) and len(dim) == 0:
        dim = None
    return (normalize_dims(dim, input.ndim) if input.ndim else ()), bool(keepdim)


def sum(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    elif input._data.dtype.kind in "bui":
        input = input.long()   # PyTorch sums integers and bools as int64
    if dim is None:
        return apply(SUM, (input,)) if not keepdim else apply(SUM_DIM, (input,), _dims_keep(input, None, True))
    return apply(SUM_DIM, (input,), _dims_keep(input, dim, keepdim))


def mean(input, dim=None, keepdim=False, *, dtype=None):
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


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):   # var(unbiased) positional form
        dim, unbiased = None, dim
    return apply(VAR, (input,), _dims_keep(input, dim, keepdim) + (_correction(unbiased, correction),))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return apply(STD, (input,), _dims_keep(input, dim, keepdim) + (_correction(unbiased, correction),))


def prod(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    if dim is None:
        return apply(PROD, (input,), _dims_keep(input, None, False))
    return apply(PROD_DIM, (input,), _dims_keep(input, dim, keepdim))


class _ValuesIndices(tuple):
    """torch.return_types.max: a (values, indices) pair with names."""

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])

    def __repr__(self):
        return f"torch.return_types.{self._name}(\nvalues={self[0]!r},\nindices={self[1]!r})"


def _extreme(input, dim, keepdim, other, full_op, dim_op, arg, name):
    from ..tensor import Tensor
    if other is not None:
        return (maximum_ if name == "max" else minimum_)(input, other)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        return apply(full_op, (input,), _dims_keep(input, None, False))
    (d,) = normalize_dims(dim, input.ndim)
    index = np.expand_dims(arg(input._data, axis=d), d) if input.ndim else np.zeros((), dtype=np.int64)
    values = apply(dim_op, (input,), (d, bool(keepdim), index))
    idx = index if keepdim or not input.ndim else index.squeeze(d)
    result = _ValuesIndices((values, Tensor._make(idx.astype(np.int64))))
    result._name = name
    return result


def max(input, dim=None, keepdim=False, *, other=None):
    from ..tensor import Tensor
    if isinstance(dim, Tensor):
        return _extreme(input, None, False, dim, MAX_ALL, MAX_DIM, None, "max")
    return _extreme(input, dim, keepdim, other, MAX_ALL, MAX_DIM, np.argmax, "max")


def min(input, dim=None, keepdim=False, *, other=None):
    from ..tensor import Tensor
    if isinstance(dim, Tensor):
        return _extreme(input, None, False, dim, MIN_ALL, MIN_DIM, None, "min")
    return _extreme(input, dim, keepdim, other, MIN_ALL, MIN_DIM, np.argmin, "min")


def maximum_(a, b):
    from .pointwise import maximum
    return maximum(a, b)


def minimum_(a, b):
    from .pointwise import minimum
    return minimum(a, b)


def amax(input, dim=(), keepdim=False):
    return apply(AMAX, (input,), _dims_keep(input, None if dim == () else dim, keepdim))


def amin(input, dim=(), keepdim=False):
    return apply(AMIN, (input,), _dims_keep(input, None if dim == () else dim, keepdim))


def argmax(input, dim=None, keepdim=False):
    from ..tensor import Tensor
    if dim is None:
        return Tensor._make(np.asarray(np.argmax(input._data), dtype=np.int64))
    return Tensor._make(np.argmax(input._data, axis=dim, keepdims=keepdim).astype(np.int64))


def argmin(input, dim=None, keepdim=False):
    from ..tensor import Tensor
    if dim is None:
        return Tensor._make(np.asarray(np.argmin(input._data), dtype=np.int64))
    return Tensor._make(np.argmin(input._data, axis=dim, keepdims=keepdim).astype(np.int64))


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if p in ("fro", None):
        p = 2
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
