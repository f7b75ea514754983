"""Group normalization and scaled dot-product attention, each one node as in PyTorch
(NativeGroupNormBackward0, ScaledDotProductFlashAttentionForCpuBackward0)."""
from __future__ import annotations

import math

import numpy as np

from .core import given, shift_max
from .op import Op
from .reduce import sum_last


# -- group norm: layer norm over each group of channels, then a per-channel affine map ---------------
def _grouped(xp, x, a, groups):
    """x (shaped as a) as (N, groups, elements per group): sized in full, as an empty batch has no -1."""
    return xp.reshape(x, (a.shape[0], groups, a.shape[1] // groups * math.prod(a.shape[2:])))


def _group_stats(xp, a, groups, eps):
    x = _grouped(xp, a, a, groups)
    m = x.shape[2]
    d = x - xp.sum(x, axis=2, keepdims=True) / m
    r = 1 / xp.sqrt(xp.sum(d * d, axis=2, keepdims=True) / m + eps)
    return d, r, m


def _channel(w, a):
    return w.reshape((-1,) + (1,) * (a.ndim - 2))


def _gn_forward(xp, a, w, b, groups, eps):
    d, r, _ = _group_stats(xp, a, groups, eps)
    out = (d * r).reshape(a.shape)
    out = out * _channel(w, a) if given(w) else out
    return out + _channel(b, a) if given(b) else out


def _gn_vjp_input(xp, g, c, a, w, b, groups, eps):
    # per group, as layer norm: r ⊙ (ĝ − mean ĝ − x̂ ⊙ mean(ĝ ⊙ x̂)), ĝ = ḡ ⊙ w
    d, r, m = _group_stats(xp, a, groups, eps)
    gh = _grouped(xp, g * xp.reshape(w, (-1,) + (1,) * (a.ndim - 2)) if given(w) else g, a, groups)
    xh = d * r
    gx = r * (gh - xp.sum(gh, axis=2, keepdims=True) / m - xh * (xp.sum(gh * xh, axis=2, keepdims=True) / m))
    return xp.reshape(gx, tuple(a.shape))


def _other_axes(a):
    return (0,) + tuple(range(2, a.ndim))


def _gn_vjp_weight(xp, g, c, a, w, b, groups, eps):
    d, r, _ = _group_stats(xp, a, groups, eps)
    return xp.sum(g * xp.reshape(d * r, tuple(a.shape)), axis=_other_axes(a))


def _gn_vjp_bias(xp, g, c, a, w, b, groups, eps):
    return xp.sum(g, axis=_other_axes(a))


GROUP_NORM = Op("group_norm", "NativeGroupNormBackward0",
                r"$c = \frac{$0 - \mu_{G}}{\sqrt{\sigma^2_{G} + $eps}} \odot $1 + $2,\quad "
                      r"\mu_{G},\, \sigma^2_{G} \text{ over each of the } $group \text{ groups of channels}", _gn_forward,
                vjp=(_gn_vjp_input, _gn_vjp_weight, _gn_vjp_bias),
                args=("input", "weight", "bias"), params=("group", "eps"), saves=("input", "weight"),
                symbols=("x", "w", "b"),
                vjp_latex=(r"r \odot \left(\hat{g} - \operatorname{mean}_{G} \hat{g} - \hat{x} \odot "
                           r"\operatorname{mean}_{G}(\hat{g} \odot \hat{x})\right),\; \hat{g} = \bar{g} \odot $1,\; "
                           r"r = \frac{1}{\sqrt{\sigma^2_{G} + $eps}}",
                           r"\textstyle\sum_{\text{batch, positions}} \bar{g} \odot \hat{x}",
                           r"\textstyle\sum_{\text{batch, positions}} \bar{g}"), out_symbol="y")


# -- what PyTorch's C++ compositions record: a softmax safe on masked rows ---------------------------


def _safe_softmax(xp, a, dim):
    """softmax, with 0 (not nan) on a row that is −inf throughout (a query that may attend nowhere)."""
    with np.errstate(invalid="ignore"):
        m = a.max(axis=dim, keepdims=True)
        e = xp.exp(a - xp.where(xp.isfinite(m), m, 0))
        total = e.sum(axis=dim, keepdims=True)
        return xp.where(total > 0, e / xp.where(total > 0, total, 1), 0)


SAFE_SOFTMAX = Op("_safe_softmax", "SafeSoftmaxBackward0",
                  r"$c = \frac{e^{$0}}{\sum_{\text{dim } $dim} e^{$0}} \text{ (0 on a row that is } "
                        r"{-\infty} \text{ throughout)}",
                  _safe_softmax, vjp=(lambda xp, g, c, a, dim: c * (g - xp.sum(g * c, axis=dim, keepdims=True)),), params=("dim",), saves=("result",),
                  vjp_latex=(r"$c \odot \left(\bar{g} - \sum_{\text{dim } $dim} \bar{g} \odot $c\right)",))


# -- attention: softmax(q kᵀ · scale + mask) v ------------------------------------------------------
def _probs(xp, q, k, mask, scale):
    if not xp.arrays:   # on Tensors (a create_graph backward records these steps)
        s = xp.matmul(q, xp.swapaxes(k, -1, -2)) * scale
        return xp.softmax(s if mask is None else s + mask, -1)
    # on arrays each step is written into the fresh product (the row sums by BLAS)
    s = xp.matmul(q, xp.swapaxes(k, -1, -2))
    s *= scale
    if mask is not None:
        fits = mask.shape == s.shape[s.ndim - mask.ndim:] or np.broadcast_shapes(s.shape, mask.shape) == s.shape
        s = xp.add(s, mask, out=s) if mask.dtype == s.dtype and fits else s + mask
    with np.errstate(invalid="ignore"):
        s -= shift_max(s)
        e = xp.exp(s, out=s)
        e /= sum_last(xp, e)
        return e


def _sdpa_keeping(xp, q, k, v, mask, scale):
    """The attention, and P kept for the VJP (the attention weights, one T×T matrix per head)."""
    p = _probs(xp, q, k, mask, scale)
    return xp.matmul(p, v), p


def _sdpa_vjp(xp, g, out, q, k, v, mask, scale, kept=None):
    # P = softmax(S): dV = Pᵀ ḡ, dP = ḡ Vᵀ, dS = P ⊙ (dP − rowsum(dP ⊙ P)), dQ = s dS K, dK = s dSᵀ Q
    p = _probs(xp, q, k, mask, scale) if kept is None else kept
    dv = xp.matmul(xp.swapaxes(p, -1, -2), g)
    dp = xp.matmul(g, xp.swapaxes(v, -1, -2))
    if not xp.arrays:   # on Tensors (a create_graph backward records these steps)
        ds = p * (dp - xp.sum(dp * p, axis=-1, keepdims=True))
        return [xp.matmul(ds, k) * scale, xp.matmul(xp.swapaxes(ds, -1, -2), q) * scale, dv]
    # on arrays each step is written into the fresh array the step before made (the row sums by BLAS)
    dp -= sum_last(xp, dp * p)
    dp *= p
    dq = xp.matmul(dp, k)
    dq *= scale
    dk = xp.matmul(xp.swapaxes(dp, -1, -2), q)
    dk *= scale
    return [dq, dk, dv]


SDPA = Op("scaled_dot_product_attention", "ScaledDotProductFlashAttentionForCpuBackward0",
          r"$c = P\, $2,\quad P = \operatorname{softmax}\!\left($scale\, $0\, $1^{\top} + M\right)", keeps=_sdpa_keeping, vjp=_sdpa_vjp,
          args=("query", "key", "value"), params=("attn_mask", "scale"), saves=("query", "key", "value"),
          symbols=("Q", "K", "V"),
          vjp_latex=(r"$scale\, \bar{S}\, $1,\quad \bar{S} = P \odot \left(\bar{g}\, $2^{\top} - "
                     r"\operatorname{rowsum}(\bar{g}\, $2^{\top} \odot P)\right)",
                     r"$scale\, \bar{S}^{\top} $0,\quad \bar{S} = P \odot \left(\bar{g}\, $2^{\top} - "
                     r"\operatorname{rowsum}(\bar{g}\, $2^{\top} \odot P)\right)",
                     r"P^{\top} \bar{g}"), out_symbol="y")
