"""gradviz.nn.functional: the functional layer API, named as torch.nn.functional."""
from __future__ import annotations

import numpy as _np

from .._args import argument_error as _argument_error, is_number as _is_number, type_name as _type_name

from ..functions.attention import group_norm, scaled_dot_product_attention  # noqa: F401
from ..functions.conv import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,  # noqa: F401
                              conv_transpose3d)
from ..autograd.apply import apply
from ..dtypes import SCALAR_TYPE
from ..functions.linalg import linear  # noqa: F401
from ..ops.loss import _reduced
from ..functions.loss import check_ignore_index as _check_ignore_index
from ..functions.loss import (_check_same_size, _legacy_reduction, _weighted, binary_cross_entropy,  # noqa: F401
                              binary_cross_entropy_with_logits, check_class_weight, huber_loss, mse_loss, nll_loss,
                              smooth_l1_loss)
from ..functions.nnops import (alpha_dropout, batch_norm, dropout, elu, embedding, embedding_bag, feature_alpha_dropout,
                               hardsigmoid, hardswish, hardtanh, layer_norm, logsigmoid, mish, pairwise_distance, relu6,
                               silu)
from ..functions.nnops import celu as _celu, celu_, selu as _selu, selu_, threshold as _threshold, threshold_  # noqa: F401
from ..functions.nnops import rrelu as _rrelu, rrelu_ as _rrelu_
from ..functions.pool import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d, adaptive_max_pool2d,
                              adaptive_max_pool3d,
                              avg_pool1d, avg_pool2d, avg_pool3d, fold, interpolate, max_pool1d, max_pool2d,
                              max_pool3d, pixel_shuffle, pixel_unshuffle, unfold)
from ..functions.pointwise import div as _div, div_scalar, mul_scalar, xlogy as _xlogy
from ..autograd.grad_mode import no_grad as _no_grad
from ..functions.pointwise import gelu, sigmoid, softplus, tanh  # noqa: F401
from ..functions.pointwise import leaky_relu as _leaky_relu, leaky_relu_ as _leaky_relu_, relu as _relu, relu_  # noqa: F401
from ..functions import reduce as _reduce
from ..functions.reduce import implicit_dim as _implicit_dim
# helpers under private names: torch.nn.functional has no `where` or `norm` of its own
from ..functions.linalg import norm as _norm
from ..functions.pointwise import masked_fill as _masked_fill, where as _where
from ..functions.shape import broadcast_tensors as _broadcast_tensors
from .._args import check_tensor as _check_tensor
from .._calling import plain as _plain
from .._warn import warn as _warn
from ..creation import empty_like as _empty_like, zeros_like as _zeros_like
from ..tensor import Tensor as _Tensor


# torch.relu, torch.celu, torch.selu and torch.threshold take no inplace=; torch.nn.functional's do
def relu(input, inplace=False):
    return relu_(input) if inplace else _relu(input)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    if not _is_number(negative_slope):   # a str or None: torch's parser's words, not NumPy's
        raise _argument_error("leaky_relu_" if inplace else "leaky_relu", "negative_slope", 2, "Number",
                              _type_name(negative_slope))
    if not isinstance(negative_slope, (int, float)):   # a 0-d tensor or NumPy scalar is read as its number
        negative_slope = negative_slope.item()
    return _leaky_relu_(input, negative_slope) if inplace else _leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    return _leaky_relu_(input, negative_slope)


def celu(input, alpha=1.0, inplace=False):
    return celu_(input, alpha) if inplace else _celu(input, alpha)


def selu(input, inplace=False):
    return selu_(input) if inplace else _selu(input)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def elu_(input, alpha=1.0):
    _check_tensor("elu_", "input", input, 1)
    return elu(input, alpha, inplace=True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    return (_rrelu_ if inplace else _rrelu)(input, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    return _rrelu_(input, lower, upper, training)


def threshold(input, threshold, value, inplace=False):
    return threshold_(input, threshold, value) if inplace else _threshold(input, threshold, value)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    """log_softmax over the class dim (dim 1, or 0 for one sample), then nll_loss for class
    indices or −Σ target ⊙ log p for class probabilities, with PyTorch's label smoothing."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_ignore_index("cross_entropy_loss", ignore_index)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    classes = 1 if input.ndim > 1 else 0
    n_classes = input.shape[classes] if input.ndim else 1
    logp = _reduce.log_softmax(input, classes)
    along_classes = [n_classes if d == classes else 1 for d in range(input.ndim)]   # weight's view against (N, C, ...)
    if tuple(target.shape) == tuple(input.shape):   # class probabilities: torch reads them off the shape alone
        if not target.is_floating_point():
            raise RuntimeError(f"Expected floating point type for target with class probabilities, got "
                               f"{SCALAR_TYPE[target._data.dtype.name]}")
        check_class_weight(weight, n_classes, "cross_entropy: ")
        w = None if weight is None else weight.reshape(*along_classes)
        if label_smoothing:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        terms = logp * target if w is None else logp * target * w   # then summed and negated, as torch does
        if reduction == "none":
            return -terms.sum(classes)
        total = -terms.sum()
        return total if reduction == "sum" else div_scalar(total, input.numel() // n_classes)
    # class indices: nll_loss checks their shape, then their dtype, in its words
    loss = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return loss
    w = None if weight is None else weight.reshape(*along_classes)   # nll_loss has checked it
    kept = target != ignore_index
    smooth = _masked_fill(-(logp if w is None else logp * w).sum(classes), ~kept, 0.0)
    if reduction == "mean":
        denom = kept.sum() if weight is None else weight[_where(kept, target, 0)][kept].sum()
        smooth = smooth.sum() / denom
    elif reduction == "sum":
        smooth = smooth.sum()
    return mul_scalar(loss, 1 - label_smoothing) + mul_scalar(smooth, label_smoothing / n_classes)


def one_hot(tensor, num_classes=-1):
    _check_tensor("one_hot", "input", tensor, 1)
    if isinstance(num_classes, bool) or not hasattr(type(num_classes), "__index__"):
        where = "" if num_classes is None else " (position 2)"   # torch's parser words None apart
        raise TypeError(f"one_hot(): argument 'num_classes'{where} must be int, not {_type_name(num_classes)}")
    num_classes = num_classes.__index__()
    if tensor._data.dtype != _np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if not tensor._data.size and num_classes <= 0:
        raise RuntimeError("Can not infer total number of classes from empty tensor.")
    if tensor._data.size and int(tensor._data.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    n = int(tensor._data.max()) + 1 if num_classes == -1 else num_classes
    if tensor._data.size and int(tensor._data.max()) >= n:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return _Tensor._make(_np.eye(n, dtype=_np.int64)[tensor._data])


# -- compositions: PyTorch records these as several nodes too ------------------------------------
def softsign(input):
    return input / (input.abs() + 1)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """torch.softmax, its dim found as torch's nn.functional finds it when left out (with a warning)."""
    return _reduce.softmax(input, _implicit_dim(input, dim, "softmax", _stacklevel), dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _reduce.log_softmax(input, _implicit_dim(input, dim, "log_softmax", _stacklevel), dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return _reduce.softmax(-input, _implicit_dim(input, dim, "softmin", _stacklevel), dtype)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(‖input‖_p, eps) along dim, recorded as torch's Python writes it (clamp_min, expand_as)."""
    norm = _norm(input, p, dim, keepdim=True)
    if out is None:
        return input / norm.clamp_min(eps).expand_as(input)
    return _div(input, norm.clamp_min_(eps).expand_as(input), out=out)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_same_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction, check=weight is None)
    if weight is not None:
        return _weighted((input - target).abs(), weight, input, reduction, mean_by_weight=True)
    return _reduced((input - target).abs(), reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise target ⊙ (log target − input), with 0 where target is 0 (the limit of t log t), as torch's
    kernel writes it: xlogy(target, target) − target ⊙ input."""
    if reduction == "mean" and size_average is None and reduce is None:   # as torch: not for the legacy pair
        _warn("reduction: 'mean' divides the total loss by both the batch size and the support size."
              "'batchmean' divides only by the batch size, and aligns with the KL div math definition."
              "'mean' will be changed to behave the same as 'batchmean' in the next major release.")
    if reduction != "batchmean" or size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    if log_target:
        losses = target.exp() * (target - input)
    else:   # as torch: xlogy(t, t) is 0 where t is 0 (its gradient in t there is nan, as torch's)
        losses = _xlogy(target, target) - target * input
    if reduction == "batchmean":
        return losses.sum() / (input.shape[0] if input.ndim else 1)
    return _reduced(losses, reduction)


def gumbel_softmax(logits, tau: float = 1, hard: bool = False, eps: float = 1e-10, dim: int = -1):
    """softmax((logits + g) / tau) with Gumbel(0, 1) noise g = −log(Exp(1)) drawn as torch draws it;
    hard: the one-hot of its argmax in the forward pass, the soft sample's gradient (straight through)."""
    if eps != 1e-10:
        _warn("`eps` parameter is deprecated and has no effect.")
    gumbels = -_empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Σ (x1 / max(‖x1‖, eps)) (x2 / max(‖x2‖, eps)) along dim, as torch's kernel records it: the
    norms are cloned and clamped in place with no grad, so the gradient flows through the norms
    even where eps bounds them (the graph shows CloneBackward0 and no clamp)."""
    x1, x2 = _broadcast_tensors(x1, x2)   # as PyTorch: broadcast first, then norms along dim
    n1 = _norm(x1, 2, dim, keepdim=True).clone()
    n2 = _norm(x2, 2, dim, keepdim=True).clone()
    with _no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


from .functional_layers import (adaptive_max_pool1d, dropout1d, dropout2d, dropout3d, gru_cell,  # noqa: E402,F401
                                instance_norm, lstm_cell, multi_head_attention_forward, pad, rms_norm, rnn_relu_cell,
                                rnn_tanh_cell)
from .functional_layers import (ctc_loss, local_response_norm, lp_pool1d, lp_pool2d, lp_pool3d,  # noqa: E402,F401
                                triplet_margin_with_distance_loss)
from ..functions.loss import (cosine_embedding_loss, gaussian_nll_loss, hinge_embedding_loss,
                              margin_ranking_loss, multi_margin_loss, multilabel_margin_loss, multilabel_soft_margin_loss,
                              poisson_nll_loss, soft_margin_loss, triplet_margin_loss)
from ..functions.nnops import bilinear, glu, hardshrink, pdist, prelu, softshrink, tanhshrink  # noqa: E402,F401
from ..functions.pool import affine_grid, grid_sample, upsample_bilinear, upsample_nearest  # noqa: E402,F401
from ..functions.pool import channel_shuffle, max_unpool1d, max_unpool2d, max_unpool3d  # noqa: E402,F401


# torch.nn.functional writes its functions in Python, outside torch's argument parser: they take
# neither NumPy's argument names nor out= (F.softmax(x, axis=1) is a TypeError), so the ones shared
# with gradviz.* are bound here as their modules write them
for _name, _fn in list(globals().items()):
    if not _name.startswith("_") and callable(_fn):
        globals()[_name] = _plain(_fn)
