"""Backward through a folded module: one frame per run of steps inside a box, true to the Trace."""
from __future__ import annotations

import re

import numpy as np

import gradviz as torch
from gradviz.player.frames import state_at
from gradviz.render.collapse import plan


def _model():
    torch.manual_seed(0)
    x = torch.randn(3, 4, requires_grad=True)
    w1 = torch.randn(4, 4, requires_grad=True)
    w2 = torch.randn(4, 2, requires_grad=True)
    with torch.scope("Net"):                       # a model whose forward holds everything, loss included
        with torch.scope("hidden (Linear)"):
            h = (x @ w1).tanh()
        with torch.scope("out (Linear)"):
            y = h @ w2
        loss = (y * y).mean()
    return loss, x, w1, w2, h


def test_scopes_fold_the_models_modules_not_the_model():
    loss, x, w1, w2, h = _model()
    anim = torch.animate(loss, names={"x": x, "w1": w1, "w2": w2}, collapse="scopes", forward=False)
    titles = sorted(g.title for g in plan(anim.trace, collapse="scopes").groups)
    assert titles == ["hidden (Linear)", "out (Linear)"]


def test_a_run_inside_a_box_is_one_frame_and_covers_every_engine_step():
    loss, x, w1, w2, h = _model()
    anim = torch.animate(loss, names={"x": x, "w1": w1, "w2": w2}, collapse="scopes", forward=False)
    frames, steps = anim.frames, anim.trace.steps
    boxes = {f.node for f in frames if "gv-folded" in f.text}
    assert len(boxes) == 2
    nodes = [f.node for f in frames]
    assert all(a != b for a, b in zip(nodes, nodes[1:]) if a in boxes)      # one frame per run
    covered = 0
    for f in frames:
        m = re.match(r"backward (\d+)(?:–(\d+))?/(\d+)", f.title)
        assert m and int(m.group(3)) == len(steps)
        covered += int(m.group(2) or m.group(1)) - int(m.group(1)) + 1
    assert covered == len(steps)


def test_what_left_a_box_is_the_engines_gradient_and_states_stay_consistent():
    loss, x, w1, w2, h = _model()
    h.retain_grad()
    anim = torch.animate(loss, names={"x": x, "w1": w1, "w2": w2}, collapse="scopes", forward=False)
    loss.backward()
    out_box = next(f for f in anim.frames if "out (Linear)" in f.title)
    # the box "out" sends ∂L/∂h to the hidden layer: the value on the flowing edge is h.grad
    sent = [(eid, grad) for s in anim.trace.steps for eid, grad, _ in s.flows]
    flowing = [i for i, st in out_box.changes.items() if st == "flowing"]
    assert flowing, out_box.changes
    to_hidden = [grad for eid, grad in sent if eid in flowing and grad.shape == tuple(h.shape)]
    assert to_hidden and np.allclose(np.asarray(to_hidden[0].values, dtype=float), h.grad.numpy(), atol=1e-6)
    assert "WENT OUT" in out_box.text and "CAME IN" in out_box.text
    # w2.grad was written inside the box, and the panel says so
    assert "w2.grad" in out_box.text
    # after the box's frame, its flowing edges are history: the diff-encoded frames agree with full states
    k = out_box.index
    after = state_at(anim.frames, k + 1)
    assert all(after[i] != "flowing" or anim.frames[k + 1].changes.get(i) == "flowing" for i in flowing)


def test_unfolded_animation_is_unchanged():
    loss, x, w1, w2, h = _model()
    anim = torch.animate(loss, forward=False)
    assert len(anim.frames) == len(anim.trace.steps)
    assert not any("gv-folded" in f.text for f in anim.frames)


def test_forward_through_a_box_is_one_frame_too():
    loss, x, w1, w2, h = _model()
    anim = torch.animate(loss, names={"x": x, "w1": w1, "w2": w2}, collapse="scopes", forward=True)
    forward = [f for f in anim.frames if f.phase == "forward"]
    nodes = [f.node for f in forward]
    folded = [f for f in forward if "gv-folded" in f.text]
    assert folded and all(a != b for a, b in zip(nodes, nodes[1:]))
    # every op the forward made is counted once, in a box's run or in its own frame
    made = 0
    for f in forward:
        m = re.match(r"forward (\d+)(?:–(\d+))?/(\d+)", f.title)
        made += int(m.group(2) or m.group(1)) - int(m.group(1)) + 1
    assert made == sum(n.kind == "op" for n in anim.trace.nodes)
    hidden = next(f for f in folded if "hidden (Linear)" in f.title)
    assert "TanhBackward0" in hidden.text and "MmBackward0" in hidden.text
    # what leaves the box is tanh's value, h
    tanh = next(n for n in anim.trace.nodes if n.name == "TanhBackward0")
    assert np.allclose(np.asarray(tanh.value.values, dtype=float), h.detach().numpy(), atol=1e-6)
    assert "forward: hidden (Linear): 2 nodes; TanhBackward0" in hidden.caption
