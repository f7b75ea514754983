"""Losses that PyTorch records as one node each (NllLossBackward0, MseLossBackward0)."""
from __future__ import annotations

import numpy as np

from .core import apply
from .op import Op


def _rows(logp, target):
    """Index of each sample's target class: (arange(N), target), or (target,) for one sample."""
    if logp.ndim == 1:
        return (target,)
    return (np.arange(logp.shape[0]), target)


def _weights(logp, target, weight, ignore_index):
    dtype = getattr(logp, "_data", logp).dtype   # logp is a Tensor when the VJP runs with create_graph
    w = np.ones(target.shape, dtype=dtype) if weight is None else weight[target].astype(dtype)
    return w * (target != ignore_index)


def _reduce(xp, losses, w, reduction):
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / w.sum()


def _nll_forward(xp, logp, target, weight, reduction, ignore_index):
    safe = np.where(target == ignore_index, 0, target)
    w = _weights(logp, safe, weight, ignore_index)
    return _reduce(xp, -logp[_rows(logp, safe)] * w, w, reduction)


def _nll_vjp(xp, g, c, logp, target, weight, reduction, ignore_index):
    safe = np.where(target == ignore_index, 0, target)
    w = _weights(logp, safe, weight, ignore_index)
    per_sample = g if reduction == "none" else (g if reduction == "sum" else g / w.sum())
    return xp.index_scatter(-per_sample * w, logp.shape, _rows(logp, safe), True)


NLL_LOSS = Op("nll_loss", "NllLossBackward0", "ℓ = −mean_i log p[i, yᵢ]", _nll_forward, vjp=(_nll_vjp,),
              vjp_formulas=("−ḡ/N at each target class",), params=("target", "weight", "reduction", "ignore_index"),
              saves=("target",))


def _mse_forward(xp, a, b, reduction):
    d = (a - b) * (a - b)
    return d if reduction == "none" else (d.sum() if reduction == "sum" else d.mean())


def _mse_grad(xp, g, a, b, reduction):
    scale = 2.0 if reduction != "mean" else 2.0 / max(int(np.prod(np.broadcast_shapes(a.shape, b.shape))), 1)
    return g * (a - b) * scale


MSE_LOSS = Op("mse_loss", "MseLossBackward0", "ℓ = mean (a − b)²", _mse_forward,
              vjp=(lambda xp, g, c, a, b, r: _mse_grad(xp, g, a, b, r), lambda xp, g, c, a, b, r: -_mse_grad(xp, g, a, b, r)),
              vjp_formulas=("2ḡ(a − b)/N", "−2ḡ(a − b)/N"), args=("self", "target"), params=("reduction",),
              saves=("self", "target"))


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    t = target._data
    if input.ndim not in (1, 2):
        raise ValueError(f"nll_loss: expected input of shape (N, C) or (C,), got {list(input.shape)}; flatten the "
                         "extra dimensions into the batch first")
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    if input.ndim == 2 and t.shape != (input.shape[0],):
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target batch_size "
                         f"({t.shape[0] if t.ndim else 0}).")
    bad = (t != ignore_index) & ((t < 0) | (t >= input.shape[-1]))
    if bad.any():
        raise IndexError(f"Target {int(t[bad].reshape(-1)[0])} is out of bounds.")
    w = None if weight is None else weight._data
    return apply(NLL_LOSS, (input,), (t, w, reduction, ignore_index))


def mse_loss(input, target, reduction="mean"):
    return apply(MSE_LOSS, (input, target), (reduction,))
