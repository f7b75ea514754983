"""The loss functions on Tensors: reduction arguments (and the legacy size_average/reduce),
target checks, then the records of gradviz.ops.loss or a composition of public functions."""
from __future__ import annotations

import math
import warnings

import numpy as np

from .._args import argument_error, invalid_arguments, is_tensor, type_name
from ..creation import full_like, tensor as _tensor, zeros as _zeros, zeros_like
from ..dtypes import SCALAR_TYPE, floating_kernel, from_numpy_dtype, result_type
from ..ops.core import broadcast_error
from ..autograd.apply import _grad_state, apply
from ..ops.core import broadcast_shape
from ..ops.loss import (BCE_WITH_LOGITS, BINARY_CROSS_ENTROPY, CTC_LOSS, HUBER_LOSS, MSE_LOSS, MULTI_MARGIN_LOSS,
                        MULTILABEL_MARGIN_LOSS, NLL_LOSS, NLL_LOSS2D, SMOOTH_L1_LOSS, SOFT_MARGIN_LOSS, _reduced)
from .public import public
from .shape import broadcast_shapes, broadcast_tensors
from .pointwise import add_scalar, bool_subtraction, minimum, sub_scalar, where
from .nnops import logsigmoid, pairwise_distance


def check_class_weight(weight, n_classes: int, prefix: str = "") -> None:
    """A class weight is a vector with one entry per class, as torch checks it."""
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_classes):
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all {n_classes} classes or no classes "
                           f"but got weight tensor of shape: {list(weight.shape)}")


def check_ignore_index(fn: str, ignore_index) -> None:
    """torch's parser takes an int (or an int-like) for ignore_index: 1.5 or None is refused, not compared."""
    if not hasattr(type(ignore_index), "__index__"):
        raise argument_error(fn, "ignore_index", 5, "int", type_name(ignore_index))


_TARGET_DTYPES = (np.dtype(np.int64), np.dtype(np.uint8))   # dtypes: `in` then compares by identity first


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    t = target._data
    reduction = _legacy_reduction(size_average, reduce, reduction)
    check_ignore_index("nll_loss_nd", ignore_index)
    if input.ndim > 2:   # (N, C, d1, ...): every position one sample
        n, c = input.shape[0], input.shape[1]
        if t.ndim >= 1 and t.shape[0] != n:
            raise ValueError(f"Expected input batch_size ({n}) to match target batch_size ({t.shape[0]}).")
        if t.shape != (n,) + tuple(input.shape[2:]):
            raise RuntimeError(f"Expected target size {[n] + list(input.shape[2:])}, got {list(t.shape)}")
        if weight is not None and weight.numel() != c:   # torch's nll_loss2d counts the weight's elements only
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        weight = None if weight is None else weight.reshape(-1)
        if input.ndim != 4:   # as torch: viewed as (N, C, 1, d1·d2·…), one NllLoss2DBackward0, viewed back
            empty = input.numel() == 0
            flat = input.contiguous().view(n, c, 0, 0) if empty else input.contiguous().view(n, c, 1, -1)
            targets = target.contiguous().view(n, 0, 0) if empty else target.contiguous().view(n, 1, -1)
            out = nll_loss(flat, targets, weight, ignore_index=ignore_index, reduction=reduction)
            return out.view(t.shape) if reduction == "none" else out
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if input.ndim == 2 and (t.ndim == 0 or t.shape[0] != input.shape[0]):   # torch's nll_loss_nd, first
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 0}).")
    if input.ndim == 1 and t.ndim == 1 and t.shape[0] != 1:
        raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: {t.shape[0]}")
    if input.ndim <= 2 and t.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if t.dtype not in _TARGET_DTYPES:
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {SCALAR_TYPE[t.dtype.name]}")
    spatial = input.ndim == 4
    # out of bounds: below 0 or from the class count on, read as unsigned in one pass (a negative
    # int64 is then beyond any count); ignore_index looked at only when something is out of bounds
    bad = (t.view(np.uint64) if t.dtype.kind == "i" else t) >= input.shape[1 if spatial else -1]
    if bad.any() and (bad := bad & (t != ignore_index)).any():
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    if not spatial:
        check_class_weight(weight, input.shape[-1])
    floating_kernel("nll_loss2d_forward_out_frame" if spatial else "nll_loss_out_frame", input._data.dtype)
    w = None if weight is None else weight._data
    return apply(NLL_LOSS2D if spatial else NLL_LOSS, (input,), (t, w, reduction, ignore_index))


def _promoted(kernel: str | None, input, target):
    """Input and target, of shapes that broadcast, in the dtype torch computes a pointwise loss in,
    which must be floating point (the kernel's error otherwise): an integer target with a float32
    input, or an integer input with a float32 target, makes a float32 loss (NumPy alone would widen
    it to float64)."""
    message = broadcast_error(tuple(input.shape), tuple(target.shape))   # torch checks shapes first
    if message:
        raise RuntimeError(message)
    rt = result_type((input._data, target._data))
    if kernel is not None:
        floating_kernel(kernel, rt)
    if target._data.dtype != rt and rt == input._data.dtype:   # a lower-category target: no grad to keep
        target = target.to(from_numpy_dtype(rt))
    elif input._data.dtype.kind in "biu":   # an integer input never requires grad
        input = input.to(from_numpy_dtype(rt))
    return input, target


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average, reduce, reduction, stacklevel: int = 3, check: bool = True):
    """The reduction, or what the deprecated size_average/reduce pair means (with torch's warning,
    `stacklevel` naming the user's line); checked unless `check` is False."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "mean" if size_average and reduce else ("sum" if reduce else "none")
        warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{reduction}' "
                      "instead.", UserWarning, stacklevel=stacklevel)
    if check:
        _check_reduction(reduction)
    return reduction


def _weighted(losses, weight, input, reduction, mean_by_weight: bool):
    """torch's weighted mse/l1/huber (composed in Python there, so recorded as its nodes): each loss times
    its weight, then the reduction; the mean divides by the weights' sum (mse, l1) or counts (huber)."""
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")
    weighted = losses * weight
    if reduction == "none":
        return weighted
    if reduction == "sum":
        return weighted.sum()
    return weighted.sum() / weight.sum() if mean_by_weight else weighted.mean()


def _check_same_size(input, target):
    """The warning of torch's pointwise losses (mse, l1, smooth_l1, huber) whose target broadcasts
    against an input of another size; stacklevel 3 names the code that called the loss."""
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    _check_same_size(input, target)
    reduction = _legacy_reduction(size_average, reduce, reduction, check=weight is None)
    if weight is not None:
        a, b = broadcast_tensors(input, target)
        return _weighted((a - b).pow(2), weight, input, reduction, mean_by_weight=True)
    return apply(MSE_LOSS, _promoted("mse_cpu", input, target), (reduction,))


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_same_size(input, target)
    return apply(SMOOTH_L1_LOSS, _promoted("smooth_l1_cpu", input, target), (reduction, beta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if weight is None:
        _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_same_size(input, target)
    if weight is not None:
        losses = apply(HUBER_LOSS, _promoted("huber_cpu", *broadcast_tensors(input, target)), ("none", delta))
        return _weighted(losses, weight, input, reduction, mean_by_weight=False)
    return apply(HUBER_LOSS, _promoted("huber_cpu", input, target), (reduction, delta))


def _check_probabilities(p, t):
    """ATen's kernel checks each element's input, then its target, lying in [0, 1] (NaN does not)."""
    bad_p, bad_t = ~((p >= 0) & (p <= 1)), ~((t >= 0) & (t <= 1))
    bad = (bad_p | bad_t).reshape(-1)
    if bool(bad.any()):
        first = int(bad.argmax())
        which = "input" if bool(bad_p.reshape(-1)[first]) else "target"
        raise RuntimeError(f"all elements of {which} should be between 0 and 1")


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """−w (t log p + (1 − t) log(1 − p)), each log clamped at −100: one BinaryCrossEntropyBackward0
    node, with torch's checks in torch's order."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}) "
                         "is deprecated. Please ensure they have the same size.")
    shape = None if weight is None else tuple(broadcast_shapes(target.shape, weight.shape))   # or its error
    if weight is not None and weight.requires_grad and _grad_state.enabled:
        raise RuntimeError("The function 'binary_cross_entropy' is not differentiable with respect to argument "
                           "'weight'. This input cannot have requires_grad True.")
    p, t = input._data, target._data
    if t.dtype != p.dtype:
        raise RuntimeError(f"Found dtype {SCALAR_TYPE.get(t.dtype.name, t.dtype.name)} but expected "
                           f"{SCALAR_TYPE.get(p.dtype.name, p.dtype.name)}")
    floating_kernel("binary_cross_entropy", p.dtype)
    _check_probabilities(p, t)
    if shape is not None and shape != tuple(input.shape):   # the kernel's loss.mul_(weight), in place
        raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape {list(shape)}")
    return apply(BINARY_CROSS_ENTROPY, (input, target), (None if weight is None else weight._data, reduction))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    t = target._data
    if t.dtype == np.bool_:   # ATen's 1 − target
        raise bool_subtraction()
    if t.dtype.kind != "f":   # ATen's (1 − target).mul_(input): the loss is computed in place, in the target's dtype
        rt = result_type((input._data, t)).name
        raise RuntimeError(f"result type {SCALAR_TYPE.get(rt, rt)} can't be cast to the desired output type "
                           f"{SCALAR_TYPE.get(t.dtype.name, t.dtype.name)}")
    for w, first in ((pos_weight, True), (weight, False)):   # torch multiplies them into the loss in place
        if w is not None:
            shapes = (tuple(w.shape), tuple(input.shape))
            if (shape := broadcast_shape(*(shapes if first else shapes[::-1]))) != shapes[1]:
                raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape "
                                   f"{list(shape)}")
    w = None if weight is None else weight._data
    pw = None if pos_weight is None else pos_weight._data
    return apply(BCE_WITH_LOGITS, (input, target), (w, pw, reduction))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if target.requires_grad and _grad_state.enabled:
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
                           "This input cannot have requires_grad True.")
    a, b = _promoted(None, input, target)
    if tuple(a.shape) != tuple(b.shape):
        a, b = broadcast_tensors(a, b)
    return apply(SOFT_MARGIN_LOSS, (a,), (b._data, reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """mean max(0, −y (a₁ − a₂) + margin), as torch composes it."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduced(add_scalar(-target * (input1 - input2), margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """a where y = 1, max(0, margin − a) where y = −1, as torch composes it (margin − a as a tensor filled
    with margin, minus a)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    zeros = zeros_like(input)
    margin_clamp = (full_like(input, margin) - input).clamp_min(0)
    out = where(target != 1, margin_clamp, zeros) + where(target != -1, input, zeros)
    return _reduced(out, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """eᵃ − y a (log_input) or a − y log(a + ε), plus Stirling's term for y > 1 when full."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + where(target <= 1, 0.0, stirling)
    return _reduced(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """½ (log v + (a − y)² / v), v clamped below at ε without stopping its gradient (as torch's in-place clamp
    under no_grad)."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = input * 0 + var
    elif bool((var._data < 0).any()):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (input.ndim == var.ndim and
                  sum(y for x, y in zip(input.shape, var.shape) if x != y) == 1):
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    var = var + (var.clamp(min=eps) - var).detach()   # torch clamps a clone in place under no_grad
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduced(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """1 − cos(a₁, a₂) where y = 1, max(0, cos − margin) where y = −1, as torch composes it."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    d = target.ndim
    if d > 1 or input1.ndim != d + 1 or input2.ndim != d + 1:
        raise RuntimeError(f"{d}D target tensor expects {d + 1}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    prod = (input1 * input2).sum(d)
    mag1 = add_scalar((input1 * input1).sum(d), 1e-12)
    mag2 = add_scalar((input2 * input2).sum(d), 1e-12)
    cos = prod / (mag1 * mag2).sqrt()
    zeros = zeros_like(cos)
    pos = full_like(cos, 1) - cos   # torch's C++ 1 - cos: a tensor filled with 1, minus cos
    out = where(target == 1, pos, zeros) + where(target == -1, sub_scalar(cos, margin).clamp_min(0), zeros)
    return _reduced(out, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the same number of "
                           f"dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and negative "
                           f"{negative.ndim}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduced((add_scalar(d_pos, margin) - d_neg).clamp_min(0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    if size_average is not None or reduce is not None:
        reduction = _legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    d = input.ndim - 1
    loss = loss.sum(d) / input.shape[d]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduced(loss, reduction)


def _class_scores(input) -> int:
    """The number of classes of a hinge loss's input: a matrix of samples, a vector, or a scalar (one class)."""
    if not (input.ndim == 0 or (input.ndim <= 2 and input.shape[-1] != 0)):
        raise RuntimeError(f"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
                           f"{list(input.shape)}")
    return input.shape[-1] if input.ndim else 1


def _expect_dtype(a, expected) -> None:
    """The kernel's read of an array as `expected` (a target as int64, a weight as the input's dtype)."""
    if a.dtype != expected:
        raise RuntimeError(f"expected scalar type {SCALAR_TYPE[expected.name]} but found {SCALAR_TYPE[a.dtype.name]}")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Σ_{j ≠ y} w_y max(0, margin − x_y + x_j)^p / C per sample: one MultiMarginLossBackward0 node, with
    torch's checks in torch's order."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    if weight is not None and weight.requires_grad and _grad_state.enabled:
        raise RuntimeError("The function 'multi_margin_loss' is not differentiable with respect to argument "
                           "'weight'. This input cannot have requires_grad True.")
    c = _class_scores(input)
    n = input.shape[0] if input.ndim == 2 else 1
    if target.ndim > 1 or target.numel() != n:
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to the number of input "
                           f"samples (batch size). Expected target size [{n}], but got {list(target.shape)}. "
                           f"Input has shape {list(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    x, t = input._data, target._data
    floating_kernel("multi_margin_loss_cpu_kernel", x.dtype)
    _expect_dtype(t, np.dtype(np.int64))
    if weight is not None:
        _expect_dtype(weight._data, x.dtype)
    if bool(((t < 0) | (t >= c)).any()):
        raise RuntimeError("target out of range")
    w = None if weight is None else weight._data
    return apply(MULTI_MARGIN_LOSS, (input,), (t, p, float(margin), w, reduction))


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Σ_{j listed} Σ_{k not listed} max(0, 1 − x_j + x_k) / C per sample, the list of classes ending at the
    first −1: one MultilabelMarginLossBackward0 node, with torch's checks in torch's order."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    c = _class_scores(input)
    matrix = input.ndim == 2
    if tuple(target.shape) != tuple(input.shape) if matrix else (target.ndim > 1 or target.numel() != c):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}")
    x, t = input._data, target._data
    if t.size and bool((t < -1).any() or (t >= c).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    floating_kernel("multilabel_margin_loss_forward_out_frame", x.dtype)
    _expect_dtype(t, np.dtype(np.int64))
    return apply(MULTILABEL_MARGIN_LOSS, (input,), (t, reduction))


# -- CTC ----------------------------------------------------------------------------------------------
_CTC_SIGNATURES = (
    "Tensor log_probs, Tensor targets, tuple of ints input_lengths, tuple of ints target_lengths, int blank = 0, "
    "int reduction = at::Reduction::Mean, bool zero_infinity = False",
    "Tensor log_probs, Tensor targets, Tensor input_lengths, Tensor target_lengths, int blank = 0, "
    "int reduction = at::Reduction::Mean, bool zero_infinity = False")
_CTC_CHECKED = " (while checking arguments for ctc_loss_allocate_outputs)"


def _ctc_lengths(args: tuple) -> tuple:
    """torch.ctc_loss's two overloads: both lengths tensors (of an integer dtype) or both sequences of ints."""
    lengths = args[2:4]
    if all(is_tensor(v) for v in lengths):
        for name, v in zip(("input_lengths", "target_lengths"), lengths):
            if v._data.dtype.kind not in "iu":
                raise RuntimeError(f"{name} must be integral")
        return tuple(tuple(int(n) for n in v._data.reshape(-1).tolist()) for v in lengths)
    if all(isinstance(v, (tuple, list)) and all(isinstance(n, int) for n in v) for v in lengths):
        return tuple(tuple(v) for v in lengths)
    raise invalid_arguments("ctc_loss", args, {}, _CTC_SIGNATURES)


def _ctc_checks(log_probs, targets, input_lengths: tuple, target_lengths: tuple, blank: int) -> None:
    """ctc_loss_allocate_outputs' checks, in its order and words."""
    if log_probs.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional tensor for argument "
                           f"#1 'log_probs'{_CTC_CHECKED}")
    if not 1 <= targets.ndim <= 2:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional tensor for argument #2 "
                           f"'targets'{_CTC_CHECKED}")
    _, batch, labels = log_probs.shape
    if not 0 <= blank < labels:
        raise RuntimeError("blank must be in label range")
    for name, lengths in (("input_lengths", input_lengths), ("target_lengths", target_lengths)):
        if len(lengths) != batch:
            raise RuntimeError(f"{name} must be of size batch_size")
    for n in target_lengths:
        if n < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value {n}{_CTC_CHECKED}")
    expected = sum(target_lengths) if targets.ndim == 1 else batch
    if targets.shape[0] != expected:
        raise RuntimeError(f"Expected tensor to have size {expected} at dimension 0, but got size {targets.shape[0]} "
                           f"for argument #2 'targets'{_CTC_CHECKED}")
    longest = max(target_lengths, default=0)
    if targets.ndim == 2 and targets.shape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but got size "
                           f"{targets.shape[1]} for argument #2 'targets'{_CTC_CHECKED}")
    for n in input_lengths:
        if n < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value {n}{_CTC_CHECKED}")
        if n > log_probs.shape[0]:
            raise RuntimeError(f"Expected input_lengths to have value at most {log_probs.shape[0]}, but got value "
                               f"{n}{_CTC_CHECKED}")
    # torch's CPU kernel reads a label outside [0, C) past the end of log_probs (a number, not an error):
    # here it is refused, in the words nll_loss uses for a target out of range
    used = targets[:sum(target_lengths)] if targets.ndim == 1 else \
        np.concatenate([targets[i, :n] for i, n in enumerate(target_lengths)] or [targets[:0, 0]])
    outside = used[(used < 0) | (used >= labels)]
    if outside.size:
        raise IndexError(f"Target {int(outside[0])} is out of bounds.")


def ctc(log_probs, targets, input_lengths, target_lengths, blank: int, reduction: str, zero_infinity: bool):
    """The CTC loss of each sample (one CtcLossBackward0 node, torch's CPU kernel), then torch's reduction:
    inf losses replaced by 0 with zero_infinity, the mean divides each by its target length (at least 1).
    nn.functional.ctc_loss names the reduction, torch.ctc_loss numbers it."""
    code = {"none": 0, "mean": 1, "sum": 2}[reduction]
    input_lengths, target_lengths = _ctc_lengths((log_probs, targets, input_lengths, target_lengths, blank, code,
                                                  zero_infinity))
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    floating_kernel("ctc_loss_cpu", lp._data.dtype)
    t = targets._data.astype(np.int64, copy=False)
    _ctc_checks(lp, t, input_lengths, target_lengths, blank)
    losses = apply(CTC_LOSS, (lp,), (t, input_lengths, target_lengths, int(blank), bool(zero_infinity)))
    if zero_infinity:
        losses = where(losses == math.inf, _zeros((), dtype=losses.dtype, device=losses.device), losses)
    if reduction == "mean":
        return (losses / _tensor(target_lengths, dtype=losses.dtype, device=losses.device).clamp_min(1)).mean()
    if reduction == "sum":
        return losses.sum()
    return losses if batched else losses.squeeze(0)


@public
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0, zero_infinity=False):
    """torch.ctc_loss: nn.functional's under ATen's signature, the reduction an integer (1 mean, 2 sum,
    anything else none). Its default is none: torch's Python binding reads the schema's
    at::Reduction::Mean default as 0."""
    if not isinstance(reduction, int) or isinstance(reduction, bool):
        raise invalid_arguments("ctc_loss", (log_probs, targets, input_lengths, target_lengths, blank, reduction),
                                {}, _CTC_SIGNATURES)
    named = {1: "mean", 2: "sum"}.get(reduction, "none")
    return ctc(log_probs, targets, input_lengths, target_lengths, blank, named, zero_infinity)
