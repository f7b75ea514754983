"""Jacobians made visible, with one generic mechanism: VJPs on one-hot vectors.

Reverse mode never builds a Jacobian; it computes vᵀJ. Feeding it the one-hot
vectors e₁, e₂, ... returns J's rows one by one, so the same code serves every
op: `local_jacobians` runs a node's own VJP (`node_vjp`, which touches no state)
and `jacobian_view` runs whole backward passes of a small function.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .. import backend
from . import mathtext
from .mathtext import esc

LIMIT = 64          # materialize a Jacobian only when both sides have at most this many elements
TEXT_CELLS = 64     # heatmaps up to this many cells print their values; larger ones are colour only


def local_jacobians(node, limit: int = LIMIT) -> list:
    """J of a grad_fn with respect to each of its inputs: one (m, nᵢ) array per next_functions
    slot, or None where nothing flows, the graph was freed or a side exceeds `limit` elements.

    Row k is the node's VJP applied to the one-hot vector e_k over its (flattened) outputs.
    """
    from ..autograd.engine import node_vjp
    from ..autograd.graph import AccumulateGrad
    n_slots = len(node.next_functions)
    if isinstance(node, AccumulateGrad) or node.freed or node.out_data is None or node.op.vjp is None:
        return [None] * n_slots
    multi = node.op.n_outputs > 1
    outs = tuple(node.out_data) if multi else (node.out_data,)
    if any(o is None or getattr(o, "dtype", None) is None or o.dtype.kind not in "fc" for o in outs):
        return [None] * n_slots
    sizes = [int(np.prod(o.shape)) for o in outs]
    m = sum(sizes)
    if m == 0 or m > limit:
        return [None] * n_slots
    in_sizes = [int(np.prod(node.input_shape(i))) if nxt is not None else 0
                for i, (nxt, _) in enumerate(node.next_functions)]
    wanted = [nxt is not None and 0 < n <= limit for (nxt, _), n in zip(node.next_functions, in_sizes)]
    if not any(wanted):
        return [None] * n_slots
    rows: list = [[] for _ in range(n_slots)]
    for k in range(m):
        g = _one_hot(outs, sizes, k)
        sent, _ = node_vjp(node, g if multi else g[0])
        for i in range(n_slots):
            if wanted[i]:
                gi = sent[i]
                # + 0.0: a one-hot row times a negative value gives −0.0, which would print as "-0.0"
                rows[i].append(np.zeros(in_sizes[i]) if gi is None
                               else backend.to_numpy(gi).astype(np.float64).ravel() + 0.0)
    return [np.stack(r) if wanted[i] else None for i, r in enumerate(rows)]


def _one_hot(outs: tuple, sizes: list, k: int) -> tuple:
    """e_k over the concatenation of every output, in each output's own shape and array type."""
    parts = []
    offset = 0
    for out, size in zip(outs, sizes):
        flat = backend.namespace_of(out).zeros(size, dtype=out.dtype)
        if offset <= k < offset + size:
            flat[k - offset] = 1
        parts.append(flat.reshape(out.shape))
        offset += size
    return tuple(parts)


# -- drawing a matrix ----------------------------------------------------------------
def _level(v: float, scale: float) -> int:
    if scale == 0 or v == 0:
        return 0
    return int(np.clip(np.round(4 * v / scale), -4, 4)) or (1 if v > 0 else -1)


def heatmap(matrix: np.ndarray, row_labels: Sequence[str] | None = None,
            col_labels: Sequence[str] | None = None, caption: str = "") -> str:
    """A matrix as an HTML table whose cells are coloured by sign and size (CSS classes
    gv-jN in player.css: blue negative, red positive); small ones print their values."""
    J = np.asarray(matrix, dtype=np.float64)
    if J.ndim == 1:
        J = J[None, :]
    scale = float(np.abs(J).max()) if J.size else 0.0
    text = J.size <= TEXT_CELLS
    out = [f'<div class="gv-jcap">{caption}</div>' if caption else "", '<table class="gv-jac">']
    if col_labels is not None:
        out.append("<tr><th></th>" + "".join(f"<th>{esc(c)}</th>" for c in col_labels) + "</tr>")
    for r, row in enumerate(J):
        head = f"<th>{esc(row_labels[r])}</th>" if row_labels is not None else ""
        cells = "".join(f'<td class="gv-j{_level(v, scale)}">{mathtext.number(v) if text else ""}</td>'
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
        from .html import stylesheet
        return f'<div class="gv-root"><style>{stylesheet()}</style>{self.html()}</div>'


def jacobian_view(f: Callable, x, vs: Sequence | None = None, limit: int = 256) -> JacobianView:
    """The full Jacobian of a small function `f` at `x`, row by row from one-hot backward passes,
    plus `backward(v)` next to vᵀJ for each v in `vs` (default: each one-hot seed and all ones).

    Example (the tutorials' mm): `jacobian_view(lambda x: torch.mm(x, M), x, vs=[[[1, 0]], [[0, 1]], [[1, 1]]])`.
    """
    from ..creation import tensor as make_tensor
    from ..autograd import grad
    from ..tensor import Tensor
    if isinstance(x, Tensor):
        leaf = x.detach().clone().requires_grad_(True)
    else:
        leaf = make_tensor(x, requires_grad=True)
    y = f(leaf)
    if not isinstance(y, Tensor) or y.grad_fn is None:
        raise ValueError("jacobian_view: f(x) must return a Tensor computed from x")
    m, n = y.numel(), leaf.numel()
    if m > limit or n > limit:
        raise ValueError(f"jacobian_view draws small Jacobians: f(x) has {m} elements and x has {n}; "
                         f"at most {limit} each (pass limit= to raise it)")
    rows, seeds = [], []
    for k in range(m):
        seed = np.zeros(m)
        seed[k] = 1
        seed = seed.reshape(tuple(y.shape))
        seeds.append(seed)
        (gk,) = grad(y, leaf, grad_outputs=Tensor(seed, dtype=y.dtype), retain_graph=True, allow_unused=True)
        rows.append(np.zeros(n) if gk is None else gk.numpy().astype(np.float64).ravel())
    view = JacobianView(np.stack(rows), tuple(y.shape), tuple(leaf.shape), seeds)
    if vs is None:
        vs = [*seeds, np.ones(tuple(y.shape))]
    for v in vs:
        v = np.asarray(v.numpy() if isinstance(v, Tensor) else v, dtype=np.float64).reshape(tuple(y.shape))
        # a real backward(v), accumulating into .grad, as the tutorial does it
        leaf.grad = None
        y.backward(Tensor(v, dtype=y.dtype), retain_graph=True)
        got = np.zeros(leaf.shape) if leaf.grad is None else leaf.grad.numpy().astype(np.float64)
        view.products.append((v, got, view.vjp(v)))
    return view
