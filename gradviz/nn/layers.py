"""The layer modules of torch.nn beyond the basics: convolutions, pools, norms, channel
dropout, recurrent cells and layers, multi-head attention and the resampling layers.
Parameters are initialized as PyTorch's, and reprs print as torch's."""
from __future__ import annotations

import math
import numbers

from .. import creation
from ..functions.conv import _tuple
from . import functional as F
from .functional_layers import _canonical_mask
from .modules import BatchNorm1d, Linear, Module, Parameter, _NormBase


def _uniform(shape, bound, dtype=None):
    return Parameter(creation.empty(*shape, dtype=dtype).uniform_(-bound, bound))


# -- convolutions ----------------------------------------------------------------------------------
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
        from . import init
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


# -- pools ------------------------------------------------------------------------------------------
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
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


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


class AdaptiveMaxPool2d(_AdaptivePool):
    def forward(self, input):
        return F.adaptive_max_pool2d(input, self.output_size, self.return_indices)


# -- normalization ------------------------------------------------------------------------------------
class BatchNorm2d(BatchNorm1d):
    """Batch norm over (N, C, H, W): each channel with the statistics of its N·H·W values."""

    def _check_input_dim(self, input):
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")


class BatchNorm3d(BatchNorm1d):
    """Batch norm over (N, C, D, H, W)."""

    def _check_input_dim(self, input):
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class GroupNorm(Module):
    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True, bias: bool = True,
                 device=None, dtype=None):
        super().__init__()
        if num_channels % num_groups:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups, self.num_channels, self.eps, self.affine = num_groups, num_channels, eps, affine
        self.weight = Parameter(creation.ones(num_channels, dtype=dtype)) if affine else None
        self.bias = Parameter(creation.zeros(num_channels, dtype=dtype)) if affine and bias else None

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(_NormBase):
    """Each (sample, channel) normalized with its own statistics; an input without the batch
    dimension is one sample. Off by default: the scale and shift, and running statistics."""
    spatial_dims = 2

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float = 0.1, affine: bool = False,
                 track_running_stats: bool = False, device=None, dtype=None, *, bias: bool = True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias)

    def forward(self, input):
        batched = self.spatial_dims + 2
        if input.ndim not in (batched - 1, batched):
            raise ValueError(f"expected {batched - 1}D or {batched}D input (got {input.ndim}D input)")
        if input.ndim == batched - 1:
            return self.forward(input.unsqueeze(0)).squeeze(0)
        use_stats = self.training or not self.track_running_stats
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias, use_stats,
                               self.momentum if self.momentum is not None else 0.1, self.eps)


class InstanceNorm1d(_InstanceNorm):
    spatial_dims = 1


class InstanceNorm2d(_InstanceNorm):
    spatial_dims = 2


class InstanceNorm3d(_InstanceNorm):
    spatial_dims = 3


class RMSNorm(Module):
    def __init__(self, normalized_shape, eps=None, elementwise_affine: bool = True, device=None, dtype=None):
        super().__init__()
        self.normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.weight = Parameter(creation.ones(*self.normalized_shape, dtype=dtype)) if elementwise_affine else None

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"


# -- channel dropout ------------------------------------------------------------------------------------
class _FeatureDropout(Module):
    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(_FeatureDropout):
    def forward(self, input):
        return F.dropout1d(input, self.p, self.training)


class Dropout2d(_FeatureDropout):
    def forward(self, input):
        return F.dropout2d(input, self.p, self.training)


# -- resampling ------------------------------------------------------------------------------------------
class PixelShuffle(Module):
    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class Unfold(Module):
    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Unfold):
    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return f"output_size={self.output_size}, " + super().extra_repr()


class Upsample(Module):
    def __init__(self, size=None, scale_factor=None, mode: str = "nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.size, self.mode, self.align_corners = size, mode, align_corners
        self.scale_factor = float(scale_factor) if isinstance(scale_factor, (int, float)) else (
            tuple(float(f) for f in scale_factor) if scale_factor else None)
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             self.recompute_scale_factor)

    def extra_repr(self):
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class ZeroPad2d(Module):
    def __init__(self, padding):
        super().__init__()
        self.padding = _tuple(padding, 4)

    def forward(self, input):
        return F.pad(input, self.padding)

    def extra_repr(self):
        return f"{self.padding}"


# -- recurrent cells -------------------------------------------------------------------------------------
class _CellBase(Module):
    _gates, _kind = 1, "RNNCell"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        rows = self._gates * hidden_size
        self.weight_ih = Parameter(creation.empty(rows, input_size, dtype=dtype))
        self.weight_hh = Parameter(creation.empty(rows, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(creation.empty(rows, dtype=dtype))
            self.bias_hh = Parameter(creation.empty(rows, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for p in self.parameters():
            p.requires_grad_(False)
            p.uniform_(-bound, bound)
            p.requires_grad_(True)

    def _batched(self, input, hx):
        """PyTorch's checks of the input's and the hidden state's dims, then both with a batch dim
        (the hidden state zeros when not given); the cell function checks their sizes."""
        lstm = self._gates == 4
        if input.ndim not in (1, 2):
            raise ValueError(f"{self._kind}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        for i, h in enumerate(() if hx is None else hx if lstm else (hx,)):
            if h.ndim not in (1, 2):
                raise ValueError(f"{self._kind}: Expected {f'hx[{i}]' if lstm else 'hidden'} to be 1D or 2D, got "
                                 f"{h.ndim}D instead")
        if input.ndim == 1:
            input = input.unsqueeze(0)
            if hx is not None:
                hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0)) if lstm else hx.unsqueeze(0)
        if hx is None:
            zeros = creation.zeros(input.shape[0], self.hidden_size, dtype=input.dtype, device=input.device)
            hx = (zeros, zeros) if lstm else zeros
        return input, hx

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s


class RNNCell(_CellBase):
    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        x, h = self._batched(input, hx)
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        cell = F.rnn_tanh_cell if self.nonlinearity == "tanh" else F.rnn_relu_cell
        out = cell(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if input.ndim == 2 else out.squeeze(0)


class LSTMCell(_CellBase):
    _gates, _kind = 4, "LSTMCell"

    def forward(self, input, hx=None):
        x, hx = self._batched(input, hx)
        h, c = F.lstm_cell(x, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if input.ndim == 2 else (h.squeeze(0), c.squeeze(0))


class GRUCell(_CellBase):
    _gates, _kind = 3, "GRUCell"

    def forward(self, input, hx=None):
        x, h = self._batched(input, hx)
        out = F.gru_cell(x, h, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return out if input.ndim == 2 else out.squeeze(0)


# -- recurrent layers: the cell unrolled over time, per layer and direction --------------------------------
class _RNNBase(Module):
    _gates, _lstm, _kind = 1, False, "RNN"

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device=None, dtype=None, nonlinearity: str = "tanh"):
        super().__init__()
        if self._kind == "RNN" and nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        rate = float(dropout)   # torch converts it first: its error for what is no number
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an element "
                             "being zeroed")
        if dropout > 0 and num_layers == 1:
            import warnings
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                          stacklevel=3)
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
            if kind is int and value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size:
            raise NotImplementedError("LSTM with projections (proj_size > 0) is not supported")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, rate
        self.bidirectional, self.nonlinearity, self.proj_size = bidirectional, nonlinearity, proj_size
        dirs = 2 if bidirectional else 1
        rows = self._gates * hidden_size
        for layer in range(num_layers):
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                width = input_size if layer == 0 else hidden_size * dirs
                setattr(self, "weight_ih" + sfx, Parameter(creation.empty(rows, width, dtype=dtype)))
                setattr(self, "weight_hh" + sfx, Parameter(creation.empty(rows, hidden_size, dtype=dtype)))
                if bias:
                    setattr(self, "bias_ih" + sfx, Parameter(creation.empty(rows, dtype=dtype)))
                    setattr(self, "bias_hh" + sfx, Parameter(creation.empty(rows, dtype=dtype)))
        bound = 1.0 / math.sqrt(hidden_size)
        for p in self.parameters():
            p.requires_grad_(False)
            p.uniform_(-bound, bound)
            p.requires_grad_(True)

    def _weights(self, layer, d):
        sfx = f"_l{layer}" + ("_reverse" if d else "")
        get = lambda name: getattr(self, name + sfx, None)  # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh")

    def _step(self, xw, state, w_hh, b_hh):
        from .functional_layers import gru_step, lstm_step, rnn_relu_step, rnn_tanh_step
        if self._lstm:
            return lstm_step(xw, state, w_hh, b_hh)
        if self._gates == 3:
            return gru_step(xw, state, w_hh, b_hh)
        return (rnn_tanh_step if self.nonlinearity == "tanh" else rnn_relu_step)(xw, state, w_hh, b_hh)

    def _checked(self, input, hx):
        """PyTorch's checks of the input and hidden state, then both as (seq, batch, features) and
        (layers · directions, batch, hidden), the hidden state zeros when not given."""
        lstm, kind = self._lstm, self._kind
        if input.ndim not in (2, 3):
            raise ValueError(f"{kind}: Expected input to be 2D or 3D, got {input.ndim}D{' tensor' * (kind == 'RNN')} "
                             "instead")
        batched = input.ndim == 3
        if hx is not None:
            dims = (hx[0].ndim, hx[1].ndim) if lstm else (hx.ndim,)
            if any(d != input.ndim for d in dims):
                got = f"({dims[0]}-D, {dims[1]}-D) tensors" if lstm else f"{dims[0]}-D tensor"
                raise RuntimeError(f"For {'batched 3-D' if batched else 'unbatched 2-D'} input, "
                                   f"{'hx and cx' if lstm else 'hx'} should also be {input.ndim}-D but got {got}")
            if not batched:
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if lstm else hx.unsqueeze(1)
        input = input.unsqueeze(1) if not batched else input.transpose(0, 1) if self.batch_first else input
        weight = self.weight_ih_l0
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype ({weight.dtype}). Convert "
                             f"input: input.to({weight.dtype}), or convert model: model.to({input.dtype})")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")
        size = (self.num_layers * (2 if self.bidirectional else 1), input.shape[1], self.hidden_size)
        if hx is None:
            zeros = creation.zeros(*size, dtype=input.dtype, device=input.device)
            return input, (zeros, zeros) if lstm else zeros
        for i, h in enumerate(hx if lstm else (hx,)):
            if tuple(h.shape) != size:
                raise RuntimeError(f"Expected hidden{f'[{i}]' if lstm else ''} size {size}, got {list(h.shape)}")
        return input, hx

    def forward(self, input, hx=None):
        from ..functions.shape import cat, stack
        batched = input.ndim == 3
        input, hx = self._checked(input, hx)
        dirs = 2 if self.bidirectional else 1
        h0 = hx[0].unbind(0) if self._lstm else hx.unbind(0)
        c0 = hx[1].unbind(0) if self._lstm else None
        finals_h, finals_c = [], []
        layer_input = input
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                state = (h0[k], c0[k]) if self._lstm else h0[k]
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, d)
                # the input's projection for every time step at once, then one slice per step
                steps = F.linear(layer_input, w_ih, b_ih).unbind(0)
                seq = []
                for xw in (reversed(steps) if d else steps):
                    state = self._step(xw, state, w_hh, b_hh)
                    seq.append(state[0] if self._lstm else state)
                if d:
                    seq.reverse()
                outs.append(stack(seq, 0))
                finals_h.append(state[0] if self._lstm else state)
                if self._lstm:
                    finals_c.append(state[1])
            layer_input = outs[0] if dirs == 1 else cat(outs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, self.dropout, True)
        output = layer_input
        h_n = stack(finals_h, 0)
        if not batched:
            output, h_n = output.squeeze(1), h_n.squeeze(1)
        elif self.batch_first:
            output = output.transpose(0, 1)
        if self._lstm:
            c_n = stack(finals_c, 0)
            return output, (h_n, c_n.squeeze(1) if not batched else c_n)
        return output, h_n

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


def _no_projections(kwargs: dict) -> None:
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNN(_RNNBase):
    def __init__(self, *args, **kwargs):
        _no_projections(kwargs)
        if len(args) > 3:   # torch's RNN takes nonlinearity fourth, before bias
            kwargs["nonlinearity"] = args[3]
            args = args[:3] + args[4:]
        super().__init__(*args, **kwargs)


class LSTM(_RNNBase):
    _gates, _lstm, _kind = 4, True, "LSTM"


class GRU(_RNNBase):
    _gates, _kind = 3, "GRU"

    def __init__(self, *args, **kwargs):
        _no_projections(kwargs)
        super().__init__(*args, **kwargs)


# -- attention ---------------------------------------------------------------------------------------------
class NonDynamicallyQuantizableLinear(Linear):
    """MultiheadAttention's output projection: a Linear by another name, as in PyTorch."""


class MultiheadAttention(Module):
    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        from . import init
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(creation.empty(3 * embed_dim, embed_dim, dtype=dtype))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(creation.empty(embed_dim, embed_dim, dtype=dtype))
            self.k_proj_weight = Parameter(creation.empty(embed_dim, self.kdim, dtype=dtype))
            self.v_proj_weight = Parameter(creation.empty(embed_dim, self.vdim, dtype=dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(creation.empty(3 * embed_dim, dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if add_bias_kv:   # one learned key and value appended to every sequence
            self.bias_k = Parameter(creation.empty(1, 1, embed_dim, dtype=dtype))
            self.bias_v = Parameter(creation.empty(1, 1, embed_dim, dtype=dtype))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        # PyTorch's _reset_parameters: xavier_uniform_ on the projections, zero biases
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if bias:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if add_bias_kv:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights: bool = True, attn_mask=None,
                average_attn_weights: bool = True, is_causal: bool = False):
        key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query._data.dtype, attn_mask)
        attn_mask = _canonical_mask(attn_mask, "attn_mask", query._data.dtype)
        if self.batch_first and query.ndim == 3:
            # keep self-attention recognizable (query is key is value) after the transpose
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (t.transpose(1, 0) for t in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and query.ndim == 3:
            out = out.transpose(1, 0)
        return out, weights
