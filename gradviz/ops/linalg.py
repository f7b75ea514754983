"""Linear algebra: products and diagonals, with their adjoints (ḡ Bᵀ, Aᵀ ḡ)."""
from __future__ import annotations

import math

import numpy as np

from ..dtypes import SCALAR_TYPE
from ..autograd.apply import apply
from .core import expand_error
from .op import Op

MATS = ("self", "mat2")


def _mT(xp, a):
    return xp.swapaxes(a, -1, -2)


MM = Op("mm", "MmBackward0", "C = A B", lambda xp, a, b: a @ b,
        vjp=(lambda xp, g, c, a, b: g @ b.T, lambda xp, g, c, a, b: a.T @ g),
        vjp_formulas=("ḡ Bᵀ", "Aᵀ ḡ"), args=MATS, saves=MATS,
        latex=r"$c = $0\, $1",
        vjp_latex=(r"\bar{g}\, $1^{\top}", r"$0^{\top} \bar{g}",))
MV = Op("mv", "MvBackward0", "c = A v", lambda xp, a, b: a @ b,
        vjp=(lambda xp, g, c, a, b: xp.reshape(g, (-1, 1)) * b, lambda xp, g, c, a, b: a.T @ g),
        vjp_formulas=("ḡ vᵀ", "Aᵀ ḡ"), args=("self", "vec"), saves=("self", "vec"), symbols=("A", "v"),
        latex=r"$c = $0\, $1",
        vjp_latex=(r"\bar{g}\, $1^{\top}", r"$0^{\top} \bar{g}",))
DOT = Op("dot", "DotBackward0", "c = a · b", lambda xp, a, b: a @ b,
         vjp=(lambda xp, g, c, a, b: g * b, lambda xp, g, c, a, b: g * a),
         vjp_formulas=("ḡ b", "ḡ a"), args=("self", "tensor"), saves=("self", "tensor"),
         latex=r"$c = $0 \cdot $1",
         vjp_latex=(r"\bar{g}\, $1", r"\bar{g}\, $0",))
BMM = Op("bmm", "BmmBackward0", "Cᵢ = Aᵢ Bᵢ", lambda xp, a, b: a @ b,
         vjp=(lambda xp, g, c, a, b: g @ _mT(xp, b), lambda xp, g, c, a, b: _mT(xp, a) @ g),
         vjp_formulas=("ḡ Bᵀ", "Aᵀ ḡ"), args=MATS, saves=MATS,
         latex=r"{$c}_i = $0_i\, $1_i",
         vjp_latex=(r"\bar{g}_i\, $1_i^{\top}", r"$0_i^{\top} \bar{g}_i",))


def _with_bias(product: Op, name: str, torch_name: str, formula: str, args: tuple, symbols: tuple, **display) -> Op:
    """C = β bias + α (a ∘ b) as one node; the VJPs for a and b are the product's own, times α.
    β = 0 ignores bias (its nan/inf do not reach C), as in PyTorch."""
    grad_a, grad_b = product.vjp
    return Op(name, torch_name, formula, lambda xp, bias, a, b, beta, alpha: _addmm(bias, a, b, beta, alpha),
              vjp=(lambda xp, g, c, bias, a, b, beta, alpha: _scaled(xp, g, beta),
                   lambda xp, g, c, bias, a, b, beta, alpha: _scaled(xp, grad_a(xp, g, c, a, b), alpha),
                   lambda xp, g, c, bias, a, b, beta, alpha: _scaled(xp, grad_b(xp, g, c, a, b), alpha)),
              vjp_formulas=("β ḡ",) + tuple("α " + f for f in product.vjp_formulas), args=args,
              params=("beta", "alpha"), saves=args[1:], symbols=symbols, broadcasts=(0,), **display)


ADDMM = _with_bias(MM, "addmm", "AddmmBackward0", "C = β bias + α A B", ("self", "mat1", "mat2"),
                   ("bias", "A", "B"),
                   latex=r"$c = $beta\, $0 + $alpha\, $1\, $2",
                   vjp_latex=(r"$beta\, \bar{g}", r"$alpha\, \bar{g}\, $2^{\top}", r"$alpha\, $1^{\top} \bar{g}",))


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
              vjp_formulas=("ḡ on the diagonal of zeros",), params=("offset", "dim1", "dim2"), symbols=("A",),
              latex=r"$c = \operatorname{diag}($0)",
              vjp_latex=(r"\bar{g}\text{ on the diagonal of zeros}",))
TRACE = Op("trace", "TraceBackward0", "c = tr A", lambda xp, a: xp.trace(a),
           vjp=(lambda xp, g, c, a: xp.diagonal_scatter(xp.broadcast_to(g, (min(a.shape),)), a.shape, 0, 0, 1),),
           vjp_formulas=("ḡ I",), symbols=("A",),
           latex=r"$c = \operatorname{tr} $0",
           vjp_latex=(r"\bar{g}\, I",))


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
    if input.dtype is not tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{SCALAR_TYPE[input.dtype.name]} and {SCALAR_TYPE[tensor.dtype.name]}")
    return apply(DOT, (input, tensor))


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
    batch = _broadcast_batch(batch1, batch2, input, other)
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
    # the bias expands to the product's shape: torch's words when it cannot
    message = expand_error(tuple(input.shape), (mat1.shape[0], mat2.shape[1]),
                           f"torch.{SCALAR_TYPE[input.dtype.name]}Tensor")
    if message:
        raise RuntimeError(message)
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
            flat = reshape(input, math.prod(lead), input.shape[-1])
            out = addmm(bias, flat, weight.t())
            return view(out, *lead, out.shape[1])
    out = matmul(input, weight.t())
    return out if bias is None else out + bias


def outer(input, vec2):
    for name, v in (("self", input), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {v.ndim}-D")
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


# -- more products: addmv, baddbmm, tensordot, kron, einsum ------------------------------
ADDMV = _with_bias(MV, "addmv", "AddmvBackward0", "c = β bias + α A v", ("self", "mat", "vec"),
                   ("bias", "A", "v"),
                   latex=r"$c = $beta\, $0 + $alpha\, $1\, $2",
                   vjp_latex=(r"$beta\, \bar{g}", r"$alpha\, \bar{g}\, $2^{\top}", r"$alpha\, $1^{\top} \bar{g}",))
BADDBMM = _with_bias(BMM, "baddbmm", "BaddbmmBackward0", "Cᵢ = β biasᵢ + α Aᵢ Bᵢ", ("self", "batch1", "batch2"),
                     ("bias", "A", "B"),
                     latex=r"{$c}_i = $beta\, $0_i + $alpha\, $1_i\, $2_i",
                     vjp_latex=(r"$beta\, \bar{g}", r"$alpha\, \bar{g}_i\, $2_i^{\top}", r"$alpha\, $1_i^{\top} \bar{g}_i",))


def addmv(input, mat, vec, *, beta=1, alpha=1):
    if mat.ndim != 2 or vec.ndim != 1 or mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0] if input.ndim else 1}), mat "
                           f"({mat.shape[0]}x{mat.shape[1] if mat.ndim > 1 else 1}), vec ({vec.shape[0]})")
    return apply(ADDMV, (input,) + _same_dtype(mat, vec), (beta, alpha))


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    if batch1.ndim != 3 or batch2.ndim != 3:
        raise RuntimeError(f"batch1 must be a 3D tensor (got {batch1.ndim}-D and {batch2.ndim}-D)")
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")
    return apply(BADDBMM, (input,) + _same_dtype(batch1, batch2), (beta, alpha))


def tensordot(a, b, dims=2):
    """Contract dims of a with dims of b: both permuted and reshaped to matrices, one mm, then
    viewed back, as PyTorch records it."""
    from .reduce import normalize_dims
    from .shape import permute, reshape
    if isinstance(dims, int):
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    da = [normalize_dims(d, a.ndim)[0] for d in da]
    db = [normalize_dims(d, b.ndim)[0] for d in db]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for x, y in zip(da, db):
        # PyTorch broadcasts a contracted dim of size 1: the other side's dim is summed first
        if b.shape[y] == 1 and a.shape[x] != 1:
            a = a.sum(x, keepdim=True)
        elif a.shape[x] == 1 and b.shape[y] != 1:
            b = b.sum(y, keepdim=True)
        if a.shape[x] != b.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {a.shape[x]} in dim {x} "
                               f"and second has size {b.shape[y]} in dim {y}")
    free_a = [i for i in range(a.ndim) if i not in da]
    free_b = [i for i in range(b.ndim) if i not in db]
    k = math.prod([a.shape[d] for d in da])
    out_shape = [a.shape[i] for i in free_a] + [b.shape[i] for i in free_b]
    left = reshape(permute(a, free_a + da), math.prod([a.shape[i] for i in free_a]), k)
    right = reshape(permute(b, db + free_b), k, math.prod([b.shape[i] for i in free_b]))
    return reshape(mm(left, right), *out_shape)


def kron(input, other):
    """Kronecker product: a and b interleaved as (a₀, 1, a₁, 1, …) ⊙ (1, b₀, 1, b₁, …), then
    merged back, as PyTorch records it (views of fresh copies and one mul)."""
    from .shape import unsafe_view
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    a = unsafe_view(input, *[s for d in sa for s in (d, 1)])
    b = unsafe_view(other, *[s for d in sb for s in (1, d)])
    return unsafe_view(a * b, *[x * y for x, y in zip(sa, sb)])


def _expand_ellipsis(terms, out, arrow, operands):
    """'...' as letters of its own: each operand's ellipsis covers its dims that no letter names,
    right-aligned with the others' (they broadcast); without '->' they lead the output."""
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
    return expanded, out, "->"


def einsum(equation, *operands):
    """einsum from gradviz ops: each operand's repeated letters become diagonals and the letters
    only it carries are summed first; the operands are then permuted and unsqueezed onto one
    common set of axes, multiplied, the contracted axes summed, and the result permuted to the
    output's order."""
    from . import reduce as R
    from .shape import permute, unsqueeze, varargs
    operands = varargs(operands)
    eq = equation.replace(" ", "")
    lhs, arrow, out = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    if "." in eq:
        terms, out, arrow = _expand_ellipsis(terms, out, arrow, operands)
    for c in out:
        if c not in lhs and not ("." in eq and c not in eq):
            raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any input "
                               "operand")
    sizes = {}
    for i, (term, x) in enumerate(zip(terms, operands)):
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
    letters = list(out) + sorted({c for t in terms for c in t} - set(out))
    prepared = []
    for i, (term, x) in enumerate(zip(terms, operands)):
        if len(term) != x.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(term)}) does not match "
                               f"the number of dimensions ({x.ndim}) for operand {i}")
        term = list(term)
        if len(operands) == 1 and len(set(term)) < len(term):   # PyTorch permutes first, then takes diagonals
            order = sorted(range(len(term)), key=lambda j: letters.index(term[j]))
            x = permute(x, order)
            term = [term[j] for j in order]
        while len(set(term)) < len(term):   # a repeated letter: take the diagonal
            c = next(c for c in term if term.count(c) > 1)
            d1 = term.index(c)
            d2 = term.index(c, d1 + 1)
            x = diagonal(x, 0, d1, d2)
            term = [t for j, t in enumerate(term) if j not in (d1, d2)] + [c]
        others = set(out).union(*(set(t) for j, t in enumerate(terms) if j != i))
        lone = [j for j, c in enumerate(term) if c not in others] if len(operands) > 1 else []
        if lone:
            x = R.sum(x, tuple(lone))
            term = [c for j, c in enumerate(term) if j not in lone]
        order = sorted(range(len(term)), key=lambda j: letters.index(term[j]))
        x = permute(x, [*order])
        term = [term[j] for j in order]
        for pos, c in enumerate(letters):
            if c not in term:
                x = unsqueeze(x, pos)
                term.insert(pos, c)
        prepared.append(x)
    result = prepared[0]
    for x in prepared[1:]:
        result = result * x
    contracted = tuple(range(len(out), result.ndim))
    if contracted:
        result = R.sum(result, contracted)
    return result


# -- forward mode (autograd.forward_ad): products are bilinear, diagonal and trace linear ------
from ..autograd.forward_ad import bilinear as _bilinear, defjvp as _defjvp, linear as _linear  # noqa: E402

_defjvp(_bilinear, MM, MV, DOT, BMM)
_defjvp(_linear, DIAGONAL, TRACE)

# recorded (create_graph=True) as torch's mm backward: grad.mm(mat2.t()) and mat1.t().mm(grad)
_grad_self, _grad_mat2 = MM.vjp
MM.vjp = (lambda xp, g, c, a, b: _grad_self(xp, g, c, a, b) if xp.arrays else mm(g, _t(b)),
          lambda xp, g, c, a, b: _grad_mat2(xp, g, c, a, b) if xp.arrays else mm(_t(a), g))


def _t(a):
    from .shape import t
    return t(a)
