"""The public functions (gradviz.exp, gradviz.matmul, ...), gathered from the op modules."""
from .ops.index import (argsort, gather, getitem, index_put, index_select, scatter_add, sort,  # noqa: F401
                        topk)
from .ops.linalg import addmm, bmm, diagonal, dot, matmul, mm, mv, outer, trace  # noqa: F401
from .ops.pointwise import (abs, add, clamp, compare, cos, div, erf, exp, floor, floor_divide, gelu,  # noqa: F401
                            leaky_relu, log, log1p, logical_not, masked_fill, maximum, minimum, mul, neg, pow,
                            reciprocal, relu, remainder, round, rsqrt, rsub, sigmoid, sign, sin, softplus, sqrt, sub,
                            tan, tanh, where)
from .ops.reduce import (amax, amin, argmax, argmin, cumsum, log_softmax, logsumexp, max, mean, min,  # noqa: F401
                         norm, prod, softmax, std, sum, var)
from .ops.shape import (cat, chunk, clone, concat, contiguous, expand, flatten, flip, permute, repeat, reshape,  # noqa: F401
                        split, squeeze, stack, t, transpose, unbind, unsqueeze, view)
from .ops.index import (index_add, index_fill, masked_select, narrow, nonzero, scatter, select,  # noqa: F401
                        take_along_dim)
from .ops.linalg import addmv, baddbmm, einsum, kron, tensordot  # noqa: F401
from .ops.pointwise import (acos, addcdiv, addcmul, arccos, arcsin, arctan, arctan2, asin, atan, atan2,  # noqa: F401
                            ceil, cosh, exp2, expm1, fix, float_power, fmod, hypot, isfinite, isinf, isnan, lerp,
                            log2, log10, logit, nan_to_num, negative, positive, sgn, sinh, square, true_divide,
                            trunc)
from .ops.reduce import (aminmax, all, any, count_nonzero, cumprod, diff, dist, logcumsumexp, median,  # noqa: F401
                         std_mean, var_mean)
from .ops.shape import (atleast_1d, broadcast_shapes, broadcast_tensors, broadcast_to, diag, diag_embed,  # noqa: F401
                        meshgrid, moveaxis, movedim, ravel, roll, swapaxes, swapdims, tile, tril, triu)

clip = clamp
