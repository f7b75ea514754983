"""The one recording path (origins.record, tracing.Recording) on gradviz's own engine: the Trace of the
graph first, then its steps one at a time, the same Trace as a run to the end, and .grad as the user left it."""
from __future__ import annotations

import json

import numpy as np
import pytest

import gradviz as gv
from gradviz.origins import record
from gradviz.tracing import EngineRecording, Recording, Trace, record_backward


def _graph():
    """A leaf read twice (its .grad adds two terms), a broadcast and a retained non-leaf."""
    gv.manual_seed(0)
    W = gv.randn(3, 4, requires_grad=True)
    b = gv.randn(4, requires_grad=True)
    x = gv.randn(2, 3)
    h = gv.tanh(x @ W + b)
    h.retain_grad()
    loss = (h * h).sum() + (W * W).mean()
    return W, b, h, loss


def _json(trace: Trace) -> str:
    return json.dumps(trace.to_json(), sort_keys=True, default=str)


def test_step_by_step_and_run_give_the_same_trace():
    W, b, h, loss = _graph()
    stepped = record(loss, jacobians=True)
    assert not stepped.trace.steps and not stepped.finished   # the graph first, no step run yet
    count = 0
    while (step := stepped.step()) is not None:
        count += 1
        assert step is stepped.trace.steps[-1]
    stepped.close()
    whole = record(loss, jacobians=True).run()
    assert count == len(whole.steps) > 5
    assert _json(stepped.trace) == _json(whole)
    unnamed = record(loss, names={}, jacobians=True).run()   # names given: none from the caller
    assert _json(unnamed) == _json(record_backward([loss], jacobians=True))


def test_upcoming_names_the_node_the_next_step_runs():
    *_, loss = _graph()
    with record(loss) as run:
        run.step()
        while (upcoming := run.upcoming()) is not None:
            assert run.step().node == upcoming
        assert run.step() is None and run.finished


def test_run_leaves_every_grad_as_it_was():
    W, b, h, loss = _graph()
    W.grad = gv.ones(3, 4)
    before, data, version = W.grad, W.grad.detach().clone(), W.grad._version
    trace = record(loss).run()
    assert W.grad is before and W.grad._version == version and gv.equal(W.grad, data)
    assert b.grad is None and h.grad is None
    loss.backward()   # the graph is kept: a plain backward gives the plain gradient
    written = {a.node: a.total for s in trace.steps for a in s.accumulations}
    leaf = {n.name: n.id for n in trace.nodes if n.kind == "leaf"}
    np.testing.assert_allclose(written[leaf["W"]].values, W.grad.numpy(), rtol=1e-6)   # 1 + the gradient
    np.testing.assert_allclose(written[leaf["b"]].values, b.grad.numpy(), rtol=1e-6)


def test_halfway_the_grad_is_what_the_steps_wrote_and_reset_puts_it_back():
    W, b, h, loss = _graph()
    run = record(loss, write_grads=True)
    leaf = {n.name: n.id for n in run.trace.nodes if n.kind == "leaf"}
    first = None
    while run.step() is not None:
        now = run.grads_now()
        for name, tensor in (("W", W), ("b", b)):
            if now[leaf[name]] is None:
                assert tensor.grad is None
            else:   # the engine's real, partly accumulated .grad
                np.testing.assert_array_equal(now[leaf[name]].values, tensor.grad.numpy())
        if first is None and W.grad is not None:
            first = W.grad.detach().clone()
    steps = _json(run.trace)
    assert W.grad is not None and h.grad is not None   # write_grads: left as .backward() leaves them
    run.reset()
    assert W.grad is None and b.grad is None and h.grad is None and not run.trace.steps
    assert all(g is None for g in run.grads_now().values())
    while run.step() is not None:
        pass
    assert _json(run.trace) == steps
    run.close()
    assert W.grad is not None   # closing a recording that writes .grad keeps what it wrote


def test_a_trace_is_a_finished_recording():
    *_, loss = _graph()
    trace = record(loss).run()
    again = record(trace)
    assert type(again) is Recording and again.finished and again.trace is trace
    assert again.step() is None and again.upcoming() is None and again.run() is trace
    with pytest.raises(RuntimeError, match="no backward to run again"):
        again.reset()


def test_bad_input_is_refused_before_any_grad_changes():
    gv.manual_seed(0)
    x = gv.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar outputs"):
        record(x * 2)
    assert x.grad is None
    with pytest.raises(TypeError, match="at least one tensor"):
        record()


def test_torch_and_gradviz_tensors_are_not_recorded_together():
    torch = pytest.importorskip("torch")
    a = torch.ones(2, requires_grad=True).sum()
    b = gv.ones(2, requires_grad=True).sum()
    with pytest.raises(TypeError, match="one library"):
        record(a, b)


def test_names_come_from_the_caller_and_from_model():
    gv.manual_seed(0)
    model = gv.nn.Linear(3, 2)
    inputs = gv.randn(4, 3)
    loss = model(inputs).pow(2).mean()
    with record(loss, model=model) as run:
        names = sorted(n.name for n in run.trace.nodes if n.kind == "leaf")
        out = run.trace.node(run.trace.roots[0]).name
    assert names == ["bias", "weight"] and out == "loss"
    assert isinstance(run, EngineRecording)
    anim = gv.animate(loss, model=model)
    assert sorted(n.name for n in anim.trace.nodes if n.kind == "leaf") == ["bias", "weight"]


def test_an_error_in_a_step_ends_the_pass_and_close_puts_grad_back():
    W, b, h, loss = _graph()

    def fail(grad):
        raise ValueError("a hook refused")
    h.register_hook(fail)
    run = record(loss)
    with pytest.raises(ValueError, match="a hook refused"):
        while run.step() is not None:
            pass
    assert run.finished and run.step() is None
    run.close()
    assert W.grad is None and b.grad is None


def test_a_recording_closed_halfway_puts_grad_back():
    W, b, h, loss = _graph()
    with record(loss) as run:
        while h.grad is None:   # the retained non-leaf is written halfway
            run.step()
        assert not run.finished
    assert W.grad is None and b.grad is None and h.grad is None and run.finished
    with pytest.raises(RuntimeError, match="closed"):
        run.reset()
    loss.backward()
    assert W.grad is not None
