"""torch.nn.modules.normalization: LayerNorm, GroupNorm and RMSNorm."""
from __future__ import annotations

from ... import creation
from .. import functional as F
from ..parameter import Parameter
from .. import init
from .module import Module


def _ones_and_zeros(weight, bias) -> None:
    """The norms' reset_parameters, as torch's: the scale to ones and the shift to zeros (those there are)."""
    if weight is not None:
        init.ones_(weight)
    if bias is not None:
        init.zeros_(bias)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = Parameter(creation.empty(*shape, dtype=dtype)) if elementwise_affine else None
        self.bias = Parameter(creation.empty(*shape, dtype=dtype)) if elementwise_affine and bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _ones_and_zeros(self.weight, self.bias)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.weight = Parameter(creation.empty(num_channels, dtype=dtype)) if affine else None
        self.bias = Parameter(creation.empty(num_channels, dtype=dtype)) if affine and bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _ones_and_zeros(self.weight, self.bias)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = Parameter(creation.empty(*self.normalized_shape, dtype=dtype)) if elementwise_affine else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _ones_and_zeros(self.weight, None)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


class LocalResponseNorm(Module):
    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return "{size}, alpha={alpha}, beta={beta}, k={k}".format(**self.__dict__)
