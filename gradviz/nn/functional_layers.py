"""The layer functionals that PyTorch writes as compositions of other ops, composed the same
way so the graph has PyTorch's nodes: instance norm (a batch norm on a reshaped view),
RMS norm, channel dropout, padding modes, the recurrent cells and multi-head attention; and the
losses whose functional differs from torch's top-level form (ctc_loss names its reduction)."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..functions import loss as _loss, nnops
from ..functions.attention import scaled_dot_product_attention
from ..functions.linalg import linear
from ..functions.pointwise import add_scalar, minimum, relu, sigmoid, sign, tanh
from ..functions import pool as nnpool
from ..functions.pool import padding_mode
from ..functions.reduce import softmax
from ..functions.shape import _outputs, cat
from ..ops.core import namespace
from ..ops.shape import split_op
from ..dtypes import C_TYPE
from ..tensor import Tensor
from ..creation import zeros


def pad(input, pad, mode="constant", value=None):
    if mode == "constant":
        return nnops.pad(input, pad, mode, value)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    return padding_mode(input, tuple(int(p) for p in pad), mode)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Each (sample, channel) plane normalized alone: batch norm of x viewed as (1, N·C, *S)."""
    n, c = input.shape[:2]
    if use_input_stats and input.numel() // (n * c) <= 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size torch.Size({list(input.shape)})")
    shaped = input.reshape(1, n * c, *input.shape[2:])
    w = weight.repeat(n) if weight is not None else None
    b = bias.repeat(n) if bias is not None else None
    rm = running_mean.repeat(n) if running_mean is not None else None
    rv = running_var.repeat(n) if running_var is not None else None
    out = nnops.batch_norm(shaped, rm, rv, w, b, use_input_stats, momentum, eps)
    if use_input_stats:
        # the running statistics are the mean over the batch of the per-sample updates
        for run, per in ((running_mean, rm), (running_var, rv)):
            if run is not None:
                run._data[...] = per._data.reshape(n, c).mean(0)
                run._bump()
    return out.view(input.shape)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           "element, but got normalized_shape = []")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    if input.ndim < len(shape):
        raise RuntimeError(f"Input tensor must have at least {len(shape)} dimensions, but got {input.ndim}")
    if tuple(input.shape[input.ndim - len(shape):]) != shape:   # torch's rms_norm writes no ", " after *
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if eps is None:
        eps = float(np.finfo(input._data.dtype).eps)
    dims = tuple(range(-len(shape), 0))
    out = input * add_scalar(input.pow(2).mean(dims, keepdim=True), eps).rsqrt()
    return out * weight if weight is not None else out


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """torch's: the 2-d kernel on input.unsqueeze(-2), squeezed back (the graph holds those nodes)."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor for argument #1 "
                           "'self' (while checking arguments for adaptive_max_pool1d)")
    nnpool.check_adaptive_max_sizes(input, 1)
    (size,) = nnpool.adaptive_size("adaptive_max_pool1d", output_size, input, 1)
    out, indices = nnpool.adaptive_max_pool2d(input.unsqueeze(-2), (1, size), return_indices=True)
    out, indices = out.squeeze(-2), indices.squeeze(-2)
    return (out, indices) if return_indices else out


def _feature_dropout(input, p, training, inplace, batched_ndim=None):
    """Whole channels (dim 1) zeroed, as torch's F: an input without batched_ndim dims is unsqueezed to
    a batch of one first and squeezed back after (so its graph holds those two nodes, in eval mode
    too; in place with inplace=True); dropout2d passes None, keeping torch's old reading of a 3-d
    input as (N, C, L)."""
    if batched_ndim is None or input.ndim == batched_ndim:
        return nnops.dropout_impl(input, p, training, inplace, feature=True)
    if inplace:
        return nnops.dropout_impl(input.unsqueeze_(0), p, training, True, feature=True).squeeze_(0)
    return nnops.dropout_impl(input.unsqueeze(0), p, training, feature=True).squeeze(0)


def dropout1d(input, p=0.5, training=True, inplace=False):
    nnops._checked_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _feature_dropout(input, p, training, inplace, 3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    nnops._checked_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D "
                      "inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior "
                      "is desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior "
                      "will change in a future release to interpret the input as one without a batch dimension, i.e. "
                      "shape (C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using "
                      "dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    nnops._checked_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and will result "
                      "in an error in a future release. To retain the behavior and silence this warning, please use "
                      "dropout instead. Note that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch dimension (i.e. 4D or 5D "
                      "inputs).", stacklevel=2)
    return _feature_dropout(input, p, training, inplace, 5)


# -- recurrent cells, composed as PyTorch's CPU kernels compose them --------------------------------
def _unsafe_chunk(t, n):
    size = t.shape[-1] // n
    return _outputs(split_op(n, "UnsafeSplitBackward0"), (t,), ((size,) * n, t.ndim - 1))


# The hidden state's projection comes first and the input's is added to it; a layer projects
# its whole input sequence at once and hands each step its slice (xw).
def rnn_tanh_step(xw, h, w_hh, b_hh=None):
    return tanh(linear(h, w_hh, b_hh) + xw)


def rnn_relu_step(xw, h, w_hh, b_hh=None):
    return (linear(h, w_hh, b_hh) + xw).relu()


def lstm_step(xw, state, w_hh, b_hh=None):
    """i, f, g, o = split(h W_hhᵀ + x W_ihᵀ + b); c' = σ(f) c + σ(i) tanh(g); h' = σ(o) tanh(c')."""
    h, c = state
    i, f, g, o = _unsafe_chunk(linear(h, w_hh, b_hh) + xw, 4)
    c_next = sigmoid(f) * c + sigmoid(i) * tanh(g)
    return sigmoid(o) * tanh(c_next), c_next


def gru_step(xw, h, w_hh, b_hh=None):
    """r = σ(h_r + x_r), z = σ(h_z + x_z), n = tanh(x_n + h_n ⊙ r); h' = (h − n) ⊙ z + n."""
    x_r, x_z, x_n = _unsafe_chunk(xw, 3)
    h_r, h_z, h_n = _unsafe_chunk(linear(h, w_hh, b_hh), 3)
    r = sigmoid(h_r + x_r)
    z = sigmoid(h_z + x_z)
    n = tanh(x_n + h_n * r)
    return (h - n) * z + n


def _check_cell(x, hidden: tuple, w_ih, w_hh) -> None:
    """PyTorch's checks of a cell's input and hidden states against its weights."""
    if x.size(1) != w_ih.size(1):
        raise RuntimeError(f"input has inconsistent input_size: got {x.size(1)} expected {w_ih.size(1)}")
    for i, h in enumerate(hidden):
        if x.size(0) != h.size(0):
            raise RuntimeError(f"Input batch size {x.size(0)} doesn't match hidden{i} batch size {h.size(0)}")
        if h.size(1) != w_hh.size(1):
            raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, expected {w_hh.size(1)}")


def rnn_tanh_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_cell(x, (h,), w_ih, w_hh)
    return rnn_tanh_step(linear(x, w_ih, b_ih), h, w_hh, b_hh)


def rnn_relu_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_cell(x, (h,), w_ih, w_hh)
    return rnn_relu_step(linear(x, w_ih, b_ih), h, w_hh, b_hh)


def lstm_cell(x, state, w_ih, w_hh, b_ih=None, b_hh=None):
    if len(state) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    _check_cell(x, state, w_ih, w_hh)
    return lstm_step(linear(x, w_ih, b_ih), state, w_hh, b_hh)


def gru_cell(x, h, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_cell(x, (h,), w_ih, w_hh)
    return gru_step(linear(x, w_ih, b_ih), h, w_hh, b_hh)


# -- multi-head attention ------------------------------------------------------------------------------
def _canonical_mask(mask, name: str, dtype, other=None, other_name: str = "attn_mask"):
    """torch's _canonical_mask: a bool mask (True: do not attend) as −inf/0 numbers of dtype to add to
    the scores, a float mask as it is, other dtypes refused; a key_padding_mask whose attn_mask (other)
    has another dtype is warned of."""
    if mask is None:
        return None
    boolean = mask._data.dtype == np.bool_
    if not boolean and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {name} are supported")
    if other is not None and other.dtype != mask.dtype:
        warnings.warn(f"Support for mismatched {name} and {other_name} is deprecated. Use same type for both "
                      "instead.",
                      stacklevel=2)
    if not boolean:
        return mask
    return Tensor._make(namespace(mask._data).where(mask._data, -np.inf, 0.0).astype(dtype))


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads) -> bool:
    """torch's checks of the ranks and shapes multi_head_attention_forward takes; True when batched."""
    if query.ndim not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                             "tensor")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {query.ndim}-D but found "
                             f"{key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {query.ndim - 1}-D "
                             f"but found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.ndim}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return batched


def _static(t, name: str, rows: int, head_dim: int):
    """A key or value given already projected and split into heads: (N·heads, S, head_dim)."""
    if t.shape[0] != rows:
        raise AssertionError(f"expecting {name}.size(0) of {rows}, but got {t.shape[0]}")
    if t.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {t.shape[2]}")
    return t


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """query (L, N, E), key and value (S, N, E): PyTorch's algorithm, step for step: project, split
    into heads, score with the mask, softmax (and dropout), weigh the values, project out."""
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query._data.dtype, attn_mask)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    mask = _canonical_mask(attn_mask, "attn_mask", query._data.dtype)   # is_causal: a hint this mask is causal
    head_dim = _head_dim(query, key, value, embed_dim_to_check, num_heads, use_separate_proj_weight)
    if use_separate_proj_weight:
        q, k, v = _separate_projections(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, in_proj_bias)
    else:
        q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias)
    mask = _attn_mask_3d(mask, tgt_len, key.shape[0], bsz * num_heads)
    k, v, mask, key_padding_mask = _append_bias_kv(k, v, bias_k, bias_v, static_k, static_v, bsz, mask,
                                                   key_padding_mask)
    q = _to_heads(q, None, "", bsz * num_heads, head_dim)
    k = _to_heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _to_heads(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:
        k, v, mask, key_padding_mask = _append_zero_attn(k, v, mask, key_padding_mask)
    src_len = k.shape[1]
    mask = _merge_key_padding_mask(mask, key_padding_mask, bsz, num_heads, src_len)
    if not training:
        dropout_p = 0.0
    if need_weights:
        heads, weights = _attend_with_weights(q, k, v, mask, dropout_p)
        out = _out_projection(heads.transpose(0, 1), tgt_len, bsz, embed_dim, out_proj_weight, out_proj_bias)
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        return (out, weights) if batched else (out.squeeze(1), weights.squeeze(0))
    if mask is not None:
        mask = mask.view(bsz, num_heads, -1, src_len) if mask.shape[0] != 1 else mask.unsqueeze(0)
    q, k, v = (t.view(bsz, num_heads, t.shape[1], head_dim) for t in (q, k, v))
    heads = scaled_dot_product_attention(q, k, v, mask, dropout_p, False)
    out = _out_projection(heads.permute(2, 0, 1, 3), tgt_len, bsz, embed_dim, out_proj_weight, out_proj_bias)
    return (out, None) if batched else (out.squeeze(1), None)


def _head_dim(query, key, value, embed_dim_to_check, num_heads, use_separate_proj_weight) -> int:
    """torch's checks of the embedding size and of key against value; each head's size."""
    embed_dim = query.shape[2]
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
    elif key.shape != value.shape:
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    return head_dim


def _separate_projections(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, in_proj_bias):
    """q, k, v, each projected by its own weight (the one bias split in three)."""
    bq = bk = bv = None
    if in_proj_bias is not None:
        bq, bk, bv = in_proj_bias.chunk(3)
    return linear(query, q_proj_weight, bq), linear(key, k_proj_weight, bk), linear(value, v_proj_weight, bv)


def _in_projection(query, key, value, in_proj_weight, in_proj_bias):
    """q, k, v projected by the packed (3E, E) weight: one linear when they are one tensor
    (self-attention), as torch does, else one linear per third of the weight."""
    if key is value and query is key:
        embed_dim = query.shape[-1]
        proj = linear(query, in_proj_weight, in_proj_bias)
        proj = proj.view(*proj.shape[:-1], 3, embed_dim).unsqueeze(0).transpose(0, -2).squeeze(-2).contiguous()
        return proj[0], proj[1], proj[2]
    w_q, w_k, w_v = in_proj_weight.chunk(3)
    b_q, b_k, b_v = in_proj_bias.chunk(3) if in_proj_bias is not None else (None, None, None)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def _attn_mask_3d(mask, tgt_len: int, src_len: int, rows: int):
    """attn_mask checked against (L, S) or (N·heads, L, S), and given its batch dim."""
    if mask is None:
        return None
    want = (tgt_len, src_len) if mask.ndim == 2 else (rows, tgt_len, src_len)
    if tuple(mask.shape) != want:
        raise RuntimeError(f"The shape of the {mask.ndim}D attn_mask is {mask.shape}, but should be {want}.")
    return mask.unsqueeze(0) if mask.ndim == 2 else mask


def _pad_masks(mask, key_padding_mask):
    """Both masks with one more key column (the key that was just appended)."""
    return (pad(mask, (0, 1)) if mask is not None else None,
            pad(key_padding_mask, (0, 1)) if key_padding_mask is not None else None)


def _append_bias_kv(k, v, bias_k, bias_v, static_k, static_v, bsz: int, mask, key_padding_mask):
    """One more key and value, learned, for every sequence (bias_k, bias_v), the masks padded to match."""
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k, v = cat([k, bias_k.repeat(1, bsz, 1)]), cat([v, bias_v.repeat(1, bsz, 1)])
        return (k, v, *_pad_masks(mask, key_padding_mask))
    if bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    if bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    return k, v, mask, key_padding_mask


def _to_heads(t, static, name: str, rows: int, head_dim: int):
    """(S, N, E) -> (N·heads, S, head_dim); a static key or value is given already so."""
    if static is not None:
        return _static(static, name, rows, head_dim)
    return t.view(t.shape[0], rows, head_dim).transpose(0, 1)


def _append_zero_attn(k, v, mask, key_padding_mask):
    """One more key and value of zeros, along the (now first) batch dim, the masks padded to match."""
    rows, _, head_dim = k.shape
    k = cat([k, zeros((rows, 1, head_dim), dtype=k.dtype, device=k.device)], dim=1)
    v = cat([v, zeros((rows, 1, head_dim), dtype=v.dtype, device=v.device)], dim=1)
    return (k, v, *_pad_masks(mask, key_padding_mask))


def _merge_key_padding_mask(mask, key_padding_mask, bsz: int, num_heads: int, src_len: int):
    """The key padding mask (N, S), repeated for every head, added to the attention mask."""
    if key_padding_mask is None:
        return mask
    for d, size in enumerate((bsz, src_len)):
        if key_padding_mask.shape[d] != size:
            raise AssertionError(f"Expected key_padded_mask.shape[{d}] to be {size}, but got "
                                 f"{key_padding_mask.shape[d]}")
    kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
    kpm = kpm.reshape(bsz * num_heads, 1, src_len)
    return kpm if mask is None else mask + kpm


def _attend_with_weights(q, k, v, mask, dropout_p: float):
    """softmax(q kᵀ / √d + mask) v, per head, written out so the weights can be returned."""
    q_scaled = q * math.sqrt(1.0 / q.shape[-1])
    scores = q_scaled @ k.transpose(-2, -1)
    if mask is not None:
        if mask.dtype != scores.dtype:   # torch adds the mask in baddbmm, which takes one dtype
            raise RuntimeError(f"Input dtypes must be the same, got: input {C_TYPE[mask._data.dtype.name]}, "
                               f"batch1: {C_TYPE[q._data.dtype.name]}, batch2: {C_TYPE[k._data.dtype.name]}")
        scores = mask + scores
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = nnops.dropout(weights, p=dropout_p)
    return weights @ v, weights


def _out_projection(heads, tgt_len: int, bsz: int, embed_dim: int, out_proj_weight, out_proj_bias):
    """The heads (L, N, heads, head_dim)-ordered, joined back to (L·N, E) and projected: (L, N, E)."""
    out = heads.contiguous().view(tgt_len * bsz, embed_dim)
    return linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, out.shape[1])


# -- power-average pooling, local response norm, triplet loss with any distance: torch's compositions
def _kernel_volume(kernel_size, nd):
    """The product of the kernel's sizes. torch unpacks them first (`kd, kw, kh = _triple(kernel_size)`), so a
    tuple of another length fails with Python's own words, before any pool runs."""
    k = tuple(kernel_size) if isinstance(kernel_size, (tuple, list)) else (kernel_size,) * nd
    if nd == 3:
        kd, kh, kw = k
    elif nd == 2:
        kh, kw = k
    return math.prod(k)


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd):
    max_pool, avg_pool = {1: (nnpool.max_pool1d, nnpool.avg_pool1d), 2: (nnpool.max_pool2d, nnpool.avg_pool2d),
                          3: (nnpool.max_pool3d, nnpool.avg_pool3d)}[nd]
    window = _kernel_volume(kernel_size, nd)
    if norm_type == float("inf"):
        return max_pool(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if norm_type == -float("inf"):
        return -max_pool(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg_pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg_pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    # sign · relu(|·|) keeps torch's nodes (and its 0 gradient where an average is negative)
    return (sign(out) * relu(out.abs())).mul(window).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """input / (k + α · mean of input² over `size` neighbouring channels)^β."""
    dim = input.ndim
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    div = input.mul(input)
    if dim == 3:
        div = pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = nnpool.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = input.size()
        div = div.view(sizes[0], 1, sizes[1], sizes[2], -1)
        div = pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = nnpool.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(sizes)
    return input / div.mul(alpha).add(k).pow(beta)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """nn.functional.ctc_loss: the reduction by name, checked first (torch.ctc_loss numbers it)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return _loss.ctc(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    distance = nnops.pairwise_distance if distance_function is None else distance_function
    dist_pos, dist_neg = distance(anchor, positive), distance(anchor, negative)
    if swap:
        dist_neg = minimum(dist_neg, distance(positive, negative))
    loss = (margin + dist_pos - dist_neg).clamp_min(0)
    return loss.sum() if reduction == "sum" else loss.mean() if reduction == "mean" else loss
