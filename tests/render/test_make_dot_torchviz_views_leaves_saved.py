"""make_dot as torchviz 0.0.3 draws PyTorch 2.13's graph of the same program: a view output's base
(darkolivegreen3, a dotted edge to the view), a leaf output as one node, and with show_saved a saved
tensor that is a leaf drawn as the leaf's node (whichever torchviz's walk drew last). Nodes compare
as (label, fill) and edges as (label, label, attributes), ids left out."""
import importlib.util

import pytest

import gradviz
from tests.render.test_make_dot_custom_function import shape_of
from tests.support.parity import needs_torch, real_torch

X4 = "x = torch.tensor([1., 2., 3., 4.], requires_grad=True)\n"
X2 = "x = torch.tensor([1., 2.], requires_grad=True)\n"
W2 = "w = torch.tensor([3., 4.], requires_grad=True)\n"
PROGRAMS = {   # name -> (program, make_dot's keyword arguments as source)
    "view of an intermediate": (X4 + "y = (x * 2)[1:]", {}),
    "view of a leaf": (X4 + "y = x[1:]", {}),
    "view of a view": (X4 + "y = x.exp().view(2, 2).t()", {}),
    "views in a tuple, one base": (X4 + "h = x.exp()\ny = (h[1:], h[:2])", {}),
    "a view and its base": (X4 + "h = x.exp()\ny = (h[1:], h)", {}),
    "leaf output": (X2 + "y = x", {}),
    "named leaf output": (X2 + "y = x", {"params": "{'x': x}"}),
    "leaf output beside its use": (X2 + "y = (x, (x * 2).sum())", {}),
    "leaf output after its use": (X2 + "y = ((x * 2).sum(), x)", {}),
    "leaf that needs no grad": ("x = torch.tensor([1., 2.])\ny = x", {}),
    "view outside autograd": ("x = torch.tensor([1., 2., 3.])\ny = x[1:]", {}),
    "saved leaves": (X2 + W2 + "y = (x * w).sum()", {"show_saved": "True"}),
    "saved leaf, named": (X2 + W2 + "y = (x * w).sum()", {"show_saved": "True", "params": "{'x': x, 'w': w}"}),
    "a leaf saved three times": (X2 + "y = ((x * x).exp() * x).sum()", {"show_saved": "True"}),
    "saved after its AccumulateGrad was drawn": (X2 + W2 + "y = (x.exp() + x * w).sum()", {"show_saved": "True"}),
    "saved in a tuple": (X2 + W2 + "y = torch.stack([x, w]).sum()", {"show_saved": "True"}),
    "saved, a view output": (X4 + "y = (x * x)[1:]", {"show_saved": "True"}),
}


def _drawn(lib, make_dot, name):
    source, kwargs = PROGRAMS[name]
    namespace = {"torch": lib}
    exec(source, namespace)
    return shape_of(make_dot(namespace["y"], **{k: eval(v, namespace) for k, v in kwargs.items()}))


@needs_torch
@pytest.mark.skipif(importlib.util.find_spec("torchviz") is None, reason="torchviz is not installed")
@pytest.mark.parametrize("name", PROGRAMS)
def test_gradviz_make_dot_draws_what_torchviz_draws(name):
    import torchviz
    assert _drawn(gradviz, gradviz.make_dot, name) == _drawn(real_torch, torchviz.make_dot, name)


@needs_torch
@pytest.mark.parametrize("name", PROGRAMS)
def test_torchs_graph_through_the_bridge_draws_the_same(name):
    assert _drawn(gradviz, gradviz.make_dot, name) == _drawn(real_torch, gradviz.make_dot, name)


def test_view_base_is_dotted_and_leaf_output_is_one_node():
    x = gradviz.tensor([1., 2., 3., 4.], requires_grad=True)
    nodes, edges = shape_of(gradviz.make_dot((x * 2)[1:]))
    assert nodes[("(4)", "darkolivegreen3")] == 1
    assert edges[(("(4)", "darkolivegreen3"), ("(3)", "darkolivegreen1"), "style=dotted")] == 1
    assert edges[(("MulBackward0", None), ("(4)", "darkolivegreen3"), "")] == 1
    assert shape_of(gradviz.make_dot(x)) == ({("(4)", "darkolivegreen1"): 1}, {})


def test_a_long_chain_with_saved_leaves_draws():
    x = gradviz.tensor([0.5], requires_grad=True)
    y = x
    for _ in range(3000):   # deeper than Python's recursion limit
        y = y * x
    nodes, edges = shape_of(gradviz.make_dot(y, show_saved=True))
    assert nodes[("MulBackward0", None)] == 3000
