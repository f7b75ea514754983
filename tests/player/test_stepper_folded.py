"""The Stepper over a folded diagram: Next runs the whole run of engine steps inside a folded box
in one click and shows the frame the saved player shows for it; .grad read between clicks is what
the engine has written so far; "step k of N" counts frames and its N is exact."""
import pytest

import gradviz as torch
from tests.player.test_folded_steps import _model

pytest.importorskip("anywidget")


def _grads(*tensors):
    return [None if t.grad is None else t.grad.numpy().copy() for t in tensors]


def test_next_runs_a_folded_box_in_one_click_and_shows_the_players_frame():
    loss, x, w1, w2, h = _model()
    names = {"x": x, "w1": w1, "w2": w2}
    anim = torch.animate(loss, names=names, collapse="scopes", forward=False)
    s = torch.step(loss, names=names, collapse="scopes")
    # the stepper's frame 0 is the moment before backward; then one frame per frame of the player
    assert s.total == len(anim.frames) + 1        # exact before the first click
    clicks = 0
    while not s.finished:
        s.next()
        clicks += 1
        assert s.total == len(anim.frames) + 1
    assert clicks == len(anim.frames)
    assert len(s.frames) == len(anim.frames) + 1
    for ours, theirs in zip(s.frames[1:], anim.frames):
        assert ours["t"] == theirs.title          # the same steps, merged the same way
        assert ours["h"] == theirs.text
    assert any("gv-folded" in f.text for f in anim.frames)


def test_grad_between_clicks_is_what_the_engine_has_written():
    loss, x, w1, w2, h = _model()
    s = torch.step(loss, names={"x": x, "w1": w1, "w2": w2}, collapse="scopes")
    leaves = {n.name: n.id for n in s.trace.nodes if n.kind == "leaf"}
    halfway = False
    while not s.finished:
        s.next()
        written = {a.node for st in s.trace.steps for a in st.accumulations}
        grads = dict(zip(("x", "w1", "w2"), _grads(x, w1, w2)))
        for name, g in grads.items():
            assert (g is not None) == (leaves[name] in written), (name, s.position)
        halfway |= not s.finished and any(g is None for g in grads.values()) and any(
            g is not None for g in grads.values())
    assert halfway                                   # some click left some .grad written and some not
    s.reset()
    assert _grads(x, w1, w2) == [None, None, None]
    s.run_to_end()
    assert all(g is not None for g in _grads(x, w1, w2))


def test_an_unfolded_stepper_still_runs_one_node_per_click():
    loss, x, w1, w2, h = _model()
    s = torch.step(loss, names={"x": x, "w1": w1, "w2": w2})
    clicks = 0
    while not s.finished:
        s.next()
        clicks += 1
    assert clicks == len(s.trace.steps) == len(s.frames) - 1
