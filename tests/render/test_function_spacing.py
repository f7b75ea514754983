"""A function's name is set apart from its argument in MathML (`tanh v₂`, not `tanhv₂`): the converter
writes \\tanh as a bare <mi>, so latex.py adds the function application U+2061 carrying TeX's thin
space, as mathtext.py does for the formulas it sets; the Unicode text reads the same."""
from __future__ import annotations

import pytest

from gradviz.player import mathtext
from gradviz.render import latex

APPLY = "<mo lspace=\"0\" rspace=\"0.1667em\">&#x02061;</mo>"
NAMES = ["arccos", "arcsin", "arctan", "cos", "cosh", "cot", "coth", "csc", "deg", "dim", "exp", "hom", "ker",
         "lg", "ln", "log", "sec", "sin", "sinh", "tan", "tanh"]


@pytest.mark.parametrize("name", NAMES)
def test_every_function_name_is_spaced_from_its_argument(name):
    out = latex.mathml("h = \\" + name + " " + latex.name(0), ("v₂",))
    assert f"<mi>{name}</mi>{APPLY}<msub><mi>v</mi><mn>2</mn></msub>" in out
    assert latex.text(out) == f"h = {name} v₂"


def test_no_space_before_a_parenthesis_and_a_power_keeps_its_base():
    assert APPLY not in latex.mathml(r"\log(x)") and latex.unicode(r"\log(x)") == "log(x)"
    assert APPLY not in latex.mathml(r"\exp\left(x\right)")
    power = latex.mathml(r"1 - \tanh^{2} a")
    assert f"</msup>{APPLY}<mi>a</mi>" in power and "<msup><mi>tanh</mi>" in power
    assert latex.text(power) == "1 − tanh² a"


def test_the_panel_records_formulas_space_them_too():
    out = mathtext.math("y = tanh x + log(x)")
    assert f"<mi>tanh</mi>{APPLY}<mi>x</mi>" in out and f"<mi>log</mi>{APPLY}" not in out


def test_a_diagram_and_its_panel_agree_on_a_tanh_node():
    import gradviz
    x = gradviz.tensor([0.5, -1.0], requires_grad=True)
    h = (x * 2).tanh()
    anim = gradviz.animate(h.sum(), names={"x": x, "h": h})
    frame = next(fr for fr in anim.frames if "tanh" in fr.title.lower() and fr.phase == "backward")
    assert "tanh</mi>" + APPLY in frame.text
