"""Text for the step panel: values as short strings, formulas as MathML.

The op records write their formulas as Unicode strings ("c = a ⊙ b", "ḡ ⊙ b ⊙ aᵇ⁻¹",
"Σ ḡ over the expanded axes"). Browsers (Chromium, Firefox, Safari) render MathML
Core natively, so a small tokenizer turns those strings into <math> without any
network font or CDN script; prose inside a formula stays prose (<mtext>).
Everything a user typed (tensor names) is escaped here and nowhere else needs to.
"""
from __future__ import annotations

import html
import re

from .. import formatting
from ..render.latex import APPLY

esc = html.escape   # quote=True: safe in text and in attribute values

_SUPERSCRIPTS = dict(zip("ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂ⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾",
                         "abcdefghijklmnoprstuvwxyzABDEGHIJKLMNOPRTUVW0123456789+−=()"))
_SUBSCRIPTS = dict(zip("ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎",
                       "aehijklmnoprstuvx0123456789+−=()"))
# Multi-letter words that are math (upright function names), not prose.
_FUNCTIONS = {"log", "exp", "max", "min", "mean", "diag", "tr", "sqrt", "tanh", "sin", "cos", "tan", "sign",
              "erf", "clamp", "expand", "flip", "permute", "repeat", "view", "squeeze", "unsqueeze", "stack",
              "gather", "zeros", "dim", "idx", "cond", "src", "lo", "hi", "bias", "grad", "size", "dims",
              "shape", "reps", "start", "end", "step", "dtype", "to", "index_select"}
# the function names among them, which take an argument: set apart from it as latex.py sets them
_APPLIED = {"log", "exp", "tanh", "sin", "cos", "tan", "erf", "sign"}
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<word>[A-Za-z][A-Za-z_]*[\u0300-\u036f]*|[α-ωΑ-Ωϕφσβ][\u0300-\u036f]*|ḡ)
  | (?P<num>\d+(?:\.\d+)?)
  | (?P<op>\+=|−=|<=|>=|->|:=|\.\.\.)
  | (?P<sup>[ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻᴬᴮᴰᴱᴳᴴᴵᴶᴷᴸᴹᴺᴼᴾᴿᵀᵁⱽᵂ⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾]+)
  | (?P<sub>[ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎]+)
  | (?P<other>.)
""", re.VERBOSE | re.DOTALL)


def _atom(kind: str, text: str) -> str:
    t = esc(text, quote=False)
    if kind == "num":
        return f"<mn>{t}</mn>"
    if kind == "mi":
        return f"<mi>{t}</mi>"
    if kind == "text":
        return f"<mtext>{t}</mtext>"
    return f"<mo>{t}</mo>"


def _script(text: str, table: dict) -> str:
    plain = "".join(table.get(ch, ch) for ch in text)
    return _row(_tokens(plain))


def _row(parts: list) -> str:
    return parts[0] if len(parts) == 1 else "<mrow>" + "".join(parts) + "</mrow>"


def _group(text: str, i: int) -> tuple[str, int]:
    """The script after ^ or _: a bracketed group, or one token. Returns (plain text, next index)."""
    if i < len(text) and text[i] in "({":
        close = ")" if text[i] == "(" else "}"
        depth, j = 0, i
        while j < len(text):
            if text[j] == text[i]:
                depth += 1
            elif text[j] == close:
                depth -= 1
                if depth == 0:
                    inner = text[i + 1:j]
                    return (f"({inner})" if close == ")" else inner), j + 1
            j += 1
        return text[i + 1:], len(text)
    m = re.compile(r"[A-Za-z]+|\d+|.").match(text, i)
    return (m.group(0), m.end()) if m else ("", i)


def _tokens(text: str) -> list:
    """MathML atoms for a formula string (no surrounding <math>)."""
    parts: list = []
    prose: list = []     # consecutive prose words, merged into one <mtext>

    def flush():
        if prose:
            # MathML trims an <mtext>'s edge spaces; no-break spaces keep prose apart from symbols
            parts.append(_atom("text", "\u00a0" + " ".join(prose) + "\u00a0"))
            prose.clear()

    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "^_" and parts:
            script, i = _group(text, i + 1)
            flush()
            tag = "msup" if ch == "^" else "msub"
            parts[-1] = f"<{tag}>{parts[-1]}{_row(_tokens(script))}</{tag}>"
            continue
        m = _TOKEN.match(text, i)
        i = m.end()
        kind = m.lastgroup
        tok = m.group(0)
        if kind == "space":
            continue
        if kind == "word" and len(tok) > 2 and tok.lower() not in _FUNCTIONS:
            prose.append(tok)
            continue
        flush()
        if kind in ("sup", "sub") and parts:
            tag, table = ("msup", _SUPERSCRIPTS) if kind == "sup" else ("msub", _SUBSCRIPTS)
            parts[-1] = f"<{tag}>{parts[-1]}{_script(tok, table)}</{tag}>"
        elif kind in ("sup", "sub"):
            parts.append(_script(tok, _SUPERSCRIPTS if kind == "sup" else _SUBSCRIPTS))
        elif kind == "word":
            parts.append(_atom("mi", tok))
            if tok in _APPLIED and not text[i:].lstrip().startswith(("(", "^", "_")):
                parts.append(APPLY)   # tanh v: the thin space TeX puts after a function's name
        elif kind == "num":
            parts.append(_atom("num", tok))
        else:
            parts.append(_atom("mo", tok))
    flush()
    return parts


def math(formula: str, display: bool = False) -> str:
    """A formula string as inline MathML."""
    mode = ' display="block"' if display else ""
    return f'<math{mode}>{"".join(_tokens(formula)) or "<mrow></mrow>"}</math>'


def partial(num: str, den: str) -> str:
    """∂num/∂den as MathML atoms (to be placed inside <math>)."""
    return (f"<mfrac><mrow><mo>∂</mo>{''.join(_tokens(num))}</mrow>"
            f"<mrow><mo>∂</mo>{''.join(_tokens(den))}</mrow></mfrac>")


def subscript(k: int) -> str:
    """12 -> '₁₂'."""
    return "".join("₀₁₂₃₄₅₆₇₈₉"[int(d)] for d in str(k))


# -- values: the one formatter (gradviz.formatting), re-exported for the panel's callers --
number, array, preview, short = formatting.number, formatting.array, formatting.preview, formatting.short
