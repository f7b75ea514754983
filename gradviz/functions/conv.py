"""conv1d/conv2d and the transposed convolutions on Tensors: torch's argument checks and
'same' padding, then one ConvolutionBackward0 record of gradviz.ops.conv."""
from __future__ import annotations


from ..autograd.apply import apply
from .._warn import warn_once
from ..tensor import Tensor
from ..ops.conv import CONVOLUTION
from ..ops.core import namespace
from ..dtypes import C_TYPE
from .nnops import pad as constant_pad


def _no_bias(like):
    """An empty, grad-free stand-in for a missing bias: its edge is (None, 0), as in PyTorch."""
    return Tensor._make(namespace(like._data).zeros(0, dtype=like._data.dtype))


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


def _check_conv(input, weight, bias, nd, stride, padding, dilation, groups):
    if weight.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to conv{nd}d, but got "
                           f"weight of size {list(weight.shape)}")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"Input type ({_cname(input)}) and weight type ({_cname(weight)}) should be the same")
    if bias is not None and bias.dtype is not weight.dtype:
        raise RuntimeError(f"Input type ({_cname(input)}) and bias type ({_cname(bias)}) should be the same")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    o, cg = weight.shape[:2]
    if o % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size {list(weight.shape)} instead")
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
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
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


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, groups, 1)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return convolution(input, weight, bias, stride, padding, dilation, groups, 2)
