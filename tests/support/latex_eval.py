"""A small evaluator for the LaTeX the op records write, so that a test can compute a displayed
formula on a node's own arrays and compare it with what the record's forward and VJP return.

It reads the arithmetic subset of the records' math: + − ⊙ · × and juxtaposition (the matrix
product in the linear-algebra records, the elementwise product elsewhere), fractions, roots,
powers and ⊤, |x|, floors, Iverson brackets [a < x ≤ b], cases, the functions the records name
(log, e^x, σ, tanh, clamp, max(a, b), Φ, ...), sums (over everything, over `dim`, or over an index
bound to an index array) and top-level clauses that define a symbol (`, d = $0 - $1`). Anything
else (words in \\text, index notation over windows, a symbol nobody bound) raises Unreadable with
what it met, so a record that cannot be evaluated is named, never passed.
"""
from __future__ import annotations

import functools
import math
import re

import numpy as np

from gradviz.ops.display_math import WHEN, fill, holds, param_latex
from gradviz.render.latex import ABSENT, number, without_absent

_TOKEN = re.compile(r"\\([A-Za-z]+|.)|(\s+)|(.)", re.S)
_SPACE_COMMANDS = {",", ";", ":", " ", "!", "quad", "qquad", "textstyle", "displaystyle", "left", "right",
                   "big", "Big", "bigl", "bigr", "Bigl", "Bigr", "limits", "nolimits"}
_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "varepsilon", "kappa", "lambda", "mu", "theta", "tau",
          "rho", "eta"}
_STOP_CLOSE = {")": "(", "]": "[", "}": "{"}


class Unreadable(Exception):
    """The formula uses something the evaluator does not read; the message says what."""


def _erf(x):
    return np.vectorize(math.erf, otypes=[float])(x)


def _phi_cdf(x):
    return 0.5 * (1 + _erf(np.asarray(x) / math.sqrt(2)))


def _sigmoid(x):
    return 1 / (1 + np.exp(-np.asarray(x)))


def _norm_pdf(x):
    return np.exp(-np.asarray(x) ** 2 / 2) / math.sqrt(2 * math.pi)


def _clamp(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)


def _softplus(x):
    return np.log1p(np.exp(x))


FUNCTIONS = {   # name -> (function of its arguments, how many it takes)
    "log": np.log, "ln": np.log, "exp": np.exp, "sin": np.sin, "cos": np.cos, "tan": np.tan, "sinh": np.sinh,
    "cosh": np.cosh, "tanh": np.tanh, "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan,
    "arcosh": np.arccosh, "arsinh": np.arcsinh, "artanh": np.arctanh, "sign": np.sign, "sgn": np.sign,
    "erf": _erf, "erfc": lambda x: 1 - _erf(x), "clamp": _clamp, "softplus": _softplus, "trunc": np.trunc,
    "round": np.round, "fmax": np.fmax, "fmin": np.fmin, "atan2": np.arctan2, "det": np.linalg.det,
    "sigma": _sigmoid, "Phi": _phi_cdf, "varphi": _norm_pdf, "tr": np.trace,
}
_COMMAND_FUNCTIONS = {"log", "ln", "exp", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos",
                      "arctan", "det", "sigma", "Phi", "varphi"}


def sum_to(g, shape):
    """g summed down to `shape`, as the engine undoes broadcasting."""
    g = np.asarray(g)
    while g.ndim > len(shape):
        g = g.sum(axis=0)
    for axis, n in enumerate(shape):
        if n == 1 and g.shape[axis] != 1:
            g = g.sum(axis=axis, keepdims=True)
    return g


def _matprod(a, b):
    """Juxtaposition in the linear-algebra records: a scalar scales; a column times a row (v wᵀ) is
    the outer product; otherwise the matrix product."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return a * b
    if a.ndim == 1 and b.ndim == 2 and b.shape[0] == 1:
        return np.outer(a, b[0])
    return np.matmul(a, b)


def _transpose(a):
    a = np.asarray(a)
    if a.ndim == 0:
        return a
    if a.ndim == 1:
        return a[None, :]    # a row
    return np.swapaxes(a, -1, -2)


_WORDS_ONLY = re.compile(r"\\text\{[^{}]*\}")


class Evaluator:
    """Evaluates one record's LaTeX in an environment of named values.

    env keys are the symbols as the LaTeX spells them: "\\bar{g}", "x", "\\alpha", "\\mathrm{lo}";
    the record's markers are bound by `bind` ($0 -> the inputs, $c -> the output, $name -> params).
    `matrix` makes juxtaposition and \\cdot the matrix product; `target_shape`, the shape a bare
    \\sum sums to (a VJP's input; None: a full sum)."""

    def __init__(self, env: dict, matrix: bool = False, target_shape: tuple | None = None):
        self.env = dict(env)
        self.matrix = matrix
        self.target_shape = target_shape

    # -- the record's template ---------------------------------------------------------
    @staticmethod
    def source(op, latex: str, values: tuple = (), absent: tuple = ()) -> str:
        """The record's LaTeX with its markers turned into commands the reader binds: \\INPUTa for $0,
        \\OUTPUT for $c, \\PARAMa... for the parameters. As the panel reads it: $?flag{...} as the
        node's `values` of the parameters say, and the terms of the `absent` inputs (a convolution
        called without a bias) dropped."""
        given = dict(zip(op.param_names, values))

        def when(m):   # a flag's words alone, (keepdim), say the shape, which the comparison checks
            shown = m.group(1) in given and holds(number(given[m.group(1)]))
            return "" if not shown or _WORDS_ONLY.fullmatch(m.group(2).strip()) else m.group(2)
        latex = WHEN.sub(when, latex)
        params = {name: "\\PARAM" + _letters(k) for k, name in enumerate(op.param_names)}
        inputs = [ABSENT if k in absent else "\\INPUT" + _letters(k) for k in range(max(len(op.arg_names), 4))]
        return without_absent(fill(latex, inputs, "\\OUTPUT", params))

    @staticmethod
    def bindings(op, inputs: list, out, params: tuple) -> dict:
        """The values of a node's markers and of its parameters' letters (\\alpha, \\mathrm{lo})."""
        env = {"INPUT" + _letters(k): np.asarray(v) for k, v in enumerate(inputs) if v is not None}
        if out is not None and not isinstance(out, tuple):
            env["OUTPUT"] = np.asarray(out)
        for k, (name, value) in enumerate(zip(op.param_names, params)):
            if isinstance(value, tuple) and value and all(isinstance(v, (int, float)) for v in value):
                value = np.asarray(value)   # a stride (2, 2): one number per spatial dim
            if isinstance(value, (int, float, bool, np.ndarray, np.generic)) or value is None:
                env["PARAM" + _letters(k)] = value
                env.setdefault(param_latex(name), value)
        return env

    # -- whole formulas ---------------------------------------------------------------
    def forward(self, latex: str) -> list:
        """Every right side of the first clause (`$c = A = B`), after the definitions that follow it;
        or, where a clause writes the output in index notation ($c[n, o, p] = ...), that clause's."""
        clauses = _clauses(_tokens(latex))
        written = [c for c in clauses[1:] if _writes_output(c)]
        if written:
            self._constants([c for c in clauses[1:] if c is not written[0]])
            lhs, rhs = _split(written[0], "=", 1)
            return [Indices(self).value(rhs, _bracket(lhs), np.shape(self.env["OUTPUT"]))]
        self._define(clauses[1:])
        sides = _split(clauses[0], "=")
        if len(sides) < 2:
            raise Unreadable("no `=` in the formula")
        lhs = [t for t in sides[0] if t != ("space",)]
        if lhs not in ([("cmd", "OUTPUT")], [("open", "{"), ("cmd", "OUTPUT"), ("close", "}")]):
            if any(t == ("char", "_") for t in lhs) and lhs[:4] == [("open", "{"), ("cmd", "OUTPUT"),
                                                                 ("close", "}"), ("char", "_")]:
                index = lhs[4:]
                if len(index) == 1 and index[0][0] == "char":
                    self.env[index[0][1]] = Whole()   # {c}_i = a_i b_i: a statement about every i
                else:
                    raise Unreadable("an indexed left side")
            else:
                raise Unreadable("its left side is not the output alone")
        return [self.expression(side) for side in sides[1:]]

    def vjp(self, latex: str):
        """The VJP's value, after the definitions that follow it; or, where a clause gives it in index
        notation (... \\text{ at } [n, i, p]), that clause's."""
        clauses = _clauses(_tokens(latex))
        placed = [c for c in clauses if _at(c) is not None]
        if placed:
            self._constants([c for c in clauses if c is not placed[0]])
            expression, keys = _at(placed[0])
            return Indices(self).value(expression, keys, self.target_shape)
        self._define(clauses[1:])
        return self.expression(clauses[0])

    def _constants(self, clauses: list) -> None:
        """Beside an index form: the clauses that bind a letter (s = (2, 2)); the others name the
        operation the index form computes (y = x ⋆ W) or say it in words, and are read by the learner."""
        for clause in clauses:
            sides = _split(clause, "=")
            named = {t[1] for t in sides[0] if t[0] == "cmd"} & {"OUTPUT", "INPUTa", "INPUTb", "INPUTc", "operatorname"}
            if len(sides) == 2 and ("open", "(") not in sides[0] and not named and not _shown_name(sides[0]):
                self._define([clause])

    def _define(self, clauses: list) -> None:
        pending = list(clauses)
        for _ in range(len(pending) + 1):   # a definition may use one written after it
            left = []
            for clause in pending:
                sides = _split(clause, "=")
                if len(sides) != 2:
                    raise Unreadable("a clause that defines nothing")
                name = _name(sides[0])
                if "OUTPUT" in name or "INPUT" in name or "[" in name:
                    raise Unreadable("statements run in order (a write into the output)")
                try:
                    self.env[name] = self.expression(sides[1])
                except _Unbound:
                    left.append(clause)
            if not left:
                return
            pending = left
        raise Unreadable("definitions that use symbols nobody binds")

    grid = None   # index notation: an Indices while its clause is read

    def expression(self, tokens: list):
        parser = _Parser(tokens, self)
        value = parser.expr()
        if parser.peek() is not None:
            raise Unreadable(f"left over: {_show(parser.rest())}")
        return value


# a name in the LaTeX a node shows (render.formula.Formula.latex): \text{⁣k⁣}, k its index in the names
_PLACEHOLDER = re.compile(r"\\text\{\u2063(\d+)\u2063\}")


def shown(latex: str, names: tuple, values: dict, out: str) -> tuple:
    """The LaTeX a node shows, with its learner's names and constants put in and tidied (2x, x³), made
    readable: name k (text names[k]) becomes a command bound to values[names[k]], the output's (`out`)
    \\OUTPUT. Returns (LaTeX, env) for Evaluator(env).forward or .vjp."""
    env = {"OUTPUT": np.asarray(values[out])}

    def put(m):
        text = names[int(m.group(1))]
        if text == out:
            return r"\OUTPUT"
        key = "SHOWN" + "".join(_letters(int(d)) for d in m.group(1))
        env[key] = np.asarray(values[text])
        return "\\" + key
    return _PLACEHOLDER.sub(put, latex), env


class Whole:
    """An index that stands for every position at once (X_i is X)."""


class _Unbound(Unreadable):
    pass


def _letters(k: int) -> str:
    return "abcdefghijklmnop"[k]


def _tokens(latex: str) -> list:
    out = []
    for m in _TOKEN.finditer(latex):
        command, space, char = m.groups()
        if space or command in _SPACE_COMMANDS:
            if not out or out[-1] != ("space",):
                out.append(("space",))
        elif command is not None:
            out.append(("cmd", command) if command.isalpha() else ("char", command))
        elif char in "({[":
            out.append(("open", char))
        elif char in ")}]":
            out.append(("close", char))
        elif char == "'" and out and out[-1][0] == "char" and out[-1][1].isalpha():
            out[-1] = ("char", out[-1][1] + "\u02b9")    # a primed index, k′: one letter (ʹ is a letter)
        else:
            out.append(("char", char))
    return out


def _split(tokens: list, mark: str, most: int = -1) -> list:
    """Tokens split at `mark` outside any brackets (at its first `most` places when most ≥ 0)."""
    parts, depth, current = [], 0, []
    for t in tokens:
        depth += t[0] == "open"
        depth -= t[0] == "close"
        if depth == 0 and t == ("char", mark) and len(parts) != most:
            parts.append(current)
            current = []
        else:
            current.append(t)
    return parts + [current]


def _clauses(tokens: list) -> list:
    """Top-level clauses: split at a comma or semicolon outside brackets, and at `:` before a space."""
    parts, depth, current = [], 0, []
    for k, t in enumerate(tokens):
        depth += t[0] == "open"
        depth -= t[0] == "close"
        follows = tokens[k + 1] if k + 1 < len(tokens) else None
        if depth == 0 and (t in (("char", ","), ("char", ";")) or (t == ("char", ":") and follows == ("space",))):
            parts.append(current)
            current = []
        else:
            current.append(t)
    return [p for p in parts + [current] if any(t != ("space",) for t in p)]


def _name(tokens: list) -> str:
    """The symbol a definition binds, spelt as the reader looks it up."""
    text = "".join(("\\" + t[1]) if t[0] == "cmd" else t[1] for t in tokens if t != ("space",))
    return text


def _show(tokens: list) -> str:
    return "".join(("\\" + t[1] + " ") if t[0] == "cmd" else " " if t[0] == "space" else t[1]
                   for t in tokens).strip()[:60]


class _Parser:
    """Recursive descent over the tokens, computing as it reads."""

    def __init__(self, tokens: list, ev: Evaluator):
        self.tokens = tokens
        self.k = 0
        self.ev = ev

    # -- reading ---------------------------------------------------------------------------
    def peek(self, skip_space: bool = True):
        k = self.k
        while skip_space and k < len(self.tokens) and self.tokens[k] == ("space",):
            k += 1
        return self.tokens[k] if k < len(self.tokens) else None

    def take(self):
        tok = self.peek()
        while self.tokens[self.k] == ("space",):
            self.k += 1
        self.k += 1
        return tok

    def rest(self):
        return self.tokens[self.k:]

    def expect(self, tok):
        got = self.take() if self.peek() is not None else None
        if got != tok:
            raise Unreadable(f"expected {tok[1]!r}, met {_show([got]) if got else 'the end'}")

    def group(self):
        """A {...} group's value."""
        self.expect(("open", "{"))
        value = self.expr()
        self.expect(("close", "}"))
        return value

    def group_tokens(self) -> list:
        """A {...} group's tokens, unread (or one token)."""
        if self.peek() != ("open", "{"):
            return [self.take()]
        self.take()
        return self._until_closed()

    # -- grammar ---------------------------------------------------------------------------
    def expr(self):
        tok = self.peek()
        value = None
        if tok in (("char", "-"), ("char", "+")):
            self.take()
            value = self.term()
            value = -value if tok[1] == "-" else value
        else:
            value = self.term()
        while self.peek() in (("char", "-"), ("char", "+")):
            sign = self.take()[1]
            right = self.term()
            value = value - right if sign == "-" else value + right
        return value

    def _ends_term(self, tok) -> bool:
        return (tok is None or tok[0] == "close" or tok in (("char", "-"), ("char", "+"), ("char", "="),
                ("char", "|"), ("char", "&"), ("char", "<"), ("char", ">"), ("char", ","), ("char", "\\"))
                or tok[0] == "cmd" and tok[1] in ("le", "leq", "ge", "geq", "ne", "neq", "lor", "land", "end",
                                                  "rfloor", "rceil", "rVert"))

    def term(self):
        value = self.factor()
        while not self._ends_term(self.peek()):
            tok = self.peek()
            if tok == ("cmd", "odot"):
                self.take()
                value = np.multiply(value, self.factor())
            elif tok == ("cmd", "times"):
                self.take()
                right = self.factor()
                value = np.cross(value, right, axis=0 if np.ndim(value) > 1 else -1) if self.ev.matrix \
                    else np.multiply(value, right)
            elif tok == ("cmd", "cdot"):
                self.take()
                value = self.product(value, self.factor())
            elif tok == ("char", "/"):
                self.take()
                value = np.divide(value, self.factor())
            elif tok[0] == "cmd" and tok[1] in ("sum", "prod"):
                value = self.product(value, self.factor())
            else:
                value = self.product(value, self.factor())
        return value

    def product(self, a, b):
        if isinstance(a, Multi) or isinstance(b, Multi):
            return a * b
        return _matprod(a, b) if self.ev.matrix else np.multiply(a, b)

    def factor(self):
        if self.peek() == ("char", "-"):   # a negated factor after an operator: ḡ ⊙ −x⁻²
            self.take()
            return -self.factor()
        value = self.primary()
        return self.postfix(value)

    def postfix(self, value):
        while True:
            tok = self.peek(skip_space=False)
            if tok == ("char", "^"):
                self.take()
                value = self.power(value)
            elif tok == ("char", "_"):
                self.take()
                value = self.subscript(value, self.group_tokens())
            elif tok == ("open", "["):
                self.take()
                value = self.index(value)
            elif tok == ("char", "'"):
                raise Unreadable("a derivative written with a prime")
            else:
                return value

    def power(self, value):
        exponent = self.group_tokens()
        if exponent == [("cmd", "top")]:
            axes = self.ev.env.get("transposed axes")   # a transpose(dim0, dim1) written as ⊤
            return np.swapaxes(value, *axes) if axes is not None and np.ndim(value) > 1 else _transpose(value)
        if exponent == [("char", "-"), ("cmd", "top")]:
            return np.linalg.inv(_transpose(value))
        if exponent == [("char", "-"), ("char", "1")] and self.ev.matrix and np.ndim(value) == 2:
            return np.linalg.inv(value)
        e = _Parser(exponent, self.ev).expr() if len(exponent) > 1 or exponent[0][0] != "char" \
            else self._number_or_symbol(exponent[0])
        return np.power(value, e)

    def _number_or_symbol(self, tok):
        if tok[1].isdigit():
            return float(tok[1])
        return _Parser([tok], self.ev).expr()

    def subscript(self, value, sub: list):
        if len(sub) == 1 and sub[0][0] == "char" and sub[0][1].isalpha():
            index = self.ev.env.get(sub[0][1])
            if isinstance(index, Whole):
                return value
            if isinstance(index, np.ndarray) and index.dtype.kind in "iu":
                return np.asarray(value)[index]
        raise Unreadable(f"a subscript {_show(sub)}")

    def index(self, value):
        if self.ev.grid is not None:
            return self.ev.grid.gather(value, self._until_closed())
        keys = []
        while True:
            keys.append(self._key())
            tok = self.take()
            if tok == ("close", "]"):
                break
            if tok != ("char", ","):
                raise Unreadable("an index")
        if len(keys) == 1 and np.asarray(keys[0]).dtype == bool:   # a mask broadcasts with what it selects
            shape = np.broadcast_shapes(np.shape(value), np.shape(keys[0]))
            return np.broadcast_to(value, shape)[np.broadcast_to(keys[0], shape)]
        keys = [k if isinstance(k, slice) else np.asarray(k).astype(int) for k in keys]
        return np.asarray(value)[tuple(keys)]

    _COLON = [("open", "{"), ("char", ":"), ("close", "}")]

    def _key(self):
        """One index: a value, `:` (all of an axis) or `a{:}b` (a slice, as Python writes it)."""
        toks, depth = [], 0
        while depth or self.tokens[self.k] not in (("char", ","), ("close", "]")):
            t = self.tokens[self.k]
            depth += (t[0] == "open") - (t[0] == "close")
            toks.append(t)
            self.k += 1
        if toks == [("char", ":")]:
            return slice(None)
        for j in range(len(toks) - 2):
            if toks[j:j + 3] == self._COLON:
                return slice(int(_Parser(toks[:j], self.ev).expr()), int(_Parser(toks[j + 3:], self.ev).expr()))
        return _Parser(toks, self.ev).expr()

    def _until_closed(self) -> list:
        """The tokens up to the bracket that closes one already opened, taken."""
        depth, out = 1, []
        while True:
            t = self.tokens[self.k]
            self.k += 1
            depth += t[0] == "open"
            depth -= t[0] == "close"
            if depth == 0:
                return out
            out.append(t)

    def primary(self):
        tok = self.peek()
        if tok is None:
            raise Unreadable("a formula that ends too soon")
        kind, text = tok
        if kind == "open" and text in "({":
            self.take()
            value = self.expr()
            if text == "(" and self.peek() == ("char", ","):   # a tuple the panel shows: s = (2, 2)
                value = [value]
                while self.peek() == ("char", ","):
                    self.take()
                    value.append(self.expr())
                value = np.asarray(value)
            self.expect(("close", ")" if text == "(" else "}"))
            return value
        if kind == "open" and text == "[":
            self.take()
            value = self.condition()
            self.expect(("close", "]"))
            return np.asarray(value, dtype=float)
        if tok == ("char", "|"):
            self.take()
            value = self.expr()
            self.expect(("char", "|"))
            return np.abs(value)
        if kind == "char" and (text.isdigit() or text == "."):
            return self.number()
        if kind == "char" and text.isalpha():
            self.take()
            return self.symbol(text)
        if kind == "cmd":
            return self.command()
        raise Unreadable(f"{_show([tok])!r} where a value belongs")

    def number(self):
        while self.tokens[self.k] == ("space",):
            self.k += 1
        digits = ""
        while True:
            tok = self.peek(skip_space=False)
            if tok is not None and tok[0] == "char" and (tok[1].isdigit() or tok[1] == "."):
                digits += tok[1]
                self.k += 1
            else:
                return float(digits)

    def symbol(self, name: str):
        if name == "e" and "e" not in self.ev.env:
            return math.e
        if name in self.ev.env:
            return self.ev.env[name]
        raise _Unbound(f"the symbol {name} is bound by nothing")

    def command(self):
        _, name = self.take()
        env = self.ev.env
        if name in ("INPUTa", "INPUTb", "INPUTc", "INPUTd", "OUTPUT") or name.startswith(("PARAM", "SHOWN")):
            if name not in env or env[name] is None:
                raise Unreadable(f"no value for {name}")
            return env[name]
        if name in ("frac", "tfrac", "dfrac"):
            top = self.group()
            return np.divide(top, self.group())
        if name == "sqrt":
            return np.sqrt(self.group())
        if name in ("bar", "hat", "tilde"):
            inner = self.group_tokens()
            key = f"\\{name}{{{_name(inner)}}}"
            if key in env:
                return env[key]
            raise _Unbound(f"the symbol {key} is bound by nothing")
        if name == "mathrm":
            word = _name(self.group_tokens())
            if word == "nan":
                return np.nan
            key = f"\\mathrm{{{word}}}"
            if key in env:
                return env[key]
            raise _Unbound(f"the symbol {key} is bound by nothing")
        if name == "pi" and "\\pi" not in env:
            return math.pi
        if name == "infty":
            return np.inf
        if name in ("lfloor", "lceil"):
            value = self.expr()
            self.expect(("cmd", "r" + name[1:]))
            return np.floor(value) if name == "lfloor" else np.ceil(value)
        if name in ("sum", "prod"):
            return self.reduction(name)
        if name == "neg":
            return np.logical_not(np.asarray(self.factor(), dtype=bool))
        if name in ("max", "min"):
            return self.extreme(name)
        if name == "begin":
            return self.cases()
        if name == "operatorname" or (name == "text" and _name(self._peek_group()) == "atan2"):
            return self.apply(_name(self.group_tokens()))
        if name in _COMMAND_FUNCTIONS and not (name == "sigma" and self.peek(skip_space=False) != ("open", "(")):
            return self.apply(name)
        if name in _GREEK or name in ("sigma",):
            key = "\\" + name
            if key in env:
                return env[key]
            raise _Unbound(f"the symbol {key} is bound by nothing")
        if name == "text":
            raise Unreadable(f"words: {_show(self.group_tokens())}")
        raise Unreadable(f"\\{name}")

    def _peek_group(self) -> list:
        k = self.k
        tokens = self.group_tokens()
        self.k = k
        return tokens

    def apply(self, name: str):
        if name not in FUNCTIONS:
            raise Unreadable(f"the function {name}")
        f = FUNCTIONS[name]
        base = None
        if self.peek(skip_space=False) == ("char", "_"):    # log_2, log_{10}
            self.take()
            base = _Parser(self.group_tokens(), self.ev).expr()
        if self.peek(skip_space=False) == ("char", "^"):
            raise Unreadable(f"a power of the function {name}")
        if self.peek() == ("open", "("):
            value = self.postfix(f(*self.arguments()))
        else:
            value = f(self.factor_or_function())
        return value / np.log(base) if base is not None else value

    def arguments(self) -> list:
        """A function's parenthesized arguments, (a) or (a, b, ...)."""
        self.take()
        args = [self.expr()]
        while self.peek() == ("char", ","):
            self.take()
            args.append(self.expr())
        self.expect(("close", ")"))
        return args

    def factor_or_function(self):
        """A function's argument written without parentheses: one factor (itself maybe a function)."""
        return self.factor()

    def extreme(self, name: str):
        f2 = np.maximum if name == "max" else np.minimum
        f1 = np.max if name == "max" else np.min
        if self.peek(skip_space=False) == ("char", "_"):
            self.take()
            axis = self.axis(self.group_tokens())
            body = self.factor()
            return body if np.ndim(body) == 0 else f1(body, axis=axis, keepdims=True)
        if self.peek() == ("open", "("):
            args = self.arguments()
            if len(args) == 2:
                return self.postfix(f2(*args))
            return self.postfix(f1(args[0]))
        return f1(self.factor())

    def axis(self, sub: list):
        """A reduction's subscript: `\\text{dim } $dim` -> that axis."""
        if sub and sub[0] == ("cmd", "text"):
            words = _Parser(sub, self.ev)
            words.take()
            if _name(words.group_tokens()).strip() == "dim":
                marker = [t for t in words.rest() if t[0] == "cmd" and t[1].startswith("PARAM")]
                dim = self.ev.env.get(marker[0][1]) if len(marker) == 1 else words.primary()
                return tuple(np.atleast_1d(dim).astype(int).tolist()) if dim is not None else None
        raise Unreadable(f"a reduction over {_show(sub)}")

    def reduction(self, name: str):
        f = np.sum if name == "sum" else np.prod
        if self.peek(skip_space=False) == ("char", "_"):
            self.take()
            sub = self.group_tokens()
            if self.ev.grid is not None and name == "sum" and self.ev.grid.over(sub):
                return self.ev.grid.total(sub, self)
            if len(sub) == 1 and sub[0][0] == "char" and isinstance(self.ev.env.get(sub[0][1]), np.ndarray):
                return f(self.body(), axis=0)       # over an index bound to an index array: its axis
            axis = self.axis(sub)
            body = self.body()
            return body if np.ndim(body) == 0 else f(body, axis=axis, keepdims=True)
        if self.peek(skip_space=False) == ("char", "^"):
            raise Unreadable("a sum with bounds")
        body = self.body()
        if self.ev.target_shape is not None and name == "sum":
            return sum_to(body, self.ev.target_shape)
        return f(body)

    def body(self):
        """What a sum runs over: the rest of the product it starts."""
        value = self.factor()
        while not self._ends_term(self.peek()):
            tok = self.peek()
            if tok in (("cmd", "odot"), ("cmd", "cdot"), ("char", "/")):
                self.take()
                right = self.factor()
                value = np.divide(value, right) if tok[1] == "/" else np.multiply(value, right)
            else:
                value = self.product(value, self.factor())
        return value

    def condition(self):
        value = self.comparison()
        while self.peek() in (("cmd", "lor"), ("cmd", "land")):
            op = self.take()[1]
            right = self.comparison()
            value = np.logical_or(value, right) if op == "lor" else np.logical_and(value, right)
        return value

    def comparison(self):
        if self.peek() == ("cmd", "neg"):
            self.take()
            return np.logical_not(self.comparison())
        left = self.expr()
        result = None
        ops = {"<": np.less, ">": np.greater, "=": np.equal, "le": np.less_equal, "leq": np.less_equal,
               "ge": np.greater_equal, "geq": np.greater_equal, "ne": np.not_equal, "neq": np.not_equal}
        while self.peek() is not None and self.peek()[1] in ops and self.peek()[0] in ("char", "cmd"):
            op = self.take()[1]
            right = self.expr()
            if isinstance(left, Multi) or isinstance(right, Multi):
                if op != "=":
                    raise Unreadable(f"a multi-index compared with {op}")
                here = left == right
            elif op in ("=", "ne", "neq") and isinstance(right, float) and math.isnan(right):
                here = np.isnan(left) if op == "=" else ~np.isnan(left)
            else:
                here = ops[op](left, right)
            result = here if result is None else np.logical_and(result, here)
            left = right
        if result is None:
            if isinstance(left, np.ndarray) and left.dtype == bool:
                return left
            raise Unreadable("a bracket that is not a condition")
        return result

    def cases(self):
        if _name(self.group_tokens()) != "cases":
            raise Unreadable("an environment other than cases")
        values, conditions = [], []
        while True:
            values.append(self.expr())
            self.expect(("char", "&"))
            if self.peek() == ("cmd", "text") and _name(self._peek_group_after_text()) == "otherwise":
                self.take()
                self.group_tokens()
                conditions.append(True)
            else:
                conditions.append(self.condition())
            tok = self.take()
            if tok == ("cmd", "end"):
                self.group_tokens()
                break
            if tok != ("char", "\\"):
                raise Unreadable("a case row")
        shape = np.broadcast_shapes(*[np.shape(v) for v in values + conditions])
        out = np.broadcast_to(np.asarray(values[-1], dtype=float), shape).copy()
        for v, c in reversed(list(zip(values[:-1], conditions[:-1]))):
            out = np.where(c, v, out)
        return out

    def _peek_group_after_text(self) -> list:
        k = self.k
        self.take()
        tokens = self.group_tokens()
        self.k = k
        return tokens


# -- index notation: y[n, o, p] = b[o] + Σ_{i, k} W[o, i, k] x[n, i, s p + d k − q] ----------------
# Every index letter gets axes of one grid (a letter that ends an index of an array with more dims,
# the p of y[n, o, p], is a multi-index: one axis per remaining dim), sized where the letter indexes
# an array; the formula is then computed at every point of the grid at once. A position outside an
# array reads 0 (a convolution's padding); (γ, c) is channel c of group γ. The result is laid out as
# the left side's (or the `at [...]`'s) letters say.
class Multi:
    """A multi-index (p = (p₁, p₂)): arithmetic per component, with another multi-index, a number or
    a parameter that has one number per component (a stride (2, 2))."""
    __array_ufunc__ = None   # numpy leaves `stride * p` to __rmul__

    def __init__(self, parts):
        self.parts = list(parts)

    def _with(self, other, f):
        if isinstance(other, Multi):
            return Multi(f(a, b) for a, b in zip(self.parts, other.parts))
        other = np.asarray(other)
        per = list(other) if other.ndim == 1 else [other] * len(self.parts)
        return Multi(f(a, b) for a, b in zip(self.parts, per))

    def __add__(self, other):
        return self._with(other, lambda a, b: a + b)

    def __radd__(self, other):
        return self._with(other, lambda a, b: b + a)

    def __sub__(self, other):
        return self._with(other, lambda a, b: a - b)

    def __rsub__(self, other):
        return self._with(other, lambda a, b: b - a)

    def __mul__(self, other):
        return self._with(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __neg__(self):
        return Multi(-a for a in self.parts)

    def __eq__(self, other):
        same = [a == b for a, b in zip(self.parts, self._with(other, lambda a, b: b).parts)]
        return functools.reduce(np.logical_and, same)

    __hash__ = None


def _shown_name(tokens: list) -> bool:
    return any(t[0] == "cmd" and t[1].startswith("SHOWN") for t in tokens)


def _bare(tokens: list) -> list:
    return [t for t in tokens if t != ("space",)]


def _writes_output(clause: list) -> bool:
    """`{\\OUTPUT}[...] = ...`: a clause that writes the output in index notation."""
    return _bare(clause)[:4] == [("open", "{"), ("cmd", "OUTPUT"), ("close", "}"), ("open", "[")]


def _bracket(tokens: list) -> list:
    """The tokens inside the first [...] of `tokens`."""
    start = tokens.index(("open", "["))
    depth = 0
    for k in range(start, len(tokens)):
        depth += tokens[k][0] == "open"
        depth -= tokens[k][0] == "close"
        if depth == 0:
            return tokens[start + 1:k]
    raise Unreadable("an unclosed index")


def _at(clause: list):
    """(expression, index tokens) of `expression \\text{ at } [i, o, k]`, or None."""
    for k, t in enumerate(clause):
        if t == ("cmd", "text") and k + 1 < len(clause) and clause[k + 1] == ("open", "{"):
            words = _Parser(clause[k + 1:], None).group_tokens()
            if _name(words).strip() == "at":
                return clause[:k], _bracket(clause[k + 1 + len(words) + 2:])
    return None


def _letter(key: list):
    """The index letter a key is (`n`, `\\gamma`), or None."""
    key = _bare(key)
    if len(key) == 1 and (key[0][0] == "char" and key[0][1].isalpha() or key[0][0] == "cmd" and key[0][1] in _GREEK):
        return key[0][1] if key[0][0] == "char" else "\\" + key[0][1]
    return None


def _pair(key: list):
    """(group letter, channel letter) of a key written (γ, c), or None."""
    key = _bare(key)
    if len(key) < 5 or key[0] != ("open", "(") or key[-1] != ("close", ")"):
        return None
    parts = _split(key[1:-1], ",")
    letters = [_letter(p) for p in parts]
    return tuple(letters) if len(letters) == 2 and None not in letters else None


class Indices:
    """The grid of one index-notation clause, bound in the evaluator's env while the clause is read."""

    def __init__(self, ev: Evaluator):
        self.ev = ev
        self.sizes: dict = {}   # letter -> its sizes (one per axis)
        self.axes: dict = {}    # letter -> its axes in the grid

    def value(self, expression: list, keys: list, shape: tuple):
        """The expression at every index of `keys`, laid out in an array of `shape`."""
        try:
            return self._value(expression, keys, shape)
        except (IndexError, KeyError, TypeError) as e:   # a letter or an array the grid does not fit
            raise Unreadable(f"index notation the grid does not fit ({type(e).__name__}: {e})") from None
        finally:
            self.ev.grid = None

    def _value(self, expression: list, keys: list, shape: tuple):
        self._note(keys, shape)
        self._scan(expression)
        grid = []
        for letter, sizes in self.sizes.items():
            self.axes[letter] = list(range(len(grid), len(grid) + len(sizes)))
            grid += sizes
        self.shape = tuple(grid)
        for letter, axes in self.axes.items():
            parts = [np.arange(n).reshape([n if a == axis else 1 for a in range(len(grid))])
                     for axis, n in zip(axes, self.sizes[letter])]
            self.ev.env[letter] = parts[0] if len(parts) == 1 else Multi(parts)
        self.ev.grid = self
        return self._laid_out(self.ev.expression(expression), keys, shape)

    # -- sizes ---------------------------------------------------------------------------
    def _note(self, keys: list, shape: tuple) -> None:
        """Sizes of the letters that index an array of `shape` with `keys`."""
        parts = _split(keys, ",")
        for pos, key in enumerate(parts):
            if pos >= len(shape):
                return
            letter, pair = _letter(key), _pair(key)
            if letter is not None:
                last = pos == len(parts) - 1 and len(shape) > len(parts)
                self.sizes.setdefault(letter, tuple(shape[pos:]) if last else (shape[pos],))
            elif pair is not None:
                if "\\text{groups}" not in self.ev.env:
                    raise Unreadable(f"a pair of indices {_show(key)} outside a grouped convolution")
                groups = int(self.ev.env["\\text{groups}"])
                self.sizes.setdefault(pair[0], (groups,))
                self.sizes.setdefault(pair[1], (shape[pos] // groups,))

    def _scan(self, tokens: list) -> None:
        for k, t in enumerate(tokens):
            if t == ("open", "["):
                array = self._array_before(tokens, k)
                if array is not None:
                    self._note(_bracket(tokens[k:]), np.shape(array))

    def _array_before(self, tokens: list, k: int):
        """The array a bracket at `k` indexes ({\\INPUTa}[...], \\bar{g}[...]), or None."""
        if k == 0 or tokens[k - 1] != ("close", "}"):
            return None
        depth, m = 0, k - 1
        while m >= 0:
            depth += tokens[m][0] == "close"
            depth -= tokens[m][0] == "open"
            if depth == 0:
                break
            m -= 1
        inner = _bare(tokens[m + 1:k - 1])
        if m > 0 and tokens[m - 1] == ("cmd", "bar"):
            return self.ev.env.get("\\bar{" + _name(inner) + "}")
        if len(inner) == 1 and inner[0][0] == "cmd":
            return self.ev.env.get(inner[0][1])
        return None

    # -- reading -----------------------------------------------------------------------
    def _index(self, key: list):
        pair = _pair(key)
        if pair is not None:
            return self.ev.env[pair[0]] * self.sizes[pair[1]][0] + self.ev.env[pair[1]]
        return _Parser(key, self.ev).expr()

    def gather(self, value, keys: list):
        """value[keys] at every grid point; 0 where a key falls outside the array (the padding)."""
        flat = []
        for key in _split(keys, ","):
            index = self._index(key)
            flat += index.parts if isinstance(index, Multi) else [index]
        value = np.asarray(value)
        if len(flat) != value.ndim:
            raise Unreadable(f"{len(flat)} indices into an array of {value.ndim} dims")
        flat = np.broadcast_arrays(*[np.asarray(i).astype(int) for i in flat])
        inside = np.logical_and.reduce([(i >= 0) & (i < n) for i, n in zip(flat, value.shape)])
        clipped = tuple(np.clip(i, 0, n - 1) for i, n in zip(flat, value.shape))
        return np.where(inside, value[clipped], 0.0)

    def over(self, sub: list) -> bool:
        """Whether a sum's subscript runs over letters of this grid (`i, k` or `i, k, p : ...`)."""
        letters = [_letter(k) for k in _split(_split(sub, ":", 1)[0], ",")]
        return all(letter in self.axes for letter in letters)

    def total(self, sub: list, parser):
        """\\sum_{letters [: condition]} body: the body summed over the letters' axes (where the
        condition holds)."""
        head = _split(sub, ":", 1)
        body = parser.body()
        if len(head) == 2:
            body = body * np.asarray(_Parser(head[1], self.ev).condition(), dtype=float)
        axes = tuple(a for k in _split(head[0], ",") for a in self.axes[_letter(k)])
        full = tuple(self.shape[a] if a in axes else 1 for a in range(len(self.shape)))
        body = np.broadcast_to(body, np.broadcast_shapes(np.shape(body), full))
        return body.sum(axis=axes, keepdims=True)

    def _laid_out(self, result, keys: list, shape: tuple):
        order = []
        for key in _split(keys, ","):
            pair = _pair(key)
            for letter in (pair if pair is not None else (_letter(key),)):
                if letter not in self.axes:
                    raise Unreadable(f"an index {_show(key)} the formula does not bind")
                order += self.axes[letter]
        full = tuple(self.shape[a] if a in order else 1 for a in range(len(self.shape)))
        result = np.broadcast_to(result, np.broadcast_shapes(np.shape(result), full))
        rest = [a for a in range(len(self.shape)) if a not in order]
        if any(result.shape[a] != 1 for a in rest):
            raise Unreadable("an index letter left free (neither summed nor on the left)")
        return np.transpose(result, order + rest).reshape(shape)
