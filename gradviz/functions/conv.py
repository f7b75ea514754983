"""conv1d/2d/3d and the transposed convolutions on Tensors: torch's argument checks and
'same' padding, then one ConvolutionBackward0 record of gradviz.ops.conv."""
from __future__ import annotations

import math

from .public import public
from ..autograd.apply import apply
from .._warn import warn_once
from ..ops.conv import CONV_TRANSPOSE, CONVOLUTION
from ..dtypes import C_TYPE, SCALAR_TYPE
from .nnops import _no_bias, pad as constant_pad


# -- the public functions -------------------------------------------------------------------------
def _tuple(v, nd, name="value"):
    if isinstance(v, int):
        return (v,) * nd
    v = tuple(int(i) for i in v)
    if len(v) == 1:
        return v * nd
    if len(v) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} values to match the "
                           f"convolution dimensions, but got {name}={list(v)}")
    return v


def _check_geometry(groups, stride, padding, output_padding, dilation) -> None:
    """torch's checks of a convolution's groups, strides, paddings and dilations, in its order."""
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")


def _takes_mkldnn(input, weight, groups) -> bool:
    """Whether torch's CPU convolution picks its mkldnn kernel (ATen's use_mkldnn): always for a Half
    input, for a Float one when grouped, batched, with a kernel over 3x3, or when N·C·H·W (of its 4-d
    view: a 1-d input as (N, C, 1, L), a 3-d one's first four sizes) is over 20480."""
    if input.dtype.name != "float32":
        return input.dtype.name == "float16"
    shape = tuple(input.shape) if input.ndim == weight.ndim else (1,) + tuple(input.shape)
    kernel = tuple(weight.shape[2:])
    if weight.ndim == 3:
        shape, kernel = shape[:2] + (1,) + shape[2:], (1,) + kernel
    return groups > 1 or shape[0] > 1 or min(kernel[-2:]) > 3 or math.prod(shape[:4]) > 20480


def _check_weight_dtype(input, weight, groups):
    """The weight's dtype against the input's, in the words of the kernel torch would reach."""
    if input.dtype is weight.dtype:
        return
    if _takes_mkldnn(input, weight, groups):
        raise RuntimeError(f"Input type ({input.type()}) and weight type ({weight.type()}) should be the same or "
                           "input should be a MKLDNN tensor and weight is a dense tensor")
    raise RuntimeError(f"expected scalar type {SCALAR_TYPE[input.dtype.name]} but found "
                       f"{SCALAR_TYPE[weight.dtype.name]}")


def _check_weight_dims(input, weight, stride):
    """torch reads the convolution's dims off the weight: a weight of other dims fails its check of the
    stride (a 1-d stride broadcasts, and the input's dims fail instead)."""
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if weight.ndim == input.ndim:
        return
    if len(stride) > 1:
        raise RuntimeError(f"expected stride to be a single integer value or a list of {weight.ndim - 2} values to "
                           f"match the convolution dimensions, but got stride={list(stride)}")
    raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight "
                       f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size {list(input.shape)} "
                       "instead")


def _check_groups(weight, groups) -> None:
    """The weight's dim 0 splits into the groups (torch prints the sizes in brackets twice there)."""
    if weight.shape[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {list(weight.shape)} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{list(weight.shape)}] instead")


def _check_same(input, weight, groups) -> None:
    """padding='same''s own checks, before the convolution's (its message has no space before the sizes)."""
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.ndim != input.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight"
                           f"{list(weight.shape)}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")


def _check_conv(input, weight, bias, nd, stride, padding, dilation, groups):
    _check_weight_dims(input, weight, stride)
    if bias is not None and bias.dtype is not input.dtype:   # torch checks the bias first
        raise RuntimeError(f"Input type ({_cname(input)}) and bias type ({_cname(bias)}) should be the same")
    _check_weight_dtype(input, weight, groups)
    _check_geometry(groups, stride, padding, (), dilation)
    _check_groups(weight, groups)
    o, cg = weight.shape[:2]
    if input.shape[1] != cg * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {cg * groups} channels, but got {input.shape[1]} channels "
                           "instead")
    if bias is not None and tuple(bias.shape) != (o,):
        raise RuntimeError(f"Given weight of size {list(weight.shape)}, expected bias to be 1-dimensional with {o} "
                           f"elements, but got bias of size {list(bias.shape)} instead")
    padded = [s + 2 * p for s, p in zip(input.shape[2:], padding)]
    spans = [d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation)]
    if any(s < k for s, k in zip(padded, spans)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, spans))}). Kernel size can't be greater than actual input "
                           "size")


def _cname(t):
    return C_TYPE[t.dtype.name]


def convolution(input, weight, bias, stride, padding, dilation, groups, nd):
    """conv{nd}d: unbatched input is unsqueezed and squeezed back, padding='same'/'valid' resolved
    (an asymmetric 'same' pads first with constant_pad_nd, as PyTorch does)."""
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to conv{nd}d, but got "
                           f"input of size: {list(input.shape)}")
    if input.ndim == nd + 1:
        return convolution(input.unsqueeze(0), weight, bias, stride, padding, dilation, groups, nd).squeeze(0)
    stride, dilation = _tuple(stride, nd, "stride"), _tuple(dilation, nd, "dilation")
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            _check_same(input, weight, groups)
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for k, d in zip(weight.shape[2:], dilation)]
            padding = tuple(t // 2 for t in total)
            extra = [t - 2 * (t // 2) for t in total]
            if any(extra):
                warn_once("Using padding='same' with even kernel lengths and odd dilation may require a "
                          "zero-padded copy of the input be created")
                pads = []
                for e in reversed(extra):
                    pads += [0, e]
                input = constant_pad(input, pads)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
    padding = _tuple(padding, nd, "padding")
    _check_conv(input, weight, bias, nd, stride, padding, dilation, groups)
    b = bias if bias is not None else _no_bias(input)
    return apply(CONVOLUTION, (input, weight, b), (stride, padding, dilation, int(groups)))


@public   # torch.conv1d too: the same signature
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, groups, 1)


@public   # torch.conv2d too: the same signature
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, groups, 2)


@public   # torch.conv3d too: the same signature
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, groups, 3)


_AXES = {1: ("height", "width"), 2: ("height", "width"), 3: ("depth", "height", "width")}


def _check_transposed(input, weight, bias, nd, stride, padding, output_padding, dilation, groups):
    """torch's checks of a transposed convolution's arguments, in its order and words."""
    _check_weight_dims(input, weight, stride)
    _check_weight_dtype(input, weight, groups)
    _check_geometry(groups, stride, padding, output_padding, dilation)
    _check_groups(weight, groups)
    c, og = weight.shape[:2]
    if input.shape[1] != c:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
                           f"{list(input.shape)} to have {c} channels, but got {input.shape[1]} channels instead")
    if bias is not None and tuple(bias.shape) != (og * groups,):
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
                           f"1-dimensional with {og * groups} elements, but got bias of size {list(bias.shape)} "
                           "instead")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        # torch words a 1-d convolution as the 2-d one it runs: a height of size 1 in front
        lead = (0,) * (nd == 1), (1,) * (nd == 1)
        values = [lead[0] + tuple(output_padding), lead[1] + tuple(stride), lead[1] + tuple(dilation)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(
            f"{what}_{axis}: {v}" for what, vs in zip(("output_padding", "stride", "dilation"), values)
            for axis, v in zip(_AXES[nd], vs)))
    sizes = [s * (n - 1) - 2 * p + d * (k - 1) + op + 1 for n, k, s, p, op, d in
             zip(input.shape[2:], weight.shape[2:], stride, padding, output_padding, dilation)]
    if any(n <= 0 for n in sizes):
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, input.shape[2:]))}). Calculated "
                           f"output size per channel: ({' x '.join(map(str, sizes))}). Output size is too small")


def conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, nd):
    """conv_transpose{nd}d: unbatched input is unsqueezed and squeezed back."""
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to conv_transpose{nd}d, but "
                           f"got input of size: {list(input.shape)}")
    if input.ndim == nd + 1:
        return conv_transpose(input.unsqueeze(0), weight, bias, stride, padding, output_padding, groups, dilation,
                              nd).squeeze(0)
    stride, padding = _tuple(stride, nd, "stride"), _tuple(padding, nd, "padding")
    output_padding, dilation = _tuple(output_padding, nd, "output_padding"), _tuple(dilation, nd, "dilation")
    _check_transposed(input, weight, bias, nd, stride, padding, output_padding, dilation, groups)
    b = bias if bias is not None else _no_bias(input)
    return apply(CONV_TRANSPOSE, (input, weight, b), (stride, padding, output_padding, dilation, int(groups)))


@public   # torch.conv_transpose1d too: the same signature
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 1)


@public   # torch.conv_transpose2d too: the same signature
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 2)


@public   # torch.conv_transpose3d too: the same signature
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, 3)
