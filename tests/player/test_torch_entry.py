"""One entry point for any graph: draw, animate, step, make_dot and jacobian_view take a real torch
tensor as they take a gradviz tensor, and what they show is torch's own graph and gradients."""
from __future__ import annotations

import json
import re
import threading
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

import gradviz  # noqa: E402
from gradviz import progress as progress_module  # noqa: E402
from gradviz.naming import parameter_name  # noqa: E402
from gradviz.origins import record  # noqa: E402
from gradviz.torch_bridge import stepping  # noqa: E402
from tests.player.test_progress import chain  # noqa: E402
from tests.support.torch_models import MODELS as real_models, torch_walk  # noqa: E402

pytestmark = pytest.mark.torch

README = Path(__file__).resolve().parents[2] / "README.md"


class Tied(nn.Module):
    """An embedding whose weight the output layer shares (as a GPT ties its embeddings)."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.head = nn.Linear(6, 10, bias=False)
        self.head.weight = self.emb.weight

    def forward(self, idx):
        return self.head(torch.tanh(self.emb(idx)))


def _mlp():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    loss = F.cross_entropy(model(torch.randn(5, 4)), torch.tensor([0, 1, 2, 0, 1]))
    return model, loss


def _tied():
    torch.manual_seed(0)
    model = Tied()
    loss = F.cross_entropy(model(torch.tensor([1, 4, 4, 7])), torch.tensor([2, 3, 4, 5]))
    return model, loss


def _gpt():
    case = real_models["gpt"]()   # nanoGPT-style, 2 layers, tied token embedding and head
    return case.model, case.loss()


MODELS = {"mlp": _mlp, "tied": _tied, "gpt": _gpt}


def _plain_grads(model, loss) -> dict:
    """param name -> .grad after a plain loss.backward() (then cleared again); named as a picture
    names it, after the variable `model` that holds it (a Sequential's 2.bias reads model.2.bias)."""
    loss.backward(retain_graph=True)
    grads = {parameter_name(k, "model"): p.grad.detach().clone() for k, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    return grads


def _shown_totals(trace) -> dict:
    """leaf name -> the last .grad total the trace shows being written into it."""
    names = {n.id: n.name for n in trace.nodes if n.kind == "leaf"}
    return {names[a.node]: a.total for s in trace.steps for a in s.accumulations if a.node in names}


def _assert_shows(preview, grad) -> None:
    """A Preview shows `grad`: its values, or for a big tensor its min, mean and max."""
    g = grad.detach().numpy().astype(np.float64)
    shown = preview.values if preview.values is not None else preview.stats
    np.testing.assert_allclose(shown, g if preview.values is not None else (g.min(), g.mean(), g.max()),
                               rtol=1e-5, atol=1e-7)


def _json(trace) -> str:
    return json.dumps(trace.to_json(), sort_keys=True, default=str)


@pytest.mark.parametrize("which", sorted(MODELS))
def test_draw_animate_and_step_show_torchs_nodes_and_gradients(which):
    model, loss = MODELS[which]()
    walk = torch_walk(loss)
    plain = _plain_grads(model, loss)
    diagram = gradviz.draw(loss, model=model)
    anim = gradviz.animate(loss, model=model)
    stepper = gradviz.step(loss, model=model).run_to_end()
    for trace in (diagram.trace, anim.trace, stepper.trace):
        drawn = Counter(n.name for n in trace.nodes if n.kind in ("op", "accumulate"))
        assert drawn == walk
        leaves = sorted(n.name for n in trace.nodes if n.kind == "leaf")
        assert leaves == sorted(plain)   # a tied weight is one leaf, named once
        assert trace.node(trace.roots[0]).name == "loss"   # the caller's variable name
    for trace in (anim.trace, stepper.trace):
        assert len(trace.steps) == sum(walk.values())
        shown = _shown_totals(trace)
        assert sorted(shown) == sorted(plain)
        for name, grad in plain.items():
            _assert_shows(shown[name], grad)
    now = stepper.recording.grads_now()
    for node in stepper.trace.nodes:
        if node.kind == "leaf":
            _assert_shows(now[node.id], plain[node.name])
    assert 'gv-val' in stepper.now and "None" not in stepper.now   # the panel's .grad, at the end of the run


def test_animate_leaves_grad_unchanged():
    model, loss = _mlp()
    first, last = model[0].weight, model[2].bias
    first.grad = torch.full_like(first, 0.5)
    kept, version = first.grad, first.grad._version
    gradviz.animate(loss, model=model)
    assert first.grad is kept and first.grad._version == version
    assert torch.equal(first.grad, torch.full_like(first, 0.5))
    assert last.grad is None and model[0].bias.grad is None
    loss.backward()   # the graph is kept for the caller's own backward
    assert last.grad is not None


@pytest.mark.parametrize("which", sorted(MODELS))
def test_step_by_step_and_run_give_the_same_trace(which):
    model, loss = MODELS[which]()
    stepped = record(loss, model=model)
    assert not stepped.trace.steps
    seen = []
    while (step := stepped.step()) is not None:
        seen.append(step.node)
        upcoming = stepped.upcoming()
        if upcoming is not None:
            assert stepped.step().node == upcoming
            seen.append(upcoming)
    stepped.close()
    whole = record(loss, model=model).run()
    assert seen == [s.node for s in whole.steps]
    assert _json(stepped.trace) == _json(whole)


def test_the_stepper_resets_to_its_first_frame():
    model, loss = _mlp()
    stepper = gradviz.step(loss, model=model)
    stepper.next().next()
    assert stepper.position == 2 and len(stepper.trace.steps) >= 2
    stepper.reset()
    assert not stepper.trace.steps and stepper.position == 0
    stepper.run_to_end()
    assert len(stepper.trace.steps) == sum(torch_walk(loss).values())


def test_make_dot_and_jacobian_view_take_torch_tensors():
    model, loss = _mlp()
    dot = gradviz.make_dot(loss, params=dict(model.named_parameters()))
    assert "NllLossBackward0" in dot.source and "0.weight" in dot.source
    M = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    view = gradviz.jacobian_view(lambda t: torch.tanh(t @ M) * t.sum(), torch.tensor([[0.5, -1.0, 2.0]]))
    J = torch.autograd.functional.jacobian(lambda t: torch.tanh(t @ M) * t.sum(), torch.tensor([[0.5, -1.0, 2.0]]))
    np.testing.assert_allclose(view.matrix, J.reshape(2, 3).numpy(), rtol=1e-6)
    assert all(np.allclose(got, want, atol=1e-6) for _, got, want in view.products)
    assert M.grad is None


def test_the_readmes_torch_one_liner_runs(tmp_path, monkeypatch):
    """The README's block that animates a real torch model runs as printed, and writes its player."""
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    (code,) = [b for b in blocks if "import torch" in b and "model=model" in b]
    monkeypatch.chdir(tmp_path)
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    saved = [p for p in tmp_path.iterdir() if p.suffix == ".html"]
    assert len(saved) == 1 and "NllLossBackward0" in saved[0].read_text(encoding="utf-8")
    assert all(p.grad is None for p in scope["model"].parameters())   # watching changed no .grad


def test_closing_a_torch_stepper_halfway_leaves_no_thread_and_keeps_the_grads_written():
    model, loss = _mlp()
    stepper = gradviz.step(loss, model=model)
    stepper.next().next().next()
    written = {k: None if p.grad is None else p.grad.clone() for k, p in model.named_parameters()}
    stepper.close()
    assert not [t for t in threading.enumerate() if t.name == "gradviz torch backward"]
    for k, p in model.named_parameters():
        assert (p.grad is None) if written[k] is None else torch.equal(p.grad, written[k])
    loss.backward()   # torch's graph is free of the recording's hooks and whole
    assert all(p.grad is not None for p in model.parameters())


def test_a_paused_stepper_does_not_hold_up_another_backward_of_the_same_loss():
    """A stepper left halfway in one cell, then animate() and loss.backward() on the same loss in the
    next: each runs to its end with torch's own gradients, and the stepper then goes on."""
    model, loss = _mlp()
    stepper = gradviz.step(loss, model=model)
    stepper.next().next()
    done = []
    thread = threading.Thread(target=lambda: done.append(gradviz.animate(loss, model=model)), daemon=True)
    thread.start()
    thread.join(timeout=60)
    assert done, "animate() waited on the paused stepper's hooks"
    torch.manual_seed(0)
    expected = torch.autograd.grad(loss, list(model.parameters()), retain_graph=True)
    loss.backward(retain_graph=True)
    assert all(torch.equal(p.grad, g) for p, g in zip(model.parameters(), expected))
    stepper.run_to_end()
    assert len(stepper.trace.steps) == sum(torch_walk(loss).values())
    stepper.close()


def test_a_gradviz_graph_is_named_beside_torch_tensors_in_the_same_code():
    """The caller's torch tensors name nothing in a gradviz graph (and the reverse)."""
    model, torch_loss = _mlp()
    W = gradviz.randn(3, 2, requires_grad=True)
    loss = (gradviz.tanh(gradviz.ones(4, 3) @ W)).sum()
    for trace in (gradviz.draw(loss).trace, gradviz.animate(loss).trace, gradviz.step(loss).run_to_end().trace):
        assert [n.name for n in trace.nodes if n.kind == "leaf"] == ["W"]
        assert trace.node(trace.roots[0]).name == "loss"
    anim = gradviz.animate(torch_loss, model=model)
    assert anim.trace.node(anim.trace.roots[0]).name == "torch_loss"


def test_a_recorded_torch_run_steps_again_as_the_live_one():
    model, loss = _mlp()
    saved = gradviz.step(record(loss, model=model, jacobians=True).run()).run_to_end()   # as step() records
    live = gradviz.step(loss, model=model).run_to_end()   # (it leaves .grad as torch wrote them)
    assert saved._frames_json == live._frames_json and _json(saved.trace) == _json(live.trace)


def test_caller_variables_name_torch_tensors_by_gradviz_rule():
    """A tensor held by one variable is called by it, one held by two by neither, and `names=`
    replaces the caller's names: the same for a torch graph as for a gradviz graph."""
    def leaves(lib, names=None):
        w = lib.ones(3, requires_grad=True)
        v = also = lib.ones(3, requires_grad=True)   # noqa: F841 (two names for one tensor)
        loss = (w * v).sum()
        trace = gradviz.draw(loss, names=names).trace
        return [n.name for n in trace.nodes if n.kind == "leaf"], w

    for lib in (torch, gradviz):
        named, w = leaves(lib)
        assert named[0] == "w" and named[1] not in ("v", "also"), lib.__name__
    torch_given, _ = leaves(torch, names={})
    gradviz_given, _ = leaves(gradviz, names={})
    assert "w" not in torch_given and "w" not in gradviz_given


def test_a_long_torch_animation_shows_its_progress_without_pausing_torch(monkeypatch, capsys):
    """The bar counts torch's nodes as they run: its engine runs through on this thread, no worker."""
    monkeypatch.setattr(progress_module, "DELAY", 0.0)
    x, loss = chain(progress_module.MIN_ITEMS + 10, torch)
    x.grad = torch.ones(4)
    before = x.grad
    started = []   # a worker thread, to pause torch's engine between nodes: none
    start = stepping._Session.start
    monkeypatch.setattr(stepping._Session, "start", lambda self, free: started.append(free) or start(self, free))
    anim = gradviz.animate(loss, max_nodes=None)
    assert "backward" in capsys.readouterr().err and started == []
    assert len(anim.steps) == progress_module.MIN_ITEMS + 12   # every Mul, the Sum, x's AccumulateGrad
    assert x.grad is before and x.grad.tolist() == [1.0] * 4   # put back as it was
    loss.backward()
    assert torch.allclose(x.grad, 1.0 + torch.full((4,), 1.001) ** (progress_module.MIN_ITEMS + 10))


def test_a_torch_animation_interrupted_in_its_backward_puts_every_grad_back():
    x, loss = chain(progress_module.MIN_ITEMS + 10, torch)
    w = torch.ones(4, requires_grad=True)
    w.grad = torch.full((4,), 5.0)
    before = w.grad
    ran = []

    def halt(grad):   # x is reached last, after w's .grad was added to (w's branch was made later)
        ran.append(w.grad.tolist())
        raise KeyboardInterrupt
    x.register_hook(halt)
    with pytest.raises(KeyboardInterrupt):
        gradviz.animate((w * 2).sum() + loss, max_nodes=None)
    assert ran == [[7.0] * 4]
    assert w.grad is before and w.grad.tolist() == [5.0] * 4 and x.grad is None
    assert not any(t.name == "gradviz torch backward" for t in threading.enumerate())
