"""Formulas with the learner's names and constants: for each op, the exact Unicode a reader sees
(the same formula the step panel typesets) and the <mi>/<mn> tokens of its MathML."""
import re

import pytest

import gradviz as torch
import gradviz.nn.functional as F
from gradviz.ops.display_math import PLACED
from gradviz.render import latex
from gradviz.player.explain import Formula
from gradviz.player.frames import Graph, build_frames
from gradviz.tracing import build_trace, record_backward


def formula(out, names: dict, op: str | None = None) -> Formula:
    """The Formula of the node that made `out` (or of the last node named `op`)."""
    trace = build_trace((out,), names)
    graph = Graph(trace)
    nodes = [n for n in trace.nodes if n.kind == "op" and (op is None or n.name == op)]
    f = Formula(graph, nodes[-1])
    f.slots = sorted({e.slot for e in graph.into.get(f.node.id, ()) if e.slot >= 0})   # the inputs that need grad
    return f


def vjps(f: Formula) -> list:
    """The VJP sent to every input that needs grad (not a constant such as the 2 of x * 2), with what it
    defines after it (the panel writes that after the values)."""
    return [f.vjp_text(slot) + (f", {f.where_text(slot)}" if f.where_text(slot) else "") for slot in f.slots]


def tokens(markup: str, tag: str) -> list:
    """The text of every <tag>; a symbol's index (t₁: <msub><mi>t</mi><mn>1</mn></msub>) is part of
    the one symbol <mi>t₁</mi>, not a number of the formula."""
    markup = re.sub(r"<msub><mi>([^<]*)</mi><mn>(\d+)</mn></msub>",
                    lambda m: f"<mi>{m.group(1)}{m.group(2).translate(str.maketrans('0123456789', '₀₁₂₃₄₅₆₇₈₉'))}</mi>",
                    markup)
    return re.findall(rf"<{tag}>([^<]*)</{tag}>", markup)


def _inputs():
    torch.manual_seed(0)
    x = torch.tensor([[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], requires_grad=True)
    M = torch.tensor([[1.0, 0.0], [2.0, -1.0], [0.5, 3.0]], requires_grad=True)
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0], requires_grad=True)
    img = torch.randn(1, 2, 6, 6, requires_grad=True)
    w = torch.randn(3, 2, 3, 3, requires_grad=True)
    return {"x": x, "M": M, "a": a, "b": b, "img": img, "w": w}


# (case, program, output name, PyTorch node name, forward, VJP per input that needs grad, <mn> tokens of the forward)
CASES = [
    ("mul by a constant", lambda t: t["x"] * 2, "h", "MulBackward0", "h = 2x", ["∂L/∂x = 2ḡ"], ["2"]),
    ("constant times", lambda t: 2 * t["x"], "h", "MulBackward0", "h = 2x", ["∂L/∂x = 2ḡ"], ["2"]),
    ("pow(3)", lambda t: t["x"].pow(3), "y", "PowBackward0", "y = x³", ["∂L/∂x = ḡ ⊙ 3x²"], ["3"]),
    ("x ** 2", lambda t: t["x"] ** 2, "y", "PowBackward0", "y = x²", ["∂L/∂x = ḡ ⊙ 2x"], ["2"]),
    ("2 ** a", lambda t: 2 ** t["a"], "y", "PowBackward2", "y = 2ᵃ", ["∂L/∂a = ḡ ⊙ y log 2"], ["2"]),
    ("a ** b", lambda t: t["a"] ** t["b"], "y", "PowBackward1", "y = aᵇ",
     ["∂L/∂a = ḡ ⊙ b ⊙ a^(b − 1)", "∂L/∂b = ḡ ⊙ y ⊙ log a"], []),
    ("mm with M named", lambda t: torch.mm(t["x"], t["M"]), "C", "MmBackward0", "C = x M",
     ["∂L/∂x = ḡ Mᵀ", "∂L/∂M = xᵀ ḡ"], []),
    ("x @ M", lambda t: t["x"] @ t["M"], "C", "MmBackward0", "C = x M", ["∂L/∂x = ḡ Mᵀ", "∂L/∂M = xᵀ ḡ"], []),
    ("sum(0)", lambda t: t["x"].sum(0), "s", "SumBackward1", "s = Σ over dim 0 of x",
     ["∂L/∂x = ḡ broadcast over dim 0"], ["0"]),
    ("sum()", lambda t: t["x"].sum(), "s", "SumBackward0", "s = Σ x", ["∂L/∂x = ḡ broadcast to the shape of x"], []),
    ("mean(1, keepdim=True)", lambda t: t["x"].mean(1, keepdim=True), "m", "MeanBackward1",
     "m = mean over dim 1 of x (keepdim)", ["∂L/∂x = ḡ/n broadcast over dim 1"], ["1"]),
    ("sum(1, keepdim=True)", lambda t: t["x"].sum(1, keepdim=True), "s", "SumBackward1",
     "s = Σ over dim 1 of x (keepdim)", ["∂L/∂x = ḡ broadcast over dim 1"], ["1"]),
    ("mean()", lambda t: t["x"].mean(), "m", "MeanBackward0", "m = 1/n Σ x",
     ["∂L/∂x = ḡ/n broadcast to the shape of x"], ["1"]),
    ("add(alpha=2)", lambda t: torch.add(t["a"], t["b"], alpha=2), "c", "AddBackward0", "c = a + 2b",
     ["∂L/∂a = ḡ", "∂L/∂b = 2ḡ"], ["2"]),
    ("sub(alpha=3)", lambda t: torch.sub(t["a"], t["b"], alpha=3), "c", "SubBackward0", "c = a − 3b",
     ["∂L/∂a = ḡ", "∂L/∂b = −3ḡ"], ["3"]),
    ("a + a", lambda t: t["a"] + t["a"], "d", "AddBackward0", "d = a + a", ["∂L/∂a = ḡ", "∂L/∂a = ḡ"], []),
    ("a + 5", lambda t: t["a"] + 5, "y", "AddBackward0", "y = a + 5", ["∂L/∂a = ḡ"], ["5"]),
    ("3 - a", lambda t: 3 - t["a"], "y", "RsubBackward1", "y = 3 − a", ["∂L/∂a = −ḡ"], ["3"]),
    ("a - b", lambda t: t["a"] - t["b"], "y", "SubBackward0", "y = a − b", ["∂L/∂a = ḡ", "∂L/∂b = −ḡ"], []),
    ("a * b", lambda t: t["a"] * t["b"], "y", "MulBackward0", "y = a ⊙ b", ["∂L/∂a = ḡ ⊙ b", "∂L/∂b = ḡ ⊙ a"], []),
    ("x / 4", lambda t: t["x"] / 4, "y", "DivBackward0", "y = x/4", ["∂L/∂x = ḡ/4"], ["4"]),
    ("a / b", lambda t: t["a"] / t["b"], "y", "DivBackward0", "y = a/b", ["∂L/∂a = ḡ/b", "∂L/∂b = −(ḡ ⊙ a)/b²"], []),
    ("clamp(-1, 1)", lambda t: t["x"].clamp(-1, 1), "y", "ClampBackward1", "y = clamp(x, −1, 1)",
     ["∂L/∂x = ḡ ⊙ [−1 ≤ x ≤ 1]"], ["1", "1"]),
    ("clamp(min=0)", lambda t: t["x"].clamp(min=0), "y", "ClampBackward1", "y = clamp(x, 0, ∞)",
     ["∂L/∂x = ḡ ⊙ [0 ≤ x ≤ ∞]"], ["0"]),
    ("transpose(0, 1)", lambda t: t["x"].transpose(0, 1), "t", "TransposeBackward0", "t = xᵀ (dim 0 ↔ 1)",
     ["∂L/∂x = ḡᵀ"], ["0", "1"]),
    ("x.t()", lambda t: t["x"].t(), "t", "TBackward0", "t = xᵀ", ["∂L/∂x = ḡᵀ"], []),
    ("softmax(dim=1)", lambda t: torch.softmax(t["x"], dim=1), "p", "SoftmaxBackward0",
     "p = eˣ/(Σ over dim 1 of eˣ)", ["∂L/∂x = p ⊙ (ḡ − Σ over dim 1 of ḡ ⊙ p)"], ["1"]),
    ("log_softmax(dim=0)", lambda t: torch.log_softmax(t["x"], dim=0), "p", "LogSoftmaxBackward0",
     "p = x − log Σ over dim 0 of eˣ", ["∂L/∂x = ḡ − eᵖ Σ over dim 0 of ḡ"], ["0"]),
    ("where", lambda t: torch.where(torch.tensor([True, False]), t["a"], t["b"]), "y", "WhereBackward0",
     "y = { a if cond; b otherwise }", ["∂L/∂a = ḡ ⊙ cond", "∂L/∂b = ḡ ⊙ ¬cond"], []),
    ("exp", lambda t: t["x"].exp(), "y", "ExpBackward0", "y = eˣ", ["∂L/∂x = ḡ ⊙ y"], []),
    ("log", lambda t: t["x"].log(), "y", "LogBackward0", "y = log x", ["∂L/∂x = ḡ/x"], []),
    ("tanh", lambda t: t["x"].tanh(), "y", "TanhBackward0", "y = tanh x", ["∂L/∂x = ḡ ⊙ (1 − y²)"], []),
    ("sigmoid", lambda t: t["x"].sigmoid(), "y", "SigmoidBackward0", "y = σ(x) = 1/(1 + e⁻ˣ)",
     ["∂L/∂x = ḡ ⊙ y ⊙ (1 − y)"], ["1", "1"]),
    ("relu", lambda t: t["x"].relu(), "y", "ReluBackward0", "y = max(x, 0)", ["∂L/∂x = ḡ ⊙ [y > 0]"], ["0"]),
    ("leaky_relu(0.2)", lambda t: F.leaky_relu(t["x"], 0.2), "y", "LeakyReluBackward0",
     "y = { x if x > 0; 0.2x otherwise }", ["∂L/∂x = ḡ ⊙ { 1 if x > 0; 0.2 otherwise }"], ["0", "0.2"]),
    ("sqrt", lambda t: t["a"].sqrt(), "y", "SqrtBackward0", "y = √a", ["∂L/∂a = ḡ/(2y)"], []),
    ("neg", lambda t: -t["a"], "y", "NegBackward0", "y = −a", ["∂L/∂a = −ḡ"], []),
    ("abs", lambda t: t["x"].abs(), "y", "AbsBackward0", "y = |x|", ["∂L/∂x = ḡ ⊙ sign x"], []),
    ("view(3, 2)", lambda t: t["x"].view(3, 2), "y", "ViewBackward0", "y = view(x, (3, 2))",
     ["∂L/∂x = ḡ reshaped to the shape of x"], ["3", "2"]),
    ("permute(1, 0)", lambda t: t["x"].permute(1, 0), "y", "PermuteBackward0", "y = permute(x, (1, 0))",
     ["∂L/∂x = ḡ permuted back"], ["1", "0"]),
    ("unsqueeze(1)", lambda t: t["a"].unsqueeze(1), "y", "UnsqueezeBackward0", "y = unsqueeze(a, 1)",
     ["∂L/∂a = ḡ squeezed"], ["1"]),
    ("amax(1)", lambda t: t["x"].amax(1), "y", "AmaxBackward0", "y = max over dim 1 of x",
     ["∂L/∂x = ḡ to the maxima (shared among ties)"], ["1"]),
    ("cumsum(1)", lambda t: t["x"].cumsum(1), "y", "CumsumBackward0", "yᵢ = Σ over j ≤ i of xⱼ",
     ["∂L/∂x = reverse cumulative sum of ḡ"], []),
    ("lerp(0.25)", lambda t: torch.lerp(t["a"], t["b"], 0.25), "y", "LerpBackward0", "y = a + 0.25(b − a)",
     ["∂L/∂a = ḡ (1 − 0.25)", "∂L/∂b = 0.25ḡ"], ["0.25"]),
    ("softplus(beta=2)", lambda t: F.softplus(t["a"], beta=2), "y", "SoftplusBackward0", "y = log(1 + e²ᵃ)/2",
     ["∂L/∂a = ḡ ⊙ σ(2a)"], ["1", "2", "2"]),
    ("mse_loss", lambda t: F.mse_loss(t["a"], t["b"]), "L", "MseLossBackward0", "L = 1/N Σ (a − b)²",
     ["∂L/∂a = (2ḡ (a − b))/N", "∂L/∂b = −(2ḡ (a − b))/N"], ["1", "2"]),
    ("conv2d(stride=2, padding=1)", lambda t: F.conv2d(t["img"], t["w"], stride=2, padding=1), "y",
     "ConvolutionBackward0",
     "y = img ⋆ w: y[n, o, p] = Σ over i, k of w[o, i, k] img[n, i, s p + d k − q], "
     "s = (2, 2), q = (1, 1), d = (1, 1), groups = 1",
     ["∂L/∂img = convᵀ(ḡ, w) = ḡ ⋆ flip(w), a transposed convolution (ḡ spread out by the stride): "
      "Σ over o, k, p : s p + d k − q = j of w[o, i, k] ḡ[n, o, p] at [n, i, j]",
      "∂L/∂w = Σ over n of imgₙ ⋆ ḡₙ: Σ over n, p of ḡ[n, o, p] img[n, i, s p + d k − q] at [o, i, k]"],
     ["2", "2", "1", "1", "1", "1", "1"]),
    # a grouped convolution counts channels within their group: (γ, o) is channel o of group γ
    ("conv2d(groups=2)", lambda t: F.conv2d(t["img"], t["w"][:2, :1], groups=2), "y", "ConvolutionBackward0",
     "y = img ⋆ t₂: y[n, (γ, o), p] = Σ over i, k of t₂[(γ, o), i, k] img[n, (γ, i), s p + d k − q], "
     "s = (1, 1), q = (0, 0), d = (1, 1), groups = 2, (γ, c) = channel c of group γ",
     ["∂L/∂img = convᵀ(ḡ, t₂) = ḡ ⋆ flip(t₂), a transposed convolution (ḡ spread out by the stride): "
      "Σ over o, k, p : s p + d k − q = j of t₂[(γ, o), i, k] ḡ[n, (γ, o), p] at [n, (γ, i), j]",
      "∂L/∂t₂ = Σ over n of imgₙ ⋆ ḡₙ: Σ over n, p of ḡ[n, (γ, o), p] img[n, (γ, i), s p + d k − q] "
      "at [(γ, o), i, k]"],
     ["1", "1", "0", "0", "1", "1", "2"]),
    # a transposed convolution: each x[p] scatters W to y[s p + d k − q]; ḡ comes back by a plain convolution
    ("conv_transpose2d(stride=2, padding=1, output_padding=1)",
     lambda t: F.conv_transpose2d(t["img"], t["w"].transpose(0, 1), stride=2, padding=1, output_padding=1), "y",
     "ConvolutionBackward0",
     "y = convᵀ(img, t₁): y[n, o, j] = Σ over i, k, p : s p + d k − q = j of t₁[i, o, k] img[n, i, p], "
     "s = (2, 2), q = (1, 1), d = (1, 1), output padding = (1, 1), groups = 1",
     ["∂L/∂img = conv(ḡ, t₁) = ḡ ⋆ t₁, a strided convolution of ḡ: "
      "Σ over o, k of t₁[i, o, k] ḡ[n, o, s p + d k − q] at [n, i, p]",
      "∂L/∂t₁ = Σ over n of ḡₙ ⋆ imgₙ: Σ over n, p of img[n, i, p] ḡ[n, o, s p + d k − q] at [i, o, k]"],
     ["2", "2", "1", "1", "1", "1", "1", "1", "1"]),
    ("max_pool2d(3, 2, 1)", lambda t: F.max_pool2d(t["img"], 3, stride=2, padding=1), "y",
     "MaxPool2DWithIndicesBackward0",
     "y[i] = max over j ∈ winᵢ of img[j], winᵢ: kernel (3, 3), stride (2, 2), padding (1, 1), dilation (1, 1)",
     ["∂L/∂img = Σ over i : j*ᵢ = j of ḡ[i] at [j], j*ᵢ = argmax over j ∈ winᵢ of img[j]"],
     ["3", "3", "2", "2", "1", "1", "1", "1"]),
    ("avg_pool2d(2)", lambda t: F.avg_pool2d(t["img"], 2), "y", "AvgPool2DBackward0",
     "y[i] = 1/Nᵢ Σ over j ∈ winᵢ of img[j], winᵢ: kernel (2, 2), stride (2, 2), padding (0, 0)",
     ["∂L/∂img = Σ over i : j ∈ winᵢ of ḡ[i]/Nᵢ at [j]"], ["1", "2", "2", "2", "2", "0", "0"]),
    # a constant 1 vanishes from a product and a negative one is a sign
    ("x * 1", lambda t: t["x"] * 1, "y", "MulBackward0", "y = x", ["∂L/∂x = ḡ"], []),
    ("a * -1", lambda t: t["a"] * -1, "y", "MulBackward0", "y = −a", ["∂L/∂a = −ḡ"], []),
    # ... but a first power stays: y = x would hide the op its PowBackward0 node is
    ("pow(1)", lambda t: t["x"].pow(1), "y", "PowBackward0", "y = x¹", ["∂L/∂x = ḡ"], ["1"]),
    ("add(alpha=1)", lambda t: torch.add(t["a"], t["b"], alpha=1), "c", "AddBackward0", "c = a + b",
     ["∂L/∂a = ḡ", "∂L/∂b = ḡ"], []),
    ("sub(alpha=-1)", lambda t: torch.sub(t["a"], t["b"], alpha=-1), "c", "SubBackward0", "c = a + b",
     ["∂L/∂a = ḡ", "∂L/∂b = ḡ"], []),
    ("a - (-2)", lambda t: t["a"] - (-2), "y", "SubBackward0", "y = a + 2", ["∂L/∂a = ḡ"], ["2"]),
    ("addmm, beta = alpha = 1", lambda t: torch.addmm(t["b"], t["a"].unsqueeze(0), t["M"][:2]), "C",
     "AddmmBackward0", "C = b + t₁ t₂", ["∂L/∂b = ḡ", "∂L/∂t₁ = ḡ t₂ᵀ", "∂L/∂t₂ = t₁ᵀ ḡ"], []),
    ("addmm(beta=0.5, alpha=2)", lambda t: torch.addmm(t["b"], t["a"].unsqueeze(0), t["M"][:2], beta=0.5, alpha=2),
     "C", "AddmmBackward0", "C = 0.5b + 2t₁ t₂", ["∂L/∂b = 0.5ḡ", "∂L/∂t₁ = 2ḡ t₂ᵀ", "∂L/∂t₂ = 2t₁ᵀ ḡ"],
     ["0.5", "2"]),
    ("pixel_shuffle(2)", lambda t: F.pixel_shuffle(t["img"].reshape(1, 8, 3, 3), 2), "y", "PixelShuffleBackward0",
     "y[i, h r + u, w r + v] = t₁[i r² + u r + v, h, w], r = 2",
     ["∂L/∂t₁ = ḡ[i, h r + u, w r + v] at [i r² + u r + v, h, w]"], ["2", "2"]),
]


@pytest.mark.parametrize("case, program, out, op, forward, backward, numbers", CASES, ids=[c[0] for c in CASES])
def test_formula_reads_with_the_learners_names_and_constants(case, program, out, op, forward, backward, numbers):
    t = _inputs()
    y = program(t)
    names = dict(t, **{out: y})
    f = formula(y, names, op)
    assert f.node.name == op
    assert f.forward_text() == forward
    assert vjps(f) == backward
    markup = f.forward()
    assert re.match(r'(<span class="gv-mathwide">)?<math', markup)   # MathML (a wide clause scrolls)
    assert "\\" not in re.sub(r"<[^>]+>", "", markup)                # no raw LaTeX
    assert latex.text(markup) == forward                    # the panel's MathML reads the same
    assert tokens(markup, "mn") == numbers                   # the constants, as numbers
    shown = set(tokens(markup, "mi"))
    for name in names:
        if re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", forward):
            assert name in shown, (name, markup)             # each name the formula uses is one <mi>


def test_records_outside_the_op_table_have_latex_too():
    """In-place, random, view and pooling-family records held outside gradviz.ops' table (tensor.py,
    autograd/, dicts of records) are typeset like the rest; user Functions keep their Unicode text."""
    import gc

    from gradviz.ops.op import Op
    missing, bad = [], []
    # type(), not isinstance(): no lazy module's __getattr__ runs (real torch may be loaded)
    # records made while gradviz runs (split_op(n) makes one per output count); tests' own Ops are not ours
    for op in (o for o in gc.get_objects() if type(o) is Op and o.vjp is not None):
        if op.formula.endswith("(user code)") or not getattr(op.forward, "__module__", "").startswith("gradviz"):
            continue
        if not op.latex:
            missing.append(op)
            continue
        n = max(len(op.arg_names), len(op.vjp_formulas))
        allowed = {"c"} | {f"c{k}" for k in range(1, len(op.out_symbols))} | PLACED | {str(i) for i in range(n)} | set(op.param_names) | ({"*"} if op.arg_names == ("tensors",) else set())
        for template in (op.latex,) + op.vjp_latex:
            out = latex.mathml(latex.fill(template, [latex.name(i) for i in range(n)], "c", {}), tuple("abdefgh"))
            if latex.markers(template) - allowed or "gv-math-fallback" in out or "$" in out or "\\" in \
                    latex.text(out):
                bad.append((op, template))
    assert not missing and not bad, (missing, bad)


def test_at_least_thirty_ops_are_covered():
    assert len({c[3] for c in CASES}) >= 30


def test_names_are_one_identifier_each_and_escaped():
    w_1 = torch.tensor([1.0, 2.0], requires_grad=True)
    y = w_1 * 3
    f = formula(y, {"w_1": w_1, "<y>": y})
    markup = f.forward()
    assert "<mi>w_1</mi>" in markup and "<mi>&lt;y&gt;</mi>" in markup and "<y>" not in markup
    assert f.forward_text() == "<y> = 3 w_1"


def test_an_accent_over_a_numbered_name_sits_on_its_letter():
    """ṫ₂ is t with a dot and the index 2 beside it, not a dot over the pair (which lands between them)."""
    markup = latex.mathml(r"\dot{" + latex.name(0) + r"} + \hat{" + latex.name(1) + r"} + \dot{" + latex.name(2) + "}",
                          ("t₂", "x₁₀", "h"))
    assert "<msub><mover><mi>t</mi><mo>&#x002D9;</mo></mover><mn>2</mn></msub>" in markup
    assert '<msub><mover accent="true"><mi>x</mi><mo>&#x0005E;</mo></mover><mn>10</mn></msub>' in markup
    assert "<mover><mrow><mi>h</mi></mrow><mo>&#x002D9;</mo></mover>" in markup


def test_an_unnamed_intermediate_does_not_take_a_learners_name():
    c = torch.tensor([1.0, 2.0], requires_grad=True)
    h = c * c                  # its record calls the output c, as the leaf is called
    y = h.sum()
    f = formula(y, {"c": c, "y": y}, "MulBackward0")
    assert f.forward_text() == "t₁ = c ⊙ c"     # numbered: the record's own letter would read as the leaf
    assert f.vjp_text(0) == "∂L/∂c = ḡ ⊙ c"


def test_input_symbols_come_from_the_nodes_real_inputs():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a + a
    loss = b.sum()
    trace = record_backward([loss], names={"a": a, "b": b, "loss": loss})
    frame = next(f for f in build_frames(trace) if f.phase == "backward" and trace.node(f.node).name == "AddBackward0")
    head = re.search(r"<math.*?</math>", frame.text).group(0)
    assert latex.text(head) == "b = a + a"
    rows = re.findall(r'<tr data-edge="[^"]+"><td class="gv-to">→ ([^<]*)</td><td>(<math.*?</math>)', frame.text)
    assert [(to, latex.text(m)) for to, m in rows] == [("a", "∂L/∂a = ḡ"), ("a", "∂L/∂a = ḡ")]
    assert "a is used 2 times by this op (as a and a)" in frame.text
    # both edges carry ones to a, and AccumulateGrad writes their sum into a.grad
    flows = [grad.values.tolist() for _, grad, _ in trace.steps[frame.step].flows]
    assert flows == [[1.0, 1.0], [1.0, 1.0]]
    written = [acc.total.values.tolist() for s in trace.steps for acc in s.accumulations]
    assert written == [[2.0, 2.0]]


def test_caller_variables_name_the_formula_without_names():
    from gradviz.player.html import animate
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    y = h.pow(3)
    loss = y.sum()
    anim = animate(loss, forward=False)
    heads = {anim.trace.node(f.node).name: latex.text(re.search(r"<math.*?</math>", f.text).group(0))
             for f in anim.frames if f.phase == "backward" and f.node is not None}
    assert heads["MulBackward0"] == "h = 2x"
    assert heads["PowBackward0"] == "y = h³"
    assert heads["SumBackward0"] == "loss = Σ y"
    pow_frame = next(f for f in anim.frames if f.node and anim.trace.node(f.node).name == "PowBackward0")
    vjp = re.search(r'<td class="gv-to">→ [^<]*</td><td>(<math.*?</math>)', pow_frame.text).group(1)
    assert latex.text(vjp) == "∂L/∂h = ḡ ⊙ 3h²"


@pytest.mark.parametrize("template, expected", [
    (r"{c} = {a} \odot {2}", r"{c} = {2}\, {a}"),             # a number factor moves to the front
    (r"\bar{g} \odot {2}", r"{2}\, \bar{g}"),
    (r"\bar{g} \odot {3}\, {a}^{{3} - 1}", r"\bar{g} \odot {3}\, {a}^{2}"),   # only a whole factor moves
    (r"{a}^{{2} - 1}", r"{a}"),
    (r"{c} = {1}\, {a}", r"{c} = {a}"),
    (r"-{1}\, \bar{g}", r"-\bar{g}"),
    (r"-{-1}\, \bar{g}", r"\bar{g}"),
    (r"{c} = {a} - {-2}\, {b}", r"{c} = {a} +{2}\, {b}"),
    (r"{c} = {a}^{{1}}", r"{c} = {a}"),
    (r"\bar{g} \odot {1}\, {a}^{{1} - 1}", r"\bar{g}"),
    (r"{c} = {a}^{{2}} \odot {b}", r"{c} = {a}^{{2}} \odot {b}"),   # an exponent is not a factor
    (r"\operatorname{clamp}({a},\, {1},\, {2})", r"\operatorname{clamp}({a},\, {1},\, {2})"),
])
def test_constants_are_written_as_a_reader_expects(template, expected):
    assert latex.signs(latex.coefficients(latex.exponents(template))) == expected


def test_unicode_of_typeset_math():
    assert latex.unicode(r"\frac{\partial L}{\partial x} = \bar{g} \odot (1 - y^2)") == "∂L/∂x = ḡ ⊙ (1 − y²)"
    assert latex.unicode(r"\sqrt{\frac{a}{n - 1}}") == "√(a/(n − 1))"
    assert latex.unicode(r"\hat{x} = \tilde{y}_{i}") == "x̂ = ỹᵢ"


# -- a real PyTorch graph: the constants come from the nodes' _saved_* fields ------------------------
@pytest.mark.torch
def test_a_torch_graph_shows_the_constants_torch_saved():
    real = pytest.importorskip("torch")
    from gradviz.torch_bridge import trace_from_torch
    x = real.randn(1, 2, 6, 6, requires_grad=True)
    w = real.randn(3, 2, 3, 3, requires_grad=True)
    a = real.tensor([1.0, 2.0], requires_grad=True)
    y = real.nn.functional.max_pool2d(real.nn.functional.conv2d(x, w, stride=2, padding=1), 2)
    z = (a * 2).pow(3).softmax(0).clamp(min=0.1)
    loss = y.sum() + real.add(z, z, alpha=3).sum() + real.nn.functional.gelu(a, approximate="tanh").sum()
    trace = trace_from_torch(loss, params={"x": x, "w": w, "a": a})
    graph = Graph(trace)
    texts = {}
    for node in trace.nodes:
        if node.kind == "op":
            texts.setdefault(node.name, Formula(graph, node).forward_text())
    assert texts["ConvolutionBackward0"].endswith("s = (2, 2), q = (1, 1), d = (1, 1), groups = 1")
    assert texts["MaxPool2DWithIndicesBackward0"].endswith(   # torch saves stride=None as []: the kernel's
        "kernel (2, 2), stride (2, 2), padding (0, 0), dilation (1, 1)")
    assert texts["MulBackward0"] == "t₃ = 2a"
    assert texts["PowBackward0"] == "t₄ = t₃³"                # an intermediate, not the leaf a
    assert texts["SoftmaxBackward0"] == "t₅ = e^(t₄)/(Σ over dim 0 of e^(t₄))"
    assert texts["ClampBackward1"] == "t₆ = clamp(t₅, 0.1, ∞)"
    # one tensor in both slots keeps one symbol
    assert "t₈ = t₆ + 3t₆" in [Formula(graph, n).forward_text() for n in trace.nodes if n.name == "AddBackward0"]
    assert texts["GeluBackward0"] == "t₁₁ = a Φ̃(a) (tanh approximation)"


def test_an_unnamed_tensor_used_twice_keeps_one_symbol():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2) * (x * 2).sin()
    h = x.exp()
    z = h * h
    assert formula(z, {"x": x, "z": z}).forward_text() == "z = t₁ ⊙ t₁"  # h unnamed: one symbol, twice
    assert formula(y, {"x": x}).forward_text() == "t₄ = t₁ ⊙ t₃"        # two different tensors


def test_no_record_reads_as_code():
    """Every record's formulas, with every constant put in, read as math: no underscore identifier
    (index_select), no function name spelt letter by letter (a t a n 2), no LaTeX left over."""
    import gc

    from gradviz.ops.op import Op
    bad = []
    for op in {id(o): o for o in gc.get_objects() if type(o) is Op and o.vjp is not None and o.latex}.values():
        n = max(len(op.arg_names), len(op.vjp_formulas))
        filled = [latex.fill(t, [latex.name(i) for i in range(n)], latex.name(n),
                             {p: latex.number(2) for p in op.param_names}) for t in (op.latex,) + op.vjp_latex]
        for t in filled:
            markup = latex.mathml(t, tuple("abdefghijk"[:n]) + ("c",))
            text = latex.text(markup)
            if re.search(r"\b[A-Za-z]\w*_\w+\b|\\", text) or "<mo />" in markup or re.search(r"<mi>\w</mi><mi>\w</mi>"
                                                                                               r"<mi>\w</mi>", markup):
                bad.append((op.torch_name, t, text))
    assert not bad, bad


def test_a_diagram_label_is_the_formulas_first_clause_when_long():
    img = torch.randn(1, 2, 6, 6, requires_grad=True)
    w = torch.randn(3, 2, 3, 3, requires_grad=True)
    y = F.conv2d(img, w, stride=2)
    f = formula(y, {"img": img, "w": w, "y": y})
    assert f.headline() == "y = img ⋆ w"                 # no bias, no bias term; the panel spells out the rest
    assert f.forward_text().startswith("y = img ⋆ w: y[n, o, p] = Σ")
    g = F.group_norm(img, 2, eps=1e-5)
    # no weight or bias given: no factor or term for them (not ⊙ t₁ + t₂ with made-up names)
    assert formula(g, {"img": img, "g": g}).headline() == "g = (img − μ_G)/√(σ²_G + 10⁻⁵)"
    h = img * 2
    assert formula(h, {"img": img, "h": h}).headline() == "h = 2 img"  # short: all of it


def test_a_long_formula_is_one_math_element_per_clause():
    img = torch.randn(1, 2, 6, 6, requires_grad=True)
    w = torch.randn(3, 2, 3, 3, requires_grad=True)
    y = F.conv2d(img, w, stride=2, padding=1)
    f = formula(y, {"img": img, "w": w, "y": y})
    markup = f.forward()
    maths = re.findall(r"<math.*?</math>", markup)
    assert len(maths) == 7      # the operation, its index form (wide: broken after its =), then s, q, d and groups
    assert latex.text(maths[0]) == "y = img ⋆ w" and latex.text(maths[1]).endswith(" =")
    assert latex.text(maths[3]) == "s = (2, 2)"
    assert latex.text(markup) == f.forward_text()                # the punctuation between them is kept
    short = formula(img * 2, {"img": img}).forward()
    assert short.count("<math") == 1


def test_a_bar_over_a_name_of_several_characters_reads_as_its_mean():
    """A combining bar would sit over the last character only (off to one side over a digit)."""
    import re
    z2 = torch.randn(4, 3, requires_grad=True)
    s = z2.std(0)
    labels = re.findall(r">([^<]*)</text>", torch.draw(s, names={"z2": z2, "s": s}).svg())
    assert "s = √(Σ (z2 − mean(z2))² / (n − 1))" in labels    # the root's parentheses only
    x = torch.randn(3, requires_grad=True)
    labels = re.findall(r">([^<]*)</text>", torch.draw(x.var(), names={"x": x}).svg())
    assert any("(x − x̄)²" in t for t in labels)


def test_std_and_var_show_the_correction_they_used():
    """A learner reads n − 1 (or the correction passed), not a letter k the panel never explains."""
    import re
    z = torch.randn(5, 3, requires_grad=True)
    for out, k in ((z.std(0), "1"), (z.var(0, correction=0), "0")):
        labels = re.findall(r">([^<]*)</text>", torch.draw(out.sum(), names={"z": z}).svg())
        assert any(f"n − {k})" in t for t in labels) and not any("n − k" in t for t in labels), labels
    for out, k in ((z.std(0), "1"), (torch.std_mean(z, 0, correction=2)[0], "2")):
        said = " ".join(f.caption for f in torch.animate(out.sum(), names={"z": z}).frames if "Std" in f.title)
        assert f"(n − {k})" in said and "n − k" not in said, said


def test_a_line_of_code_names_the_value_it_assigns(tmp_path):
    """Beside code that says `b = ...`, the b drawn is that line's value (its last node), and the
    tensors made on the way to it are numbered, so none of them reads as the learner's b."""
    from tests.support.player_programs import tracked_animation
    anim = tracked_animation("barlow", tmp_path, forward=False)
    assert any("b = (z2 - z2.mean(0))" in line for _, lines in anim.trace.code.values() for line in lines)
    graph = Graph(anim.trace)
    texts = [Formula(graph, n).forward_text() for n in anim.trace.nodes if n.kind == "op"]
    assert "b = t₅/t₆" in texts and "t₈ = t₇ b" in texts and "t₅ = z2 − t₄" in texts
    sub = next(f for f in anim.frames if "SubBackward0" in f.title and "z2" in f.caption)
    assert "∂L/∂z2" in sub.caption and "∂L/∂b" not in sub.caption


def test_what_a_vjp_writes_after_its_values_is_a_definition():
    """The panel writes a VJP's text after `,\\;` as "where …", after the values: it must define something
    (ĝ = ḡ ⊙ w), never be the VJP's second half."""
    import gc

    from gradviz.ops.op import Op
    bad = []
    for op in {id(o): o for o in gc.get_objects() if type(o) is Op}.values():
        for template in op.vjp_latex:
            defined = latex.where_split(template)[1]
            if defined and not all(" = " in part for part in defined.split(r",\; ")):
                bad.append((op.torch_name, defined))
    assert not bad, bad


def test_a_python_number_is_drawn_as_the_number_and_a_tensor_as_the_tensor():
    """x * 2 reads z = 2x (torch keeps the scalar); x * y with y = tensor(2.) reads z = x ⊙ y: the node
    saved the tensor y, and the picture says so."""
    x = torch.tensor(1.0, requires_grad=True)
    y = torch.tensor(2.0)
    assert formula(x * 2, {"x": x}).forward_text().endswith("= 2x")
    z = x * y
    assert formula(z, {"x": x, "y": y, "z": z}).forward_text() == "z = x ⊙ y"
    z.backward()   # the node lets go of its saved values, but still holds the 0-d y: still named
    assert formula(z, {"x": x, "y": y, "z": z}).forward_text() == "z = x ⊙ y"


def test_a_cat_and_a_stack_send_each_input_its_own_part_of_the_gradient():
    """ḡ[:, 0:3] and ḡ[:, 3:7] for a cat along dim 1, ḡ[:, :, 1] for a stack along dim -1: each input
    its part of the output, counted from the shapes the node read (not "the slice of ḡ")."""
    a, b = torch.randn(2, 3, requires_grad=True), torch.randn(2, 4, requires_grad=True)
    c = torch.cat([a, b], dim=1)
    assert vjps(formula(c, {"a": a, "b": b, "c": c})) == ["∂L/∂a = ḡ[:, 0:3]", "∂L/∂b = ḡ[:, 3:7]"]
    s = torch.stack([a, a * 2], dim=-1)
    assert vjps(formula(s, {"a": a, "s": s}, "StackBackward0")) == ["∂L/∂a = ḡ[:, :, 0]", "∂L/∂t₁ = ḡ[:, :, 1]"]
    x = torch.randn(3, requires_grad=True)   # the first input needs no gradient: its rows still count
    y = torch.cat([torch.zeros(2), x])
    assert vjps(formula(y, {"x": x, "y": y})) == ["∂L/∂x = ḡ[2:5]"]
