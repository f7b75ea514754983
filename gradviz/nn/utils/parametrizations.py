"""torch.nn.utils.parametrizations: weight_norm as a parametrization (w = g ⊙ v / ‖v‖, with g
and v the originals)."""
from __future__ import annotations

from ...functions.nnops import _weight_norm, norm_except_dim
from ..modules.module import Module
from . import parametrize


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name: str = "weight", dim: int = 0):
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
