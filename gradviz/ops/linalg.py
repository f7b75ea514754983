"""Linear algebra: products and diagonals, with their adjoints (ḡ Bᵀ, Aᵀ ḡ)."""
from __future__ import annotations

from .core import apply
from .op import Op

MATS = ("self", "mat2")


def _mT(xp, a):
    return xp.swapaxes(a, -1, -2)


MM = Op("mm", "MmBackward0", "C = A B", lambda xp, a, b: a @ b,
        vjp=(lambda xp, g, c, a, b: g @ b.T, lambda xp, g, c, a, b: a.T @ g),
        vjp_formulas=("ḡ Bᵀ", "Aᵀ ḡ"), args=MATS, saves=MATS)
MV = Op("mv", "MvBackward0", "c = A v", lambda xp, a, b: a @ b,
        vjp=(lambda xp, g, c, a, b: xp.reshape(g, (-1, 1)) * b, lambda xp, g, c, a, b: a.T @ g),
        vjp_formulas=("ḡ vᵀ", "Aᵀ ḡ"), args=("self", "vec"), saves=("self", "vec"))
DOT = Op("dot", "DotBackward0", "c = a · b", lambda xp, a, b: a @ b,
         vjp=(lambda xp, g, c, a, b: g * b, lambda xp, g, c, a, b: g * a),
         vjp_formulas=("ḡ b", "ḡ a"), args=("self", "tensor"), saves=("self", "tensor"))
BMM = Op("bmm", "BmmBackward0", "Cᵢ = Aᵢ Bᵢ", lambda xp, a, b: a @ b,
         vjp=(lambda xp, g, c, a, b: g @ _mT(xp, b), lambda xp, g, c, a, b: _mT(xp, a) @ g),
         vjp_formulas=("ḡ Bᵀ", "Aᵀ ḡ"), args=MATS, saves=MATS)
# batched matmul with broadcast batch dims: the engine sums ḡ over broadcast batches
MATMUL = Op("matmul", "MatmulBackward0", "C = A B", lambda xp, a, b: xp.matmul(a, b),
            vjp=(lambda xp, g, c, a, b: g @ _mT(xp, b), lambda xp, g, c, a, b: _mT(xp, a) @ g),
            vjp_formulas=("ḡ Bᵀ", "Aᵀ ḡ"), args=("self", "other"), saves=("self", "other"))
ADDMM = Op("addmm", "AddmmBackward0", "C = bias + A B", lambda xp, bias, a, b: bias + a @ b,
           vjp=(lambda xp, g, c, bias, a, b: g, lambda xp, g, c, bias, a, b: g @ b.T,
                lambda xp, g, c, bias, a, b: a.T @ g),
           vjp_formulas=("ḡ", "ḡ Bᵀ", "Aᵀ ḡ"), args=("self", "mat1", "mat2"), saves=("mat1", "mat2"))
DIAGONAL = Op("diagonal", "DiagonalBackward0", "c = diag(A)",
              lambda xp, a, offset, d1, d2: xp.diagonal(a, offset, d1, d2).copy(),
              vjp=(lambda xp, g, c, a, offset, d1, d2: xp.diagonal_scatter(g, a.shape, offset, d1, d2),),
              vjp_formulas=("ḡ on the diagonal of zeros",), params=("offset", "dim1", "dim2"))
TRACE = Op("trace", "TraceBackward0", "c = tr A", lambda xp, a: xp.trace(a),
           vjp=(lambda xp, g, c, a: xp.diagonal_scatter(xp.broadcast_to(g, (min(a.shape),)), a.shape, 0, 0, 1),),
           vjp_formulas=("ḡ I",))


def _mm_error(name, a, b):
    return RuntimeError(f"{name}: mat1 and mat2 shapes cannot be multiplied "
                        f"({'x'.join(map(str, a.shape))} and {'x'.join(map(str, b.shape))})")


def mm(input, mat2):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: self must be a matrix and mat2 must be a matrix (got {input.ndim}-D and "
                           f"{mat2.ndim}-D tensors)")
    if input.shape[1] != mat2.shape[0]:
        raise _mm_error("mm", input, mat2)
    return apply(MM, _same_dtype(input, mat2))


def _same_dtype(a, b):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_cname(a.dtype)} != "
                           f"{_cname(b.dtype)}")
    return (a, b)


def _cname(dtype):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int"}.get(dtype.name, dtype.name)


def bmm(input, mat2):
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (got {input.ndim}-D and {mat2.ndim}-D)")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"bmm: Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, {mat2.shape[1]}].")
    return apply(BMM, _same_dtype(input, mat2))


def dot(input, tensor):
    if input.ndim != 1 or tensor.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors")
    if input.shape[0] != tensor.shape[0]:
        raise RuntimeError("inconsistent tensor size, expected tensor [%d] and src [%d] to have the same number "
                           "of elements, but got %d and %d elements respectively"
                           % (input.shape[0], tensor.shape[0], input.shape[0], tensor.shape[0]))
    return apply(DOT, _same_dtype(input, tensor))


def mv(input, vec):
    if input.ndim != 2 or vec.ndim != 1 or input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x"
                           f"{input.shape[1] if input.ndim > 1 else 1}), vec ({vec.shape[0]})")
    return apply(MV, _same_dtype(input, vec))


def matmul(input, other):
    """torch.matmul: dot, mv, mm or a batched product, chosen by the operands' dims."""
    da, db = input.ndim, other.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(input, other)
    if da == 2 and db == 1:
        return mv(input, other)
    if da == 1 and db == 2:
        if input.shape[0] != other.shape[0]:
            raise _mm_error("matmul", input.unsqueeze(0), other)
        return mm(input.unsqueeze(0), other).squeeze(0)
    if da == 2 and db == 2:
        return mm(input, other)
    if da == 1:
        return matmul(input.unsqueeze(0), other).squeeze(-2)
    if db == 1:
        return matmul(input, other.unsqueeze(-1)).squeeze(-1)
    if input.shape[-1] != other.shape[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: [..., "
                           f"{input.shape[-1]}] but got: [..., {other.shape[-2]}] (matmul of shapes "
                           f"{list(input.shape)} and {list(other.shape)})")
    if da == 3 and db == 3 and input.shape[0] == other.shape[0]:
        return bmm(input, other)
    return apply(MATMUL, _same_dtype(input, other))


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    if beta != 1 or alpha != 1:
        return input * beta + mm(mat1, mat2) * alpha
    if mat1.shape[1] != mat2.shape[0]:
        raise _mm_error("addmm", mat1, mat2)
    return apply(ADDMM, (input,) + _same_dtype(mat1, mat2))


def outer(input, vec2):
    return input.reshape(-1, 1) * vec2


def diagonal(input, offset=0, dim1=0, dim2=1):
    from .reduce import normalize_dims
    (d1,), (d2,) = normalize_dims(dim1, input.ndim), normalize_dims(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(DIAGONAL, (input,), (offset, d1, d2))


def trace(input):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return apply(TRACE, (input,))
