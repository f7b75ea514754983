"""The Tensor namespace: the array vocabulary of the VJP rules, backed by gradviz ops.

With create_graph=True the engine runs each rule with this namespace instead of
NumPy's, so the gradient computation is itself recorded and can be differentiated; forward-mode
AD runs the JVP rules with it. The engine reaches it as `Tensor._namespace`, bound with Tensor's
other methods (gradviz/tensor_methods.py): the engine sits below the functions it is made of.
"""
from __future__ import annotations

from ..autograd.apply import apply
from ..creation import zeros_like
from ..dtypes import as_np
from ..ops import index as index_ops
from ..ops import pointwise as pointwise_ops
from ..tensor import Tensor
from . import conv, index, linalg, pointwise, reduce, shape
from .declared import made


class TensorNamespace:
    arrays = False

    apply = staticmethod(apply)   # an op record run on Tensors: a rule's graph-mode node

    exp = staticmethod(pointwise.exp)
    exp2 = staticmethod(pointwise.exp2)
    log = staticmethod(pointwise.log)
    log1p = staticmethod(pointwise.log1p)
    sqrt = staticmethod(pointwise.sqrt)
    sin = staticmethod(pointwise.sin)
    cos = staticmethod(pointwise.cos)
    tanh = staticmethod(pointwise.tanh)
    sign = staticmethod(pointwise.sign)
    abs = staticmethod(pointwise.abs)
    erf = staticmethod(pointwise.erf)
    # NumPy's maximum takes a number (a rule's xp.maximum(a, 0)), where torch.maximum takes Tensors only
    maximum = staticmethod(lambda a, b: pointwise.binary(pointwise_ops.MAXIMUM, a, b))
    where = staticmethod(pointwise.where)
    matmul = staticmethod(linalg.matmul)
    diagonal = staticmethod(linalg.diagonal)
    flip = staticmethod(lambda a, axis: shape.flip(a, axis))
    transpose = staticmethod(shape.permute)
    view = staticmethod(shape.view)   # forward AD's dual tensor: a view of its primal
    cosh = staticmethod(pointwise.cosh)
    sinh = staticmethod(pointwise.sinh)
    isfinite = staticmethod(pointwise.isfinite)
    isnan = staticmethod(pointwise.isnan)   # a bool Tensor, no graph
    # the public functions a rule calls on Tensors, so its gradient records torch's nodes
    mm = staticmethod(linalg.mm)
    t = staticmethod(shape.t)
    inv = staticmethod(linalg.inv)
    matrix_exp = staticmethod(linalg.linalg_matrix_exp)
    cat = staticmethod(shape.cat)
    zeros_like = staticmethod(zeros_like)
    solve = staticmethod(linalg.solve)
    linalg_cross = staticmethod(linalg.linalg_cross)
    tril = staticmethod(shape.tril)
    triu = staticmethod(shape.triu)
    solve_triangular = staticmethod(linalg.solve_triangular)
    pinv = staticmethod(linalg.pinv)
    diag_embed = staticmethod(shape.diag_embed)
    rot90 = staticmethod(shape.rot90)
    softmax = staticmethod(reduce.softmax)
    digamma = staticmethod(made(pointwise_ops.DIGAMMA))
    polygamma = staticmethod(pointwise.polygamma)
    no_input = staticmethod(conv._no_bias)   # an empty, grad-free stand-in for a missing input

    @staticmethod
    def constant(array):
        """An array as a Tensor outside the graph (a constant of a rule, such as ⌊a / b⌋)."""
        return Tensor._make(array)

    @staticmethod
    def to_device(a, device):
        return shape.to_device(a, device)

    @staticmethod
    def roll(a, shift, axis=None):
        return shape.roll(a, shift, axis)

    @staticmethod
    def cumprod(a, axis):
        return reduce.cumprod(a, axis)

    @staticmethod
    def keep(g, mask):
        return pointwise.where(mask, g, 0)

    @staticmethod
    def zeros_like(a):
        return zeros_like(a)

    @staticmethod
    def sum(a, axis=None, keepdims=False):
        return reduce.sum(a, axis, keepdims)

    @staticmethod
    def cumsum(a, axis):
        return reduce.cumsum(a, axis)

    @staticmethod
    def reshape(a, newshape):
        return shape.reshape(a, *newshape) if isinstance(newshape, tuple) else shape.reshape(a, newshape)

    @staticmethod
    def broadcast_to(a, newshape):
        return a if tuple(a.shape) == tuple(newshape) else shape.expand(a, *newshape)

    @staticmethod
    def expand_dims(a, axis):
        for d in sorted((axis,) if isinstance(axis, int) else axis):
            a = shape.unsqueeze(a, d)
        return a

    @staticmethod
    def swapaxes(a, d0, d1):
        return shape.transpose(a, d0, d1)

    @staticmethod
    def concatenate(tensors, axis=0):
        return shape.cat(tensors, axis)

    @staticmethod
    def stack(tensors, axis=0):
        return shape.stack(tensors, axis)

    @staticmethod
    def take_along_axis(a, index, axis):
        return apply(index_ops.GATHER, (a,), (axis % a.ndim, index))

    gather_along = take_along_axis

    @staticmethod
    def astype(a, dtype):
        return shape.to_dtype(a, as_np(dtype))

    @staticmethod
    def index_scatter(g, newshape, idx, accumulate=True):
        return apply(index_ops.INDEX_SCATTER, (g,), (tuple(newshape), idx, accumulate))

    @staticmethod
    def scatter_add_zeros(newshape, dim, idx, g):
        return apply(index_ops.SCATTER_ADD_ZEROS, (g,), (tuple(newshape), dim, idx))

    @staticmethod
    def diagonal_scatter(g, newshape, offset, d1, d2):
        return apply(index_ops.DIAGONAL_SCATTER, (g,), (tuple(newshape), offset, d1, d2))

    @staticmethod
    def index_fill_zero(g, basic, adv=None):
        return apply(index_ops.INDEX_FILL_ZERO, (g,), (basic, adv))


TENSOR = TensorNamespace()
