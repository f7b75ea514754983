"""Long views show progress (tqdm) and stop cleanly when interrupted."""
import pytest

import gradviz
from gradviz import progress as progress_module
from gradviz.player import animate, explain


def chain(ops: int, lib=gradviz):
    """x and the sum of x multiplied `ops` times (by gradviz, or by torch when lib=torch)."""
    x = lib.randn(4, requires_grad=True)
    y = x
    for _ in range(ops):
        y = y * 1.001
    return x, y.sum()


def test_a_long_animation_shows_its_progress(monkeypatch, capsys):
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    x, loss = chain(progress_module.MIN_ITEMS + 10)
    animate(loss, max_nodes=None).html()
    err = capsys.readouterr().err
    assert "backward" in err and "frames" in err and "panels" in err


def test_drawing_a_big_graph_shows_its_progress(monkeypatch, capsys):
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    x, loss = chain(progress_module.MIN_ITEMS + 10)
    gradviz.draw(loss).svg()
    err = capsys.readouterr().err
    assert "recording the graph" in err   # labels are sized only for the boxes folding shows


def test_a_short_one_prints_nothing(monkeypatch, capsys):
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    x, loss = chain(5)
    animate(loss).html()
    assert capsys.readouterr().err == ""


def test_an_interrupted_animation_changes_nothing(monkeypatch):
    x, loss = chain(progress_module.MIN_ITEMS + 10)
    x.grad = gradviz.ones(4)
    before = x.grad
    calls = []

    def stop(*args):
        calls.append(args)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return original(*args)
    original = explain.backward
    monkeypatch.setattr(explain, "backward", stop)
    anim = animate(loss, max_nodes=None)
    with pytest.raises(KeyboardInterrupt):
        anim.html()                                   # the panels are made while the page is written
    assert x.grad is before and x.grad.tolist() == [1.0] * 4
    monkeypatch.setattr(explain, "backward", original)
    assert "backward" in anim.html()                  # the same Animation writes its page afterwards
    # interrupted while the backward is recorded, after some .grad were written: every one is put back
    from gradviz.tracing.recording import EngineRecording
    ran = EngineRecording._next

    def halt(self):
        calls.append(self)
        if len(calls) > progress_module.MIN_ITEMS:
            raise KeyboardInterrupt
        ran(self)
    calls.clear()
    written = []
    w = gradviz.ones(4, requires_grad=True)      # the last leaf made: backward writes its .grad first
    w.register_hook(lambda g: written.append(g))
    monkeypatch.setattr(EngineRecording, "_next", halt)
    with pytest.raises(KeyboardInterrupt):
        animate(loss + (w * 2).sum())
    assert len(calls) > progress_module.MIN_ITEMS and written      # it ran past w's write
    assert w.grad is None and x.grad is before and x.grad.tolist() == [1.0] * 4
