"""The diagram in the learner's terms: op labels use the step panel's formulas with the node's own
names and constants (one implementation, as Unicode), and with source tracking on every node's
tooltip names the file:line and the code that made it, in draw()'s SVG and in the player."""
from __future__ import annotations

import html
import re

import pytest

import gradviz as torch
import gradviz.nn.functional as F
from gradviz import code_lines
from gradviz.render import draw
from gradviz.render.formula import Formula, Graph


def op_formulas(source: str) -> list:
    """(torch name, formula line) of every op node label in DOT source, in the order drawn."""
    return re.findall(r'label="\{(\w+Backward\d)\\n([^\\"]*)', source)


def program():
    x = torch.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
    M = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    a = torch.tensor([0.5, 1.5], requires_grad=True)
    b = a + a
    y = x * 2
    p = x.pow(3)
    z = torch.mm(x, M)
    e = torch.exp(x)
    t = torch.tanh(z)
    s = x - M
    q = x / M
    m = z.mean(0)
    r = F.relu(x)
    k = 3 - x
    u = x.sum(dim=1)
    lg = torch.log(M)
    total = (b.sum() + y.sum() + p.sum() + t.sum() + e.sum() + s.sum() + q.sum() + m.sum() + r.sum()
             + k.sum() + u.sum() + lg.sum())
    return total, dict(x=x, M=M, a=a, b=b, y=y, p=p, z=z, e=e, t=t, s=s, q=q, m=m, r=r, k=k, u=u, lg=lg,
                       total=total)


EXPECTED = {   # what a learner reads on the diagram for each named line of the program above
    "b": ("AddBackward0", "b = a + a"),
    "y": ("MulBackward0", "y = 2x"),
    "p": ("PowBackward0", "p = x³"),
    "z": ("MmBackward0", "z = x M"),
    "e": ("ExpBackward0", "e = exp(x)"),   # a tensor is called e: Euler's number is not written as e
    "t": ("TanhBackward0", "t = tanh z"),
    "s": ("SubBackward0", "s = x − M"),
    "q": ("DivBackward0", "q = x/M"),
    "m": ("MeanBackward1", "m = mean over dim 0 of z"),
    "r": ("ReluBackward0", "r = max(x, 0)"),
    "k": ("RsubBackward1", "k = 3 − x"),
    "u": ("SumBackward1", "u = Σ over dim 1 of x"),
    "lg": ("LogBackward0", "lg = log M"),
}


def test_op_labels_read_with_the_learners_names_and_constants():
    total, names = program()
    drawn = op_formulas(draw(total, names=names).source)
    for name, expected in EXPECTED.items():
        assert expected in drawn, (name, drawn)
    # the intermediates nobody named are numbered with a letter no variable of the program uses
    # (t and u are taken), and each is written the same where it is made and where it is read
    assert ("SumBackward0", "v₁ = Σ b") in drawn and ("SumBackward0", "v₂ = Σ y") in drawn
    assert ("AddBackward0", "v₃ = v₁ + v₂") in drawn
    assert ("AddBackward0", "total = v₂₁ + v₂₂") in drawn


def test_the_caller_names_are_used_when_none_are_given():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = x * 2
    v = w.pow(3).sum()
    drawn = op_formulas(draw(v).source)
    assert ("MulBackward0", "w = 2x") in drawn and ("PowBackward0", "t₁ = w³") in drawn
    assert ("SumBackward0", "v = Σ t₁") in drawn


def test_a_label_is_the_panels_formula_as_unicode():
    """One implementation: every op label is Formula.forward_text of its node (the panel's Formula)."""
    total, names = program()
    diagram = draw(total, names=names)
    graph = Graph(diagram.trace)
    labels = dict(re.findall(r'\b(n\d+) \[label="\{\w+\\n([^\\"]*)', diagram.source))
    ops = [n for n in diagram.trace.nodes if n.kind == "op"]
    assert len(ops) >= 20
    for node in ops:
        assert labels[node.id] == Formula(graph, node).forward_text(), node.name


@pytest.fixture
def tracking():
    code_lines.set_source_tracking(True)
    yield
    code_lines.set_source_tracking(False)


def node_titles(svg: str) -> dict:
    """node id -> the text of its <title> (the browser's tooltip)."""
    return {m.group(1): html.unescape(m.group(2)) for m in re.finditer(
        r'<g\b[^>]*\bid="(n\d+)"[^>]*class="node[^"]*"[^>]*>\s*<title>([^<]*)</title>', svg)}


def line_of(text: str) -> int:
    """The last line of this file that reads `text` (the tooltip test's own lines come last)."""
    with open(__file__, encoding="utf-8") as f:
        return [k for k, line in enumerate(f, 1) if line.strip() == text][-1]


def test_every_node_tooltip_names_its_line_in_draw_and_in_the_player(tracking):
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = a + a
    c = (b * 3).sum()
    expected = {
        "a": "a = torch.tensor([1.0, 2.0], requires_grad=True)",
        "AccumulateGrad": "a = torch.tensor([1.0, 2.0], requires_grad=True)",
        "AddBackward0": "b = a + a",
        "MulBackward0": "c = (b * 3).sum()",
        "SumBackward0": "c = (b * 3).sum()",
    }
    diagram = draw(c)
    trace = diagram.trace
    for svg in (diagram.svg(), torch.animate(c).svg):
        titles = node_titles(svg)
        assert set(titles) == {n.id for n in trace.nodes}
        for node in trace.nodes:
            if node.kind == "output":
                continue
            code = expected[node.name]
            assert titles[node.id] == f"{hover_name(node)} · test_diagram_names.py:{line_of(code)}: {code}", node
        assert titles[trace.roots[0]] == "c"     # the output (no line of its own)


def test_without_source_tracking_a_tooltip_is_the_nodes_name():
    a = torch.tensor([3.0, 4.0], requires_grad=True)
    c = (a * 3).sum()
    diagram = draw(c)
    titles = node_titles(diagram.svg())
    assert titles == {n.id: hover_name(n) for n in diagram.trace.nodes}
    assert "MulBackward0 (t₁)" in titles.values()   # an op's tooltip names the tensor it made


def hover_name(node) -> str:
    """A node's name as its tooltip starts: an op's with the symbol of the tensor it made."""
    return f"{node.name} ({node.out_names[0]})" if node.kind == "op" else node.name
