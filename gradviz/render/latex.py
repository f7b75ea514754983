"""Formulas for the browser: LaTeX -> MathML with latex2mathml, which browsers typeset natively.

The op records write their formulas in LaTeX; the step panel shows them through here
(one math typeface, correct spacing, no web font and no script). Graphviz labels,
which cannot hold MathML, show the same formulas as plain Unicode (`unicode`, read
from the MathML), so a diagram and the panel never disagree.

User text never passes through the converter (it copies \\text{...} into the page
unescaped): a formula names a user's tensor with `name(k)`, a placeholder that
`mathml(latex, names)` replaces by the k-th name, escaped, after conversion.
"""
from __future__ import annotations

import re
import unicodedata
import xml.etree.ElementTree as ET
from functools import lru_cache

from html import escape as esc
from html import unescape

from ..naming import dotted
from ..ops.display_math import MARKER, WHEN, fill  # noqa: F401  (fill: the panel's, from the ops layer)

_MARK = "\u2063"   # an invisible separator: never typed in a formula, survives the converter as text


def name(k: int) -> str:
    """The LaTeX placeholder for the k-th entry of `names` in `mathml(latex, names)`."""
    return r"\text{" + f"{_MARK}{k}{_MARK}" + "}"


# A function name the converter writes as a bare <mi> (\tanh, \log, \exp, ...) sits against its
# argument (`tanhv₂`): TeX puts a thin space there, so the name gets a function application, U+2061,
# carrying that space, except before an opening parenthesis (TeX's `\tanh(x)` has none); a name with
# a power (`\tanh^2 a`) gets it after the power.
_FUNCTION = r"<mi>(?:arc(?:cos|sin|tan)|cosh?|sinh?|tanh?|coth?|cot|csc|sec|exp|log|ln|lg|deg|dim|hom|ker)</mi>"
_APPLIED = re.compile(r"(?<!<msup>)(?<!<msub>)(?<!<msubsup>)(" + _FUNCTION + r"|<msup>" + _FUNCTION +
                      r"(?:(?!</?msup>).)*</msup>)(?!(?:<mrow>)?<mo[^>]*>&#x00028;)")
APPLY = '<mo lspace="0" rspace="0.1667em">&#x02061;</mo>'
# \operatorname{softplus} comes out as <mo>softplus</mo>, which MathML spaces as an unknown operator,
# a thick space on each side (`tanh( softplus h)`); TeX sets a function name with no space before it
# and a thin one after, none before a parenthesis (`stack(a, b)`)
_WORD_OPERATOR = re.compile(r"<mo>([A-Za-z]{2,})</mo>")
_WORD_BEFORE_PARENTHESIS = re.compile(r"<mo>([A-Za-z]{2,})</mo>(?=<mo stretchy=\"false\">&#x00028;)")
# and a product written before a function name (`a \tanh a`) keeps TeX's thin space: `a tanh a`, not `atanh a`
_NAME_AFTER_OPERAND = re.compile(r"(</mi>|</mn>|</mtext>|</mrow>|</msub>|</msup>|<mo stretchy=\"false\">&#x00029;</mo>)(" + _FUNCTION + ")")


@lru_cache(maxsize=4096)
def _convert(latex: str, display: bool) -> str:
    from latex2mathml.converter import convert
    out = convert(latex, display="block" if display else "inline")
    out = _APPLIED.sub(lambda m: m.group(1) + APPLY, out)
    out = _WORD_BEFORE_PARENTHESIS.sub(r'<mo lspace="0" rspace="0">\1</mo>', out)
    out = _WORD_OPERATOR.sub(r'<mo lspace="0" rspace="0.1667em">\1</mo>', out)
    out = _NAME_AFTER_OPERAND.sub(r'\1<mspace width="0.1667em"></mspace>\2', out)
    return out.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1)


def mathml(latex: str, names: tuple = (), display: bool = False) -> str:
    """<math> for a LaTeX formula whose placeholders `name(k)` stand for names[k]. A formula
    the converter cannot read is shown as escaped plain text, never as raw markup."""
    try:
        out = _convert(latex, display)
    except Exception:   # latex2mathml raises its own exception types for input it cannot parse
        return f'<span class="gv-math-fallback">{esc(latex)}</span>'
    if names:   # each placeholder in one pass (a replace per name costs a scan of the whole formula each)
        out = _PLACEHOLDER.sub(lambda m: _identifier(str(names[int(m.group(1))])) if int(m.group(1)) < len(names)
                               else m.group(), out)
    return _ACCENT_OVER_INDEX.sub(r"<msub><mover\1>\2\4</mover>\3</msub>", out) if "<mover" in out else out


_PLACEHOLDER = re.compile(f"<mtext>{_MARK}(\\d+){_MARK}</mtext>")


# An accent over a subscripted name (\dot{t₂}) goes on its letter, as ṫ₂ is written: over the whole
# msub it sits between the letter and the index.
_ACCENT_OVER_INDEX = re.compile(r'<mover((?: accent="true")?)><mrow><msub>(<mi>[^<]*</mi>)(<mn>\d+</mn>)</msub></mrow>(<mo>[^<]*</mo>)</mover>')


_SUBSCRIPTED = re.compile(r"^(.*?)([₀-₉]+)$")
_LETTER_DIGITS = re.compile(r"^[A-Za-z][0-9]+$")


@lru_cache(maxsize=4096)   # every panel names the same few tensors again
def _identifier(text: str) -> str:
    """A tensor's symbol as MathML: y₂ as y with a subscript 2 (one italic letter, a real index)."""
    m = _SUBSCRIPTED.match(text)
    if m and m.group(1):
        index = m.group(2).translate(str.maketrans("₀₁₂₃₄₅₆₇₈₉", "0123456789"))
        return f"<msub><mi>{esc(m.group(1))}</mi><mn>{index}</mn></msub>"
    if _LETTER_DIGITS.match(text):   # z2, W1: a variable, italic like the one-letter ones (MathML sets
        return f'<mi class="gv-var">{esc(text)}</mi>'   # a several-character <mi> upright, as a word)
    return f"<mi>{esc(text)}</mi>"


# A long formula's clauses (`A:\; B,\quad s = 2,\ q = 1`) become one <math> each, with the
# punctuation between them as text, so the line can wrap there (MathML does not break lines).
_CLAUSE = re.compile(r":\\; |,\\quad |,\\ ")


@lru_cache(maxsize=4096)
def _top_level(latex: str, separator: re.Pattern) -> tuple:
    """(start, end) of each match of `separator` outside braces, \\left…\\right and \\begin…\\end, in
    order. Kept: it reads a character at a time, and every panel of a kind asks it of one formula."""
    depth, k, found = 0, 0, []
    while k < len(latex):
        if latex[k] == "{" or latex.startswith((r"\left", r"\begin"), k):
            depth += 1
        elif latex[k] == "}" or latex.startswith((r"\right", r"\end"), k):
            depth -= 1
        elif depth == 0:
            m = separator.match(latex, k)
            if m:
                found.append((m.start(), m.end()))
                k = m.end()
                continue
        k += 1
    return tuple(found)


def clauses(latex: str) -> list:
    """[(LaTeX, the punctuation after it)] split at the top-level clause breaks."""
    out, start = [], 0
    for first, end in _top_level(latex, _CLAUSE):
        out.append((latex[start:first], latex[first]))
        start = end
    out.append((latex[start:], ""))
    return [(piece, sep) for piece, sep in out if piece.strip()] or [(latex, "")]


_DEFINES = re.compile(r",\\; ")


def where_split(latex: str) -> tuple:
    """(the formula, its definitions) split at the first top-level `,\\; `: a VJP such as
    `r \\odot (\\hat{g} - ...),\\; \\hat{g} = \\bar{g} \\odot w` defines its helpers after it, and the
    panel writes them after the values, as "where ĝ = ḡ ⊙ w"; (latex, "") when it defines nothing."""
    for first, end in _top_level(latex, _DEFINES):
        if latex[:first].strip():
            return latex[:first], latex[end:]
    return latex, ""


# a clause longer than this (as text) may be wider than a narrow panel: it gets a box of its own that
# scrolls sideways, as a wide grid does, instead of widening the panel
WIDE_CLAUSE = 48


_EQUALS = re.compile(r"\s*=\s*")


def terms(latex: str) -> list:
    """`latex` split before each ` + ` and ` - ` that stands outside braces and brackets: the terms of a
    sum, the first without its sign (b[o] + Σ w[o, i, k] x[n, i, sp + dk − q] is two terms)."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(latex):
        depth += (ch in "{[(") - (ch in "}])")
        if depth == 0 and ch in "+-" and latex[k - 1:k] == " " and latex[k + 1:k + 2] == " " and latex[start:k].strip():
            out.append(latex[start:k])
            start = k
    return out + [latex[start:]]


def mathml_clauses(latex: str, names: tuple = ()) -> str:
    """`mathml` of each clause, joined by their punctuation (one <math> when there is one clause). A wide
    clause is also split after each top-level `=`, so a long right side starts a line of its own
    (loss = / − Σ w ⊙ (…)) rather than running past the panel's edge, and a wide side between its
    terms (a convolution's b[o] / + Σ w[o, i, k] x[…]): the line wraps where the panel needs it."""
    def box(piece: str, sep: str) -> str:   # a wide one keeps its punctuation in its box
        math = mathml(piece, names) + sep
        return math if len(unicode(piece, names)) <= WIDE_CLAUSE else f'<span class="gv-mathwide">{math}</span>'

    def side(piece: str, sep: str) -> str:
        parts = terms(piece) if len(unicode(piece, names)) > WIDE_CLAUSE else [piece]
        return " ".join(box(part, sep if k == len(parts) - 1 else "") for k, part in enumerate(parts))

    def clause(piece: str, sep: str) -> str:
        if len(unicode(piece, names)) <= WIDE_CLAUSE:
            return box(piece, sep)
        sides, start = [], 0
        for first, end in _top_level(piece, _EQUALS):
            sides.append(piece[start:first] + " =")
            start = end
        sides.append(piece[start:])
        if len(sides) == 1 or not all(side.strip(" =") for side in sides):
            return box(piece, sep)
        return " ".join(side(one, sep if k == len(sides) - 1 else "") for k, one in enumerate(sides))
    return " ".join(clause(piece, sep) for piece, sep in clauses(latex))


# -- the op records' formulas -----------------------------------------------------------
# A record's LaTeX names its output `$c`, its inputs `$0`, `$1`, ... and its parameters
# `$alpha`, `$dim`, ...; `fill` (the ops layer's, ops.display_math) puts in what this node had: the
# learner's names, the constants it used, or the record's symbols.


def markers(template: str) -> set:
    """The markers a record's LaTeX uses: 'c', '0', '1', ... and parameter names."""
    return set(MARKER.findall(template)) | {flag for flag, _ in WHEN.findall(template)}


# an input the call left out (a convolution without a bias, a norm without its weight): its term, or
# its factor, is dropped from the formula
ABSENT = r"\varnothing"
_ABSENT_TERM = re.compile(r"\s*(?:\+|\\odot)\s*\{\\varnothing\}(?:\[[^\]]*\])?"
                          r"|\{\\varnothing\}(?:\[[^\]]*\])?\s*(?:\+|\\odot)\s*")


def without_absent(filled: str) -> str:
    """A filled formula less the terms and factors of the inputs the call left out (x ⋆ w + b without b:
    x ⋆ w; x̂ ⊙ w + b without w and b: x̂)."""
    return _ABSENT_TERM.sub("", filled)


def number(v) -> str:
    """A constant inside a formula: 2 for 2.0, 0.5, 1e-05; tuples as (0, 1)."""
    if isinstance(v, bool):
        return r"\text{" + str(v) + "}"
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return number(v[0])               # dim=(0,) reads dim 0
        return "(" + ",\\, ".join(number(x) for x in v) + ")"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return {"nan": r"\text{nan}", "inf": r"\infty", "-inf": r"-\infty"}[str(v)]
        if v == int(v) and abs(v) < 1e6:
            return str(int(v))
        mantissa, _, exponent = f"{v:.4g}".partition("e")
        if not exponent:
            return mantissa
        power = "10^{" + str(int(exponent)) + "}"                # 1e-05 reads 10⁻⁵, 2.5e-07 reads 2.5 × 10⁻⁷
        if mantissa in ("1", "-1"):
            return mantissa[:-1] + power
        return mantissa + r" \times " + power
    return r"\text{" + str(v).replace("\\", "").replace("{", "").replace("}", "") + "}"


def name_index(text: str) -> int | None:
    """k when `text` is the placeholder name(k), else None."""
    if text.startswith(r"\text{" + _MARK) and text.endswith(_MARK + "}"):
        return int(text[len(r"\text{" + _MARK):-len(_MARK + "}")])
    return None


# -- the learner's constants, written as a reader expects them ----------------------------
# After `fill`, a constant stands in braces ({2}). A product with a scalar number reads as a
# coefficient (2a, not a ⊙ 2), and an exponent such as {3} - 1 is worked out (a², not a^{3 − 1}).
# A coefficient that a name cannot follow directly is joined with a dot: 0 (0x would read as a hex
# literal, 0t₁₂ as one word) and a power of ten (10⁻⁸ · x, 2.5 × 10⁻⁷ · x).
_NUMBER = re.compile(r"\{(-?\d+(?:\.\d+)?|-?(?:\d+(?:\.\d+)? \\times )?10\^\{-?\d+\})\}$")
_DOTTED = re.compile(r"\{(-?0(?:\.0+)?|.*10\^\{-?\d+\})\}$")
_PRODUCT = re.compile(r" \\(?:odot|cdot) |(?<=\})\\, ")
_ENDS = (")", ",", "+", "-", "=", r"\right", r"\quad", ";", r"\;", "}", "&", "\\\\", r"\text")


def _group_before(s: str, end: int) -> int:
    """Where the brace group (or \\bar{g}-like command with its group) ending at `end` starts; -1: none."""
    if end == 0 or s[end - 1] != "}":
        return -1
    depth = 0
    for i in range(end - 1, -1, -1):
        depth += {"}": 1, "{": -1}.get(s[i], 0)
        if depth == 0:
            m = re.search(r"\\[A-Za-z]+$", s[:i])     # \bar{g}, \sqrt{...}: the command goes with its group
            return m.start() if m else i
    return -1


def _group_after(s: str, start: int) -> int:
    """The end of the brace group (or \\bar{g}-like command with its group) starting at `start`; -1: none."""
    command = re.match(r"\\[A-Za-z]+(?=\{)", s[start:])
    if command:
        start += command.end()
    if start >= len(s) or s[start] != "{":
        return -1
    depth = 0
    for i in range(start, len(s)):
        depth += {"{": 1, "}": -1}.get(s[i], 0)
        if depth == 0:
            return i + 1
    return -1


def unit_denominators(latex: str) -> str:
    """\\frac{X}{{1}} as X: a constant 1 the learner left at its default (softplus's beta) divides nothing."""
    start = 0
    while (i := latex.find(r"\frac{", start)) >= 0:
        end = _group_after(latex, i + len(r"\frac"))
        if end > 0 and latex.startswith("{{1}}", end):
            latex = latex[:i] + latex[i + len(r"\frac"):end] + latex[end + len("{{1}}"):]
        start = i + 1
    return latex


def coefficients(latex: str) -> str:
    """`X \\odot {2}` and `{2} \\odot X` (or \\cdot) as `{2}\\, X` when the number is a whole factor."""
    pos = 0
    while True:
        m = _PRODUCT.search(latex, pos)
        if m is None:
            return latex
        lo = _group_before(latex, m.start())
        hi = _group_after(latex, m.end())
        pos = m.end()
        if lo < 0 or hi < 0:
            continue
        left, right = latex[lo:m.start()], latex[m.end():hi]
        before = latex[:lo].rstrip()
        after = latex[hi:].lstrip()
        if _NUMBER.match(right) and (not after or after.startswith(_ENDS)) and not before.endswith(("^", "_")):
            left, right = right, left
        elif not (_NUMBER.match(left) and not before.endswith(("^", "_", r"\,"))) or (
                m.group(0) == r"\, " and left not in ("{1}", "{-1}") and not _DOTTED.match(left)):
            continue
        if left == "{1}":                                   # 1 a is a
            joined = right
        elif left == "{-1}":
            joined = "-" + right
        else:
            joined = left + (r" \cdot " if _DOTTED.match(left) else r"\, ") + right
        latex = latex[:lo] + joined + latex[hi:]
        pos = lo + len(joined) - len(right)


# what a record's LaTeX writes as words or accents, never as index letters: \text{a transposed
# convolution}, \operatorname{diag}, \bar{g}
_NOT_INDICES = re.compile(r"(\\(?:text|operatorname|mathrm|mathbf|bar|hat|tilde|dot|vec|overline)\s*\{[^{}]*\})")


@lru_cache(maxsize=1024)
def primed_indices(template: str, letters: frozenset) -> str:
    """The record's index letters that are also names of the formula's tensors written primed: with an
    output called o, a convolution reads o[n, o′, p] = Σ w[o′, i, k] …, so o means the tensor only.
    Euler's e (exp_for_euler) and the loss L of ∂L are never indices."""
    letters = sorted(letters - {"e", "L"})
    if not letters:
        return template
    index = re.compile(r"(?<![\\$\w'])([" + "".join(letters) + r"])(?![\w'])")
    pieces = _NOT_INDICES.split(template)
    return "".join(piece if k % 2 else index.sub(r"\1'", piece) for k, piece in enumerate(pieces))


# Euler's number in a record's LaTeX (e^{x}, never a marker or a command's letter)
_EULER = re.compile(r"(?<![A-Za-z\\$])e\^(?=\{)")


def exp_for_euler(template: str) -> str:
    """e^{x} as \\exp(x): for a recording where a tensor is called e, in whose formulas eᵉ would read
    as Euler's number to its own power, or the tensor's name as the constant."""
    out, pos = [], 0
    for m in _EULER.finditer(template):
        end = _group_after(template, m.end())
        if m.start() < pos or end < 0:
            continue
        out.append(template[pos:m.start()] + r"\exp\left(" + template[m.end() + 1:end - 1] + r"\right)")
        pos = end
    return "".join(out) + template[pos:]


_EXPONENT = re.compile(r"\^\{\{(-?\d+(?:\.\d+)?)\} - 1\}")
_ZEROTH = re.compile(r"\\, (\{[^{}]*\}|\{\\text\{[^{}]*\}\})\^\{0\}")
# p x^{p − 1} with p = 0 is 0 (x ** 0 sends zeros, also where x = 0 and x⁻¹ is not finite)
_ZERO_POWER = re.compile(r"\{0\}\\, (\{[^{}]*\}|\{\\text\{[^{}]*\}\})\^\{\{0\} - 1\}")
# a first power of anything but a tensor's name (the p = 1 of a norm's default): x ** 1 keeps its
# exponent, or its PowBackward0 node would read t = x, an identity that hides the op
_FIRST_POWER = re.compile(r"(?<!" + _MARK + r"\}\})\^\{\{1\}\}")


def exponents(latex: str) -> str:
    """x^{{3} - 1} as x^{2}, x^{{2} - 1} as x, x^{{0.5} - 1} as x^{-0.5}, a factor x^{{1} - 1}
    dropped and 0 x^{{0} - 1} as 0 (exponents the learner passed); a constant's ^{{1}} dropped."""
    def work(m):
        k = float(m.group(1)) - 1
        return "" if k == 1 else "^{" + number(k) + "}"
    latex = _FIRST_POWER.sub("", _EXPONENT.sub(work, _ZERO_POWER.sub("{0}", latex)))
    return _ZEROTH.sub("", latex)


_SIGNS = ((re.compile(r"-\s*\{-"), "+{"), (re.compile(r"\+\s*\{-"), "-{"), (re.compile(r"-\s*-"), "+"),
          (re.compile(r"\+\s*-"), "-"), (re.compile(r"(^|= )\+\s*"), r"\1"))


def signs(latex: str) -> str:
    """a − −2b as a + 2b, −−ḡ as ḡ (a negative constant after a minus)."""
    for pattern, repl in _SIGNS:
        latex = pattern.sub(repl, latex)
    return latex


# -- MathML as plain Unicode (Graphviz labels, captions, tests) -----------------------------
# A row is read left to right; two operands side by side are a product, written with a space
# (ḡ Mᵀ) or, after a number, without one (2x); operators get spaces around them (a + b).
_SUP = dict(zip("0123456789+-−=()abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW⊤⁻′*",
               "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁼⁽⁾ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂᵀ⁻′*"))
_SUB = dict(zip("0123456789+-−=()aeijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₋₌₍₎ₐₑᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
_ACCENTS = {"¯": "\u0304", "‾": "\u0304", "^": "\u0302", "ˆ": "\u0302", "~": "\u0303", "˜": "\u0303", "˙": "\u0307"}
_SPACED = {"=", "+", "−", "⊙", "·", "⋆", "≤", "≥", "<", ">", "∈", "←", "→", "≠", "×", "↔", "≈"}
_LARGE = {"∑": "Σ", "∏": "Π", "max": "max", "min": "min", "mean": "mean", "median": "median", "argmax": "argmax",
          "argmin": "argmin"}
_UNARY_AFTER = {"=", "(", "[", ",", "+", "−", "⊙", "·", "≤", "≥", "<", ">", "{", "|", ":"}
_OPEN, _CLOSE = set("([{|‖⌊⌈"), set(")]}|‖⌋⌉")


_NAME_IN = re.compile(r"[^\W\d_][^\W_]")   # a name of two characters or more: z2, img, not −w or 2a


def _script(text: str, table: dict) -> str | None:
    """`text` in super- or subscript letters, when it has them all; None for a learner's name of more than
    one character, which raised would read as letters of its own (eᶻ² as e to the z², not e to the z2)."""
    if table is _SUP and _NAME_IN.search(text):
        return None
    return "".join(table[ch] for ch in text) if text and all(ch in table for ch in text) else None


def _compound(text: str) -> bool:
    """Needs parentheses as a numerator or denominator: a + b, 2y, a, b (not (a + b) or √(a + b))."""
    if _wrapped(text):
        return False
    return any(ch in text for ch in " +−-/,") or bool(re.match(r"\d", text) and re.search(r"[^\W\d_]", text))


def _wrapped(text: str) -> bool:
    """One parenthesised group, possibly under a root or a function: (a + b), √(σ² + ε), log(1 + eᵃ)."""
    inner = re.sub(r"^(√|[a-z]+(?=\())", "", text)   # log(1 + eᵃ) is one group as much as (1 + eᵃ) is
    if not (inner.startswith("(") and inner.endswith(")")):
        return False
    depth = 0
    for k, ch in enumerate(inner):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0 and k < len(inner) - 1:
            return False
    return True


def _kind(el) -> str:
    """num, word (an operator written as a word: log, clamp), op, open, close, space, text or atom."""
    tag = el.tag
    if tag == "mrow" and len(el) == 1:
        return _kind(el[0])
    if tag == "mo" and el.text == "\u2061":
        return "space"                      # a function application: the thin space after tanh
    if tag == "mn":
        return "num"
    if tag == "mi" and (el.text or "") in (":", "¬", ";", "!"):
        return "op"                         # punctuation the converter wrote as an identifier
    if tag == "mi" and el.get("mathvariant") == "normal" and len(el.text or "") == 1:
        return "letter"                     # \mathrm{cond}: one letter per <mi>, one word
    if tag in ("msub", "msup", "msubsup") and len(el) and el[0].tag == "mo" and el[0].text in ("|", "‖"):
        return "op"                         # the closing bar of |a|ₚ
    if tag == "mo":
        t = el.text or ""
        if t in _LARGE or (t.isalpha() and len(t) > 1):
            return "word"
        if t in ("|", "‖"):
            return "op"                     # a bar opens or closes: no space either side
        return "open" if t in _OPEN and el.get("form") != "postfix" else "close" if t in _CLOSE else "op"
    if tag == "mspace":
        return "space"
    if tag == "mtext":
        return "text"
    return "atom"


def _long_name(el) -> bool:
    """A name of more than one letter (a learner's img, fc.weight), written apart from its coefficient."""
    while el.tag == "mrow" and len(el) == 1:
        el = el[0]
    return el.tag == "mi" and len((el.text or "").rstrip("′")) > 1   # a′ is one letter


def _row(kids) -> str:
    out, previous = "", None
    for k in kids:
        kind, piece = _kind(k), None
        if k.tag == "mo" and k.text in ("−", "+") and (previous is None or (
                previous[0] in ("op", "open", "word") and previous[1] in _UNARY_AFTER | _OPEN | {""}
                or previous[0] == "word")):
            piece = k.text                                  # a sign, not a binary operator
        else:
            piece = _plain(k)
        if kind == "space":
            if previous is not None and previous[0] == "num":
                continue                                    # 2\,x is 2x: the number is a coefficient
            out += " "
            continue
        if previous is not None and (kind in ("atom", "num", "word") or kind == "letter" != previous[0]) and \
                previous[0] in ("atom", "close", "letter") and not out.endswith(" "):
            out += " "                                      # ḡ Mᵀ: a product of two operands
        elif previous is not None and previous[0] == "num" and kind == "atom" and _long_name(k):
            out += " "                                      # 2 img, but 2x
        out += piece
        previous = (kind, (k.text or "") if k.tag == "mo" else "")
    return out


def _plain(el) -> str:
    tag = el.tag
    kids = list(el)
    if tag == "mo" and el.text == "\u2061":
        return " "
    if tag in ("mi", "mn", "mtext"):
        return (el.text or "").replace("\u00a0", " ")
    if tag == "mo":
        t = el.text or ""
        if el.get("fence") == "true" and t == "{":
            return ""                       # the brace of cases: the rows say enough
        if t in _LARGE:
            return " " + _LARGE[t] + " "
        if t.isalpha() and len(t) > 1:     # log x, sign x; stack(a, b): none where _convert set no space
            return t if el.get("rspace") == "0" else t + " "
        return f" {t} " if t in _SPACED else ", " if t == "," else t
    if tag == "mspace":
        return " "
    if tag in ("msup", "msub", "munder", "mover", "munderover", "msubsup"):
        base = _plain(kids[0]).strip()
        first = _plain(kids[1]).strip() if len(kids) > 1 else ""
        if tag == "mover" and first in _ACCENTS:
            if len(base) > 1 and _ACCENTS[first] == "\u0304":
                # a combining bar lands on the last character only (over a digit, off to one side); the
                # records put a bar over an input only to mean its mean, so say that: mean(z2)
                return f"mean({base})"
            if _ACCENTS[first] == "\u0307":
                return dotted(base)             # a tangent, written as every caption writes it: ẋ, ṫ₁
            return base + _ACCENTS[first]
        if tag == "msup":
            sup = _script(first, _SUP)
            return base + (sup if sup is not None else "^" + (f"({first})" if len(first) > 1 else first))
        if base in _LARGE.values() and first:
            out = f" {base} over {first}" if tag != "mover" else base
            return out + (f" to {_plain(kids[2]).strip()}" if len(kids) > 2 else "") + " of "
        if tag in ("msub", "munder", "msubsup"):
            if first.startswith("["):
                return base + first             # a_{[…, i]}: an index, written a[…, i]
            sub = _script(first.replace(" ", ""), _SUB)
            out = base + (sub if sub is not None else "_" + (f"({first})" if len(first) > 1 else first))
            if tag == "msubsup":
                second = _plain(kids[2]).strip()
                sup = _script(second, _SUP)
                out = base + (sup if sup is not None else "^" + second) + out[len(base):]
            return out
        return base + "".join(_plain(k) for k in kids[1:])
    if tag == "mfrac":
        num, den = (_plain(k).strip() for k in kids[:2])
        return (f"({num})" if _compound(num) else num) + "/" + (f"({den})" if _compound(den) else den)
    if tag in ("msqrt", "mroot"):
        only = kids[0] if len(kids) == 1 else None
        while only is not None and only.tag == "mrow" and len(only) == 1:
            only = only[0]
        if only is not None and only.tag == "mfrac":   # √ of a fraction: its parentheses are the root's
            num, den = (_plain(k).strip() for k in list(only)[:2])
            den = f"({den})" if _compound(den) else den
            return f"√({num} / {den})" if " " in num else f"√({num}/{den})"
        inner = _plain(kids[0]).strip() if len(kids) == 1 else _row(kids).strip()
        return "√" + (f"({inner})" if _compound(inner) or len(inner) > 1 else inner)
    if tag == "mtable":
        rows = []
        for tr in kids:
            cells = [_plain(td).strip() for td in tr]
            if len(cells) == 2:
                cond = cells[1]
                rows.append(f"{cells[0]} {cond}" if cond.startswith(("otherwise", "if ")) else f"{cells[0]} if {cond}")
            else:
                rows.append(" ".join(cells))
        return "{ " + "; ".join(rows) + " }"
    return (el.text or "") + _row(kids)


def text(markup: str) -> str:
    """The Unicode a reader sees in a <math> element (or in clauses of them, with their punctuation):
    2x², ∂L/∂a, Σ over dim 0 of a, ḡ ⊙ b."""
    pieces = re.split(r"(<math.*?</math>)", markup, flags=re.S)
    if len(pieces) > 3:
        return "".join(_one_text(p) if p.startswith("<math") else unescape(re.sub(r"<[^>]+>", "", p))
                       for p in pieces)   # between the clauses: their punctuation (a wide one's box is markup)
    return _one_text(markup)


def _one_text(markup: str) -> str:
    try:
        root = ET.fromstring(markup)
    except ET.ParseError:
        return re.sub(r"<[^>]+>", "", markup)
    out = re.sub(r"\s+", " ", _plain(root)).strip()
    out = re.sub(r"\( | \)", lambda m: m.group(0).strip(), out)
    out = re.sub(r"\[ | \]", lambda m: m.group(0).strip(), out)
    out = re.sub(r"\b(log|exp|sin|cos|tan|tanh|clamp|view|expand|permute|unsqueeze|squeeze|flip|diag|softmax|"
                 r"rowsum|conv|mean|sign|gather|reshape|round|max|min|split|unbind|cat) (?=[(ᵀ⊤])", r"\1", out)   # log(a), convᵀ(…)
    return unicodedata.normalize("NFC", re.sub(r" ([,;])", r"\1", out))   # g + ̄ as the one letter ḡ


_PLACED = re.compile(f"{_MARK}(\\d+){_MARK}")


def unicode_shape(latex: str, names: tuple = ()) -> str:
    """About unicode(latex, names) with each name written as that many x's, for sizing a label before
    it is drawn: the formula's text is read once per formula with its placeholders left in, then each
    takes its name's length (a long graph repeats one formula with other names: this never parses it
    again). Its length and the spaces between its terms are the label's."""
    try:
        bare = _bare_text(latex)
    except Exception:   # latex2mathml's own exception types: the label shows the formula as plain text
        return unicode(latex, names)
    return _PLACED.sub(lambda m: "x" * len(str(names[int(m.group(1))])) if int(m.group(1)) < len(names)
                       else m.group(0), bare)


@lru_cache(maxsize=4096)
def _bare_text(latex: str) -> str:
    return text(_convert(latex, False))


@lru_cache(maxsize=8192)     # a diagram's label, the panel and the caption each ask for one formula
def unicode(latex: str, names: tuple = ()) -> str:
    """A formula (with placeholders `name(k)`) as plain Unicode: `mathml`'s text."""
    return text(mathml(latex, names))
