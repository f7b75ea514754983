"""A real torch.nn.ConvTranspose{1,2,3}d drawn through the bridge reads as the transposed convolution it
is (torch's node is the ConvolutionBackward0 of every convolution, with transposed=True saved): its
forward scatters each x[p] to y[s p + d k − q], ∂L/∂x is a plain strided convolution of ḡ, and every
formula the node shows, with torch's own constants put in, is evaluated on torch's tensors and equals
torch's output and the gradients torch's backward sends."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradviz  # noqa: E402
from gradviz.render.formula import Formula, Graph  # noqa: E402
from tests.support.latex_eval import Evaluator, shown  # noqa: E402

pytestmark = pytest.mark.torch

# (module, input shape): strides, paddings, output paddings, dilations and groups as torch takes them
MODULES = [
    (lambda: torch.nn.ConvTranspose1d(2, 3, 3, stride=3, padding=1, output_padding=2), (2, 2, 4)),
    (lambda: torch.nn.ConvTranspose2d(2, 3, 2, stride=2, padding=1, output_padding=1), (1, 2, 3, 3)),
    (lambda: torch.nn.ConvTranspose2d(4, 4, (3, 2), stride=(1, 2), padding=(2, 0), dilation=(2, 1), groups=2,
                                      bias=False), (1, 4, 4, 3)),
    (lambda: torch.nn.ConvTranspose3d(2, 2, 2, stride=(1, 2, 1), padding=(0, 1, 0)), (1, 2, 2, 3, 2)),
]


def _node(loss, **names):
    trace = gradviz.draw(loss, names=names).trace
    graph = Graph(trace)
    (node,) = [n for n in trace.nodes if n.name == "ConvolutionBackward0"]
    return Formula(graph, node)


@pytest.mark.parametrize("make, shape", MODULES, ids=["1d", "2d output_padding", "2d groups dilation", "3d"])
def test_a_transposed_convolution_reads_and_evaluates_as_one(make, shape):
    torch.manual_seed(0)
    m = make().double()
    x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
    y = m(x)
    g = torch.linspace(-1.0, 2.0, y.numel(), dtype=torch.float64).reshape(y.shape)
    loss = (y * g).sum()
    f = _node(loss, x=x, weight=m.weight, bias=m.bias, y=y)
    assert f.forward_text().startswith(f"{f.out_text} = convᵀ(x, weight)")
    assert f"output padding = {_tuple(m.output_padding)}" in f.forward_text()
    assert f.vjp_text(0).startswith("∂L/∂x = conv(ḡ, weight) = ḡ ⋆ weight")
    assert "transposed" not in f.vjp_text(0)     # ḡ comes back by a plain convolution, not a transposed one
    assert f.vjp_text(1).startswith("∂L/∂weight = Σ over n of ḡₙ ⋆ xₙ")

    values = {"x": x, "weight": m.weight, "bias": m.bias, f.out_text: y}
    values = {k: v.detach().numpy() for k, v in values.items() if v is not None}
    # the letters s, q, d and the groups as the panel spells them out after the forward's formula
    source, env = shown(f.latex(f.node.latex), tuple(f.names), values, f.out_text)
    forward = Evaluator(env)
    (got,) = forward.forward(source)
    assert np.allclose(got, values[f.out_text])
    letters = {k: forward.env[k] for k in ("s", "q", "d", "\\text{groups}")}
    assert letters["\\text{groups}"] == m.groups and list(np.atleast_1d(letters["s"])) == list(m.stride)
    params = [x, m.weight] + ([m.bias] if m.bias is not None else [])
    sent = torch.autograd.grad(loss, params)
    for slot, expected in enumerate(sent):
        source, env = shown(f.latex(f._vjp_template(slot)), tuple(f.names), values, f.out_text)
        env.update(letters, **{"\\bar{g}": g.numpy()})
        got = Evaluator(env, target_shape=tuple(expected.shape)).vjp(source)
        assert np.allclose(got, expected.numpy()), f.vjp_text(slot)


def _tuple(v) -> str:
    return "(" + ", ".join(map(str, v)) + ")" if len(v) > 1 else str(v[0])


def test_an_ordinary_convolution_keeps_its_formula():
    m = torch.nn.Conv2d(2, 3, 2, stride=2)
    x = torch.randn(1, 2, 4, 4, requires_grad=True)
    y = m(x)
    f = _node(y.sum(), x=x, weight=m.weight, bias=m.bias, y=y)
    assert f.forward_text().startswith(f"{f.out_text} = x ⋆ weight + bias")
    assert f.vjp_text(0).startswith("∂L/∂x = convᵀ(ḡ, weight)")


def test_the_engine_and_the_bridge_read_alike():
    """gradviz's own F.conv_transpose2d and torch's draw one formula for the same call."""
    torch.manual_seed(0)
    x = torch.randn(1, 2, 3, 3, requires_grad=True)
    w = torch.randn(2, 3, 2, 2, requires_grad=True)
    y = torch.nn.functional.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1)
    seen = _node(y.sum(), x=x, w=w, y=y)
    gx = gradviz.tensor(x.detach().numpy(), requires_grad=True)
    gw = gradviz.tensor(w.detach().numpy(), requires_grad=True)
    gy = gradviz.nn.functional.conv_transpose2d(gx, gw, stride=2, padding=1, output_padding=1)
    ours = _node_of_engine(gy, {"x": gx, "w": gw, "y": gy})
    assert ours.forward_text() == seen.forward_text()
    assert [ours.vjp_text(k) for k in (0, 1)] == [seen.vjp_text(k) for k in (0, 1)]


def _node_of_engine(y, names):
    trace = gradviz.draw(y.sum(), names=names).trace
    graph = Graph(trace)
    (node,) = [n for n in trace.nodes if n.name == "ConvolutionBackward0"]
    return Formula(graph, node)


def test_torchs_double_backward_node_claims_no_formula_of_another_shape():
    """torch's ConvolutionBackwardBackward0 takes (g, x, W) and gives x̄, W̄ and b̄ in one node, where
    gradviz records two nodes of two inputs each: it read x̄ = g ⋆ flip(x), with the input x in the
    weight's place. It is drawn with its inputs named and no formula rather than a false one."""
    x = torch.randn(1, 2, 4, 4, requires_grad=True)
    w = torch.randn(3, 2, 2, 2, requires_grad=True)
    y = torch.nn.functional.conv2d(x, w)
    (gx,) = torch.autograd.grad(y.square().sum(), x, create_graph=True)
    trace = gradviz.draw(gx.sum(), names={"x": x, "w": w}).trace
    graph = Graph(trace)
    (node,) = [n for n in trace.nodes if n.name == "ConvolutionBackwardBackward0"]
    f = Formula(graph, node)
    assert f.forward_text() == ""
    assert [f.input_text(k) for k in (1, 2)] == ["x", "w"]
