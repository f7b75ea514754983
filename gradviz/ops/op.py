"""The Op record: one op's forward, VJP and display strings, side by side."""
from __future__ import annotations

from typing import Callable


class Op:
    """One differentiable op, as data.

    forward(xp, *arrays, *params) -> array (or a tuple for multi-output ops)
    vjp(xp, g, out, *inputs, *params) -> one gradient (or None) per input, in the
        *broadcast* shape; the engine sums it down to the input's shape.
    `xp` is an array namespace (NumPy/CuPy) or, with create_graph=True, the Tensor
    namespace, so one rule serves first and higher-order gradients.
    """

    __slots__ = ("name", "torch_name", "formula", "forward", "vjp", "vjp_formulas",
                 "arg_names", "param_names", "saves", "n_outputs")

    def __init__(self, name: str, torch_name: str, formula: str, forward: Callable,
                 vjp: Callable | None = None, vjp_formulas: tuple = (),
                 args: tuple = ("self",), params: tuple = (), saves: tuple = (), n_outputs: int = 1):
        self.name = name
        self.torch_name = torch_name
        self.formula = formula
        self.forward = forward
        self.vjp = vjp
        self.vjp_formulas = vjp_formulas
        self.arg_names = args          # names PyTorch gives the inputs (_saved_self, _saved_other)
        self.param_names = params      # names of the non-tensor arguments (dim, keepdim, ...)
        self.saves = saves             # what the VJP reads: input names and/or "result"
        self.n_outputs = n_outputs

    def __repr__(self):
        return f"Op({self.name!r}, {self.torch_name})"
