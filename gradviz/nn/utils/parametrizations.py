"""torch.nn.utils.parametrizations: weight_norm as a parametrization (w = g ⊙ v / ‖v‖, with g
and v the originals)."""
from __future__ import annotations

from ...autograd.apply import apply
from ...ops.reparam import WEIGHT_NORM
from ..modules.module import Module
from . import parametrize


def _norm_except_dim(v, dim):
    if dim == -1:
        return v.norm()
    return v.norm(2, tuple(i for i in range(v.ndim) if i != dim), keepdim=True)


def _weight_norm(v, g, dim=0):
    """torch._weight_norm: one fused node for the first or last dim, else (another dim, or −1: the
    whole tensor) the product v ⊙ g / ‖v‖ as separate nodes."""
    if dim in (0, v.ndim - 1):
        return apply(WEIGHT_NORM, (v, g), (dim,))
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name: str = "weight", dim: int = 0):
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
