"""Reductions. The VJP of a reduction broadcasts ḡ back over the reduced axes
(after re-inserting them when keepdim=False). normalize_dims: a dim argument checked as torch's
reductions check it (the functions of every module read it)."""
from __future__ import annotations

import builtins
import functools
import math
import warnings

import numpy as np

from .. import backend
from .core import contiguous, shift_max
from .op import Op
from .pointwise import quiet


def restore(xp, g, dims: tuple, keepdim: bool, ndim: int):
    """Put back the reduced axes as size-1 axes so ḡ broadcasts against the input."""
    if keepdim or ndim == 0:
        return g
    shape = list(g.shape)
    for d in dims:
        shape.insert(d, 1)
    return xp.reshape(g, tuple(shape))


def unsqueezed(xp, g, dims: tuple, keepdim: bool, ndim: int):
    """restore, as torch's sum_backward does it: on Tensors (a recorded VJP) one unsqueeze per
    reduced dim, so a double backward through it meets torch's SqueezeBackward1 nodes."""
    if keepdim or ndim == 0 or xp.arrays:
        return restore(xp, g, dims, keepdim, ndim)
    for d in sorted(dims):
        g = g.unsqueeze(d)
    return g


def _count(a, dims):
    n = 1
    for d in dims:
        n *= a.shape[d]
    return n


# dtypes, not types: a dtype compared with a type converts the type first (0.5 µs a test, 0.1 with dtypes)
_BLAS_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


# NumPy sums short contiguous rows slowly, one inner loop per row (10 µs for 512 rows of 32 float32),
# and the columns of a matrix too (12 µs down the same 512 × 32); a product with a vector of ones is
# one BLAS call (1.7 µs). Such a sum adds in BLAS's order, not in NumPy's (the last bits differ).
def _blas_sums(xp, a) -> bool:
    return xp.arrays and type(a) is np.ndarray and a.dtype in _BLAS_DTYPES and a.size > 0


@functools.lru_cache(maxsize=64)
def _ones(n: int, dtype) -> np.ndarray:
    """n ones, read-only, made once per length and dtype (np.ones costs 1–3 µs; a GPT step makes 36 such sums)."""
    ones = np.ones(n, dtype=dtype)
    ones.flags.writeable = False
    return ones


def sum_last(xp, a, k: int = 1):
    """a summed over its last k dims, which stay as dims of size 1 (keepdims). Rows longer than
    NumPy's pairwise block (128) keep NumPy's sum: fast there, and pairwise."""
    shape = a.shape
    n = shape[-1] if k == 1 and shape else math.prod(shape[len(shape) - k:])
    if n > 128 or not _blas_sums(xp, a):
        return xp.sum(a, axis=tuple(range(a.ndim - k, a.ndim)), keepdims=True)
    return (a.reshape(a.size // n, n) @ _ones(n, a.dtype)).reshape(shape[:len(shape) - k] + _KEPT[k])


_KEPT = [(1,) * k for k in range(64)]   # the kept dims of size 1, made once


def sum_first(xp, a, k: int):
    """a summed over its first k dims, which go."""
    if not _blas_sums(xp, a):
        return xp.sum(a, axis=tuple(range(k)))
    shape = a.shape
    rows = shape[0] if k == 1 else math.prod(shape[:k])
    return (_ones(rows, a.dtype) @ a.reshape(rows, a.size // rows)).reshape(shape[k:])


def _cast(a, dtype):
    """a as torch's sums and products read it: cast to their dtype= before they run; without one,
    bool and integers as int64 (NumPy would choose uint64 for unsigned ones) and floats as they are."""
    if dtype is None:
        dtype = _INT64 if a.dtype.kind in "bui" else a.dtype
    return a.astype(dtype, copy=False)


def _accumulate(fn, a, dtype, **axes):
    """fn (sum, prod, nansum, cumsum, cumprod) of a cast as _cast says, in that dtype (NumPy's
    default would widen int8 to int64, where torch's int8 sum wraps around). On NumPy arrays the
    ufunc's own reduce or accumulate runs (what np.sum runs), called from here: a floating-point
    warning is then gradviz's, which gradviz._warn keeps from the learner, as torch is silent."""
    a = _cast(a, dtype)
    form = _UFUNC_FORMS.get(fn) if type(a) is np.ndarray else None
    if form is not None:
        return form(a, axis=axes.pop("axis", None), dtype=a.dtype, **axes)
    return fn(a, dtype=a.dtype, **axes)


def _mean(a, axis=None, keepdims=False):
    """a.mean(axis, keepdims) for torch's mean: NumPy's own steps (its _methods._mean: the sum,
    float16 summed in float32, then a division by the count as an intp) run from here, so that a
    floating-point warning is gradviz's (see _accumulate); other arrays (CuPy) their own mean."""
    if type(a) is not np.ndarray:
        return a.mean(axis=axis, keepdims=keepdims)
    dims = range(a.ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    count = np.intp(_count(a, dims))
    half = a.dtype == np.float16
    total = np.add.reduce(a, axis=axis, dtype=np.float32 if half else None, keepdims=keepdims)
    if type(total) is np.ndarray:
        total = np.true_divide(total, count, out=total, casting="unsafe")
        return total.astype(np.float16) if half else total
    return (a.dtype if half else total.dtype).type(total / count)


_UFUNC_FORMS = {np.sum: np.add.reduce, np.prod: np.multiply.reduce, np.cumsum: np.add.accumulate,
                np.cumprod: np.multiply.accumulate}


_INT64 = np.dtype(np.int64)
# The sums, means and products below take their dtype= as a last param that param_names leaves out:
# the forward casts to it, the engine casts ḡ back to the input's dtype, and torch's nodes keep no
# dtype (SumBackward1 has _saved_dim and _saved_keepdim only).
DIMS = ("dim", "keepdim")

SUM = Op("sum", "SumBackward0", r"$c = \sum $0", lambda xp, a, dtype: _accumulate(xp.sum, a, dtype),
         vjp=(lambda xp, g, c, a, dtype: xp.broadcast_to(g, a.shape),),
         vjp_latex=(r"\bar{g}\text{ broadcast to the shape of } $0",), jvp="linear")
SUM_DIM = Op("sum", "SumBackward1", r"$c = \sum_{\text{dim } $dim} $0$?keepdim{\text{ (keepdim)}}",
             lambda xp, a, dims, keep, dtype: _accumulate(xp.sum, a, dtype, axis=dims, keepdims=keep),
             vjp=(lambda xp, g, c, a, dims, keep, dtype:
                  xp.broadcast_to(unsqueezed(xp, g, dims, keep, a.ndim), a.shape),), params=DIMS,
             vjp_latex=(r"\bar{g}\text{ broadcast over dim } $dim",), jvp="linear")
MEAN = Op("mean", "MeanBackward0", r"$c = \frac{1}{n} \sum $0", lambda xp, a, dtype: _mean(_cast(a, dtype)),
          vjp=(lambda xp, g, c, a, dtype: xp.broadcast_to(g / (_count(a, range(a.ndim)) or 1), a.shape),),
          vjp_latex=(r"\frac{\bar{g}}{n} \text{ broadcast to the shape of } $0",), jvp="linear")
MEAN_DIM = Op("mean", "MeanBackward1", r"$c = \operatorname{mean}_{\text{dim } $dim} $0$?keepdim{\text{ (keepdim)}}",
              lambda xp, a, dims, keep, dtype: _mean(_cast(a, dtype), dims, keep),
              vjp=(lambda xp, g, c, a, dims, keep, dtype:
                   xp.broadcast_to(unsqueezed(xp, g, dims, keep, a.ndim) / _count(a, dims), a.shape),), params=DIMS,
              vjp_latex=(r"\frac{\bar{g}}{n} \text{ broadcast over dim } $dim",), jvp="linear")


def _centered(xp, a, dims):
    return a - a.mean(axis=dims, keepdims=True)


def _spread(a, kind, dims, keep, k):
    """a.var() or a.std() over dims with correction k. Where n − k ≤ 0 NumPy warns "Degrees of
    freedom <= 0 for slice"; the public function has warned in PyTorch's words, so NumPy's is silenced."""
    if _count(a, dims) - k > 0:
        return getattr(a, kind)(axis=dims, keepdims=keep, ddof=k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return getattr(a, kind)(axis=dims, keepdims=keep, ddof=k)


def _var_vjp(xp, g, c, a, dims, keep, k):
    # 2/(n − k) as a float64 division, inf when n = k (PyTorch's double arithmetic), not ZeroDivisionError
    return restore(xp, g, dims, keep, a.ndim) * _centered(xp, a, dims) * (np.float64(2.0) / (_count(a, dims) - k))


def _std_vjp(xp, g, c, a, dims, keep, k):
    # a constant slice (c = 0) gets gradient 0, not 0/0: PyTorch masks it
    return restore(xp, xp.where(c == 0, 0, g / c), dims, keep, a.ndim) * _centered(xp, a, dims) / (_count(a, dims) - k)


VAR = Op("var", "VarBackward0", r"$c = \frac{\sum ($0 - \bar{$0})^2}{n - $correction}",
         quiet(lambda xp, a, dims, keep, k: _spread(a, "var", dims, keep, k)), vjp=(quiet(_var_vjp),), params=("dim", "keepdim", "correction"), saves=("self",),
         vjp_latex=(r"\bar{g} \odot \frac{2 ($0 - \bar{$0})}{n - $correction}",))
STD = Op("std", "StdBackward0", r"$c = \sqrt{\frac{\sum ($0 - \bar{$0})^2}{n - $correction}}",
         quiet(lambda xp, a, dims, keep, k: _spread(a, "std", dims, keep, k)), vjp=(quiet(_std_vjp),), params=("dim", "keepdim", "correction"),
         saves=("self", "result"),
         vjp_latex=(r"\bar{g} \odot \frac{$0 - \bar{$0}}{(n - $correction)\, $c}",))


def _prod_vjp(xp, g, c, a, dims, keep, dtype):
    g, c = restore(xp, g, dims, keep, a.ndim), restore(xp, c, dims, keep, a.ndim)
    zero = (a if xp.arrays else a._data) == 0
    if not zero.any():
        return g * c / a
    # With zeros c / a is 0 / 0. The product of the others is written so that it stays
    # right when differentiated again (create_graph): p, the product of the nonzero
    # entries, times the zero entries other than this one (each 0, but not constant).
    count = zero.sum(axis=dims, keepdims=True)
    safe = xp.where(zero, 1, a)
    p = safe.prod(axis=dims, keepdims=True) if xp.arrays else xp.apply(PROD_DIM, (safe,), (dims, True, None))
    zeros = xp.sum(xp.where(zero, a, 0), axis=dims, keepdims=True)
    one, two = count == 1, count == 2
    others = xp.where(zero & one, p,
                      xp.where(one, zeros * p / safe,
                               xp.where(zero & two, (zeros - a) * p,
                                        xp.where(count == 0, c / safe, 0))))
    return g * others


PROD = Op("prod", "ProdBackward0", r"$c = \prod $0", lambda xp, a, dims, keep, dtype: _accumulate(xp.prod, a, dtype),
          vjp=(quiet(_prod_vjp),), params=DIMS, saves=("self", "result"),
          vjp_latex=(r"\bar{g} \odot \frac{$c}{$0}",))
PROD_DIM = Op("prod", "ProdBackward1", r"$c = \prod_{\text{dim } $dim} $0",
              lambda xp, a, dims, keep, dtype: _accumulate(xp.prod, a, dtype, axis=dims, keepdims=keep),
              vjp=(quiet(_prod_vjp),), params=DIMS, saves=("self", "result"),
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
    if not xp.arrays:
        return xp.keep(g / count, mask)
    out = g / count * mask   # torch's scale_grad_by_count multiplies: an inf or NaN ḡ is NaN off the extremes
    out += 0                 # −0 made +0 off the extremes (torch's product leaves −0: equal in every comparison)
    return out


def _evenly(xp, g, c, a, dims, keep):
    """max()/amax(): the gradient is shared evenly among tied extremes."""
    g, c = restore(xp, g, dims, keep, a.ndim), restore(xp, c, dims, keep, a.ndim)
    mask = a == c
    count = xp.sum(xp.where(mask, a * 0 + 1, a * 0), axis=dims, keepdims=True)
    return xp.where(mask, g / count, 0)


MAX_ALL = Op("max", "MaxBackward1", r"$c = \max $0", lambda xp, a, dims, keep: a.max(),
             vjp=(_evenly_nan,), params=DIMS,
             saves=("self", "result"),
             vjp_latex=(r"\bar{g}\text{ to the argmax (shared among ties)}",))
MIN_ALL = Op("min", "MinBackward1", r"$c = \min $0", lambda xp, a, dims, keep: a.min(),
             vjp=(_evenly_nan,), params=DIMS,
             saves=("self", "result"),
             vjp_latex=(r"\bar{g}\text{ to the argmin (shared among ties)}",))
AMAX = Op("amax", "AmaxBackward0", r"$c = \max_{\text{dim } $dim} $0",
          lambda xp, a, dims, keep: a.max(axis=dims, keepdims=keep),
          vjp=(quiet(_scaled_by_count),), params=DIMS, saves=("self", "result"),
          vjp_latex=(r"\bar{g}\text{ to the maxima (shared among ties)}",))
AMIN = Op("amin", "AminBackward0", r"$c = \min_{\text{dim } $dim} $0",
          lambda xp, a, dims, keep: a.min(axis=dims, keepdims=keep),
          vjp=(quiet(_scaled_by_count),), params=DIMS, saves=("self", "result"),
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


MAX_DIM = Op("max", "MaxBackward0", r"$c = \max_{\text{dim } $dim} $0",
             _take, vjp=(_select_vjp,), params=("dim", "keepdim", "indices"), saves=("indices",),
             vjp_latex=(r"\bar{g}\text{ scattered to the indices}",))
MIN_DIM = Op("min", "MinBackward0", r"$c = \min_{\text{dim } $dim} $0",
             _take, vjp=(_select_vjp,), params=("dim", "keepdim", "indices"), saves=("indices",),
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
    # as torch's norm_backward: |a|^(p−1) is ∞ at a = 0 for p < 1, and taken as 0 there
    if p < 1:
        return xp.where(a == 0, 0, xp.sign(a) * xp.abs(a) ** (p - 1)) * g * c ** (1 - p)
    scale = xp.where(c == 0, 0, g / c ** (p - 1))
    if p < 2:
        return xp.sign(a) * xp.abs(a) ** (p - 1) * scale
    return a * xp.abs(a) ** (p - 2) * scale


def _renorm_norm(xp, a, p, dim):
    """The p-norm of each slice along dim (over every other dim, kept), as renorm takes it."""
    return _norm_forward(xp, a, p, tuple(d for d in range(a.ndim) if d != dim), True)


def _renorm(xp, a, p, dim, maxnorm):
    norm = _renorm_norm(xp, a, p, dim)   # torch's renorm_scale_factor, in the input's dtype
    return a * xp.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1)


def _renorm_vjp(xp, g, c, a, p, dim, maxnorm):
    """torch's renorm_backward: maxnorm/‖a‖ ⊙ (ḡ − ∂‖a‖ᵀ(a · ḡ)/‖a‖) where a slice was scaled, ḡ elsewhere."""
    dims = tuple(d for d in range(a.ndim) if d != dim)
    norm = _renorm_norm(xp, a, p, dim)
    along = _norm_vjp(xp, xp.sum(a * g, axis=dims, keepdims=True), norm, a, p, dims, True)
    inverse = 1 / (norm + 1e-7)
    return xp.where(norm > maxnorm, maxnorm * inverse * (g - inverse * along), g)


RENORM = Op("renorm", "RenormBackward0",
            r"$c = $0 \odot \min\!\left(1,\, \frac{$maxnorm}{\lVert $0 \rVert_{$p} + 10^{-7}}\right) \text{ per slice along dim } $dim",
            quiet(_renorm), vjp=(quiet(_renorm_vjp),), params=("p", "dim", "maxnorm"), saves=("self",),
            vjp_latex=(r"\frac{$maxnorm}{\lVert $0 \rVert} \left(\bar{g} - \frac{\partial \lVert $0 \rVert}{\partial $0} \frac{\langle $0, \bar{g} \rangle}{\lVert $0 \rVert}\right) \text{ where scaled}",))

def _norm_jvp(xp, tangents, c, a, p, dims, keep):
    """ċ = Σ w ⊙ ȧ over the reduced dims, w = the VJP of ḡ = 1 (the Jacobian's row, 0 at a zero norm), as
    torch's norm_jvp: transposing the VJP would differentiate its where, and 0 · (a / 0) is nan there."""
    w = _norm_vjp(xp, xp.zeros_like(c) + 1, c, a, p, dims, keep)
    return xp.sum(w * tangents[0], dims, keep)


NORM = Op("norm", "LinalgVectorNormBackward0", r"$c = \lVert $0 \rVert_{p}",
          quiet(_norm_forward), vjp=(quiet(_norm_vjp),), jvp=quiet(_norm_jvp), params=("ord", "dim", "keepdim"),
          saves=("self", "result"),
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


LOGSUMEXP = Op("logsumexp", "LogsumexpBackward0", r"$c = \log \sum e^{$0}", quiet(_logsumexp),
               # a row of −inf (c = −inf) gives a − c = NaN, PyTorch's value, without NumPy's warning
               vjp=(quiet(lambda xp, g, c, a, dims, keep:
                          restore(xp, g, dims, keep, a.ndim) * xp.exp(a - restore(xp, c, dims, keep, a.ndim))),), params=DIMS, saves=("self", "result"),
               vjp_latex=(r"\bar{g} \odot e^{$0 - $c}",))


def _axis(a, dim):
    """dim as a reduction axis of a; None for a 0-d a (CuPy refuses axis 0 there, NumPy allows it)."""
    return dim if a.ndim else None


def _sum_dim(xp, a, dim):
    """a summed along dim, kept; along the last dim one product with ones (sum_last)."""
    if xp.arrays and a.ndim and dim in (-1, a.ndim - 1):
        return sum_last(xp, a)
    return a.sum(axis=_axis(a, dim), keepdims=True)


def _softmax(xp, a, dim):
    last = a.size and a.ndim > 1 and dim in (-1, a.ndim - 1)
    e = xp.exp(a - (shift_max(a) if last and xp.arrays else _shift(xp, a, _axis(a, dim))))
    return e / _sum_dim(xp, e, dim)


def _log_softmax(xp, a, dim):
    # shift_max as softmax: which zero a row of ±0 gives cannot matter here either (two zeros make the
    # sum at least 2, so each gets −log of it; one zero is its own max)
    last = a.size and a.ndim > 1 and dim in (-1, a.ndim - 1) and xp.arrays
    shifted = a - (shift_max(a) if last else _shift(xp, a, _axis(a, dim)))
    return shifted - xp.log(_sum_dim(xp, xp.exp(shifted), dim))


SOFTMAX = Op("softmax", "SoftmaxBackward0", r"$c = \frac{e^{$0}}{\sum_{\text{dim } $dim} e^{$0}}", quiet(_softmax),
             vjp=(lambda xp, g, c, a, dim: c * (g - _sum_dim(xp, g * c, dim)),), params=("dim",), saves=("result",),
             vjp_latex=(r"$c \odot \left(\bar{g} - \sum_{\text{dim } $dim} \bar{g} \odot $c\right)",), jvp="pointwise")
LOG_SOFTMAX = Op("log_softmax", "LogSoftmaxBackward0", r"$c = $0 - \log \sum_{\text{dim } $dim} e^{$0}",
                 quiet(_log_softmax),
                 vjp=(lambda xp, g, c, a, dim: g - xp.exp(c) * _sum_dim(xp, g, dim),), params=("dim",), saves=("result",),
                 vjp_latex=(r"\bar{g} - e^{$c} \sum_{\text{dim } $dim} \bar{g}",))
CUMSUM = Op("cumsum", "CumsumBackward0", r"{$c}_i = \sum_{j \le i} $0_j",
            lambda xp, a, dim, dtype: _accumulate(xp.cumsum, a, dtype, axis=dim) if a.ndim else _cast(a, dtype).copy(),
            vjp=(lambda xp, g, c, a, dim, dtype:
                 xp.flip(xp.cumsum(xp.flip(g, axis=dim), axis=dim), axis=dim) if a.ndim else g,), params=("dim",),
            vjp_latex=(r"\text{reverse cumulative sum of } \bar{g}",), jvp="linear")


_ALL = object()   # sum, mean, prod, max, min without dim=: torch tells it from dim=None given


# -- reductions over several values and scans -------------------------------------------------------------
def _cumprod_vjp(xp, g, c, a, dim, dtype):
    if a.ndim == 0:
        return g
    zero = (a if xp.arrays else a._data) == 0
    if not zero.any():   # ∂cⱼ/∂aᵢ = cⱼ / aᵢ for j ≥ i
        return xp.flip(xp.cumsum(xp.flip(g * c, axis=dim), axis=dim), axis=dim) / a
    # With zeros cⱼ / aᵢ is 0 / 0: take the products of the others directly. Row i of P holds
    # cumprod(a with aᵢ replaced by 1); ∂cⱼ/∂aᵢ = P[i, j] for j ≥ i, and 0 before i.
    n = a.shape[dim]
    a_last, g_last = xp.swapaxes(a, dim, -1), xp.swapaxes(g, dim, -1)
    lib = xp if xp.arrays else backend.namespace_of(a._data)   # the Tensor namespace takes arrays as constants
    eye, upper = lib.eye(n, dtype=bool), lib.triu(lib.ones((n, n), dtype=bool))
    rows = xp.where(eye, 1, xp.expand_dims(a_last, -2))     # (..., i, k)
    p = _cumprod_last(xp, rows)
    out = xp.sum(xp.where(upper, p, 0) * xp.expand_dims(g_last, -2), axis=-1)
    return xp.swapaxes(out, dim, -1)


def _cumprod_last(xp, a):
    if xp.arrays:
        return xp.cumprod(a, axis=-1)
    return xp.cumprod(a, -1)


CUMPROD = Op("cumprod", "CumprodBackward0", r"{$c}_i = \prod_{j \le i} $0_j",
             lambda xp, a, dim, dtype:
             contiguous(_accumulate(xp.cumprod, a, dtype, axis=dim)) if a.ndim else _cast(a, dtype).copy(),
             vjp=(quiet(_cumprod_vjp),), params=("dim",),
             saves=("self", "result"),
             vjp_latex=(r"\sum_{j \ge i} \bar{g}_j \prod_{k \le j,\, k \ne i} $0_k",))


def _log_cumsum_exp(xp, a, dim):
    """log Σ_{j≤i} e^aⱼ along dim: NumPy's logaddexp.accumulate, and where a namespace lacks it
    (CuPy) a scan in log₂ n steps of logaddexp over shifted copies (Hillis and Steele)."""
    if xp.xp is np:
        return xp.logaddexp.accumulate(a, axis=dim)
    out, n, shift = a.copy(), a.shape[dim], 1
    while shift < n:
        later = (slice(None),) * dim + (slice(shift, None),)
        earlier = (slice(None),) * dim + (slice(None, n - shift),)
        out[later] = xp.logaddexp(out[later], out[earlier])   # the right side is computed before the write
        shift *= 2
    return out


def _logcumsumexp(xp, a, dim):
    if a.ndim == 0:
        return a.copy()
    return contiguous(_log_cumsum_exp(xp, a, dim))


def _logcumsumexp_vjp(xp, g, c, a, dim):
    if a.ndim == 0:
        return g
    # ∂cⱼ/∂aᵢ = e^(aᵢ − cⱼ) for j ≥ i: a reverse cumulative sum of ḡⱼ e^(−cⱼ), times e^aᵢ
    if xp.arrays:   # in log space, positive and negative ḡ apart (as PyTorch): no overflow for |a| ≫ 1
        def reverse_lcse(x):
            return xp.flip(_log_cumsum_exp(xp, xp.flip(x, axis=dim), dim), axis=dim)
        lowest = xp.finfo(g.dtype).min
        log_abs = xp.log(xp.abs(g))
        pos = xp.exp(reverse_lcse(xp.where(g > 0, log_abs, lowest) - c) + a)
        neg = xp.exp(reverse_lcse(xp.where(g < 0, log_abs, lowest) - c) + a)
        return pos - neg
    m = a._data.max()
    return xp.exp(a - m) * xp.flip(xp.cumsum(xp.flip(g * xp.exp(m - c), axis=dim), axis=dim), axis=dim)


LOGCUMSUMEXP = Op("logcumsumexp", "LogcumsumexpBackward0", r"{$c}_i = \log \sum_{j \le i} e^{$0_j}",
                  quiet(_logcumsumexp),
                  vjp=(quiet(_logcumsumexp_vjp),), params=("dim",),
                  saves=("self", "result"),
                  vjp_latex=(r"e^{$0_i} \sum_{j \ge i} \bar{g}_j\, e^{-{$c}_j}",))
# median() of all entries shares ḡ among tied medians; median(dim) sends it to the index
MEDIAN = Op("median", "MedianBackward0", r"$c = \operatorname{median} $0",
            lambda xp, a, dims, keep, k: xp.sort(a.reshape(-1))[k],
            vjp=(lambda xp, g, c, a, dims, keep, k: _evenly(xp, g, c, a, dims, keep),), params=("dim", "keepdim", "k"),
            saves=("self", "result"),
            vjp_latex=(r"\bar{g}\text{ to the median (shared among ties)}",))
MEDIAN_NAN = Op("median", "MedianBackward0", r"$c = \operatorname{median} $0",
                lambda xp, a, dims, keep, k: xp.asarray(np.nan, a.dtype),
                 vjp=(lambda xp, g, c, a, dims, keep, k: _evenly_nan(xp, g, c, a, dims, keep),), params=("dim", "keepdim", "k"), saves=("self", "result"),
                vjp_latex=(r"\bar{g}\text{ to the NaNs (shared)}",))
MEDIAN_DIM = Op("median", "MedianBackward1", r"$c = \operatorname{median}_{\text{dim } $dim} $0",
                _take, vjp=(_select_vjp,), params=("dim", "keepdim", "indices"), saves=("indices",),
                vjp_latex=(r"\bar{g}\text{ scattered to the indices}",))


def _std_mean_forward(xp, a, dims, keep, k):
    return contiguous(_spread(a, "std", dims, keep, k)), contiguous(a.mean(axis=dims, keepdims=keep))


def _var_mean_forward(xp, a, dims, keep, k):
    return contiguous(_spread(a, "var", dims, keep, k)), contiguous(a.mean(axis=dims, keepdims=keep))


def _mean_part(xp, gm, a, dims, keep):
    return restore(xp, gm, dims, keep, a.ndim) / _count(a, dims)


STD_MEAN = Op("std_mean", "StdMeanBackward0", r"($c,\, $c1) = (\operatorname{std} $0,\, \operatorname{mean} $0)",
              quiet(_std_mean_forward),
              vjp=(quiet(lambda xp, g, c, a, dims, keep, k:
                         _std_vjp(xp, g[0], c[0], a, dims, keep, k) + _mean_part(xp, g[1], a, dims, keep)),), params=("dim", "keepdim", "correction"),
              saves=("self", "result"), n_outputs=2,
              out_symbol=("s", "m"), vjp_latex=(r"\bar{g}_{$c} \odot \frac{$0 - \bar{$0}}{(n - $correction)\, $c} + \frac{\bar{g}_{$c1}}{n}",))
VAR_MEAN = Op("var_mean", "VarMeanBackward0", r"($c,\, $c1) = (\operatorname{var} $0,\, \operatorname{mean} $0)",
              quiet(_var_mean_forward),
              vjp=(quiet(lambda xp, g, c, a, dims, keep, k:
                         _var_vjp(xp, g[0], c[0], a, dims, keep, k) + _mean_part(xp, g[1], a, dims, keep)),), params=("dim", "keepdim", "correction"),
              saves=("self",), n_outputs=2,
              out_symbol=("v", "m"), vjp_latex=(r"\bar{g}_{$c} \odot \frac{2 ($0 - \bar{$0})}{n - $correction} + \frac{\bar{g}_{$c1}}{n}",))


def _aminmax_vjp(xp, g, c, a, dims, keep):
    return _evenly(xp, g[0], c[0], a, dims, keep) + _evenly(xp, g[1], c[1], a, dims, keep)


AMINMAX = Op("aminmax", "AminmaxBackward0", r"($c,\, $c1) = (\min $0,\, \max $0)",
             lambda xp, a, dims, keep: (contiguous(a.min(axis=dims, keepdims=keep)),
                                        contiguous(a.max(axis=dims, keepdims=keep))),
             vjp=(_aminmax_vjp,), params=DIMS,
             saves=("self", "result"), n_outputs=2,
             out_symbol=("lo", "hi"), vjp_latex=(r"\bar{g}\text{ to the extremes (shared among ties)}",))
DIST = Op("dist", "DistBackward0", r"$c = \lVert $0 - $1 \rVert_p",
          quiet(lambda xp, a, b, p: _norm_forward(xp, a - b, p, None, False)),
          vjp=(quiet(lambda xp, g, c, a, b, p: _norm_vjp(xp, g, c, a - b, p, tuple(range(builtins.max(a.ndim, b.ndim))), False)),
               quiet(lambda xp, g, c, a, b, p:
                     -_norm_vjp(xp, g, c, a - b, p, tuple(range(builtins.max(a.ndim, b.ndim))), False))), args=("self", "other"), params=("p",),
          saves=("self", "other", "result"),
          vjp_latex=(r"\frac{\partial \lVert d \rVert_p}{\partial d} \text{ at } d = $0 - $1", r"-\frac{\partial \lVert d \rVert_p}{\partial d} \text{ at } d = $0 - $1",))


# -- sums that skip NaN, running extremes, k-th values, the trapezoid rule ------------------------
NANSUM = Op("nansum", "NansumBackward0", r"$c = \sum_{$0 \ne \mathrm{nan}} $0",
            lambda xp, a, dims, keep, dtype: xp.asarray(_accumulate(xp.nansum, a, dtype, axis=dims, keepdims=keep)),
            vjp=(lambda xp, g, c, a, dims, keep, dtype: xp.where(a != a, 0.0, restore(xp, g, dims, keep, a.ndim)),), params=DIMS, vjp_latex=(r"\bar{g} \odot [$0 \ne \mathrm{nan}]",),
            jvp="linear")


def _running(name: str, better):
    def forward_indices(a, d: int):
        """Running extreme along d and where it was reached (a later tie moves the index, NaN sticks)."""
        xp = backend.namespace_of(a)
        x = xp.moveaxis(a, d, -1)
        values, index = xp.empty_like(x), xp.zeros(x.shape, dtype=np.int64)
        if x.shape[-1]:
            best, at = x[..., 0].copy(), xp.zeros(x.shape[:-1], dtype=np.int64)
            for i in range(x.shape[-1]):
                v = x[..., i]
                take = (v != v) | ((best == best) & better(v, best))
                best, at = xp.where(take, v, best), xp.where(take, i, at)
                values[..., i], index[..., i] = best, at
        return xp.moveaxis(values, -1, d), xp.moveaxis(index, -1, d)
    return forward_indices


_CUMMAX, _CUMMIN = _running("cummax", lambda v, best: v >= best), _running("cummin", lambda v, best: v <= best)


def _scan_vjp(xp, g, c, a, dim, index):
    return xp.scatter_add_zeros(a.shape, dim, index, g) if a.ndim else g


CUMMAX = Op("cummax", "CummaxBackward0", r"{$c}_i = \max_{j \le i} {$0}_j",
            lambda xp, a, dim, index: xp.take_along_axis(a, index, dim) if a.ndim else a.copy(), vjp=(_scan_vjp,),
            params=("dim", "indices"), saves=("indices",), vjp_latex=(r"\bar{g}\text{ scatter-added to where each max was}",))
CUMMIN = Op("cummin", "CumminBackward0", r"{$c}_i = \min_{j \le i} {$0}_j",
            CUMMAX.forward, vjp=(_scan_vjp,), params=("dim", "indices"), saves=("indices",), vjp_latex=(r"\bar{g}\text{ scatter-added to where each min was}",))


KTHVALUE = Op("kthvalue", "KthvalueBackward0", r"$c = \text{the } k\text{-th smallest of } $0 \text{ along dim } $dim",
              _take, vjp=(_select_vjp,), params=("dim", "keepdim", "indices"), saves=("indices",),
              vjp_latex=(r"\bar{g}\text{ scattered to the indices}",))

MODE = Op("mode", "ModeBackward0", r"$c = \text{the most frequent of } $0 \text{ along dim } $dim",
          _take, vjp=(_select_vjp,), params=("dim", "keepdim", "indices"), saves=("indices",),
          vjp_latex=(r"\bar{g}\text{ scattered to the indices}",))
# nanmedian() of all entries: the median of the entries that are not NaN, ḡ shared among its ties
# (a NaN result, every entry NaN, shares it among the NaNs); nanmedian(dim) sends it to the index
NANMEDIAN = Op("nanmedian", "NanmedianBackward0", r"$c = \operatorname{median}_{$0 \ne \mathrm{nan}} $0",
               lambda xp, a, dims, keep, k: xp.sort(a.reshape(-1))[k] if a.size else xp.asarray(np.nan, a.dtype),
               vjp=(lambda xp, g, c, a, dims, keep, k: _evenly_nan(xp, g, c, a, dims, keep),),
               params=("dim", "keepdim", "k"), saves=("self", "result"),
               vjp_latex=(r"\bar{g}\text{ to the median (shared among ties)}",))
NANMEDIAN_DIM = Op("nanmedian", "NanmedianBackward1", r"$c = \operatorname{median}_{\text{dim } $dim,\, $0 \ne \mathrm{nan}} $0",
                   _take, vjp=(_select_vjp,), params=("dim", "keepdim", "indices"), saves=("indices",),
                   vjp_latex=(r"\bar{g}\text{ scattered to the indices}",))


# -- dims, as torch's reductions check them (the functions read these too) ----------
def normalize_dims(dim, ndim: int) -> tuple:
    """dim (int, tuple or None) -> sorted tuple of non-negative axes, with PyTorch's range error."""
    if type(dim) is int and -ndim <= dim < ndim:   # the commonest call (a transpose's dims), at once
        return (dim % ndim,)
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


def _dims_keep(input, dim, keepdim):
    # a 0-d tensor accepts dim 0 / -1, but there is no axis to reduce; dim=() reduces all
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        dim = None
    dims = normalize_dims(dim, input.ndim)   # checks dim even on a 0-d tensor (its range is [-1, 0])
    return (dims if input.ndim else ()), bool(keepdim)


def _contiguous_result(forward):
    """PyTorch's reductions, softmax and cumsum return contiguous tensors whatever the input's
    strides (NumPy's keep them), and contiguity decides how a later reshape is recorded."""
    def run(xp, *args):
        return contiguous(forward(xp, *args))
    return run


for _op in (SUM_DIM, MEAN_DIM, VAR, STD, PROD_DIM, AMAX, AMIN, NORM, LOGSUMEXP, SOFTMAX, LOG_SOFTMAX, CUMSUM):
    _op.forward = _contiguous_result(_op.forward)
