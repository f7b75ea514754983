"""A recorded backward with `inputs`: the pass the program runs, node for node.

`tensor.backward(inputs=...)` runs only the nodes that lead to `inputs` and writes only their .grad;
`autograd.grad(outputs, inputs)` runs the same nodes and writes no .grad at all: torch's engine never
calls the inputs' own AccumulateGrad. A recording given `inputs` (and `accumulate=False` for grad's
pass) steps exactly the nodes torch runs, on either engine, sends the gradient torch returns, and
leaves every .grad as it was.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradviz
from gradviz.origins import record

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def _model(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Tanh(), lib.nn.Linear(3, 1))
    x = lib.rand(4, 2).requires_grad_(True)
    return net, x, net(x)


def _torch_runs(roots, run) -> list:
    """The names of the nodes torch's engine calls while `run()` runs, in its order."""
    ran, seen, stack, handles = [], set(), [r.grad_fn for r in roots], []
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        name = fn.name().split("::")[-1]   # torch::autograd::AccumulateGrad: AccumulateGrad, as drawn
        handles.append(fn.register_hook(lambda gi, go, name=name: ran.append(name)))
        stack.extend(n for n, _ in fn.next_functions)
    try:
        run()
    finally:
        for h in handles:
            h.remove()
    return ran


def _steps(trace) -> list:
    return [trace.node(s.node).name for s in trace.steps]


def _sent_to(trace, leaf: str) -> np.ndarray:
    """The gradient sent to the leaf called `leaf`: along the edge out of its AccumulateGrad (edges run
    from input to consumer)."""
    (acc,) = {e.dst for e in trace.edges if trace.node(e.src).name == leaf}
    out_of_acc = {e.id for e in trace.edges if e.src == acc}
    (flow,) = [f for s in trace.steps for f in s.flows if f.edge in out_of_acc]
    return np.asarray(flow.grad.values)


PASSES = {"grad": dict(accumulate=False), "backward(inputs=)": {}}


@pytest.mark.parametrize("how", PASSES)
def test_a_torch_recording_steps_the_nodes_torch_runs(how):
    net, x, u = _model(torch)
    ones = torch.ones_like(u)
    if PASSES[how]:
        ran = _torch_runs((u,), lambda: torch.autograd.grad(u, x, ones, retain_graph=True))
        (expected,) = torch.autograd.grad(u, x, ones, retain_graph=True)
    else:
        ran = _torch_runs((u,), lambda: u.backward(ones, inputs=[x], retain_graph=True))
        expected, x.grad = x.grad, None
    trace = record(u, gradient=ones, inputs=[x], model=net, **PASSES[how]).run()
    assert _steps(trace) == ran
    assert ("AccumulateGrad" in ran) == (how != "grad")   # grad() never calls x's AccumulateGrad
    np.testing.assert_array_equal(_sent_to(trace, "x"), expected.numpy())
    assert x.grad is None and all(p.grad is None for p in net.parameters())   # recording changed no .grad


@pytest.mark.parametrize("how", PASSES)
def test_gradviz_engine_steps_the_nodes_torch_runs(how):
    _, tx, tu = _model(torch)
    net, x, u = _model(gradviz)
    ones, tones = gradviz.ones_like(u), torch.ones_like(tu)
    if PASSES[how]:
        ran = _torch_runs((tu,), lambda: torch.autograd.grad(tu, tx, tones))
    else:
        ran = _torch_runs((tu,), lambda: tu.backward(tones, inputs=[tx]))
    trace = record(u, gradient=ones, inputs=[x], model=net, **PASSES[how]).run()
    assert sorted(_steps(trace)) == sorted(ran)
    (expected,) = gradviz.autograd.grad(u, x, ones, retain_graph=True)
    np.testing.assert_array_equal(_sent_to(trace, "x"), expected.numpy())
    assert x.grad is None and all(p.grad is None for p in net.parameters())


@pytest.mark.parametrize("lib", [torch, gradviz], ids=["torch", "gradviz"])
def test_the_stepper_with_inputs_writes_only_their_grad(lib):
    net, x, u = _model(lib)
    stepper = gradviz.step(u.sum(), inputs=[net[2].weight], names={"x": x})
    while stepper.recording.step() is not None:
        pass
    expected = lib.autograd.grad(u.sum(), net[2].weight, retain_graph=True)[0]
    np.testing.assert_allclose(np.asarray(net[2].weight.grad.detach() if lib is torch else net[2].weight.grad),
                               np.asarray(expected.detach() if lib is torch else expected), rtol=0, atol=0)
    assert x.grad is None and net[0].weight.grad is None   # what does not lead to the inputs gets nothing
    assert [n for n in _steps(stepper.trace) if n == "AccumulateGrad"] == ["AccumulateGrad"]
    stepper.close()


def test_grads_pass_needs_inputs():
    net, x, u = _model(gradviz)
    with pytest.raises(TypeError, match="needs inputs"):
        record(u.sum(), accumulate=False)
