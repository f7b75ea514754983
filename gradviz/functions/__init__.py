"""The public functions (gradviz.exp, gradviz.matmul, ...): Tensor-level code that checks arguments
the way torch does and runs the op records of gradviz.ops on Tensors (through autograd's apply).

One module here per module of gradviz.ops, by the same name: ops/<m>.py holds the records (forward,
VJP, formulas; arrays only), functions/<m>.py the functions that call them. Importing this package
also registers what the records' upper layer adds to them (forward-mode rules, Tensor-mode VJPs)."""
from . import attention, conv, loss, nnops, pool  # noqa: F401  (the nn functions' modules, registered too)
from .index import (argsort, gather, getitem, index_add, index_fill, index_put, index_select,  # noqa: F401
                    masked_select, narrow, nonzero, scatter, scatter_add, select, sort, take_along_dim, topk)
from .linalg import (addmm, addmv, baddbmm, bmm, diagonal, dot, einsum, kron, matmul, mm, mv,  # noqa: F401
                     outer, tensordot, trace)
from .pointwise import (abs, acos, add, addcdiv, addcmul, arccos, arcsin, arctan, arctan2, asin,  # noqa: F401
                        atan, atan2, ceil, clamp, compare, cos, cosh, div, erf, exp, exp2, expm1, fix,
                        float_power, floor, floor_divide, fmod, gelu, hypot, isfinite, isinf, isnan, leaky_relu,
                        lerp, log, log1p, log2, log10, logical_not, logit, masked_fill, maximum, minimum, mul,
                        nan_to_num, neg, negative, positive, pow, reciprocal, relu, remainder, round, rsqrt,
                        rsub, sgn, sigmoid, sign, sin, sinh, softplus, sqrt, square, sub, tan, tanh,
                        true_divide, trunc, where)
from .reduce import (all, amax, amin, aminmax, any, argmax, argmin, count_nonzero, cumprod,  # noqa: F401
                     cumsum, diff, dist, log_softmax, logcumsumexp, logsumexp, max, mean, median, min, norm,
                     prod, softmax, std, std_mean, sum, var, var_mean)
from .shape import (atleast_1d, broadcast_shapes, broadcast_tensors, broadcast_to, cat, chunk,  # noqa: F401
                    clone, concat, contiguous, diag, diag_embed, expand, flatten, flip, meshgrid, moveaxis,
                    movedim, permute, ravel, repeat, reshape, roll, split, squeeze, stack, swapaxes, swapdims,
                    t, tile, transpose, tril, triu, unbind, unsqueeze, view)

clip = clamp
from .counting import bincount, histc, histogram  # noqa: E402,F401
from .pointwise import (acosh, arccosh, bitwise_and, bitwise_not, bitwise_or, bitwise_xor,  # noqa: E402,F401
                        clamp_max, clamp_min, copysign, fmax, fmin, frac, heaviside, isneginf, isposinf, ldexp,
                        logaddexp, logaddexp2, logical_and, logical_or, logical_xor, mvlgamma, polygamma, xlogy)
from .shape import (atleast_2d, atleast_3d, block_diag, cartesian_prod, column_stack, diagflat,  # noqa: E402,F401
                    dsplit, dstack, fliplr, flipud, hsplit, hstack, rot90, row_stack,
                    split_with_sizes, tensor_split, unflatten, vsplit, vstack)
from .index import diagonal_scatter, msort, repeat_interleave, select_scatter, slice_scatter, take  # noqa: E402,F401
from .reduce import (cummax, cummin, cumulative_trapezoid, kthvalue, nanmean, nansum, trapezoid,  # noqa: E402,F401
                     trapz)
from .linalg import (addbmm, addr, cdist, cholesky, corrcoef, cov, cross, det, inner, inverse,  # noqa: E402,F401
                         logdet, matrix_power, slogdet, vdot)
from .shape import tril_indices, triu_indices  # noqa: E402,F401
from .search import (argwhere, bucketize, combinations, nanquantile, quantile, searchsorted,  # noqa: E402,F401
                     unique, unique_consecutive)

from .declared import exposed as _exposed  # noqa: E402

globals().update(_exposed())   # the functions the op records and @public functions declare

# `from .functions import *` (gradviz/__init__.py) takes the functions, never the modules here,
# whose names (linalg, ...) are also gradviz's own namespaces
__all__ = [name for name, value in list(globals().items())
           if not name.startswith("_") and type(value) is not type(attention) and name != "annotations"]
