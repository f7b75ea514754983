"""Recording a backward for a picture changes nothing the user can see: every .grad, retained
grad, version counter, hook and the graph itself are as they were (write_grads=True opts in
to the .grad a real backward writes)."""
from __future__ import annotations

import numpy as np
import pytest

import gradviz as gv
from gradviz.tracing import record_backward


def cube():
    a = gv.tensor([2., 3.], requires_grad=True)
    return a, 3 * a ** 3


def test_recording_then_backward_gives_the_plain_gradient():
    a, q = cube()
    record_backward([q], gradient=gv.ones(2))
    q.backward(gv.ones(2))                       # the graph was kept: a later backward runs
    assert a.grad.tolist() == [36., 81.]         # not [72, 162]


def test_animate_then_backward_gives_the_plain_gradient():
    from gradviz.player import animate
    a, q = cube()
    animate(q, gradient=gv.ones(2))
    q.backward(gv.ones(2))
    assert a.grad.tolist() == [36., 81.]


def test_recording_leaves_grads_objects_values_and_versions_alone():
    a, q = cube()
    q.backward(gv.ones(2), retain_graph=True)
    grad = a.grad
    version = grad._version
    record_backward([q], gradient=gv.ones(2))
    assert a.grad is grad
    assert a.grad.tolist() == [36., 81.]
    assert a.grad._version == version
    assert a._version == 0


def test_a_grad_made_by_recording_is_taken_away_again():
    a, q = cube()
    record_backward([q], gradient=gv.ones(2))
    assert a.grad is None


def test_retained_grads_and_hooks_are_as_before():
    a = gv.tensor([1., 2.], requires_grad=True)
    h = a * a
    h.retain_grad()
    seen = []
    handle = h.register_hook(lambda g: seen.append(g.tolist()))
    loss = (h * 3).sum()
    trace = record_backward([loss], names={"a": a, "h": h})
    assert seen == [[3., 3.]]                    # the hook ran, and the Trace shows the backward
    assert len(trace.steps) > 0
    assert h.grad is None and a.grad is None and h.retains_grad
    loss.backward()                              # still registered, and the graph is still whole
    assert seen == [[3., 3.], [3., 3.]]
    assert h.grad.tolist() == [3., 3.] and a.grad.tolist() == [6., 12.]
    handle.remove()


def test_leaf_versions_and_saved_values_unchanged():
    a = gv.tensor([0.5, 1.5], requires_grad=True)
    b = gv.tensor([2., -1.], requires_grad=True)
    loss = (a * b).exp().sum()
    before = (a._version, b._version)
    record_backward([loss])
    assert (a._version, b._version) == before
    loss.backward()                              # saved tensors still valid: no version error
    np.testing.assert_allclose(a.grad.numpy(), (b * (a * b).exp()).detach().numpy())


def test_write_grads_keeps_what_the_recorded_backward_wrote():
    a, q = cube()
    record_backward([q], gradient=gv.ones(2), write_grads=True)
    assert a.grad.tolist() == [36., 81.]
    q.backward(gv.ones(2))
    assert a.grad.tolist() == [72., 162.]        # as two .backward() calls would


def test_grads_are_restored_when_the_recorded_backward_fails():
    a = gv.tensor([1., 2.], requires_grad=True)
    a.grad = gv.tensor([5., 5.])
    h = a * 2
    h.register_hook(lambda g: (_ for _ in ()).throw(ValueError("boom")))
    with pytest.raises(ValueError, match="boom"):
        record_backward([h.sum()])
    assert a.grad.tolist() == [5., 5.]


def test_jacobian_view_leaves_the_tensors_f_uses_alone():
    from gradviz.player.jacobian import jacobian_view
    m = gv.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    x = gv.tensor([[1., 1.]], requires_grad=True)
    view = jacobian_view(lambda x: gv.mm(x, m), x)
    assert m.grad is None and x.grad is None
    np.testing.assert_allclose(view.products[-1][1], [[3., 7.]])   # backward(ones) gives ones @ Mᵀ


@pytest.mark.torch
def test_torch_bridge_recording_leaves_torch_grads_alone():
    torch = pytest.importorskip("torch")
    from gradviz.torch_bridge import record_torch_backward
    a = torch.tensor([2., 3.], requires_grad=True)
    q = 3 * a ** 3
    record_torch_backward(q, gradient=torch.ones(2))
    q.backward(torch.ones(2))
    assert a.grad.tolist() == [36., 81.]


@pytest.mark.torch
def test_torch_bridge_puts_back_named_retained_grads_and_versions():
    torch = pytest.importorskip("torch")
    from gradviz.torch_bridge import record_torch_backward
    a = torch.tensor([2., 3.], requires_grad=True)
    h = a * 2
    h.retain_grad()
    loss = (h * h).sum()
    loss.backward(retain_graph=True)
    grad, h_grad, version = a.grad, h.grad, a.grad._version
    record_torch_backward(loss, params={"a": a, "h": h})
    assert a.grad is grad and a.grad.tolist() == [16., 24.] and a.grad._version == version
    assert h.grad is h_grad and h.grad.tolist() == [8., 12.]
