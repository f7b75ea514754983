"""torch.nn.modules.linear: Identity and Linear."""
from __future__ import annotations

import math

from ... import creation
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module


class Linear(Module):
    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        # PyTorch's reset_parameters: kaiming_uniform_(a=√5) on the weight (U(−1/√in, 1/√in), its
        # bound computed as torch does), then U(−1/√in, 1/√in) on the bias
        self.weight = Parameter(creation.empty(out_features, in_features, dtype=dtype))
        bound = 1 / math.sqrt(in_features) if in_features else 0
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        self.bias = Parameter(creation.empty(out_features, dtype=dtype).uniform_(-bound, bound)) if bias else None

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class NonDynamicallyQuantizableLinear(Linear):
    """MultiheadAttention's output projection: a Linear by another name, as in PyTorch."""
