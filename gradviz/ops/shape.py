"""Shape ops: views, permutations, joins and splits. Their VJPs only move ḡ around."""
from __future__ import annotations

import functools

import numpy as np

from .op import Op


def _reshaped(name, torch_name, latex, params=("size",), **display):
    """An op whose forward is a reshape to params[0] and whose VJP reshapes ḡ back."""
    display.setdefault("vjp_latex", (r"\bar{g}\text{ reshaped to the shape of } $0",))
    return Op(name, torch_name, latex, lambda xp, a, shape, *rest: a.reshape(shape),
              vjp=(lambda xp, g, c, a, shape, *rest: xp.reshape(g, a.shape),), params=params, **display)


# x.reshape() is a view of a contiguous x (ViewBackward0), a view with other strides when
# those allow it (ReshapeAliasBackward0), and otherwise a copy (CloneBackward0, then
# UnsafeViewBackward0): as in PyTorch, the graph shows when reshape copies.
VIEW = _reshaped("view", "ViewBackward0", r"$c = \operatorname{view}($0,\, $size)", jvp="linear")
RESHAPE_ALIAS = _reshaped("reshape", "ReshapeAliasBackward0",
                          r"$c = \operatorname{reshape}($0,\, $size) \text{ (a view)}",
                          jvp="linear")
UNSAFE_VIEW = _reshaped("reshape", "UnsafeViewBackward0",
                        r"$c = \operatorname{reshape}($0,\, $size) \text{ (of a fresh copy)}",
                        jvp="linear")
SQUEEZE_DIMS = _reshaped("squeeze", "SqueezeBackward2", r"$c = \operatorname{squeeze}($0,\, $dim)",
                         ("size", "dim"), jvp="linear")
SQUEEZE_INPLACE = _reshaped("squeeze_", "SqueezeBackward4",
                            r"$c = \operatorname{squeeze}($0,\, $dim) \text{ (in place)}",
                            ("size", "dim"), jvp="linear")
SQUEEZE = _reshaped("squeeze", "SqueezeBackward0", r"$c = \operatorname{squeeze}($0)",
                    vjp_latex=(r"\bar{g}\text{ unsqueezed}",), jvp="linear")
SQUEEZE_DIM = _reshaped("squeeze", "SqueezeBackward1", r"$c = \operatorname{squeeze}($0,\, $dim)", ("size", "dim"),
                        vjp_latex=(r"\bar{g}\text{ unsqueezed}",), jvp="linear")
UNSQUEEZE = Op("unsqueeze", "UnsqueezeBackward0", r"$c = \operatorname{unsqueeze}($0,\, $dim)",
               lambda xp, a, dim: xp.expand_dims(a, dim),
               # on Tensors (a recorded VJP) torch's squeeze(dim), so a double backward records SqueezeBackward1
               vjp=(lambda xp, g, c, a, dim: xp.reshape(g, a.shape) if xp.arrays else g.squeeze(dim),),
               params=("dim",),
               vjp_latex=(r"\bar{g}\text{ squeezed}",), jvp="linear")
PERMUTE = Op("permute", "PermuteBackward0", r"$c = \operatorname{permute}($0,\, $dims)",
             lambda xp, a, dims: xp.transpose(a, dims),
             vjp=(lambda xp, g, c, a, dims: xp.transpose(g, tuple(np.argsort(dims))),), params=("dims",),
             vjp_latex=(r"\bar{g}\text{ permuted back}",), jvp="linear")
TRANSPOSE = Op("transpose", "TransposeBackward0", r"$c = $0^{\top} \text{ (dim } $dim0 \leftrightarrow $dim1\text{)}",
               lambda xp, a, d0, d1: xp.swapaxes(a, d0, d1) if a.ndim else a.view(),   # 0-d: transpose(0, 0)
               vjp=(lambda xp, g, c, a, d0, d1: xp.swapaxes(g, d0, d1) if g.ndim else g,),
               params=("dim0", "dim1"),
               vjp_latex=(r"\bar{g}^{\top}",), jvp="linear")
T = Op("t", "TBackward0", r"$c = $0^{\top}", lambda xp, a: a.T, vjp=(lambda xp, g, c, a: g.T,),
       vjp_latex=(r"\bar{g}^{\top}",), jvp="linear")
# The in-place forms (x.unsqueeze_(0), x.t_()): the same views, that torch records under other node names
SQUEEZE_ALL_INPLACE = _reshaped("squeeze_", "SqueezeBackward3", r"$c = \operatorname{squeeze}($0) \text{ (in place)}",
                                vjp_latex=(r"\bar{g}\text{ unsqueezed}",), jvp="linear")
SQUEEZE_DIMS_INPLACE = _reshaped("squeeze_", "SqueezeBackward5",
                                 r"$c = \operatorname{squeeze}($0,\, $dim) \text{ (in place)}",
                                 ("size", "dim"), jvp="linear")
UNSQUEEZE_INPLACE = Op("unsqueeze_", "UnsqueezeBackward1",
                       r"$c = \operatorname{unsqueeze}($0,\, $dim) \text{ (in place)}",
                       lambda xp, a, dim: xp.expand_dims(a, dim),
                       vjp=(lambda xp, g, c, a, dim: xp.reshape(g, a.shape),),
                       params=("dim",),
                       vjp_latex=(r"\bar{g}\text{ squeezed}",), jvp="linear")
TRANSPOSE_INPLACE = Op("transpose_", "TransposeBackward1",
                       r"$c = $0^{\top} \text{ (dim } $dim0 \leftrightarrow $dim1\text{, in place)}",
                       lambda xp, a, d0, d1: xp.swapaxes(a, d0, d1) if a.ndim else a.view(),
                       vjp=(lambda xp, g, c, a, d0, d1: xp.swapaxes(g, d0, d1) if g.ndim else g,), params=("dim0", "dim1"),
                       vjp_latex=(r"\bar{g}^{\top}",), jvp="linear")
T_INPLACE = Op("t_", "TBackward1", r"$c = $0^{\top} \text{ (in place)}",
               lambda xp, a: a.T, vjp=(lambda xp, g, c, a: g.T,),
               vjp_latex=(r"\bar{g}^{\top}",), jvp="linear")
# the engine sums ḡ over the expanded axes (the same unbroadcast as for + and ⊙)
EXPAND = Op("expand", "ExpandBackward0", r"$c = \operatorname{expand}($0,\, $size)",
            lambda xp, a, shape: xp.broadcast_to(a, shape),
            vjp=(lambda xp, g, c, a, shape: g,), params=("size",),
            vjp_latex=(r"\sum \bar{g}\text{ over the expanded axes}",),
            broadcasts=(0,), jvp="linear")


def _repeat_vjp(xp, g, c, a, reps):
    shape = (1,) * (len(reps) - a.ndim) + tuple(a.shape)
    split = []
    for r, s in zip(reps, shape):
        split += [r, s]
    summed = xp.sum(xp.reshape(g, tuple(split)), axis=tuple(range(0, 2 * len(reps), 2)))
    return xp.reshape(summed, a.shape)


REPEAT = Op("repeat", "RepeatBackward0", r"$c = \operatorname{repeat}($0,\, $repeats)",
            lambda xp, a, reps: xp.tile(a, reps),
            vjp=(_repeat_vjp,), params=("repeats",),
            vjp_latex=(r"\sum \bar{g}\text{ over the copies}",), jvp="linear")
# a copy in a's memory layout (NumPy's flip is a view with negative strides; PyTorch's a new tensor)
FLIP = Op("flip", "FlipBackward0", r"$c = \operatorname{flip}($0,\, $dims)", lambda xp, a, dims: _flipped(xp, a, dims),
          vjp=(lambda xp, g, c, a, dims: xp.flip(g, dims),), params=("dims",),
          vjp_latex=(r"\operatorname{flip}(\bar{g})",), jvp="linear")
# clone keeps the memory layout (torch.preserve_format), so x.T.clone() is still not contiguous
def _flipped(xp, a, dims):
    out = xp.empty_like(a)   # keeps a's layout, as torch.preserve_format
    out[...] = xp.flip(a, dims)
    return out


CLONE = Op("clone", "CloneBackward0", r"$c = $0", lambda xp, a: a.copy(order="K"), vjp=(lambda xp, g, c, a: g,),
           vjp_latex=(r"\bar{g}",), jvp="linear")
CLONE_CONTIGUOUS = Op("clone", "CloneBackward0", r"$c = $0 \text{ (contiguous)}", lambda xp, a: xp.ascontiguousarray(a),
                      vjp=(lambda xp, g, c, a: g,),
                      vjp_latex=(r"\bar{g}",), jvp="linear")
TO_COPY = Op("to", "ToCopyBackward0", r"$c = $0 \text{ cast to } $dtype", lambda xp, a, dtype: a.astype(dtype),
             vjp=(lambda xp, g, c, a, dtype: xp.astype(g, a.dtype),),
             params=("dtype",),
             vjp_latex=(r"\bar{g}\text{ cast back}",), jvp="linear")
# a.to(device): the gradient moves back to the device a came from
TO_DEVICE = Op("to_device", "ToCopyBackward0", r"$c = $0 \text{ on } $device",
               lambda xp, a, device, source: xp.to_device(a, device),
               vjp=(lambda xp, g, c, a, device, source: xp.to_device(g, source),),
               params=("device", "source"), saves=(),
               vjp_latex=(r"\bar{g}\text{ moved back}",), jvp="linear")


def _cat_forward(xp, *args):
    *arrays, dim = args
    return xp.concatenate(arrays, axis=dim)


def _cat_vjp(xp, g, c, *args):
    *inputs, dim = args
    out, start = [], 0
    for a in inputs:
        n = a.shape[dim]
        out.append(g[(slice(None),) * dim + (slice(start, start + n),)])
        start += n
    return out


def _stack_vjp(xp, g, c, *args):
    *inputs, dim = args
    return [g[(slice(None),) * dim + (i,)] for i in range(len(inputs))]


CAT = Op("cat", "CatBackward0", r"$c = [$*]",
         _cat_forward, vjp=_cat_vjp, args=("tensors",), params=("dim",),
         vjp_latex=(r"\bar{g}[$part]",), jvp="linear")
STACK = Op("stack", "StackBackward0", r"$c = \operatorname{stack}($*)",
           lambda xp, *args: xp.stack(args[:-1], axis=args[-1]),
           vjp=_stack_vjp, args=("tensors",), params=("dim",),
           vjp_latex=(r"\bar{g}[$part]",), jvp="linear")


def _split_forward(xp, a, sizes, dim):
    # the pieces as slices (what xp.split makes, without its Python layers: 10 µs for three pieces)
    lead, pieces, start = (slice(None),) * dim, [], 0
    for size in sizes:
        pieces.append(a[lead + (slice(start, start + size),)])
        start += size
    return tuple(pieces)


def _split_vjp(xp, g, c, a, sizes, dim):
    return (xp.concatenate(list(g), axis=dim),)


# With a single piece the engine hands the VJP ḡ itself rather than a tuple of one, so
# those records take and return one array.
@functools.lru_cache(maxsize=None)
def split_op(n, torch_name="SplitBackward0"):
    if n == 1:
        return Op("split", torch_name, r"{$c}_1 = \operatorname{split}($0,\, $split_sizes)",
                  lambda xp, a, sizes, dim: a[...],
                  vjp=lambda xp, g, c, a, sizes, dim: (g,), params=("split_sizes", "dim"), vjp_latex=(r"\bar{g}_1",))
    return Op("split", torch_name, r"{$c}_1, {$c}_2, \ldots = \operatorname{split}($0,\, $split_sizes)",
              _split_forward, vjp=_split_vjp, params=("split_sizes", "dim"), n_outputs=n,
              vjp_latex=(r"\operatorname{cat}(\bar{g}_1, \bar{g}_2, \ldots)\text{ along dim } $dim",))


@functools.lru_cache(maxsize=None)
def unbind_op(n):
    if n == 1:
        return Op("unbind", "UnbindBackward0", r"{$c}_1 = \operatorname{unbind}($0,\, $dim)",
                  lambda xp, a, dim: a[(slice(None),) * dim + (0, Ellipsis)],
                  vjp=lambda xp, g, c, a, dim: (xp.expand_dims(g, dim),),
                  params=("dim",),
                  vjp_latex=(r"\bar{g}_1\text{ unsqueezed at dim } $dim",))
    return Op("unbind", "UnbindBackward0", r"{$c}_1, {$c}_2, \ldots = \operatorname{unbind}($0,\, $dim)",
              lambda xp, a, dim: tuple(a[(slice(None),) * dim + (i, Ellipsis)] for i in range(a.shape[dim])),
              vjp=lambda xp, g, c, a, dim: (xp.stack(list(g), axis=dim),), params=("dim",), n_outputs=n,
              vjp_latex=(r"\operatorname{stack}(\bar{g}_1, \bar{g}_2, \ldots)\text{ along dim } $dim",))


# -- triangles, diagonals, rolls and the helpers built from views --------------
def _triangle_op(name, torch_name, part, **record):
    """a masked to one triangle (the mask is a param): ḡ masked the same way. The forward selects
    rather than multiplies, so an infinite entry outside the triangle (a causal mask's −inf) gives 0."""
    return Op(name, torch_name, rf"$c = \text{{{part} triangle of }} $0",
              lambda xp, a, k, keep: xp.where(keep, a, a.dtype.type(0)) if a.dtype != bool else a & keep,
              vjp=(lambda xp, g, c, a, k, keep: xp.keep(g, keep),),
              params=("diagonal", "mask"),
              vjp_latex=(rf"\text{{{part} triangle of }} \bar{{g}}",), **record)


TRIL = _triangle_op("tril", "TrilBackward0", "lower", jvp="linear")
TRIU = _triangle_op("triu", "TriuBackward0", "upper", jvp="linear")
DIAG_EMBED = Op("diag_embed", "DiagEmbedBackward0", r"$c = \operatorname{diag}($0) \text{ (on the diagonal of zeros)}",
                lambda xp, a, shape, offset, d1, d2: xp.diagonal_scatter(a, shape, offset, d1, d2),
                vjp=(lambda xp, g, c, a, shape, offset, d1, d2: xp.diagonal(g, offset, d1, d2),), params=("size", "offset", "dim1", "dim2"),
                symbols=("a",),
                vjp_latex=(r"\text{the diagonal of } \bar{g}",), jvp="linear", out_symbol="C")
# diag of a matrix is diagonal_copy in PyTorch: a new tensor, not a view
DIAG_COPY = Op("diag", "DiagonalBackward0_copy", r"$c = \operatorname{diag}($0)",
               lambda xp, a, offset: xp.diagonal(a, offset, 0, 1).copy(),
               vjp=(lambda xp, g, c, a, offset: xp.diagonal_scatter(g, a.shape, offset, 0, 1),), params=("offset",), symbols=("A",),
               vjp_latex=(r"\bar{g}\text{ on the diagonal of zeros}",), jvp="linear")
ROLL = Op("roll", "RollBackward0", r"$c = \operatorname{roll}($0,\, $shifts)",
          lambda xp, a, shifts, dims: xp.roll(a, shifts, dims),
          vjp=(lambda xp, g, c, a, shifts, dims: xp.roll(g, _negated(shifts), dims),), params=("shifts", "dims"),
          vjp_latex=(r"\operatorname{roll}(\bar{g},\, -\mathrm{shifts})",), jvp="linear")


def _negated(shifts):
    return tuple(-s for s in shifts) if isinstance(shifts, tuple) else -shifts


def _rot90_forward(xp, a, k, dims):
    return xp.ascontiguousarray(xp.rot90(a, k, axes=dims))


def _rot90_vjp(xp, g, c, a, k, dims):
    if xp.arrays:
        return _rot90_forward(xp, g, -k, dims)
    return xp.rot90(g, -k, dims)


ROT90 = Op("rot90", "Rot90Backward0", r"$c = \text{rot90}($0,\, $k)", _rot90_forward,
           vjp=(_rot90_vjp,), params=("k", "dims"), saves=(), vjp_latex=(r"\text{rot90}(\bar{g},\, -$k)",), jvp="linear")


def _block_shape(a):
    return (1, 1) if a.ndim == 0 else (1, a.shape[0]) if a.ndim == 1 else a.shape


def _block_diag_forward(xp, *arrays):
    shapes = [_block_shape(a) for a in arrays]
    out = xp.zeros((sum(s[0] for s in shapes), sum(s[1] for s in shapes)), dtype=np.result_type(*arrays))
    r = c = 0
    for a, (n, m) in zip(arrays, shapes):
        out[r:r + n, c:c + m] = a.reshape(n, m)
        r, c = r + n, c + m
    return out


def _block_diag_vjp(xp, g, c, *inputs):
    out, r, col = [], 0, 0
    for a in inputs:
        n, m = _block_shape(a)
        out.append(xp.reshape(g[r:r + n, col:col + m], tuple(a.shape)))
        r, col = r + n, col + m
    return out


BLOCK_DIAG = Op("block_diag", "BlockDiagBackward0", r"$c = \operatorname{diag}($*)",
                _block_diag_forward, vjp=_block_diag_vjp,
                args=("tensors",), symbols=("A₁", "A₂", "A₃"),
                vjp_latex=(r"\text{the block of } \bar{g} \text{ for each input}",), jvp="linear", out_symbol="C")
