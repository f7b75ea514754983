"""A step panel read top to bottom is the order things happened, and its equations are whole.

What the node received comes first, as ḡ = ∂L/∂(its output); a hook on that tensor comes next,
with what it got and returned, then the ḡ the VJPs use; a gradient summed back over a broadcast
axis shows the sum in its equation (∂L/∂bias = Σ over axis 0 of (ḡ)), in the panel and the caption.
"""
from __future__ import annotations

import gradviz as torch
from gradviz.player import animate
from gradviz.render import latex


def hooked_broadcast():
    x = torch.ones(2, 3, requires_grad=True)
    bias = torch.zeros(3, requires_grad=True)
    h = x * 2 + bias
    h.register_hook(lambda g: g * 0.5)
    out = h.sum()
    return animate(out, names={"x": x, "bias": bias, "h": h, "out": out}, forward=False)


def test_a_hook_step_reads_in_the_order_it_ran():
    anim = hooked_broadcast()
    (frame,) = [f for f in anim.frames if "AddBackward0" in f.title]
    text = latex.text(frame.text)
    marks = ["received ∂L/∂h = 1.0", "got 1.0", "returned 0.5", "after the hooks ḡ = ∂L/∂h = 0.5", "∂L/∂bias = Σ"]
    at = [text.index(m) for m in marks]
    assert at == sorted(at), text


def test_the_sum_over_a_broadcast_axis_is_in_the_equation():
    anim = hooked_broadcast()
    (frame,) = [f for f in anim.frames if "AddBackward0" in f.title]
    assert "∂L/∂bias = Σ over axis 0 of (ḡ) = [1.0, 1.0, 1.0]" in frame.caption   # 0.5 + 0.5 down each column
    assert "∂L/∂bias = Σ" in latex.text(frame.text)


def test_the_received_line_names_g_bar():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    s = y.sum()
    anim = animate(s, names={"x": x, "y": y, "s": s}, forward=False)
    (mul,) = [f for f in anim.frames if "MulBackward0" in f.title]
    assert "received ḡ = ∂L/∂y = [1.0, 1.0]" in mul.caption
    assert "∂L/∂x = 3ḡ = [3.0, 3.0]" in mul.caption
    said = latex.text(mul.text)
    assert "received ḡ = ∂L/∂y" in said
    assert "∂L/∂x = ḡ · ∂y/∂x" in said          # the chain rule in this node's own symbols
