"""The step panel states only true things: every number and claim it shows, in every frame of a
set of programs, is checked against what the engine actually computed."""
import re

import numpy as np
import pytest

import gradviz as torch
from gradviz.player import frames as F
from gradviz.tracing import record_backward


def grids(html: str) -> list:
    """Every tensor grid in a piece of panel HTML, as an array (in order of appearance)."""
    out = []
    for table in re.findall(r'<table class="gv-grid[^"]*">(.*?)</table>', html):
        rows = [[float(v) for v in re.findall(r"<td[^>]*>([^<]*)</td>", row)]
                for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table)]
        out.append(np.array(rows))
    return out


def plain(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def section(html: str, css: str) -> list:
    """The HTML of each element with this class (up to the next sibling row)."""
    return re.findall(rf'class="[^"]*\b{css}\b[^"]*"(.*?)(?=<div class="gv-row|<tr|$)', html, re.S)


def frames_of(roots, gradient=None, names=None):
    trace = record_backward(roots, gradient=gradient, names=names)
    return trace, F.build_frames(trace)


def check_writes(trace, frames, before: dict, after: dict):
    """Each AccumulateGrad step: 'was None' / 'already there' as .grad really was, and the terms and
    total it shows are the engine's (before + contributions = the .grad backward left)."""
    seen = set()
    for f in frames:
        if f.phase != "backward" or "AccumulateGrad" not in f.title:
            continue
        leaf = next(n for n in trace.nodes if n.kind == "leaf" and f"{n.name}.grad" in plain(f.text))
        text = plain(f.text)
        had = before[leaf.name]
        if had is None:
            assert "was None, so it writes" in text and "already there" not in text, text
        else:
            assert "already there" in text and "was None" not in text, text
        write = f.text[f.text.index("gv-write"):]
        shown = grids(write)
        total = shown[0].reshape(np.shape(after[leaf.name]))     # the total first, then its terms
        np.testing.assert_allclose(total, after[leaf.name], rtol=6e-4, atol=1e-6)
        if len(shown) > 2:                         # total + terms: the terms add up to the total
            np.testing.assert_allclose(sum(s.reshape(total.shape) for s in shown[1:]), total, rtol=6e-4, atol=1e-6)
        if had is not None:                        # the first term is what was already there
            np.testing.assert_allclose(shown[1].reshape(total.shape), had, rtol=6e-4, atol=1e-6)
        seen.add(leaf.name)
    assert seen == set(after), (seen, set(after))


def check_seed(frames, implicit: bool):
    first = plain(next(f.text for f in frames if f.phase == "backward"))
    if implicit:
        assert "seeds" in first and "= 1" in first and "you passed" not in first, first
    else:
        assert "the gradient you passed in (backward()'s gradient" in first and "seeds" not in first, first


def grads(**tensors) -> dict:
    return {k: None if t.grad is None else t.grad.detach().numpy().copy() for k, t in tensors.items()}


def test_scalar_seed_and_fan_out():
    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    loss = (x * x).sum() + x.sum()
    before = grads(x=x)
    trace, frames = frames_of([loss], names={"x": x})
    loss.backward()
    check_seed(frames, implicit=True)
    check_writes(trace, frames, before, grads(x=x))


def test_explicit_all_ones_seed_is_not_called_implicit():
    x = torch.tensor([[1.0, 2.0]], requires_grad=True)
    m = torch.tensor([[1.0, 0.5], [2.0, -1.0]])
    c = torch.mm(x, m)
    before = grads(x=x)
    trace, frames = frames_of([c], gradient=torch.ones(1, 2), names={"x": x})
    c.backward(torch.ones(1, 2))
    check_seed(frames, implicit=False)
    check_writes(trace, frames, before, grads(x=x))


def test_broadcasting_sums_to_the_input_shape():
    a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    b = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    loss = ((a + b) ** 2).sum()
    before = grads(a=a, b=b)
    trace, frames = frames_of([loss], names={"a": a, "b": b})
    loss.backward()
    check_writes(trace, frames, before, grads(a=a, b=b))
    add = next(f for f in frames if f.phase == "backward" and "AddBackward0" in f.title)
    assert "summed over axis 0 to return to its shape (3,)" in plain(add.text)


def test_second_backward_accumulates_onto_what_is_there():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    loss = (w * 3).sum()
    loss.backward(retain_graph=True)
    before = grads(w=w)                            # [3, 3] is already there
    trace, frames = frames_of([loss], names={"w": w})
    loss.backward()
    check_writes(trace, frames, before, grads(w=w))


def test_a_hook_that_replaces_the_gradient_is_shown_before_and_after():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    seen = []

    def triple(g):
        seen.append(g.numpy().copy())
        return g * 3

    y.register_hook(triple)
    loss = y.sum()
    before = grads(x=x)
    trace, frames = frames_of([loss], names={"x": x, "y": y})
    loss.backward()
    hooked = [f for f in frames if "triple" in f.text]
    assert len(hooked) == 1
    shown = grids(hooked[0].text[hooked[0].text.index("gv-hook"):])
    np.testing.assert_allclose(shown[0].ravel(), seen[0])           # what the hook got
    np.testing.assert_allclose(shown[1].ravel(), seen[0] * 3)       # what it returned, which flows on
    check_writes(trace, frames, before, grads(x=x))


def test_retain_grad_and_create_graph_runs_are_told_truly():
    x = torch.tensor([0.5, -1.5], requires_grad=True)
    h = torch.tanh(x)
    h.retain_grad()
    loss = (h * h).sum()
    before = grads(x=x)
    trace, frames = frames_of([loss], names={"x": x, "h": h})
    loss.backward(create_graph=True)
    check_writes(trace, frames, before, grads(x=x))


@pytest.mark.parametrize("seed_given", [False, True])
def test_every_vjp_value_shown_is_the_gradient_that_flowed(seed_given):
    x = torch.tensor([0.3, -0.7, 1.1], requires_grad=True)
    w = torch.tensor([2.0, 0.5, -1.0], requires_grad=True)
    y = torch.sigmoid(x * w)
    gradient = torch.tensor([1.0, -2.0, 0.5]) if seed_given else None
    out = y if seed_given else y.sum()
    trace, frames = frames_of([out], gradient=gradient, names={"x": x, "w": w})
    by_id = {s.index: s for s in trace.steps}
    for f in frames:
        if f.phase != "backward" or "AccumulateGrad" in f.title:
            continue
        step = by_id[f.step]
        rows = re.findall(r'<tr data-edge="(e\d+)">(.*?)(?=<tr data-edge|<tr class="gv-(?:broadcast|shared|running)"|$)',
                          f.text, re.S)
        flows = {eid: grad for eid, grad, _ in step.flows}
        assert {eid for eid, _ in rows} == set(flows)
        for eid, row in rows:
            np.testing.assert_allclose(grids(row)[-1].ravel(), np.ravel(flows[eid].values), rtol=6e-4, atol=1e-6)   # shown to 4 digits
