"""The loss functions on Tensors: reduction arguments (and the legacy size_average/reduce),
target checks, then the records of gradviz.ops.loss or a composition of public functions."""
from __future__ import annotations

import math
import warnings

import numpy as np

from ..dtypes import from_numpy_dtype, result_type
from ..autograd.apply import _grad_state, apply
from ..ops.core import broadcast_shape
from ..ops.loss import BCE_WITH_LOGITS, HUBER_LOSS, MSE_LOSS, NLL_LOSS, SMOOTH_L1_LOSS, SOFT_MARGIN_LOSS, _reduced
from .shape import broadcast_tensors
from .pointwise import minimum, where
from .nnops import logsigmoid, pairwise_distance


def check_class_weight(weight, n_classes: int, prefix: str = "") -> None:
    """A class weight is a vector with one entry per class, as torch checks it."""
    if weight is not None and (weight.ndim != 1 or weight.shape[0] != n_classes):
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all {n_classes} classes or no classes "
                           f"but got weight tensor of shape: {list(weight.shape)}")


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    t = target._data
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if input.ndim > 2:   # (N, C, d1, ...): the class dim moved last, every position one sample
        n, c = input.shape[0], input.shape[1]
        if t.ndim >= 1 and t.shape[0] != n:
            raise ValueError(f"Expected input batch_size ({n}) to match target batch_size ({t.shape[0]}).")
        if t.shape != (n,) + tuple(input.shape[2:]):
            raise RuntimeError(f"Expected target size {[n] + list(input.shape[2:])}, got {list(t.shape)}")
        if weight is not None and weight.numel() != c:   # torch's nll_loss2d counts the weight's elements only
            raise RuntimeError("weight tensor should be defined either for all or no classes")
        weight = None if weight is None else weight.reshape(-1)
        flat = nll_loss(input.movedim(1, -1).reshape(-1, c), target.reshape(-1), weight, ignore_index, reduction)
        return flat.reshape(t.shape) if reduction == "none" else flat
    if input.ndim == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    if t.dtype not in (np.int64, np.uint8):
        names = {"float32": "Float", "float64": "Double", "float16": "Half", "int32": "Int", "int16": "Short",
                 "int8": "Char", "bool": "Bool"}
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got {names.get(t.dtype.name, t.dtype.name)}")
    if input.ndim == 2 and t.shape != (input.shape[0],):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 0}).")
    bad = (t != ignore_index) & ((t < 0) | (t >= input.shape[-1]))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    check_class_weight(weight, input.shape[-1])
    w = None if weight is None else weight._data
    return apply(NLL_LOSS, (input,), (t, w, reduction, ignore_index))


def _promoted(input, target):
    """The target in the dtype torch computes a pointwise loss in: an integer target with a
    float32 input makes a float32 loss (NumPy alone would widen it to float64)."""
    rt = result_type((input._data, target._data))
    if target._data.dtype != rt and rt == input._data.dtype:   # a lower-category target: no grad to keep
        target = target.to(from_numpy_dtype(rt))
    return input, target


def mse_loss(input, target, reduction="mean"):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return apply(MSE_LOSS, _promoted(input, target), (reduction,))


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_same_size(input, target):
    if tuple(input.shape) != tuple(target.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", stacklevel=3)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    _check_reduction(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_same_size(input, target)
    return apply(SMOOTH_L1_LOSS, _promoted(input, target), (reduction, beta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    _check_reduction(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_same_size(input, target)
    return apply(HUBER_LOSS, _promoted(input, target), (reduction, delta))


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")
    for t, first in ((pos_weight, True), (weight, False)):   # torch multiplies them into the loss in place
        if t is not None:
            shapes = (tuple(t.shape), tuple(input.shape))
            if (shape := broadcast_shape(*(shapes if first else shapes[::-1]))) != shapes[1]:
                raise RuntimeError(f"output with shape {list(input.shape)} doesn't match the broadcast shape "
                                   f"{list(shape)}")
    w = None if weight is None else weight._data
    pw = None if pos_weight is None else pos_weight._data
    return apply(BCE_WITH_LOGITS, (input, target), (w, pw, reduction))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _check_reduction(reduction)
    if target.requires_grad and _grad_state.enabled:
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect to argument 'target'. "
                           "This input cannot have requires_grad True.")
    a, b = _promoted(input, target)
    if tuple(a.shape) != tuple(b.shape):
        a, b = broadcast_tensors(a, b)
    return apply(SOFT_MARGIN_LOSS, (a,), (b._data, reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None, reduction="mean"):
    """mean max(0, −y (a₁ − a₂) + margin), as torch composes it."""
    _check_reduction(reduction)
    if not input1.ndim == input2.ndim == target.ndim:
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension but got sizes: "
                           f"input1: {input1.shape}, input2: {input2.shape}, target: {target.shape} ")
    return _reduced((-target * (input1 - input2) + margin).clamp_min(0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """a where y = 1, max(0, margin − a) where y = −1, as torch composes it."""
    _check_reduction(reduction)
    zeros = input * 0
    out = where(target != 1, (margin - input).clamp_min(0), zeros) + where(target != -1, input, zeros)
    return _reduced(out, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """eᵃ − y a (log_input) or a − y log(a + ε), plus Stirling's term for y > 1 when full."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
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
    _check_reduction(reduction)
    d = target.ndim
    if d > 1 or input1.ndim != d + 1 or input2.ndim != d + 1:
        raise RuntimeError(f"{d}D target tensor expects {d + 1}D input tensors, but found inputs with sizes "
                           f"{list(input1.shape)} and {list(input2.shape)}.")
    prod = (input1 * input2).sum(d)
    mag1 = (input1 * input1).sum(d) + 1e-12
    mag2 = (input2 * input2).sum(d) + 1e-12
    cos = prod / (mag1 * mag2).sqrt()
    zeros = cos * 0
    out = where(target == 1, 1 - cos, zeros) + where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduced(out, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    _check_reduction(reduction)
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
    return _reduced((d_pos - d_neg + margin).clamp_min(0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    d = input.ndim - 1
    loss = loss.sum(d) / input.shape[d]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduced(loss, reduction)
