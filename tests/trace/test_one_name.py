"""One tensor, one name: a recording gives every tensor one symbol, and every view writes it alike.

For each program (run from a file with source tracking on, as in a notebook) every edge of the
Trace is walked: the tensor on it is written with the same symbol by its producer (the left side of
its formula, its diagram label, the "received ḡ = ∂L/∂…" line of its step) and by its consumer (its
formula, its diagram label, the ∂L/∂… it sends in the panel and the caption); distinct tensors
have distinct symbols; and draw() after backward() shows the formulas it showed before.
"""
from __future__ import annotations

import re
import runpy

import pytest

import gradviz as torch
from gradviz import code_lines
from gradviz.render import draw, latex
from gradviz.render.formula import Formula, Graph

PROGRAMS = {
    "barlow": """\
z1 = torch.randn(6, 3, requires_grad=True)
z2 = torch.randn(6, 3, requires_grad=True)
N = 6
c = z1.T @ z2 / N
loss = -torch.diagonal(c).sum()
roots, names, gradient = [loss], {"z1": z1, "z2": z2, "loss": loss}, None
""",
    "fanout": """\
a = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
b = torch.tensor([0.5, 2.0, -1.0], requires_grad=True)
y = a * 2 + a * 3 * b + torch.tanh(a)
s = y.sum()
roots, names, gradient = [s], {"a": a, "b": b, "s": s}, None
""",
    "mlp": """\
model = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU(), torch.nn.Linear(5, 3))
x = torch.randn(6, 4)
target = torch.tensor([0, 2, 1, 2, 0, 1])
loss = torch.nn.functional.cross_entropy(model(x), target)
roots, names, gradient = [loss], {**dict(model.named_parameters()), "loss": loss}, None
""",
    "power": """\
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
p = x ** 3
q = p ** 2
s = (p + q).sum()
roots, names, gradient = [s], {"x": x, "s": s}, None
""",
    "doubling": """\
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
while y.norm() < 100:
    y = y * 2
roots, names, gradient = [y], {"x": x, "y": y}, torch.tensor([0.1, 1.0, 0.0001])
""",
    "gpt_block": """\
T, C = 4, 8
x = torch.randn(T, C, requires_grad=True)
ln1, ln2 = torch.nn.LayerNorm(C), torch.nn.LayerNorm(C)
Wq, Wk, Wv, Wo = (torch.randn(C, C, requires_grad=True) for _ in range(4))
W1 = torch.randn(C, 4 * C, requires_grad=True)
W2 = torch.randn(4 * C, C, requires_grad=True)
h = ln1(x)
q = h @ Wq
k = h @ Wk
v = h @ Wv
att = q @ k.T / C ** 0.5
mask = torch.tril(torch.ones(T, T)) == 0
att = att.masked_fill(mask, float("-inf")).softmax(-1)
y = x + att @ v @ Wo
out = y + torch.nn.functional.gelu(ln2(y) @ W1) @ W2
loss = out.pow(2).mean()
roots, names, gradient = [loss], {"x": x, "Wq": Wq, "Wk": Wk, "Wv": Wv, "Wo": Wo, "W1": W1, "W2": W2,
                                  "loss": loss}, None
""",
    # nodes of several outputs: each output under the learner's name, read from the unpacking line
    # (split), from the names given (qr, std_mean) or kept when nothing reads it (slogdet's sign)
    "several_outputs": """\
x = torch.randn(4, 6, requires_grad=True)
A = torch.randn(4, 3, requires_grad=True)
q, k, v = x.split(2, dim=1)
att = (q * k).softmax(-1) * v
Q, R = torch.linalg.qr(A)
s, m = torch.std_mean(x, 0)
sign, logdet = torch.linalg.slogdet(A.T @ A)
loss = att.sum() + Q.sum() + (R ** 2).sum() + (s * m).sum() + logdet
roots, names, gradient = [loss], {"x": x, "A": A, "Q": Q, "R": R, "s": s, "m": m, "sign": sign,
                                  "logdet": logdet, "loss": loss}, None
""",
}


def run(name: str, folder, source: str | None = None) -> dict:
    """The program's namespace (PROGRAMS[name], or `source`), run from a file with source tracking on
    (each node knows its line)."""
    path = folder / f"{name}.py"
    path.write_text("import gradviz as torch\ntorch.manual_seed(0)\n" + (source or PROGRAMS[name]))
    was = code_lines.source_tracking()
    code_lines.set_source_tracking(True)
    try:
        return runpy.run_path(str(path))
    finally:
        code_lines.set_source_tracking(was)


def op_labels(source: str) -> dict:
    """node id -> the formula line of its label, for every op node in DOT source."""
    found = re.findall(r'\b(n\d+) \[label="\{\w*Backward\w*\\n((?:\\[^n]|[^\\"])*)', source)
    return {node: re.sub(r"\\(.)", r"\1", text) for node, text in found}   # DOT's record escapes undone


def tensor_symbols(trace) -> list:
    """The symbol of every tensor in the trace: leaves, op outputs, inputs that are not in the graph."""
    out = [n.name for n in trace.nodes if n.kind == "leaf"]
    for n in trace.nodes:
        if n.kind == "op":
            out += [s for s in n.out_names if s] + [s for s in n.in_names if s]
    return out


@pytest.fixture(params=sorted(PROGRAMS))
def recorded(request, tmp_path):
    scope = run(request.param, tmp_path)
    anim = torch.animate(*scope["roots"], names=scope["names"], gradient=scope["gradient"], forward=False)
    return request.param, scope, anim


def test_every_edge_is_one_symbol_in_every_view(recorded):
    name, scope, anim = recorded
    trace = anim.trace
    graph = Graph(trace)
    labels = op_labels(draw(*scope["roots"], names=scope["names"], max_nodes=None).source)
    frames = {trace.steps[f.step].node: f for f in anim.frames if f.phase == "backward"}
    assert frames, name
    symbols = tensor_symbols(trace)
    assert len(symbols) == len(set(symbols)), sorted(s for s in symbols if symbols.count(s) > 1)
    checked = 0
    for edge in trace.edges:
        src, dst = graph.nodes[edge.src], graph.nodes[edge.dst]
        if edge.slot < 0 or dst.kind != "op":
            continue
        sym = graph.symbol(edge.src, edge.output_nr)
        assert sym, (name, edge)
        # the producer writes it on the left of its formula, in the panel and on the diagram
        if src.kind == "op":
            made = Formula(graph, src)
            assert made.output_text(edge.output_nr) == sym
            left = labels[src.id].split(" =")[0]
            assert re.match(re.escape(sym) + r"(\[| =)", labels[src.id]) or \
                sym in re.split(r"[(), ]+", left), (labels[src.id], sym)
        # the consumer reads it under the same symbol, in its formula where the record's formula
        # names that input, and on its diagram label
        read = Formula(graph, dst)
        assert read.input_text(edge.slot) == sym, (name, dst.name, edge.slot)
        if f"${edge.slot}" in dst.latex.split(r":\;")[0] and len(read.forward_text()) <= 48:
            assert sym in labels[dst.id], (labels[dst.id], sym)
        # what the consumer sends along the edge is what the producer's step receives
        sent = frames.get(dst.id)
        if sent is not None and any(eid == edge.id for eid, _, _ in trace.steps[sent.step].flows):
            assert f"∂L/∂{sym} = " in sent.caption, (sent.caption, sym)
            assert f"∂L/∂{sym} = " in latex.text(sent.text), sym
            got = frames.get(src.id)
            if src.kind == "op" and got is not None:   # ḡ₁, ḡ₂ (split's) or ḡ_Q, ḡ_R (qr's) at a node of several outputs
                assert re.search(f"(?:received|,) ḡ\\S* = ∂L/∂{re.escape(sym)} = ", got.caption), (got.caption, sym)
                assert re.search(f"ḡ\\S* = ∂L/∂{re.escape(sym)} = ", latex.text(got.text)), sym
            elif src.kind == "accumulate" and got is not None:
                assert got.caption.startswith(f"{sym}.grad = "), (got.caption, sym)
            checked += 1
    assert checked >= 3, name


def test_draw_after_backward_shows_the_same_formulas(recorded, tmp_path):
    name, _, _ = recorded
    scope = run(name, tmp_path)
    roots, names = scope["roots"], scope["names"]
    before = op_labels(draw(*roots, names=names, max_nodes=None).source)
    roots[0].backward(scope["gradient"])
    after = op_labels(draw(*roots, names=names, max_nodes=None).source)
    assert after == before


def test_a_rebound_variable_shows_which_value_each_node_made(tmp_path):
    scope = run("doubling", tmp_path)
    trace = draw(*scope["roots"], names=scope["names"]).trace
    graph = Graph(trace)
    texts = [Formula(graph, n).forward_text() for n in trace.nodes if n.kind == "op"]
    k = len(texts)
    assert k >= 5 and texts[0] == "y₁ = 2x"
    assert texts[1:] == [f"y{torch_sub(i + 1)} = 2y{torch_sub(i)}" for i in range(1, k)]
    assert trace.node(trace.roots[0]).name == f"y{torch_sub(k)}"   # the learner's y is the last value


def torch_sub(k: int) -> str:
    return str(k).translate(str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉"))


def test_each_output_of_a_node_of_several_is_written_by_its_name(tmp_path):
    scope = run("several_outputs", tmp_path)
    trace = draw(*scope["roots"], names=scope["names"]).trace
    graph = Graph(trace)
    texts = {n.name: Formula(graph, n).forward_text() for n in trace.nodes if n.kind == "op"}
    assert texts["SplitBackward0"] == "q, k, v = split(x, (2, 2, 2))"    # named by the unpacking line
    assert texts["LinalgQrBackward0"] == "(Q, R) = qr(A): A = Q R"
    assert texts["StdMeanBackward0"] == "(s, m) = (std x, mean x)"
    assert texts["LinalgSlogdetBackward0"].startswith("(sign, logdet) = ")   # sign: named, read by nothing
    slogdet = next(n for n in trace.nodes if n.name == "LinalgSlogdetBackward0")
    assert Formula(graph, slogdet).text(slogdet.vjp_latex[0]).startswith("ḡ_(logdet) ")
    # the step says what a node of several outputs received, a term of the chain rule for each, with
    # ḡ written as its VJP formula writes it
    anim = torch.animate(*scope["roots"], names=scope["names"], forward=False)
    said = {anim.trace.steps[f.step].node: re.sub(r"\s+", " ", latex.text(f.text)) for f in anim.frames}
    qr = next(n.id for n in anim.trace.nodes if n.name == "LinalgQrBackward0")
    assert ("multiplies the gradients it received, ḡ_Q = ∂L/∂Q, ḡ_R = ∂L/∂R, by its local derivatives to send "
            "∂L/∂A = ḡ_Q · ∂Q/∂A + ḡ_R · ∂R/∂A back to A.") in said[qr]
    split = next(n.id for n in anim.trace.nodes if n.name == "SplitBackward0")
    assert "∂L/∂x = ḡ₁ · ∂q/∂x + ḡ₂ · ∂k/∂x + ḡ₃ · ∂v/∂x" in said[split]


@pytest.mark.parametrize("line,read", [
    ("q, k, v = x.split(2, dim=1)", (("q", "k", "v"), False)),
    ("out, _ = rnn(x)", (("out", ""), False)),            # a throwaway name names nothing
    ("h, c = cell(x, (h, c))", (("h", "c"), True)),
    ("mu, sd = x.mean(), x.std()", None),                  # a tuple of values: no node has both
    ("a, b = b, a", None),
    ("(a, b), c = f(x)", None),
])
def test_which_lines_name_the_outputs_of_one_call(line, read):
    from gradviz.naming import assignment
    assert assignment(line) == read


def test_a_tuple_of_values_on_one_line_names_no_output(tmp_path):
    scope = run("pair", tmp_path, "x = torch.randn(3, requires_grad=True)\nmu, sd = x.mean(), x.std()\nloss = mu * sd\n")
    trace = draw(scope["loss"], names={"x": scope["x"], "loss": scope["loss"]}).trace
    names = {n.name: n.out_names for n in trace.nodes if n.kind == "op"}
    assert names["StdBackward0"] == ("t₂",) and names["MeanBackward0"] == ("t₁",)   # not mu and sd


def test_the_line_that_assigns_a_variable_names_its_value(tmp_path):
    scope = run("barlow", tmp_path)
    trace = draw(*scope["roots"], names=scope["names"]).trace
    graph = Graph(trace)
    texts = {n.name: Formula(graph, n).forward_text() for n in trace.nodes if n.kind == "op"}
    assert texts["DivBackward0"] == "c = t₂/6"           # the learner's c, not a record letter
    assert texts["DiagonalBackward0"] == "t₃ = diag(c)"  # read as c where it is used
    assert texts["NegBackward0"] == "loss = −t₄"
    assert texts["PermuteBackward0"].startswith("t₁ = ") and texts["MmBackward0"] == "t₂ = t₁ z2"
