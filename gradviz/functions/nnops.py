"""Activations, normalizations, embedding, padding and dropout on Tensors: torch's checks,
then one record of gradviz.ops.nnops each (or a composition, where torch records several)."""
from __future__ import annotations

import math

import numpy as np

from .public import public
from .. import backend, random as _random
from .._args import argument_error, check_tensor, int_sizes, type_name
from ..autograd.apply import apply
from ..dtypes import SCALAR_TYPE, floating_kernel
from .reduce import _dims_keep, normalize_dims
from ..ops.nnops import (BATCH_NORM, CELU, CELU_RESULT, CONSTANT_PAD, ELU, ELU_RESULT, EMBEDDING, EMBEDDING_BAG, GLU, HARDSHRINK, HARDSIGMOID,
                         HARDSWISH, HARDTANH, HARDTANH_BACKWARD, RRELU, RRELU_RESULT,
                         LAYER_NORM, LOGSIGMOID, MISH, NORM_DIM, PDIST, PRELU, SELU_ALPHA, SELU_SCALE, SILU,
                         SOFTSHRINK, THRESHOLD, THRESHOLD_INPLACE, TRILINEAR)
from .index import _in_range
from .linalg import no_bool_kernel
from ..ops.reparam import WEIGHT_NORM
from .pointwise import _recorded_as, add_scalar
from ..ops.core import namespace
from ..tensor import Tensor
from ..creation import _like, zeros


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if input._data.dtype.kind == "b":
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if inplace:
        return input._inplace_op(hardtanh, min_val, max_val)
    return apply(HARDTANH, (input,), (min_val, max_val))


# with create_graph=True, hardtanh's gradient is one node, as torch's hardtanh_backward
_recorded_as(HARDTANH, lambda g, c, a, lo, hi: apply(HARDTANH_BACKWARD, (g, a), (lo, hi)))


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def _float_op(op, kernel: str, input, *params):
    """An activation PyTorch computes on floating-point tensors only (its kernel's error for others)."""
    floating_kernel(kernel, input._data.dtype)
    return apply(op, (input,), params)


def elu(input, alpha=1.0, inplace=False):
    if inplace:   # elu_ overwrites the input; its node (EluBackward1) reads the result
        return input._inplace_op(lambda x: _float_op(ELU_RESULT, "elu_cpu", x, alpha, 1.0, 1.0))
    return _float_op(ELU, "elu_cpu", input, alpha, 1.0, 1.0)


@public
def selu_(input):
    check_tensor("selu_", "input", input, 1)
    return input._inplace_op(lambda x: _float_op(ELU_RESULT, "elu_cpu", x, SELU_ALPHA, SELU_SCALE, 1.0))


@public
def celu_(input, alpha=1.0):
    check_tensor("celu_", "input", input, 1)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return input._inplace_op(lambda x: _float_op(CELU_RESULT, "elu_cpu", x, alpha))


@public   # torch.selu: F.selu without inplace= (gradviz.nn.functional adds it)
def selu(input):
    check_tensor("selu", "input", input, 1)
    return _float_op(ELU, "elu_cpu", input, SELU_ALPHA, SELU_SCALE, 1.0)


@public   # torch.celu: F.celu without inplace= (gradviz.nn.functional adds it)
def celu(input, alpha=1.0):
    check_tensor("celu", "input", input, 1)
    if alpha == 0:   # torch's kernel raises it as a RuntimeError wrapping its own message
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _float_op(CELU, "elu_cpu", input, alpha)


def silu(input, inplace=False):
    if inplace:
        return input._inplace_op(silu)
    return _float_op(SILU, "silu_cpu", input)


def mish(input, inplace=False):
    if inplace:
        return input._inplace_op(mish)
    return _float_op(MISH, "mish_cpu", input)


def hardsigmoid(input, inplace=False):
    if inplace:   # torch's hardsigmoid_ writes the input and records HardsigmoidBackward0, as silu_ does
        return input._inplace_op(hardsigmoid)
    return _float_op(HARDSIGMOID, "hardsigmoid_cpu", input)


def hardswish(input, inplace=False):
    if inplace:
        return input._inplace_op(hardswish)
    return _float_op(HARDSWISH, "hardswish_cpu", input)


def logsigmoid(input):
    return _float_op(LOGSIGMOID, "log_sigmoid_cpu", input)


def _affine(input, weight, bias):
    """A norm's weight and bias, with an empty stand-in for each one left out (its term is dropped)."""
    return (weight if weight is not None else _no_bias(input)), (bias if bias is not None else _no_bias(input))


def _check_param_dtypes(input, *params) -> None:
    """PyTorch's CPU norms take parameters of the input's dtype, or ("mixed") float32 ones with a
    float16 input; the first parameter given decides which."""
    x, given = input._data.dtype, [p._data.dtype for p in params if p is not None]
    if given and given[0] != x:
        if any(d != np.float32 for d in given):
            raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
        if x != np.float16:
            raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
        return
    for d in given:
        if d != x:
            raise RuntimeError(f"expected scalar type {SCALAR_TYPE[x.name]} but found {SCALAR_TYPE[d.name]}")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if not isinstance(normalized_shape, (tuple, list)):   # an int too: nn.LayerNorm(3) makes it (3,), F does not
        raise argument_error("layer_norm", "normalized_shape", 2, "tuple of ints", type_name(normalized_shape))
    shape = int_sizes("layer_norm", "normalized_shape", (normalized_shape,), position=2)
    k = len(shape)
    _check_param_dtypes(input, weight, bias)
    for name, param in (("weight", weight), ("bias", bias)):
        if param is not None and param._data.shape != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(param.shape)} and normalized_shape = {list(shape)}")
    if k == 0 or input._data.shape[input.ndim - k:] != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*, "
                           f"{', '.join(str(s) for s in shape)}], but got input of size{list(input.shape)}")
    floating_kernel("LayerNormKernelImpl", input._data.dtype)
    w, b = _affine(input, weight, bias)
    axes = tuple(range(input.ndim - k, input.ndim))
    return apply(LAYER_NORM, (input, w, b), (axes, shape, eps, None, None))


def _verify_batch_size(input) -> None:
    """torch.nn.functional's check when training: more than one value per channel (none is allowed)."""
    if input.ndim == 0:
        raise IndexError("tuple index out of range")   # torch reads size[0]
    if input.shape[0] * math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")


def _empty_batch_norm(input, weight, bias):
    """torch's answer for an input with no elements: a copy (so the graph goes on) times the first
    weight plus the first bias; no statistics, no running-stat update."""
    out = input.clone()
    out = out * weight.select(0, 0) if weight is not None else out
    return out + bias.select(0, 0) if bias is not None else out


def check_batch_norm_args(input, running_mean, running_var, weight, bias, training) -> None:
    """torch's checks of batch_norm's arguments, in its order: the tensors' sizes against the input's
    channels (a module's num_features is not consulted: a lazy one loaded from a checkpoint keeps 0)."""
    if training:
        _verify_batch_size(input)
    if input.numel() == 0:
        return
    c = input.shape[1] if input.ndim > 1 else None
    for name, t in (("running_mean", running_mean), ("running_var", running_var), ("weight", weight), ("bias", bias)):
        if t is None and not training and name.startswith("running"):
            raise RuntimeError(f"{name} must be defined in evaluation mode")
        if c is not None and t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if c is None:   # torch's channel dim (1) is out of range
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got 1)")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    check_batch_norm_args(input, running_mean, running_var, weight, bias, training)
    if input.numel() == 0:
        return _empty_batch_norm(input, weight, bias)
    c = input.shape[1]
    n = input.numel() // c
    floating_kernel("batch_norm", input._data.dtype)
    _check_param_dtypes(input, weight, bias, running_mean, running_var)
    w, b = _affine(input, weight, bias)
    axes = tuple(d for d in range(input.ndim) if d != 1)
    stat_shape = tuple(c if d == 1 else 1 for d in range(input.ndim))
    if training:
        a = input._data
        mean = a.mean(axis=axes)
        var = a.var(axis=axes)
        if running_mean is not None:
            running_mean._data[...] = (1 - momentum) * running_mean._data + momentum * mean
            running_mean._bump()
        if running_var is not None:
            running_var._data[...] = (1 - momentum) * running_var._data + momentum * var * n / (n - 1)
            running_var._bump()
        return apply(BATCH_NORM, (input, w, b), (axes, stat_shape, eps, None, None))
    mean = running_mean._data.reshape(stat_shape).astype(input._data.dtype)
    var = running_var._data.reshape(stat_shape).astype(input._data.dtype)
    return apply(BATCH_NORM, (input, w, b), (axes, stat_shape, eps, mean, var))


@public   # torch.pairwise_distance too: the same signature
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    d = add_scalar(x1 - x2, eps)   # torch's C++ adds eps as a Scalar (AddBackward1)
    return apply(NORM_DIM, (d,), (float(p),) + _dims_keep(d, -1, keepdim))


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    check_tensor("embedding", "indices", input, 2)   # torch.embedding(weight, indices)
    check_tensor("embedding", "weight", weight, 1)
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    idx = input._data
    if idx.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got {input.type()} instead (while checking arguments for embedding)")
    n = weight.shape[0]
    _in_range(idx, n)   # a negative id is out of range too (NumPy would count it from the end)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    if scale_grad_by_freq:
        raise NotImplementedError("embedding: scale_grad_by_freq=True is not supported")
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    return apply(EMBEDDING, (weight,), (idx, padding_idx))


def _renorm_rows(weight, idx, max_norm, norm_type) -> None:
    """torch's embedding_renorm_: each row that idx reads whose norm is over max_norm is scaled in place
    by max_norm / (norm + 1e-7), outside autograd (weight's version moves, as torch's does)."""
    w = weight._data
    xp = namespace(w)
    for r in sorted(set(backend.to_numpy(idx).reshape(-1).tolist())):
        norm = float(xp.linalg.norm(w[r], ord=norm_type))
        if norm > max_norm:
            w[r] *= w.dtype.type(max_norm / (norm + 1e-7))
    weight._bump()


def _no_bias(like):
    """An empty, grad-free stand-in for a missing input (a bias, per-sample weights): its edge is
    (None, 0), as in PyTorch."""
    return Tensor._make(namespace(like._data).zeros(0, dtype=like._data.dtype))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Each bag of indices (a row of a 2-d input, or the run of a 1-d input from one offset to the
    next) as one row: the sum, mean or per-feature max of its rows of weight (padding_idx rows left
    out); one EmbeddingBagBackward0 node, as torch records."""
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             f"fixed length sequences. However, found offsets of type {type(offsets)}")
        starts = list(range(0, input.numel(), input.shape[1])) if input.shape[1] else [0] * input.shape[0]
        ends = starts[1:] + [input.numel()]
    elif input.ndim == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.ndim != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        bounds = [int(o) for o in offsets.tolist()]
        starts = bounds[:-1] if include_last_offset else bounds
        ends = bounds[1:] if include_last_offset else bounds[1:] + [input.numel()]
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        raise NotImplementedError("embedding_bag: max_norm (renormalizing the rows it reads) is not supported")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    flat = backend.to_numpy(input.reshape(-1)._data)
    n = weight.shape[0]
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    bag = np.repeat(np.arange(len(starts)), [e - s for s, e in zip(starts, ends)])
    pos = np.arange(flat.shape[0])[:bag.shape[0]]
    keep = flat[pos] != padding_idx if padding_idx is not None else np.ones(pos.shape, bool)
    pos, bag = pos[keep], bag[keep]
    idx = flat[pos].astype(np.int64)
    counts = np.bincount(bag, minlength=len(starts))
    scale = (1.0 / counts[bag] if mode == "mean" else np.ones(bag.shape)).astype(weight._data.dtype)
    arg = np.full((len(starts), weight.shape[1]), -1, dtype=np.int64)
    if mode == "max":
        w = backend.to_numpy(weight._data)
        for b in range(len(starts)):
            rows = idx[bag == b]
            if rows.size:   # the first row that reaches each feature's max, as torch's loop keeps it
                arg[b] = rows[np.argmax(w[rows], axis=0)]
    psw = per_sample_weights.reshape(-1) if per_sample_weights is not None else _no_bias(weight)
    # the bags are worked out on the host; the record indexes weight with them on weight's device
    idx, pos, bag, scale, arg = (backend.to_device(a, weight.device) for a in (idx, pos, bag, scale, arg))
    return apply(EMBEDDING_BAG, (weight, psw), (idx, pos, bag, scale, arg, len(starts), mode))


def pad(input, pad, mode="constant", value=None):
    if mode != "constant":
        raise NotImplementedError(f"pad: mode '{mode}' is not supported here; only mode='constant' is")
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {input.ndim}")
    return apply(CONSTANT_PAD, (input,), (tuple(int(p) for p in pad), 0.0 if value is None else value))


@public(method=True)   # torch.hardshrink too: the same signature
def hardshrink(input, lambd=0.5):
    return apply(HARDSHRINK, (input,), (lambd,))


def softshrink(input, lambd=0.5):
    dtype = input._data.dtype
    floating_kernel("softshrink_check", dtype)
    top = float(np.finfo(dtype).max)
    if not 0 <= lambd <= top:   # C++'s stream prints a double as %g does
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype {SCALAR_TYPE[dtype.name]}, but "
                           f"found {lambd:g}")
    return apply(SOFTSHRINK, (input,), (lambd,))


def tanhshrink(input):
    """a − tanh a, as torch composes it (SubBackward0)."""
    return input - input.tanh()


@public(out=True)   # torch.threshold: F.threshold without inplace= (gradviz.nn.functional adds it)
def threshold(input, threshold, value):
    check_tensor("threshold", "input", input, 1)
    return apply(THRESHOLD, (input,), (threshold, value))


def _rrelu(op, input, lower, upper, training, generator):
    """torch's CPU rrelu_with_noise: in training one uniform(lower, upper) draw per entry ≤ 0, in
    element order, none for the others (noise 1); in eval the mean slope, no draw (the noise unused)."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    dtype = input._data.dtype
    if training and dtype not in (np.float32, np.float64):   # torch's training kernel: float and double only
        raise NotImplementedError(f'"rrelu_with_noise_out_cpu" not implemented for \'{SCALAR_TYPE[dtype.name]}\'')
    floating_kernel("leaky_relu_cpu", dtype)
    a = backend.to_numpy(input._data)
    noise = np.ones(a.shape, a.dtype) if training else np.zeros(a.shape, a.dtype)
    if training:
        drawn = a <= 0   # the bounds are first rounded to the kernel's precision (float for float32)
        lo, hi = (float(_random._opmath(a.dtype)(bound)) for bound in (lower, upper))
        noise[drawn] = _random.uniform_real64(_random._gen(generator), int(drawn.sum()), lo, hi)
    return apply(op, (input,), (lower, upper, bool(training), backend.to_device(noise, input.device)))


@public
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    check_tensor("rrelu", "input", input, 1)
    return _rrelu(RRELU, input, lower, upper, training, generator)


@public
def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    check_tensor("rrelu_", "input", input, 1)
    return input._inplace_op(lambda x: _rrelu(RRELU_RESULT, x, lower, upper, training, generator))


@public   # torch.threshold_ and F.threshold_ (torch has no Tensor.threshold_)
def threshold_(input, threshold, value):
    check_tensor("threshold_", "input", input, 1)
    return input._inplace_op(lambda x: apply(THRESHOLD_INPLACE, (x,), (threshold, value)))


def glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    (d,) = normalize_dims(dim, input.ndim)
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {input.shape[d]}")
    return apply(GLU, (input,), (d,))


@public(method=True)   # torch.prelu too: the same signature
def prelu(input, weight):
    """PReLU with one slope, or one per channel (dim 1), broadcast as torch reshapes it."""
    n = weight.numel()
    if n != 1:
        if input.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.ndim > 1 else 1
        if channels != n:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{n} and channel size = {channels}.")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}")
    shape = [n if i == 1 else 1 for i in range(input.ndim)]   # () for a 0-d input
    return apply(PRELU, (input, weight.reshape(*shape)))


@public   # torch.pdist too: the same signature
def pdist(input, p=2):
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    i, j = backend.namespace_of(input._data).triu_indices(input.shape[0], 1)
    return apply(PDIST, (input,), (float(p), i, j))


@public   # torch.bilinear too: the same signature
def bilinear(input1, input2, weight, bias=None):
    """yₒ = x₁ᵀ Wₒ x₂ + bₒ over the leading (batch) dims, recorded as torch does: both inputs viewed as
    rows, one TrilinearBackward0, a view back to the batch's shape, then the bias."""
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    for d in range(input1.ndim - 1):
        if input1.shape[d] != input2.shape[d]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got {input1.shape[d]} "
                               f"and {input2.shape[d]}")
    if weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got {weight.ndim} dimension(s)")
    for name, size, expected in (("input1", input1.shape[-1], weight.shape[1]),
                                 ("input2", input2.shape[-1], weight.shape[2])):
        if size != expected:
            raise RuntimeError(f"bilinear(): {name} size does not match weight size: got {size} but expected "
                               f"{expected}")
    if bias is not None and bias.ndim == 1 and bias.shape[0] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[0]} but expected "
                           f"{weight.shape[0]}")
    no_bool_kernel("bmm", input1, weight, input2)   # torch's trilinear product is made of bmm
    rows = apply(TRILINEAR, (input1.reshape(-1, input1.shape[-1]), weight, input2.reshape(-1, input2.shape[-1])))
    out = rows.reshape(*input1.shape[:-1], weight.shape[0])
    return out if bias is None else out + bias


# SELU's −λα: alpha dropout sets a dropped entry to it and rescales, keeping SELU's mean and variance
_ALPHA_PRIME = 1.7580993408473766


def dropout_impl(input, p, train, inplace=False, feature=False, alpha=False):
    """ATen's dropout, step for step on CPU: a Bernoulli(1 − p) draw per entry (per channel for feature
    dropout, dims 0 and 1), scaled by 1 / (1 − p), then a multiply (MulBackward0, as torch's graph);
    alpha dropout scales by a and adds b instead (MulBackward0, then AddBackward0)."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0 or input.numel() == 0:
        return input
    if p == 1:
        noise = zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(noise) if inplace else input * noise
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        noise = input.new_empty(tuple(input.shape[:2]) + (1,) * (input.ndim - 2)).bernoulli_(1 - p)
    else:
        noise = _like(input, None, None, False).bernoulli_(1 - p)
    if alpha:
        a = 1.0 / math.sqrt((_ALPHA_PRIME ** 2 * p + 1) * (1 - p))
        shift = noise.add(-1).mul_(_ALPHA_PRIME * a).add_(_ALPHA_PRIME * a * p)
        noise.mul_(a)
    else:
        noise.div_(1 - p)
    out = input.mul_(noise) if inplace else input * noise
    return out.add_(shift) if alpha else out


def _checked_p(p):
    """nn.functional's check of p, before ATen's (a NaN passes it, and ATen's refuses it)."""
    if p < 0 or p > 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return p


def dropout(input, p=0.5, training=True, inplace=False):
    if type(training) is not bool:   # torch's parser takes a bool only: dropout(x, 0.5, "yes") is refused
        raise argument_error("dropout", "train", 3, "bool", type_name(training))
    return dropout_impl(input, _checked_p(p), training, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: a dropped entry becomes −λα, and the output is rescaled so that
    zero mean and unit variance stay as they were."""
    return dropout_impl(input, _checked_p(p), training, inplace, alpha=True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return dropout_impl(input, _checked_p(p), training, inplace, feature=True, alpha=True)


def _aten_dropout(name, inplace=False, feature=False, alpha=False):
    """torch.dropout and its kin at the top level: nn.functional's under ATen's signature, train
    required and a p outside [0, 1] a RuntimeError."""
    def aten_dropout(input, p, train):
        return dropout_impl(input, p, train, inplace, feature, alpha)
    aten_dropout.__name__ = aten_dropout.__qualname__ = f"aten_{name}"   # the module name it is bound to
    return public(name)(aten_dropout)


aten_dropout = _aten_dropout("dropout")
aten_dropout_ = _aten_dropout("dropout_", inplace=True)
aten_feature_dropout = _aten_dropout("feature_dropout", feature=True)
aten_feature_dropout_ = _aten_dropout("feature_dropout_", inplace=True, feature=True)
aten_alpha_dropout = _aten_dropout("alpha_dropout", alpha=True)
aten_alpha_dropout_ = _aten_dropout("alpha_dropout_", inplace=True, alpha=True)
aten_feature_alpha_dropout = _aten_dropout("feature_alpha_dropout", feature=True, alpha=True)
aten_feature_alpha_dropout_ = _aten_dropout("feature_alpha_dropout_", inplace=True, feature=True, alpha=True)


@public
def norm_except_dim(v, pow=2, dim=0):
    """‖v‖ over every dim but `dim` (size-1 there), or over all of v for dim −1: torch's own steps."""
    if dim == -1:
        return v.norm(pow)
    sizes = [v.shape[d] if d == dim else 1 for d in range(v.ndim)]
    if dim == 0:
        return v.contiguous().view(v.shape[0], -1).norm(pow, 1).view(*sizes)
    if dim == v.ndim - 1:
        return v.contiguous().view(-1, v.shape[dim]).norm(pow, 0).view(*sizes)
    return norm_except_dim(v.transpose(0, dim), pow, 0).transpose(0, dim)


def weight_norm_interface(v, g, dim=0):
    """torch._weight_norm_interface's weight (not exported: torch's name is private): g ⊙ v / ‖v‖ as
    one node, the norm over every dim but `dim`."""
    return apply(WEIGHT_NORM, (v, g), (dim,))


def _weight_norm(v, g, dim=0):
    """torch._weight_norm: one fused node for the first or last dim, else (another dim, or −1: the
    whole tensor) the product v ⊙ g / ‖v‖ as separate nodes."""
    if dim in (0, v.ndim - 1):
        return weight_norm_interface(v, g, dim)
    return v * (g / norm_except_dim(v, 2, dim))
