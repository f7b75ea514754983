"""Tensors drawn as tensors: small values as grids of numbers, large ones as heatmaps.

Every cell is coloured on one diverging scale (CSS classes gv-j-4 ... gv-j4: blue
negative, neutral zero, red positive). A step passes the same `scale` to the gradient
it received and to each VJP it sent, so equal colours mean equal sizes across the
step. Tensors with more than two dimensions are shown as their last two dimensions,
the leading ones stacked as row blocks (a (2, 3, 4) tensor as 6 rows of 4).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..previews import as_matrix, block_means
from ..formatting import number, shape
from .mathtext import esc

GRID_ROWS = GRID_COLS = 8      # up to 8×8 values print as numbers in a grid


def level(v: float, scale: float) -> int:
    """The colour class of v on a scale whose ends are ±scale: −4 ... 4 (0 only for exact zero)."""
    return int(levels(np.asarray(v), scale))


def levels(a: np.ndarray, scale: float) -> np.ndarray:
    """`level` of every element of `a` at once (an int array of its shape): a panel colours
    thousands of heatmap cells, and NumPy's clip and round cost microseconds a call on one number."""
    if scale == 0:
        return np.zeros(a.shape, dtype=np.int64)
    with np.errstate(all="ignore"):
        k = np.clip(np.round(4 * a / scale), -4, 4)
    k = np.where(k == 0, np.sign(a), k)   # a nonzero value is never drawn as zero
    return np.where(np.isfinite(a) & (a != 0), k, 0).astype(np.int64)


def scale_of(*previews) -> float:
    """The largest finite |value| over Previews or arrays (None skipped): one shared scale."""
    best = 0.0
    for p in previews:
        if p is None:
            continue
        if hasattr(p, "stats"):
            if p.values is None:
                if p.stats is not None and all(np.isfinite(p.stats)):
                    best = max(best, abs(p.stats[0]), abs(p.stats[2]))
                continue
            p = p.values
        a = np.asarray(p)
        if a.dtype.kind not in "fiub" or not a.size:
            continue
        a = a.astype(np.float64)
        finite = a[np.isfinite(a)]
        if finite.size:
            best = max(best, float(np.abs(finite).max()))
    return best


def fits_grid(dims: tuple) -> bool:
    """Whether a tensor of this shape prints as a grid of numbers (else a heatmap)."""
    rows, cols = as_matrix(np.empty(tuple(dims))).shape
    return rows <= GRID_ROWS and cols <= GRID_COLS


def grid(values, scale: float | None = None, highlight_rows=(), row_labels=None, col_labels=None,
         numbers: bool = True) -> str:
    """An HTML table of the values, each cell coloured on the diverging scale; the rows in
    `highlight_rows` are outlined (the rows of a Jacobian that this step's VJP weighs)."""
    a = np.asarray(values)
    exact = as_matrix(a.astype(np.int64) if a.dtype.kind == "b" else a)
    m = exact.astype(np.float64)
    if scale is None:
        scale = scale_of(m)
    texts = [[number(v) if numbers else "" for v in row] for row in exact]   # integers print as 2, not 2.0
    # five columns and more set smaller (10 px), so an 8-wide grid still fits the panel at 1280 px; seven
    # and more write a long number shorter (-0.0009205 as -9.205e-4), the same four digits in nine characters
    if m.shape[1] >= 7:
        texts = [[_shorter(t) for t in row] for row in texts]
    out = [f'<table class="gv-grid{" gv-wide" if m.shape[1] >= 5 else ""}">']
    if col_labels is not None:
        out.append("<tr><th></th>" + "".join(f"<th>{esc(str(c))}</th>" for c in col_labels) + "</tr>")
    colours = levels(m, scale).tolist()
    for r in range(m.shape[0]):
        head = f"<th>{esc(str(row_labels[r]))}</th>" if row_labels is not None else ""
        mark = ' class="gv-hl"' if r in highlight_rows else ""
        cells = "".join(f'<td class="gv-j{k}">{t}</td>' for k, t in zip(colours[r], texts[r]))
        out.append(f"<tr{mark}>{head}{cells}</tr>")
    out.append("</table>")
    return "".join(out)


def _shorter(text: str) -> str:
    """A long number in scientific notation with a bare exponent where that is shorter (-0.0009205 as
    -9.205e-4, 3.159e-05 as 3.159e-5, 0.0002484 as 2.484e-4): the same significant digits, at most nine
    characters."""
    if len(text) < 9 or not any(c in text for c in ".e"):
        return text   # an integer keeps every digit
    try:
        value = float(text)
    except ValueError:
        return text
    mantissa, _, exponent = f"{value:.3e}".partition("e")
    short = f"{mantissa}e{int(exponent)}"
    return short if len(short) < len(text) and float(short) == float(f"{value:.4g}") else text


def thumbnail(blocks: np.ndarray, scale: float) -> str:
    """A heatmap of block means as one small inline SVG, one path per colour."""
    blocks = np.asarray(blocks)
    return _thumbnail(blocks.shape, blocks.dtype.str, blocks.tobytes(), scale)


@lru_cache(maxsize=1024)   # a gradient is drawn in the panel that sends it and in the one that receives it
def _thumbnail(shape: tuple, dtype: str, data: bytes, scale: float) -> str:
    blocks = np.frombuffer(data, dtype=dtype).reshape(shape)
    h, w = blocks.shape
    colours = levels(blocks, scale).ravel()
    cells = _cells(h, w)
    # the cells grouped by colour, in order within each (one stable sort, not a scan per colour)
    order = np.argsort(colours, kind="stable").tolist()
    kinds, counts = np.unique(colours, return_counts=True)
    parts, start = [], 0
    for k, n in zip(kinds.tolist(), counts.tolist()):
        parts.append(f'<path class="gv-j{k}" d="{"".join([cells[c] for c in order[start:start + n]])}"/>')
        start += n
    body = "".join(parts)
    px = 8 if max(w, h) <= 8 else 6
    return (f'<svg class="gv-thumb" viewBox="0 0 {w} {h}" width="{w * px}" height="{h * px}" '
            f'preserveAspectRatio="none" role="img" aria-label="heatmap">{body}</svg>')


@lru_cache(maxsize=64)
def _cells(h: int, w: int) -> tuple:
    """The path of each cell of an h × w heatmap, row by row."""
    return tuple(f"M{j} {i}h1v1h-1z" for i in range(h) for j in range(w))


def tensor(p, scale: float | None = None) -> str:
    """One tensor (a Preview, or an array) for the step panel: a grid of numbers up to 8×8, else a
    heatmap with its shape and range (expandable to every number when they were recorded)."""
    if p is None:
        return '<span class="gv-tensor gv-none">—</span>'
    if not hasattr(p, "stats"):
        a = np.asarray(p)
        values, dims, stats, thumb = a, tuple(a.shape), None, None
    else:
        values, dims, stats, thumb = p.values, tuple(p.shape), p.stats, p.thumb
    if values is not None and (np.asarray(values).dtype.kind not in "fiub" or not np.asarray(values).size):
        return f'<span class="gv-tensor gv-shape">{esc(shape(dims))}</span>'   # no numbers to draw
    if scale is None:
        scale = scale_of(p)
    if values is not None and fits_grid(dims):
        return f'<span class="gv-tensor">{grid(values, scale)}</span>'
    if values is not None:
        m = as_matrix(np.asarray(values, dtype=np.float64))
        finite = m[np.isfinite(m)]
        stats = (float(finite.min()), float(finite.mean()), float(finite.max())) if finite.size else None
        thumb = block_means(m)
    caption = esc(shape(dims))
    if stats is not None:
        # each number kept on one line: a narrow panel would break 7.7e-08 after its "-"
        lo, hi, mean = (f'<span class="gv-num">{esc(number(v))}</span>' for v in (stats[0], stats[2], stats[1]))
        caption += f" from {lo} to {hi}, mean {mean}"
    if thumb is None:
        return f'<span class="gv-tensor gv-shape">{caption}</span>'
    picture = f'{thumbnail(thumb, scale)}<span class="gv-shape">{caption}</span>'
    if values is None:
        return f'<span class="gv-tensor gv-big">{picture}</span>'
    return f'<details class="gv-tensor gv-big"><summary>{picture}</summary>{grid(values, scale)}</details>'


def result(p, scale: float | None = None) -> str:
    """tensor(p) marked as the result its step is about (class gv-total): the sum written into a .grad,
    which the browser tests find without knowing how the panel is laid out."""
    return tensor(p, scale).replace(' class="gv-tensor', ' class="gv-tensor gv-total', 1)


def equation(terms: list, total, scale: float | None = None) -> str:
    """A sum drawn as tensors added together, its total first: total = T₁ + T₂ + … (Previews or
    arrays). The total is the result the step is about: after three tall terms it would land below
    the panel's fold, where a learner must scroll to find it."""
    if scale is None:
        scale = scale_of(*terms, total)
    parts = [result(total, scale), '<span class="gv-op">=</span>']
    for k, t in enumerate(terms):
        if k:
            parts.append('<span class="gv-op">+</span>')
        parts.append(tensor(t, scale))
    return f'<span class="gv-eq">{"".join(parts)}</span>'
