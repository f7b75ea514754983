"""gradviz.nn.functional: the functional layer API, named as torch.nn.functional."""
from __future__ import annotations

from ..creation import _rng
from ..ops.core import apply
from ..ops.linalg import linear  # noqa: F401
from ..ops.loss import mse_loss, nll_loss  # noqa: F401
from ..ops.op import Op
from ..ops.pointwise import gelu, leaky_relu, relu, sigmoid, softplus, tanh  # noqa: F401
from ..ops.reduce import log_softmax, softmax  # noqa: F401




def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
    logp = log_softmax(input, 1 if input.ndim > 1 else 0)
    if target.is_floating_point():   # class probabilities
        losses = -(target * logp).sum(1 if input.ndim > 1 else 0)
        if reduction == "none":
            return losses
        return losses.sum() if reduction == "sum" else losses.mean()
    loss = nll_loss(logp, target, weight, ignore_index, reduction)
    if label_smoothing:
        smooth = -logp.mean(1 if input.ndim > 1 else 0)
        smooth = smooth if reduction == "none" else (smooth.sum() if reduction == "sum" else smooth.mean())
        loss = loss * (1 - label_smoothing) + smooth * label_smoothing
    return loss


DROPOUT = Op("dropout", "NativeDropoutBackward0", "c = a ⊙ mask / (1 − p)",
             lambda xp, a, mask, p: a * mask / (1 - p),
             vjp=(lambda xp, g, c, a, mask, p: g * mask / (1 - p),), vjp_formulas=("ḡ ⊙ mask / (1 − p)",),
             params=("mask", "p"))


def dropout(input, p=0.5, training=True, inplace=False):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0
    mask = (_rng().random(input.shape) >= p).astype(input._data.dtype)
    return apply(DROPOUT, (input,), (mask, p))


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    from ..ops.pointwise import clamp, log
    # PyTorch clamps the logs at -100 so that p = 0 or 1 gives a finite loss
    losses = -(target * clamp(log(input), min=-100) + (1 - target) * clamp(log(1 - input), min=-100))
    if weight is not None:
        losses = losses * weight
    if reduction == "none":
        return losses
    return losses.sum() if reduction == "sum" else losses.mean()


def one_hot(tensor, num_classes=-1):
    import numpy as np
    from ..tensor import Tensor
    n = int(tensor._data.max()) + 1 if num_classes == -1 else num_classes
    return Tensor._make(np.eye(n, dtype=np.int64)[tensor._data])


