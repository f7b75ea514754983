"""Pooling, resampling and the window views: max/avg/adaptive pools, upsampling, reflect and
replicate padding, unfold/fold and pixel shuffle.

All but max pooling are linear maps L of the input, so each is a pair of records: the map
and its adjoint Lᵀ, each the other's VJP (double backward needs nothing more). Most are
separable, one small matrix per spatial dim (y = A_h x A_wᵀ: BLAS calls, no loops over
pixels); unfold/fold are the window view (im2col) and its adjoint (col2im). Max pooling
picks indices once, then is a gather whose adjoint scatters ḡ back to the winners.
"""
from __future__ import annotations

import math

from .conv import col2im, pad_spatial, windows
from .op import Op


# -- a linear map and its adjoint, as two records ------------------------------------------------
def linear_pair(name, torch_name, forward, adjoint, params, adj_name, latex=("", ""), adj_latex=("", ""),
                out_symbol="y"):
    """forward(xp, a, *params) is linear in a, adjoint(xp, g, in_shape, *params) is its transpose.
    Returns (OP, ADJOINT): OP's VJP is ADJOINT, and ADJOINT's VJP is OP. latex, adj_latex:
    (formula, VJP) of each record in LaTeX."""
    def vjp(xp, g, c, a, *p):
        if xp.arrays:
            return adjoint(xp, g, a.shape, *p)
        return xp.apply(adj, (g,), (tuple(a.shape),) + p)

    def adj_vjp(xp, h, c, g, shape, *p):
        if xp.arrays:
            return forward(xp, h, *p)
        return xp.apply(op, (h,), p)

    op = Op(name, torch_name, latex[0], forward, vjp=(vjp,), params=params, saves=(),
            vjp_latex=latex[1:] if latex[1] else (), out_symbol=out_symbol)
    adj = Op(name + "_backward", adj_name, adj_latex[0], lambda xp, g, shape, *p: adjoint(xp, g, shape, *p),
             vjp=(adj_vjp,), args=("grad_output",), params=("input_size",) + params, saves=(),
             vjp_latex=adj_latex[1:] if adj_latex[1] else ())
    return op, adj


# -- separable maps: one matrix per trailing dim ---------------------------------------------------
def _apply_mats(xp, a, mats, transpose=False):
    """a with mats[i] applied along trailing dim −len(mats)+i: a ×ᵢ Aᵢ (or Aᵢᵀ)."""
    nd = len(mats)
    for i, m in enumerate(mats):
        m = xp.asarray(m, dtype=a.dtype)
        ax = a.ndim - nd + i
        if transpose:
            m = m.T
        a = xp.swapaxes(xp.matmul(xp.swapaxes(a, ax, -1), m.T), ax, -1)
    return xp.ascontiguousarray(a)


def _sep_forward(xp, a, mats, divisor, *shown):
    # shown: the learner's arguments (kernel size, stride, ...), kept for the formulas only
    y = _apply_mats(xp, a, mats)
    return y / divisor if divisor else y


def _sep_adjoint(xp, g, shape, mats, divisor, *shown):
    x = _apply_mats(xp, g, mats, transpose=True)
    return x / divisor if divisor else x


def _separable(name, torch_name, adj_name, shown=(), latex=("", ""), adj_latex=("", "")):
    return linear_pair(name, torch_name, _sep_forward, _sep_adjoint, ("matrices", "divisor") + shown, adj_name,
                       latex, adj_latex)


# -- the formulas of the pools: window i of the input is win_i (not w_i, which a learner may use), holding N_i inputs
_AVG = r"$c[i] = \frac{1}{N_i} \sum_{j \in \mathrm{win}_i} $0[j]"
_AVG_BACK = r"\textstyle\sum_{i \,:\, j \in \mathrm{win}_i} \frac{\bar{g}[i]}{N_i} \text{ at } [j]"
_SPREAD = r"$c[j] = \sum_{i \,:\, j \in \mathrm{win}_i} \frac{$0[i]}{N_i}"     # the adjoint: each value spread over its window
_AVG_OF_G = r"\frac{1}{N_i} \sum_{j \in \mathrm{win}_i} \bar{g}[j] \text{ at } [i]"
_WINDOWS = r",\quad \mathrm{win}_i\text{: kernel } $kernel_size,\ \text{stride } $stride,\ \text{padding } $padding"
_ADAPTIVE = (r",\quad \text{output size } $output_size,\ \mathrm{win}_i \text{ along an axis of } n \text{ to } m\text{: }"
             r"\left\lfloor \frac{i\, n}{m} \right\rfloor \le j < \left\lceil \frac{(i + 1)\, n}{m} \right\rceil")
_ARGMAX = (r"\textstyle\sum_{i \,:\, j^{*}_i = j} \bar{g}[i] \text{ at } [j],\; "
           r"j^{*}_i = \operatorname{argmax}_{j \in \mathrm{win}_i} $0[j]")


def _pool_out(n, k, s, p, d, ceil_mode):
    span = n + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:   # the last window must start inside the input or left padding
        out -= 1
    return out


AVG_POOL2D, AVG_POOL2D_BACKWARD = _separable(
    "avg_pool2d", "AvgPool2DBackward0",
    "AvgPool2DBackwardBackward0", ("kernel_size", "stride", "padding"),
    (_AVG + _WINDOWS, _AVG_BACK),
    (_SPREAD + _WINDOWS, _AVG_OF_G))
AVG_POOL3D, AVG_POOL3D_BACKWARD = _separable(
    "avg_pool3d", "AvgPool3DBackward0",
    "AvgPool3DBackwardBackward0", ("kernel_size", "stride", "padding"),
    (_AVG + _WINDOWS, _AVG_BACK),
    (_SPREAD + _WINDOWS, _AVG_OF_G))
ADAPTIVE_AVG_POOL2D, ADAPTIVE_AVG_POOL2D_BACKWARD = _separable(
    "adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", "AdaptiveAvgPool2DBackwardBackward0", ("output_size",),
    (_AVG + _ADAPTIVE, _AVG_BACK),
    (_SPREAD + _ADAPTIVE, _AVG_OF_G))
ADAPTIVE_AVG_POOL3D, ADAPTIVE_AVG_POOL3D_BACKWARD = _separable(
    "adaptive_avg_pool3d", "AdaptiveAvgPool3DBackward0", "AdaptiveAvgPool3DBackwardBackward0", ("output_size",),
    (_AVG + _ADAPTIVE, _AVG_BACK),
    (_SPREAD + _ADAPTIVE, _AVG_OF_G))


def _moved(src, consts):
    """LaTeX of a map c[i] = a[src(i)] and of its adjoint (each value added back where it came from)."""
    sent = r"\textstyle\sum_{i \,:\, " + src + " = j}"
    return ((f"$c[i] = $0[{src}]" + consts, sent + r" \bar{g}[i] \text{ at } [j]"),
            (f"$c[j] = {sent} $0[i]" + consts, rf"\bar{{g}}[{src}] \text{{ at }} [i]"))


# t_i: where output i reads the input (scale σ per axis); linear modes mix its two neighbours
_LERP = (r"$c[i] = (1 - \lambda_i)\, $0[\lfloor t_i \rfloor] + \lambda_i\, $0[\lfloor t_i \rfloor + 1],\;"
         r" \lambda_i = t_i - \lfloor t_i \rfloor",
         r"\bar{g}[i] \text{ split: } (1 - \lambda_i) \text{ to } [\lfloor t_i \rfloor],\ \lambda_i"
         r" \text{ to } [\lfloor t_i \rfloor + 1]")
_LERP_BACK = (r"$c[j] = \textstyle\sum_i \left((1 - \lambda_i) [\lfloor t_i \rfloor = j] + \lambda_i"
              r" [\lfloor t_i \rfloor + 1 = j]\right) $0[i]", r"(1 - \lambda_i)\, \bar{g}[\lfloor t_i \rfloor] + "
              r"\lambda_i\, \bar{g}[\lfloor t_i \rfloor + 1] \text{ at } [i]")
_SIZES = r",\quad \text{output size } $output_size,\ \sigma = $scale"
_AXES = r"\text{ along each axis}"
_PADS = r",\quad \text{pad } $pad \text{ (} l \text{: the pad before, } n \text{: the size of an axis)}"
UPSAMPLE_NEAREST = {nd: _separable(f"upsample_nearest{nd}d", f"UpsampleNearest{nd}DBackward0",
                                   f"UpsampleNearest{nd}DBackwardBackward0", ("output_size", "scale"),
                                   *_moved(r"\lfloor i \sigma \rfloor", _SIZES)) for nd in (1, 2, 3)}
# nearest-exact reads the input pixel whose centre is nearest: ⌊(i + ½)σ⌋ (torch's fix of nearest)
UPSAMPLE_NEAREST_EXACT = {nd: _separable(f"_upsample_nearest_exact{nd}d", f"UpsampleNearestExact{nd}DBackward0",
                                         f"UpsampleNearestExact{nd}DBackwardBackward0", ("output_size", "scale"),
                                         *_moved(r"\lfloor (i + \tfrac{1}{2}) \sigma \rfloor", _SIZES))
                          for nd in (1, 2, 3)}
UPSAMPLE_LINEAR = {1: _separable("upsample_linear1d", "UpsampleLinear1DBackward0",
                                 "UpsampleLinear1DBackwardBackward0",
                                 ("output_size", "scale"), (_LERP[0] + _SIZES, _LERP[1]),
                                 (_LERP_BACK[0] + _SIZES, _LERP_BACK[1])),
                   2: _separable("upsample_bilinear2d", "UpsampleBilinear2DBackward0", "UpsampleBilinear2DBackwardBackward0", ("output_size", "scale"),
                                 (_LERP[0] + _AXES + _SIZES, _LERP[1] + _AXES),
                                 (_LERP_BACK[0] + _AXES + _SIZES, _LERP_BACK[1] + _AXES)),
                   3: _separable("upsample_trilinear3d", "UpsampleTrilinear3DBackward0", "UpsampleTrilinear3DBackwardBackward0",
                                 ("output_size", "scale"), (_LERP[0] + _AXES + _SIZES, _LERP[1] + _AXES),
                                 (_LERP_BACK[0] + _AXES + _SIZES, _LERP_BACK[1] + _AXES))}
# bicubic: Keys' cubic convolution (A = −¾, as torch) of the 4 neighbours along each axis, clamped at the edges
_CUBIC = (r"$c[i] = \textstyle\sum_{k=-1}^{2} w_k(\lambda_i)\, $0[\lfloor t_i \rfloor + k]"
          r"\text{ along each axis},\; w: \text{the cubic convolution kernel},\ A = -\tfrac{3}{4}",
          r"\bar{g}[i] \text{ split among } [\lfloor t_i \rfloor - 1 \dots \lfloor t_i \rfloor + 2] "
          r"\text{ by } w_k(\lambda_i)")
UPSAMPLE_BICUBIC = {2: _separable("upsample_bicubic2d", "UpsampleBicubic2DBackward0",
                                  "UpsampleBicubic2DBackwardBackward0", ("output_size", "scale"),
                                  (_CUBIC[0] + _SIZES, _CUBIC[1]),
                                  (r"$c[j] = \textstyle\sum_i w(i, j)\, $0[i]" + _SIZES,
                                   r"\textstyle\sum_k w_k(\lambda_i)\, \bar{g}[\lfloor t_i \rfloor + k]"))}
REFLECTION_PAD = {nd: _separable(f"reflection_pad{nd}d", f"ReflectionPad{nd}DBackward0",
                                 f"ReflectionPad{nd}DBackwardBackward0", ("pad",),
                                 *_moved(r"\operatorname{mirror}_n(i - l)", _PADS)) for nd in (1, 2, 3)}
REPLICATION_PAD = {nd: _separable(f"replication_pad{nd}d", f"ReplicationPad{nd}DBackward0",
                                  f"ReplicationPad{nd}DBackwardBackward0", ("pad",),
                                  *_moved(r"\operatorname{clamp}(i - l,\, 0,\, n - 1)", _PADS)) for nd in (1, 2, 3)}


# -- max pooling: indices picked once, then a gather and its scatter -----------------------------
def _positions(xp, index, shape, nd=2):
    """index (flat positions in each trailing plane of nd dims (H·W, or D·H·W) of an array of
    `shape`) -> positions in the whole flattened array: one flat take or write instead of an
    indexing per plane."""
    lead = len(shape) - nd
    planes = math.prod(shape[:lead])
    size = math.prod(shape[lead:])
    per_plane = math.prod(index.shape[lead:])   # not -1: a batch of 0 planes is allowed
    return (index.reshape(planes, per_plane) + (xp.arange(planes) * size).reshape(planes, 1)).reshape(-1)


def _gather_forward(xp, a, index, *shown, nd=2):
    """y = x[index] per plane; index holds flat positions in each trailing plane of nd dims."""
    return xp.take(a.reshape(-1), _positions(xp, index, a.shape, nd)).reshape(index.shape)


def _scatter_back(xp, g, shape, index, disjoint=False, nd=2):
    """zeros(shape) with ḡ added at the flat positions index (windows may overlap: they add).
    disjoint: no two positions coincide, so ḡ is written, not summed."""
    lead = len(shape) - nd
    planes = math.prod(shape[:lead])
    size = math.prod(shape[lead:])
    if xp.arrays:
        pos = _positions(xp, index, shape, nd)
        if disjoint:
            out = xp.zeros(planes * size, dtype=g.dtype)
            out[pos] = g.reshape(-1)
            return out.reshape(shape)
        out = xp.bincount(pos, weights=g.reshape(-1), minlength=planes * size)
        return out.astype(g.dtype, copy=False).reshape(shape)
    per_plane = math.prod(index.shape[lead:])
    flat = xp.reshape(g, (planes, per_plane))
    return xp.reshape(xp.scatter_add_zeros((planes, size), 1, index.reshape(planes, per_plane), flat), tuple(shape))


def _max_vjp(xp, g, c, a, index, *shown):
    return _scatter_back(xp, g, a.shape, index)


def _windows_disjoint(k, s, p, d):
    """Whether max-pool windows share no input and, unpadded, each picks a distinct input (the
    first tap of a window is always inside, so a padding position never wins)."""
    return not any(p) and all(ss > dd * (kk - 1) for kk, ss, dd in zip(k, s, d))


def _max_pool_vjp(xp, g, c, a, index, *shown):
    return _scatter_back(xp, g, a.shape, index, disjoint=_windows_disjoint(*shown))


def _max_pool3d_forward(xp, a, index, *shown):
    return _gather_forward(xp, a, index, nd=3)


def _max_pool3d_vjp(xp, g, c, a, index, *shown):
    return _scatter_back(xp, g, a.shape, index, disjoint=_windows_disjoint(*shown), nd=3)


def _max_op(name, torch_name, shown, windows, vjp=_max_vjp, forward=_gather_forward):
    return Op(name, torch_name, r"$c[i] = \max_{j \in \mathrm{win}_i} $0[j]" + windows, forward, vjp=(vjp,),
              params=("indices",) + shown, saves=("self",), vjp_latex=(_ARGMAX,), out_symbol="y")


MAX_POOL2D = _max_op("max_pool2d", "MaxPool2DWithIndicesBackward0",
                     ("kernel_size", "stride", "padding", "dilation"), _WINDOWS + r",\ \text{dilation } $dilation",
                     _max_pool_vjp)
MAX_POOL3D = _max_op("max_pool3d", "MaxPool3DWithIndicesBackward0",
                     ("kernel_size", "stride", "padding", "dilation"), _WINDOWS + r",\ \text{dilation } $dilation",
                     _max_pool3d_vjp, _max_pool3d_forward)
ADAPTIVE_MAX_POOL2D = _max_op("adaptive_max_pool2d", "AdaptiveMaxPool2DBackward0", ("output_size",), _ADAPTIVE)
ADAPTIVE_MAX_POOL3D = _max_op("adaptive_max_pool3d", "AdaptiveMaxPool3DBackward0", ("output_size",), _ADAPTIVE,
                              lambda xp, g, c, a, index, *shown: _scatter_back(xp, g, a.shape, index, nd=3),
                              _max_pool3d_forward)



# -- max unpooling: each value written back where its pool found it, zeros elsewhere ------------
def _unpool_forward(xp, a, index, out_size):
    nd = len(out_size)   # the trailing dims that are planes: (oH, oW) or (oD, oH, oW)
    return _scatter_back(xp, a, a.shape[:-nd] + tuple(out_size), index, disjoint=True, nd=nd)


def _unpool_vjp(xp, g, c, a, index, out_size):
    nd = len(out_size)
    if xp.arrays:
        return _gather_forward(xp, g, index, nd=nd)
    planes = math.prod(a.shape[:-nd])
    flat = xp.reshape(g, (planes, math.prod(out_size)))
    return xp.reshape(xp.take_along_axis(flat, index.reshape(planes, -1), 1), tuple(a.shape))


MAX_UNPOOL = {nd: Op(f"max_unpool{nd}d", f"MaxUnpool{nd}DBackward0", r"$c[\iota_p] = $0[p],\ 0 \text{ elsewhere}",
                     _unpool_forward, vjp=(_unpool_vjp,), params=("indices", "output_size"), saves=(),
                     vjp_latex=(r"\bar{g}[\iota_p] \text{ at } [p]",), out_symbol="y",
                     # linear: a tangent is unpooled as the values are (where indices repeat, one write wins,
                     # as in torch; the VJP's transpose would add them)
                     jvp="linear") for nd in (2, 3)}

# -- unfold / fold: the window view and its adjoint ----------------------------------------------
# window p of the (padded) input reads x[s p + d k − q] at kernel tap k; a column holds one window
_UNFOLD = r",\quad \text{kernel } $kernel_size,\ s = $stride,\ q = $padding,\ d = $dilation"
_COLUMNS = r"$c[n,\, (i, k),\, p] = $0[n,\, i,\, s p + d k - q]"
_COL2IM = r"\textstyle\sum_{(k,\, p) \,:\, s p + d k - q = j} \bar{g}[n,\, (i, k),\, p] \text{ at } [n,\, i,\, j]"
_IM2COL = r"\bar{g}[n,\, i,\, s p + d k - q] \text{ at } [n,\, (i, k),\, p]"
def _unfold_forward(xp, a, k, d, p, s):
    win = windows(xp, pad_spatial(xp, a, [(pp, pp) for pp in p]), k, s, d)   # (N, C, oh, ow, kh, kw)
    n, c, oh, ow = win.shape[:4]
    return xp.ascontiguousarray(win.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * k[0] * k[1], oh * ow))


def _unfold_adjoint(xp, g, shape, k, d, p, s):
    n, c, h, w = shape
    oh, ow = (_pool_out(size, kk, ss, pp, dd, False) for size, kk, ss, pp, dd in zip((h, w), k, s, p, d))
    cols = g.reshape(n, c, k[0], k[1], oh, ow).transpose(0, 1, 4, 5, 2, 3)
    full = col2im(xp, cols, (n, c, h + 2 * p[0], w + 2 * p[1]), k, s, d)
    return xp.ascontiguousarray(full[:, :, p[0]:p[0] + h, p[1]:p[1] + w])


IM2COL, COL2IM_OF_IM2COL = linear_pair(
    "im2col", "Im2ColBackward0", _unfold_forward, _unfold_adjoint,
    ("kernel_size", "dilation", "padding", "stride"), "Col2ImBackward0",
    (_COLUMNS + _UNFOLD, _COL2IM), (r"$c = \text{col2im}($0)\!:\; " + _COL2IM.replace(r"\bar{g}", "$0")
                                    + _UNFOLD, r"\text{im2col}(\bar{g})"))


def _fold_forward(xp, a, out_size, k, d, p, s):
    n = a.shape[0]
    c = a.shape[1] // (k[0] * k[1])
    return _unfold_adjoint(xp, a, (n, c) + tuple(out_size), k, d, p, s)


def _fold_adjoint(xp, g, shape, out_size, k, d, p, s):
    return _unfold_forward(xp, g, k, d, p, s)


COL2IM, IM2COL_OF_COL2IM = linear_pair(
    "col2im", "Col2ImBackward0", _fold_forward, _fold_adjoint,
    ("output_size", "kernel_size", "dilation", "padding", "stride"), "Im2ColBackward0",
    (r"$c[n,\, i,\, j] = \textstyle\sum_{(k,\, p) \,:\, s p + d k - q = j} $0[n,\, (i, k),\, p]"
     r",\quad \text{output size } $output_size" + _UNFOLD, _IM2COL),
    (r"$c = \text{im2col}($0)" + _UNFOLD, r"\text{col2im}(\bar{g})"))


# -- Tensor.unfold: every size-long window along one dim, a strided view -------------------------
def _windows_along(xp, a, d, size, step):
    """Tensor.unfold's view: dim d becomes the window index, a new last dim the tap in the window."""
    if a.ndim == 0:
        return a.reshape(1)[:size]     # torch: a 0-d tensor unfolds to its one window (size 0 or 1)
    count = (a.shape[d] - size) // step + 1
    return xp.lib.stride_tricks.as_strided(
        a, shape=a.shape[:d] + (count,) + a.shape[d + 1:] + (size,),
        strides=a.strides[:d] + (a.strides[d] * step,) + a.strides[d + 1:] + (a.strides[d],))


def _windows_adjoint(xp, g, shape, d, size, step):
    """unfold_backward: each window of ḡ added back where it was read, one strided add per tap."""
    if not shape:
        return xp.asarray(g.sum(), dtype=g.dtype).reshape(())
    out = xp.zeros(shape, dtype=g.dtype)
    count = g.shape[d]
    for t in range(size):
        at = (slice(None),) * d + (slice(t, t + step * (count - 1) + 1, step),)
        out[at] += g[..., t]
    return out


UNFOLD, UNFOLD_BACKWARD = linear_pair(
    "unfold", "UnfoldBackward0", _windows_along, _windows_adjoint,
    ("dimension", "size", "step"), "UnfoldBackwardBackward0",
    (r"$c[\ldots, p, \ldots, t] = $0[\ldots,\, $step\, p + t,\, \ldots]",
     r"\textstyle\sum_{p,\, t \,:\, $step\, p + t = j} \bar{g}[\ldots, p, \ldots, t] \text{ at } j"),
    (r"$c[\ldots, j, \ldots] = \textstyle\sum_{p,\, t \,:\, $step\, p + t = j} $0[\ldots, p, \ldots, t]",
     r"\text{unfold}(\bar{g})"), out_symbol="c")


# -- pixel shuffle: a permutation of (C·r², H, W) into (C, H·r, W·r) ------------------------------
def _shuffle(xp, a, r):
    lead = a.shape[:-3]
    c, h, w = a.shape[-3] // (r * r), a.shape[-2], a.shape[-1]
    b = a.reshape(lead + (c, r, r, h, w))
    m = len(lead)
    b = b.transpose(tuple(range(m)) + (m, m + 3, m + 1, m + 4, m + 2))
    return xp.ascontiguousarray(b.reshape(lead + (c, h * r, w * r)))


def _unshuffle(xp, a, r):
    lead = a.shape[:-3]
    c, h, w = a.shape[-3], a.shape[-2] // r, a.shape[-1] // r
    b = a.reshape(lead + (c, h, r, w, r))
    m = len(lead)
    b = b.transpose(tuple(range(m)) + (m, m + 2, m + 4, m + 1, m + 3))
    return xp.ascontiguousarray(b.reshape(lead + (c * r * r, h, w)))


# channel i r² + u r + v at (h, w) <-> channel i at (h r + u, w r + v)
_DEEP, _WIDE = r"[i r^2 + u r + v,\, h,\, w]", r"[i,\, h r + u,\, w r + v]"
PIXEL_SHUFFLE, _ = linear_pair("pixel_shuffle", "PixelShuffleBackward0",
                               _shuffle, lambda xp, g, shape, r: _unshuffle(xp, g, r),
                               ("upscale_factor",), "PixelUnshuffleBackward0",
                               (f"$c{_WIDE} = $0{_DEEP},\\quad r = $upscale_factor",
                                rf"\bar{{g}}{_WIDE} \text{{ at }} {_DEEP}"),
                               (f"$c{_DEEP} = $0{_WIDE},\\quad r = $upscale_factor",
                                rf"\bar{{g}}{_DEEP} \text{{ at }} {_WIDE}"))
PIXEL_UNSHUFFLE, _ = linear_pair("pixel_unshuffle", "PixelUnshuffleBackward0",
                                 _unshuffle, lambda xp, g, shape, r: _shuffle(xp, g, r),
                                 ("downscale_factor",), "PixelShuffleBackward0",
                                 (f"$c{_DEEP} = $0{_WIDE},\\quad r = $downscale_factor",
                                  rf"\bar{{g}}{_DEEP} \text{{ at }} {_WIDE}"),
                                 (f"$c{_WIDE} = $0{_DEEP},\\quad r = $downscale_factor",
                                  rf"\bar{{g}}{_WIDE} \text{{ at }} {_DEEP}"))



# -- channel shuffle: channel i·(C/g) + j -> j·g + i; its adjoint is the shuffle with C/g groups ----
def _channel_shuffle(xp, a, groups):
    n, c = a.shape[0], a.shape[1]
    b = xp.swapaxes(a.reshape((n, groups, c // groups) + a.shape[2:]), 1, 2)
    return xp.ascontiguousarray(b.reshape(a.shape))


def _channel_shuffle_vjp(xp, g, out, a, groups):
    back = a.shape[1] // groups
    return _channel_shuffle(xp, g, back) if xp.arrays else xp.apply(CHANNEL_SHUFFLE, (g,), (back,))


CHANNEL_SHUFFLE = Op("channel_shuffle", "ChannelShuffleBackward0",
                     r"$c[:,\, j g + i] = $0[:,\, i \tfrac{C}{g} + j],\quad g = $groups",
                     _channel_shuffle, vjp=(_channel_shuffle_vjp,), params=("groups",), saves=(),
                     vjp_latex=(r"\bar{g}[:,\, j g + i] \text{ at } [:,\, i \tfrac{C}{g} + j]",), out_symbol="y")
