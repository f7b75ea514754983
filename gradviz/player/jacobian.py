"""Jacobians made visible, with one generic mechanism: VJPs on one-hot vectors.

Reverse mode never builds a Jacobian; it computes vᵀJ. Feeding it the one-hot
vectors e₁, e₂, ... returns J's rows one by one, so the same code serves every
op: the engine's `local_jacobians` runs a node's own VJP (`node_vjp`, which touches
no state) while a recorder asks for it, and `jacobian_view` runs whole backward
passes of a small function (gradviz's or torch's). `heatmap` draws either.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from ..tracing import local_jacobians  # noqa: F401  (re-exported: gradviz.player.local_jacobians)
from . import mathtext
from .front_end import stylesheet
from .grids import level, scale_of
from .mathtext import esc
from ..origins import is_torch
from ..tensor import Tensor
from ..creation import tensor as make_tensor

LIMIT = 64          # materialize a Jacobian only when both sides have at most this many elements
TEXT_CELLS = 64     # heatmaps up to this many cells print their values; larger ones are colour only


# -- drawing a matrix ----------------------------------------------------------------
def heatmap(matrix: np.ndarray, row_labels: Sequence[str] | None = None,
            col_labels: Sequence[str] | None = None, caption: str = "") -> str:
    """A matrix as an HTML table whose cells are coloured by sign and size (CSS classes
    gv-jN in player.css: blue negative, red positive); small ones print their values."""
    J = np.asarray(matrix, dtype=np.float64)
    if J.ndim == 1:
        J = J[None, :]
    scale = scale_of(J)   # of the finite entries: an inf or NaN one (sqrt at 0) is left neutral
    text = J.size <= TEXT_CELLS
    out = [f'<div class="gv-jcap">{caption}</div>' if caption else "", '<table class="gv-jac">']
    if col_labels is not None:
        out.append("<tr><th></th>" + "".join(f"<th>{esc(c)}</th>" for c in col_labels) + "</tr>")
    for r, row in enumerate(J):
        head = f"<th>{esc(row_labels[r])}</th>" if row_labels is not None else ""
        cells = "".join(f'<td class="gv-j{level(v, scale)}">{mathtext.number(v) if text else ""}</td>'
                        for v in row)
        out.append(f"<tr>{head}{cells}</tr>")
    out.append("</table>")
    return "".join(out)


def element_labels(shape: tuple, symbol: str) -> list:
    """a₀, a₁ for vectors; a₀₁ style (written a[0,1]) for higher ranks."""
    shape = tuple(shape)
    if len(shape) == 0:
        return [symbol]
    return [f"{symbol}[{','.join(str(i) for i in idx)}]" for idx in np.ndindex(*shape)]


# -- the whole Jacobian of a small function ------------------------------------------
@dataclass
class JacobianView:
    """J = ∂f(x)/∂x built row by row from backward passes with one-hot seeds, and the
    products vᵀJ next to what `y.backward(v)` really returns."""
    matrix: np.ndarray                       # (m, n): row k = backward with seed e_k
    output_shape: tuple
    input_shape: tuple
    seeds: list = field(default_factory=list)       # the one-hot seeds, in the output's shape
    products: list = field(default_factory=list)    # (v, x.grad from backward(v), vᵀJ), arrays

    def vjp(self, v) -> np.ndarray:
        """vᵀJ in the input's shape."""
        return (np.asarray(v, dtype=np.float64).reshape(-1) @ self.matrix).reshape(self.input_shape)

    def html(self) -> str:
        rows = element_labels(self.output_shape, "y")
        cols = element_labels(self.input_shape, "x")
        seed_rows = [f"seed e{mathtext.subscript(k)} = {mathtext.array(s)}" for k, s in enumerate(self.seeds)]
        parts = ['<div class="gv-jview">',
                 f'<p>The Jacobian {mathtext.math("J = ∂y/∂x")} is {self.matrix.shape[0]}×{self.matrix.shape[1]}. '
                 "Reverse mode never builds it: each row below is one backward pass whose seed "
                 "is a one-hot vector (row k: y.backward(e_k) leaves row k in x.grad).</p>",
                 heatmap(self.matrix, [f"{r} ← {s}" for r, s in zip(rows, seed_rows)], cols)]
        if self.products:
            parts.append('<table class="gv-vjp-table"><tr><th>v</th><th>y.backward(v) gives x.grad</th>'
                         f'<th>{mathtext.math("vᵀ J")}</th><th></th></tr>')
            for v, got, want in self.products:
                same = np.allclose(got, want, rtol=1e-5, atol=1e-6)
                parts.append(f"<tr><td>{mathtext.array(v)}</td><td>{mathtext.array(got)}</td>"
                             f"<td>{mathtext.array(want)}</td><td>{'equal' if same else 'DIFFERENT'}</td></tr>")
            parts.append("</table><p>backward(v) computes vᵀJ: a weighted sum of J's rows, "
                         "so backward([1, 1]) is the sum of backward([1, 0]) and backward([0, 1]).</p>")
        parts.append("</div>")
        return "".join(parts)

    def _repr_html_(self) -> str:
        return f'<div class="gv-root"><style>{stylesheet()}</style>{self.html()}</div>'


def jacobian_view(f: Callable, x, vs: Sequence | None = None, limit: int = 256) -> JacobianView:
    """The full Jacobian of a small function `f` at `x`, row by row from one-hot backward passes,
    plus `backward(v)` next to vᵀJ for each v in `vs` (default: each one-hot seed and all ones).
    `x` is a gradviz tensor or a real torch tensor (f then runs in torch, and torch's backward
    gives the rows); anything else becomes a gradviz tensor.

    Example (the tutorials' mm): `jacobian_view(lambda x: torch.mm(x, M), x, vs=[[[1, 0]], [[0, 1]], [[1, 1]]])`.
    """
    if isinstance(x, Tensor) or is_torch(x):
        leaf = x.detach().clone().requires_grad_(True)
    else:
        leaf = make_tensor(x, requires_grad=True)
    y = f(leaf)
    if type(y) is not type(leaf) or y.grad_fn is None:
        raise ValueError("jacobian_view: f(x) must return a Tensor computed from x")
    m, n = y.numel(), leaf.numel()
    if m > limit or n > limit:
        raise ValueError(f"jacobian_view draws small Jacobians: f(x) has {m} elements and x has {n}; "
                         f"at most {limit} each (pass limit= to raise it)")
    seeds = []
    for k in range(m):
        seed = np.zeros(m)
        seed[k] = 1
        seeds.append(seed.reshape(tuple(y.shape)))
    view = JacobianView(np.stack([_backward(y, leaf, seed).ravel() for seed in seeds]), tuple(y.shape),
                        tuple(leaf.shape), seeds)
    if vs is None:
        vs = [*seeds, np.ones(tuple(y.shape))]
    for v in vs:
        v = np.asarray(_numpy(v), dtype=np.float64).reshape(tuple(y.shape))
        view.products.append((v, _backward(y, leaf, v), view.vjp(v)))
    return view


def _numpy(value):
    return value.detach().cpu().numpy() if isinstance(value, Tensor) or is_torch(value) else value


def _backward(y, leaf, v: np.ndarray) -> np.ndarray:
    """x.grad after a real `y.backward(v)`, as the tutorial does it: vᵀJ. inputs= keeps it to this
    private leaf, so tensors f closes over (M in x @ M) keep their .grad."""
    leaf.grad = None
    y.backward(y.new_tensor(v), retain_graph=True, inputs=[leaf])
    return np.zeros(tuple(leaf.shape)) if leaf.grad is None else _numpy(leaf.grad).astype(np.float64)
