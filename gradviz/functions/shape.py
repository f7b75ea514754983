"""Views, permutations, joins and splits on Tensors: torch's size arguments and errors, then
the records of gradviz.ops.shape."""
from __future__ import annotations

import math

import numpy as np

from .._warn import warn_once
from .. import backend
from ..autograd.apply import apply
from .._args import argument_error, int_sizes, invalid_arguments, type_name
from ..ops.core import broadcast_shape
from ..ops.reduce import normalize_dims
from ..tensor import Tensor
from ..creation import zeros
from ..ops.shape import (BLOCK_DIAG, CAT, CLONE, CLONE_CONTIGUOUS, DIAG_COPY, DIAG_EMBED, EXPAND, FLIP, PERMUTE,
                         REPEAT, RESHAPE_ALIAS, ROLL, ROT90, SQUEEZE, SQUEEZE_ALL_INPLACE, SQUEEZE_DIM, SQUEEZE_DIMS,
                         SQUEEZE_DIMS_INPLACE, SQUEEZE_INPLACE, STACK, T, T_INPLACE, TO_COPY, TO_DEVICE, TRANSPOSE,
                         TRANSPOSE_INPLACE, TRIL, TRIU, UNSAFE_VIEW, UNSQUEEZE, UNSQUEEZE_INPLACE, VIEW, split_op,
                         unbind_op)
from ..dtypes import Size, as_np, check_memory_format, result_type
from ..ops.index import SLICE
from ..ops.pool import UNFOLD
from .public import public


def _outputs(op, inputs, params) -> tuple:
    out = apply(op, inputs, params)
    return (out,) if op.n_outputs == 1 else out


# -- public functions ---------------------------------------------------------------
def varargs(args: tuple) -> tuple:
    """f(a, b, c) and f((a, b, c)) (or f([a, b, c])) alike: the items as a tuple."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        return tuple(args[0])
    return args


def _resolve_shape(shape, numel: int, fn: str = "reshape", arg: str = "shape") -> tuple:
    shape = int_sizes(fn, arg, shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if -1 in shape:
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if s == -1 else s for s in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _view_strides(old_shape, old_strides, shape):
    """The strides (in elements) that show an array of old_shape and old_strides as `shape` without
    a copy, or None where no strides can (ATen's computeStride, which decides torch's view())."""
    if not old_shape:
        return (1,) * len(shape)
    if math.prod(old_shape) == 0:   # nothing to lay out: any shape of no elements is a view
        if tuple(old_shape) == tuple(shape):
            return tuple(old_strides)
        return tuple(math.prod(max(s, 1) for s in shape[d + 1:]) for d in range(len(shape)))
    strides = [0] * len(shape)
    view_d, base = len(shape) - 1, old_strides[-1]
    tensor_numel = view_numel = 1
    for d in range(len(old_shape) - 1, -1, -1):
        tensor_numel *= old_shape[d]
        # a chunk ends where the next dim out is not laid right after this one
        if d == 0 or (old_shape[d - 1] != 1 and old_strides[d - 1] != tensor_numel * base):
            while view_d >= 0 and (view_numel < tensor_numel or shape[view_d] == 1):
                strides[view_d] = view_numel * base
                view_numel *= shape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if d > 0:
                base, tensor_numel, view_numel = old_strides[d - 1], 1, 1
    return tuple(strides) if view_d == -1 else None


def _viewable(a, shape) -> bool:
    """Can `a` take `shape` without a copy (its strides allow it)?"""
    lead = a.ndim - 1
    if lead >= 0 and a.strides[-1] == a.itemsize and tuple(shape[:lead]) == a.shape[:-1] and \
            math.prod(shape[lead:]) == a.shape[-1]:   # a contiguous last dim split in several (heads): always
        return True
    return _view_strides(a.shape, [s // a.itemsize for s in a.strides], tuple(shape)) is not None


@public
def reshape(input, *shape):
    shape = _resolve_shape(shape, input.numel())
    a = input._data
    if a.flags.c_contiguous:
        return apply(VIEW, (input,), (shape,))
    if _viewable(a, shape):
        return apply(RESHAPE_ALIAS, (input,), (shape,))
    return apply(UNSAFE_VIEW, (clone(input, contiguous=True),), (shape,))


@public
def view(input, *shape):
    shape = _resolve_shape(shape, input.numel(), "view", "size")
    if not input._data.flags.c_contiguous and not _viewable(input._data, shape):
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one dimension "
                           "spans across two contiguous subspaces). Use .reshape(...) instead.")
    return apply(VIEW, (input,), (shape,))


def unsafe_view(input, *shape):
    """at::_unsafe_view: the reshape of a tensor known to be a fresh contiguous copy."""
    return apply(UNSAFE_VIEW, (input,), (_resolve_shape(shape, input.numel()),))


@public
def contiguous(input):
    return input if input._data.flags.c_contiguous else clone(input, contiguous=True)


@public
def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, 1)
    s, e = normalize_dims(start_dim, input.ndim)[0], normalize_dims(end_dim, input.ndim)[0]
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    shape = tuple(input.shape[:s]) + (-1,) + tuple(input.shape[e + 1:])
    return reshape(input, *shape)


@public
def squeeze(input, dim=None):
    if dim is None:
        shape = tuple(s for s in input.shape if s != 1)
        return apply(SQUEEZE, (input,), (shape,))
    dims = normalize_dims(dim, input.ndim)
    shape = tuple(s for i, s in enumerate(input.shape) if not (i in dims and s == 1))
    return apply(SQUEEZE_DIM if isinstance(dim, int) else SQUEEZE_DIMS, (input,), (shape, dim))


# -- the in-place view ops, as views of their input recorded under torch's in-place node names:
# Tensor.squeeze_ (and the others) makes the tensor take the result; matmul squeezes its result so
def squeeze_(input, dim=None):
    """squeeze_() (SqueezeBackward3), squeeze_(dim) (SqueezeBackward4), squeeze_(dims) (SqueezeBackward5)."""
    if dim is None:
        return apply(SQUEEZE_ALL_INPLACE, (input,), (tuple(s for s in input.shape if s != 1),))
    dims = normalize_dims(dim, input.ndim)
    shape = tuple(s for i, s in enumerate(input.shape) if not (i in dims and s == 1))
    return apply(SQUEEZE_INPLACE if isinstance(dim, (int, np.integer)) else SQUEEZE_DIMS_INPLACE, (input,),
                 (shape, dim))


def unsqueeze_(input, dim):
    return _unsqueeze(UNSQUEEZE_INPLACE, input, dim)


def transpose_(input, dim0, dim1):
    return _transpose(TRANSPOSE_INPLACE, input, dim0, dim1)


def t_(input):
    return _t(T_INPLACE, "t_", input)


@public
def unsqueeze(input, dim):
    return _unsqueeze(UNSQUEEZE, input, dim)


def _unsqueeze(op, input, dim):
    """unsqueeze or unsqueeze_ (the record says which)."""
    (d,) = normalize_dims(dim, input.ndim + 1)
    return apply(op, (input,), (d,))


@public
def permute(input, *dims):
    dims = varargs(dims)
    if len(dims) != input.ndim:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {input.ndim} is not "
                           f"equal to len(dims) = {len(dims)}")
    dims = tuple(normalize_dims(d, input.ndim)[0] for d in dims)
    if len(set(dims)) != len(dims):
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return apply(PERMUTE, (input,), (dims,))


@public
def transpose(input, dim0, dim1):
    return _transpose(TRANSPOSE, input, dim0, dim1)


def _transpose(op, input, dim0, dim1):
    (d0,), (d1,) = normalize_dims(dim0, input.ndim), normalize_dims(dim1, input.ndim)
    return apply(op, (input,), (d0, d1))


@public
def t(input):
    return _t(T, "t", input)


def _t(op, name: str, input):
    if input.ndim > 2:
        raise RuntimeError(f"{name}() expects a tensor with <= 2 dimensions, but self is {input.ndim}D")
    return apply(op, (input,))


@public
def expand(input, *sizes):
    sizes = varargs(sizes)
    lead = len(sizes) - input.ndim
    if lead < 0:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(input.shape)}}}, size={list(sizes)}): the number of "
                           f"sizes provided ({len(sizes)}) must be greater or equal to the number of dimensions in "
                           f"the tensor ({input.ndim})")
    shape = list(sizes)
    for i in reversed(range(len(sizes))):   # torch checks from the last dim
        s, own = sizes[i], input.shape[i - lead] if i >= lead else 1
        if s == -1:
            if i < lead:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                                   f"dimension {i}")
            shape[i] = own
        elif own != 1 and own != s:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({own}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(input.shape)}")
    return apply(EXPAND, (input,), (tuple(shape),))


@public
def repeat(input, *reps):
    reps = varargs(reps)
    if len(reps) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    sizes = (1,) * (len(reps) - input.ndim) + tuple(input.shape)
    out = [n * r for n, r in zip(sizes, reps)]
    for n in out:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: {out}")
    return apply(REPEAT, (input,), (tuple(reps),))


@public
def flip(input, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    dims = normalize_dims(dims, input.ndim)
    return apply(FLIP, (input,), (dims if input.ndim else (),))   # a 0-d tensor flips to itself


@public
def clone(input, *, contiguous=False, memory_format=None):
    check_memory_format(memory_format, input.ndim)
    if contiguous and not input._data.flags.c_contiguous:   # clone(memory_format=torch.contiguous_format)
        return apply(CLONE_CONTIGUOUS, (input,))
    return apply(CLONE, (input,))


def to_device(input, device):
    """input on `device`, recorded (ToCopyBackward0: the gradient moves back)."""
    return apply(TO_DEVICE, (input,), (backend.device(device), input.device))


def to_dtype(input, np_dtype):
    if input._data.dtype == np_dtype:
        return input
    return apply(TO_COPY, (input,), (np_dtype,))


def _common_dtype(tensors):
    """The promoted dtype when the inputs differ (cat and stack promote inside the one node)."""
    first = tensors[0]._data.dtype
    if all(t._data.dtype == first for t in tensors):
        return None
    return result_type([t._data for t in tensors])


def _tensor_list(fn: str, tensors) -> tuple:
    """torch's parser's check of a list of tensors (cat, stack, hstack, ...): a list or tuple of Tensors."""
    if not isinstance(tensors, (list, tuple)):
        raise argument_error(fn, "tensors", 1, "tuple of Tensors", type_name(tensors))
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(t)}")
    return tuple(tensors)


@public('cat', 'concat', 'concatenate', out=True)
def cat(tensors, dim=0):
    tensors = _tensor_list("cat", tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    tensors = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or list(tensors)[:1]
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    (d,) = normalize_dims(dim, tensors[0].ndim)
    first = tensors[0]
    for i, t in enumerate(tensors[1:], 1):
        if t.ndim != first.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.ndim} and {t.ndim}")
        for j, (a, b) in enumerate(zip(first.shape, t.shape)):
            if j != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {a} but got "
                                   f"size {b} for tensor number {i} in the list. (shapes "
                                   f"{[list(x.shape) for x in tensors]})")
    return apply(CAT, tuple(tensors), (d,), _common_dtype(tensors))


concat = concatenate = cat


@public(out=True)
def stack(tensors, dim=0):
    tensors = _tensor_list("stack", tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, t in enumerate(tensors[1:], 1):
        if t.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                               f"entry 0 and {list(t.shape)} at entry {i}")
    (d,) = normalize_dims(dim, tensors[0].ndim + 1)
    return apply(STACK, tuple(tensors), (d,), _common_dtype(tensors))


@public
def split(tensor, split_size_or_sections, dim=0):
    (d,) = normalize_dims(dim, tensor.ndim)
    n = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size={step}")
        if step == 0 and n:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
        step = step or 1
        sizes = [min(step, n - i) for i in range(0, n, step)] or [0]
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                               f"split_sizes={sizes}")
        if sum(sizes) != n:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size "
                               f"at dimension {d}), but got split_sizes={sizes}")
        return _outputs(split_op(len(sizes), "SplitWithSizesBackward0"), (tensor,), (tuple(sizes), d))
    return _outputs(split_op(len(sizes)), (tensor,), (tuple(sizes), d))


@public(method=True)
def split_with_sizes(input, split_sizes, dim=0):
    """torch.split_with_sizes: split by a list of sizes (an int is refused)."""
    if not isinstance(split_sizes, (list, tuple)):
        raise argument_error("split_with_sizes", "split_sizes", 2, "tuple of ints", type_name(split_sizes))
    return split(input, split_sizes, dim)


@public
def chunk(input, chunks, dim=0):
    (d,) = normalize_dims(dim, input.ndim)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = input.shape[d]
    step = -(-n // chunks)
    return split(input, step, d)


@public
def unbind(input, dim=0):
    if input.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    (d,) = normalize_dims(dim, input.ndim)
    return _outputs(unbind_op(input.shape[d]), (input,), (d,))


def _triangle(op, input, diagonal, lower):
    if input.ndim < 2:
        raise RuntimeError(f"{op.name}: input tensor must have at least 2 dimensions")
    n, m = input.shape[-2:]
    xp = backend.namespace_of(input._data)
    keep = xp.tri(n, m, diagonal, dtype=bool) if lower else ~xp.tri(n, m, diagonal - 1, dtype=bool)
    return apply(op, (input,), (diagonal, keep))


@public(out=True)
def tril(input, diagonal=0):
    return _triangle(TRIL, input, diagonal, True)


@public(out=True)
def triu(input, diagonal=0):
    return _triangle(TRIU, input, diagonal, False)


@public
def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    ndim = input.ndim + 1
    (d1,), (d2,) = normalize_dims(dim1, ndim), normalize_dims(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (input.shape[-1] if input.ndim else 1) + abs(offset)
    rest = list(input.shape[:-1])
    shape = []
    for i in range(ndim):
        shape.append(n if i in (d1, d2) else rest.pop(0))
    return apply(DIAG_EMBED, (input,), (tuple(shape), offset, d1, d2))


@public(out=True)
def diag(input, diagonal=0):
    """A vector to a matrix with it on a diagonal; a matrix to the vector of a diagonal."""
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim != 2:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " f"{input.ndim}D")
    return apply(DIAG_COPY, (input,), (diagonal,))


@public
def broadcast_to(input, size):
    return expand(input, *size)


@public
def numel(input) -> int:
    return input.numel()


@public
def broadcast_shapes(*shapes):
    """The shape the shapes broadcast to, checked with torch's words (torch._refs._broadcast_shapes)."""
    shapes = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    for s in shapes:
        if not isinstance(s, (tuple, list)):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}")
    common = [1] * max((len(s) for s in shapes), default=0)
    for i, s in enumerate(shapes):
        for d in range(-1, -1 - len(s), -1):
            if s[d] == common[d]:
                continue
            if common[d] == 1:
                if s[d] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[d] = s[d]
            elif s[d] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[d]} at {d}! Mismatching "
                                   f"argument at index {i} had {s}; but expected shape should be broadcastable to "
                                   f"{common}")
    return Size(common)


@public
def broadcast_tensors(*tensors):
    """Each tensor expanded to the common shape (a tensor already of that shape is returned as is)."""
    tensors = varargs(tensors)
    shape = broadcast_shape(*(tuple(t.shape) for t in tensors))
    return tuple(t if tuple(t.shape) == shape else expand(t, *shape) for t in tensors)


@public('moveaxis', 'movedim')
def movedim(input, source, destination):
    src = (source,) if isinstance(source, int) else tuple(source)
    dst = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(src)} dims) should contain "
                           f"the same number of dims as destination ({list(dst)} dims)")
    n = input.ndim
    wrapped = [tuple(normalize_dims(d, n)[0] for d in dims) for dims in (src, dst)]
    for what, dims, given in zip(("source", "destination"), wrapped, (src, dst)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{what}` ({list(given)})")
    src, dst = wrapped
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = tuple(next(rest) if o is None else o for o in order)
    return apply(PERMUTE, (input,), (order,))


moveaxis = movedim


@public('swapaxes', 'swapdims')
def swapaxes(input, axis0, axis1):
    return transpose(input, axis0, axis1)


swapdims = swapaxes


@public
def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = () if dims is None else (dims,) if isinstance(dims, int) else tuple(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:   # the flattened input, rolled
        return apply(ROLL, (input,), (shifts[0], None))
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if input.ndim == 0:   # torch reads size(dim), which no dim of a 0-d tensor has
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    dims = tuple(normalize_dims(d, input.ndim)[0] for d in dims)
    return apply(ROLL, (input,), (tuple(shifts), dims))


@public
def tile(input, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return repeat(input, *((1,) * (input.ndim - len(dims)) + dims))


@public(method=True)
def ravel(input):
    return view(contiguous(input), -1)


@public
def atleast_1d(*tensors):
    tensors = varargs(tensors)
    out = tuple(reshape(t, 1) if t.ndim == 0 else t for t in tensors)
    return out[0] if len(out) == 1 else out


@public
def meshgrid(*tensors, indexing=None):
    """Each 1-D tensor viewed along its own axis, then expanded to the grid ('xy' swaps the
    first two axes, as NumPy's meshgrid)."""
    tensors = varargs(tensors)
    if indexing is None:
        warn_once("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.")
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for a, b in zip(tensors, tensors[1:]):
        if a._data.dtype != b._data.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
        if a.device != b.device:
            raise RuntimeError("meshgrid expects all tensors to have the same device")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(range(len(tensors)))
    if swap:
        order[0], order[1] = 1, 0
    sizes = [tensors[i].numel() for i in order]
    out = []
    for i, t in enumerate(tensors):
        axis = order.index(i)
        shape = [1] * len(tensors)
        shape[axis] = -1
        out.append(expand(view(t, *shape), *sizes))
    return tuple(out)


# -- forward mode (autograd.forward_ad): every op here is linear, so it maps tangents as values --


# -- stacking and splitting by axis name, rotations, block diagonals -------------------------------
def _each(fn, tensors):
    """f(t) for one tensor, a tuple of f(t) for several (or for a list), as torch.atleast_2d."""
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return fn(tensors[0])
    return tuple(fn(t) for t in varargs(tensors))


def _to_2d(t):
    return reshape(t, 1, 1) if t.ndim == 0 else unsqueeze(t, 0) if t.ndim == 1 else t


def _to_3d(t):
    if t.ndim == 0:
        return reshape(t, 1, 1, 1)
    if t.ndim == 1:
        return unsqueeze(unsqueeze(t, 0), -1)
    return unsqueeze(t, -1) if t.ndim == 2 else t


@public
def atleast_2d(*tensors):
    return _each(_to_2d, tensors)


@public
def atleast_3d(*tensors):
    return _each(_to_3d, tensors)


def _nonempty(name: str, tensors) -> tuple:
    tensors = _tensor_list(name, tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


@public
def hstack(tensors):
    tensors = tuple(atleast_1d(t) for t in _nonempty("hstack", tensors))
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


@public('row_stack', 'vstack')
def vstack(tensors):
    return cat(tuple(_to_2d(t) for t in _nonempty("vstack", tensors)), 0)


row_stack = vstack


@public
def dstack(tensors):
    return cat(tuple(_to_3d(t) for t in _nonempty("dstack", tensors)), 2)


@public
def column_stack(tensors):
    tensors = _nonempty("column_stack", tensors)
    return cat(tuple(reshape(t, t.numel(), 1) if t.ndim <= 1 else t for t in tensors), 1)


@public(method=True)
def tensor_split(input, indices_or_sections, dim=0):
    """Views of input along dim: n nearly equal sections (the first n mod k one longer) for an int,
    the pieces between the given indices for a list, as torch.tensor_split."""
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    (d,) = normalize_dims(dim, input.ndim)
    n = input.shape[d]
    spec = indices_or_sections
    if isinstance(spec, Tensor):
        if spec._data.dtype != np.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{spec.dtype}")
        if spec.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {spec.ndim} dims")
        spec = int(spec._data) if spec.ndim == 0 else [int(i) for i in spec._data]
    if isinstance(spec, (int, np.integer)):
        k = int(spec)
        if k <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {k}")
        size, extra = divmod(n, k)
        bounds = [i * size + min(i, extra) for i in range(k + 1)]
        pieces = list(zip(bounds[:-1], bounds[1:]))
    else:
        cuts = [int(i) for i in spec]
        pieces = []
        for start, end in zip([0] + cuts, cuts + [n]):
            s, e, _ = slice(start, end).indices(n)
            pieces.append((s, max(s, e)))
    return tuple(apply(SLICE, (input,), (d, s, e, 1)) for s, e in pieces)


def _split_by_axis(name: str, input, sections, dim: int, least: int):
    if not (hasattr(type(sections), "__index__") or isinstance(sections, (list, tuple, Tensor))):   # 'abc', 2.5
        note = f"\n      didn't match because some of the arguments have invalid types: (Tensor, !{type_name(sections)}!)"
        signatures = ("Tensor input, int sections" + note, "Tensor input, tuple of ints indices" + note)
        error = invalid_arguments(name, (input, sections), {}, signatures)
        error.combination = (name, (input, sections), {}, signatures)
        raise error
    if input.ndim < least:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {least} dimension, but got a tensor with "
                           f"{input.ndim} dimensions!")
    if isinstance(sections, (int, np.integer)):
        size = input.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                               f"{size} is not divisible by the split_size {sections}!")
    return tensor_split(input, sections, dim)


@public(method=True)
def hsplit(input, indices_or_sections):
    return _split_by_axis("hsplit", input, indices_or_sections, 0 if input.ndim == 1 else 1, 1)


@public(method=True)
def vsplit(input, indices_or_sections):
    return _split_by_axis("vsplit", input, indices_or_sections, 0, 2)


@public(method=True)
def dsplit(input, indices_or_sections):
    return _split_by_axis("dsplit", input, indices_or_sections, 2, 3)


@public(method=True)
def unflatten(input, dim, sizes):
    """dim split into `sizes` (one may be −1), a view as torch records it."""
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    (d,) = normalize_dims(dim, input.ndim)
    n = input.shape[d]
    known = -int(np.prod(sizes)) if sizes.count(-1) == 1 else 0   # the product of the sizes given
    if known and n % known:   # torch checks that the sizes given divide the dim before inferring the -1
        inner = None
    else:
        inner = _resolve_shape(sizes, n) if -1 in sizes or int(np.prod(sizes)) == n else None
    if inner is None:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({n}) in the input tensor")
    return reshape(input, *(tuple(input.shape[:d]) + inner + tuple(input.shape[d + 1:])))


@public(method=True)
def fliplr(input):
    if input.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


@public(method=True)
def flipud(input):
    if input.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


@public(method=True)
def rot90(input, k=1, dims=(0, 1)):
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (normalize_dims(d, input.ndim)[0] for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return apply(ROT90, (input,), (int(k) % 4, (d0, d1)))


@public(method=True)
def diagflat(input, offset=0):
    return diag_embed(reshape(input, -1), offset, 0, 1)


@public
def block_diag(*tensors):
    tensors = varargs(tensors) if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)) else tensors
    for i, t in enumerate(tensors):
        if t.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
    if not tensors:
        return zeros(1, 0)
    return apply(BLOCK_DIAG, tuple(tensors), (), _common_dtype(tensors))


@public
def cartesian_prod(*tensors):
    """Every combination of the 1-D inputs' elements, one per row: meshgrid, flattened, stacked."""
    tensors = varargs(tensors)
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, -1) for g in grids], 1)




@public
def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None):
    """The (2, N) row and column indices of the lower triangle of a row × col matrix, row by row."""
    return _triangle_indices(np.tril_indices(row, offset, col), dtype, device)


@public
def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None, layout=None):
    return _triangle_indices(np.triu_indices(row, offset, col), dtype, device)


def _triangle_indices(pair, dtype, device):
    out = np.stack(pair).astype(np.int64 if dtype is None else as_np(dtype)) if pair[0].size else \
        np.zeros((2, 0), dtype=np.int64 if dtype is None else as_np(dtype))
    return Tensor._make(out if device is None else backend.to_device(out, device))


@public(method=("unfold",), function=False)
def unfold(input, dimension, size, step):
    """Tensor.unfold: every `size`-long window along `dimension`, `step` apart, as a view (torch has
    no torch.unfold; gradviz.nn.functional.unfold, im2col, is another function)."""
    for name, value, position in (("dimension", dimension, 2), ("size", size, 3), ("step", step, 4)):
        if type(value) is not int and not isinstance(value, np.integer):
            raise argument_error("unfold", name, position, "int", type_name(value))
    (d,) = normalize_dims(int(dimension), max(input.ndim, 1))
    length = input.shape[d] if input.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {length} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return apply(UNFOLD, (input,), (d, int(size), int(step)))
