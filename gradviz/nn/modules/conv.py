"""torch.nn.modules.conv: the convolution layers, initialized as PyTorch's."""
from __future__ import annotations

import math

from ... import creation
from ...functions.conv import _tuple
from .. import functional as F
from ..parameter import Parameter
from .module import Module


def _uniform(shape, bound, dtype=None):
    return Parameter(creation.empty(*shape, dtype=dtype).uniform_(-bound, bound))


class _ConvNd(Module):
    _nd = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, padding_mode: str = "zeros", device=None, dtype=None):
        super().__init__()
        nd = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = _tuple(kernel_size, nd), _tuple(stride, nd), _tuple(dilation, nd)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string '{padding}', should be one of ['valid', 'same']")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            self.padding = padding
        else:
            self.padding = _tuple(padding, nd)
        self.padding_mode = padding_mode
        self.output_padding = (0,) * nd
        self.transposed = False
        # PyTorch's reset_parameters: kaiming_uniform_(a=√5) on the weight (U(−1/√fan_in, 1/√fan_in)),
        # then U(−1/√fan_in, 1/√fan_in) on the bias
        from .. import init
        fan_in = (in_channels // groups) * math.prod(self.kernel_size)
        bound = 1 / math.sqrt(fan_in) if fan_in else 0
        self.weight = Parameter(creation.empty(out_channels, in_channels // groups, *self.kernel_size, dtype=dtype))
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if bias:
            self.bias = _uniform((out_channels,), bound, dtype)
        else:
            self.register_parameter("bias", None)

    def _pads(self):
        """The explicit padding for a non-zeros padding_mode, as F.pad lists it (last dim first)."""
        if self.padding == "same":
            total = [d * (k - 1) for k, d in zip(self.kernel_size, self.dilation)]
            per = [(t // 2, t - t // 2) for t in total]
        elif self.padding == "valid":
            per = [(0, 0)] * self._nd
        else:
            per = [(p, p) for p in self.padding]
        return [v for lo_hi in reversed(per) for v in lo_hi]

    def forward(self, input):
        conv = F.conv1d if self._nd == 1 else F.conv2d
        if self.padding_mode != "zeros":
            padded = F.pad(input, self._pads(), mode=self.padding_mode)
            return conv(padded, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}")
        if self.padding != (0,) * self._nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * self._nd:
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class Conv1d(_ConvNd):
    _nd = 1


class Conv2d(_ConvNd):
    _nd = 2
