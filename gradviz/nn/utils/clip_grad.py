"""Gradient clipping: rescale (or clamp) the .grad of parameters in place, as torch.nn.utils does."""
from __future__ import annotations

import math
import warnings
from typing import Iterable

import numpy as np

from ...backend import namespace_of
from ...tensor import Tensor


def _grads(parameters) -> tuple[list, list]:
    params = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    return params, [p.grad for p in params if p.grad is not None]


def _norm(a, norm_type: float):
    """‖a‖_p over every element, in a's own dtype (a 0-d array)."""
    xp = namespace_of(a)
    if norm_type == math.inf:
        return xp.abs(a).max() if a.size else xp.zeros((), a.dtype)
    if norm_type == -math.inf:
        return xp.abs(a).min() if a.size else xp.asarray(np.inf, a.dtype)
    if norm_type == 0:
        return xp.asarray((a != 0).sum(), dtype=a.dtype)
    if norm_type == 2:
        return xp.sqrt((a * a).sum())
    if norm_type == 1:
        return xp.abs(a).sum()
    return (xp.abs(a) ** norm_type).sum() ** (1.0 / norm_type)


def get_total_norm(tensors: Iterable, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The p-norm of the p-norms of each tensor (= the norm of all of them concatenated)."""
    tensors = [tensors] if isinstance(tensors, Tensor) else [t for t in tensors if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return Tensor._make(np.asarray(0.0, dtype=np.float32))
    norms = [_norm(t._data, norm_type) for t in tensors]
    xp = namespace_of(norms[0])
    total = _norm(xp.stack([xp.asarray(n) for n in norms]), norm_type)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    return Tensor._make(xp.asarray(total))


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor, foreach=None) -> None:
    """Scale every .grad by min(1, max_norm / (total_norm + 1e-6)), total_norm given (get_total_norm's)."""
    _, grads = _grads(parameters)
    if not grads:
        return
    data = total_norm._data if isinstance(total_norm, Tensor) else np.asarray(total_norm, dtype=np.float32)
    coef = namespace_of(data).minimum(float(max_norm) / (data + data.dtype.type(1e-6)), data.dtype.type(1.0))
    for g in grads:
        g._data *= coef.astype(g._data.dtype)
        g._bump()


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                    foreach=None) -> Tensor:
    """get_total_norm then clip_grads_with_norm_; returns the total norm before."""
    params, grads = _grads(parameters)
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(params, max_norm, total)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The deprecated name of clip_grad_norm_, with torch's FutureWarning."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of `torch.nn.utils.clip_grad_norm_`.",
                  FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every .grad into [−clip_value, clip_value] in place."""
    _, grads = _grads(parameters)
    clip_value = float(clip_value)
    for g in grads:
        xp = namespace_of(g._data)
        xp.clip(g._data, -clip_value, clip_value, out=g._data)
        g._bump()
