"""Linear algebra: products and diagonals, with their adjoints (ḡ Bᵀ, Aᵀ ḡ)."""
from __future__ import annotations

import math

import numpy as np

from .. import backend
from .core import diagonal_view
from .op import Op
from .reduce import _cast, _norm_forward, _norm_vjp


MATS = ("self", "mat2")


def _mT(xp, a):
    return xp.swapaxes(a, -1, -2)


MM = Op("mm", "MmBackward0", r"$c = $0\, $1", lambda xp, a, b: a @ b,
        vjp=(lambda xp, g, c, a, b: g @ b.T, lambda xp, g, c, a, b: a.T @ g), args=MATS, saves=MATS,
        vjp_latex=(r"\bar{g}\, $1^{\top}", r"$0^{\top} \bar{g}",), jvp="bilinear", out_symbol="C")
MV = Op("mv", "MvBackward0", r"$c = $0\, $1", lambda xp, a, b: a @ b,
        vjp=(lambda xp, g, c, a, b: xp.reshape(g, (-1, 1)) * b, lambda xp, g, c, a, b: a.T @ g), args=("self", "vec"), saves=("self", "vec"), symbols=("A", "v"),
        vjp_latex=(r"\bar{g}\, $1^{\top}", r"$0^{\top} \bar{g}",), jvp="bilinear")


def _inner_product(name: str, torch_name: str, other: str) -> Op:
    """dot and vdot: one rule (vdot conjugates its first operand, which for real tensors changes nothing)."""
    return Op(name, torch_name, r"$c = $0 \cdot $1", lambda xp, a, b: a @ b,
              vjp=(lambda xp, g, c, a, b: g * b, lambda xp, g, c, a, b: g * a), args=("self", other), saves=("self", other),
              vjp_latex=(r"\bar{g}\, $1", r"\bar{g}\, $0",), jvp="bilinear")


DOT = _inner_product("dot", "DotBackward0", "tensor")
VDOT = _inner_product("vdot", "VdotBackward0", "other")
BMM = Op("bmm", "BmmBackward0", r"{$c}_i = $0_i\, $1_i", lambda xp, a, b: a @ b,
         vjp=(lambda xp, g, c, a, b: g @ _mT(xp, b), lambda xp, g, c, a, b: _mT(xp, a) @ g), args=MATS, saves=MATS,
         vjp_latex=(r"\bar{g}_i\, $1_i^{\top}", r"$0_i^{\top} \bar{g}_i",), jvp="bilinear", out_symbol="C")


def _with_bias(product: Op, name: str, torch_name: str, latex: str, args: tuple, symbols: tuple, **display) -> Op:
    """C = β bias + α (a ∘ b) as one node; the VJPs for a and b are the product's own, times α.
    β = 0 ignores bias (its nan/inf do not reach C), as in PyTorch."""
    grad_a, grad_b = product.vjp
    return Op(name, torch_name, latex, lambda xp, bias, a, b, beta, alpha: _addmm(bias, a, b, beta, alpha),
              vjp=(lambda xp, g, c, bias, a, b, beta, alpha: _scaled(xp, g, beta),
                   lambda xp, g, c, bias, a, b, beta, alpha: _scaled(xp, grad_a(xp, g, c, a, b), alpha),
                   lambda xp, g, c, bias, a, b, beta, alpha: _scaled(xp, grad_b(xp, g, c, a, b), alpha)),
              args=args,
              params=("beta", "alpha"), saves=args[1:], symbols=symbols, broadcasts=(0,), **display)


ADDMM = _with_bias(MM, "addmm", "AddmmBackward0", r"$c = $beta\, $0 + $alpha\, $1\, $2", ("self", "mat1", "mat2"),
                   ("bias", "A", "B"),
                   vjp_latex=(r"$beta\, \bar{g}", r"$alpha\, \bar{g}\, $2^{\top}", r"$alpha\, $1^{\top} \bar{g}",), out_symbol="C")


def _addmm(bias, a, b, beta, alpha):
    ab = a @ b
    if alpha != 1:
        ab = ab * alpha
    if beta == 0:
        return ab
    if beta == 1 and bias.dtype == ab.dtype and bias.shape in (ab.shape, ab.shape[-1:]):
        ab += bias   # into the product's fresh array: one pass and no new one (bias + ab to the bit)
        return ab
    return (bias if beta == 1 else bias * beta) + ab


def _scaled(xp, g, s):
    if s == 1:
        return g
    return xp.zeros_like(g) if s == 0 else g * s


DIAGONAL = Op("diagonal", "DiagonalBackward0", r"$c = \operatorname{diag}($0)",
              lambda xp, a, offset, d1, d2: diagonal_view(xp, a, offset, d1, d2),
              vjp=(lambda xp, g, c, a, offset, d1, d2: xp.diagonal_scatter(g, a.shape, offset, d1, d2),), params=("offset", "dim1", "dim2"), symbols=("A",),
              vjp_latex=(r"\bar{g}\text{ on the diagonal of zeros}",), jvp="linear")
TRACE = Op("trace", "TraceBackward0", r"$c = \operatorname{tr} $0",
           lambda xp, a: xp.trace(_cast(a, None)),   # a sum: int64 for integers
           vjp=(lambda xp, g, c, a: xp.diagonal_scatter(xp.broadcast_to(g, (min(a.shape),)), a.shape, 0, 0, 1),), symbols=("A",),
           vjp_latex=(r"\bar{g}\, I",), jvp="linear")


# -- products with a sum or a batch: addmv, baddbmm, tensordot, kron, einsum ------------------------------
ADDMV = _with_bias(MV, "addmv", "AddmvBackward0", r"$c = $beta\, $0 + $alpha\, $1\, $2", ("self", "mat", "vec"),
                   ("bias", "A", "v"),
                   vjp_latex=(r"$beta\, \bar{g}", r"$alpha\, \bar{g}\, $2^{\top}", r"$alpha\, $1^{\top} \bar{g}",))
BADDBMM = _with_bias(BMM, "baddbmm", "BaddbmmBackward0", r"{$c}_i = $beta\, $0_i + $alpha\, $1_i\, $2_i",
                     ("self", "batch1", "batch2"),
                     ("bias", "A", "B"),
                     vjp_latex=(r"$beta\, \bar{g}", r"$alpha\, \bar{g}_i\, $2_i^{\top}", r"$alpha\, $1_i^{\top} \bar{g}_i",), out_symbol="C")


# recorded (create_graph=True) as torch's mm backward: grad.mm(mat2.t()) and mat1.t().mm(grad)
_MM_ARRAY_VJP = MM.vjp
MM.vjp = (lambda xp, g, c, a, b: _MM_ARRAY_VJP[0](xp, g, c, a, b) if xp.arrays else xp.mm(g, xp.t(b)),
          lambda xp, g, c, a, b: _MM_ARRAY_VJP[1](xp, g, c, a, b) if xp.arrays else xp.mm(xp.t(a), g))


# -- torch.linalg: determinants, inverses, solves, Cholesky, singular and symmetric eigen values, and
# the products and distances torch keeps beside them (cross, addr, addbmm, cdist). Each VJP runs on
# arrays and, with create_graph=True, on Tensors through the Tensor namespace (xp.inv, ...), so a gradient's
# gradient is recorded too; where that would need the derivative of singular or eigen vectors
# (svdvals, eigvalsh) the Tensor path raises rather than build a wrong graph.
MATRIX = ("self",)


def _inv(xp, a):
    if xp.arrays:
        return xp.linalg.inv(a)
    return xp.inv(a)


def _no_second_order(name: str):
    raise NotImplementedError(f"the derivative of {name}'s gradient (create_graph=True) is not implemented: it needs "
                              "the derivative of the singular or eigen vectors")


class LinAlgFailure(Exception):
    """LAPACK found the matrix singular or not positive-definite (not a ValueError, which apply reads as a
    shape error)."""


def _lapack(forward):
    def run(xp, *args):
        try:
            return forward(xp, *args)
        except np.linalg.LinAlgError as exc:
            raise LinAlgFailure(str(exc)) from None
    return run


def _empty(a) -> bool:
    return 0 in a.shape[-2:] or a.size == 0


# -- determinants ------------------------------------------------------------------------------
def _adjugate_t(xp, a):
    """adj(A)ᵀ (= det(A) A⁻ᵀ when A is invertible), from the SVD, so singular A has its gradient too."""
    u, s, vh = xp.linalg.svd(a)
    n = s.shape[-1]
    others = xp.stack([xp.prod(xp.delete(s, i, axis=-1), axis=-1) for i in range(n)], axis=-1) if n else s
    sign = xp.linalg.det(u) * xp.linalg.det(vh)
    adj = (xp.swapaxes(vh, -1, -2) * others[..., None, :]) @ xp.swapaxes(u, -1, -2) * sign[..., None, None]
    return xp.swapaxes(adj, -1, -2)


def _det_vjp(xp, g, c, a):
    if xp.arrays:
        if _empty(a):
            return xp.zeros_like(a)
        return g[..., None, None] * _adjugate_t(xp, a)
    return (g * c)[..., None, None] * _mT(xp, xp.inv(a))


DET = Op("linalg_det", "LinalgDetBackward0", r"$c = \det $0", lambda xp, a: xp.asarray(xp.linalg.det(a)),
         vjp=(_det_vjp,), args=MATRIX, saves=("self", "result"), symbols=("A",), vjp_latex=(r"\bar{g}\, $c\, $0^{-\top}",))


def _slogdet_forward(xp, a):
    sign, logabs = xp.linalg.slogdet(a)
    return xp.asarray(sign), xp.asarray(logabs)


def _slogdet_vjp(xp, g, c, a):
    g_log = g[1]
    if xp.arrays:
        if _empty(a):
            return xp.zeros_like(a)
        return g_log[..., None, None] * xp.swapaxes(xp.linalg.inv(a), -1, -2)
    return g_log[..., None, None] * _mT(xp, xp.inv(a))


SLOGDET = Op("linalg_slogdet", "LinalgSlogdetBackward0",
             r"($c,\, $c1) = (\operatorname{sign} \det $0,\, \log |\det $0|)", _slogdet_forward,
             vjp=(_slogdet_vjp,), args=MATRIX, saves=("self",), n_outputs=2, symbols=("A",), out_symbol=("s", "ℓ"),
             vjp_latex=(r"\bar{g}_{$c1}\, $0^{-\top}",))


# -- inverse and solve ---------------------------------------------------------------------------
INV = Op("linalg_inv", "LinalgInvExBackward0", r"$c = $0^{-1}", _lapack(lambda xp, a: xp.linalg.inv(a)),
         vjp=(lambda xp, g, c, a: -(_mT(xp, c) @ g @ _mT(xp, c)),), args=MATRIX,
         saves=("result",), symbols=("A",), vjp_latex=(r"-$c^{\top} \bar{g}\, $c^{\top}",), out_symbol="C")


def _solve_b(xp, g, c, a, b):
    if xp.arrays:
        return xp.linalg.solve(xp.swapaxes(a, -1, -2), g)
    return xp.solve(_mT(xp, a), g)


SOLVE = Op("linalg_solve", "LinalgSolveExBackward0", r"$c = $0^{-1} $1",
           _lapack(lambda xp, a, b: xp.linalg.solve(a, b)),
           vjp=(lambda xp, g, c, a, b: -(_solve_b(xp, g, c, a, b) @ _mT(xp, c)), _solve_b), args=("A", "B"), saves=("A", "result"), symbols=("A", "B"),
           broadcasts=None, vjp_latex=(r"-$0^{-\top} \bar{g}\, $c^{\top}", r"$0^{-\top} \bar{g}"), out_symbol="X")


# -- matrix exponential ---------------------------------------------------------------------------
# Padé [13/13] with scaling and squaring (Higham 2005), in float64 and rounded to the input's dtype:
# torch sums Taylor polynomials of degree 1 to 18 in the input's dtype, so both land within that
# dtype's rounding of exp(A), not on the same bits.
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
           10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.)
_THETA13 = 5.371920351148152


def _expm_one(xp, a):
    norm = float(xp.abs(a).sum(axis=0).max()) if a.size else 0.0
    squarings = max(0, int(np.ceil(np.log2(norm / _THETA13)))) if norm > _THETA13 else 0
    a = a / (2.0 ** squarings)
    b, eye = _PADE13, xp.eye(a.shape[-1], dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
    r = xp.linalg.solve(v - u, v + u)
    for _ in range(squarings):
        r = r @ r
    return r


def _expm(xp, a):
    """exp(A) of each matrix of a batch (arrays)."""
    wide = a.astype(xp.float64)
    if wide.size == 0:
        return wide.astype(a.dtype)
    flat = wide.reshape(-1, *a.shape[-2:])
    out = xp.stack([_expm_one(xp, m) for m in flat])
    return out.reshape(a.shape).astype(a.dtype)


def _block_expm(xp, top_left, top_right, bottom_right):
    """The top-right block of exp([[P, Q], [0, R]]): the Fréchet derivative of exp, as torch's
    differential_analytic_matrix_function computes it (also on Tensors, so it is recorded)."""
    n = top_left.shape[-1]
    if xp.arrays:
        meta = xp.concatenate([xp.concatenate([top_left, top_right], -1),
                               xp.concatenate([xp.zeros_like(top_left), bottom_right], -1)], -2)
        return _expm(xp, meta)[..., :n, n:]
    meta = xp.cat([xp.cat([top_left, top_right], -1), xp.cat([xp.zeros_like(top_left), bottom_right], -1)], -2)
    return xp.matrix_exp(meta)[..., :n, n:]


MATRIX_EXP = Op("linalg_matrix_exp", "LinalgMatrixExpBackward0", r"$c = e^{$0}", lambda xp, a: _expm(xp, a),
                vjp=(lambda xp, g, c, a: _block_expm(xp, _mT(xp, a), g, _mT(xp, a)),), args=MATRIX, saves=("self",),
                symbols=("A",), jvp=lambda xp, tangents, c, a: _block_expm(xp, a, tangents[0], a),
                vjp_latex=(r"\left[e^{\left(\begin{smallmatrix} $0^{\top} & \bar{g} \\ 0 & $0^{\top} "
                           r"\end{smallmatrix}\right)}\right]_{12}",), out_symbol="E")


# -- Cholesky -------------------------------------------------------------------------------------
def _cholesky_vjp(xp, g, c, a, upper):
    """gA = sym(L⁻ᵀ Φ(Lᵀ ḡ) L⁻¹), Φ: the lower triangle with the diagonal halved (torch's cholesky_backward)."""
    L, gL = (_mT(xp, c), _mT(xp, g)) if upper else (c, g)
    if xp.arrays:
        if _empty(a):
            return xp.zeros_like(a)
        phi = xp.tril(xp.swapaxes(L, -1, -2) @ gL)
        phi = phi - 0.5 * (xp.eye(phi.shape[-1]) * phi)
        L_inv = xp.linalg.inv(L)
        ga = xp.swapaxes(L_inv, -1, -2) @ phi @ L_inv
        return (ga + xp.swapaxes(ga, -1, -2)) * 0.5
    phi = _tril_half_diagonal(xp, _mT(xp, L) @ gL)
    L_inv = xp.inv(L)
    ga = _mT(xp, L_inv) @ phi @ L_inv
    return (ga + _mT(xp, ga)) * 0.5


def _tril_half_diagonal(xp, x):
    """Φ(X): the lower triangle of X with its diagonal halved (Tensors)."""
    x = xp.tril(x)
    return x - xp.diag_embed(xp.diagonal(x, 0, -2, -1)) * 0.5


def _cholesky_jvp(xp, tangents, c, a, upper):
    """dL = L Φ(L⁻¹ dA L⁻ᵀ), torch's cholesky_jvp: dA is read as given, not symmetrized (the VJP's
    transpose would symmetrize it)."""
    if _empty(a):
        return xp.zeros_like(c)
    L = _mT(xp, c) if upper else c
    L_inv = xp.inv(L)
    dL = L @ _tril_half_diagonal(xp, L_inv @ tangents[0] @ _mT(xp, L_inv))
    return _mT(xp, dL) if upper else dL


def _cholesky_forward(xp, a, upper):
    L = xp.linalg.cholesky(a) if not _empty(a) else a.copy()
    return xp.ascontiguousarray(xp.swapaxes(L, -1, -2)) if upper else L


_cholesky_forward = _lapack(_cholesky_forward)
CHOLESKY = Op("linalg_cholesky", "LinalgCholeskyExBackward0", r"$c = \operatorname{chol}($0):\; $0 = $c\, $c^{\top}",
              _cholesky_forward,
              vjp=(_cholesky_vjp,), args=MATRIX, params=("upper",), saves=("result",),
              symbols=("A",), jvp=_cholesky_jvp,
              vjp_latex=(r"\operatorname{sym}\left($c^{-\top} \Phi($c^{\top} \bar{g})\, $c^{-1}\right)",), out_symbol="L")
CHOLESKY_LEGACY = Op("cholesky", "CholeskyBackward0", CHOLESKY.latex,
                     _cholesky_forward, vjp=(_cholesky_vjp,), jvp=_cholesky_jvp, args=MATRIX, params=("upper",),
                     saves=("result",),
                     symbols=("A",), vjp_latex=CHOLESKY.vjp_latex, out_symbol="L")


# -- singular values and symmetric eigenvalues (their vectors are only a constant of the VJP) -------
def _values_jvp(name: str, vectors):
    """The JVP of singular or eigen values, dσᵢ = uᵢᵀ dA vᵢ, with (U, V) = vectors(arrays, A, *params)
    constants of the primal: first order only (a primal that requires grad would need their derivative)."""
    def rule(xp, tangents, c, a, *params):
        if a.requires_grad:
            _no_second_order(name)
        if _empty(a):
            return xp.zeros_like(c)
        u, v = vectors(backend.namespace_of(a._data), a._data, *params)
        return xp.sum(xp.constant(u) * (tangents[0] @ xp.constant(v)), -2)   # diag(Uᵀ dA V)
    return rule


def _singular_vectors(xp, a):
    u, _, vh = xp.linalg.svd(a, full_matrices=False)
    return u, xp.swapaxes(vh, -1, -2)


def _eigen_vectors(xp, a, uplo):
    _, v = xp.linalg.eigh(a, UPLO=uplo)
    return v, v


def _svdvals_vjp(xp, g, c, a):
    if not xp.arrays:
        _no_second_order("svdvals")
    if _empty(a):
        return xp.zeros_like(a)
    u, _, vh = xp.linalg.svd(a, full_matrices=False)
    return (u * g[..., None, :]) @ vh


def singular_values(xp, a):
    """σ of each matrix (arrays), largest first."""
    return xp.linalg.svd(a, compute_uv=False) if not _empty(a) else xp.zeros(a.shape[:-2] + (min(a.shape[-2:]),), a.dtype)


SVDVALS = Op("linalg_svdvals", "LinalgSvdBackward0", r"$c = \sigma($0) \text{ (singular values)}", singular_values,
             vjp=(_svdvals_vjp,), jvp=_values_jvp("svdvals", _singular_vectors), args=MATRIX, saves=("self",), symbols=("A",), vjp_latex=(r"U \operatorname{diag}(\bar{g})\, V^{\top}",), out_symbol="s")


def _eigvalsh_vjp(xp, g, c, a, uplo):
    if not xp.arrays:
        _no_second_order("eigvalsh")
    if _empty(a):
        return xp.zeros_like(a)
    _, v = xp.linalg.eigh(a, UPLO=uplo)
    return (v * g[..., None, :]) @ xp.swapaxes(v, -1, -2)


EIGVALSH = Op("linalg_eigvalsh", "LinalgEighBackward0",
              r"$c = \lambda($0) \text{ (eigenvalues of symmetric } $0\text{)}",
              lambda xp, a, uplo: xp.linalg.eigvalsh(a, UPLO=uplo) if not _empty(a) else
              xp.zeros(a.shape[:-1], a.dtype),
              vjp=(_eigvalsh_vjp,), jvp=_values_jvp("eigvalsh", _eigen_vectors), args=MATRIX, params=("UPLO",),
              saves=("self",),
              symbols=("A",), vjp_latex=(r"V \operatorname{diag}(\bar{g})\, V^{\top}",), out_symbol="λ")


# -- products and distances -----------------------------------------------------------------------
def _cross(xp, a, b, d):
    if xp.arrays:
        return xp.cross(a, b, axis=d)
    return xp.linalg_cross(a, b, dim=d)


CROSS = Op("linalg_cross", "LinalgCrossBackward0", r"$c = $0 \times $1", lambda xp, a, b, d: xp.cross(a, b, axis=d),
           vjp=(lambda xp, g, c, a, b, d: _cross(xp, b, g, d), lambda xp, g, c, a, b, d: _cross(xp, g, a, d)), args=("self", "other"), params=("dim",), saves=("self", "other"),
           broadcasts=None, vjp_latex=(r"$1 \times \bar{g}", r"\bar{g} \times $0"), jvp="bilinear")


def _beta_part(xp, g, beta):
    return g * beta if beta != 1 else g


def _addr(xp, m, u, v, beta, alpha):
    """β M + α u vᵀ; on bool tensors torch's logical form, (β ∧ M) ∨ (α ∧ u vᵀ)."""
    uv = xp.outer(u, v)
    if uv.dtype.kind == "b":
        return xp.logical_or(xp.logical_and(m, bool(beta)), xp.logical_and(uv, bool(alpha)))
    return (m * beta if beta != 0 else xp.zeros_like(m)) + uv * alpha


ADDR = Op("addr", "AddrBackward0", r"$c = $beta\, $0 + $alpha\, $1\, $2^{\top}", _addr,
          vjp=(lambda xp, g, c, m, u, v, beta, alpha: _beta_part(xp, g, beta),
               lambda xp, g, c, m, u, v, beta, alpha: (g @ v) * alpha,
               lambda xp, g, c, m, u, v, beta, alpha: (_mT(xp, g) @ u) * alpha), args=("self", "vec1", "vec2"), params=("beta", "alpha"),
          saves=("vec1", "vec2"), symbols=("M", "u", "v"),
          vjp_latex=(r"$beta\, \bar{g}", r"$alpha\, \bar{g}\, $2", r"$alpha\, \bar{g}^{\top} $1"),
          broadcasts=(0,), out_symbol="C")
ADDBMM = Op("addbmm", "AddbmmBackward0", r"$c = $beta\, $0 + $alpha \sum_i $1_i\, $2_i",
            lambda xp, m, a, b, beta, alpha: (m * beta if beta != 0 else xp.zeros_like(m)) + (a @ b).sum(0) * alpha,
            vjp=(lambda xp, g, c, m, a, b, beta, alpha: _beta_part(xp, g, beta),
                 lambda xp, g, c, m, a, b, beta, alpha: (xp.expand_dims(g, 0) @ _mT(xp, b)) * alpha,
                 lambda xp, g, c, m, a, b, beta, alpha: (_mT(xp, a) @ xp.expand_dims(g, 0)) * alpha), args=("self", "batch1", "batch2"), params=("beta", "alpha"),
            saves=("batch1", "batch2"), symbols=("M", "A", "B"),
            vjp_latex=(r"$beta\, \bar{g}", r"$alpha\, \bar{g}\, $2_i^{\top}", r"$alpha\, $1_i^{\top} \bar{g}"),
            broadcasts=(0,), out_symbol="C")


def _cdist_diff(a, b):
    return a[..., :, None, :] - b[..., None, :, :]


def _cdist_forward(xp, a, b, p):
    with np.errstate(all="ignore"):
        return _norm_forward(xp, _cdist_diff(a, b), p, (-1,), False)


def _cdist_parts(xp, g, c, a, b, p):
    d = _cdist_diff(a, b)
    with np.errstate(all="ignore"):
        gd = _norm_vjp(xp, g, c, d, p, (d.ndim - 1,), False)
    return gd


CDIST = Op("cdist", "CdistBackward0", r"{$c}_{ij} = \lVert $0_i - $1_j \rVert_{$p}", _cdist_forward,
           vjp=(lambda xp, g, c, a, b, p: xp.sum(_cdist_parts(xp, g, c, a, b, p), axis=-2),
                lambda xp, g, c, a, b, p: -xp.sum(_cdist_parts(xp, g, c, a, b, p), axis=-3)), args=("x1", "x2"), params=("p",),
           saves=("x1", "x2", "result"), symbols=("A", "B"), broadcasts=None,
           vjp_latex=(r"\sum_j \bar{g}_{ij}\, \partial \lVert $0_i - $1_j \rVert_{$p} / \partial $0_i",
                      r"-\sum_i \bar{g}_{ij}\, \partial \lVert $0_i - $1_j \rVert_{$p} / \partial $0_i"), out_symbol="C")


# -- triangular solves and QR ---------------------------------------------------------------------
def _substitute(xp, a, b, upper, unit):
    """X with A X = B for triangular A (arrays), by forward or back substitution over A's rows, each
    step one product for the whole batch and every column, as LAPACK's trsm: a zero on A's diagonal
    gives inf and nan, not an error."""
    n = a.shape[-1]
    x = xp.empty(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:], xp.result_type(a, b))
    rows = range(n - 1, -1, -1) if upper else range(n)
    with np.errstate(all="ignore"):
        for i in rows:
            done = slice(i + 1, n) if upper else slice(0, i)
            r = b[..., i, :] - (a[..., i:i + 1, done] @ x[..., done, :])[..., 0, :]
            x[..., i, :] = r if unit else r / a[..., i, i, None]
    return x


def _solve_triangular(xp, a, b, upper, left=True, unit=False):
    """A⁻¹ B (left) or B A⁻¹ for triangular A, on arrays or, recorded, on Tensors."""
    if not xp.arrays:
        return xp.solve_triangular(a, b, upper=upper, left=left, unitriangular=unit)
    if left:
        return _substitute(xp, a, b, upper, unit)
    return xp.swapaxes(_substitute(xp, xp.swapaxes(a, -1, -2), xp.swapaxes(b, -1, -2), not upper, unit), -1, -2)


def _solve_triangular_vjp_b(xp, g, c, a, b, upper, left, unit):
    return _solve_triangular(xp, _mT(xp, a), g, not upper, left, unit)


def _solve_triangular_vjp_a(xp, g, c, a, b, upper, left, unit):
    """−A⁻ᵀ ḡ Xᵀ (left) or −Xᵀ ḡ A⁻ᵀ, kept to A's triangle (torch's linalg_solve_triangular_backward)."""
    gb = _solve_triangular_vjp_b(xp, g, c, a, b, upper, left, unit)
    ga = -(gb @ _mT(xp, c)) if left else -(_mT(xp, c) @ gb)
    return xp.triu(ga, int(unit)) if upper else xp.tril(ga, -int(unit))


def _triangular_solve(latex: str, vjp_latex: tuple) -> Op:
    """The record of A X = B (left) or X A = B for triangular A: tri(A) is the triangle of A the solve
    reads (upper or lower, with ones on its diagonal when unitriangular), and each gradient is kept to it."""
    return Op("linalg_solve_triangular", "LinalgSolveTriangularBackward0", latex,
              lambda xp, a, b, upper, left, unit: _solve_triangular(xp, a, b, upper, left, unit),
              vjp=(_solve_triangular_vjp_a, _solve_triangular_vjp_b), args=("self", "B"),
              params=("upper", "left", "unitriangular"), saves=("self", "result"), symbols=("A", "B"),
              broadcasts=None, out_symbol="X", vjp_latex=vjp_latex)


SOLVE_TRIANGULAR = _triangular_solve(r"$c = \operatorname{tri}($0)^{-1} $1", (
    r"-\operatorname{tri}\left(\operatorname{tri}($0)^{-\top} \bar{g}\, $c^{\top}\right)",
    r"\operatorname{tri}($0)^{-\top} \bar{g}"))
SOLVE_TRIANGULAR_RIGHT = _triangular_solve(r"$c = $1 \operatorname{tri}($0)^{-1}", (
    r"-\operatorname{tri}\left($c^{\top} \bar{g}\, \operatorname{tri}($0)^{-\top}\right)",
    r"\bar{g}\, \operatorname{tri}($0)^{-\top}"))


def _qr_forward(xp, a, mode):
    if mode == "r":
        return xp.zeros((0,), a.dtype), xp.linalg.qr(a, mode="r")
    return tuple(xp.linalg.qr(a, mode=mode))


def _qr_vjp(xp, g, c, a, mode):
    """torch's linalg_qr_backward: with M = ḡ_R Rᵀ − Qᵀ ḡ_Q, for m ≥ n
    gA = (ḡ_Q + Q sym(triu M)) R⁻ᵀ, sym(X) = X + Xᵀ with the diagonal halved; for m < n (A = Q [U | V])
    gA = [Q tril(Mᵀ − M) U⁻ᵀ | 0] + Q ḡ_R."""
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. Please use "
                           "linalg.qr(A, mode='reduced') if you are going to differentiate through linalg.qr.")
    (gq, gr), (q, r) = g, c
    m, n = q.shape[-2], r.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols.")
    M = gr @ _mT(xp, r) - _mT(xp, q) @ gq
    if m >= n:
        upper = xp.triu(M)
        ga = q @ (upper + _mT(xp, xp.triu(M, 1))) + gq   # triu M + its transpose, the diagonal once
        return _solve_triangular(xp, _mT(xp, r), ga, False, left=False)
    ga = q @ xp.tril(_mT(xp, M) - M)
    ga = _solve_triangular(xp, _mT(xp, r[..., :m]), ga, False, left=False)
    return xp.concatenate([ga, xp.zeros_like(r[..., m:])], -1) + q @ gr


QR = Op("linalg_qr", "LinalgQrBackward0", r"($c,\, $c1) = \operatorname{qr}($0):\; $0 = $c $c1", _qr_forward,
        vjp=(_qr_vjp,), args=("A",), params=("mode",), saves=("result",), n_outputs=2, symbols=("A",),
        out_symbol=("Q", "R"),
        vjp_latex=(r"\left(\bar{g}_{$c} + $c \operatorname{sym}\operatorname{triu}(\bar{g}_{$c1} $c1^{\top} - $c^{\top} "
                   r"\bar{g}_{$c})\right) $c1^{-\top}",))


# -- pseudo-inverse and least squares ---------------------------------------------------------------
def _pinv_parts(xp, a, atol, rtol, hermitian):
    """(V, 1/σ where σ is above the tolerance and 0 elsewhere, U) with A⁺ = V diag(1/σ) Uᵀ: torch's
    linalg_pinv, from the SVD, or from eigh when A is symmetric (σ = |λ|); the tolerance is
    max(atol, rtol σ_max), atol and rtol numbers or arrays with A's batch shape."""
    if hermitian:
        s, u = xp.linalg.eigh(a)
        v, size = u, xp.abs(s)
    else:
        u, s, vh = xp.linalg.svd(a, full_matrices=False)
        v, size = xp.swapaxes(vh, -1, -2), s
    with np.errstate(divide="ignore"):
        inverse = xp.where(size > _threshold(xp, size, atol, rtol), 1 / s, 0).astype(a.dtype)
    return v, inverse, u


def _threshold(xp, size, atol, rtol):
    """max(atol, rtol σ_max) for each matrix's singular values (or |eigenvalues|) `size`."""
    return xp.maximum(xp.asarray(atol)[..., None], xp.asarray(rtol)[..., None] * size.max(-1, keepdims=True))


def matrix_rank(xp, a, atol, rtol, hermitian):
    """torch's matrix_rank (arrays): how many singular values (|eigenvalues| when hermitian) are above
    max(atol, rtol σ_max), as int64; 0 for an empty matrix."""
    if a.size == 0:
        return xp.zeros(a.shape[:-2], np.int64)
    size = xp.abs(xp.linalg.eigvalsh(a)) if hermitian else xp.linalg.svd(a, compute_uv=False)
    return (size > _threshold(xp, size, atol, rtol)).sum(-1).astype(np.int64)


def _pinv_forward(xp, a, atol, rtol, hermitian):
    if a.size == 0:
        return xp.zeros(a.shape[:-2] + (a.shape[-1], a.shape[-2]), a.dtype)
    v, inverse, u = _pinv_parts(xp, a, atol, rtol, hermitian)
    return (v * inverse[..., None, :]) @ xp.swapaxes(u, -1, -2)


def _pinv_vjp(xp, g, c, a, *params):
    """torch's pinv_backward, with the products arranged for the smaller of A's two sizes."""
    p, ph, gh = c, _mT(xp, c), _mT(xp, g)
    if a.shape[-2] <= a.shape[-1]:
        k = gh @ p
        kph = k @ ph
        return -_mT(xp, p @ k) + kph - (a @ p) @ kph + (ph @ p) @ (gh - k @ a)
    k = p @ gh
    phk = ph @ k
    return -_mT(xp, k @ p) + (gh - a @ k) @ p @ ph + phk - phk @ p @ a


PINV = Op("linalg_pinv", "LinalgPinvBackward0", r"$c = $0^{+}", _pinv_forward, vjp=(_pinv_vjp,), args=MATRIX,
          params=("atol", "rtol", "hermitian"), saves=("self", "result"), symbols=("A",), out_symbol="P",
          vjp_latex=(r"-$c^{\top} \bar{g}\, $c^{\top} + (I - $0 $c)\, \bar{g}^{\top} $c $c^{\top} + "
                     r"$c^{\top} $c\, \bar{g}^{\top} (I - $c $0)",))


def _default_rtol(a) -> float:
    """torch's default relative tolerance of a pseudo-inverse or a least-squares rank: ε·max(m, n)."""
    return float(np.finfo(a.dtype).eps) * max(a.shape[-2:])


def _pinv(xp, a):
    """A⁺ with torch's default tolerances, on arrays or, recorded, on Tensors."""
    return _pinv_forward(xp, a, 0.0, _default_rtol(a), False) if xp.arrays else xp.pinv(a)


def _lstsq_forward(xp, a, b, rtol, driver, vector):
    """The minimum-norm least-squares solution X = A⁺ B (singular values at most rtol σ_max dropped, as
    gelsy, gelsd and gelss drop them) and torch's residuals ‖A X − B‖² per column, which it gives only
    for a tall A of full rank and a driver other than gelsy (else an empty tensor)."""
    b = b[..., None] if vector else b
    m, n = a.shape[-2:]
    if a.size == 0 or b.size == 0:
        x = xp.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (n, b.shape[-1]), a.dtype)
        return (x[..., 0] if vector else x), xp.zeros((0,), a.dtype)
    v, inverse, u = _pinv_parts(xp, a, 0.0, rtol, False)
    x = (v * inverse[..., None, :]) @ (xp.swapaxes(u, -1, -2) @ b)
    full = bool((xp.count_nonzero(inverse, axis=-1) == n).all())
    if m > n and driver != "gelsy" and (driver == "gels" or full):
        residuals = ((a @ x - b) ** 2).sum(-2)
    else:
        residuals = xp.zeros((0,), a.dtype)
    return (x[..., 0] if vector else x), residuals


def _lstsq_parts(xp, g, c, a, b, vector):
    """(ḡ_X, ḡ_residuals, X, B) as matrices (a vector B and its X given a last axis of one)."""
    (gx, gl), (x, _) = g, c
    if vector:
        gx, x, b = (xp.expand_dims(t, -1) for t in (gx, x, b))
    return gx, gl, x, b


def _lstsq_vjp_a(xp, g, c, a, b, rtol, driver, vector):
    """torch's linalg_lstsq_backward: pinv_backward of ḡ_X Bᵀ, plus 2 (ḡ_res ⊙ (A X − B)) Xᵀ."""
    gx, gl, x, b = _lstsq_parts(xp, g, c, a, b, vector)
    ga = _pinv_vjp(xp, gx @ _mT(xp, b), _pinv(xp, a), a)
    if math.prod(gl.shape):
        ga = ga + (xp.expand_dims(gl, -2) * (a @ x - b)) @ _mT(xp, x) * 2
    return ga


def _lstsq_vjp_b(xp, g, c, a, b, rtol, driver, vector):
    """A⁺ᵀ ḡ_X, minus 2 ḡ_res ⊙ (A X − B)."""
    gx, gl, x, b = _lstsq_parts(xp, g, c, a, b, vector)
    gb = _mT(xp, _pinv(xp, a)) @ gx
    if math.prod(gl.shape):
        gb = gb - xp.expand_dims(gl, -2) * (a @ x - b) * 2
    return gb[..., 0] if vector else gb


LSTSQ = Op("linalg_lstsq", "LinalgLstsqBackward0",
           r"$c = \operatorname{argmin}_{X} \lVert $0 X - $1 \rVert_F = $0^{+} $1", _lstsq_forward,
           vjp=(_lstsq_vjp_a, _lstsq_vjp_b), args=("self", "b"), params=("rcond", "driver", "vector"),
           saves=("self", "b", "result"), n_outputs=2, symbols=("A", "B"), broadcasts=None, out_symbol=("X", "r"),
           vjp_latex=(r"-P^{\top} G P^{\top} + (I - $0 P)\, G^{\top} P P^{\top} + P^{\top} P\, G^{\top} (I - P $0) + "
                      r"2 (\bar{g}_{$c1} \odot ($0 $c - $1)) $c^{\top}:\; P = $0^{+},\; G = \bar{g}_{$c} $1^{\top}",
                      r"$0^{+\top} \bar{g}_{$c} - 2\, \bar{g}_{$c1} \odot ($0 $c - $1)"))
