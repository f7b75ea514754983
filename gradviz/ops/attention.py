"""Group normalization and scaled dot-product attention, each one node as in PyTorch
(NativeGroupNormBackward0, ScaledDotProductFlashAttentionForCpuBackward0)."""
from __future__ import annotations

import math

import numpy as np

from ..autograd.apply import apply
from .core import namespace
from .op import Op
from ..tensor import Tensor


# -- group norm: layer norm over each group of channels, then a per-channel affine map ---------------
def _group_stats(xp, a, groups, eps):
    n = a.shape[0]
    x = xp.reshape(a, (n, groups, -1))
    m = x.shape[2]
    d = x - xp.sum(x, axis=2, keepdims=True) / m
    r = 1 / xp.sqrt(xp.sum(d * d, axis=2, keepdims=True) / m + eps)
    return d, r, m


def _channel(w, a):
    return w.reshape((-1,) + (1,) * (a.ndim - 2))


def _gn_forward(xp, a, w, b, groups, eps):
    d, r, _ = _group_stats(xp, a, groups, eps)
    return (d * r).reshape(a.shape) * _channel(w, a) + _channel(b, a)


def _gn_vjp_input(xp, g, c, a, w, b, groups, eps):
    # per group, as layer norm: r ⊙ (ĝ − mean ĝ − x̂ ⊙ mean(ĝ ⊙ x̂)), ĝ = ḡ ⊙ w
    d, r, m = _group_stats(xp, a, groups, eps)
    gh = xp.reshape(g * xp.reshape(w, (-1,) + (1,) * (a.ndim - 2)), (a.shape[0], groups, -1))
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
                "y = (x − μ_group)/√(σ²_group + ε) ⊙ w[c] + b[c]", _gn_forward,
                vjp=(_gn_vjp_input, _gn_vjp_weight, _gn_vjp_bias),
                vjp_formulas=("r ⊙ (ĝ − mean ĝ − x̂ ⊙ mean(ĝ ⊙ x̂)) per group, ĝ = ḡ ⊙ w", "Σ ḡ ⊙ x̂", "Σ ḡ"),
                args=("input", "weight", "bias"), params=("group", "eps"), saves=("input", "weight"),
                symbols=("x", "w", "b"),
                latex=r"$c = \frac{$0 - \mu_{G}}{\sqrt{\sigma^2_{G} + $eps}} \odot $1 + $2,\quad "
                      r"\mu_{G},\, \sigma^2_{G} \text{ over each of the } $group \text{ groups of channels}",
                vjp_latex=(r"r \odot \left(\hat{g} - \operatorname{mean}_{G} \hat{g} - \hat{x} \odot "
                           r"\operatorname{mean}_{G}(\hat{g} \odot \hat{x})\right),\; \hat{g} = \bar{g} \odot $1,\; "
                           r"r = \frac{1}{\sqrt{\sigma^2_{G} + $eps}}",
                           r"\textstyle\sum_{\text{batch, positions}} \bar{g} \odot \hat{x}",
                           r"\textstyle\sum_{\text{batch, positions}} \bar{g}"))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    from .nnops import _affine
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    c = input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    w, b = _affine(input, weight, bias, (c,))
    return apply(GROUP_NORM, (input, w, b), (int(num_groups), eps))


# -- what PyTorch's C++ compositions record: a tensor and a Scalar, a softmax safe on masked rows ----
ADD_SCALAR = Op("add", "AddBackward1", "c = a + s", lambda xp, a, s: a + s, vjp=(lambda xp, g, c, a, s: g,),
                vjp_formulas=("ḡ",), params=("other",),
                latex=r"$c = $0 + $other", vjp_latex=(r"\bar{g}",))
MUL_SCALAR = Op("mul", "MulBackward1", "c = a · s", lambda xp, a, s: a * s, vjp=(lambda xp, g, c, a, s: g * s,),
                vjp_formulas=("s ḡ",), params=("other",),
                latex=r"$c = $0 \cdot $other", vjp_latex=(r"$other\, \bar{g}",))


def _safe_softmax(xp, a, dim):
    """softmax, with 0 (not nan) on a row that is −inf throughout (a query that may attend nowhere)."""
    with np.errstate(invalid="ignore"):
        m = a.max(axis=dim, keepdims=True)
        e = xp.exp(a - xp.where(xp.isfinite(m), m, 0))
        total = e.sum(axis=dim, keepdims=True)
        return xp.where(total > 0, e / xp.where(total > 0, total, 1), 0)


SAFE_SOFTMAX = Op("_safe_softmax", "SafeSoftmaxBackward0", "c = softmax(a) (0 on rows masked throughout)",
                  _safe_softmax, vjp=(lambda xp, g, c, a, dim: c * (g - xp.sum(g * c, axis=dim, keepdims=True)),),
                  vjp_formulas=("c ⊙ (ḡ − Σ ḡ ⊙ c)",), params=("dim",), saves=("result",),
                  latex=r"$c = \frac{e^{$0}}{\sum_{\text{dim } $dim} e^{$0}} \text{ (0 on a row that is } "
                        r"{-\infty} \text{ throughout)}",
                  vjp_latex=(r"$c \odot \left(\bar{g} - \sum_{\text{dim } $dim} \bar{g} \odot $c\right)",))


def add_scalar(input, other):
    return apply(ADD_SCALAR, (input,), (other,))


def mul_scalar(input, other):
    return apply(MUL_SCALAR, (input,), (other,))


# -- attention: softmax(q kᵀ · scale + mask) v ------------------------------------------------------
def _probs(xp, q, k, mask, scale):
    s = xp.matmul(q, xp.swapaxes(k, -1, -2)) * scale
    if mask is not None:
        s = s + mask
    if xp.arrays:
        with np.errstate(invalid="ignore"):
            e = xp.exp(s - s.max(axis=-1, keepdims=True))
            return e / e.sum(axis=-1, keepdims=True)
    from .reduce import softmax
    return softmax(s, -1)


def _sdpa_forward(xp, q, k, v, mask, scale):
    return xp.matmul(_probs(xp, q, k, mask, scale), v)


def _sdpa_vjp(xp, g, out, q, k, v, mask, scale):
    # P = softmax(S): dV = Pᵀ ḡ, dP = ḡ Vᵀ, dS = P ⊙ (dP − rowsum(dP ⊙ P)), dQ = s dS K, dK = s dSᵀ Q
    p = _probs(xp, q, k, mask, scale)
    dv = xp.matmul(xp.swapaxes(p, -1, -2), g)
    dp = xp.matmul(g, xp.swapaxes(v, -1, -2))
    ds = p * (dp - xp.sum(dp * p, axis=-1, keepdims=True))
    dq = xp.matmul(ds, k) * scale
    dk = xp.matmul(xp.swapaxes(ds, -1, -2), q) * scale
    return [dq, dk, dv]


SDPA = Op("scaled_dot_product_attention", "ScaledDotProductFlashAttentionForCpuBackward0",
          "y = softmax(Q Kᵀ · s + M) V", _sdpa_forward, vjp=_sdpa_vjp,
          vjp_formulas=("s · (P ⊙ (ḡVᵀ − rowsum(ḡVᵀ ⊙ P))) K", "s · (P ⊙ (ḡVᵀ − rowsum(ḡVᵀ ⊙ P)))ᵀ Q", "Pᵀ ḡ"),
          args=("query", "key", "value"), params=("attn_mask", "scale"), saves=("query", "key", "value"),
          symbols=("Q", "K", "V"),
          latex=r"$c = P\, $2,\quad P = \operatorname{softmax}\!\left($scale\, $0\, $1^{\top} + M\right)",
          vjp_latex=(r"$scale\, \bar{S}\, $1,\quad \bar{S} = P \odot \left(\bar{g}\, $2^{\top} - "
                     r"\operatorname{rowsum}(\bar{g}\, $2^{\top} \odot P)\right)",
                     r"$scale\, \bar{S}^{\top} $0,\quad \bar{S} = P \odot \left(\bar{g}\, $2^{\top} - "
                     r"\operatorname{rowsum}(\bar{g}\, $2^{\top} \odot P)\right)",
                     r"P^{\top} \bar{g}"))


def _additive_mask(attn_mask, is_causal, l, s, dtype, xp=np):
    """The mask as numbers added to the scores: 0 where attention is allowed, −inf where not."""
    mask = None
    if is_causal:
        mask = xp.where(xp.tril(xp.ones((l, s), dtype=bool)), 0.0, -np.inf).astype(dtype)
    if attn_mask is not None:
        m = attn_mask._data
        m = xp.where(m, 0.0, -np.inf).astype(dtype) if m.dtype == np.bool_ else m.astype(dtype)
        mask = m if mask is None else mask + m
    return mask


def _fused(q, k, v, dropout_p) -> bool:
    """When PyTorch's CPU dispatch picks its flash kernel: float32 (B, H, L, E) inputs with one head size."""
    return (dropout_p == 0 and all(t._data.dtype == np.float32 and t.ndim == 4 for t in (q, k, v))
            and q.shape[-1] == k.shape[-1] == v.shape[-1])


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    l, s, e = query.shape[-2], key.shape[-2], query.shape[-1]
    scale = 1 / math.sqrt(e) if scale is None else scale
    mask = _additive_mask(attn_mask, is_causal, l, s, query._data.dtype, namespace(query._data))
    # a float mask that requires grad is an input of the graph: PyTorch then takes its math path,
    # and so does gradviz, so the mask gets its gradient (the fused record treats it as a constant)
    learned = attn_mask if getattr(attn_mask, "requires_grad", False) else None
    if learned is None and _fused(query, key, value, dropout_p):   # PyTorch's fused CPU kernel: one node
        return apply(SDPA, (query, key, value), (mask, scale))
    # PyTorch's math path (float64, or dropout): each factor scaled by √scale, a safe softmax
    from .linalg import matmul
    root = math.sqrt(scale)
    scores = matmul(mul_scalar(query, root), mul_scalar(key.transpose(-2, -1), root))
    if learned is not None:
        scores = scores + learned
    elif mask is not None:
        scores = scores + Tensor._make(mask)
    probs = apply(SAFE_SOFTMAX, (scores,), (scores.ndim - 1,))
    if dropout_p > 0:
        from ..nn.functional import dropout
        probs = dropout(probs, dropout_p)
    return matmul(probs, value)
