"""Products, diagonals and torch.linalg on Tensors: shapes checked and broadcast as torch does,
then the records of gradviz.ops.linalg."""
from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import backend
from .._warn import warn, warn_once
from .._args import argument_error, check_bool, check_number, check_tensor, invalid_arguments, is_number, type_name
from ..dtypes import C_TYPE, SCALAR_TYPE, bool_, int64, kernel_missing
from ..autograd.apply import apply
from ..ops.core import broadcast_shape, expand_error
from ..ops.op import Op
from ..tensor import Tensor
from ..ops.linalg import (MATRIX_EXP, ADDBMM, ADDMM, ADDMV, ADDR, BADDBMM, BMM, CDIST, CHOLESKY, CHOLESKY_LEGACY, CROSS, DET,
                          DIAGONAL, DOT, VDOT, EIGVALSH, INV, LinAlgFailure, LSTSQ, MM, MV, PINV, QR, SLOGDET, SOLVE,
                          SOLVE_TRIANGULAR, SOLVE_TRIANGULAR_RIGHT, SVDVALS, TRACE, _default_rtol, matrix_rank as rank_of, singular_values)
from ..autograd.apply import coerce_pair
from . import reduce as R
from .index import narrow
from .pointwise import where
from .reduce import amax, amin, cumprod, normalize_dims
from ..ops.reduce import NORM, _dims_keep
from ..ops.shape import VIEW
from .shape import (cat, contiguous, diag_embed, expand, movedim, permute, reshape, squeeze, squeeze_, t, unsafe_view,
                    unsqueeze, varargs, view)
from .public import public


def _tensors(fn: str, **params) -> None:
    """torch's TypeError for an argument that must be a Tensor (mm(x, [[1.]]), kron(x, 3)), in the
    order of the function's parameters."""
    for position, (param, value) in enumerate(params.items(), 1):
        if not isinstance(value, Tensor):
            raise argument_error(fn, param, position, "Tensor", type_name(value))


def _mm_error(a, b):
    """torch's words, whichever of mm, addmm, matmul or linear found the inner sizes differ."""
    return RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                        f"({'x'.join(map(str, a.shape))} and {'x'.join(map(str, b.shape))})")


@public(method=True, out=True)
def mm(input, mat2):
    _tensors("mm", input=input, mat2=mat2)
    for name, t in (("self", input), ("mat2", mat2)):
        if t.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix")
    if input.shape[1] != mat2.shape[0]:
        raise _mm_error(input, mat2)
    _same_dtype(_MM, input, mat2)
    no_bool_kernel("addmm_impl_cpu_", input, mat2)
    return apply(MM, (input, mat2))


def _same_dtype(message: tuple, *tensors, names=None) -> None:
    """torch's words for that op when the operands of a product differ in dtype (they differ op by op):
    `message` is (words with {} for each dtype named, the table that names them), the dtypes in the
    order torch names them (`names` when that is not the operands' own order)."""
    if any(t.dtype is not tensors[0].dtype for t in tensors[1:]):
        words, table = message
        raise RuntimeError(words.format(*[table[t.dtype.name] for t in (names or tensors)]))


def no_bool_kernel(name: str, *operands) -> None:
    """torch's refusal of bool operands, which its product kernels have no version for: raised once the
    shapes and dtypes are checked, as torch's kernels are chosen after its checks; a product with an empty
    operand has nothing to compute, and torch returns it (dot excepted)."""
    if operands[0]._data.dtype.kind == "b" and (name == "dot" or all(t._data.size for t in operands)):
        raise kernel_missing(name, bool)


_MM = ("expected m1 and m2 to have the same dtype, but got: {} != {}", C_TYPE)
_BMM = ("expected scalar type {} but found {}", SCALAR_TYPE)
_ADDMM = ("mat1 and mat2 must have the same dtype, but got {} and {}", SCALAR_TYPE)
_ADDMM_SELF = ("self and mat2 must have the same dtype, but got {} and {}", SCALAR_TYPE)
_ADDMV = ("addmv input tensors must have the same dtype, but got {}, {}, and {}", SCALAR_TYPE)
_BADDBMM = ("Input dtypes must be the same, got: input {}, batch1: {}, batch2: {}", C_TYPE)


@public(method=True, out=True)
def bmm(input, mat2):
    _tensors("bmm", input=input, mat2=mat2)
    for name, t in (("batch1", input), ("batch2", mat2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    _check_batches(input, mat2)
    _same_dtype(_BMM, input, mat2)
    no_bool_kernel("bmm", input, mat2)
    return apply(BMM, (input, mat2))


@public(method=True, out=True)
def dot(input, tensor):
    return _dot(DOT, input, tensor, "tensor")


def _dot(record: Op, input, other, other_name: str):
    """dot's and vdot's checks, in torch's words (both say "dot"), then the record."""
    _tensors(record.name, **{"input": input, other_name: other})
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{SCALAR_TYPE[input.dtype.name]} and {SCALAR_TYPE[other.dtype.name]}")
    if input.shape[0] != other.shape[0]:
        raise RuntimeError("inconsistent tensor size, expected tensor [%d] and src [%d] to have the same number "
                           "of elements, but got %d and %d elements respectively"
                           % (input.shape[0], other.shape[0], input.shape[0], other.shape[0]))
    no_bool_kernel("dot", input)
    return apply(record, (input, other))


@public(method=True, out=True)
def mv(input, vec):
    _tensors("mv", input=input, vec=vec)
    if input.ndim != 2 or vec.ndim != 1:   # torch's mv is addmv into a 1-D result, whose words count it first
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, {vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}x{input.shape[1]}), "
                           f"vec ({vec.shape[0]})")
    _same_dtype(_ADDMV, input, vec, names=(vec, input, vec))   # as addmv into vec's dtype
    no_bool_kernel("addmv_impl_cpu", input, vec)
    return apply(MV, (input, vec))


@public(method=True, out=True)
def matmul(input, other):
    """torch.matmul, decomposed as PyTorch's own matmul is, so the graph has the same nodes:
    dot, mv, mm (with unsqueeze / squeeze_ around a 1-D operand); a batch times a matrix
    folded into one mm or mv (reshape, then _unsafe_view back); broadcast batches expanded,
    flattened and multiplied by one bmm."""
    _tensors("matmul", input=input, other=other)
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
        folded = reshape(t1, math.prod(out_shape), t1.shape[-1])
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
    batch = _broadcast_batch(batch1, batch2)
    count = math.prod(batch)
    a = reshape(expand(input, *batch, n, m1), count, n, m1)
    if db == 1:
        b = reshape(expand(other, *batch, m2), count, m2).unsqueeze(2)
    else:
        b = reshape(expand(other, *batch, m2, p), count, m2, p)
    out = bmm(a, b)
    if db == 1:
        out = squeeze(out, -1)
    return unsafe_view(out, *batch, *((n,) if da > 1 else ()), *((p,) if db > 1 else ()))


def _broadcast_batch(b1, b2) -> tuple:
    n = max(len(b1), len(b2))
    out = []
    for i in range(n):
        x = b1[i - n + len(b1)] if i >= n - len(b1) else 1
        y = b2[i - n + len(b2)] if i >= n - len(b2) else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) at non-singleton "
                               f"dimension {i}")
        out.append(max(x, y) if x != 0 and y != 0 else 0)
    return tuple(out)


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


def _scalars(fn: str, inputs: tuple, beta, alpha) -> tuple:
    """beta and alpha as Python numbers (a 0-d tensor read as its value), or torch's TypeError (addmm and
    baddbmm have a second signature, with out_dtype, so torch lists both)."""
    for name, value in (("beta", beta), ("alpha", alpha)):
        if is_number(value):
            continue
        if fn not in ("addmm", "baddbmm"):
            check_number(fn, name, value)
        m1, m2 = ("mat1", "mat2") if fn == "addmm" else ("batch1", "batch2")
        raise invalid_arguments(fn, inputs, {name: value}, tuple(
            f"Tensor input, Tensor {m1}, Tensor {m2}, {extra}*, Number beta = 1, Number alpha = 1, Tensor out = None"
            for extra in ("", "torch.dtype out_dtype, ")))
    return tuple(v.item() if hasattr(v, "item") else v for v in (beta, alpha))


def _integral(t, beta, alpha) -> tuple:
    """beta and alpha for a product of `t`'s dtype: torch's integer kernels take them as integers
    (a fraction dropped, 1.5 read as 1), as it casts them to the tensors' type."""
    if t._data.dtype.kind in "iu":
        return int(beta), int(alpha)
    return beta, alpha


@public(method=True, out=True)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    return _addmm(input, mat1, mat2, *_scalars("addmm", (input, mat1, mat2), beta, alpha))


def _addmm(input, mat1, mat2, beta=1, alpha=1):
    """addmm once beta and alpha are numbers (linear's are its own 1s): torch's checks, then the record.
    Shapes and dtypes are read off the arrays (a Tensor's .shape and .dtype build objects each read)."""
    a, b = mat1._data, mat2._data
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mat1 must be a matrix, got {a.ndim}-D tensor" if a.ndim != 2 else
                           f"mat2 must be a matrix, got {b.ndim}-D tensor")
    if a.shape[1] != b.shape[0]:
        raise _mm_error(mat1, mat2)
    _check_expand(input, (a.shape[0], b.shape[1]))
    if input._data.dtype != b.dtype or a.dtype != b.dtype:
        _same_dtype(_ADDMM_SELF, input, mat2)   # torch checks the bias first
        _same_dtype(_ADDMM, mat1, mat2)
    no_bool_kernel("addmm_impl_cpu_", mat1, mat2)
    return apply(ADDMM, (input, mat1, mat2), _integral(mat1, beta, alpha))


def _check_expand(input, shape: tuple) -> None:
    """The added input expands to the product's shape: torch's words when it cannot."""
    src = input._data.shape
    if src == shape[-len(src):] if src else True:   # the commonest case (a bias as wide as the product) at once
        return
    message = expand_error(src, shape, f"torch.{SCALAR_TYPE[input.dtype.name]}Tensor")
    if message:
        raise RuntimeError(message)


def linear(input, weight, bias=None):
    """y = x Wᵀ + b, recorded as PyTorch records it: one AddmmBackward0 for a 2-D input with a
    bias; a contiguous input of another rank with a 1-D bias flattened to 2-D around that
    addmm (viewed back); otherwise matmul, then + bias."""
    for i, (name, t) in enumerate((("input", input), ("weight", weight), ("bias", bias))):
        if not isinstance(t, Tensor) and (t is not None or i < 2):
            check_tensor("linear", name, t, i + 1)
    if input.ndim == 0 or weight.ndim == 0:
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.ndim}D and "
                           f"{weight.ndim}D")
    if bias is not None:
        x = input._data
        if x.ndim == 2:
            return _addmm(bias, input, weight.t())
        if x.flags.c_contiguous and bias.ndim == 1:
            # reshape and view as they record themselves here (a contiguous input's reshape is a view,
            # the product is a fresh contiguous array), without their argument parsing
            lead = x.shape[:-1]
            flat = apply(VIEW, (input,), ((math.prod(lead), x.shape[-1]),))
            out = _addmm(bias, flat, weight.t())
            return apply(VIEW, (out,), (lead + out._data.shape[1:],))
    out = matmul(input, weight.t())
    return out if bias is None else out + bias


@public('outer', 'ger', method=True, out=True)
def outer(input, vec2):
    _tensors("outer", input=input, vec2=vec2)
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
    return input.reshape(-1, 1) * vec2


@public
def diagonal(input, offset=0, dim1=0, dim2=1):
    (d1,), (d2,) = normalize_dims(dim1, input.ndim), normalize_dims(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return apply(DIAGONAL, (input,), (offset, d1, d2))


@public(method=True, out=True)
def trace(input):
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input._data.dtype.kind == "b":
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return apply(TRACE, (input,))


@public(out=True)
def addmv(input, mat, vec, *, beta=1, alpha=1):
    beta, alpha = _scalars("addmv", (input, mat, vec), beta, alpha)
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0] or input.numel() not in (1, mat.shape[0]):
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), mat "
                           f"({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    _same_dtype(_ADDMV, input, mat, vec)
    no_bool_kernel("addmv_impl_cpu", mat, vec)
    return apply(ADDMV, (input, mat, vec), _integral(mat, beta, alpha))


def _check_batches(batch1, batch2) -> None:
    """bmm's, baddbmm's and addbmm's words when the batches do not pair up."""
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")


@public(out=True)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    beta, alpha = _scalars("baddbmm", (input, batch1, batch2), beta, alpha)
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (got {batch1.ndim}-D and {batch2.ndim}-D)")
    _check_batches(batch1, batch2)
    _check_expand(input, (batch1.shape[0], batch1.shape[1], batch2.shape[2]))
    _same_dtype(_BADDBMM, input, batch1, names=(input, batch1, batch2))
    _same_dtype(_BMM, batch1, batch2)
    no_bool_kernel("baddbmm", batch1, batch2)
    return apply(BADDBMM, (input, batch1, batch2), _integral(batch1, beta, alpha))


@public(out=True)
def tensordot(a, b, dims=2):
    """Contract dims of a with dims of b: both permuted and reshaped to matrices, one mm, then
    viewed back, as PyTorch records it."""
    if isinstance(dims, int):
        given_a, given_b = list(range(-dims, 0)), list(range(dims))   # torch names a's dims from the end
    else:
        given_a, given_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    da = [normalize_dims(d, a.ndim)[0] for d in given_a]
    db = [normalize_dims(d, b.ndim)[0] for d in given_b]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for x, y, gx, gy in zip(da, db, given_a, given_b):
        # PyTorch broadcasts a contracted dim of size 1: the other side's dim is summed first
        if b.shape[y] == 1 and a.shape[x] != 1:
            a = a.sum(x, keepdim=True)
        elif a.shape[x] == 1 and b.shape[y] != 1:
            b = b.sum(y, keepdim=True)
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {gx} "
                               f"and second has size {b.shape[y]} in dim {gy}")
    free_a = [i for i in range(a.ndim) if i not in da]
    free_b = [i for i in range(b.ndim) if i not in db]
    k = math.prod([a.shape[d] for d in da])
    out_shape = [a.shape[i] for i in free_a] + [b.shape[i] for i in free_b]
    rows, columns = math.prod([a.shape[i] for i in free_a]), math.prod([b.shape[i] for i in free_b])
    if rows == 1 and columns == 1:   # every element contracted: one dot when both flatten as views, else mul + sum
        a, b = permute(a, free_a + da), permute(b, db + free_b)
        if a.is_contiguous() and b.is_contiguous():
            return reshape(dot(a.flatten(), b.flatten()), *out_shape)
        return reshape((a.squeeze() * b.squeeze()).sum(), *out_shape)
    left = reshape(permute(a, free_a + da), rows, k)
    right = reshape(permute(b, db + free_b), k, columns)
    return reshape(mm(left, right), *out_shape)


@public(method=True, out=True)
def kron(input, other):
    """Kronecker product: a and b interleaved as (a₀, 1, a₁, 1, …) ⊙ (1, b₀, 1, b₁, …), then
    merged back, as PyTorch records it (views of fresh copies and one mul)."""
    _tensors("kron", input=input, other=other)
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    a = unsafe_view(input, *[s for d in sa for s in (d, 1)])
    b = unsafe_view(other, *[s for d in sb for s in (1, d)])
    return unsafe_view(a * b, *[x * y for x, y in zip(sa, sb)])


def _expand_ellipsis(terms, out, arrow, operands):
    """'...' as letters of its own: each operand's ellipsis covers its dims that no letter names,
    right-aligned with the others' (they broadcast); without '->' they lead the output. Returns
    the terms and output so spelled, and the ellipsis's letters."""
    used = set("".join(terms) + out)
    spare = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    width = 0
    for i, (term, x) in enumerate(zip(terms, operands)):
        if "..." in term:
            width = max(width, x.ndim - len(term.replace("...", "")))
    letters = "".join(spare[:width])
    expanded = []
    for term, x in zip(terms, operands):
        if term.count("...") > 1 or (term.count(".") != 3 * term.count("...")):
            raise RuntimeError("einsum(): found '.' for operand that is not part of any ellipsis")
        k = max(x.ndim - len(term.replace("...", "")), 0)
        expanded.append(term.replace("...", letters[width - k:]))
    if arrow:
        out = out.replace("...", letters)
    else:
        counts = {}
        for c in "".join(expanded):
            counts[c] = counts.get(c, 0) + 1
        out = letters + "".join(sorted(c for c, k in counts.items() if k == 1 and c not in letters))
    return expanded, out, "->", letters


def _sumproduct_pair(left, right, summed):
    """(left ⊙ right) summed over the dims `summed` (kept, as size 1), by one bmm, as ATen's
    sumproduct_pair: both operands have every dim (size 1 where they lack it); the dims in
    both (lro) are the batch, the dims of one only (lo, ro) the rows and columns, the summed
    dims the inner size. No dim to sum: a plain broadcast product."""
    if not summed:
        return left * right
    lro, lo, ro = [], [], []
    for d in range(left.ndim):
        if d in summed:   # einsum sums a dim here only where both operands have it
            continue
        in_left, in_right = left.shape[d] != 1, right.shape[d] != 1
        (lro if in_left and in_right else lo if in_left else ro).append(d)
    if lo and ro and ro[-1] < lo[0]:   # right's own dims all before left's: swapped, bmm's rows come first
        left, right, lo, ro = right, left, ro, lo
    n_lro, n_lo, n_summed, n_ro = (math.prod(t.shape[d] for d in dims)
                                   for t, dims in ((left, lro), (left, lo), (left, summed), (right, ro)))
    order = lro + lo + summed + ro
    a = reshape(permute(left, order), n_lro, n_lo, n_summed)
    b = reshape(permute(right, lro + summed + ro + lo), n_lro, n_summed, n_ro)
    shape = [left.shape[d] for d in lro + lo] + [1] * len(summed) + [right.shape[d] for d in ro]
    return permute(view(bmm(a, b), *shape), [order.index(d) for d in range(left.ndim)])


@public
def einsum(equation, *operands):
    """einsum as PyTorch computes it (ATen's einsum, with no contraction path): each operand's
    repeated letters become diagonals; each is unsqueezed and permuted onto one common order of
    axes (the output's, then the summed ones); then, left to right, two operands at a time, the
    axes only one of them still carries are summed and the pair is contracted by one bmm
    (_sumproduct_pair), so no product of all the operands is ever made."""
    operands = varargs(operands)
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    for i, (term, x) in enumerate(zip(terms, operands)):
        n = len(term.replace("...", ""))
        if "..." in term and n > x.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) is more than the number "
                               f"of dimensions ({x.ndim}) for operand {i}")
        if "..." not in term and n != x.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({n}) does not match the number "
                               f"of dimensions ({x.ndim}) for operand {i} and no ellipsis was given")
    ellipsis = ""
    if "." in eq:
        terms, out, arrow, ellipsis = _expand_ellipsis(terms, out, arrow, operands)
    for c in out:
        if c not in lhs and not ("." in eq and c not in eq):
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                               "operand")
    sizes = {}
    for i, (term, x) in enumerate(zip(terms, operands)):
        own: dict = {}   # a subscript repeated within one operand (a diagonal) must have one size
        for c, n in zip(term, x.shape):
            if own.setdefault(c, n) != n:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the sizes don't match, "
                                   f"{n} != {own[c]}")
        for c, n in zip(term, x.shape):
            if sizes.get(c, n) != n and 1 not in (n, sizes[c]):
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which does not "
                                   f"broadcast with previously seen size {sizes[c]}")
            sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
    if not arrow:
        counts = {}
        for c in "".join(terms):
            counts[c] = counts.get(c, 0) + 1
        out = "".join(sorted(c for c, k in counts.items() if k == 1))
    # the common order of axes: the output's, then an ellipsis the output drops, then the summed letters A-Z a-z
    summed = [c for c in ellipsis if c not in out] + sorted({c for t in terms for c in t} - set(out) - set(ellipsis))
    axes = list(out) + summed
    carriers = [0] * len(axes)   # how many operands have each axis with a size other than 1
    ops = []
    for term, x in zip(terms, operands):
        at: dict = {}   # letter -> its dim in x
        for c in term:
            if c in at:   # a repeated letter: the diagonal, put back where the letter first was
                x = movedim(diagonal(x, 0, at[c], len(at)), -1, at[c])
                continue
            if x.shape[len(at)] != 1:
                carriers[axes.index(c)] += 1
            at[c] = len(at)
        for c in axes:
            if c not in at:
                at[c] = len(at)
                x = unsqueeze(x, at[c])
        ops.append(permute(x, [at[c] for c in axes]))
    while len(ops) > 1:
        a, b = ops.pop(0), ops.pop(0)
        now, only_a, only_b = [], [], []   # the axes the pair's product sums; those one side sums first
        for d in range(len(out), len(axes)):
            if a.shape[d] != 1 and b.shape[d] != 1:
                carriers[d] -= 1
                if carriers[d] == 1:   # no operand after this pair has it
                    now.append(d)
                    carriers[d] = 0
            elif carriers[d] == 1 and (a.shape[d] != 1 or b.shape[d] != 1):
                (only_a if a.shape[d] != 1 else only_b).append(d)
                carriers[d] = 0
        if only_a:
            a = R.sum(a, only_a, True)
        if only_b:
            b = R.sum(b, only_b, True)
        ops.insert(0, _sumproduct_pair(a, b, now))
    result = ops[0]
    if summed and len(operands) > 1:   # every summed axis is size 1 by now
        return view(result, tuple(result.shape[:len(out)]))
    if summed:
        return R.sum(result, list(range(len(out), len(axes))))
    return result


# -- forward mode (autograd.forward_ad): products are bilinear, diagonal and trace linear ------


def _t(a):
    return t(a)


# -- public functions -----------------------------------------------------------------------------
def _matrix(name: str, a, arg: str = "A") -> None:
    if a.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor {arg} must have at least 2 dimensions.")


def _square(name: str, a) -> None:
    _matrix(name, a)
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")
    if a._data.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{str(a.dtype)[6:].capitalize().replace('Int64', 'Long')}")


@public(method=True)
def det(A):
    _square("linalg.det", A)
    return apply(DET, (A,))


@public(method=True)
def slogdet(A):
    _square("linalg.slogdet", A)
    sign, logabsdet = apply(SLOGDET, (A,))
    return _SlogdetResult((sign, logabsdet))


class _SlogdetResult(tuple):
    """torch.return_types.linalg_slogdet(sign, logabsdet)."""

    @property
    def sign(self):
        return self[0]

    @property
    def logabsdet(self):
        return self[1]

    def __repr__(self):
        return f"torch.return_types.linalg_slogdet(\nsign={self[0]!r},\nlogabsdet={self[1]!r})"


@public(method=True)
def logdet(A):
    """log det A: nan where det A < 0, −inf where it is 0 (torch: a where over slogdet)."""
    sign, logabsdet = slogdet(A)
    return where(sign < 0, float("nan"), logabsdet)


class _LinAlgError(RuntimeError):
    """torch.linalg.LinAlgError (torch._C._LinAlgError): the matrix is singular or not positive-definite."""


def _batch_element(a: np.ndarray, i: int) -> str:
    """torch's "(Batch element i): " before a failure in a batch of matrices."""
    return f"(Batch element {i}): " if a.ndim > 2 else ""


def _singular_at(a: np.ndarray) -> tuple[int, int]:
    """The first singular matrix of the batch and the 1-based index of its first zero pivot in the LU
    factorization (as LAPACK's getrf reports)."""
    for i, batch in enumerate(a.reshape(-1, *a.shape[-2:])):
        m = np.array(batch, dtype=np.float64)
        n = m.shape[0]
        for k in range(n):
            p = k + int(np.argmax(np.abs(m[k:, k])))
            if m[p, k] == 0:
                return i, k + 1
            m[[k, p]] = m[[p, k]]
            m[k + 1:] -= np.outer(m[k + 1:, k] / m[k, k], m[k])
    return 0, a.shape[-1]


@public('matrix_exp', method=True)
def linalg_matrix_exp(A):
    _square("linalg.matrix_exp", A)
    return apply(MATRIX_EXP, (A,))


matrix_exp = linalg_matrix_exp


@public('inverse', method=True)
def inv(A):
    _square("linalg.inv", A)
    try:
        return apply(INV, (A,))
    except LinAlgFailure:
        i, k = _singular_at(A._data)
        raise _LinAlgError(f"linalg.inv: {_batch_element(A._data, i)}The diagonal element {k} is zero, the inversion "
                           "could not be completed because the input matrix is singular.") from None


inverse = inv


def solve(A, B, *, left=True):
    _square("linalg.solve", A)
    if not left:   # X A = B  ⇔  Aᵀ Xᵀ = Bᵀ
        return solve(A.mT, B.mT).mT
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    b = unsqueeze(B, -1) if vector else B
    if b.shape[-2] != A.shape[-1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({A.shape[-2]}x{A.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})")
    batch = broadcast_shape(tuple(b.shape[:-2]), tuple(A.shape[:-2]))
    a2 = A if tuple(A.shape[:-2]) == batch else A.expand(*batch, *A.shape[-2:])
    b2 = b if tuple(b.shape[:-2]) == batch else b.expand(*batch, *b.shape[-2:])
    try:
        x = apply(SOLVE, (a2, b2))
    except LinAlgFailure:
        at = _batch_element(a2._data, _singular_at(a2._data)[0])
        raise _LinAlgError(f"torch.linalg.solve: {at}The solver failed because the input matrix is "
                           "singular.") from None
    return squeeze(x, -1) if vector else x


def _return_type(name: str, fields: tuple):
    """torch.return_types.<name>: a tuple whose items have names, printed as torch prints it."""
    cls = namedtuple(name, fields)
    cls.__module__ = "torch.return_types"
    cls.__repr__ = lambda self: (f"torch.return_types.{name}(\n"
                                 + ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self)) + ")")
    return cls


_LinalgQr = _return_type("linalg_qr", ("Q", "R"))
_Qr = _return_type("qr", ("Q", "R"))


def _lapack_dtype(kernel: str, *tensors) -> None:
    """torch's refusal of a dtype its LAPACK kernel has no version for (integers, float16)."""
    for t in tensors:
        if t._data.dtype.kind not in "fc" or t._data.dtype.itemsize < 4:
            raise NotImplementedError(f"\"{kernel}\" not implemented for '{SCALAR_TYPE[t._data.dtype.name]}'")


def linalg_qr(A, mode="reduced"):
    """Q R = A by Householder reflections (LAPACK's geqrf, as torch's: the same signs); mode='r' gives an
    empty Q, 'complete' a square one."""
    _tensors("linalg_qr", A=A)
    if not isinstance(mode, str):
        raise TypeError(f"linalg_qr(): argument 'mode' must be str, not {type_name(mode)}")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', or "
                           "'complete'")
    _matrix("linalg.qr", A)
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.qr: Expected a floating point or complex tensor as input. Got "
                           f"{SCALAR_TYPE[A._data.dtype.name]}")
    _lapack_dtype("geqrf_cpu", A)
    return _LinalgQr(*apply(QR, (A,), (mode,)))


@public(method=True)
def qr(input, some=True):
    """torch.qr (deprecated in torch for torch.linalg.qr): some=False is mode='complete'."""
    warn_once("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
              "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\n"
              "should be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    return _Qr(*linalg_qr(input, "reduced" if some else "complete"))


def solve_triangular(A, B, *, upper=None, left=True, unitriangular=False):
    """X with A X = B (X A = B when left=False) for triangular A, read from its upper or lower triangle
    (its diagonal taken as ones when unitriangular). upper has no default, as in torch."""
    if upper is None:
        raise TypeError('linalg_solve_triangular() missing 1 required positional arguments: "upper"')
    _tensors("linalg_solve_triangular", A=A, B=B)
    for name, flag in (("upper", upper), ("left", left), ("unitriangular", unitriangular)):
        if not isinstance(flag, bool):
            raise TypeError(f"linalg_solve_triangular(): argument '{name}' must be bool, not {type_name(flag)}")
    _matrix("linalg.solve_triangular", A)
    _matrix("linalg.solve_triangular", B, "B")
    _lapack_dtype("triangular_solve_cpu", A, B)
    _square("linalg.solve_triangular", A)
    shared, equation = (B.shape[-2], "AX = B") if left else (B.shape[-1], "XA = B")
    if shared != A.shape[-1]:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the equation {equation} "
                           f"({A.shape[-2]}x{A.shape[-1]} and {B.shape[-2]}x{B.shape[-1]})")
    broadcast_shape(tuple(B.shape[:-2]), tuple(A.shape[:-2]))
    return apply(SOLVE_TRIANGULAR if left else SOLVE_TRIANGULAR_RIGHT, (A, B), (upper, left, unitriangular))


def _tolerance(value):
    """atol or rtol as torch reads it: a number, or a Tensor (one tolerance per matrix), in float64."""
    if isinstance(value, Tensor):
        if value._data.dtype.kind == "c":
            raise RuntimeError(f"torch.linalg.pinv: tolerance tensor of complex type is not supported. Got "
                               f"{SCALAR_TYPE[value._data.dtype.name]}")
        return value._data.astype(np.float64)
    return float(value)


def _tolerances(A, atol, rtol) -> tuple:
    """torch's get_atol_rtol: atol 0 unless given; rtol, unless given, ε·max(m, n) of A's dtype, or 0
    where a positive atol was given."""
    default = float(np.finfo(A._data.dtype).eps) * max(A.shape[-2:])
    atol_value = 0.0 if atol is None else _tolerance(atol)
    if rtol is not None:
        return atol_value, _tolerance(rtol)
    return atol_value, default if atol is None else default * (atol_value <= 0)


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """The Moore–Penrose pseudo-inverse A⁺, from the singular values above max(atol, rtol σ_max) (from
    the eigenvalues when hermitian); rcond is NumPy's name for rtol."""
    _tensors("linalg_pinv", A=A)
    if A.ndim < 2 or A._data.dtype.kind not in "fc" or A._data.dtype.itemsize < 4:
        raise RuntimeError(f"linalg.pinv({SCALAR_TYPE[A._data.dtype.name]}{{{list(A.shape)}}}): expected a tensor "
                           "with 2 or more dimensions of float, double, cfloat or cdouble types")
    if hermitian:
        _square("linalg.eigh", A)
    if rcond is not None:
        atol, rtol = 0.0, rcond
    return apply(PINV, (A,), _tolerances(A, atol, rtol) + (bool(hermitian),))


@public(method=True)
def pinverse(input, rcond=1e-15):
    """torch.pinverse: torch.linalg.pinv with rcond as its relative tolerance."""
    return pinv(input, rcond)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """How many singular values of A (|eigenvalues| when hermitian) are above max(atol, rtol σ_max), with
    torch's default tolerances; tol is the older name of atol. Not differentiable: an int64 Tensor."""
    _tensors("linalg_matrix_rank", input=A)
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    if A._data.dtype.kind not in "fc" or A._data.dtype.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")
    if hermitian:
        _square("linalg.eigh", A)
    if tol is not None:
        atol, rtol = tol, 0.0
    return _matrix_rank(A, *_tolerances(A, atol, rtol), hermitian)


def _matrix_rank(A, atol, rtol, hermitian=False):
    return Tensor._make(rank_of(backend.namespace_of(A._data), A._data, atol, rtol, hermitian))


_COND_ORDS = (None, 2, -2, 1, -1, math.inf, -math.inf, "fro", "nuc")


def cond(A, p=None):
    """The condition number ‖A‖ ‖A⁻¹‖, composed as torch composes it: σ_max / σ_min from svdvals for
    p = None or ±2 (σ_min / σ_max for −2); for ±1, ±inf and 'fro' the norms of A and of its inverse
    (inf for a singular matrix), their product's nan read as inf; 'nuc' the nuclear norms."""
    _tensors("linalg_cond", A=A)
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if isinstance(p, bool) or p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {p}")
    if p in (None, 2, -2):
        if A._data.dtype.kind not in "fc":
            raise RuntimeError(f"linalg.svd: Expected a floating point or complex tensor as input. Got "
                               f"{SCALAR_TYPE[A._data.dtype.name]}")
        if A.numel() == 0:
            return A.new_zeros(tuple(A.shape[:-2]))
        s = svdvals(A)
        big, small = narrow(s, -1, 0, 1), narrow(s, -1, s.shape[-1] - 1, 1)
        return (small / big if p == -2 else big / small).squeeze(-1)
    _square(f"linalg.cond(ord={_ord_text(p)})", A)
    if A.numel() == 0:
        return A.new_zeros(tuple(A.shape[:-2]))
    if p == "nuc":
        return matrix_norm(A, "nuc") * matrix_norm(inv(A), "nuc")
    inverse, singular = _inv_ex(A)
    inverse.masked_fill_(unsqueeze(unsqueeze(singular, -1), -1), math.inf)   # torch's in-place fill, even of no entry
    return (matrix_norm(A, p) * matrix_norm(inverse, p)).nan_to_num_(math.inf, math.inf, -math.inf)


def _ord_text(p) -> str:
    """An order as torch's error names it (C++'s to_string of a double: 1.000000)."""
    if isinstance(p, str) or isinstance(p, int) or math.isinf(p):
        return str(p)
    return f"{p:.6f}"


def _inv_ex(A) -> tuple:
    """torch's linalg.inv_ex as cond reads it: the inverses, and which matrices LAPACK finds singular
    (their inverse is then the identity's, to be overwritten)."""
    try:
        return inv(A), A.new_zeros(tuple(A.shape[:-2]), dtype=bool_)
    except _LinAlgError:
        pass
    flat = backend.to_numpy(A._data).reshape(-1, *A.shape[-2:])
    singular = np.array([not _invertible(m) for m in flat], bool).reshape(A.shape[:-2])
    mask = Tensor._make(backend.to_device(singular, A.device))
    return inv(where(unsqueeze(unsqueeze(mask, -1), -1), diag_embed(A.new_ones(A.shape[-1])), A)), mask


def _invertible(m: np.ndarray) -> bool:
    try:
        np.linalg.inv(m)
        return True
    except np.linalg.LinAlgError:
        return False


_LinalgLstsq = _return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))
_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_checks(A, B, driver) -> bool:
    """torch's checks of lstsq's arguments; whether B is one vector per matrix."""
    _tensors("linalg_lstsq", self=A, b=B)
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)")
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if not 0 <= A.ndim - B.ndim <= 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                           "(input.dim() - other.dim()) <= 1")
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same dtype, but got input's dtype "
                           f"{SCALAR_TYPE[A._data.dtype.name]} and other's dtype {SCALAR_TYPE[B._data.dtype.name]}")
    if A._data.dtype.kind not in "fc" or A._data.dtype.itemsize < 4:
        raise RuntimeError("This function doesn't handle types other than float and double")
    vector = B.ndim == A.ndim - 1
    if A.shape[-2] != B.shape[-1 if vector else -2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size({-1 if vector else -2})")
    return vector


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of A X = B (the minimum-norm one), as torch's CPU drivers give it: the
    residuals ‖A X − B‖² for a tall A of full rank (not with gelsy, torch's default), the rank (not with
    gels), the singular values (gelsd and gelss only). The rank counts the singular values above
    rcond σ_max (gelsy finds it from a pivoted QR: the same but for a singular value at the threshold)."""
    driver = "gelsy" if driver is None else driver
    vector = _lstsq_checks(A, B, driver)
    if rcond is None:
        rtol = _default_rtol(A._data)
    else:   # LAPACK reads a negative rcond as the machine precision
        rtol = float(rcond) if rcond >= 0 else float(np.finfo(A._data.dtype).eps)
    solution, residuals = apply(LSTSQ, (A, B), (rtol, driver, vector))
    if driver == "gels" or A.numel() == 0:
        rank = A.new_zeros((0,), dtype=int64)
    else:
        rank = _matrix_rank(A, 0.0, rtol)
    if driver in ("gelsd", "gelss"):   # not differentiable here: no node
        s = Tensor._make(singular_values(backend.namespace_of(A._data), A._data))
    else:
        s = A.new_zeros((0,))
    return _LinalgLstsq(solution, residuals, rank, s)


def _cholesky(op: Op, name: str, A, upper: bool):
    _square(name, A)
    try:
        return apply(op, (A,), (bool(upper),))
    except LinAlgFailure:
        i, order = _not_positive_at(A._data)
        raise _LinAlgError(f"{name}: {_batch_element(A._data, i)}The factorization could not be completed because "
                           f"the input is not positive-definite (the leading minor of order {order} is not "
                           "positive-definite).") from None


def _not_positive_at(a: np.ndarray) -> tuple[int, int]:
    """The first matrix of the batch that is not positive-definite and the order of its first such minor."""
    for i, batch in enumerate(a.reshape(-1, *a.shape[-2:])):
        for k in range(1, batch.shape[-1] + 1):
            try:
                np.linalg.cholesky(batch[:k, :k])
            except np.linalg.LinAlgError:
                return i, k
    return 0, a.shape[-1]


def cholesky_ex_free(A, *, upper=False):
    return _cholesky(CHOLESKY, "linalg.cholesky", A, upper)


@public(method=True)
def cholesky(A, upper=False):
    """torch.cholesky (deprecated in torch for torch.linalg.cholesky), recorded as CholeskyBackward0."""
    warn_once("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
              "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
              "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\n"
              "This transform will produce equivalent results for all valid (symmetric positive definite) inputs.")
    return _cholesky(CHOLESKY_LEGACY, "cholesky", A, upper)


def svdvals(A):
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    return apply(SVDVALS, (A,))


def eigvalsh(A, UPLO="L"):
    _square("linalg.eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return apply(EIGVALSH, (A,), (UPLO,))


def linalg_cross(input, other, *, dim=-1):
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    (d,) = normalize_dims(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {input.shape[d]} and "
                           f"{other.shape[d]}")
    broadcast_shape(tuple(input.shape), tuple(other.shape))
    a, b, dtype = coerce_pair(input, other, "cross")
    no_bool_kernel("cross", a, b)
    return apply(CROSS, (a, b), (d,), dtype)


@public(method=True)
def cross(input, other, dim=None):
    if dim is None:   # torch: the first dimension of size 3 (deprecated default)
        warn_once("Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass the dim "
                  "explicitly or simply use torch.linalg.cross.\nThe default value of dim will change to agree "
                  "with that of linalg.cross in a future release.")
        shape = broadcast_shape(tuple(input.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return linalg_cross(input, other, dim=dim)


@public(method=True)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    beta, alpha = _scalars("addr", (input, vec1, vec2), beta, alpha)
    if vec1.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {vec1.ndim}-D" if vec1.ndim != 1 else
                           f"addr: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    _check_expand(input, (vec1.shape[0], vec2.shape[0]))
    if input._data.dtype.kind in "biu":
        for name, value in (("beta", beta), ("alpha", alpha)):
            if isinstance(value, float):
                raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point number.")
    return apply(ADDR, (input, vec1, vec2), (beta, alpha))


@public(method=True)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    beta, alpha = _scalars("addbmm", (input, batch1, batch2), beta, alpha)
    for name, b in (("batch1", batch1), ("batch2", batch2)):
        if b.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    _check_expand(input, (batch1.shape[1], batch2.shape[2]))
    _same_dtype(_ADDMM_SELF, input, batch2)
    _same_dtype(_ADDMM, batch1, batch2)
    no_bool_kernel("addmm_impl_cpu_", batch1, batch2)
    return apply(ADDBMM, (input, batch1, batch2), _integral(batch1, beta, alpha))


@public
def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    if x1.ndim < 2 or x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D" if x1.ndim < 2 else
                           f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    batch = broadcast_shape(tuple(x1.shape[:-2]), tuple(x2.shape[:-2]))
    a = x1 if tuple(x1.shape[:-2]) == batch else x1.expand(*batch, *x1.shape[-2:])
    b = x2 if tuple(x2.shape[:-2]) == batch else x2.expand(*batch, *x2.shape[-2:])
    return apply(CDIST, (a, b), (float(p),))


# torch.norm: the vector norm of gradviz.ops.reduce's NORM record; its matrix forms are linalg's
@public
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    check_bool("norm", "keepdim", keepdim)
    if input._data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {SCALAR_TYPE[input._data.dtype.name]}")
    if p in ("fro", None):
        p = 2
    if p == "nuc":   # the sum of singular values, as torch.linalg.matrix_norm
        return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)
    if isinstance(p, str):
        raise RuntimeError(f"norm: ord {p!r} is not supported here; use a number, inf, -inf or 'fro'")
    return apply(NORM, (input,), (float(p),) + _dims_keep(input, dim, keepdim))


# -- compositions: torch records these as several nodes too ---------------------------------------
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(dim, int):
        dim = (dim,)
    if x.numel() == 0 and ord in (float("inf"), -float("inf")) and (
            dim is None or builtin_any(x.shape[d] == 0 for d in dim)):
        raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation "
                           "does not have an identity")
    return norm(x, ord, dim, keepdim)


builtin_any = any


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    if dtype is not None:
        A = A.to(dtype)
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    d0, d1 = (normalize_dims(d, A.ndim)[0] for d in dim)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord == "nuc" or ord in (2, -2):
        s = svdvals(movedim(A, (d0, d1), (-2, -1)))
        r = s.sum(-1) if ord == "nuc" else (amax if ord == 2 else amin)(s, -1)
        if keepdim:
            r = movedim(unsqueeze(unsqueeze(r, -1), -1), (-2, -1), (d0, d1))
        return r
    if ord not in (1, -1, float("inf"), -float("inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    first, second = (d1, d0) if abs(ord) == float("inf") else (d0, d1)
    if not keepdim and first < second:
        second -= 1
    sums = vector_norm(A, 1, first, keepdim)
    return (amax if ord > 0 else amin)(sums, second, keepdim)


def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None and A.ndim == 2) or isinstance(ord, str):
        if dim is None and A.ndim != 2:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                               f"{A.ndim}D.")
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype)
    if dim is None and ord is not None and A.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           f"{A.ndim}D.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def multi_dot(tensors):
    """The chain product in torch's order: two by mm, three by the cheaper of (AB)C and A(BC), more by
    the dynamic program of the cheapest parenthesization; viewed to the output's shape (1-D ends dropped)."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    out_shape = []
    if tensors[0].ndim == 1:
        tensors[0] = unsqueeze(tensors[0], 0)
    elif tensors[0].ndim == 2:
        out_shape.append(tensors[0].shape[0])
    if tensors[-1].ndim == 1:
        tensors[-1] = unsqueeze(tensors[-1], -1)
    elif tensors[-1].ndim == 2:
        out_shape.append(tensors[-1].shape[1])
    for i, t in enumerate(tensors):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    if len(tensors) == 3:
        a, b, c, d = tensors[0].shape[0], tensors[1].shape[0], tensors[2].shape[0], tensors[2].shape[1]
        if a * c * (b + d) > b * d * (a + c):
            return view(mm(tensors[0], mm(tensors[1], tensors[2])), *out_shape)
        return view(mm(mm(tensors[0], tensors[1]), tensors[2]), *out_shape)
    return view(_chain(tensors, _chain_order(tensors), 0, len(tensors) - 1), *out_shape)


@public(out=True)
def chain_matmul(*matrices):
    """torch.chain_matmul (deprecated in torch for torch.linalg.multi_dot): one matrix is cloned."""
    warn_once("torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
              "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
              "parameters.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for m in matrices:
        if m.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {m.ndim}, expected 2 instead.")
    return matrices[0].clone() if len(matrices) == 1 else multi_dot(matrices)


def _chain_order(tensors) -> list:
    """split[i][j]: where the cheapest product of tensors i..j splits (torch's matrix_chain_order)."""
    n = len(tensors)
    p = [t.shape[0] for t in tensors] + [tensors[-1].shape[1]]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            cost[i][j] = None
            for k in range(i, j):
                q = cost[i][k] + cost[k + 1][j] + p[i] * p[k + 1] * p[j + 1]
                if cost[i][j] is None or q < cost[i][j]:
                    cost[i][j], split[i][j] = q, k
    return split


def _chain(tensors, split, i, j):
    if i == j:
        return tensors[i]
    return mm(_chain(tensors, split, i, split[i][j]), _chain(tensors, split, split[i][j] + 1, j))


def vecdot(x, y, *, dim=-1):
    """torch.linalg.vecdot: Σ x ⊙ y along dim; two vectors are torch's vdot (which reads no dim)."""
    check_tensor("linalg_vecdot", "x", x, 1)
    check_tensor("linalg_vecdot", "y", y, 2)
    if x._data.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.vecdot: Expected a floating point or complex tensor as input. Got "
                           f"{SCALAR_TYPE[x._data.dtype.name]}")
    if x._data.dtype != y._data.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x of type "
                           f"{SCALAR_TYPE[x._data.dtype.name]} and y of type {SCALAR_TYPE[y._data.dtype.name]} instead")
    if x.ndim == 1 and y.ndim == 1:
        return vdot(x, y)
    return (x * y).sum(dim)


@public(method=True)
def matrix_power(A, n):
    """A to the n by torch's steps: n = 0 the identity copied into a clone of A, n = 1 a clone (never A
    itself), n = −1 the inverse, 2 and 3 by matmul, others by the bits of |n| from the lowest."""
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError("linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim > 1 else 1} by {A.shape[-1] if A.ndim else 1} matrices")
    if n == 0:   # the identity, in A's graph with a zero gradient (CopyBackwards)
        eye = diag_embed(diagonal(A, 0, -2, -1).detach() * 0 + 1)
        return A.clone().copy_(eye)
    if n == 1:
        return A.clone()
    if n == -1:
        return inv(A)
    a = inv(A) if n < 0 else A
    n = abs(n)
    if n == 2:
        return matmul(a, a)
    if n == 3:
        return matmul(matmul(a, a), a)
    z = result = None
    while n:
        bit, n = n & 1, n >> 1
        z = a if z is None else matmul(z, z)
        if bit:
            result = z if result is None else matmul(result, z)
    return result


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return diagonal(A, offset, dim1, dim2)


def vander(x, N=None):
    if x.ndim == 0:   # a number is a vector of one
        x = x.reshape(1)
    n = x.shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    column = unsqueeze(x, -1)
    ones = column * 0 + 1
    return cumprod(cat([ones, column.expand(*x.shape, n - 1)], -1), -1)


@public(method=True, out=True)
def vdot(input, other):
    """x̄ · y: dot for real tensors, recorded as torch's VdotBackward0."""
    return _dot(VDOT, input, other, "other")


@public(method=True)
def inner(input, other):
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(input.shape)} and {list(other.shape)}")
    return tensordot(input, other, ([-1], [-1]))


def _check_observations(name: str, weights, n: int) -> None:
    if weights.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are observations in the input but "
                           f"got {weights.numel()} != {n}")


@public(method=True)
def cov(input, *, correction=1, fweights=None, aweights=None):
    """torch.cov's steps: a (weighted) mean per variable, then (x − x̄) w (x − x̄)ᵀ / (Σw − correction ...)."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.ndim > 1:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions but got fweights with "
                               f"{fweights.ndim} dimensions")
        if fweights._data.dtype.kind not in "iu":
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                               f"{str(fweights.dtype)[6:].capitalize()} dtype")
        _check_observations("fweights", fweights, n)
        if (fweights._data < 0).any():
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights.ndim > 1:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions but got aweights with "
                               f"{aweights.ndim} dimensions")
        if aweights._data.dtype.kind != "f":
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{str(aweights.dtype)[6:].capitalize()} dtype")
        _check_observations("aweights", aweights, n)
        if (aweights._data < 0).any():
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    if w is not None:
        w_sum = w.sum()
        if not bool(w_sum._data != 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        avg = (x * w).sum(1) / w_sum
        if correction != 0 and aweights is not None:
            norm_factor = w_sum - (w * aweights).sum() * correction / w_sum
        else:
            norm_factor = w_sum - correction
    else:
        avg = x.sum(1) / n
        norm_factor = n - correction
    if float(getattr(norm_factor, "_data", norm_factor)) <= 0:
        warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of "
             "observations.")
        norm_factor = norm_factor * 0
    centered = x - avg.unsqueeze(1)
    c = mm(centered, (centered * w if w is not None else centered).t())
    return (c / norm_factor).squeeze()


@public(method=True)
def corrcoef(input):
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    return c.clip(-1, 1)
