"""torch.nn.modules.padding: the padding layers, constant (and zero), reflection, replication and
circular, for 1-d, 2-d and 3-d inputs; each is F.pad with its mode."""
from __future__ import annotations

from ...functions.conv import _tuple
from .. import functional as F
from .module import Module


class _PadNd(Module):
    """padding (an int for every side, or one (left, right, top, bottom, front, back) pair per dim, as
    F.pad lists them) applied with `_mode`."""
    _mode, _sides = "constant", 2

    def __init__(self, padding):
        super().__init__()
        self.padding = _tuple(padding, self._sides)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _sides = 2


class ConstantPad2d(_ConstantPadNd):
    _sides = 4


class ConstantPad3d(_ConstantPadNd):
    _sides = 6


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_PadNd):
    _mode, _sides = "reflect", 2


class ReflectionPad2d(_PadNd):
    _mode, _sides = "reflect", 4


class ReflectionPad3d(_PadNd):
    _mode, _sides = "reflect", 6


class ReplicationPad1d(_PadNd):
    _mode, _sides = "replicate", 2


class ReplicationPad2d(_PadNd):
    _mode, _sides = "replicate", 4


class ReplicationPad3d(_PadNd):
    _mode, _sides = "replicate", 6


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        dims = self._sides // 2
        if input.ndim not in (dims + 1, dims + 2):
            raise ValueError(f"expected {dims + 1}D or {dims + 2}D input (got {input.ndim}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    _sides = 2


class CircularPad2d(_CircularPadNd):
    _sides = 4


class CircularPad3d(_CircularPadNd):
    _sides = 6
