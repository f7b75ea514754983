"""Reparametrized weights: weight normalization, w = g ⊙ v / ‖v‖ with the norm over every dim
but one (torch's _weight_norm_interface, the node behind nn.utils.parametrizations.weight_norm)."""
from __future__ import annotations

from .op import Op


def _others(v, dim):
    return tuple(i for i in range(v.ndim) if i != dim)


def _norm(xp, v, dim):
    """‖v‖ over every dim but `dim`, kept as size-1 dims (torch's norm_except_dim)."""
    return xp.sqrt(xp.sum(v * v, axis=_others(v, dim), keepdims=True))


def _forward(xp, v, g, dim):
    return v * (g / _norm(xp, v, dim))


def _vjp_v(xp, gw, w, v, g, dim):
    n = _norm(xp, v, dim)
    along = xp.sum(gw * v, axis=_others(v, dim), keepdims=True)   # ⟨ḡ, v⟩ per slice
    return (g / n) * (gw - v * (along / (n * n)))


def _vjp_g(xp, gw, w, v, g, dim):
    return xp.sum(gw * v, axis=_others(v, dim), keepdims=True) / _norm(xp, v, dim)


WEIGHT_NORM = Op("_weight_norm_interface", "WeightNormInterfaceBackward0", r"$c = $1 \odot \frac{$0}{\lVert $0 \rVert}",
                 _forward, vjp=(_vjp_v, _vjp_g),
                 args=("v", "g"), params=("dim",), saves=("v", "g"), symbols=("v", "g"),
                 vjp_latex=(r"\frac{$1}{\lVert $0 \rVert} \odot \left(\bar{g} - $0 \frac{\langle \bar{g}, $0 \rangle}"
                            r"{\lVert $0 \rVert^2}\right)",
                            r"\frac{\langle \bar{g}, $0 \rangle}{\lVert $0 \rVert}"), out_symbol="w")
