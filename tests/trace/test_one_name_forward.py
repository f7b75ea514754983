"""One tensor, one name in forward mode: a forward trace names its tensors with the Recorder's rules
(tracing.name_tensors), and every view of the forward player writes each tensor alike.

For each program (run from a file with source tracking on, as in a notebook) every edge of the
ForwardTrace is walked: the tensor on it is written with one symbol by its producer (the left side
of its formula, its diagram label, the tangent its frame sends) and by its consumer (its formula,
its diagram label, the tangent its frame receives, in the caption and the panel); distinct tensors
have distinct symbols; and a program's ops read the same formulas in forward mode as in backward.
"""
from __future__ import annotations

import re
import runpy

import pytest

import gradviz
from gradviz import code_lines
from gradviz.naming import dotted
from gradviz.render import latex, to_dot
from gradviz.render.formula import Formula, Graph
from tests.trace.test_one_name import tensor_symbols

PROGRAMS = {
    # fan-out, a constant the code names (W), a value assigned by a line (h, a), the rest unnamed
    "fanout": """\
W = torch.tensor([[0.5, 0.3, -0.4], [0.2, 0.0, 0.6]])

def f(x, b):
    h = torch.tanh(W @ x)
    a = h * b
    return a * 2 + a * 3

primals = (torch.tensor([0.5, -1.0, 2.0]), torch.tensor([1.0, -2.0]))
tangents = (torch.tensor([1.0, 0.0, 0.5]), torch.tensor([0.0, 1.0]))
""",
    # a rebound variable: one value per pass, y₁, y₂, ...
    "doubling": """\
def f(x):
    y = x * 2
    for _ in range(3):
        y = y * 2
    return y.sum()

primals = (torch.tensor([1.0, 2.0, 3.0]),)
tangents = (torch.tensor([0.1, 1.0, 0.0]),)
""",
    "mlp": """\
def f(x, w1, w2):
    z = x @ w1
    h = z.relu()
    p = (h @ w2).softmax(-1)
    return -p.log().mean()

torch.manual_seed(0)
primals = (torch.randn(2, 3), torch.randn(3, 4), torch.randn(4, 2))
tangents = tuple(torch.randn(*t.shape) for t in primals)
""",
}


def run(name: str, folder) -> dict:
    path = folder / f"{name}.py"
    path.write_text("import gradviz as torch\n" + PROGRAMS[name])
    was = code_lines.source_tracking()
    code_lines.set_source_tracking(True)
    try:
        scope = runpy.run_path(str(path))
        scope["anim"] = gradviz.animate_jvp(scope["f"], scope["primals"], scope["tangents"])
        return scope
    finally:
        code_lines.set_source_tracking(was)


def op_labels(source: str) -> dict:
    """node id -> the formula line of an op node's label in DOT source."""
    found = re.findall(r'\b(n\d+) \[label="\{\w+\\n((?:\\[^n]|[^\\"])*)\\n[^"]*" [^\]]*class=op\]', source)
    return {node: re.sub(r"\\(.)", r"\1", text) for node, text in found}


@pytest.fixture(params=sorted(PROGRAMS))
def recorded(request, tmp_path):
    return request.param, run(request.param, tmp_path)


def test_every_edge_is_one_symbol_in_every_forward_view(recorded):
    name, scope = recorded
    anim = scope["anim"]
    trace = anim.trace
    graph = Graph(trace)
    labels = op_labels(to_dot(trace))
    frames = {trace.tangents[f.step].node: f for f in anim.frames if f.step is not None}
    symbols = tensor_symbols(trace)
    assert len(symbols) == len(set(symbols)), sorted(s for s in symbols if symbols.count(s) > 1)
    assert not any(re.fullmatch(r"v[₀-₉]+", s) for s in symbols)   # no second scheme beside t₁, t₂
    checked = 0
    for edge in trace.edges:
        src, dst = graph.nodes[edge.src], graph.nodes[edge.dst]
        if dst.kind != "op":
            continue
        sym = graph.symbol(edge.src, edge.output_nr)
        assert sym, (name, edge)
        tangent = dotted(sym)
        if src.kind == "op":   # the producer writes it on its left side and sends its tangent
            assert Formula(graph, src).out_text == sym
            assert labels[src.id].startswith(sym + " = "), (labels[src.id], sym)
            sent = frames[src.id]
            assert sent.caption.split(" -> ")[-1].startswith(f"{tangent} = "), (sent.caption, sym)
            assert f"sends{tangent} = " in latex.text(sent.text), sym
        read = Formula(graph, dst)   # the consumer reads it under the same symbol
        assert read.input_text(edge.slot) == sym, (name, dst.name, edge.slot)
        assert sym in labels[dst.id], (labels[dst.id], sym)
        got = frames[dst.id]
        assert f"; {tangent} = " in got.caption or f", {tangent} = " in got.caption, (got.caption, sym)
        assert f"∂{read.out_text}/∂{sym} {tangent}" in latex.text(got.text), (latex.text(got.text), sym)
        checked += 1
    assert checked >= 4, name


def test_the_code_names_values_and_constants_as_backward_does(tmp_path):
    scope = run("fanout", tmp_path)
    graph = Graph(scope["anim"].trace)
    texts = [Formula(graph, n).forward_text() for n in scope["anim"].trace.nodes if n.kind == "op"]
    # W, a global no op gave a tangent to, is the learner's W, not the record's letter A
    assert texts == ["t₁ = W x", "h = tanh t₁", "a = h ⊙ b", "t₂ = 2a", "t₃ = 3a", "out = t₂ + t₃"]
    scope = run("doubling", tmp_path)
    graph = Graph(scope["anim"].trace)
    texts = [Formula(graph, n).forward_text() for n in scope["anim"].trace.nodes if n.kind == "op"]
    assert texts == ["y₁ = 2x", "y₂ = 2y₁", "y₃ = 2y₂", "y₄ = 2y₃", "out = Σ y₄"]


def test_forward_and_backward_write_one_program_alike(tmp_path):
    """The ops of one program read the same formulas in the forward player as in the backward one."""
    scope = run("mlp", tmp_path)
    forward = scope["anim"].trace
    fgraph = Graph(forward)
    was = code_lines.source_tracking()
    code_lines.set_source_tracking(True)
    try:
        leaves = [p.clone().requires_grad_() for p in scope["primals"]]
        out = scope["f"](*leaves)
        back = gradviz.animate(out, names={"x": leaves[0], "w1": leaves[1], "w2": leaves[2], "out": out}).trace
    finally:
        code_lines.set_source_tracking(was)
    bgraph = Graph(back)
    ops = lambda trace, graph: [Formula(graph, trace.node(n)).forward_text()   # noqa: E731
                                for n in trace.forward if trace.node(n).kind == "op"]
    assert ops(forward, fgraph) == ops(back, bgraph)
    assert ops(forward, fgraph)[:2] == ["z = x w1", "h = max(z, 0)"]
