"""Tensors drawn as tensors: small values as grids of numbers, large ones as heatmaps.

Every cell is coloured on one diverging scale (CSS classes gv-j-4 ... gv-j4: blue
negative, neutral zero, red positive). A step passes the same `scale` to the gradient
it received and to each VJP it sent, so equal colours mean equal sizes across the
step. Tensors with more than two dimensions are shown as their last two dimensions,
the leading ones stacked as row blocks (a (2, 3, 4) tensor as 6 rows of 4).
"""
from __future__ import annotations

import numpy as np

from .mathtext import esc, number

GRID_ROWS = GRID_COLS = 8      # up to 8×8 values print as numbers in a grid
THUMB_CELLS = 16               # larger tensors: a heatmap of at most 16×16 cells


def level(v: float, scale: float) -> int:
    """The colour class of v on a scale whose ends are ±scale: −4 ... 4 (0 only for exact zero)."""
    if scale == 0 or v == 0 or not np.isfinite(v):
        return 0
    return int(np.clip(np.round(4 * v / scale), -4, 4)) or (1 if v > 0 else -1)


def scale_of(*arrays) -> float:
    """The largest finite |value| over the arrays (None entries skipped): one shared scale."""
    best = 0.0
    for a in arrays:
        if a is None:
            continue
        a = np.asarray(a, dtype=np.float64)
        finite = a[np.isfinite(a)]
        if finite.size:
            best = max(best, float(np.abs(finite).max()))
    return best


def as_matrix(values) -> np.ndarray:
    """A tensor's values as the 2-D array a grid draws: () -> 1×1, (n,) -> 1×n, (..., r, c) -> (… r, c)."""
    a = np.asarray(values)
    if a.dtype.kind == "b":
        a = a.astype(np.int64)
    a = a.astype(np.float64)
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        return a.reshape(1, -1)
    return a.reshape(-1, a.shape[-1])


def fits_grid(shape: tuple) -> bool:
    """Whether a tensor of this shape prints as a grid of numbers (else a heatmap)."""
    rows, cols = as_matrix(np.empty(shape)).shape if shape else (1, 1)
    return rows <= GRID_ROWS and cols <= GRID_COLS


def grid(values, scale: float | None = None, highlight_row: int | None = None,
         highlight_col: int | None = None, row_labels=None, col_labels=None, numbers: bool = True) -> str:
    """An HTML table of the values, each cell coloured on the diverging scale.

    `highlight_row`/`highlight_col` outline one row or column (the part of a Jacobian
    that this step's VJP uses)."""
    m = as_matrix(values)
    if scale is None:
        scale = scale_of(m)
    out = ['<table class="gv-grid">']
    if col_labels is not None:
        out.append("<tr><th></th>" + "".join(f"<th>{esc(str(c))}</th>" for c in col_labels) + "</tr>")
    for r, row in enumerate(m):
        head = f"<th>{esc(str(row_labels[r]))}</th>" if row_labels is not None else ""
        cells = []
        for c, v in enumerate(row):
            mark = " gv-hl" if r == highlight_row or c == highlight_col else ""
            text = number(v) if numbers else ""
            cells.append(f'<td class="gv-j{level(v, scale)}{mark}">{text}</td>')
        out.append(f"<tr>{head}{''.join(cells)}</tr>")
    out.append("</table>")
    return "".join(out)


def thumbnail(values, scale: float | None = None, cells: int = THUMB_CELLS) -> str:
    """A heatmap of a large tensor as one small inline SVG: the matrix is cut into at most
    cells×cells blocks, each coloured by the block's mean. One path per colour keeps it small."""
    m = as_matrix(values)
    if scale is None:
        scale = scale_of(m)
    rows = np.array_split(np.arange(m.shape[0]), min(cells, m.shape[0]))
    cols = np.array_split(np.arange(m.shape[1]), min(cells, m.shape[1]))
    paths: dict = {}
    for i, rs in enumerate(rows):
        for j, cs in enumerate(cols):
            block = m[rs[0]:rs[-1] + 1, cs[0]:cs[-1] + 1]
            finite = block[np.isfinite(block)]
            mean = float(finite.mean()) if finite.size else 0.0
            paths.setdefault(level(mean, scale), []).append(f"M{j} {i}h1v1h-1z")
    w, h = len(cols), len(rows)
    body = "".join(f'<path class="gv-j{k}" d="{"".join(d)}"/>' for k, d in sorted(paths.items()))
    px = 8 if max(w, h) <= 8 else 6
    return (f'<svg class="gv-thumb" viewBox="0 0 {w} {h}" width="{w * px}" height="{h * px}" '
            f'preserveAspectRatio="none" role="img" aria-label="heatmap">{body}</svg>')


def shape_text(shape: tuple) -> str:
    """The one shape notation of the views: (3, 4); a scalar is ()."""
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def tensor(values=None, shape: tuple | None = None, stats: tuple | None = None,
           scale: float | None = None) -> str:
    """One tensor for the step panel: a grid of numbers when small, otherwise a heatmap with its
    shape and range (expandable to the grid when the values were recorded), or, with no values,
    its shape and (min, mean, max)."""
    if values is not None:
        values = np.asarray(values)
        shape = tuple(values.shape)
        if fits_grid(shape):
            return f'<span class="gv-tensor">{grid(values, scale)}</span>'
        m = as_matrix(values)
        finite = m[np.isfinite(m)]
        lo, hi = (number(finite.min()), number(finite.max())) if finite.size else ("nan", "nan")
        caption = f"{shape_text(shape)} from {lo} to {hi}"
        return (f'<details class="gv-tensor gv-big"><summary>{thumbnail(m, scale)}'
                f'<span class="gv-shape">{esc(caption)}</span></summary>{grid(m, scale)}</details>')
    if shape is None:
        return '<span class="gv-tensor gv-none">—</span>'
    if stats is not None:
        lo, mean, hi = stats
        text = f"{shape_text(shape)}: min {number(lo)}, mean {number(mean)}, max {number(hi)}"
    else:
        text = f"{shape_text(shape)} (values not recorded)"
    return f'<span class="gv-tensor gv-shape">{esc(text)}</span>'


def equation(terms: list, total, scale: float | None = None) -> str:
    """A running sum drawn as tensors added together: T₁ + T₂ + … = total. Each term and the
    total are value arrays (or None for a term whose values were not recorded)."""
    arrays = [t for t in terms if t is not None] + ([total] if total is not None else [])
    if scale is None:
        scale = scale_of(*arrays)
    parts = []
    for k, t in enumerate(terms):
        if k:
            parts.append('<span class="gv-op">+</span>')
        parts.append(tensor(t, scale=scale))
    parts.append('<span class="gv-op">=</span>')
    parts.append(tensor(total, scale=scale))
    return f'<span class="gv-eq">{"".join(parts)}</span>'
