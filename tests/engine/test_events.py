"""The event bus: what the engine and the ops announce, in order, and that nobody pays
for events when nobody listens (no event object is even built)."""
import numpy as np
import pytest

import gradviz
from gradviz import events
from gradviz.autograd import backward_steps

EVENT_TYPES = ("NodeCreated", "BackwardStarted", "NodeExecuted", "GradAccumulated", "HookFired", "BackwardFinished")


def _node(node) -> str:
    return "AccumulateGrad" if type(node).__name__ == "AccumulateGrad" else node.name()


def _describe(event) -> tuple:
    kind = type(event).__name__
    if kind == "NodeCreated":
        return kind, _node(event.node)
    if kind == "NodeExecuted":
        return kind, _node(event.step.node)
    if kind == "GradAccumulated":
        return kind, event.tensor.name, _node(event.node), np.asarray(event.total).tolist()
    if kind == "HookFired":
        return kind, _node(event.node), event.output_nr
    if kind == "BackwardStarted":
        return kind, tuple(_node(n) for n, _ in event.roots)
    return kind, event.steps


def _small_graph():
    a = gradviz.tensor([1.0, 2.0], requires_grad=True)
    b = gradviz.tensor([3.0, 4.0], requires_grad=True)
    a.name, b.name = "a", "b"
    c = a * b
    c.name = "c"
    c.retain_grad()
    c.register_hook(lambda g: g * 2)
    loss = (c + c.exp()).sum()
    return a, b, c, loss


GOLDEN = [
    ("NodeCreated", "MulBackward0"),
    ("NodeCreated", "ExpBackward0"),
    ("NodeCreated", "AddBackward0"),
    ("NodeCreated", "SumBackward0"),
    ("BackwardStarted", ("SumBackward0",)),
    ("NodeExecuted", "SumBackward0"),
    ("NodeExecuted", "AddBackward0"),
    ("NodeExecuted", "ExpBackward0"),
    ("HookFired", "MulBackward0", 0),
    ("GradAccumulated", "c", "MulBackward0", "retained"),
    ("NodeExecuted", "MulBackward0"),
    ("GradAccumulated", "a", "AccumulateGrad", "a"),
    ("NodeExecuted", "AccumulateGrad"),
    ("GradAccumulated", "b", "AccumulateGrad", "b"),
    ("NodeExecuted", "AccumulateGrad"),
    ("BackwardFinished", 6),
]


def test_golden_event_sequence_for_a_small_graph():
    log = []
    with events.listen(log.append):
        a, b, c, loss = _small_graph()
        loss.backward()
    described = [_describe(e) for e in log]
    # the totals: dc = 2 (1 + e^c) by the hook, da = dc * b, db = dc * a
    dc = 2 * (1 + np.exp(np.array([3.0, 8.0], dtype=np.float32)))
    totals = {"retained": dc, "a": dc * [3, 4], "b": dc * [1, 2]}
    for got, want in zip(described, GOLDEN):
        if want[0] == "GradAccumulated":
            assert got[:3] == want[:3]
            np.testing.assert_allclose(got[3], totals[want[3]], rtol=1e-6)
        else:
            assert got == want
    assert len(described) == len(GOLDEN)


def test_event_payloads():
    log = []
    with events.listen(log.append):
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        y = x * 3
        y.sum().backward()
    created = [e for e in log if isinstance(e, events.NodeCreated)]
    assert created[0].inputs[0] is x and created[0].outputs[0] is y and created[0].node is y.grad_fn
    started = next(e for e in log if isinstance(e, events.BackwardStarted))
    assert np.asarray(started.seeds[0]).tolist() == 1.0
    executed = [e.step for e in log if isinstance(e, events.NodeExecuted)]
    assert [s.index for s in executed] == [0, 1, 2]
    mul = executed[1]
    assert np.asarray(mul.grad_outputs[0]).tolist() == [1.0, 1.0]
    assert np.asarray(mul.grad_inputs[0]).tolist() == [3.0, 3.0]
    acc = next(e for e in log if isinstance(e, events.GradAccumulated))
    assert acc.tensor is x and np.asarray(acc.contribution).tolist() == [3.0, 3.0]
    assert isinstance(log[-1], events.BackwardFinished) and log[-1].steps == 3


def test_hook_fired_reports_the_gradient_before_and_after():
    log = []
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 10)
    x.register_hook(lambda g: None)
    with events.listen(log.append):
        (x * 1).sum().backward()
    fired = [e for e in log if isinstance(e, events.HookFired)]
    assert len(fired) == 2
    assert np.asarray(fired[0].before).tolist() == [1.0, 1.0] and np.asarray(fired[0].after).tolist() == [10.0, 10.0]
    assert fired[1].after is None


def test_events_follow_the_step_api():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()
    log = []
    with events.listen(log.append):
        run = backward_steps(y)
        assert not any(isinstance(e, events.NodeExecuted) for e in log)
        next(run)
        assert [type(e).__name__ for e in log] == ["BackwardStarted", "NodeExecuted"]
        run.run()
    assert type(log[-1]).__name__ == "BackwardFinished"


def test_unsubscribe_and_several_listeners():
    first, second = [], []
    stop_first = events.subscribe(first.append)
    with events.listen(second.append):
        gradviz.tensor([1.0], requires_grad=True) * 2
    stop_first()
    stop_first()                                       # unsubscribing twice is harmless
    gradviz.tensor([1.0], requires_grad=True) * 2
    assert len(first) == len(second) == 1
    assert not events.listening()


def test_a_failed_backward_does_not_report_finishing():
    x = gradviz.tensor([1.0], requires_grad=True)
    x.register_hook(lambda g: 1 / 0)
    log = []
    with events.listen(log.append), pytest.raises(ZeroDivisionError):
        (x * 2).sum().backward()
    assert [type(e).__name__ for e in log][-1] == "NodeExecuted"
    assert not any(isinstance(e, events.BackwardFinished) for e in log)


def test_no_event_is_built_when_nobody_listens(monkeypatch):
    built = []
    for name in EVENT_TYPES:
        original = getattr(events, name)

        def counting(*args, _original=original, **kwargs):
            built.append(_original.__name__)
            return _original(*args, **kwargs)
        monkeypatch.setattr(events, name, counting)

    def workload():
        a, b, c, loss = _small_graph()
        loss.backward()
        x = gradviz.tensor([1.0, 2.0], requires_grad=True)
        (g,) = gradviz.autograd.grad((x ** 3).sum(), x, create_graph=True)
        g.sum().backward()
        list(backward_steps((x * 2).sum()))

    assert not events.listening()
    workload()
    assert built == []
    with events.listen(lambda e: None):                # the same code does build them for a listener
        workload()
    assert set(built) == set(EVENT_TYPES)
