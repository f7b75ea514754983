"""A record's display math as plain Unicode: the LaTeX a record writes once, read as text.

Op records write their formulas in LaTeX only (`$c` the output, `$c1`, `$c2` the second and third
outputs of an op of several, `$0`, `$1` the inputs, `$*` all the
inputs of an op over a list of tensors, `$name` a parameter); Graphviz labels, make_dot, the op reference and the player's fallback need plain text,
which `template_text` derives from that LaTeX with the record's own letters put in (c = a ⊙ b,
ḡ ⊙ b ⊙ aᵇ⁻¹). The reader covers the LaTeX the records use: fractions, roots, scripts, accents,
cases, \\text and operator names, Greek letters and the usual symbols. The markers and `fill`
live here too: the panel (render.latex) fills the same LaTeX with a node's own names and constants.
"""
from __future__ import annotations

import re
import unicodedata

# -- markers: what a record's LaTeX leaves to be filled in ----------------------------------
MARKER = re.compile(r"\$([A-Za-z_]\w*|\d+|\*)")
# `$?flag{...}`: the braces' LaTeX only when the parameter `flag` was True (keepdim) or a number
# other than 0 and 1 (a convolution's groups: its channels counted within each group)
WHEN = re.compile(r"\$\?([A-Za-z_]\w*)\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")
_COUNT = re.compile(r"-?\d+")


def holds(value) -> bool:
    """Whether a `$?flag{...}` is written, given the flag's value as LaTeX (None: no value)."""
    return value == r"\text{True}" or (value is not None and _COUNT.fullmatch(value) is not None
                                       and value not in ("0", "1"))

# how a parameter is written when its value is not shown
PARAM_LATEX = {"alpha": r"\alpha", "beta": r"\beta", "value": "v", "eps": r"\varepsilon", "exponent": "p",
               "weight": "w", "negative_slope": "s", "min": r"\mathrm{lo}", "max": r"\mathrm{hi}",
               "other": "s", "self": "s", "scale": "s", "lambd": r"\lambda", "threshold": r"\theta",
               "decimals": "d", "group": "G", "correction": "k",
               # where an input sits in a cat's or a stack's output (a node fills in its own: ḡ[:, 2:5])
               "part": r"\text{its part along dim}",
               # where an indexing op reads or writes along its dim (a node fills in its own: x[:, 1:4], c[:, idx])
               "index_at": r"\dots,\, \mathrm{idx}", "select_at": r"\dots,\, i", "slice_at": r"\dots,\, \mathrm{start}{:}\mathrm{end}{:}\mathrm{step}"}


# the markers a node fills from its own dims and shapes, not from a param of its record
PLACED = frozenset({"part", "index_at", "slice_at", "select_at"})


def param_latex(key: str) -> str:
    """A parameter without a value, as LaTeX: its letter, or its name as words (kernel size)."""
    return PARAM_LATEX.get(key, r"\text{" + key.replace("_", " ") + "}")


# `\text{... along dim } $dim`, `\text{kernel } $kernel_size`: the words already name the parameter,
# so without a value it is not written twice (along dim, not along dim dim)
_NAMED = re.compile(r"(\\text\{([^{}]*)\})\s*\$([A-Za-z_]\w*)")


def _unnamed(m) -> str:
    words, key = m.group(2).rstrip(), m.group(3)
    for name in {key.replace("_", " "), key.split("_")[0]}:    # output size, kernel (of kernel_size)
        if words == name or words.endswith((" " + name, "(" + name)):
            return m.group(1)
    return m.group(0)


def fill(template: str, inputs: list, out: str, params: dict, outs: tuple = ()) -> str:
    """The record's LaTeX with `$c` -> out, `$cK` -> outs[K] (output K of several), `$k` -> inputs[k], `$*` -> every input, comma-separated
    (cat's list), `$param` -> params[param] (each already LaTeX); a parameter without a value keeps its symbol. `$?flag{...}` keeps its LaTeX
    when params[flag] holds (\\text{True}, or a number other than 0 and 1)."""
    def put(m):
        key = m.group(1)
        if key == "c":
            return "{" + out + "}"
        if key[0] == "c" and key[1:].isdigit():
            return "{" + (outs[int(key[1:])] if int(key[1:]) < len(outs) else out + "_{" + key[1:] + "}") + "}"
        if key == "*":
            return r",\, ".join("{" + name + "}" for name in inputs)
        if key.isdigit():
            return "{" + (inputs[int(key)] if int(key) < len(inputs) else "x_{" + key + "}") + "}"
        if key in params:
            return "{" + params[key] + "}"
        return "{" + param_latex(key) + "}"
    template = WHEN.sub(lambda m: m.group(2) if holds(params.get(m.group(1))) else "", template)
    return MARKER.sub(put, template)


def template_text(latex: str, symbols: tuple, out: str, outs: tuple = ()) -> str:
    """A record's LaTeX as Unicode with its template letters: `$c` -> out, `$cK` -> outs[K], `$k` ->
    symbols[k], a parameter -> its letter or name (as when the panel has no value for it)."""
    latex = _NAMED.sub(_unnamed, latex)
    return unicode(fill(latex, list(symbols), out, {}, outs))


# -- the reader -------------------------------------------------------------------------
_GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ϵ", "varepsilon": "ε", "zeta": "ζ",
          "eta": "η", "theta": "θ", "iota": "ι", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ",
          "pi": "π", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "ϕ", "varphi": "φ", "chi": "χ", "psi": "ψ",
          "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ", "Lambda": "Λ", "Pi": "Π", "Sigma": "Σ",
          "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω"}
# binary operators and relations: a space either side
_BINARY = {"odot": "⊙", "cdot": "·", "otimes": "⊗", "star": "⋆", "times": "×", "pm": "±", "in": "∈",
           "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠", "neq": "≠", "lor": "∨", "land": "∧",
           "sim": "~", "leftrightarrow": "↔", "to": "→", "rightarrow": "→", "leftarrow": "←", "approx": "≈", "mid": "|", "oplus": "⊕",
           "bmod": "mod"}
_SYMBOL = {"infty": "∞", "dots": "…", "ldots": "…", "cdots": "⋯", "top": "⊤", "varnothing": "∅", "{": "{",
           "}": "}", "|": "‖", "%": "%", "_": "_", "#": "#", "&": "&", "$": "$"}
_PREFIX = {"partial": "∂", "neg": "¬", "nabla": "∇"}             # written against what follows
_FENCE = {"lVert": "‖", "rVert": "‖", "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋",
          "lceil": "⌈", "rceil": "⌉", "vert": "|", "lvert": "|", "rvert": "|", "Vert": "‖"}
_WORDS = {"log", "ln", "exp", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan",
          "det", "max", "min", "sup", "inf", "arg", "dim", "ker", "lim", "sgn", "Pr", "gcd"}
_LARGE = {"sum": "Σ", "prod": "Π"}
_SPACES = {",", ";", ":", " ", "quad", "qquad", "enspace", "thinspace", "medspace", "thickspace"}
_IGNORED = {"textstyle", "displaystyle", "scriptstyle", "limits", "nolimits", "!", "left", "right", "big",
            "Big", "bigl", "bigr", "Bigl", "Bigr", "mathop"}
_ACCENT = {"bar": "\u0304", "overline": "\u0304", "hat": "\u0302", "widehat": "\u0302", "tilde": "\u0303",
           "widetilde": "\u0303", "dot": "\u0307", "vec": "\u20d7"}
_STYLE = {"mathrm", "mathit", "mathbf", "mathcal", "mathbb", "mathsf", "mathtt", "boldsymbol", "bm"}

_SUP = dict(zip("0123456789+-−=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW⊤′*",
                "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵀ′*"))
_SUB = dict(zip("0123456789+-−=()aeijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_TOKEN = re.compile(r"\\([A-Za-z]+|.)|(\s+)|(.)", re.S)
_OPEN, _CLOSE = "([⟨⌊⌈", ")]⟩⌋⌉"
_RELATION = re.compile(r" ?([=<>≤≥≠∈:]) ?")
_CASES = "\x01\x02"     # the parentheses around cases, dropped when the cases are a whole right side


class _Piece:
    """One item of a row: its text and kind (atom, bin, word, large, prefix, open, close, punct, space, text)."""
    __slots__ = ("text", "kind")

    def __init__(self, text: str, kind: str):
        self.text, self.kind = text, kind


class _Reader:
    """Reads a LaTeX string token by token (a command, a run of spaces or one character) into rows
    of pieces: groups, scripts and the arguments of commands are read as text first."""

    def __init__(self, latex: str):
        self.tokens = [(m.group(1), m.group(2), m.group(3)) for m in _TOKEN.finditer(latex)]
        self.k = 0

    def peek(self):
        return self.tokens[self.k] if self.k < len(self.tokens) else None

    def take(self):
        tok = self.peek()
        self.k += 1
        return tok

    def skip_spaces(self):
        while self.peek() is not None and self.peek()[1]:
            self.k += 1

    def argument(self) -> str:
        """The next group ({...}) or single token, as text."""
        self.skip_spaces()
        tok = self.peek()
        if tok is None:
            return ""
        if tok[2] == "{":
            self.k += 1
            return _join(self.row(stop="}"))
        return _join(self.row(single=True))

    def raw_argument(self) -> str:
        """A {...} group's source as typed (\\text, \\begin's environment name)."""
        self.skip_spaces()
        if self.peek() is None or self.peek()[2] != "{":
            return ""
        self.k += 1
        depth, out = 1, ""
        while self.peek() is not None:
            command, space, char = self.take()
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    break
            out += ("\\" + command if command not in ("{", "}", "_", "%", "&", "$", "#") else command) \
                if command else space or char
        return out

    def row(self, stop: str | None = None, single: bool = False, stops: tuple = ()) -> list:
        """Pieces up to `stop` (consumed) or one of `stops` (left), or a single item when `single`."""
        out: list = []
        while self.peek() is not None:
            command, space, char = self.peek()
            if char is not None and (char == stop or char in stops):
                if char == stop:
                    self.k += 1
                return out
            if command is not None and command in stops:
                return out
            self.k += 1
            if space:
                if not single:
                    out.append(_Piece(" ", "space"))
                continue
            before = len(out)
            if command is not None:
                self.command(command, out)
            else:
                self.char(char, out)
            if single and len(out) > before:
                return out
        return out

    def char(self, ch: str, out: list) -> None:
        if ch == "{":
            out.append(_Piece(_join(self.row(stop="}")), "atom"))
        elif ch in "^_":
            self.script(ch, out)
        elif ch in "-+=<>":
            out.append(_Piece({"-": "−"}.get(ch, ch), "bin"))
        elif ch in "([":
            out.append(_Piece(ch, "open"))
        elif ch in ")]":
            out.append(_Piece(ch, "close"))
        elif ch in ",;":
            out.append(_Piece(ch, "punct"))
        elif ch == "~":
            out.append(_Piece(" ", "space"))
        elif ch == "'":
            out.append(_Piece("′", "atom"))
        else:
            out.append(_Piece(ch, "atom"))

    def script(self, mark: str, out: list) -> None:
        body = self.argument()
        base = out.pop() if out and out[-1].kind not in ("space", "bin", "punct", "open") else _Piece("", "atom")
        if mark == "_" and body.startswith("["):
            out.append(_Piece(base.text + body, "atom"))     # a_{[…, i]}: an index, written a[…, i]
            return
        table = _SUP if mark == "^" else _SUB
        tight = body.replace(" ", "")
        small = "".join(table.get(ch, "") for ch in tight)
        if tight and len(small) == len(tight):
            text = base.text + small
        elif len(tight) == 1 or (mark == "_" and re.fullmatch(r"[A-Za-z0-9]+", tight)):
            text = f"{base.text}{mark}{tight}"
        else:
            inner = _RELATION.sub(r"\1", body) if mark == "_" else body     # Σ_(j≤i): a subscript is tight
            text = f"{base.text}{mark}({inner})"
        out.append(_Piece(text, base.kind if base.kind in ("word", "large", "close") else "atom"))

    def command(self, name: str, out: list) -> None:
        if name in ("mathrel", "mathbin"):                    # \mathrel{+}= is one relation, +=
            text = self.argument()
            if self.peek() is not None and self.peek()[2] == "=":
                self.k += 1
                text += "="
            out.append(_Piece(text, "bin"))
            return
        if name in _IGNORED:
            return
        if name in _SPACES:
            out.append(_Piece(" ", "space"))
        elif name == "\\":                                   # a line break outside cases: a clause
            out.append(_Piece(";", "punct"))
        elif name in _GREEK:
            out.append(_Piece(_GREEK[name], "atom"))
        elif name in _BINARY:
            out.append(_Piece(_BINARY[name], "bin"))
        elif name in _SYMBOL:
            out.append(_Piece(_SYMBOL[name], "open" if name == "{" else "close" if name == "}" else "atom"))
        elif name in _PREFIX:
            out.append(_Piece(_PREFIX[name], "prefix"))
        elif name in _FENCE:
            text = _FENCE[name]
            out.append(_Piece(text, "open" if name.startswith("l") else "close" if name.startswith("r") else "atom"))
        elif name in _WORDS:
            out.append(_Piece(name, "word"))
        elif name in _LARGE:
            out.append(_Piece(_LARGE[name], "large"))
        elif name == "operatorname":
            out.append(_Piece(self.argument().replace(" ", ""), "word"))
        elif name in _STYLE:
            out.append(_Piece(self.argument(), "atom"))
        elif name == "text":
            out.append(_Piece(_text(self.raw_argument()), "text"))
        elif name in _ACCENT:
            body = self.argument()
            out.append(_Piece(unicodedata.normalize("NFC", body + _ACCENT[name]), "atom"))
        elif name in ("frac", "tfrac", "dfrac"):
            num, den = self.argument(), self.argument()
            num = f"({num})" if _top(num, (" + ", " − ", ",", " = ", " < ", " > ", " ≤ ", " ≥ ")) else num
            den = f"({den})" if _top(den, (" ", ",")) or _coefficient(den) else den
            tight = name == "tfrac" or not (_top(num, (" ",)) or _top(den, (" ",)))
            text = f"{num}/{den}" if tight else f"{num} / {den}"
            if out and out[-1].kind == "word":
                text = f"({text})"                   # log(a/(1 − a)), not log a/(1 − a)
            out.append(_Piece(text, "atom"))
        elif name == "sqrt":
            body = self.argument()
            out.append(_Piece("√" + (f"({body})" if _top(body, (" ", ",", "/")) else body), "atom"))
        elif name == "begin":
            self.raw_argument()
            out.append(_Piece(self.cases(), "atom"))
        elif name == "end":
            self.raw_argument()
        else:
            out.append(_Piece(name, "word"))     # an unknown command: its name, never a backslash

    def cases(self) -> str:
        """\\begin{cases} X & cond \\\\ Y & \\text{otherwise} \\end{cases} as (X if cond, else Y)."""
        rows = []
        while self.peek() is not None:
            value = _join(self.row(stops=("&", "\\", "end")))
            cond = ""
            if self.peek() is not None and self.peek()[2] == "&":
                self.k += 1
                cond = _join(self.row(stops=("\\", "end")))
            rows.append((value, cond))
            tok = self.take()
            if tok is None or tok[0] == "end":
                self.raw_argument()
                break
        said = [f"else {v}" if c in ("otherwise", "") else f"{v} if {c}" for v, c in rows]
        return _CASES[0] + (" ".join(said) if len(said) == 2 else ", ".join(said)) + _CASES[1]


def _text(raw: str) -> str:
    """\\text{...}: the words as typed, escaped characters unescaped."""
    return re.sub(r"\\([{}_%&$#])", r"\1", raw).replace("~", " ")


def _top(text: str, parts: tuple) -> bool:
    """Whether one of `parts` occurs outside all brackets in `text` (a + b, not (a + b) or f(a, b)):
    what decides a fraction's or a root's parentheses."""
    depth = 0
    for k, ch in enumerate(text):
        depth += (ch in _OPEN) - (ch in _CLOSE)
        if depth == 0 and any(text.startswith(p, k) for p in parts):
            return True
    return False


def _coefficient(text: str) -> bool:
    """A number times something (2c, 2√a): a denominator that needs parentheses (1/(2c), not 1/2c)."""
    m = re.match(r"\d+(.)", text)
    return bool(m) and m.group(1) not in _SUP.values() and not m.group(1).isdigit()


def _join(pieces: list) -> str:
    """A row's pieces as text: operators spaced, a sign against its operand, a word apart from its
    argument unless that is in parentheses."""
    out = ""
    prev = None
    for p in pieces:
        kind = p.kind
        if kind == "bin" and p.text in ("−", "+", "±", "~") and (prev is None or prev.kind in (
                "bin", "open", "punct", "word", "large", "prefix", "text")):
            kind = "sign"
        if kind == "space":
            if prev is not None and prev.kind not in ("open", "prefix"):   # ( a, −  a, ∂ x: no space
                out += " "
            continue
        if kind == "close":
            out = out.rstrip(" ")
        if kind == "bin":
            out += f" {p.text} "
        elif kind == "punct":
            out += p.text + " "
        else:
            if prev is not None and prev.kind in ("word", "large") and kind not in ("open", "close", "punct") \
                    and not out.endswith(" "):
                out += " "
            out += p.text
        prev = _Piece("", "prefix") if kind == "sign" else p    # a sign binds to what follows, as ∂ does
    return _tidy(out)


def _tidy(text: str) -> str:
    text = re.sub(r" {2,}", " ", text)
    text = re.sub(r"([(\[⟨⌊⌈]) ", r"\1", text)
    text = re.sub(r" ([)\]⟩⌋⌉,;])", r"\1", text)
    text = re.sub(r"(?<![\w./])(\d+) (?=\(|[^\W\d_](?!\w))", r"\1", text)   # 2 (a − b), 2 y: 2(a − b), 2y
    return text.strip()


def unicode(latex: str) -> str:
    """LaTeX (the subset the records use) as plain Unicode: \\frac{\\bar{g}}{b} -> ḡ / b."""
    reader = _Reader(latex)
    text = _join(reader.row())
    text = re.sub(r"^(\S+ = )" + _CASES[0] + "([^" + _CASES + "]*)" + _CASES[1] + "$", r"\1\2", text)
    return unicodedata.normalize("NFC", text.replace(_CASES[0], "(").replace(_CASES[1], ")"))
