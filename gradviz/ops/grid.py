"""Spatial transformers: affine_grid (a batch of 2×3 affine maps -> sampling grids) and
grid_sample (an image read at a grid of normalized positions, bilinear or nearest, with zeros,
border or reflection padding), as torch's CPU kernels compute them, gradients included.
grid_sample's index arithmetic runs in NumPy (a GPU array makes a round trip to the host)."""
from __future__ import annotations

import numpy as np

from ..backend import to_numpy
from ..libm import fma
from .op import Op


# -- affine_grid: grid[n, h, w] = θ[n] · (x_w, y_h, 1), linear in θ ------------------------------
def _affine_forward(xp, theta, base):
    # torch's bmm of the base grid with θᵀ adds its three products in order, (x·θ₀ + y·θ₁) + θ₂,
    # which a BLAS product of inner size 3 does not promise
    b, t = xp.asarray(base)[None, ..., None], theta[:, None, None]    # (1, H, W, 3, 1), (N, 1, 1, 2, 3)
    return (b[..., 0, :] * t[..., 0] + b[..., 1, :] * t[..., 1]) + t[..., 2]


def _affine_vjp(xp, g, c, theta, base):
    # torch's affine_grid_generator_backward: (baseᵀ · ḡ)ᵀ, so the gradient's own graph is a transpose
    hw = base.shape[0] * base.shape[1]
    flat = base.reshape(hw, 3).astype(np.float64 if not xp.arrays else g.dtype, copy=False)
    b = xp.swapaxes(flat, 0, 1) if xp.arrays else xp.constant(np.ascontiguousarray(flat.T)).to(g.dtype)
    return xp.swapaxes(xp.matmul(b, g.reshape(g.shape[0], hw, 2)), 1, 2)


# u[w], v[h]: the normalized centres of column w and row h
AFFINE_GRID = Op("affine_grid_generator", "AffineGridGeneratorBackward0",
                 r"$c[n, h, w] = $0[n] \cdot (u[w],\ v[h],\ 1)",
                 _affine_forward, vjp=(_affine_vjp,),
                 args=("theta",), params=("base",), saves=(), symbols=("θ",), shown=(),
                 vjp_latex=(r"\textstyle\sum_{h, w} \bar{g}[n, h, w] \otimes (u[w],\ v[h],\ 1)",), out_symbol="G")


# -- grid_sample ---------------------------------------------------------------------------------
# Positions and weights are computed in the input's dtype by the steps of torch's CPU kernel
# (GridSamplerKernel.cpp), so that they round as its do: a float32 spatial transformer's gradient
# is otherwise a few hundred units in the last place away after one step.
def _unnormalize(coord, size, align_corners):
    """[-1, 1] -> pixel positions, and d position / d coordinate: (x + 1)·((size − 1)/2), or
    (x + 1)·(size/2) − ½ between pixel edges."""
    t = coord.dtype.type
    if align_corners:
        scale = t(size - 1) / t(2)
        return (coord + t(1)) * scale, scale
    scale = t(size) / t(2)
    return fma(coord + t(1), scale, t(-0.5), coord.dtype), scale


def _clip(pos, size):
    """Border padding: positions clamped into [0, size − 1]; the gradient is 0 at and beyond the ends."""
    inside = (pos > 0) & (pos < size - 1)
    return np.clip(pos, 0, size - 1), inside.astype(pos.dtype)


def _reflect(pos, size, align_corners):
    """Reflection padding: positions folded into [low, low + span] (the centres of the end pixels with
    align_corners, else their outer edges) by whole double spans, then mirrored once more if past the
    middle, then clamped; the gradient's sign flips with each mirror."""
    t = pos.dtype.type
    low, twice_span = (t(0), t(size - 1) * t(2)) if align_corners else (t(-0.5), t(size) * t(2))
    if size <= 1 and align_corners:
        return np.zeros_like(pos), np.zeros_like(pos)
    shifted = pos - low
    extra = np.abs(shifted) - np.trunc(np.abs(shifted) / twice_span) * twice_span
    reflected = twice_span - extra
    flip = extra > reflected
    clipped, inside = _clip(np.where(flip, reflected, extra) + low, size)
    return clipped, np.where(flip ^ (shifted < 0), t(-1), t(1)) * inside


def _source(grid, size_hw, padding_mode, align_corners):
    """(ix, iy) pixel positions of every output point, and d ix / d x, d iy / d y."""
    positions, scales = [], []
    for coord, size in ((grid[..., 0], size_hw[1]), (grid[..., 1], size_hw[0])):
        pos, scale = _unnormalize(coord, size, align_corners)
        if padding_mode == "border":
            pos, mult = _clip(pos, size)
        elif padding_mode == "reflection":
            pos, mult = _reflect(pos, size, align_corners)
        else:
            mult = np.ones_like(pos)
        positions.append(pos)
        scales.append(mult * scale)
    return positions, scales


def _corners(grid, size_hw, mode, padding_mode, align_corners):
    """Per output point: the pixels it reads ((row, col) integer arrays) with their weights (nw, ne,
    sw, se for bilinear), the distances (w, e, n, s) to the west, east, north and south pixels
    (bilinear; None for nearest), and d ix / d x, d iy / d y."""
    (ix, iy), scales = _source(grid, size_hw, padding_mode, align_corners)
    if mode == "nearest":   # rint: halves go to the even pixel, as torch's nearbyint
        return [(np.rint(iy).astype(np.int64), np.rint(ix).astype(np.int64), np.ones_like(ix))], None, scales
    x0, y0 = np.floor(ix), np.floor(iy)
    w, n = ix - x0, iy - y0
    e, s = 1 - w, 1 - n
    x0, y0 = x0.astype(np.int64), y0.astype(np.int64)
    return [(y0, x0, s * e), (y0, x0 + 1, s * w), (y0 + 1, x0, n * e), (y0 + 1, x0 + 1, n * w)], \
        (w, e, n, s), scales


def _flat(rows, cols, h, w):
    """Flat pixel indices, and where they fall inside the image (outside reads 0, takes no gradient)."""
    inside = (rows >= 0) & (rows < h) & (cols >= 0) & (cols < w)
    return np.where(inside, rows * w + cols, 0).reshape(rows.shape[0], 1, -1), inside.reshape(rows.shape[0], 1, -1)


def _read(a, flat, inside):
    """a[n, c, pixel] for every output point: (N, C, P), 0 outside."""
    n, c = a.shape[:2]
    vals = np.take_along_axis(a.reshape(n, c, -1), np.broadcast_to(flat, (n, c, flat.shape[-1])), 2)
    return np.where(inside, vals, 0)


def _grid_sample_forward(xp, a, grid, mode, padding_mode, align_corners):
    a, grid = to_numpy(a), to_numpy(grid)
    n, c, h, w = a.shape
    corners, _, _ = _corners(grid, (h, w), mode, padding_mode, align_corners)
    for k, (rows, cols, weight) in enumerate(corners):   # nw·v + ne·v + sw·v + se·v, each sum fused
        flat, inside = _flat(rows, cols, h, w)
        term = (_read(a, flat, inside), weight.reshape(n, 1, -1).astype(a.dtype, copy=False))
        out = term[0] * term[1] if k == 0 else fma(*term, out, a.dtype)
    return xp.asarray(out.astype(a.dtype, copy=False).reshape(n, c, grid.shape[1], grid.shape[2]))


def _channel_sum(t, g):
    """Σ_c t[:, c]·ḡ[:, c] for every point, added channel after channel as fused product-sums."""
    total = t[:, 0] * g[:, 0]
    for k in range(1, t.shape[1]):
        total = fma(t[:, k], g[:, k], total, t.dtype)
    return total


def _grid_sample_vjp(xp, g, out, a, grid, mode, padding_mode, align_corners):
    if not xp.arrays:
        raise NotImplementedError("the derivative of grid_sampler_2d's gradient (create_graph=True) is not "
                                  "implemented here")
    g, a, grid = to_numpy(g), to_numpy(a), to_numpy(grid)
    n, c, h, w = a.shape
    gflat = g.reshape(n, c, -1)
    ga = np.zeros(n * c * h * w, dtype=a.dtype)
    corners, sides, (sx, sy) = _corners(grid, (h, w), mode, padding_mode, align_corners)
    planes = (np.arange(n * c) * h * w).reshape(n, c, 1)
    values = []
    for rows, cols, weight in corners:
        flat, inside = _flat(rows, cols, h, w)
        contrib = gflat * np.where(inside, weight.reshape(n, 1, -1), 0)
        ga += np.bincount((planes + flat).reshape(-1), contrib.reshape(-1), ga.size).astype(a.dtype, copy=False)
        values.append(_read(a, flat, inside))
    if sides is None:   # nearest: the positions are rounded, so the grid has no gradient
        ggrid = np.zeros_like(grid)
    else:
        # torch's steps: per channel t = (se − sw)·n + (ne − nw)·s (one fused product-sum), and
        # g_x = t·ḡ + g_x over the channels one after another (fused again), times d ix / d x at the end
        (w_, e, n_, s), (nw, ne, sw, se) = ((v.reshape(n, 1, -1) for v in sides), values)
        gx = _channel_sum(fma(se - sw, n_, (ne - nw) * s, a.dtype), gflat)
        gy = _channel_sum(fma(se - ne, w_, (sw - nw) * e, a.dtype), gflat)
        ggrid = np.stack([gx * sx.reshape(n, -1), gy * sy.reshape(n, -1)], -1).reshape(grid.shape)
    return xp.asarray(ga.reshape(a.shape)), xp.asarray(ggrid.astype(grid.dtype, copy=False))


GRID_SAMPLE = Op("grid_sampler_2d", "GridSampler2DBackward0",
                 r"$c[n, c, p] = \textstyle\sum_k w_k($1[n, p])\, $0[n, c, \pi_k($1[n, p])]", _grid_sample_forward,
                 vjp=_grid_sample_vjp,
                 args=("input", "grid"), params=("interpolation_mode", "padding_mode", "align_corners"),
                 saves=("input", "grid"), symbols=("x", "G"),
                 vjp_latex=(r"\textstyle\sum_{p, k \,:\, \pi_k(G[n, p]) = j} \bar{g}[n, c, p]\, w_k(G[n, p]) "
                            r"\text{ at } [n, c, j]",
                            r"\textstyle\sum_{c, k} \bar{g}[n, c, p]\, x[n, c, \pi_k]\, "
                            r"\frac{\partial w_k}{\partial G[n, p]}"), out_symbol="y")
