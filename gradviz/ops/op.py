"""The Op record: one op's forward, VJP and display strings, side by side.

Besides the math, a record says how views show it: the input symbols (one per input
slot, in the order of `args`), the output symbol, which inputs broadcast, the
formulas, written once in LaTeX (the Unicode of diagram labels is derived from it,
see ops.display_math), and which parameters are worth showing as constants. Every
display field has a default, so a new op works with only its math;
`tests/ops/test_registry.py` says what is still missing.
"""
from __future__ import annotations

import copy
import functools
import re
from typing import Callable

from .display_math import MARKER, template_text

_LETTERS = "abdefghijk"   # c is the output's letter


class Exposure:
    """How an op is exposed, declared on its record: the public function's names (gradviz.NAME,
    aliases such as NumPy's arcsinh included), which of them Tensor has as methods (`method`: all,
    none, or those named) and which take torch's `out=` (likewise). `make` says how the function is
    made from the record ("unary": f(input); "unary_float": an integer input is cast to the default
    float dtype first); None when a hand-written function (marked @public in gradviz.functions)
    checks its arguments instead."""

    __slots__ = ("names", "methods", "outs", "make")

    def __init__(self, *names: str, method: bool | tuple = True, out: bool | tuple = False,
                 make: str | None = None):
        self.names = names
        self.methods = names if method is True else tuple(method or ())
        self.outs = names if out is True else tuple(out or ())
        self.make = make

    def __repr__(self):
        return f"Exposure{self.names}"


class Op:
    """One differentiable op, as data.

    forward(xp, *arrays, *params) -> array (or a tuple for multi-output ops)
    vjp(xp, g, out, *inputs, *params) -> one gradient (or None) per input, in the
        *broadcast* shape; the engine sums it down to the input's shape.
    `xp` is an array namespace (NumPy/CuPy) or, with create_graph=True, the Tensor
    namespace, so one rule serves first and higher-order gradients.

    Display fields: `latex` / `vjp_latex` (the formulas, in LaTeX: `$c` the output, `$0`, `$1`
    the inputs, `$name` a parameter), `symbols` (default a, b, d, ... or A, B, ... when the output
    symbol is upper case; a₁, a₂, ... for a list of tensors), `out_symbol` (what `$c` reads in
    the template; default c; for an op of several outputs a tuple, one symbol per output, which
    `$c`, `$c1`, `$c2`, ... read: qr's ("Q", "R")), `broadcasts` (input slots whose gradient the engine may sum to undo
    broadcasting; None: every slot; default none), `shown` (params shown as constants; default
    every param whose value is a number, a bool or a tuple of ints). `formula` and `vjp_formulas`,
    the Unicode of diagram labels, are derived from the LaTeX with the template letters put in;
    passed by hand only where there is no LaTeX (a node that runs user code).
    `expose` says how users reach the op (an Exposure: gradviz.NAME, Tensor.NAME, out=).
    keeps(xp, *arrays, *params) -> (output, kept): the forward that also hands the VJP what it
        computed on the way (GELU's erf, layer norm's centred input and 1/σ), as torch's kernels
        save them; each VJP rule then takes it as `kept=` instead of computing it again. `forward`
        is derived from it. A create_graph backward calls the rules without it: on Tensors they
        compute it again, so the gradient's graph records how it depends on the inputs.
    jvp(op, tangents, out, inputs, params) -> the output's tangent J·t (a tuple for
    multi-output ops), on Tensors, `tangents` holding one Tensor or None per input;
    None means forward mode derives it from the VJP, a kind's name ("pointwise", "linear", ...)
    that it derives it by that kind's rule (see autograd.forward_ad).
    """

    __slots__ = ("name", "torch_name", "_formula", "forward", "vjp", "_vjp_formulas",
                 "arg_names", "param_names", "saves", "saved_inputs", "n_outputs",
                 "symbols", "out_symbol", "out_symbols", "broadcasts", "latex", "vjp_latex", "shown", "jvp", "expose", "keeps")

    def __init__(self, name: str, torch_name: str, latex: str = "", forward: Callable | None = None,
                 vjp: Callable | None = None, vjp_latex: tuple = (),
                 args: tuple = ("self",), params: tuple = (), saves: tuple = (), n_outputs: int = 1,
                 symbols: tuple | None = None, broadcasts: tuple | None = (), shown: tuple | None = None,
                 jvp: Callable | str | None = None, expose: Exposure | None = None,
                 out_symbol: str | tuple | None = None, formula: str | None = None, vjp_formulas: tuple | None = None,
                 keeps: Callable | None = None):
        self.name = name
        if keeps is not None:
            if not saves:
                raise ValueError(f"{name}: what `keeps` hands on is freed with the saved tensors; the op saves none")
            forward = functools.partial(_output_of, keeps)
        self.keeps = keeps
        self.torch_name = torch_name
        self.forward = forward
        self.vjp = vjp
        self._formula = formula               # None: derived from the LaTeX when first read
        self._vjp_formulas = None if vjp_formulas is None else tuple(vjp_formulas)
        self.arg_names = args          # names PyTorch gives the inputs (_saved_self, _saved_other)
        self.param_names = params      # names of the non-tensor arguments (dim, keepdim, ...)
        # what the VJP reads: input names and/or "result", in the order PyTorch saves (and packs)
        # them: its generated nodes save the inputs sorted by name (other before self, mat2 before
        # self), then the outputs once the forward has run
        self.saves = tuple(sorted(k for k in saves if k in args)) + tuple(k for k in saves if k not in args)
        self.saved_inputs = tuple(i for i, name in enumerate(args) if name in saves)   # their slots
        self.n_outputs = n_outputs
        if out_symbol is None:   # a hand-written formula names its output on its left side
            lhs, eq, _ = (formula or "").partition("=")
            lhs = lhs.split("[", 1)[0].strip().rstrip("ᵢⱼₖₚ")   # the tensor, not its element: y of y[p], C of Cᵢ
            out_symbol = lhs if eq and lhs and len(lhs) <= 4 and " " not in lhs else "c"
        self.out_symbols = out_symbol if isinstance(out_symbol, tuple) else ()
        self.out_symbol = self.out_symbols[0] if self.out_symbols else out_symbol
        self.symbols = tuple(symbols) if symbols is not None else None
        self.broadcasts = broadcasts   # the input slots whose gradient the engine sums back (None: all)
        self.latex = latex
        # a gradient that is zero reads "0" in any notation: no record has to spell it out twice
        self.vjp_latex = tuple(vjp_latex) or (("0",) * len(vjp_formulas) if vjp_formulas and
                                              all(f == "0" for f in vjp_formulas) else ())
        self.shown = shown
        self.jvp = jvp          # a rule, or the name of a kind forward AD derives it from ("pointwise", "linear")
        self.expose = expose    # how users reach it (gradviz.functions.declared makes and binds the function)

    # derived on first read, not at import: ~300 records convert in a few milliseconds, paid only by
    # what shows them (labels, the op reference)
    @property
    def formula(self) -> str:
        """The formula in Unicode with the template letters (c = a ⊙ b), derived from `latex`."""
        if self._formula is None:
            self._formula = self._text(self.latex)
        return self._formula

    @property
    def vjp_formulas(self) -> tuple:
        """One VJP formula in Unicode per input (ḡ ⊙ b), derived from `vjp_latex`."""
        if self._vjp_formulas is None:
            self._vjp_formulas = tuple(self._text(f) for f in self.vjp_latex)
        return self._vjp_formulas

    def _text(self, latex: str) -> str:
        if self.arg_names == ("tensors",):    # `$*`, a list of any length: its first two, then dots
            return template_text(latex, self.input_symbols(2) + (r"\dots",), self.out_symbol)
        slots = [int(k) + 1 for k in MARKER.findall(latex) if k.isdigit()]
        return template_text(latex, self.input_symbols(max([len(self.arg_names), 1] + slots)), self.out_symbol,
                             self.out_symbols)

    def input_symbols(self, n: int) -> tuple:
        """The symbols of a node of this op with `n` input slots."""
        if self.symbols is not None and len(self.symbols) >= n:
            return self.symbols[:n]
        if self.arg_names == ("tensors",):
            return tuple(f"a{_subscript(i + 1)}" for i in range(n))
        upper = self.out_symbol[:1].isupper()
        letters = [ch.upper() if upper else ch for ch in _LETTERS]
        if n > len(letters):
            letters += [f"x{_subscript(i)}" for i in range(len(letters), n)]
        return tuple(letters[:n])

    def vjp_formula(self, slot: int) -> str:
        """The VJP formula for input `slot` (ops over a list of tensors share one formula)."""
        if not self.vjp_formulas:
            return "ḡ · J"
        return self.vjp_formulas[min(slot, len(self.vjp_formulas) - 1)]

    @functools.lru_cache(maxsize=None)   # noqa: B019 (records live as long as the program)
    def reduced(self, reduction: str) -> Op:
        """The record as a loss called with reduction="sum" or "none" reads: its LaTeX is written for
        the default "mean", 1/N Σ, and a VJP divided by N; "sum" drops the 1/N, "none" the mean too."""
        if reduction not in ("sum", "none") or "{N" not in self.latex + "".join(self.vjp_latex):
            return self
        op = copy.copy(self)
        op.latex = _MEAN_SUM.sub("", self.latex) if reduction == "none" else self.latex.replace(_MEAN, "")
        op.vjp_latex = tuple(_without_n(v) for v in self.vjp_latex)
        op._formula = op._vjp_formulas = None
        return op

    def __repr__(self):
        return f"Op({self.name!r}, {self.torch_name})"


def _output_of(keeps, *args):
    """The output of a forward that also keeps something for its VJP (a record's `keeps`)."""
    return keeps(*args)[0]


_MEAN = "\\frac{1}{N} "
_MEAN_SUM = re.compile(r"\\frac\{1\}\{N\} \\sum(_\{[^}]*\}|_\w)? ")


def _without_n(latex: str) -> str:
    """A VJP's LaTeX without its division by N: \\frac{A}{N} -> A (in parentheses where A is a
    difference or a sum), {N \\max(...)} -> {\\max(...)}."""
    latex = latex.replace("{N \\max", "{\\max")
    start = latex.find("\\frac{")
    while start >= 0:
        i, depth = start + len("\\frac{"), 1
        while depth:
            depth += {"{": 1, "}": -1}.get(latex[i], 0)
            i += 1
        if latex.startswith("{N}", i):
            body = latex[start + len("\\frac{"):i - 1]
            top = re.sub(r"\([^()]*\)|\{[^{}]*\}", "", body)   # what is outside brackets
            body = f"({body})" if " - " in top or " + " in top else body
            latex = latex[:start] + body + latex[i + len("{N}"):]
        start = latex.find("\\frac{", start + 1)
    return latex


def _subscript(k: int) -> str:
    return "".join("₀₁₂₃₄₅₆₇₈₉"[int(d)] for d in str(k))
