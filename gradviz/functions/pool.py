"""Pooling, interpolation (and the deprecated upsample_nearest/upsample_bilinear that call it),
window views and pixel shuffle on Tensors: torch's output sizes and errors, then the records of
gradviz.ops.pool."""
from __future__ import annotations

import itertools
import math
import warnings

import numpy as np

from .conv import _tuple
from .public import public
from ..ops.conv import pad_spatial, windows
from ..autograd.apply import apply
from ..creation import _linear_points
from ..dtypes import SCALAR_TYPE, floating_kernel
from ..ops.core import namespace
from ..ops.grid import AFFINE_GRID, GRID_SAMPLE
from ..tensor import Tensor
from ..ops.pool import (ADAPTIVE_AVG_POOL2D, ADAPTIVE_AVG_POOL3D, ADAPTIVE_MAX_POOL2D,
                        ADAPTIVE_MAX_POOL3D, AVG_POOL2D, AVG_POOL3D,
                        CHANNEL_SHUFFLE, COL2IM, IM2COL, MAX_POOL2D, MAX_POOL3D, MAX_UNPOOL, REFLECTION_PAD,
                        REPLICATION_PAD, UPSAMPLE_BICUBIC, UPSAMPLE_LINEAR, UPSAMPLE_NEAREST, UPSAMPLE_NEAREST_EXACT,
                        PIXEL_SHUFFLE, PIXEL_UNSHUFFLE, _pool_out)
from .shape import cat


def _pool_matrix(n, k, s, p, d, ceil_mode, count_include_pad):
    """Rows: output positions; A[i, j] = 1/count when input j is in window i (and not padding)."""
    out = _pool_out(n, k, s, p, d, ceil_mode)
    m = np.zeros((out, n))
    counts = np.zeros(out)
    for i in range(out):   # one row per output position of one axis: O(out) work to build
        start = i * s - p
        taps = [start + t * d for t in range(k)]
        inside = [j for j in taps if 0 <= j < n]
        m[i, inside] = 1
        end = min(start + (k - 1) * d + 1, n + p)
        counts[i] = len(inside) if not count_include_pad else len(range(start, end, d))
    return m, counts


def _as_4d(input, nd, fn):
    """PyTorch's 1-d pools run the 2-d kernel on x.unsqueeze(-2) and squeeze the result."""
    if nd == 1:
        return fn(input.unsqueeze(-2)).squeeze(-2)
    return fn(input)


def _check_pool_dims(input, nd, name):
    """torch's checks of a pool's input dims before its arguments', in the words of the kernel each pool
    reaches: the arg checker of the 1-d average pools, the adaptive pools' (no empty pooled dim),
    max_pool1d's own kernel's (without indices: no empty dim but the batch), an IndexError where
    avg_pool2d reads size(-3) of a smaller input."""
    shape, ndim = list(input.shape), input.ndim
    if name in ("avg_pool1d", "adaptive_avg_pool1d"):
        if ndim not in (2, 3):
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {ndim}-dimensional tensor for argument #1 "
                               f"'self' (while checking arguments for {name})")
    elif name.startswith("adaptive"):
        if ndim not in (nd + 1, nd + 2):
            raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got {shape}")
        for d in range(ndim - nd, ndim):   # torch's adaptive average pools read the pooled dims only
            if input.shape[d] == 0:
                raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but "
                                   f"input has sizes {shape} with dimension {d} being empty")
    elif nd == 1:
        if ndim not in (2, 3) or name == "max_pool1d" and not all(shape[-2:]):
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
                               f"for input, but got:{shape}")
    elif ndim not in (nd + 1, nd + 2) and (name != "avg_pool2d" or ndim < 3):
        if name == "avg_pool2d":
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, "
                             f"{max(ndim, 1) - 1}], but got -3)")
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")


def _check_pool_nonempty(shape: list, nd, name):
    """The 2-d and 3-d kernels' shape check, after their arguments': no empty dim but the batch (a 1-d
    pool's shape is given as the 2-d kernel sees it, unsqueezed)."""
    batched = len(shape) == nd + 2
    if nd == 2 and (len(shape) > 4 or not all(shape[batched:])):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
                           f"got:{shape}")
    if nd == 3 and not all(shape[batched:]):   # torch prints the empty dim's length, 0, as its name
        where = "max_pool3d_with_indices_out_cpu_template" if name == "max_pool3d" else name
        raise RuntimeError(f"{where}(): Expected input's non-batch dimensions to have positive length, but input "
                           f"has a shape of {shape} and non-batch dimension 0 has length zero!")


def _kernel_shape(input, nd) -> list:
    """The input's shape as the 2-d or 3-d kernel sees it (a 1-d pool's unsqueezed at -2)."""
    shape = list(input.shape)
    return shape[:-1] + [1] + shape[-1:] if nd == 1 else shape


def _check_mean_input(input, nd):
    """An adaptive average pool to size 1 is torch's mean over the last nd dims: any dims before them."""
    if input.ndim < nd:
        n = max(input.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
                         f"{-input.ndim - 1})")


_COUNTS = {2: "two", 3: "three"}


def _pool_tuple(value, nd, name, what):
    """A 2-d or 3-d pool's argument as an nd-tuple, or torch's words for one of another length."""
    if nd in _COUNTS and not isinstance(value, int) and len(value) not in (1, nd):
        be = "be" if name == "avg_pool3d" else "either be"
        rule = {"kernel_size": f"must {be} a single int", "stride": f"must {be} omitted, a single int",
                "padding": f"must {be} a single int", "dilation": "must be either a single int"}[what]
        raise RuntimeError(f"{name}: {what} {rule}, or a tuple of {_COUNTS[nd]} ints")
    return _tuple(value, nd)


def _pool_args(kernel_size, stride, padding, dilation, nd, own_1d_checks=False, name="max_pool2d"):
    """A pool's arguments as nd-tuples, checked in the order of torch's kernel: its own 1-d kernel's
    checks (max_pool1d without indices), else each dim's output size's (stride, then padding), then
    the shape check's (kernel, stride and dilation positive)."""
    k = _pool_tuple(kernel_size, nd, name, "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _pool_tuple(stride, nd, name, "stride")
    p, d = _pool_tuple(padding, nd, name, "padding"), _pool_tuple(dilation, nd, name, "dilation")
    if own_1d_checks:
        for what, v in (("kernel_size", k), ("stride", s), ("padding", p), ("dilation", d)):
            if what == "padding" and v[0] < 0:
                raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {v[0]}")
            if what == "padding" and v[0] > k[0] // 2:
                raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                                   f"padding={v[0]} and kernel_size={k[0]}")
            if what != "padding" and v[0] <= 0:
                raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got {v[0]}")
    if 0 in s:
        raise RuntimeError("stride should not be zero")
    for kk, pp, dd in zip(k, p, d):   # pooling_output_shape, one dim after another
        if pp < 0:
            raise RuntimeError(f"pad must be non-negative, but got pad: {pp}")
        if pp > ((kk - 1) * dd + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={pp}, "
                               f"kernel_size={kk} and dilation={dd}")
    for what, v, h, w in (("kernel size", k, "kH", "kW"), ("stride", s, "dH", "dW"),
                          ("dilation", d, "dilationH", "dilationW")):
        if min(v) <= 0:   # the 2-d kernel's words: a 1-d pool's height is 1
            raise RuntimeError(f"{what} should be greater than zero, but got {h}: {v[0] if nd > 1 else 1} {w}: {v[-1]}")
    return k, s, p, d


def _check_half_kernel(k, p) -> None:
    """The shape check's last word on padding (a dilated window's effective size allows more before)."""
    if all(pp <= kk // 2 for kk, pp in zip(k, p)):
        return
    if len(k) == 3:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got kT: {k[0]} "
                           f"kW: {k[2]} kH: {k[1]} padT: {p[0]} padW: {p[2]} padH: {p[1]}")
    (kh, kw), (ph, pw) = ((1,) * (2 - len(k)) + k), ((0,) * (2 - len(p)) + p)
    raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {pw}, "
                       f"padH = {ph}, kW = {kw}, kH = {kh}")


def _check_pool_output(x, k, s, p, d, ceil_mode, name):
    """torch's shape checks on the pooled (3-d, 4-d or 5-d) view x: no output size may be zero;
    an avg_pool3d window must fit in the unpadded input too."""
    nd = len(k)
    sizes = tuple(x.shape[-nd:])
    if name == "avg_pool3d" and any(n < kk for n, kk in zip(sizes, k)):
        raise RuntimeError(f"input image (T: {sizes[0]} H: {sizes[1]} W: {sizes[2]}) smaller than kernel size "
                           f"(kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    outs = tuple(_pool_out(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip(sizes, k, s, p, d))
    if min(outs) < 1:
        c = x.shape[-nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (c,) + sizes))}). Calculated output size: "
                           f"({'x'.join(map(str, (c,) + outs))}). Output size is too small")


def avg_pool(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
             divisor_override=None, nd=2):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _check_pool_dims(input, nd, f"avg_pool{nd}d")
    k, s, p, d = _pool_args(kernel_size, stride, padding, 1, nd, name=f"avg_pool{nd}d")
    _check_pool_nonempty(_kernel_shape(input, nd), max(nd, 2), f"avg_pool{max(nd, 2)}d")
    _check_half_kernel(k, p)
    k2, s2, p2 = (1,) * (2 - nd) + k, (1,) * (2 - nd) + s, (0,) * (2 - nd) + p

    def pool(x):
        _check_pool_output(x, k2, s2, p2, (1,) * len(k2), ceil_mode, f"avg_pool{max(nd, 2)}d")
        mats = []
        for n, kk, ss, pp in zip(x.shape[-len(k2):], k2, s2, p2):
            m, counts = _pool_matrix(n, kk, ss, pp, 1, ceil_mode, count_include_pad)
            mats.append(m if divisor_override else m / counts[:, None])
        return apply(AVG_POOL3D if nd == 3 else AVG_POOL2D, (x,), (tuple(mats), divisor_override, k, s, p))
    return _as_4d(input, nd, pool)


@public   # torch.avg_pool1d too: the same signature
def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None, 1)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


def _adaptive_bounds(n, out):
    i = np.arange(out)
    return (i * n) // out, -((-(i + 1) * n) // out)


def _adaptive_matrix(n, out):
    starts, ends = _adaptive_bounds(n, out)
    j = np.arange(n)
    inside = (j >= starts[:, None]) & (j < ends[:, None])
    return inside / (ends - starts)[:, None]


def adaptive_size(name, output_size, input, nd) -> tuple:
    """An adaptive pool's output size as torch reads it: a 1-d pool's one int (its parser's); a 2-d or
    3-d pool's list read by torch.nn.functional first (_list_with_default: a None keeps the input's
    size), then its length checked by the kernel."""
    if nd == 1:
        if isinstance(output_size, (tuple, list)) and len(output_size) != 1:
            raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got {len(output_size)})")
        return _tuple(output_size, 1)
    if isinstance(output_size, (tuple, list)):
        if input.ndim <= len(output_size):
            raise ValueError(f"Input dimension should be at least {len(output_size) + 1}")
        output_size = tuple(n if o is None else o
                            for o, n in zip(output_size, input.shape[input.ndim - len(output_size):]))
        if len(output_size) != nd:
            raise RuntimeError(f"{name}: output_size must be {nd}" if name.startswith("adaptive_avg") else
                               f"{name}(): internal error: output_size.size() must be {nd}")
    return _tuple(output_size, nd)


def _check_avg_size(size) -> None:
    """The adaptive average kernels refuse a negative output size (a 1-d pool's as the 2-d kernel's (1, n))."""
    if min(size) < 0:
        size = (1,) * (2 - len(size)) + tuple(size)
        shown = f"{size[0]}, {size[1]}" + (f",{size[2]}" if len(size) == 3 else "")   # torch's own spacing
        raise RuntimeError(f"adaptive_avg_pool{len(size)}d: elements of output_size must be greater than or equal "
                           f"to 0 but received {{{shown}}}")


def adaptive_avg_pool(input, output_size, nd):
    size = adaptive_size(f"adaptive_avg_pool{nd}d", output_size, input, nd)
    _check_avg_size(size)
    if nd > 1 and all(o == 1 for o in size):   # PyTorch takes the mean here (MeanBackward1), of any leading dims
        _check_mean_input(input, nd)
        return input.mean(tuple(range(-nd, 0)), keepdim=True)
    _check_pool_dims(input, nd, f"adaptive_avg_pool{nd}d")
    if nd == 3:
        mats = tuple(_adaptive_matrix(n, o) for n, o in zip(input.shape[-3:], size))
        return apply(ADAPTIVE_AVG_POOL3D, (input,), (mats, None, size))
    size2 = (1,) * (2 - nd) + size

    def pool(x):
        mats = tuple(_adaptive_matrix(n, o) for n, o in zip(x.shape[-2:], size2))
        return apply(ADAPTIVE_AVG_POOL2D, (x,), (mats, None, size))
    return _as_4d(input, nd, pool)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


@public   # torch.adaptive_avg_pool1d too: the same signature
def adaptive_avg_pool1d(input, output_size):
    return adaptive_avg_pool(input, output_size, 1)


def adaptive_avg_pool2d(input, output_size):
    return adaptive_avg_pool(input, output_size, 2)


def adaptive_avg_pool3d(input, output_size):
    return adaptive_avg_pool(input, output_size, 3)


def _first_max(xp, planes):
    """Elementwise over the leading axis: the max, and the index of the first plane holding it
    (the first on ties, as PyTorch). Where a plane holds NaN the max is NaN and the index is
    meaningless: the caller decides. The index counts the planes before the first that holds the
    max: the running "all before differ from it" mask, summed; one byte a pass (mask and count),
    where a running strict > with the winner's index took four passes a plane, two of them of floats."""
    best = planes[0].copy()
    for plane in planes[1:]:   # (in place: a reduction over the leading axis costs a quarter more)
        xp.maximum(best, plane, out=best)
    small = np.min_scalar_type(len(planes) - 1)
    at = xp.zeros(best.shape, dtype=small)
    before = None   # all planes so far differ from the max (the first max is further on)
    for plane in planes[:-1]:
        differs = plane != best
        before = differs if before is None else xp.logical_and(before, differs, out=before)
        at += before.view(small) if small.itemsize == 1 else before
    return best, at


def _tap_planes(xp, padded, k, s, d, outs):
    """One contiguous plane per kernel tap, (taps, …, *outs), of the windows of `padded`: elementwise
    passes over whole planes are several times faster than an argmax along a short last axis, or passes
    over strided views."""
    nd = len(k)
    win = windows(xp, padded, k, s, d)[(Ellipsis,) + tuple(slice(o) for o in outs) + (slice(None),) * nd]
    lead = win.ndim - 2 * nd
    planes = xp.ascontiguousarray(win.transpose(tuple(range(lead + nd, lead + 2 * nd)) + tuple(range(lead + nd))))
    return planes.reshape((math.prod(k),) + planes.shape[nd:])


def _max_pool_indices(a, k, s, p, d, ceil_mode):
    """Flat indices (into each trailing H·W or D·H·W plane) of every window's maximum, as PyTorch's:
    the first one on ties, the last NaN where a window holds NaN, never the padding."""
    xp = namespace(a)
    nd = len(k)
    sizes = a.shape[-nd:]
    outs = [_pool_out(n, kk, ss, pp, dd, ceil_mode) for n, kk, ss, pp, dd in zip(sizes, k, s, p, d)]
    # pad with the dtype's lowest value, and on the right far enough for ceil_mode's last window
    pads = []
    for n, o, kk, ss, pp, dd in zip(sizes, outs, k, s, p, d):
        need = (o - 1) * ss + dd * (kk - 1) + 1 - (n + 2 * pp)
        pads.append((pp, pp + max(need, 0)))
    low = -np.inf if a.dtype.kind == "f" else np.iinfo(a.dtype).min if a.dtype.kind in "iu" else False
    padded = pad_spatial(xp, a, pads, low)
    planes = _tap_planes(xp, padded, k, s, d, outs)
    best, tap = _first_max(xp, planes)
    if padded is not a and (best == low).any():
        # a window whose inside holds only the lowest value ties with its padding: torch reads only the
        # inside, so the window's first inside tap wins (an index into the padding lies outside the plane)
        inside = pad_spatial(xp, xp.ones(sizes, dtype=bool), pads, False)
        tap = xp.where(best == low, _first_max(xp, _tap_planes(xp, inside, k, s, d, outs))[1], tap)
    if a.dtype.kind == "f" and xp.isnan(best).any():   # NaN wins: the window's last NaN, where torch's loop
        has_nan, last_nan = _first_max(xp, xp.isnan(planes[::-1]))   # (which takes each NaN it meets) ends
        tap = xp.where(has_nan, len(planes) - 1 - last_nan, tap)
    # the winning tap's offset from its window's first corner, then the corner's flat position. NumPy
    # reads a table of 4-byte integers five times faster than one of 8 (52 against 260 µs for LeNet's
    # first pool), and adds the corners at full speed only along whole planes of one dtype (broadcast
    # along each plane's short rows, or int32 meeting int64, it runs an inner loop per row)
    step = [math.prod(sizes[i + 1:]) for i in range(nd)]   # flat stride of each spatial axis
    offsets = xp.asarray([sum(t * dd * st for t, dd, st in zip(taps, d, step))
                          for taps in itertools.product(*(range(kk) for kk in k))],
                         dtype=np.int32 if math.prod(padded.shape[-nd:]) < 2 ** 31 else np.int64)
    corner = 0
    for i, (o, ss, pp, st) in enumerate(zip(outs, s, p, step)):
        corner = corner + ((xp.arange(o, dtype=np.int64) * ss - pp) * st).reshape((-1,) + (1,) * (nd - 1 - i))
    index = xp.take(offsets, tap).astype(np.int64)
    rows = index.reshape(math.prod(tap.shape[:tap.ndim - nd]), math.prod(outs))   # a view, one row per plane
    rows += corner.reshape(-1)
    return index


def max_pool(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False, nd=2):
    own_1d = nd == 1 and not return_indices   # torch's own 1-d kernel, with checks of its own
    _check_pool_dims(input, nd, "max_pool1d" if own_1d else f"max_pool{nd}d_with_indices")
    k, s, p, d = _pool_args(kernel_size, stride, padding, dilation, nd, own_1d, f"max_pool{nd}d")
    if not own_1d:
        _check_pool_nonempty(_kernel_shape(input, nd), max(nd, 2), f"max_pool{max(nd, 2)}d")
        _check_half_kernel(k, p)
    shown = (k, s, p, d)   # as the learner gave them (the node runs the 2-d kernel)
    if nd == 1 and not return_indices and _pool_out(input.shape[-1], *k, *s, *p, *d, ceil_mode) < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: "
                           f"{_pool_out(input.shape[-1], *k, *s, *p, *d, ceil_mode)}")
    k, s, p, d = ((1,) * (2 - nd) + k, (1,) * (2 - nd) + s, (0,) * (2 - nd) + p, (1,) * (2 - nd) + d)
    found = []

    def pool(x):
        _check_pool_output(x, k, s, p, d, ceil_mode, f"max_pool{max(nd, 2)}d")
        index = _max_pool_indices(x._data, k, s, p, d, ceil_mode)
        found.append(index)
        return apply(MAX_POOL3D if nd == 3 else MAX_POOL2D, (x,), (index,) + shown)
    out = _as_4d(input, nd, pool)
    if not return_indices:
        return out
    index = found[0]
    return out, Tensor._make(index.reshape(out.shape))


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 1)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 2)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    return max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, return_indices, 3)


def _aten_max_pool(nd: int):
    """torch.max_poolNd (the top-level one): the same pooling under ATen's signature, where an empty
    stride is the kernel size and there is no return_indices."""
    def pool(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
        empty = isinstance(stride, (tuple, list)) and not stride
        return max_pool(input, kernel_size, None if empty else stride, padding, dilation, ceil_mode, False, nd)
    pool.__name__ = pool.__qualname__ = f"aten_max_pool{nd}d"
    return public(f"max_pool{nd}d")(pool)


aten_max_pool1d, aten_max_pool2d, aten_max_pool3d = (_aten_max_pool(nd) for nd in (1, 2, 3))


def check_adaptive_max_sizes(input, nd):
    """torch's adaptive max pools refuse an empty dim after the first (an unbatched input's channels may
    be empty)."""
    for d in range(1, input.ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"adaptive_max_pool{nd}d(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {list(input.shape)} with dimension {d} being empty")


def _check_adaptive_max_input(input, nd):
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"adaptive_max_pool{nd}d(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    check_adaptive_max_sizes(input, nd)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    size = adaptive_size("adaptive_max_pool2d", output_size, input, 2)
    _check_adaptive_max_input(input, 2)
    floating_kernel("adaptive_max_pool2d", input._data.dtype)
    return _adaptive_max_pool(input, size, return_indices, 2)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    size = adaptive_size("adaptive_max_pool3d", output_size, input, 3)
    _check_adaptive_max_input(input, 3)
    floating_kernel("adaptive_max_pool3d_cpu", input._data.dtype)
    return _adaptive_max_pool(input, size, return_indices, 3)


def _adaptive_max_pool(input, outs, return_indices, nd):
    """The max of every adaptive window of the trailing nd dims, and its flat index in its plane."""
    a = input._data
    xp = namespace(a)
    sizes = a.shape[-nd:]
    if min(outs) < 0:   # the kernel allocates its output first
        shape = list(a.shape[:-nd]) + list(outs)
        raise RuntimeError(f"Trying to create tensor with negative dimension {next(o for o in outs if o < 0)}: "
                           f"{shape}")
    # every window padded to the widest by repeating its last index (a repeat never changes the max); the
    # flat index of (output cell, tap) sums each axis's tap times the axis's flat stride, (*outs, *taps)
    idx = 0
    for i, (n, o) in enumerate(zip(sizes, outs)):
        starts, ends = _adaptive_bounds(n, o)
        taps = np.minimum(starts[:, None] + np.arange((ends - starts).max(initial=1)), ends[:, None] - 1)
        shape = [1] * (2 * nd)
        shape[i], shape[nd + i] = taps.shape
        idx = idx + (taps * math.prod(sizes[i + 1:])).reshape(shape)
    idx = idx.reshape(tuple(outs) + (math.prod(idx.shape[nd:]),))   # taps named: an empty output has none to infer
    vals = a.reshape(a.shape[:-nd] + (math.prod(sizes),))[..., xp.asarray(idx)]
    arg = xp.argmax(vals, axis=-1)
    index = xp.take_along_axis(xp.broadcast_to(xp.asarray(idx), vals.shape), arg[..., None], -1)[..., 0]
    index = index.astype(np.int64)
    out = apply(ADAPTIVE_MAX_POOL3D if nd == 3 else ADAPTIVE_MAX_POOL2D, (input,), (index, tuple(outs)))
    return (out, Tensor._make(index)) if return_indices else out


# -- upsampling -----------------------------------------------------------------------------------
def _nearest_matrix(n, out, scale):
    src = np.minimum(np.floor(np.arange(out, dtype=np.float32) * np.float32(scale)).astype(np.int64), n - 1)
    m = np.zeros((out, n))
    m[np.arange(out), src] = 1
    return m


def _linear_matrix(n, out, scale, align_corners):
    i = np.arange(out, dtype=np.float64)
    if align_corners:
        src = i * ((n - 1) / (out - 1) if out > 1 else 0.0)
    else:
        src = np.maximum((i + 0.5) * scale - 0.5, 0.0)
    i0 = np.minimum(np.floor(src).astype(np.int64), n - 1)
    i1 = np.minimum(i0 + 1, n - 1)
    lam = src - i0
    m = np.zeros((out, n))
    np.add.at(m, (np.arange(out), i0), 1 - lam)
    np.add.at(m, (np.arange(out), i1), lam)
    return m


def _nearest_exact_matrix(n, out, scale):
    src = np.minimum(np.floor((np.arange(out, dtype=np.float32) + np.float32(0.5)) * np.float32(scale))
                     .astype(np.int64), n - 1)
    m = np.zeros((out, n))
    m[np.arange(out), src] = 1
    return m


def _cubic_matrix(n, out, scale, align_corners):
    """Keys' cubic convolution as torch's upsample_bicubic2d computes it: A = −0.75, source positions
    not clamped at 0, the four taps clamped to the edge (a repeated edge pixel takes their weights)."""
    a = -0.75
    i = np.arange(out, dtype=np.float64)
    if align_corners:
        src = i * ((n - 1) / (out - 1) if out > 1 else 0.0)
    else:
        src = (i + 0.5) * scale - 0.5
    base = np.floor(src)
    t = src - base

    def near(x):   # |x| ≤ 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):    # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    m = np.zeros((out, n))
    for k, w in enumerate(weights):
        np.add.at(m, (np.arange(out), np.clip(base.astype(np.int64) - 1 + k, 0, n - 1)), w)
    return m


_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    nd = input.ndim - 2
    if mode in ("nearest", "area", "nearest-exact") and align_corners is not None:
        raise ValueError("align_corners option can only be set with the interpolating modes: linear | bilinear "
                         "| bicubic | trilinear")
    needs = {"linear": 1, "bilinear": 2, "trilinear": 3}.get(mode)
    if needs is not None and nd != needs:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs {needs + 2}D input")
    if nd not in (1, 2, 3) or (mode == "bicubic" and nd != 2) or mode not in _MODES.split(" | "):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {input.ndim}D) for "
                                  f"the modes: {_MODES} (got {mode})")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None else
                         "either size or scale_factor should be defined")
    spatial = tuple(input.shape[2:])
    if size is not None:
        out = _tuple(size, nd)
        scales = [n / o for n, o in zip(spatial, out)]
    else:
        factors = _tuple_float(scale_factor, nd)
        out = tuple(int(math.floor(n * f)) for n, f in zip(spatial, factors))
        scales = [1 / f for f in factors] if not recompute_scale_factor else [n / o for n, o in zip(spatial, out)]
    if mode == "area":     # torch: the adaptive average pool to the output size
        return adaptive_avg_pool(input, out, nd)
    if mode == "lanczos":
        raise NotImplementedError("interpolate: mode 'lanczos' is not supported here")
    if mode in ("nearest", "nearest-exact"):
        matrix, records = (_nearest_matrix, UPSAMPLE_NEAREST) if mode == "nearest" else \
            (_nearest_exact_matrix, UPSAMPLE_NEAREST_EXACT)
        mats = tuple(matrix(n, o, sc) for n, o, sc in zip(spatial, out, scales))
        return apply(records[nd][0], (input,), (mats, None, out, tuple(scales)))
    matrix, records = (_cubic_matrix, UPSAMPLE_BICUBIC) if mode == "bicubic" else (_linear_matrix, UPSAMPLE_LINEAR)
    mats = tuple(matrix(n, o, sc, bool(align_corners)) for n, o, sc in zip(spatial, out, scales))
    return apply(records[nd][0], (input,), (mats, None, out, tuple(scales)))


def _tuple_float(v, nd):
    if isinstance(v, (int, float)):
        return (float(v),) * nd
    return tuple(float(f) for f in v)


# -- reflect / replicate padding --------------------------------------------------------------------
def _gather_matrix(src, n):
    m = np.zeros((len(src), n))
    m[np.arange(len(src)), src] = 1
    return m


def _pad_circular(input, pad):
    """Per dim, a negative pad crops first (torch slices before it wraps), then the positive pads wrap
    the cropped values around. A pad longer than the cropped dim raises torch's error for one longer
    than the dim itself: torch copies it from memory it has not written yet (undefined values)."""
    x = input
    for k in range(len(pad) // 2):
        dim = input.ndim - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        n = x.shape[dim]
        if lo <= n and hi <= n and n + lo + hi < 0:   # a pad longer than the dim is the error below
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        cut_lo, cut_hi = max(-lo, 0), max(-hi, 0)
        lo, hi, n = max(lo, 0), max(hi, 0), n - cut_lo - cut_hi
        if lo > n or hi > n:
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if cut_lo or cut_hi:
            x = x.narrow(dim, cut_lo, n)
        parts = ([x.narrow(dim, n - lo, lo)] if lo else []) + [x] + ([x.narrow(dim, 0, hi)] if hi else [])
        x = cat(parts, dim) if len(parts) > 1 else x
    return x


def padding_mode(input, pad, mode):
    nd = len(pad) // 2
    if input.ndim not in (nd + 1, nd + 2) or not 1 <= nd <= 3:
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode == "circular":
        return _pad_circular(input, pad)
    mats = []
    for k in reversed(range(nd)):
        dim = input.ndim - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        n = input.shape[dim]
        i = np.arange(-lo, n + hi)
        if mode == "reflect":
            if lo >= n or hi >= n:
                raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                                   f"but got: padding ({lo}, {hi}) at dimension {dim} of input {list(input.shape)}")
            period = 2 * (n - 1)
            i = np.abs(i) % period if period else np.zeros_like(i)
            i = np.where(i >= n, period - i, i)
        elif mode == "replicate":
            i = np.clip(i, 0, n - 1)
        else:
            raise NotImplementedError(f"Unrecognised padding mode {mode}")
        mats.append(_gather_matrix(i, n))
    table = REFLECTION_PAD if mode == "reflect" else REPLICATION_PAD
    return apply(table[nd][0], (input,), (tuple(mats), None, tuple(pad)))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    if input.ndim != 4:
        raise NotImplementedError(f"Input Error: Only 4D input Tensors are supported (got {input.ndim}D)")
    return apply(IM2COL, (input,), (_tuple(kernel_size, 2), _tuple(dilation, 2), _tuple(padding, 2),
                                    _tuple(stride, 2)))


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    if input.ndim != 3:
        raise NotImplementedError(f"Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported "
                                  f"(got {input.ndim}D)")
    k, d, p, s = _tuple(kernel_size, 2), _tuple(dilation, 2), _tuple(padding, 2), _tuple(stride, 2)
    size = _tuple(output_size, 2)
    blocks = math.prod(_pool_out(n, kk, ss, pp, dd, False) for n, kk, ss, pp, dd in zip(size, k, s, p, d))
    if input.shape[1] % (k[0] * k[1]) or input.shape[2] != blocks:
        raise RuntimeError(f"Given output_size={list(size)}, kernel_size={list(k)}, dilation={list(d)}, "
                           f"padding={list(p)}, stride={list(s)}, expected size of input's dimension 2 to match the "
                           f"calculated number of sliding blocks {blocks}, but got input.size(2)={input.shape[2]}.")
    return apply(COL2IM, (input,), (size, k, d, p, s))




@public   # torch.pixel_shuffle too: the same signature
def pixel_shuffle(input, upscale_factor):
    if input.ndim < 3 or input.shape[-3] % (upscale_factor * upscale_factor):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={input.shape[-3] if input.ndim >= 3 else 0} is not "
                           f"divisible by {upscale_factor * upscale_factor}")
    return apply(PIXEL_SHUFFLE, (input,), (upscale_factor,))


@public   # torch.pixel_unshuffle too: the same signature
def pixel_unshuffle(input, downscale_factor):
    r = downscale_factor
    if input.ndim < 3 or input.shape[-1] % r or input.shape[-2] % r:
        raise RuntimeError(f"pixel_unshuffle expects height and width to be divisible by downscale_factor, but got "
                           f"{list(input.shape)} and downscale_factor={r}")
    return apply(PIXEL_UNSHUFFLE, (input,), (r,))


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- spatial transformers ---------------------------------------------------------------------------
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. "
                  "Please specify align_corners=True if the old behavior is desired. See the documentation of "
                  "grid_sample for details.")


def _base_axis(n, align_corners, dtype):
    """torch's linspace_from_neg_one in the grid's dtype: linspace(-1, 1, n), times (n − 1) then
    divided by n between pixel edges (0 for one pixel)."""
    if n <= 1:
        return np.zeros(max(n, 0), dtype)
    line = _linear_points(-1, 1, n, dtype)
    return line if align_corners else line * dtype.type(n - 1) / dtype.type(n)


def affine_grid(theta, size, align_corners=None):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (2, 3):
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
    elif len(size) == 5:
        raise NotImplementedError("affine_grid: 3D affine transforms (5D sizes) are not supported here")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(size[-2:]) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:   # torch's bmm of the base grid with θ
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [{size[0]}, 3] but got: "
                           f"[{theta.shape[0]}, 3].")
    h, w = size[-2:]
    dtype = theta._data.dtype
    base = np.empty((h, w, 3), dtype)
    base[..., 0] = _base_axis(w, align_corners, dtype)
    base[..., 1] = _base_axis(h, align_corners, dtype)[:, None]
    base[..., 2] = 1
    return apply(AFFINE_GRID, (theta,), (base,))


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    shapes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.shape[:1] != grid.shape[:1]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {shapes}")
    if grid.ndim == 0 or grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    if input.ndim == 4 and grid.ndim != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           f"{shapes}")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {SCALAR_TYPE[input._data.dtype.name]} but found "
                           f"{SCALAR_TYPE[grid._data.dtype.name]}")
    if input.ndim != 4 or mode == "bicubic":
        raise NotImplementedError("grid_sample: 5-D (volumetric) input and mode='bicubic' are not supported here")
    return apply(GRID_SAMPLE, (input, grid), (mode, padding_mode, bool(align_corners)))


# -- max unpooling ------------------------------------------------------------------------------------
def _unpool_output_size(input, kernel_size, stride, padding, output_size):
    default = [(input.shape[-len(kernel_size) + d] - 1) * stride[d] + kernel_size[d] - 2 * padding[d]
               for d in range(len(kernel_size))]
    if output_size is None:
        return default
    if len(output_size) == len(kernel_size) + 2:
        output_size = output_size[2:]
    if len(output_size) != len(kernel_size):
        raise ValueError(f"output_size should be a sequence containing {len(kernel_size)} or {len(kernel_size) + 2} "
                         f"elements, but it has a length of '{len(output_size)}'")
    for d in range(len(kernel_size)):
        low, high = default[d] - stride[d], default[d] + stride[d]
        if not low < output_size[d] < high:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {low} and {high})')
    return output_size


def _max_unpool(input, indices, out_size):
    """torch's max_unpool2d/3d kernel: (N, C, *planes) values written at their flat indices into planes of
    out_size."""
    index = indices._data
    size = math.prod(out_size)
    bad = index[(index < 0) | (index >= size)]
    if bad.size:   # torch names the first one in memory order
        raise RuntimeError(f"Found an invalid max index: {int(bad.reshape(-1)[0])} (output volumes are of size "
                           f"{'x'.join(str(n) for n in out_size)})")
    return apply(MAX_UNPOOL[len(out_size)], (input,), (index, tuple(out_size)))


def _check_unpool_indices(shape, indices_shape) -> None:
    """The indices give one place per input value (a 1-d unpool's shapes as its 2-d kernel sees them)."""
    if tuple(indices_shape) != tuple(shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(shape)}) "
                           f"but got indices tensor with shape: {list(indices_shape)}")


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k = _tuple(kernel_size, 1)
    s = _tuple(stride, 1) if stride is not None else k
    size = _unpool_output_size(input, k, s, _tuple(padding, 1), output_size)
    _check_unpool_indices(input.shape + (1,), indices.shape + (1,))
    # torch: the 2-d kernel on a trailing size-1 dim, squeezed away (SqueezeBackward1)
    return _max_unpool(input.unsqueeze(-1), indices.unsqueeze(-1), tuple(size) + (1,)).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k = _tuple(kernel_size, 2)
    s = _tuple(stride, 2) if stride is not None else k
    size = tuple(_unpool_output_size(input, k, s, _tuple(padding, 2), output_size))
    _check_unpool_indices(input.shape, indices.shape)
    return _max_unpool(input, indices, size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k = _tuple(kernel_size, 3)
    s = _tuple(stride, 3) if stride is not None else k
    size = tuple(_unpool_output_size(input, k, s, _tuple(padding, 3), output_size))
    if indices._data.dtype != np.int64:
        raise RuntimeError("elements in indices should be type int64")
    if input.ndim not in (4, 5):
        raise RuntimeError(f"Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with "
                           f"{input.ndim} dimensions.")
    _check_unpool_indices(input.shape, indices.shape)
    return _max_unpool(input, indices, size)


@public   # torch.channel_shuffle too: the same signature
def channel_shuffle(input, groups):
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes "
                           f"{list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{groups}")
    if input.shape[1] % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {input.shape[1]} channels and "
                           f"{groups} groups.")
    return apply(CHANNEL_SHUFFLE, (input,), (groups,))
