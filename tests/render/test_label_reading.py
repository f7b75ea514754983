"""Labels read as a learner reads them: a name raised as an exponent stays a name (e^(z2), not eᶻ²),
a pick says which dim and index it took, a default beta does not divide by 1, a count prints as a
count, and a custom Function's step says it runs the learner's backward."""
import re

import pytest

import gradviz as gv
from gradviz.exercises import check
from gradviz.player import frames as F
from gradviz.render.formula import Formula, Graph
from gradviz.tracing import record_backward


def _formulas(out, names=None):
    trace = gv.draw(out, names=names).trace
    graph = Graph(trace)
    return {n.name: Formula(graph, n) for n in trace.nodes if n.kind == "op"}


def test_a_name_in_an_exponent_stays_a_name():
    z2 = gv.randn(3, requires_grad=True)
    e = z2.exp()
    f = _formulas(e.sum(), {"z2": z2, "y": e})["ExpBackward0"]
    assert f.headline() == "y = e^(z2)"
    w = gv.randn(3, requires_grad=True)
    assert _formulas(gv.sigmoid(w).sum(), {"w": w})["SigmoidBackward0"].headline().endswith("1/(1 + e⁻ʷ)")
    x = gv.randn(3, requires_grad=True)
    assert _formulas((x ** 3).sum(), {"x": x})["PowBackward0"].headline().endswith("x³")


@pytest.mark.parametrize("lib", ["gradviz", "torch"])
def test_a_pick_says_its_dim_and_index(lib):
    torch = gv if lib == "gradviz" else pytest.importorskip("torch")
    p = torch.randn(3, 4, requires_grad=True)
    rows = _formulas(p[2].sum(), {"p": p})["SelectBackward0"]
    assert rows.headline().endswith("= p[2]")   # the dim by its place, as Python indexes
    assert rows.vjp_text(0) == "∂L/∂p = ḡ placed in zeros at [2]"
    cols = _formulas(p[:, -1].sum(), {"p": p})["SelectBackward0"]
    assert cols.headline().endswith("= p[:, 3]")


def test_softplus_with_its_default_beta_does_not_divide_by_one():
    a = gv.randn(3, requires_grad=True)
    plain = _formulas(gv.nn.functional.softplus(a).sum(), {"a": a})["SoftplusBackward0"]
    assert plain.headline().endswith("= log(1 + eᵃ)") and plain.vjp_text(0) == "∂L/∂a = ḡ ⊙ σ(a)"
    assert "frac" not in plain.latex(plain.node.latex)
    steep = _formulas(gv.nn.functional.softplus(a, beta=2).sum(), {"a": a})["SoftplusBackward0"]
    assert steep.headline().endswith("= log(1 + e²ᵃ)/2") and steep.vjp_text(0) == "∂L/∂a = ḡ ⊙ σ(2a)"


def test_a_count_is_checked_and_printed_as_a_count():
    t = gv.zeros(3)
    t.add_(1).mul_(2).sub_(1)
    assert str(check(3, t._version, "t._version")) == "✓ t._version: right (3)"
    wrong = str(check(2, t._version, "t._version"))
    assert "(you: 2, engine: 3)" in wrong and ".0" not in wrong
    assert "(you: 2.0, engine: 3.0)" in str(check(2.0, gv.tensor(3.0), "x"))


def test_a_custom_function_runs_the_learners_backward():
    class ClampGrad(gv.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a.clamp(-1, 1)

        @staticmethod
        def backward(ctx, g):
            return g

    x = gv.tensor([0.5, 2.0], requires_grad=True)
    trace = record_backward([ClampGrad.apply(x).sum()], names={"x": x})
    frame = next(f for f in F.build_frames(trace) if f.phase == "backward" and f.node
                 and trace.nodes[int(f.node[1:])].name == "ClampGradBackward")
    said = re.sub(r"<[^>]+>", "", frame.text)
    assert "runs the backward you wrote: it calls ClampGrad.backward(ctx, ḡ)" in said
    assert "local derivative" not in said


def test_a_wide_formula_breaks_after_its_equals_sign():
    from gradviz.render import latex
    wide = r"\mathrm{loss} = -\sum w \odot \left(t \max(\log u,\, -100) + (1 - t) \max(\log(1 - u),\, -100)\right)"
    html = latex.mathml_clauses(wide)
    assert html.count("<math") == 2 and latex.text(html).startswith("loss = −")   # loss = | − Σ w ⊙ (…)
    assert latex.mathml_clauses("c = a + b").count("<math") == 1              # a short one stays whole


def test_a_long_label_formula_wraps_between_its_terms():
    """A BatchNorm with a ResNet's parameter names reads 80 characters on one line, wider than a small
    window's stage: its label wraps before ⊙ and +, and sizing a big graph counts the same lines."""
    gv.manual_seed(0)
    x = gv.randn(4, 3, 2, 2, requires_grad=True)
    bn = gv.nn.BatchNorm2d(3)
    y = bn(x)
    names = {"x": x, "y": y, "layer1.0.bn1.weight": bn.weight, "layer1.0.bn1.bias": bn.bias}
    f = _formulas(y.sum(), names)["NativeBatchNormBackward0"]
    assert f.headline() == "y = (x − μ_(batch))/√(σ²_(batch) + ε) ⊙ layer1.0.bn1.weight + layer1.0.bn1.bias"
    assert f.headline_lines() == ["y = (x − μ_(batch))/√(σ²_(batch) + ε)", "⊙ layer1.0.bn1.weight + layer1.0.bn1.bias"]
    assert [len(s) for s in f.headline_lines(sizing=True)] == [len(s) for s in f.headline_lines()]
    assert "⊙ layer1.0.bn1.weight + layer1.0.bn1.bias\\n" in gv.draw(y.sum(), names=names).source
    short = _formulas(y.sum(), {"x": x, "y": y, "w": bn.weight, "b": bn.bias})["NativeBatchNormBackward0"]
    assert short.headline_lines() == ["y = (x − μ_(batch))/√(σ²_(batch) + ε) ⊙ w + b"]   # short: one line
