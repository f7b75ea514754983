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
