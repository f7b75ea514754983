"""The formula a node shows, after the learner's names and constants are put in and tidied (2x, x³,
0 · x, exp(e)), is still true: it is evaluated (tests/support/latex_eval.py) on the tensors it names
and compared with what the forward made and what backward sent. And it reads as one expression: a
zero or a power of ten is never glued to a name, a first power keeps its exponent, and a tensor
called e is never mistaken for Euler's number."""
import numpy as np
import pytest
from tests.support.latex_eval import Evaluator, shown

import gradviz as torch
import gradviz.nn.functional as F
from gradviz.render.formula import Formula, Graph
from gradviz.tracing import build_trace


def _node_formula(y, names: dict, op: str) -> Formula:
    trace = build_trace((y,), names)
    node = [n for n in trace.nodes if n.kind == "op" and n.name == op][-1]
    return Formula(Graph(trace), node)


def _check(y, names: dict, op: str, out: str, letters: dict | None = None) -> Formula:
    """The node's forward and each VJP it shows, evaluated on the named tensors (and `letters`, the
    record's letters the panel spells out after the formula), equal the engine's."""
    f = _node_formula(y, names, op)
    values = {k: v.detach().numpy() for k, v in names.items()}
    source, env = shown(f.latex(f.node.latex), tuple(f.names), values, out)
    env.update(letters or {})
    for side in Evaluator(env).forward(source):
        assert np.allclose(np.broadcast_to(side, y.shape), values[out], equal_nan=True), (f.forward_text(), side)
    g = torch.linspace(-1.0, 2.0, y.numel(), dtype=y.dtype).reshape(y.shape)
    slots: dict = {}   # a tensor read twice (e ** e) gets the sum of its slots' VJPs
    for slot in range(len(f.inputs)):
        name = f.input_text(slot)
        if name in names and names[name].requires_grad:
            slots.setdefault(name, []).append(slot)
    assert slots, f.forward_text()
    for name, read in slots.items():
        sent = torch.autograd.grad(y, names[name], g, retain_graph=True)[0].numpy()
        total = 0
        for slot in read:
            source, env = shown(f.latex(f._vjp_template(slot)), tuple(f.names), values, out)
            env.update(letters or {})
            env["\\bar{g}"] = g.numpy()
            total = total + Evaluator(env, target_shape=sent.shape).vjp(source)
        assert np.allclose(np.broadcast_to(total, sent.shape), sent, equal_nan=True), \
            ([f.vjp_text(slot) for slot in read], total, sent)
    return f


X = [0.5, 1.5, 2.0]
# (program, PyTorch node, what the diagram reads, what backward reads)
CONSTANTS = [
    (lambda x: x * 0.0, "MulBackward0", "y = 0 · x", "∂L/∂x = 0 · ḡ"),
    (lambda x: 0.0 * x, "MulBackward0", "y = 0 · x", "∂L/∂x = 0 · ḡ"),
    (lambda x: x * -1.0, "MulBackward0", "y = −x", "∂L/∂x = −ḡ"),
    (lambda x: x * 1e-8, "MulBackward0", "y = 10⁻⁸ · x", "∂L/∂x = 10⁻⁸ · ḡ"),
    (lambda x: x * 2.5e-7, "MulBackward0", "y = 2.5 × 10⁻⁷ · x", "∂L/∂x = 2.5 × 10⁻⁷ · ḡ"),
    (lambda x: x * 2, "MulBackward0", "y = 2x", "∂L/∂x = 2ḡ"),
    (lambda x: x * 0.5, "MulBackward0", "y = 0.5x", "∂L/∂x = 0.5ḡ"),
    (lambda x: x / 3, "DivBackward0", "y = x/3", "∂L/∂x = ḡ/3"),
    (lambda x: x ** 0, "PowBackward0", "y = x⁰", "∂L/∂x = 0 · ḡ"),
    (lambda x: x ** 1, "PowBackward0", "y = x¹", "∂L/∂x = ḡ"),
    (lambda x: x ** 2, "PowBackward0", "y = x²", "∂L/∂x = ḡ ⊙ 2x"),
    (lambda x: x ** 0.5, "PowBackward0", "y = x^(0.5)", "∂L/∂x = ḡ ⊙ 0.5x^(−0.5)"),
    (lambda x: x ** -1, "PowBackward0", "y = x⁻¹", "∂L/∂x = ḡ ⊙ −x⁻²"),
    (lambda x: x ** -0.5, "PowBackward0", "y = x^(−0.5)", "∂L/∂x = ḡ ⊙ −0.5 x^(−1.5)"),
    (lambda x: x ** 1e-8, "PowBackward0", "y = x^(10⁻⁸)", "∂L/∂x = ḡ ⊙ 10⁻⁸ · x^(10⁻⁸ − 1)"),
]


@pytest.mark.parametrize("program, op, forward, backward", CONSTANTS, ids=[c[2] for c in CONSTANTS])
def test_a_constant_reads_as_one_expression_and_stays_true(program, op, forward, backward):
    x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    y = program(x)
    f = _check(y, {"x": x, "y": y}, op, "y")
    assert f.forward_text() == forward
    assert f.vjp_text(0) == backward


def test_x_to_the_zero_sends_zeros_where_x_is_zero():
    """0 · ḡ, not 0 · x⁻¹ (which is nan at x = 0, where torch sends 0)."""
    x = torch.tensor([0.0, 1.5], dtype=torch.float64, requires_grad=True)
    y = x ** 0
    assert _check(y, {"x": x, "y": y}, "PowBackward0", "y").vjp_text(0) == "∂L/∂x = 0 · ḡ"


def test_a_zero_is_never_glued_to_a_name():
    """x * 0.0 on an unnamed input read `0t₁` (one word, or a hex literal 0x)."""
    x = torch.tensor(X, requires_grad=True)
    y = (x * 1.0).exp() * 0.0
    f = _node_formula(y, {"y": y}, "MulBackward0")
    assert f.forward_text() == "y = 0 · t₃"


NEG = [-0.5, 1.5, 2.0]
E_PROGRAMS = [   # (program of a tensor called e, its values, its node, what the diagram reads)
    (lambda e: e.exp(), NEG, "ExpBackward0", "y = exp(e)"),
    (lambda e: torch.sigmoid(e), NEG, "SigmoidBackward0", "y = σ(e) = 1/(1 + exp(−e))"),
    (lambda e: F.softplus(e, beta=2.0), NEG, "SoftplusBackward0", "y = log(1 + exp(2e))/2"),
    (lambda e: e ** e, X, "PowBackward1", "y = eᵉ"),   # no Euler's number in this recording: e to its own power
    (lambda e: e.log(), X, "LogBackward0", "y = log e"),
]


@pytest.mark.parametrize("program, values, op, forward", E_PROGRAMS, ids=[p[2] for p in E_PROGRAMS])
def test_a_tensor_called_e_is_never_eulers_number(program, values, op, forward):
    e = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    e.name = "e"
    y = program(e)
    f = _check(y, {"e": e, "y": y}, op, "y")
    assert f.forward_text() == forward
    # every e that a formula of this recording writes is the tensor: Euler's number is written exp(·)
    for template in (f.node.latex, *f.node.vjp_latex):
        assert "e^" not in f.latex(template).replace(r"\exp", "")


def test_eulers_number_stays_e_where_no_tensor_is_called_e():
    x = torch.tensor(X, dtype=torch.float64, requires_grad=True)
    y = x.exp()
    assert _check(y, {"x": x, "y": y}, "ExpBackward0", "y").forward_text() == "y = eˣ"


def test_the_issue_program_with_a_tensor_called_e():
    """(e.exp() * e).sum(): the exp node read eᵉ."""
    e = torch.tensor(X, requires_grad=True)
    e.name = "e"
    loss = (e.exp() * e).sum()
    trace = torch.draw(loss).trace
    graph = Graph(trace)
    texts = [Formula(graph, n).forward_text() for n in trace.nodes if n.kind == "op"]
    assert any(t.endswith("= exp(e)") for t in texts), texts
    assert not any("eᵉ" in t for t in texts), texts


@pytest.mark.parametrize("program, op, forward", [
    (lambda a, b, d: torch.cat([a, b, d]), "CatBackward0", "y = [a, b, d]"),
    (lambda a, b, d: torch.stack([a, d]), "StackBackward0", "y = stack(a, d)"),
    (lambda a, b, d: torch.block_diag(b, a), "BlockDiagBackward0", "y = diag(b, a)"),
])
def test_an_op_over_a_list_names_each_tensor_of_the_list(program, op, forward):
    """cat, stack and block_diag read with the learner's tensors, in the list's order (they read
    [a₁, a₂, …] whatever the inputs were, which reads like slices of a tensor called a)."""
    names = {k: torch.tensor([1.0, 2.0], requires_grad=True) for k in "abd"}
    names["y"] = program(**{k: names[k] for k in "abd"})
    assert _node_formula(names["y"], names, op).forward_text() == forward


def test_the_op_reference_writes_a_list_of_any_length():
    from gradviz.ops.shape import BLOCK_DIAG, CAT, STACK
    assert (CAT.formula, STACK.formula, BLOCK_DIAG.formula) == ("c = [a₁, a₂, …]", "c = stack(a₁, a₂, …)",
                                                                 "C = diag(A₁, A₂, …)")


def test_a_tensor_named_like_an_index_letter_keeps_its_name_and_the_index_is_primed():
    """A convolution's output called o and its kernel called k: the channel index o and the tap k of the
    record's index form are written o′ and k′, so o and k mean the tensors, and the formula stays true."""
    torch.manual_seed(0)
    x = torch.randn(2, 3, 7, dtype=torch.float64, requires_grad=True)
    k = torch.randn(4, 3, 2, dtype=torch.float64, requires_grad=True)
    o = F.conv1d(x, k, stride=2, dilation=2)
    f = _check(o, {"x": x, "k": k, "o": o}, "ConvolutionBackward0", "o",
               letters={"s": np.asarray([2]), "q": np.asarray([0]), "d": np.asarray([2])})
    text = f.forward_text()
    assert text.startswith("o = x ⋆ k: o[n, o′, p] = Σ over i, k′ of k[o′, i, k′] x[n, i, s p + d k′ − q]"), text
    assert "∂L/∂k = Σ over n of xₙ ⋆ ḡₙ: Σ over n, p of ḡ[n, o′, p] x[n, i, s p + d k′ − q] at [o′, i, k′]" \
        == f.vjp_text(1)
