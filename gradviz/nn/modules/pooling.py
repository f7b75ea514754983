"""torch.nn.modules.pooling: max, average and adaptive pools."""
from __future__ import annotations

from ...functions.conv import _tuple
from .. import functional as F
from .module import Module


class _MaxPoolNd(Module):
    _fn = staticmethod(F.max_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices: bool = False,
                 ceil_mode: bool = False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.dilation, ceil_mode=self.ceil_mode,
                        return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    _fn = staticmethod(F.max_pool3d)


class AvgPool1d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 1)
        self.stride = _tuple(stride if stride is not None else kernel_size, 1)
        self.padding = _tuple(padding, 1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    _fn = staticmethod(F.avg_pool2d)

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return self._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                        self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool3d(AvgPool2d):
    _fn = staticmethod(F.avg_pool3d)


class _AdaptivePool(Module):
    def __init__(self, output_size, return_indices: bool = False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptivePool):
    def __init__(self, output_size):
        super().__init__(output_size)

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_AdaptivePool):
    def __init__(self, output_size):
        super().__init__(output_size)

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_AdaptivePool):
    def __init__(self, output_size):
        super().__init__(output_size)

    def forward(self, input):
        return F.adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool1d(_AdaptivePool):
    def forward(self, input):
        return F.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptivePool):
    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(_AdaptivePool):
    def forward(self, input):
        return F.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class _LPPoolNd(Module):
    _fn = staticmethod(F.lp_pool2d)

    def __init__(self, norm_type: float, kernel_size, stride=None, ceil_mode: bool = False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return self._fn(input, float(self.norm_type), self.kernel_size, self.stride, self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool1d)


class LPPool2d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool2d)


class LPPool3d(_LPPoolNd):
    _fn = staticmethod(F.lp_pool3d)


class _MaxUnpoolNd(Module):
    _fn, _nd = staticmethod(F.max_unpool2d), 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self._nd)
        self.stride = _tuple(stride if stride is not None else kernel_size, self._nd)
        self.padding = _tuple(padding, self._nd)

    def forward(self, input, indices, output_size=None):
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    _fn, _nd = staticmethod(F.max_unpool1d), 1


class MaxUnpool2d(_MaxUnpoolNd):
    _fn, _nd = staticmethod(F.max_unpool2d), 2


class MaxUnpool3d(_MaxUnpoolNd):
    _fn, _nd = staticmethod(F.max_unpool3d), 3
