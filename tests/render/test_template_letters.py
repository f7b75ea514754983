"""A node's formula is an instance of its record's template: the record's own letters never reach it.
NLL's input is the tensor's symbol (not the template's p), a pool's window is winᵢ (not wᵢ, which a
learner's weight may be called), a convolution without a bias has no bias term (and no symbol for the
missing input), and a node of several outputs lists and receives each under its own symbol."""
from __future__ import annotations

import gradviz as torch
import gradviz.nn.functional as F
from gradviz.render import draw
from gradviz.render.formula import Formula, Graph


def formulas(trace) -> dict:
    graph = Graph(trace)
    return {n.name: Formula(graph, n).forward_text() for n in trace.nodes if n.kind == "op"}


def test_nll_reads_its_input_by_the_input_s_symbol():
    x = torch.randn(3, 4, requires_grad=True)
    loss = F.nll_loss(F.log_softmax(x, -1), torch.tensor([0, 2, 1]))
    text = formulas(draw(loss, names={"x": x, "loss": loss}).trace)["NllLossBackward0"]
    assert text == "loss = −1/N Σ over i of t₁[i, yᵢ]"


def test_a_convolution_without_bias_and_a_pool_beside_a_learners_w():
    img = torch.randn(1, 1, 4, 4, requires_grad=True)
    w = torch.randn(1, 1, 2, 2, requires_grad=True)
    y = F.max_pool2d(F.conv2d(img, w), 2).sum()
    trace = draw(y, names={"img": img, "w": w, "y": y}).trace
    texts = formulas(trace)
    assert texts["ConvolutionBackward0"].startswith("t₁ = img ⋆ w: t₁[n, o, p] = Σ over i, k of w[o, i, k] img[")
    assert texts["MaxPool2DWithIndicesBackward0"].startswith("t₂[i] = max over j ∈ winᵢ of t₁[j], winᵢ: kernel")
    symbols = [s for n in trace.nodes if n.kind == "op" for s in (*n.out_names, *n.in_names) if s]
    assert symbols == ["t₁", "t₂", "y"]   # the missing bias is no tensor: it gets no symbol
    y.backward()   # the stand-in for the bias is known after the graph is freed too
    assert formulas(draw(y, names={"img": img, "w": w, "y": y}).trace) == texts


def test_a_node_of_several_outputs_names_each_output():
    x = torch.randn(4, 3, requires_grad=True)
    p, q = x.split(2)
    s = (p * q).sum()
    anim = torch.animate(s, names={"x": x, "s": s})
    assert formulas(anim.trace)["SplitBackward0"] == "t₁, t₂ = split(x, (2, 2))"
    caption = next(f.caption for f in anim.frames if f.phase == "backward" and f.caption.startswith("SplitBackward0"))
    assert "received ḡ₁ = ∂L/∂t₁ = " in caption and ", ḡ₂ = ∂L/∂t₂ = " in caption and "_0" not in caption
