"""group_norm and scaled_dot_product_attention on Tensors: torch's argument checks, its fused
or math path, then the records of gradviz.ops.attention."""
from __future__ import annotations

import functools
import math

import numpy as np

from ..autograd.apply import apply
from ..ops.core import namespace
from ..dtypes import C_TYPE
from ..tensor import Tensor
from ..ops.attention import GROUP_NORM, SAFE_SOFTMAX, SDPA
from .pointwise import add_scalar, mul_scalar
from .nnops import _affine, dropout
from .linalg import matmul


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    c = input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    w, b = _affine(input, weight, bias)
    return apply(GROUP_NORM, (input, w, b), (int(num_groups), eps))


@functools.lru_cache(maxsize=16)
def _causal_mask(l, s, dtype, xp):
    """The causal mask of an l × s score matrix, made once per size (read-only: calls share it)."""
    mask = xp.where(xp.tril(xp.ones((l, s), dtype=bool)), 0.0, -np.inf).astype(dtype)
    if isinstance(mask, np.ndarray):
        mask.setflags(write=False)
    return mask


def _additive_mask(attn_mask, is_causal, l, s, dtype, xp=np):
    """The mask as numbers added to the scores: 0 where attention is allowed, −inf where not."""
    mask = None
    if is_causal:
        mask = _causal_mask(l, s, np.dtype(dtype), xp)
    if attn_mask is not None:
        m = attn_mask._data
        m = xp.where(m, 0.0, -np.inf).astype(dtype) if m.dtype == np.bool_ else m.astype(dtype)
        mask = m if mask is None else mask + m
    return mask


def _fused(q, k, v, dropout_p) -> bool:
    """When PyTorch's CPU dispatch picks its flash kernel: float32 (B, H, L, E) inputs with one head size."""
    return (dropout_p == 0 and all(t._data.dtype == np.float32 and t.ndim == 4 for t in (q, k, v))
            and q.shape[-1] == k.shape[-1] == v.shape[-1])


def _check_sdpa_dtypes(query, key, value, attn_mask) -> None:
    """PyTorch's checks of the dtypes: query, key and value alike; a mask bool, float or query's dtype."""
    dq, dk, dv = (t._data.dtype for t in (query, key, value))
    if not dq == dk == dv:   # the names only then: a dtype makes its name anew at each read
        q, k, v = (C_TYPE[d.name] for d in (dq, dk, dv))
        if not q == k == v:
            raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: {q} "
                               f"key.dtype: {k} and value.dtype: {v} instead.")
    if attn_mask is not None and attn_mask._data.dtype not in (np.bool_, np.float32, query._data.dtype):
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                           f"attn_mask.dtype: {C_TYPE[attn_mask._data.dtype.name]} and  query.dtype: {C_TYPE[dq.name]} "
                           "instead.")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    _check_sdpa_dtypes(query, key, value, attn_mask)
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
    root = math.sqrt(scale)
    scores = matmul(mul_scalar(query, root), mul_scalar(key.transpose(-2, -1), root))
    if learned is not None:
        scores = scores + learned
    elif mask is not None:
        scores = scores + Tensor._make(mask)
    probs = apply(SAFE_SOFTMAX, (scores,), (scores.ndim - 1,))
    if dropout_p > 0:
        probs = dropout(probs, dropout_p)
    return matmul(probs, value)
