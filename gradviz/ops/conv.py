"""Convolution as data: im2col on a strided view, one batched matmul, and its two adjoints.

x (N, C, *S) is padded, seen through a strided window view (N, C, *out, *k) without a
copy, and the windows meet the kernel in one matmul per call (the copy the matmul makes
is the im2col matrix). The convolution is bilinear in (x, W), so its VJPs are two more
bilinear maps, and their VJPs are the convolution and each other: three records close
under differentiation, so double backward needs nothing else.

  y  = conv(x, W)          y[n,o,p] = Σ_{c,k} W[o,c,k] · x[n, c, s·p + d·k − pad]
  x̄ = conv_input_grad(ḡ, W): ḡ correlated with the flipped kernel (a transposed convolution),
       computed as col2im(ḡ Wᵀ): each kernel tap adds its slice of ḡ Wᵀ back where it read
  W̄ = conv_weight_grad(ḡ, x): ḡ correlated with x, computed as ḡᵀ im2col(x)

With stride 1 (the common case) all three run on the "wide" layout below instead, where
im2col and col2im move long contiguous runs rather than one short output row at a time.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from .._warn import quiet
from .core import given
from .op import Op


# -- strided views: im2col and its adjoint col2im -----------------------------------------------
def pad_spatial(xp, a, pads, value=0):
    """Pad the trailing len(pads) dims with value, pads = ((lo, hi), ...); no copy when all are 0."""
    if not any(lo or hi for lo, hi in pads):
        return a
    # a filled array and one slice assignment: a fraction of xp.pad's cost on small arrays
    lead = a.ndim - len(pads)
    sizes = a.shape[lead:]
    out = xp.full(a.shape[:lead] + tuple(n + lo + hi for n, (lo, hi) in zip(sizes, pads)), value, dtype=a.dtype)
    out[(Ellipsis,) + tuple(slice(lo, lo + n) for n, (lo, _) in zip(sizes, pads))] = a
    return out


def strided_view(xp, a, shape, strides):
    """a seen with this shape and these strides, no copy. For a C-ordered NumPy array, through
    ndarray's constructor: NumPy's as_strided builds the view from an __array_interface__ dict (2 µs a
    call alone, about 8 µs inside a LeNet-5 step, which makes some 30 of them; 0.3 µs)."""
    if type(a) is np.ndarray and a.flags.c_contiguous:
        return np.ndarray(shape, a.dtype, a, 0, strides)
    return xp.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


def windows(xp, a, k, stride, dilation):
    """(…, *S) -> (…, *out, *k): every kernel-sized window of the trailing dims, as a strided
    view of a (no copy): window p, tap t reads a[s·p + d·t]."""
    nd = len(k)
    lead = a.ndim - nd
    sizes, steps = a.shape[lead:], a.strides[lead:]
    out = tuple((n - d * (kk - 1) - 1) // s + 1 for n, kk, s, d in zip(sizes, k, stride, dilation))
    strides = a.strides[:lead] + tuple(t * s for t, s in zip(steps, stride)) + tuple(t * d for t, d in zip(steps,
                                                                                                           dilation))
    return strided_view(xp, a, a.shape[:lead] + out + tuple(k), strides)


def col2im(xp, cols, shape, k, stride, dilation):
    """The adjoint of `windows`: cols (…, *out, *k) added back into zeros(shape) where each
    window read. One strided add per kernel tap (never a loop over pixels)."""
    nd = len(k)
    out = cols.shape[cols.ndim - 2 * nd: cols.ndim - nd]
    acc = xp.zeros(shape, dtype=cols.dtype)
    lead = (slice(None),) * (len(shape) - nd)
    for tap in itertools.product(*(range(kk) for kk in k)):
        dst = tuple(slice(t * d, t * d + s * (o - 1) + 1, s) for t, d, s, o in zip(tap, dilation, stride, out))
        acc[lead + dst] += cols[(Ellipsis,) + tap]
    return acc


def _crop(a, pads):
    nd = len(pads)
    key = tuple(slice(lo, a.shape[a.ndim - nd + i] - hi) for i, (lo, hi) in enumerate(pads))
    return a[(Ellipsis,) + key]


# -- stride 1: the wide layout --------------------------------------------------------------------
# Flatten each padded plane (row-major strides F). With stride 1, output position p reads the flat
# input at Σ pᵢ Fᵢ + Σ tᵢ dᵢ Fᵢ for kernel tap t: every tap reads one contiguous run of the plane,
# of length L = 1 + Σ (outᵢ − 1) Fᵢ, if the output is computed on that flat ("wide") grid. The
# grid also holds the positions between output rows (the last d·(k − 1) columns of each padded
# row): computed and thrown away in the forward, zero in ḡ. That waste is small next to what it
# saves: im2col becomes a copy of long runs, col2im one slice-add of a long run per tap.
def _wide_geometry(padded, k, dilation):
    """The padded plane's row-major strides F, the output's spatial size and the wide length L."""
    flat = [1] * len(padded)
    for i in reversed(range(len(padded) - 1)):
        flat[i] = flat[i + 1] * padded[i + 1]
    out = tuple(n - d * (kk - 1) for n, kk, d in zip(padded, k, dilation))
    return flat, out, 1 + sum((o - 1) * f for o, f in zip(out, flat))


def _tap_offsets(k, dilation, flat):
    """Where each kernel tap (row-major order) starts reading in the flat padded plane."""
    return [sum(t * d * f for t, d, f in zip(tap, dilation, flat))
            for tap in itertools.product(*(range(kk) for kk in k))]


# The im2col matrix (25 times the input for a 5 × 5 kernel) is made and read a few samples at a time,
# about CHUNK_BYTES of it at once (half of a core's L2 cache on current x86), so that the product reads
# it from the cache it was just written to: LeNet-5's convolutions and weight gradients 3.94 -> 3.70
# ms together, each sample's product the same BLAS call. Made whole, the matrices (5.7 and 5.2 MB) also
# had glibc trim the heap and fault its pages in again at every step (about 900 faults, 2 ms, in a step of
# LeNet-5 trained by gradviz alone; none now).
CHUNK_BYTES = 1 << 20


def _wide_batches(x, k, padding, dilation):
    """The wide geometry (F, out, L) of x's padded planes, and the ranges of samples whose im2col
    matrices take about CHUNK_BYTES together (one sample at least)."""
    padded = tuple(s + 2 * p for s, p in zip(x.shape[2:], padding))
    geometry = _wide_geometry(padded, k, dilation)
    per_sample = x.shape[1] * math.prod(k) * geometry[2] * x.dtype.itemsize
    step = max(1, CHUNK_BYTES // max(per_sample, 1))
    return geometry, [(lo, min(lo + step, x.shape[0])) for lo in range(0, x.shape[0], step)]


def _wide_cols(xp, x, k, padding, dilation, groups, geometry):
    """x (N, C, *S) -> the wide im2col matrix (N, G, Cg·K, L), given the wide geometry of x's padded planes."""
    n, c = x.shape[:2]
    flat, _, length = geometry
    a = pad_spatial(xp, x, [(p, p) for p in padding])
    a = a.reshape(n, c, math.prod(a.shape[2:]))   # sizes spelled out: -1 is ambiguous for an empty batch
    step = a.strides[-1]
    runs = strided_view(xp, a, (n, c) + tuple(k) + (length,), a.strides[:2] + tuple(
        d * f * step for d, f in zip(dilation, flat)) + (step,))   # (N, C, *k, L), a view
    return xp.ascontiguousarray(runs).reshape(n, groups, c // groups * math.prod(k), length)


def _grid(xp, wide, out, flat):
    """(…, L) on the wide grid -> (…, *out): the view of the real output positions."""
    step = wide.strides[-1]
    return strided_view(xp, wide, wide.shape[:-1] + tuple(out), wide.strides[:-1] + tuple(f * step for f in flat))


def _widen(xp, g, geometry, groups, transposed=False):
    """ḡ (N, O, *out) -> (N, G, Og, L): ḡ on the wide grid, zeros between the output rows.
    transposed: the same array laid out (N, G, L, Og) in memory (a view with its last two axes swapped)."""
    flat, out, length = geometry
    n, o = g.shape[:2]
    shape = (n, groups, o // groups, length)
    if length == math.prod(out) and not transposed:   # no gaps (1-d, or a kernel as wide as the padded input)
        return g.reshape(shape)
    wide = xp.zeros(shape[:2] + shape[:1:-1] if transposed else shape, dtype=g.dtype)
    if transposed:
        wide = wide.swapaxes(2, 3)
    _grid(xp, wide, out, flat)[...] = g.reshape(shape[:3] + tuple(out))
    return wide


def _conv_wide(xp, x, w, b, padding, dilation, groups):
    n, o, k = x.shape[0], w.shape[0], w.shape[2:]
    geometry, batches = _wide_batches(x, k, padding, dilation)
    flat, out, length = geometry
    wr = w.reshape(groups, o // groups, -1)
    y = xp.empty((n, groups, o // groups, length), dtype=xp.result_type(w, x))
    for lo, hi in batches:   # (N, G, Og, L): one BLAS call per sample and group
        xp.matmul(wr, _wide_cols(xp, x[lo:hi], k, padding, dilation, groups, geometry), out=y[lo:hi])
    y = y.reshape(n, o, length)
    if given(b):   # the bias added on the wide product, one contiguous pass, before the crop copies it out
        y = xp.add(y, b.reshape(o, 1), out=y) if b.dtype == y.dtype else y + b.reshape(o, 1)
    return xp.ascontiguousarray(_grid(xp, y, out, flat))


def _input_grad_wide(xp, g, w, xshape, padding, dilation, groups):
    n, c = xshape[:2]
    o, k = w.shape[0], w.shape[2:]
    padded = tuple(s + 2 * p for s, p in zip(xshape[2:], padding))
    geometry = flat, _, length = _wide_geometry(padded, k, dilation)
    gw = _widen(xp, g, geometry, groups)
    wt = w.reshape(groups, o // groups, -1).swapaxes(1, 2)                     # (G, Cg·K, Og)
    cols = xp.matmul(wt, gw).reshape(n, c, math.prod(k), length)               # (N, C, K, L)
    # col2im: each tap adds its runs back, shifted by its offset. NumPy adds into a strided view at a
    # quarter of its contiguous speed (32 against 8 µs for LeNet's 75,000 floats) but copies into one
    # at full speed: each tap's runs are copied into zero-padded planes (N, C, P) and added to the whole
    # batch at once, flat; what the shift carries past a plane's end is that padding, +0, which changes
    # no sum (the accumulator, from +0, is never −0)
    acc = xp.zeros(n * c * math.prod(padded), dtype=cols.dtype)
    runs = xp.zeros((n, c, math.prod(padded)), dtype=cols.dtype)
    whole = runs.reshape(-1)
    for t, start in enumerate(_tap_offsets(k, dilation, flat)):
        runs[:, :, :length] = cols[:, :, t]
        acc[start:] += whole[:acc.size - start]
    return _crop(acc.reshape((n, c) + padded), [(p, p) for p in padding])


# The weight gradient's product per sample is (Cg·K, L) x (L, Og), ḡ's wide rows being read transposed.
# OpenBLAS multiplies by a transposed operand well below its speed when Cg·K is large (LeNet-5's second
# convolution: Cg·K = 150, Og = 16, L = 136: 680 against 380 µs for the batch), and the copy that lays ḡ
# out transposed costs little there; with few rows (its first: Cg·K = 25, Og = 6, L = 892) the copy, of
# short rows, costs more than it saves (520 against 760 µs in all). The layout must not change a result:
# OpenBLAS's two products agree bit for bit when Cg·K ≥ 128 and Og is a multiple of 16 (its AVX-512
# kernels' width; checked over L from 1 to 1500 and Og up to 128, float32 and float64), and differ in the
# last bits elsewhere (Og = 6, 8 or 17, or Cg·K = 64), so only those products are laid out transposed.
def _transposes(rows: int, og: int) -> bool:
    return rows >= 128 and og % 16 == 0


def _weight_grad_wide(xp, g, x, wshape, padding, dilation, groups):
    n, o, k = g.shape[0], g.shape[1], wshape[2:]
    geometry, batches = _wide_batches(x, k, padding, dilation)
    rows = x.shape[1] // groups * math.prod(k)
    gw = _widen(xp, g, geometry, groups, transposed=_transposes(rows, o // groups)).swapaxes(2, 3)   # (N, G, L, Og)
    # one (Cg·K, L) x (L, Og) product per sample, summed: faster in BLAS than one product over N·L
    prods = xp.empty((n, groups, rows, o // groups), dtype=xp.result_type(x, g))
    for lo, hi in batches:
        xp.matmul(_wide_cols(xp, x[lo:hi], k, padding, dilation, groups, geometry), gw[lo:hi], out=prods[lo:hi])
    gwt = prods.sum(0)                                                         # (G, Cg·K, Og)
    return xp.ascontiguousarray(gwt.swapaxes(1, 2)).reshape(wshape)


# -- the convolution and its two adjoints on arrays ---------------------------------------------
# The im2col matrix is laid out transposed, (G, Cg·K, N·P): its copy out of the window view then
# runs along output rows (long and contiguous) rather than along the few taps of one window.
def _im2col(xp, x, k, stride, padding, dilation, groups):
    """x -> (G, Cg·K, N·P) and the output's spatial size."""
    n, c = x.shape[:2]
    nd = len(k)
    win = windows(xp, pad_spatial(xp, x, [(p, p) for p in padding]), k, stride, dilation)   # (N, C, *out, *k)
    out = win.shape[2:2 + nd]
    win = win.reshape((n, groups, c // groups) + win.shape[2:])
    perm = (1, 2) + tuple(range(3 + nd, 3 + 2 * nd)) + (0,) + tuple(range(3, 3 + nd))   # (G, Cg, *k, N, *out)
    return win.transpose(perm).reshape(groups, (c // groups) * math.prod(k), n * math.prod(out)), out


def _grad_rows(g, groups):
    """ḡ (N, O, *out) -> (G, Og, N·P), the layout of the im2col columns."""
    n, o = g.shape[:2]
    gr = g.reshape((n, groups, o // groups, -1)).transpose(1, 2, 0, 3)
    return gr.reshape(groups, o // groups, -1)


def conv_arrays(xp, x, w, b, stride, padding, dilation, groups):
    if all(s == 1 for s in stride):
        return _conv_wide(xp, x, w, b, padding, dilation, groups)
    n = x.shape[0]
    o, k = w.shape[0], w.shape[2:]
    cols, out = _im2col(xp, x, k, stride, padding, dilation, groups)
    y = xp.matmul(w.reshape(groups, o // groups, -1), cols)    # (G, Og, N·P): one BLAS call
    y = y.reshape((o, n) + tuple(out)).swapaxes(0, 1)
    y = xp.ascontiguousarray(y)
    if given(b):
        y += b.reshape((o,) + (1,) * len(k))
    return y


def _wide_is_exact(xp, stride, a) -> bool:
    """Whether the wide layout gives a gradient exactly: stride 1, and `a` (what ḡ's zeros between the
    output rows meet there) finite, where 0 · ±inf or 0 · NaN would put a NaN no real position has. One
    sum tells (a finite sum has no inf or NaN in it; one that overflows only takes the exact path)."""
    return all(s == 1 for s in stride) and bool(xp.isfinite(xp.sum(a)))


def conv_input_grad_arrays(xp, g, w, xshape, stride, padding, dilation, groups):
    if _wide_is_exact(xp, stride, w):
        return _input_grad_wide(xp, g, w, xshape, padding, dilation, groups)
    n, c = xshape[:2]
    o, k = w.shape[0], w.shape[2:]
    nd = len(k)
    wr = w.reshape(groups, o // groups, -1)
    gcols = xp.matmul(wr.transpose(0, 2, 1), _grad_rows(g, groups))   # (G, Cg·K, N·P)
    gcols = gcols.reshape((c,) + tuple(k) + (n,) + tuple(g.shape[2:]))   # (C, *k, N, *out)
    perm = (nd + 1, 0) + tuple(range(nd + 2, 2 * nd + 2)) + tuple(range(1, nd + 1))
    gcols = gcols.transpose(perm)                                         # (N, C, *out, *k), a view
    padded = tuple(s + 2 * p for s, p in zip(xshape[2:], padding))
    return _crop(col2im(xp, gcols, (n, c) + padded, k, stride, dilation), [(p, p) for p in padding])


def conv_weight_grad_arrays(xp, g, x, wshape, stride, padding, dilation, groups):
    if _wide_is_exact(xp, stride, x):
        return _weight_grad_wide(xp, g, x, wshape, padding, dilation, groups)
    cols, _ = _im2col(xp, x, wshape[2:], stride, padding, dilation, groups)
    gw = xp.matmul(_grad_rows(g, groups), cols.transpose(0, 2, 1))   # (G, Og, Cg·K)
    return gw.reshape(wshape)


# -- the three records ----------------------------------------------------------------------------
PARAMS = ("stride", "padding", "dilation", "groups")


# The index formulas: p runs over an output's positions and k over the kernel's, both tuples (one per
# spatial dim), read with the stride s, dilation d and padding q of the call; a position outside x
# or ḡ reads 0 (the padding). With groups ≠ 1 a channel is written (γ, c): channel c of group γ, so
# an output channel reads only the input channels of its own group.
def _grouped(channel: str) -> str:
    return r"$?groups{(\gamma,\, }" + channel + r"$?groups{)}"


_O, _I = _grouped("o"), _grouped("i")
_GROUPS = r"$?groups{,\ (\gamma,\, c) = \text{channel } c \text{ of group } \gamma}"
# the constants a convolution was called with, after its formula (s, d, q in the index formula)
_CONSTANTS = r",\quad s = $stride,\ q = $padding,\ d = $dilation,\ \text{groups} = $groups" + _GROUPS


def _conv_vjp_input(xp, g, y, x, w, b, *p):
    if xp.arrays:
        return conv_input_grad_arrays(xp, g, w, x.shape, *p)
    return xp.apply(CONV_INPUT_GRAD, (g, w), (tuple(x.shape),) + p)


def _conv_vjp_weight(xp, g, y, x, w, b, *p):
    if xp.arrays:
        return conv_weight_grad_arrays(xp, g, x, w.shape, *p)
    return xp.apply(CONV_WEIGHT_GRAD, (g, x), (tuple(w.shape),) + p)


def _conv_vjp_bias(xp, g, y, x, w, b, *p):
    return xp.sum(g, axis=(0,) + tuple(range(2, g.ndim)))


CONVOLUTION = Op(
    "convolution", "ConvolutionBackward0",
    r"$c = $0 \star $1 + $2:\; $c[n, " + _O + r", p] = $2[" + _O + r"] + \sum_{i,\, k} $1[" + _O
    + r", i, k]\, $0[n,\, " + _I + r",\, s p + d k - q]" + _CONSTANTS,
    quiet(conv_arrays), vjp=(_conv_vjp_input, _conv_vjp_weight, _conv_vjp_bias),   # (an inf meets a 0, silently)
    args=("input", "weight", "bias"), params=PARAMS, saves=("input", "weight"), symbols=("x", "W", "b"),
    vjp_latex=(r"\operatorname{conv}^{\top}(\bar{g},\, $1) = \bar{g} \star \operatorname{flip}($1),\ "
               r"\text{a transposed convolution (} \bar{g} \text{ spread out by the stride)}:\; "
               r"\sum_{o,\, k,\, p \,:\, s p + d k - q = j} $1[" + _O + r", i, k]\, \bar{g}[n, " + _O + r", p] "
               r"\text{ at } [n, " + _I + r", j]",
               r"\textstyle\sum_{n} $0_{n} \star \bar{g}_{n}:\; \sum_{n,\, p} \bar{g}[n, " + _O + r", p]\, "
               r"$0[n,\, " + _I + r",\, s p + d k - q] \text{ at } [" + _O + r", i, k]",
               r"\textstyle\sum_{n,\, p} \bar{g}[n, o, p] \text{ at } [o]"), out_symbol="y")


def _gx_vjp_grad(xp, h, c, g, w, xshape, *p):
    # x̄ = A(ḡ, W) is linear in ḡ; its adjoint is the convolution itself
    if xp.arrays:
        return conv_arrays(xp, h, w, None, *p)
    return xp.apply(CONVOLUTION, (h, w, xp.no_input(h)), p)


def _gx_vjp_weight(xp, h, c, g, w, xshape, *p):
    if xp.arrays:
        return conv_weight_grad_arrays(xp, g, h, w.shape, *p)
    return xp.apply(CONV_WEIGHT_GRAD, (g, h), (tuple(w.shape),) + p)


def _gw_vjp_grad(xp, h, c, g, x, wshape, *p):
    if xp.arrays:
        return conv_arrays(xp, x, h, None, *p)
    return xp.apply(CONVOLUTION, (x, h, xp.no_input(x)), p)


def _gw_vjp_input(xp, h, c, g, x, wshape, *p):
    if xp.arrays:
        return conv_input_grad_arrays(xp, g, h, x.shape, *p)
    return xp.apply(CONV_INPUT_GRAD, (g, h), (tuple(x.shape),) + p)


# the convolution's two adjoints as nodes of their own (a create_graph backward records them): the
# same index forms as its VJPs, with g the gradient they were given and ḡ what they receive
CONV_INPUT_GRAD = Op(
    "convolution_backward_input", "ConvolutionBackwardBackward0",
    r"$c = $0 \star \operatorname{flip}($1) = \operatorname{conv}^{\top}($0,\, $1):\; $c[n, " + _I + r", j] = "
    r"\sum_{o,\, k,\, p \,:\, s p + d k - q = j} $1[" + _O + r", i, k]\, $0[n, " + _O + r", p]" + _CONSTANTS,
    lambda xp, g, w, xshape, *p: conv_input_grad_arrays(xp, g, w, xshape, *p),
    vjp=(_gx_vjp_grad, _gx_vjp_weight),
    args=("grad_output", "weight"), params=("input_size",) + PARAMS, saves=("grad_output", "weight"),
    symbols=("g", "W"),
    vjp_latex=(r"\bar{g} \star $1:\; \sum_{i,\, k} $1[" + _O + r", i, k]\, \bar{g}[n,\, " + _I
               + r",\, s p + d k - q] \text{ at } [n, " + _O + r", p]",
               r"\textstyle\sum_{n} \bar{g}_{n} \star $0_{n}:\; \sum_{n,\, p} $0[n, " + _O + r", p]\, "
               r"\bar{g}[n,\, " + _I + r",\, s p + d k - q] \text{ at } [" + _O + r", i, k]"), out_symbol="x̄")
CONV_WEIGHT_GRAD = Op(
    "convolution_backward_weight", "ConvolutionBackwardBackward0",
    r"$c = \textstyle\sum_{n} $1_{n} \star $0_{n}:\; $c[" + _O + r", i, k] = \sum_{n,\, p} $0[n, " + _O
    + r", p]\, $1[n,\, " + _I + r",\, s p + d k - q]" + _CONSTANTS,
    lambda xp, g, x, wshape, *p: conv_weight_grad_arrays(xp, g, x, wshape, *p),
    vjp=(_gw_vjp_grad, _gw_vjp_input),
    args=("grad_output", "input"), params=("weight_size",) + PARAMS, saves=("grad_output", "input"),
    symbols=("g", "x"),
    vjp_latex=(r"$1 \star \bar{g}:\; \sum_{i,\, k} \bar{g}[" + _O + r", i, k]\, $1[n,\, " + _I
               + r",\, s p + d k - q] \text{ at } [n, " + _O + r", p]",
               r"$0 \star \operatorname{flip}(\bar{g}):\; \sum_{o,\, k,\, p \,:\, s p + d k - q = j} \bar{g}["
               + _O + r", i, k]\, $0[n, " + _O + r", p] \text{ at } [n, " + _I + r", j]"), out_symbol="W̄")


# -- the transposed convolution ---------------------------------------------------------------------
# y = conv_transpose(x, W) is the input gradient of a convolution whose output is x: each input
# pixel scatters W, spaced by the stride, into the output, which is then cropped by the padding
# (and grown by output_padding at its far end, which receives nothing). Its adjoints are the
# convolution (for x) and the convolution's weight gradient with the roles of x and ḡ exchanged
# (for W), so the records above also give it its double backward.
TRANSPOSED_PARAMS = ("stride", "padding", "output_padding", "dilation", "groups")


def _pad_crop(xp, a, pads):
    """The trailing dims padded with zeros by each (lo, hi) > 0 and cropped by each < 0."""
    a = pad_spatial(xp, a, [(max(lo, 0), max(hi, 0)) for lo, hi in pads])
    return _crop(a, [(max(-lo, 0), max(-hi, 0)) for lo, hi in pads])


def conv_transpose_arrays(xp, x, w, b, stride, padding, output_padding, dilation, groups):
    k = w.shape[2:]
    full = tuple(s * (n - 1) + d * (kk - 1) + 1 for n, kk, s, d in zip(x.shape[2:], k, stride, dilation))
    y = conv_input_grad_arrays(xp, x, w, (x.shape[0], w.shape[1] * groups) + full, stride, (0,) * len(k), dilation,
                               groups)
    y = xp.ascontiguousarray(_pad_crop(xp, y, [(-p, op - p) for p, op in zip(padding, output_padding)]))
    if given(b):
        y += b.reshape((-1,) + (1,) * len(k))
    return y


def _extend(xp, a, extra):
    """a with extra[i] zeros appended to its i-th trailing dim (on arrays and Tensors alike)."""
    lead = a.ndim - len(extra)
    for i, e in enumerate(extra):
        if e:
            key = (slice(None),) * (lead + i) + (slice(0, e),)
            a = xp.concatenate([a, xp.zeros_like(a[key])], axis=lead + i)
    return a


def _surplus(x, stride, output_padding):
    """How many more windows the convolution of ḡ has than x has pixels, per dim: none unless
    output_padding ≥ stride (allowed when the dilation is larger)."""
    return [op // s for op, s in zip(output_padding, stride)]


def _tconv_vjp_input(xp, g, y, x, w, b, stride, padding, output_padding, dilation, groups):
    p = (stride, padding, dilation, groups)
    gx = conv_arrays(xp, g, w, None, *p) if xp.arrays else xp.apply(CONVOLUTION, (g, w, xp.no_input(g)), p)
    if any(_surplus(x, stride, output_padding)):
        gx = gx[(Ellipsis,) + tuple(slice(0, n) for n in x.shape[2:])]
    return gx


def _tconv_vjp_weight(xp, g, y, x, w, b, stride, padding, output_padding, dilation, groups):
    x = _extend(xp, x, _surplus(x, stride, output_padding))   # pixels that scatter nothing: no contribution
    p = (stride, padding, dilation, groups)
    if xp.arrays:
        return conv_weight_grad_arrays(xp, x, g, w.shape, *p)
    return xp.apply(CONV_WEIGHT_GRAD, (x, g), (tuple(w.shape),) + p)


# y[j] gathers every x[p] that the kernel's tap k scatters to j = s p + d k − q; output_padding only
# adds positions at the far end of y, which no tap reaches: they hold b
CONV_TRANSPOSE = Op(
    "conv_transpose", "ConvolutionBackward0",
    r"$c = \operatorname{conv}^{\top}($0,\, $1) + $2:\; $c[n, " + _O + r", j] = $2[" + _O
    + r"] + \sum_{i,\, k,\, p \,:\, s p + d k - q = j} $1[" + _I + r", o, k]\, $0[n, " + _I + r", p]"
    r",\quad s = $stride,\ q = $padding,\ d = $dilation,\ \text{output padding} = $output_padding,\ "
    r"\text{groups} = $groups" + _GROUPS,
    conv_transpose_arrays, vjp=(_tconv_vjp_input, _tconv_vjp_weight, _conv_vjp_bias),
    args=("input", "weight", "bias"), params=TRANSPOSED_PARAMS, saves=("input", "weight"), symbols=("x", "W", "b"),
    vjp_latex=(r"\operatorname{conv}(\bar{g},\, $1) = \bar{g} \star $1,\ \text{a strided convolution of } \bar{g}:\; "
               r"\sum_{o,\, k} $1[" + _I + r", o, k]\, \bar{g}[n,\, " + _O + r",\, s p + d k - q] \text{ at } [n, "
               + _I + r", p]",
               r"\textstyle\sum_{n} \bar{g}_{n} \star $0_{n}:\; \sum_{n,\, p} $0[n, " + _I + r", p]\, "
               r"\bar{g}[n,\, " + _O + r",\, s p + d k - q] \text{ at } [" + _I + r", o, k]",
               r"\textstyle\sum_{n,\, p} \bar{g}[n, o, p] \text{ at } [o]"), out_symbol="y")
