"""make_dot draws custom autograd.Functions as torchviz draws them: the tensors a Function saved
with ctx.save_for_backward always appear (orange, joined to the node by an undirected edge, a
saved leaf drawn as its leaf node), and a custom backward's `2 * x` is MulBackward0. The same
program gives the same nodes and edges through gradviz's graph, through PyTorch's graph (the
torch bridge), and, where torchviz is installed, through torchviz itself."""
from __future__ import annotations

import collections
import importlib.util
import re

import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

PROGRAMS = {
    "used twice, double backward": """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = Square.apply(Square.apply(x)).sum()
gx, = torch.autograd.grad(y, x, create_graph=True)
graphs = {"y": y, "gradient": gx.sum()}
""",
    "saves its output and a weight": """
class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        out = (x * w).exp()
        ctx.save_for_backward(out, w)
        return out
    @staticmethod
    def backward(ctx, g):
        out, w = ctx.saved_tensors
        return g * out * w, None
x = torch.tensor([0.5, -1.0], requires_grad=True)
w = torch.tensor([2.0, 3.0])
h = (x * 3).tanh()
graphs = {"loss": Exp.apply(h, w).sum()}
""",
}
LABEL = re.compile(r'label="((?:[^"\\]|\\.)*)"|label=(\S+)')


def shape_of(dot) -> tuple:
    """The drawing without its ids: nodes as (label, fill colour) and edges as (label, label, attributes)."""
    labels, edges = {}, []
    for line in (line.strip() for line in dot.body):
        edge = re.match(r'^"?([\w.]+)"? -> "?([\w.]+)"?(?: \[(.*)\])?$', line, re.S)
        node = re.match(r'^"?([\w.]+)"? \[(.*)\]$', line, re.S)
        if edge:
            edges.append((edge.group(1), edge.group(2), re.sub(r"\s*id=\S+", "", edge.group(3) or "").strip()))
        elif node:
            found = LABEL.search(node.group(2))
            text = (found.group(1) or found.group(2)) if found else node.group(1)
            fill = re.search(r"fillcolor=(\S+)", node.group(2))
            labels[node.group(1)] = (text.replace("\\l", "").replace("\\n", "\n").strip(),
                                     fill.group(1) if fill else None)
    return (collections.Counter(labels.values()),
            collections.Counter((labels.get(a, a), labels.get(b, b), attrs) for a, b, attrs in edges))


def graphs_of(lib, name):
    namespace = {"torch": lib}
    exec(PROGRAMS[name], namespace)
    return namespace["graphs"]


@needs_torch
@pytest.mark.parametrize("name", PROGRAMS)
def test_gradviz_graph_draws_as_torchs(name):
    ours, theirs = graphs_of(gradviz, name), graphs_of(real_torch, name)
    for key in ours:
        assert shape_of(gradviz.make_dot(ours[key])) == shape_of(gradviz.make_dot(theirs[key]))


def test_saved_tensors_of_a_custom_function_are_drawn():
    y = graphs_of(gradviz, "used twice, double backward")["y"]
    nodes, edges = shape_of(gradviz.make_dot(y))
    assert sum(nodes.values()) == 7 and sum(edges.values()) == 7   # torchviz's counts on torch's graph
    assert nodes[("(2)", "orange")] == 2   # x (the leaf, saved by the inner call) and the inner output
    assert edges[(("(2)", "orange"), ("SquareBackward", None), "dir=none")] == 2


@needs_torch
@pytest.mark.skipif(importlib.util.find_spec("torchviz") is None, reason="torchviz is not installed")
@pytest.mark.parametrize("name", PROGRAMS)
def test_as_torchviz_draws_torchs_graph(name):
    import torchviz
    ours, theirs = graphs_of(gradviz, name), graphs_of(real_torch, name)
    for key in ours:
        assert shape_of(gradviz.make_dot(ours[key])) == shape_of(torchviz.make_dot(theirs[key]))
