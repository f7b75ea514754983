"""unique, unique_consecutive and histogram: PyTorch records a node for them when the input requires
grad (Unique2Backward0, UniqueDimBackward0, UniqueConsecutiveBackward0, histogram's NotImplemented),
but none has a derivative, so backward through one fails as it does in PyTorch. The values are
found by the function (unique also returns the inverse and the counts, which are not
differentiable); the record carries them."""
from __future__ import annotations

from .op import Op


def _not_implemented(name: str):
    def vjp(xp, g, c, *args):
        raise NotImplementedError(f"the derivative for '{name}' is not implemented.")
    return vjp


def _found(xp, a, values):
    return values


UNIQUE = Op("unique", "Unique2Backward0", r"$c = \operatorname{unique}($0)",
            _found, vjp=_not_implemented("_unique2"), params=("values",), vjp_latex=(r"\text{not implemented}",))
UNIQUE_DIM = Op("unique", "UniqueDimBackward0", r"$c = \operatorname{unique}_{\text{dim}}($0)",
                _found, vjp=_not_implemented("unique_dim"), params=("values",), vjp_latex=(r"\text{not implemented}",))
UNIQUE_CONSECUTIVE = Op("unique_consecutive", "UniqueConsecutiveBackward0",
                        r"$c = \operatorname{unique}_{\text{consecutive}}($0)",
                        _found,
                        vjp=_not_implemented("unique_consecutive"),
                        params=("values",),
                        vjp_latex=(r"\text{not implemented}",))


def _histogram_failed(xp, g, c, *args):
    raise RuntimeError("derivative for aten::histogram is not implemented")


# one node for both outputs, the counts and the bin edges, as torch's
HISTOGRAM = Op("histogram", "NotImplemented", r"($c,\, $c1) = \operatorname{histogram}($0)",
               lambda xp, a, hist, edges: (hist, edges), vjp=(_histogram_failed,), params=("hist", "bin_edges"),
               n_outputs=2, out_symbol=("h", "e"), vjp_latex=(r"\text{not implemented}",))
