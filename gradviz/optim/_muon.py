"""Muon (torch.optim.Muon): momentum whose update is orthogonalised by a Newton–Schulz iteration
that torch runs in bfloat16.

gradviz has no bfloat16 dtype; the iteration is carried on float32 arrays rounded to bfloat16
(round to nearest even, as torch converts) after every operation where torch stores a bfloat16
result. torch accumulates its bfloat16 products in float32, as NumPy's float32 matmul does here,
in another order: a sum that lands within a float32 rounding of a bfloat16 tie can round the
other way, and the iteration carries the difference on (docs/fidelity.md gives the measured
agreement)."""
from __future__ import annotations

import math

import numpy as np

from ..backend import namespace_of
from .algorithms import _check, _lerp_
from .optimizer import Optimizer, state_tensor

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


def bfloat16_round(a):
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32; NaN stays NaN."""
    xp = namespace_of(a)
    a = xp.asarray(a, dtype=np.float32)
    bits = a.view(np.uint32)
    rounded = (bits + (np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))) & np.uint32(0xFFFF0000)
    return xp.where(xp.isnan(a), a, rounded.view(np.float32))


def _addmm(c, a, b, beta: float, alpha: float = 1.0):
    """torch.addmm on bfloat16 on the CPU: a @ b summed in float32, then beta·c + alpha·(a @ b) with the
    float32 coefficients in one rounding (torch's kernel fuses it), rounded once to bfloat16."""
    fused = np.float64(np.float32(beta)) * c + np.float64(np.float32(alpha)) * (a @ b).astype(np.float64)
    return bfloat16_round(fused.astype(np.float32))


def zeropower_via_newtonschulz(grad, ns_coefficients: tuple, ns_steps: int, eps: float):
    """torch's quintic Newton–Schulz iteration: grad (2-D) pushed towards U·Vᵀ of its SVD, in bfloat16."""
    _check(ns_steps < 100, "Number of steps must be less than 100 for computational efficiency")
    _check(grad.ndim == 2, "Input tensor gradient must be a 2D matrix")
    _check(len(ns_coefficients) == 3, "Coefficients must be a tuple of exactly 3 values")
    a, b, c = ns_coefficients
    tall = grad.shape[0] > grad.shape[1]
    x = bfloat16_round(grad.astype(np.float32))   # a float64 gradient goes through float32, as torch's cast
    if tall:
        x = x.T
    norm = bfloat16_round(np.sqrt((x.astype(np.float32) ** 2).sum(dtype=np.float32)))
    x = bfloat16_round(x / max(norm, bfloat16_round(np.float32(eps))))
    for _ in range(ns_steps):
        gram = bfloat16_round(x @ x.T)
        update = _addmm(gram, gram, gram, beta=b, alpha=c)
        x = _addmm(x, update, x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn, shape) -> float:
    """Keller Jordan's √max(1, A/B) ('original', the default) or Moonshot's 0.2·√max(A, B)."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return lr * math.sqrt(max(1, rows / cols))
    return lr * (0.2 * math.sqrt(max(rows, cols)) if adjust_lr_fn == "match_rms_adamw" else 1.0)


class Muon(Optimizer):
    """For 2-D weights: B ← μB + (1 − μ)g (lerp), the update g + μ(B − g) (Nesterov) or B orthogonalised
    by Newton–Schulz, decoupled weight decay, then x ← x − lr·√max(1, rows/cols)·update."""

    def __init__(self, params, lr: float = 1e-3, weight_decay: float = 0.1, momentum: float = 0.95,
                 nesterov: bool = True, ns_coefficients: tuple = (DEFAULT_A, DEFAULT_B, DEFAULT_C), eps: float = EPS,
                 ns_steps: int = DEFAULT_NS_STEPS, adjust_lr_fn: str | None = None) -> None:
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 <= momentum, f"momentum should be >= 0 but is: {momentum}")
        _check(0.0 <= weight_decay, f"weight decay should be >= 0 but is: {weight_decay}")
        _check(adjust_lr_fn in (None, "original", "match_rms_adamw"),
               f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, nesterov=nesterov,
                        ns_coefficients=ns_coefficients, eps=eps, ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                _check(p.ndim == 2, "Muon only supports 2D parameters whereas we found a parameter with size: "
                                    f"{p.size()}")

    def _update(self, p, x, g, state, group) -> None:
        if p.is_complex():
            raise RuntimeError("Muon does not support complex parameters")
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = state_tensor(p)
        momentum = group["momentum"]
        buf = state["momentum_buffer"]._data
        _lerp_(buf, g, 1 - momentum)
        if group["nesterov"]:
            update = g.copy()
            _lerp_(update, buf, momentum)
        else:
            update = buf
        update = zeropower_via_newtonschulz(update, group["ns_coefficients"], group["ns_steps"], group["eps"])
        lr = group["lr"]
        x *= 1 - lr * group["weight_decay"]
        x += -_adjust_lr(lr, group["adjust_lr_fn"], p.shape) * update.astype(x.dtype)
