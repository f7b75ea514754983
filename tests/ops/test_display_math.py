"""A record writes its display math once, in LaTeX: the Unicode of diagram labels (Op.formula,
Op.vjp_formulas) is derived from it by gradviz.ops.display_math, for every record in the registry."""
import pytest

from gradviz.ops import registry
from gradviz.ops.display_math import template_text, unicode
from gradviz.ops.op import Op


def _leftovers(latex: str, text: str) -> list:
    """What of the LaTeX survived into the text: backslashes, markers, braces (a set's \\{ \\} aside)."""
    bad = [ch for ch in "\\$" if ch in text]
    if r"\{" not in latex and ("{" in text or "}" in text):
        bad.append("{}")
    return bad


def test_every_record_derives_plain_unicode():
    bad = []
    for key, op in registry.ops().items():
        assert op.latex, f"{key}: a record writes its formula in LaTeX"
        pairs = [(op.latex, op.formula)] + list(zip(op.vjp_latex, op.vjp_formulas))
        for latex, text in pairs:
            if not text.strip() or _leftovers(latex, text):
                bad.append((key, latex, text))
        assert len(op.vjp_formulas) == len(op.vjp_latex), key
    assert not bad, "\n".join(map(str, bad))


@pytest.mark.parametrize("latex, text", [
    (r"\bar{g} \odot $1", "ḡ ⊙ b"),
    (r"-\frac{\bar{g} \odot $0}{$1^2}", "−ḡ ⊙ a / b²"),
    (r"\bar{g} \odot $1 \odot $0^{$1 - 1}", "ḡ ⊙ b ⊙ aᵇ⁻¹"),
    (r"$c = \frac{\sin(\pi $0)}{\pi $0}", "c = sin(π a)/(π a)"),
    (r"\frac{\bar{g}}{2\sqrt{$0 + 1}}", "ḡ/(2√(a + 1))"),
    (r"\bar{g}\, $1^{\top}", "ḡ bᵀ"),
    (r"$c = \sum_{\text{dim } $dim} $0", "c = Σ_dim a"),
    (r"$c = \operatorname{clamp}($0,\, $min,\, $max)", "c = clamp(a, lo, hi)"),
    (r"$c = \begin{cases} $0 & $0 > 0 \\ $negative_slope\, $0 & \text{otherwise} \end{cases}",
     "c = a if a > 0 else s a"),
    (r"$c = $0_{[\dots,\, $index]}", "c = a[…, index]"),
    (r"\textstyle\sum_{j \le i} $0_j", "Σ_(j≤i) aⱼ"),
])
def test_conversions(latex, text):
    assert template_text(latex, ("a", "b"), "c") == text


def test_the_reader_covers_the_usual_commands():
    assert unicode(r"\left( \alpha \cdot \beta \right) \ge \varepsilon") == "(α · β) ≥ ε"
    assert unicode(r"\lVert x \rVert_2 \ne \log \exp x") == "‖x‖₂ ≠ log exp x"
    assert unicode(r"x \mathrel{+}= \hat{y}") == "x += ŷ"


def test_a_record_reads_with_its_own_letters_and_a_hand_written_formula_stays():
    mm = Op("mm", "MmBackward0", r"$c = $0\, $1", lambda xp, a, b: a @ b, args=("self", "mat2"),
            vjp_latex=(r"\bar{g}\, $1^{\top}", r"$0^{\top} \bar{g}"), out_symbol="C")
    assert mm.formula == "C = A B"
    assert mm.vjp_formulas == ("ḡ Bᵀ", "Aᵀ ḡ")
    own = Op("f", "FBackward", formula="y = f(a)  (user code)", vjp_formulas=("f′(a) ḡ",))
    assert (own.out_symbol, own.formula, own.vjp_formulas) == ("y", "y = f(a)  (user code)", ("f′(a) ḡ",))
