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

import math
import re

import numpy as np

from gradviz.ops.display_math import WHEN, fill, param_latex

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
    def source(op, latex: str) -> str:
        """The record's LaTeX with its markers turned into commands the reader binds: \\INPUTa for $0,
        \\OUTPUT for $c, \\PARAMa... for the parameters ($?flag{...} read without its words)."""
        latex = WHEN.sub("", latex)
        params = {name: "\\PARAM" + _letters(k) for k, name in enumerate(op.param_names)}
        inputs = ["\\INPUT" + _letters(k) for k in range(max(len(op.arg_names), 4))]
        return fill(latex, inputs, "\\OUTPUT", params)

    @staticmethod
    def bindings(op, inputs: list, out, params: tuple) -> dict:
        """The values of a node's markers and of its parameters' letters (\\alpha, \\mathrm{lo})."""
        env = {"INPUT" + _letters(k): np.asarray(v) for k, v in enumerate(inputs) if v is not None}
        if out is not None and not isinstance(out, tuple):
            env["OUTPUT"] = np.asarray(out)
        for k, (name, value) in enumerate(zip(op.param_names, params)):
            if isinstance(value, (int, float, bool, np.ndarray, np.generic)) or value is None:
                env["PARAM" + _letters(k)] = value
                env.setdefault(param_latex(name), value)
        return env

    # -- whole formulas ---------------------------------------------------------------
    def forward(self, latex: str) -> list:
        """Every right side of the first clause (`$c = A = B`), after the definitions that follow it."""
        clauses = _clauses(_tokens(latex))
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
        """The VJP's value, after the definitions that follow it."""
        clauses = _clauses(_tokens(latex))
        self._define(clauses[1:])
        return self.expression(clauses[0])

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
        else:
            out.append(("char", char))
    return out


def _split(tokens: list, mark: str) -> list:
    """Tokens split at `mark` outside any brackets."""
    parts, depth, current = [], 0, []
    for t in tokens:
        depth += t[0] == "open"
        depth -= t[0] == "close"
        if depth == 0 and t == ("char", mark):
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
        depth, out = 1, []
        while True:
            t = self.tokens[self.k]
            self.k += 1
            depth += t[0] == "open"
            depth -= t[0] == "close"
            if depth == 0:
                return out
            out.append(t)

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
        keys = []
        while True:
            keys.append(self.expr())
            tok = self.take()
            if tok == ("close", "]"):
                break
            if tok != ("char", ","):
                raise Unreadable("an index")
        if len(keys) == 1 and np.asarray(keys[0]).dtype == bool:   # a mask broadcasts with what it selects
            shape = np.broadcast_shapes(np.shape(value), np.shape(keys[0]))
            return np.broadcast_to(value, shape)[np.broadcast_to(keys[0], shape)]
        keys = [np.asarray(k).astype(int) for k in keys]
        return np.asarray(value)[tuple(keys)]

    def primary(self):
        tok = self.peek()
        if tok is None:
            raise Unreadable("a formula that ends too soon")
        kind, text = tok
        if kind == "open" and text in "({":
            self.take()
            value = self.expr()
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
            if op in ("=", "ne", "neq") and isinstance(right, float) and math.isnan(right):
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
