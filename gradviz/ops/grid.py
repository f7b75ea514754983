"""Spatial transformers: affine_grid (a batch of 2×3 affine maps -> sampling grids) and
grid_sample (an image read at a grid of normalized positions, bilinear or nearest, with zeros,
border or reflection padding), as torch's CPU kernels compute them, gradients included.
grid_sample's index arithmetic runs in NumPy (a GPU array makes a round trip to the host)."""
from __future__ import annotations

import numpy as np

from ..backend import to_numpy
from .op import Op


# -- affine_grid: grid[n, h, w] = θ[n] · (x_w, y_h, 1), linear in θ ------------------------------
def _affine_forward(xp, theta, base):
    n, hw = theta.shape[0], base.shape[0] * base.shape[1]
    grid = xp.matmul(base.reshape(1, hw, 3).astype(theta.dtype, copy=False), xp.swapaxes(theta, 1, 2))
    return grid.reshape((n,) + base.shape[:2] + (2,))


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
def _unnormalize(coord, size, align_corners):
    """[-1, 1] -> pixel positions, and d position / d coordinate."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1), (size - 1) / 2
    return ((coord + 1) * size - 1) / 2, size / 2


def _clip(pos, size):
    """Border padding: positions clamped into [0, size − 1]; the gradient is 0 at and beyond the ends."""
    inside = (pos > 0) & (pos < size - 1)
    return np.clip(pos, 0, size - 1), inside.astype(pos.dtype)


def _reflect(pos, size, align_corners):
    """Reflection padding: positions mirrored at the ends (the pixel edges without align_corners)
    until inside, then clamped; the gradient's sign flips with each mirror."""
    low, high = (0.0, size - 1.0) if align_corners else (-0.5, size - 0.5)
    if high <= low:
        return np.zeros_like(pos), np.zeros_like(pos)
    span = high - low
    shifted = pos - low
    sign = np.where(shifted < 0, -1.0, 1.0)
    shifted = np.abs(shifted)
    extra = np.fmod(shifted, span)
    flips = np.floor(shifted / span)
    even = flips % 2 == 0
    out = np.where(even, extra + low, span - extra + low)
    sign = np.where(even, sign, -sign)
    clipped, inside = _clip(out, size)
    return clipped, (sign * inside).astype(pos.dtype)


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
    """Per output point: the pixels it reads ((row, col) integer arrays), each one's weight, and
    for bilinear the weights' derivatives d w / d ix, d w / d iy."""
    (ix, iy), scales = _source(grid, size_hw, padding_mode, align_corners)
    if mode == "nearest":   # rint: halves go to the even pixel, as torch's nearbyint
        return [(np.rint(iy).astype(np.int64), np.rint(ix).astype(np.int64), np.ones_like(ix), 0 * ix, 0 * ix)], \
            scales
    x0, y0 = np.floor(ix), np.floor(iy)
    fx, fy = ix - x0, iy - y0
    x0, y0 = x0.astype(np.int64), y0.astype(np.int64)
    return [(y0, x0, (1 - fx) * (1 - fy), -(1 - fy), -(1 - fx)),
            (y0, x0 + 1, fx * (1 - fy), 1 - fy, -fx),
            (y0 + 1, x0, (1 - fx) * fy, -fy, 1 - fx),
            (y0 + 1, x0 + 1, fx * fy, fy, fx)], scales


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
    out = np.zeros((n, c, grid.shape[1] * grid.shape[2]), dtype=a.dtype)
    corners, _ = _corners(grid, (h, w), mode, padding_mode, align_corners)
    for rows, cols, weight, _, _ in corners:
        flat, inside = _flat(rows, cols, h, w)
        out += _read(a, flat, inside) * weight.reshape(n, 1, -1).astype(a.dtype, copy=False)
    return xp.asarray(out.reshape(n, c, grid.shape[1], grid.shape[2]))


def _grid_sample_vjp(xp, g, out, a, grid, mode, padding_mode, align_corners):
    if not xp.arrays:
        raise NotImplementedError("the derivative of grid_sampler_2d's gradient (create_graph=True) is not "
                                  "implemented here")
    g, a, grid = to_numpy(g), to_numpy(a), to_numpy(grid)
    n, c, h, w = a.shape
    gflat = g.reshape(n, c, -1)
    ga = np.zeros(n * c * h * w, dtype=a.dtype)
    gx = np.zeros(gflat.shape[::2], dtype=a.dtype)   # (N, P)
    gy = np.zeros_like(gx)
    corners, (sx, sy) = _corners(grid, (h, w), mode, padding_mode, align_corners)
    planes = (np.arange(n * c) * h * w).reshape(n, c, 1)
    for rows, cols, weight, dx, dy in corners:
        flat, inside = _flat(rows, cols, h, w)
        contrib = gflat * np.where(inside, weight.reshape(n, 1, -1), 0)
        ga += np.bincount((planes + flat).reshape(-1), contrib.reshape(-1), ga.size).astype(a.dtype, copy=False)
        if mode != "nearest":
            seen = (_read(a, flat, inside) * gflat).sum(1)   # Σ_c ḡ · value at this corner
            gx += seen * dx.reshape(n, -1)
            gy += seen * dy.reshape(n, -1)
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
