"""Formulas for the browser: LaTeX -> MathML with latex2mathml, which browsers typeset natively.

The op records write their formulas in LaTeX; the step panel shows them through here
(one math typeface, correct spacing, no web font and no script). Graphviz labels,
which cannot hold MathML, keep the records' Unicode formulas.

User text never passes through the converter (it copies \\text{...} into the page
unescaped): a formula names a user's tensor with `name(k)`, a placeholder that
`mathml(latex, names)` replaces by the k-th name, escaped, after conversion.
"""
from __future__ import annotations

import re
from functools import lru_cache

from .mathtext import esc

_MARK = "\u2063"   # an invisible separator: never typed in a formula, survives the converter as text


def name(k: int) -> str:
    """The LaTeX placeholder for the k-th entry of `names` in `mathml(latex, names)`."""
    return r"\text{" + f"{_MARK}{k}{_MARK}" + "}"


@lru_cache(maxsize=4096)
def _convert(latex: str, display: bool) -> str:
    from latex2mathml.converter import convert
    out = convert(latex, display="block" if display else "inline")
    return out.replace(' xmlns="http://www.w3.org/1998/Math/MathML"', "", 1)


def mathml(latex: str, names: tuple = (), display: bool = False) -> str:
    """<math> for a LaTeX formula whose placeholders `name(k)` stand for names[k]. A formula
    the converter cannot read is shown as escaped plain text, never as raw markup."""
    try:
        out = _convert(latex, display)
    except Exception:   # latex2mathml raises its own exception types for input it cannot parse
        return f'<span class="gv-math-fallback">{esc(latex)}</span>'
    for k, text in enumerate(names):
        out = out.replace(f"<mtext>{_MARK}{k}{_MARK}</mtext>", f"<mi>{esc(str(text))}</mi>")
    return out


# -- the op records' formulas -----------------------------------------------------------
# A record's LaTeX names its output `$c`, its inputs `$0`, `$1`, ... and its parameters
# `$alpha`, `$dim`, ...; `fill` puts in what this node had: the learner's names, the
# constants it used, or the record's symbols.
_MARKER = re.compile(r"\$([A-Za-z_]\w*|\d+)")

# how a parameter is written when its value is not shown
PARAM_LATEX = {"alpha": r"\alpha", "beta": r"\beta", "value": "v", "eps": r"\varepsilon", "exponent": "p",
               "weight": "w", "negative_slope": "s", "min": r"\mathrm{lo}", "max": r"\mathrm{hi}"}


def markers(template: str) -> set:
    """The markers a record's LaTeX uses: 'c', '0', '1', ... and parameter names."""
    return set(_MARKER.findall(template))


def fill(template: str, inputs: list, out: str, params: dict) -> str:
    """The record's LaTeX with `$c` -> out, `$k` -> inputs[k], `$param` -> params[param] (each
    already LaTeX); a parameter without a value keeps its symbol."""
    def put(m):
        key = m.group(1)
        if key == "c":
            return "{" + out + "}"
        if key.isdigit():
            return "{" + (inputs[int(key)] if int(key) < len(inputs) else "x_{" + key + "}") + "}"
        if key in params:
            return "{" + params[key] + "}"
        return "{" + PARAM_LATEX.get(key, r"\mathrm{" + key.replace("_", r"\_") + "}") + "}"
    return _MARKER.sub(put, template)


def number(v) -> str:
    """A constant inside a formula: 2 for 2.0, 0.5, 1e-05; tuples as (0, 1)."""
    if isinstance(v, bool):
        return r"\text{" + str(v) + "}"
    if isinstance(v, (list, tuple)):
        return "(" + ",\\, ".join(number(x) for x in v) + ")"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v or v in (float("inf"), float("-inf")):
            return {"nan": r"\text{nan}", "inf": r"\infty", "-inf": r"-\infty"}[str(v)]
        if v == int(v) and abs(v) < 1e6:
            return str(int(v))
        return f"{v:.4g}".replace("e", r"\times 10^{") + ("}" if "e" in f"{v:.4g}" else "")
    return r"\text{" + str(v).replace("\\", "").replace("{", "").replace("}", "") + "}"


def name_index(text: str) -> int | None:
    """k when `text` is the placeholder name(k), else None."""
    if text.startswith(r"\text{" + _MARK) and text.endswith(_MARK + "}"):
        return int(text[len(r"\text{" + _MARK):-len(_MARK + "}")])
    return None
