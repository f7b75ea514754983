"""An nn.Sequential's parameters are named as named_parameters() names them, written so that no
formula reads them as arithmetic: model.2.bias after the variable that holds the model (as torch's
state_dict names it inside a module called model), [2].bias when no variable holds it; the same in
the diagram and the step panel. make_dot, torchviz's function, keeps torchviz's 2.bias."""
import re

import pytest

import gradviz as gv
from gradviz.render.dot import to_dot
from gradviz.render.formula import Formula, Graph


def _model(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))


def _headlines(trace):
    graph = Graph(trace)
    return [Formula(graph, n).headline() for n in trace.nodes if n.name == "AddmmBackward0"]


@pytest.mark.parametrize("lib", ["gradviz", "torch"])
def test_a_sequentials_parameters_never_read_as_arithmetic(lib):
    lib = gv if lib == "gradviz" else pytest.importorskip("torch")
    model = _model(lib)
    x = lib.randn(5, 3)
    loss = model(x).sum()
    for kw in ({}, {"model": model}):   # found among the caller's variables, or given
        trace = gv.draw(loss, **kw).trace
        leaves = sorted(n.name for n in trace.nodes if n.kind == "leaf")
        assert leaves == ["model.0.bias", "model.0.weight", "model.2.bias", "model.2.weight"], kw
        first, last = _headlines(trace)
        assert first.startswith("t₂ = model.0.bias + x ") and last.startswith("t₅ = model.2.bias + ")
        assert "= 2.bias" not in to_dot(trace) and "model.2.bias" in to_dot(trace)
    # torchviz's way: names given as named_parameters() gives them, no variable known for the model
    trace = gv.draw(loss, names=dict(model.named_parameters())).trace
    assert sorted(n.name for n in trace.nodes if n.kind == "leaf") == ["[0].bias", "[0].weight", "[2].bias",
                                                                       "[2].weight"]
    assert _headlines(trace)[1].startswith("t₅ = [2].bias + ")
    panel = gv.animate(loss, names=dict(model.named_parameters()), forward=False)
    text = " ".join(f.text for f in panel.frames)
    assert "[2].bias" in text and not re.search(r"(?<![\w.\[])2\.bias", text)


def test_make_dot_names_leaves_as_torchviz_does():
    torch = pytest.importorskip("torch")
    model = _model(torch)
    y = model(torch.randn(2, 3)).sum()
    source = gv.make_dot(y, params=dict(model.named_parameters())).source
    assert '"2.bias\\n (2)"' in source and "[2]" not in source
