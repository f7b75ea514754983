"""The helpers torch.distributions' classes share: broadcasting parameters, the standard-normal draw
of rsample, probs <-> logits, and the property computed once on first use."""
from __future__ import annotations

from numbers import Number

from ..creation import empty, tensor
from ..dtypes import finfo, get_default_dtype
from ..functions import broadcast_tensors, log, log1p, sigmoid, softmax
from ..tensor import Tensor

euler_constant = 0.5772156649015329  # Euler Gamma constant

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits"]


def broadcast_all(*values):
    """Broadcast tensors and numbers together; a number becomes a tensor of the first tensor's dtype
    (the default dtype when all are numbers), as torch's does."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or objects "
                         "implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        options = dict(dtype=get_default_dtype())
        for value in values:
            if isinstance(value, Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = [v if isinstance(v, Tensor) else tensor(v, **options) for v in values]
    return broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim: int):
    """value summed over its rightmost `dim` dims."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return sigmoid(logits)
    return softmax(logits, dim=-1)


def clamp_probs(probs):
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return log(ps_clamped) - log1p(-ps_clamped)
    return log(ps_clamped)


class lazy_property:
    """A property computed on first use and then stored on the instance (probs from logits or back)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value
