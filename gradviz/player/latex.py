"""Formulas for the browser: LaTeX -> MathML with latex2mathml, which browsers typeset natively.

The op records write their formulas in LaTeX; the step panel shows them through here
(one math typeface, correct spacing, no web font and no script). Graphviz labels,
which cannot hold MathML, keep the records' Unicode formulas.

User text never passes through the converter (it copies \\text{...} into the page
unescaped): a formula names a user's tensor with `name(k)`, a placeholder that
`mathml(latex, names)` replaces by the k-th name, escaped, after conversion.
"""
from __future__ import annotations

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
        out = out.replace(f"<mtext>{_MARK}{k}{_MARK}</mtext>", f"<mi>{esc(str(text), quote=False)}</mi>")
    return out
