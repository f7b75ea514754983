"""Linear algebra: products and diagonals, with their adjoints (ḡ Bᵀ, Aᵀ ḡ)."""
from __future__ import annotations

import numpy as np

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
# C = β bias + α A B; β = 0 ignores bias (its nan/inf do not reach C), as in PyTorch
ADDMM = Op("addmm", "AddmmBackward0", "C = β bias + α A B",
           lambda xp, bias, a, b, beta, alpha: _addmm(bias, a, b, beta, alpha),
           vjp=(lambda xp, g, c, bias, a, b, beta, alpha: _scaled(xp, g, beta),
                lambda xp, g, c, bias, a, b, beta, alpha: _scaled(xp, g @ b.T, alpha),
                lambda xp, g, c, bias, a, b, beta, alpha: _scaled(xp, a.T @ g, alpha)),
           vjp_formulas=("β ḡ", "α ḡ Bᵀ", "α Aᵀ ḡ"), args=("self", "mat1", "mat2"), params=("beta", "alpha"),
           saves=("mat1", "mat2"))


def _diagonal_view(xp, a, offset, d1, d2):
    """A writable view, as in PyTorch (NumPy's diagonal view is read-only)."""
    d = xp.diagonal(a, offset, d1, d2)
    if a.flags.writeable and not d.flags.writeable and xp.xp is np:
        d.setflags(write=True)
    return d


def _addmm(bias, a, b, beta, alpha):
    ab = a @ b
    if alpha != 1:
        ab = ab * alpha
    if beta == 0:
        return ab
    return (bias if beta == 1 else bias * beta) + ab


def _scaled(xp, g, s):
    if s == 1:
        return g
    return xp.zeros_like(g) if s == 0 else g * s


DIAGONAL = Op("diagonal", "DiagonalBackward0", "c = diag(A)",
              lambda xp, a, offset, d1, d2: _diagonal_view(xp, a, offset, d1, d2),
              vjp=(lambda xp, g, c, a, offset, d1, d2: xp.diagonal_scatter(g, a.shape, offset, d1, d2),),
              vjp_formulas=("ḡ on the diagonal of zeros",), params=("offset", "dim1", "dim2"))
TRACE = Op("trace", "TraceBackward0", "c = tr A", lambda xp, a: xp.trace(a),
           vjp=(lambda xp, g, c, a: xp.diagonal_scatter(xp.broadcast_to(g, (min(a.shape),)), a.shape, 0, 0, 1),),
           vjp_formulas=("ḡ I",))


def _mm_error(name, a, b):
    return RuntimeError(f"{name}: mat1 and mat2 shapes cannot be multiplied "
                        f"({'x'.join(map(str, a.shape))} and {'x'.join(map(str, b.shape))}); the columns of "
                        f"mat1 must equal the rows of mat2: transpose or reshape one operand (e.g. a @ b.T)")


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
    """torch.matmul, decomposed as PyTorch's own matmul is, so the graph has the same nodes:
    dot, mv, mm (with unsqueeze / squeeze_ around a 1-D operand); a batch times a matrix
    folded into one mm or mv (reshape, then _unsafe_view back); broadcast batches expanded,
    flattened and multiplied by one bmm."""
    from .shape import contiguous, expand, reshape, squeeze, squeeze_, unsafe_view
    da, db = input.ndim, other.ndim
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D")
    if da == 1 and db == 1:
        return dot(input, other)
    if da == 2 and db == 1:
        return mv(input, other)
    if da == 1 and db == 2:
        return squeeze_(mm(input.unsqueeze(0), other), 0)
    if da == 2 and db == 2:
        return mm(input, other)
    if _should_fold(input, other):
        # the larger operand becomes one tall matrix: (b, n, m) @ (m, p) = ((b·n), m) @ (m, p)
        transpose = db > da
        t1 = other.mT if transpose else input
        t2 = (input.t() if da == 2 else input) if transpose else other
        out_shape = tuple(t1.shape[:-1])
        folded = reshape(t1, _prod(out_shape), t1.shape[-1])
        if t2.ndim == 2:
            out = unsafe_view(mm(folded, t2), *out_shape, t2.shape[1])
            return contiguous(out.mT) if transpose else out
        return unsafe_view(mv(folded, t2), *out_shape)
    n = input.shape[-2] if da > 1 else 1
    m1, p = input.shape[-1], other.shape[-1] if db > 1 else 1
    m2 = other.shape[-2] if db > 1 else other.shape[0]
    batch1, batch2 = tuple(input.shape[:-2]), tuple(other.shape[:-2])
    if da == 3 and db == 3 and batch1[0] != batch2[0]:
        if batch1[0] == 1 and input.requires_grad:
            return matmul(input.squeeze(0), other)
        if batch2[0] == 1 and other.requires_grad:
            return matmul(input, other.squeeze(0))
    batch = _broadcast_batch(batch1, batch2, input, other)
    count = _prod(batch)
    a = reshape(expand(input, *batch, n, m1), count, n, m1)
    if db == 1:
        b = reshape(expand(other, *batch, m2), count, m2).unsqueeze(2)
    else:
        b = reshape(expand(other, *batch, m2, p), count, m2, p)
    out = bmm(a, b)
    if db == 1:
        out = squeeze(out, -1)
    return unsafe_view(out, *batch, *((n,) if da > 1 else ()), *((p,) if db > 1 else ()))


def _broadcast_batch(b1, b2, input, other) -> tuple:
    n = max(len(b1), len(b2))
    out = []
    for i in range(n):
        x = b1[i - n + len(b1)] if i >= n - len(b1) else 1
        y = b2[i - n + len(b2)] if i >= n - len(b2) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i} (matmul of shapes {list(input.shape)} and {list(other.shape)})")
        out.append(max(x, y) if x != 0 and y != 0 else 0)
    return tuple(out)


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _should_fold(a, b) -> bool:
    """PyTorch's should_fold: fold the batch of the larger operand into mm/mv when the other
    operand requires grad (its gradient is then one mm, not a batch to sum), or when the
    larger one's batch dims can be merged without a copy."""
    a_larger = a.ndim >= b.ndim
    big = a._data if a_larger else np.swapaxes(b._data, -1, -2)
    small = b if a_larger else a
    if not (big.ndim >= 3 and small.ndim <= 2):
        return False
    if small.requires_grad:
        return True
    if a.ndim == 2:
        return False
    if big.size == 0:
        return True
    strides = [s // big.itemsize for s in big.strides]
    return all(strides[i] == strides[i + 1] * big.shape[i + 1] for i in range(big.ndim - 2))


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    if mat1.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {mat1.ndim}-D tensor" if mat1.ndim != 2 else
                           f"mat2 must be a matrix, got {mat2.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise _mm_error("addmm", mat1, mat2)
    return apply(ADDMM, (input,) + _same_dtype(mat1, mat2), (beta, alpha))


def linear(input, weight, bias=None):
    """y = x Wᵀ + b, recorded as PyTorch records it: one AddmmBackward0 for a 2-D input with a
    bias; a contiguous input of another rank with a 1-D bias flattened to 2-D around that
    addmm (viewed back); otherwise matmul, then + bias."""
    from .shape import reshape, view
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.ndim}D and "
                           f"{weight.ndim}D")
    if bias is not None:
        if input.ndim == 2:
            return addmm(bias, input, weight.t())
        if input._data.flags.c_contiguous and bias.ndim == 1:
            lead = tuple(input.shape[:-1])
            flat = reshape(input, _prod(lead), input.shape[-1])
            out = addmm(bias, flat, weight.t())
            return view(out, *lead, out.shape[1])
    out = matmul(input, weight.t())
    return out if bias is None else out + bias


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
