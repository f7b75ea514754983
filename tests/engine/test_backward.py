"""The backward engine behaves as PyTorch's autograd: accumulation, hooks, retain_graph,
saved tensors, next_functions, inputs=, autograd.grad, grad modes, errors, version
counters, the order nodes run in, deep graphs, the pausable step API, and the rollback
that keeps a failed backward from leaving a half-updated .grad.

Expectations are PyTorch 2.13's answers, written out; where PyTorch is installed the
same programs also run under it and the outputs are compared.
"""
import re
import sys
import threading
import warnings

import numpy as np
import pytest

import gradviz
from gradviz.autograd import Backward, Step, backward_steps
from tests.support.parity import mask, needs_torch, real_torch

both = pytest.mark.parametrize("m", [
    pytest.param(gradviz, id="gradviz"),
    pytest.param(real_torch, id="torch", marks=[needs_torch, pytest.mark.torch]),
])


def _error(fn) -> str:
    with pytest.raises(Exception) as info:
        fn()
    return f"{type(info.value).__name__}: {mask(str(info.value))}"


# -- accumulation and .grad ---------------------------------------------------------------------
@both
def test_gradients_accumulate_into_leaf_grad(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    first = x.grad
    assert x.grad.tolist() == [2.0, 4.0]
    (x * 3).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    assert x.grad is first                          # accumulated into the same tensor
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


@both
def test_a_leaf_used_twice_gets_both_contributions(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    (x * x + x).sum().backward()
    assert x.grad.tolist() == [3.0, 5.0]


@both
def test_grad_does_not_alias_the_seed_or_other_grads(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = m.tensor([1.0, 2.0], requires_grad=True)
    (x + y).sum().backward()
    x.grad.add_(1)
    assert y.grad.tolist() == [1.0, 1.0]
    z = m.tensor([1.0, 2.0], requires_grad=True)
    seed = m.tensor([1.0, 1.0])
    (z * 1).backward(seed)
    seed.add_(5)
    assert z.grad.tolist() == [1.0, 1.0]


@both
def test_non_leaf_grad_is_none_and_warns(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.sum().backward()
    with pytest.warns(UserWarning, match=re.escape(
            "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
            "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
            "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor.")):
        assert y.grad is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.grad is not None                   # leaves never warn
        assert m.tensor([1.0]).grad is None


@both
def test_retain_grad(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    assert y.retains_grad and not x.retains_grad
    (y * y).sum().backward(retain_graph=True)
    assert y.grad.tolist() == [4.0, 8.0]
    (y * 3).sum().backward()
    assert y.grad.tolist() == [7.0, 11.0]           # accumulates like a leaf's
    assert x.grad.tolist() == [14.0, 22.0]
    x.retain_grad()                                  # a no-op on a leaf that requires grad
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        m.tensor([1.0]).retain_grad()


# -- hooks ------------------------------------------------------------------------------------------
@both
def test_tensor_hooks_run_in_registration_order_and_may_replace_the_gradient(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: log.append(("x1", g.tolist())))
    x.register_hook(lambda g: g * 10)
    x.register_hook(lambda g: log.append(("x3", g.tolist())))
    y = x * 2
    y.register_hook(lambda g: log.append(("y1", g.tolist())))
    handle = y.register_hook(lambda g: g + 1)
    y.register_hook(lambda g: log.append(("y3", g.tolist())))
    y.sum().backward(retain_graph=True)
    assert log == [("y1", [1.0, 1.0]), ("y3", [2.0, 2.0]), ("x1", [4.0, 4.0]), ("x3", [40.0, 40.0])]
    assert x.grad.tolist() == [40.0, 40.0]
    handle.remove()
    handle.remove()                                  # removing twice is harmless
    x.grad = None
    log.clear()
    y.sum().backward()
    assert x.grad.tolist() == [20.0, 20.0]
    assert log == [("y1", [1.0, 1.0]), ("y3", [1.0, 1.0]), ("x1", [2.0, 2.0]), ("x3", [20.0, 20.0])]


@both
def test_retain_grad_sees_the_hooked_gradient(m):
    for retain_first in (True, False):
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        if retain_first:
            y.retain_grad()
        y.register_hook(lambda g: g * 100)
        if not retain_first:
            y.retain_grad()
        y.sum().backward()
        assert y.grad.tolist() == [100.0, 100.0] and x.grad.tolist() == [200.0, 200.0]


@both
def test_hook_errors(m):
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't require gradient"):
        m.tensor([1.0]).register_hook(lambda g: g)
    x = m.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match="^hook '<lambda>' has changed the size of value$"):
        (x * 2).sum().backward()
    assert x.grad is None
    w = m.tensor([1.0, 2.0], requires_grad=True)
    w.register_hook(lambda g: g.double())
    with pytest.raises(RuntimeError, match=re.escape("hook '<lambda>' has changed the type of value (was "
                                                     "torch.FloatTensor got torch.DoubleTensor)")):
        (w * 2).sum().backward()


@both
def test_hooks_run_with_grad_mode_of_create_graph(m):
    modes = []
    x = m.tensor([1.0], requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: modes.append((m.is_grad_enabled(), g.requires_grad)))
    y.backward(retain_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y.backward(create_graph=True)
    assert modes == [(False, False), (True, False)] and m.is_grad_enabled()


@both
def test_a_hook_must_return_a_tensor_or_none(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: [1.0, 2.0])
    with pytest.raises(TypeError, match="^expected Variable, but hook returned 'list'$"):
        (x * 2).sum().backward()


@both
def test_node_hooks_and_prehooks(m):
    log = []
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    y.grad_fn.register_prehook(lambda go: log.append(("pre", [g.tolist() for g in go])))
    y.grad_fn.register_hook(lambda gi, go: log.append(("post", [g.tolist() for g in gi],
                                                        [g.tolist() for g in go])))
    handle = y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0, gi[1]))
    y.register_hook(lambda g: log.append(("tensor", g.tolist())))
    y.sum().backward(retain_graph=True)
    assert log == [("tensor", [1.0, 1.0]), ("pre", [[1.0, 1.0]]), ("post", [[3.0, 4.0], [1.0, 2.0]], [[1.0, 1.0]])]
    assert x.grad.tolist() == [0.0, 0.0] and w.grad.tolist() == [1.0, 2.0]
    handle.remove()
    y.grad_fn.register_prehook(lambda go: (go[0] * 5,))
    x.grad = w.grad = None
    y.sum().backward()
    assert x.grad.tolist() == [15.0, 20.0] and w.grad.tolist() == [5.0, 10.0]


@both
def test_accumulate_grad_hooks(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    acc = (x * 2).grad_fn.next_functions[0][0]
    seen = []
    acc.register_prehook(lambda go: seen.append(("pre", go[0].tolist())))
    acc.register_hook(lambda gi, go: seen.append(("post", gi, go[0].tolist(), x.grad.tolist())))
    (x * 3).sum().backward()
    assert seen == [("pre", [3.0, 3.0]), ("post", (), [3.0, 3.0], [3.0, 3.0])] and x.grad.tolist() == [3.0, 3.0]


@both
def test_node_metadata_is_kept(m):
    y = m.tensor([1.0], requires_grad=True) * 2
    y.grad_fn.metadata["label"] = "double"
    assert y.grad_fn.metadata == {"label": "double"}


# -- retain_graph and freed buffers -----------------------------------------------------------------
FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
         "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
         "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
         "if you need to access saved tensors after calling backward.")


@both
def test_second_backward_through_saved_tensors_raises(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=f"^{re.escape(FREED)}$"):
        y.backward()
    assert x.grad.tolist() == [2.0, 4.0]             # the failed call changed nothing


@both
def test_retain_graph_keeps_buffers_until_a_backward_without_it(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    s = (x * x).sum()
    s.backward(retain_graph=True)
    s.backward()
    assert x.grad.tolist() == [4.0, 8.0]
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        s.backward()


# op -> can a second backward run through it without retain_graph? (PyTorch: only if it saved nothing)
RUN_TWICE = {
    "x + w": (lambda m, x, w, c: x + w, True), "x - c": (lambda m, x, w, c: x - c, True),
    "-x": (lambda m, x, w, c: -x, True), "sum": (lambda m, x, w, c: x.sum(), True),
    "mean": (lambda m, x, w, c: x.mean(), True), "x[0]": (lambda m, x, w, c: x[0], True),
    "view": (lambda m, x, w, c: x.view(2, 1), True), "T": (lambda m, x, w, c: x.view(2, 1).T, True),
    "expand": (lambda m, x, w, c: x.view(2, 1).expand(2, 3), True),
    "cat": (lambda m, x, w, c: m.cat([x, w]), True), "stack": (lambda m, x, w, c: m.stack([x, c]), True),
    "double": (lambda m, x, w, c: x.double(), True), "cumsum": (lambda m, x, w, c: x.cumsum(0), True),
    "flip": (lambda m, x, w, c: x.flip(0), True),
    "x * 2": (lambda m, x, w, c: x * 2, False), "2 * x": (lambda m, x, w, c: 2 * x, False),
    "x * c": (lambda m, x, w, c: x * c, False), "x * w": (lambda m, x, w, c: x * w, False),
    "x / 2": (lambda m, x, w, c: x / 2, False), "c / x": (lambda m, x, w, c: c / x, False),
    "x ** 2": (lambda m, x, w, c: x ** 2, False), "exp": (lambda m, x, w, c: x.exp(), False),
    "x @ M": (lambda m, x, w, c: x @ m.ones(2, 2), False), "relu": (lambda m, x, w, c: x.relu(), False),
    "sigmoid": (lambda m, x, w, c: x.sigmoid(), False), "max": (lambda m, x, w, c: x.max(), False),
    "clamp": (lambda m, x, w, c: x.clamp(0, 1.5), False), "std": (lambda m, x, w, c: x.std(), False),
    "softmax": (lambda m, x, w, c: x.softmax(0), False), "tanh": (lambda m, x, w, c: x.tanh(), False),
    "index": (lambda m, x, w, c: x[m.tensor([0, 0])], False), "prod": (lambda m, x, w, c: x.prod(), False),
    "where": (lambda m, x, w, c: m.where(c > 3, x, w), False), "dot": (lambda m, x, w, c: x.dot(c), False),
}


@both
@pytest.mark.parametrize("op", sorted(RUN_TWICE))
def test_only_nodes_that_saved_tensors_refuse_a_second_backward(m, op):
    make, twice = RUN_TWICE[op]
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    y = make(m, x, w, m.tensor([3.0, 4.0])).sum()
    y.backward()
    once = x.grad.clone()
    if twice:
        y.backward()
        assert x.grad.tolist() == (once * 2).tolist()
    else:
        with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second time"):
            y.backward()
        assert x.grad.tolist() == once.tolist()


@both
def test_a_shared_subgraph_freed_by_one_backward(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    a, b = y.sum(), (y * 2).sum()
    a.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        b.backward()


@both
def test_grad_then_backward_needs_retain_graph(m):
    x = m.tensor([1.0], requires_grad=True)
    y = x.exp()
    m.autograd.grad(y, x)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


# -- saved tensors -------------------------------------------------------------------------------------
@both
def test_saved_tensors(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    y = x * w
    e = x.exp()
    p = x.pow(3)
    assert y.grad_fn._saved_self is x and y.grad_fn._saved_other is w
    assert e.grad_fn._saved_result.tolist() == e.tolist() and e.grad_fn._saved_result.grad_fn is e.grad_fn
    assert p.grad_fn._saved_exponent == 3 and p.grad_fn._saved_self is x
    (y.sum() + e.sum()).backward(retain_graph=True)
    assert y.grad_fn._saved_self is x                 # still there with retain_graph
    (y.sum() + e.sum()).backward()
    for read in (lambda: y.grad_fn._saved_self, lambda: y.grad_fn._saved_other, lambda: e.grad_fn._saved_result):
        with pytest.raises(RuntimeError, match=f"^{re.escape(FREED)}$"):
            read()
    with pytest.raises(AttributeError):
        y.grad_fn._saved_nothing_like_this


# -- graph structure -------------------------------------------------------------------------------------
@both
def test_next_functions_and_accumulate_grad(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0])
    y = (x * w + x).sum()
    assert y.grad_fn.name() == "SumBackward0"
    ((add, zero),) = y.grad_fn.next_functions
    assert add.name() == "AddBackward0" and zero == 0
    (mul, _), (acc, nr) = add.next_functions
    assert mul.name() == "MulBackward0" and nr == 0
    assert type(acc).__name__ == "AccumulateGrad" and acc.name() == "torch::autograd::AccumulateGrad"
    assert acc.variable is x and acc.next_functions == ()
    assert mul.next_functions[0][0] is acc and mul.next_functions[1] == (None, 0)   # w: no grad, no node
    assert isinstance(y.grad_fn.next_functions, tuple) and isinstance(y.grad_fn.next_functions[0], tuple)
    assert mask(repr(y.grad_fn)) == "<SumBackward0 object at 0x…>"
    assert str(type(y.grad_fn)) == "<class 'SumBackward0'>" and type(mul).__name__ == "MulBackward0"
    assert x.grad_fn is None


@both
def test_scalar_operand_order_in_next_functions(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    for y in (2 * x, x * 2, 2 + x, x + 2):
        (acc, _), (none, _) = y.grad_fn.next_functions
        assert type(acc).__name__ == "AccumulateGrad" and none is None
    assert (2 ** x).grad_fn.name() == "PowBackward2"


@both
def test_multi_output_node(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    p, q = x.split(2)
    assert p.grad_fn is q.grad_fn and (p.output_nr, q.output_nr) == (0, 1)
    s = p.sum() * q.sum()
    ((mul, _),) = [(s.grad_fn, 0)]
    assert [n.name() for n, _ in mul.next_functions] == ["SumBackward0", "SumBackward0"]
    assert [i for _, i in (mul.next_functions[0][0].next_functions + mul.next_functions[1][0].next_functions)] \
        == [0, 1]
    s.backward()
    assert x.grad.tolist() == [3.0, 3.0, 3.0]
    y = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a, b = y.split(2)
    a.sum().backward()                                 # an output that got no gradient counts as zero
    assert y.grad.tolist() == [1.0, 1.0, 0.0]


# -- backward(inputs=...) and autograd.grad --------------------------------------------------------------
@both
def test_backward_inputs(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    (x * w).sum().backward(inputs=[x])
    assert x.grad.tolist() == [3.0, 4.0] and w.grad is None
    (x * w).sum().backward(inputs=w)
    assert w.grad.tolist() == [1.0, 2.0] and x.grad.tolist() == [3.0, 4.0]
    h = x * w
    (h * h).sum().backward(inputs=[h])
    assert h.grad.tolist() == [6.0, 16.0] and x.grad.tolist() == [3.0, 4.0]
    with pytest.raises(RuntimeError, match=re.escape("`inputs` argument to `backward()` cannot be empty.")):
        (x * 2).sum().backward(inputs=[])
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        (x * 2).sum().backward(inputs=[m.tensor([1.0])])
    unused = m.tensor([1.0], requires_grad=True)
    (x * 2).sum().backward(inputs=[unused])
    assert unused.grad is None and x.grad.tolist() == [3.0, 4.0]


@both
def test_only_the_nodes_leading_to_the_inputs_run(m):
    log = []
    a = m.tensor([1.0], requires_grad=True)
    b = m.tensor([2.0], requires_grad=True)
    c, d = a.exp(), b.exp()
    e = (c * d).sum()
    for node in (c.grad_fn, d.grad_fn, e.grad_fn, e.grad_fn.next_functions[0][0]):
        node.register_prehook(lambda go, node=node: log.append(node.name()))
    e.backward(inputs=[a], retain_graph=True)
    assert log == ["SumBackward0", "MulBackward0", "ExpBackward0"] and b.grad is None
    np.testing.assert_allclose(a.grad.numpy(), [np.e * np.exp(2.0)], rtol=1e-6)
    log.clear()
    (gd,) = m.autograd.grad(e, d)                    # the input's own grad_fn does not run
    assert log == ["SumBackward0", "MulBackward0"]
    np.testing.assert_allclose(gd.numpy(), [np.e], rtol=1e-6)


@both
def test_grad_leaves_the_graph_below_its_inputs_intact(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0, 4.0], requires_grad=True)
    h = x * w
    (gh,) = m.autograd.grad(h.exp().sum(), h)
    h.sum().backward()                               # h's MulBackward0 never ran, so it was not freed
    assert x.grad.tolist() == [3.0, 4.0] and w.grad.tolist() == [1.0, 2.0]
    g1, g2 = m.autograd.grad((x * x).sum(), [x, x])  # the same input twice
    assert g1.tolist() == g2.tolist() == [2.0, 4.0]


@both
def test_grad_second_derivatives(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    y = (x ** 3).sum()
    (g,) = m.autograd.grad(y, x, create_graph=True)
    assert g.requires_grad and g.tolist() == [3.0, 12.0]
    (h,) = m.autograd.grad(g.sum(), x)
    assert h.tolist() == [6.0, 12.0] and x.grad is None
    z = m.tensor([0.5], requires_grad=True)
    (g1,) = m.autograd.grad(z.sin(), z, create_graph=True)
    (g2,) = m.autograd.grad(g1, z, create_graph=True)
    (g3,) = m.autograd.grad(g2, z)
    assert np.allclose([g1.item(), g2.item(), g3.item()], [np.cos(0.5), -np.sin(0.5), -np.cos(0.5)])


@both
def test_backward_with_create_graph(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")               # torch warns about the reference cycle
        (x ** 3).sum().backward(create_graph=True)
    g = x.grad
    assert g.requires_grad and g.tolist() == [3.0, 12.0]
    assert mask(repr(g)) == "tensor([ 3., 12.], grad_fn=<CopyBackwards>)"   # the first .grad is a copy
    assert g.grad_fn.next_functions[0] == (None, 0) and g.grad_fn.next_functions[1][0].name() == "MulBackward0"
    x.grad = None
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]
    h = x * 2
    h.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (h ** 2).sum().backward(create_graph=True)
    assert h.grad.grad_fn.name() == "CloneBackward0"


@both
def test_grad_unused_inputs(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    w = m.tensor([3.0], requires_grad=True)
    gx, gw = m.autograd.grad((x * 2).sum(), [x, w], allow_unused=True, retain_graph=True)
    assert gx.tolist() == [2.0, 2.0] and gw is None
    gx, gw = m.autograd.grad((x * 2).sum(), [x, w], materialize_grads=True)
    assert gw.tolist() == [0.0]
    with pytest.raises(RuntimeError, match=re.escape("The differentiated Tensor at index 1 appears to not have "
                                                     "been used in the graph. Set allow_unused=True if this is "
                                                     "the desired behavior.")):
        m.autograd.grad((x * 2).sum(), [x, w])
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not require grad"):
        m.autograd.grad((x * 2).sum(), [x, m.tensor([1.0])])


@both
def test_grad_of_a_non_leaf_and_several_outputs(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    (gh,) = m.autograd.grad((h * h).sum(), h)
    assert gh.tolist() == [4.0, 8.0] and x.grad is None
    y = x * 3
    (gx,) = m.autograd.grad([y, x * x], x, grad_outputs=[m.ones(2), m.tensor([1.0, 0.0])])
    assert gx.tolist() == [5.0, 3.0]
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        m.autograd.grad([y, y], x, grad_outputs=[m.ones(2)])


@both
def test_multiple_roots(m):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    m.autograd.backward([(x * 2).sum(), (x * x).sum()])
    assert x.grad.tolist() == [4.0, 6.0]


def test_functional_jacobian_hessian_vjp_gradcheck():
    from gradviz.autograd import functional
    x = gradviz.tensor([1.0, 2.0], dtype=gradviz.float64)
    jac = functional.jacobian(lambda a: a * a, x)
    assert jac.tolist() == [[2.0, 0.0], [0.0, 4.0]]
    hess = functional.hessian(lambda a: (a ** 3).sum(), x)
    assert hess.tolist() == [[6.0, 0.0], [0.0, 12.0]]
    out, v = functional.vjp(lambda a: a * 3, x, gradviz.tensor([1.0, 2.0], dtype=gradviz.float64))
    assert out.tolist() == [3.0, 6.0] and v.tolist() == [3.0, 6.0]
    assert gradviz.autograd.gradcheck(lambda a, b: (a * b).sin(), (x.clone().requires_grad_(),
                                                                   gradviz.tensor([0.5, -1.0], dtype=gradviz.float64,
                                                                                  requires_grad=True)))
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        from gradviz.ops.op import Op
        from gradviz.autograd.apply import apply
        wrong = Op("wrong", "WrongBackward0", "c = a²", lambda xp, a: a * a, vjp=(lambda xp, g, c, a: g * a,),
                   saves=("self",))
        gradviz.autograd.gradcheck(lambda a: apply(wrong, (a,)), (x.clone().requires_grad_(),))


# -- grad modes --------------------------------------------------------------------------------------------
@both
def test_grad_modes_as_contexts_and_decorators(m):
    x = m.tensor([1.0], requires_grad=True)
    with m.no_grad():
        a = x * 2
        with m.enable_grad():
            b = x * 2
        assert not m.is_grad_enabled()
    with m.set_grad_enabled(False):
        c = x * 2
    d = x * 2

    @m.no_grad()
    def f(t):
        return t * 2, m.is_grad_enabled()

    @m.enable_grad()
    def g(t):
        return t * 2

    with m.no_grad():
        e = g(x)
    out, enabled = f(x)
    assert [t.requires_grad for t in (a, b, c, d, out, e)] == [False, True, False, True, False, True]
    assert not enabled and m.is_grad_enabled()
    assert a.grad_fn is None and a.is_leaf


@both
def test_set_grad_enabled_as_a_function_and_exceptions_restore_the_mode(m):
    m.set_grad_enabled(False)
    try:
        assert not (m.tensor([1.0], requires_grad=True) * 2).requires_grad
    finally:
        m.set_grad_enabled(True)
    assert m.is_grad_enabled()
    with pytest.raises(ValueError):
        with m.no_grad():
            raise ValueError
    assert m.is_grad_enabled()

    @m.set_grad_enabled(False)
    def off():
        return m.is_grad_enabled()
    assert m.is_grad_enabled() and off() is False and m.is_grad_enabled()


@both
def test_grad_mode_decorators_without_parentheses_and_on_generators(m):
    @m.no_grad
    def bare():
        return m.is_grad_enabled()

    @m.no_grad()
    def steps():
        yield m.is_grad_enabled()
        yield m.is_grad_enabled()

    assert bare() is False and m.is_grad_enabled()
    gen = steps()
    first = next(gen)
    between = m.is_grad_enabled()                    # the mode does not leak out between yields
    second = next(gen)
    assert (first, between, second) == (False, True, False)
    with m.inference_mode():
        assert not m.is_grad_enabled()
        assert not (m.tensor([1.0], requires_grad=True) * 2).requires_grad
    with m.inference_mode(False):
        assert m.is_grad_enabled()

    @m.inference_mode()
    def infer():
        return m.is_grad_enabled()
    assert infer() is False and m.is_grad_enabled()


@both
def test_grad_mode_is_thread_local(m):
    seen = {}
    entered, checked = threading.Event(), threading.Event()

    def other():
        entered.wait()
        x = m.tensor([1.0], requires_grad=True)
        seen["other"] = (m.is_grad_enabled(), (x * 2).requires_grad)
        with m.no_grad():
            seen["other_no_grad"] = m.is_grad_enabled()
        checked.set()

    thread = threading.Thread(target=other)
    thread.start()
    with m.no_grad():
        entered.set()
        checked.wait(10)
        seen["main"] = m.is_grad_enabled()
    thread.join()
    assert seen == {"other": (True, True), "other_no_grad": False, "main": False}
    assert m.is_grad_enabled()


# -- errors ------------------------------------------------------------------------------------------------
@both
def test_backward_argument_errors(m):
    x = m.tensor([1.0, 2.0, 3.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match=re.escape(
            "Mismatch in shape: grad_output[0] has a shape of torch.Size([2]) and output[0] has a shape of "
            "torch.Size([3]).")):
        (x * 2).backward(m.tensor([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad and does not have a "
                                           "grad_fn$"):
        m.tensor([1.0]).sum().backward()
    with pytest.raises(RuntimeError, match="element 1 of tensors does not require grad"):
        m.autograd.backward([(x * 2).sum(), m.tensor(1.0)])
    assert x.grad is None
    leaf = m.tensor(2.0, requires_grad=True)
    leaf.backward()                                   # a leaf is its own root
    assert leaf.grad.item() == 1.0


@both
def test_shape_errors_name_the_shapes(m):
    with pytest.raises(RuntimeError, match=re.escape("The size of tensor a (3) must match the size of tensor b "
                                                     "(4) at non-singleton dimension 1")):
        m.ones(2, 3) + m.ones(4)
    with pytest.raises(RuntimeError, match=re.escape("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")):
        m.ones(2, 3) @ m.ones(4, 5)
    with pytest.raises(RuntimeError, match=re.escape("mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)")):
        m.mm(m.ones(2, 3, requires_grad=True), m.ones(4, 5))


def test_broadcast_error_also_names_the_op_and_both_shapes():
    with pytest.raises(RuntimeError) as info:
        gradviz.ones(2, 3) * gradviz.ones(2, 4)
    assert "Mul" in str(info.value) and "[2, 3]" in str(info.value) and "[2, 4]" in str(info.value)


# -- version counter -----------------------------------------------------------------------------------------
MODIFIED = ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            "{}; expected version {} instead. Hint: enable anomaly detection to find the operation that failed to "
            "compute its gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
VERSION_CASES = {
    "saved_input": (lambda m, x: _then(x * 2, lambda y: (y * y, y.add_(1))),
                    MODIFIED.format("[torch.FloatTensor [2]], which is output 0 of Add, is at version 1", 0)),
    "saved_result": (lambda m, x: _then(x.exp(), lambda y: (y, y.add_(1))),
                     MODIFIED.format("[torch.FloatTensor [2]], which is output 0 of Exp, is at version 1", 0)),
    "twice": (lambda m, x: _then(x.sin(), lambda y: (y * y, y.mul_(2), y.mul_(2))),
              MODIFIED.format("[torch.FloatTensor [2]], which is output 0 of Mul, is at version 2", 0)),
    "constant_operand": (lambda m, x: _then(m.ones(2), lambda w: (x * w, w.mul_(2))),
                         MODIFIED.format("[torch.FloatTensor [2]] is at version 1", 0)),
    "matrix_operand": (lambda m, x: _then(m.ones(2, 2), lambda w: (x @ w, w.mul_(2))),
                       MODIFIED.format("[torch.FloatTensor [2, 2]] is at version 1", 0)),
    "leaf_under_no_grad": (lambda m, x: _then(x * x, lambda y: (y, _no_grad(m, lambda: x.add_(1)))),
                           MODIFIED.format("[torch.FloatTensor [2]] is at version 1", 0)),
    "setitem_constant": (lambda m, x: _then(m.tensor([3.0, 4.0]), lambda w: (x * w, w.__setitem__(0, 7.0))),
                         MODIFIED.format("[torch.FloatTensor [2]] is at version 1", 0)),
    "through_detach": (lambda m, x: _then(x.tanh(), lambda y: (y, y.detach().zero_())),
                       MODIFIED.format("[torch.FloatTensor [2]], which is output 0 of Tanh, is at version 1", 0)),
    "in_place_result": (lambda m, x: _then(x * 1, lambda y: (y, y.exp_(), y.mul_(3))),
                        MODIFIED.format("[torch.FloatTensor [2]], which is output 0 of Exp, is at version 2", 1)),
    "own_operand": (lambda m, x: _then(x * 1, lambda y: (y, y.add_(x), y.mul_(y))),
                    MODIFIED.format("[torch.FloatTensor [2]], which is output 0 of Mul, is at version 2", 1)),
    "through_a_view": (lambda m, x: _then(m.ones(2, 2), lambda w: (x @ w.T, w.mul_(2))),
                       MODIFIED.format("[torch.FloatTensor [2, 2]] is at version 1", 0)),
    "write_into_a_view": (lambda m, x: _then(x.exp(), lambda y: (y, _no_grad(m, lambda: y[0:1].zero_()))),
                          MODIFIED.format("[torch.FloatTensor [2]], which is output 0 of Exp, is at version 1", 0)),
    "float64": (lambda m, x: _then(x.double() * 1, lambda y: (y * y, y.add_(1))),
                MODIFIED.format("[torch.DoubleTensor [2]], which is output 0 of Add, is at version 1", 0)),
}
VERSION_OK = {
    "not_saved": lambda m, x: _then(x * 2, lambda y: (y + 1, y.add_(1))),
    "through_data": lambda m, x: _then(x * x, lambda y: (y, x.data.add_(1))),
    "add_operand": lambda m, x: _then(m.ones(2), lambda w: (x + w, w.mul_(2))),
    "sigmoid_of_copy": lambda m, x: _then(x * 1, lambda y: (y.sigmoid(), y.sigmoid_())),
}


def _then(value, fn):
    """fn(value) returns (the tensor to backward from, side effects...)."""
    return fn(value)[0]


def _no_grad(m, fn):
    with m.no_grad():
        return fn()


@both
@pytest.mark.parametrize("case", sorted(VERSION_CASES))
def test_saved_tensor_modified_in_place_raises(m, case):
    make, message = VERSION_CASES[case]
    x = m.tensor([1.0, 2.0], requires_grad=True)
    out = make(m, x)
    with pytest.raises(RuntimeError) as info:
        out.sum().backward()
    assert str(info.value) == message
    assert x.grad is None


@both
@pytest.mark.parametrize("case", sorted(VERSION_OK))
def test_in_place_on_values_that_were_not_saved_is_fine(m, case):
    x = m.tensor([1.0, 2.0], requires_grad=True)
    VERSION_OK[case](m, x).sum().backward()
    assert x.grad is not None


def test_version_error_on_saved_access():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y * y
    y.add_(1)
    with pytest.raises(RuntimeError, match="which is output 0 of Add, is at version 1; expected version 0"):
        z.grad_fn._saved_self


def test_version_error_mid_backward_rolls_back_the_grads():
    a = gradviz.tensor([1.0, 2.0], requires_grad=True)
    b = gradviz.tensor([3.0, 4.0], requires_grad=True)
    a.grad = gradviz.tensor([10.0, 10.0])
    w = gradviz.ones(2)
    loss = (a * 2).sum() + (b * w).sum()     # a's branch runs and writes first, b's MulBackward0 fails
    w.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    assert a.grad.tolist() == [10.0, 10.0] and b.grad is None


# -- rollback --------------------------------------------------------------------------------------------
def test_a_hook_that_raises_leaves_every_grad_unchanged():
    a = gradviz.tensor([1.0, 2.0], requires_grad=True)
    b = gradviz.tensor([3.0, 4.0], requires_grad=True)
    c = gradviz.tensor([5.0, 6.0], requires_grad=True)
    a.grad = gradviz.tensor([10.0, 10.0])
    first = c.exp().sum()                            # built first, so its branch runs last
    h = a * b
    h.retain_grad()
    y = first + (h * 2).sum()
    order = []

    def boom(g):
        order.append("c")
        raise ValueError("boom")

    a.register_hook(lambda g: order.append("a"))
    b.register_hook(lambda g: order.append("b"))
    c.register_hook(boom)
    with pytest.raises(ValueError, match="boom"):
        y.backward(retain_graph=True)
    assert order == ["a", "b", "c"]                  # a, b and h were written before c's hook failed
    assert a.grad.tolist() == [10.0, 10.0] and b.grad is None and c.grad is None and h._grad is None
    c._accumulator().hooks.tensor.clear()
    y.backward()
    assert a.grad.tolist() == [16.0, 18.0] and b.grad.tolist() == [2.0, 4.0] and h.grad.tolist() == [2.0, 2.0]
    np.testing.assert_allclose(c.grad.numpy(), np.exp([5.0, 6.0]), rtol=1e-6)


def test_rollback_of_accumulated_grads_keeps_their_identity():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    w = gradviz.tensor([1.0, 1.0], requires_grad=True)
    (x * 1).sum().backward()
    g = x.grad
    w.register_hook(lambda grad: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        (x * w).sum().backward()
    assert x.grad is g and g.tolist() == [1.0, 1.0]


def test_an_interrupted_backward_rolls_back_too():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    w = gradviz.tensor([1.0, 1.0], requires_grad=True)

    def interrupt(grad):
        raise KeyboardInterrupt

    w.register_hook(interrupt)
    with pytest.raises(KeyboardInterrupt):
        (x * w).sum().backward()
    assert x.grad is None


# -- the order nodes run in --------------------------------------------------------------------------------
def _execution_order(m, root, gradient=None) -> list[str]:
    """Names of the nodes as they run (via pre-hooks on every node), leaves by their first value."""
    log, seen, stack = [], set(), [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "AccumulateGrad":
            tag = f"Acc{node.variable.reshape(-1)[0].item():g}"
        else:
            tag = node.name()
        node.register_prehook(lambda go, tag=tag: log.append(tag))
        stack.extend(n for n, _ in node.next_functions)
    root.backward(gradient)
    return log


ORDER_GRAPHS = {
    "diamond": lambda m: (lambda a, b: (lambda c: ((c + c.exp()) * a).sum())(a * b))(
        m.tensor([1.0, 2.0], requires_grad=True), m.tensor([3.0, 4.0], requires_grad=True)),
    "neuron": lambda m: (lambda x, w, b: (lambda y: (y * y).sum())((x * w + b).tanh()))(
        m.tensor([1.0], requires_grad=True), m.tensor([2.0], requires_grad=True), m.tensor([5.0], requires_grad=True)),
    "fan_out": lambda m: (lambda a: (a * 2 + a * 3 + a * 4).sum())(m.tensor([1.0, 2.0], requires_grad=True)),
    "reuse": lambda m: (lambda a, b: (lambda x: ((x * a) * b + x).sum())(a + b))(
        m.tensor([1.0, 2.0], requires_grad=True), m.tensor([1.5, 2.0], requires_grad=True)),
    "two_branches": lambda m: (lambda a, b: (lambda h, k: (h * k).sum() + h.sum() + (k * 2).sum())(a.sin(), b.cos()))(
        m.tensor([1.0, 2.0], requires_grad=True), m.tensor([1.5, 2.0], requires_grad=True)),
    "split": lambda m: (lambda a: (lambda p, q: p.sum() * q.sum())(*a.split(2)))(
        m.tensor([1.0, 2.0, 3.0], requires_grad=True)),
    "barlow": lambda m: (lambda z1, z2: -m.diagonal(((z1 - z1.mean(0)) / z1.std(0)).T @ z2 / 4).sum())(
        m.tensor([[1.0, 2.0, 0.5], [3.0, -1.0, 2.0], [0.0, 4.0, 1.0], [2.0, 2.0, -3.0]], requires_grad=True),
        m.tensor([[0.5, 1.0, 2.0], [1.0, 0.0, -1.0], [2.0, 3.0, 1.0], [-1.0, 1.0, 0.0]], requires_grad=True)),
}
GOLDEN_ORDER = {
    "diamond": ["SumBackward0", "MulBackward0", "AddBackward0", "ExpBackward0", "MulBackward0", "Acc1", "Acc3"],
    "neuron": ["SumBackward0", "MulBackward0", "TanhBackward0", "AddBackward0", "Acc5", "MulBackward0", "Acc1",
               "Acc2"],
    "fan_out": ["SumBackward0", "AddBackward0", "MulBackward0", "AddBackward0", "MulBackward0", "MulBackward0",
                "Acc1"],
    "split": ["MulBackward0", "SumBackward0", "SumBackward0", "SplitBackward0", "Acc1"],
    "barlow": ["NegBackward0", "SumBackward0", "DiagonalBackward0", "DivBackward0", "MmBackward0", "Acc0.5",
               "PermuteBackward0", "DivBackward0", "StdBackward0", "SubBackward0", "MeanBackward1", "Acc1"],
}


@pytest.mark.parametrize("name", sorted(GOLDEN_ORDER))
def test_nodes_run_in_pytorchs_order(name):
    assert _execution_order(gradviz, ORDER_GRAPHS[name](gradviz)) == GOLDEN_ORDER[name]


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(ORDER_GRAPHS))
def test_nodes_run_in_the_order_torch_runs_them(name):
    assert _execution_order(gradviz, ORDER_GRAPHS[name](gradviz)) == \
        _execution_order(real_torch, ORDER_GRAPHS[name](real_torch))


# -- the pausable backward ----------------------------------------------------------------------------------
def test_backward_steps_one_step_per_node_with_grad_readable_halfway():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    w = gradviz.tensor([3.0, 4.0], requires_grad=True)
    y = (x * w).exp().sum()
    run = backward_steps(y)
    assert isinstance(run, Backward) and x.grad is None   # nothing runs before the first next()
    steps = []
    grads_seen = []
    for step in run:
        assert isinstance(step, Step) and step.index == len(steps)
        steps.append(step)
        grads_seen.append((x.grad is not None, w.grad is not None))
    assert [s.node.op.torch_name for s in steps] == ["SumBackward0", "ExpBackward0", "MulBackward0",
                                                      "AccumulateGrad", "AccumulateGrad"]
    assert grads_seen == [(False, False)] * 3 + [(True, False), (True, True)]
    mul = steps[2]
    e = np.exp(np.array([3.0, 8.0], dtype=np.float32))
    np.testing.assert_allclose(mul.grad_outputs[0], e)
    np.testing.assert_allclose(mul.grad_inputs[0], e * [3, 4])
    np.testing.assert_allclose(mul.grad_inputs[1], e * [1, 2])
    tensor, contribution, total = steps[3].accumulated[0]
    assert tensor is x and np.array_equal(total, x.grad.numpy())
    assert repr(steps[0]) == "<Step 0: SumBackward0>"


def test_backward_steps_can_stop_halfway():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = (x * 2).sum()
    run = backward_steps(y, retain_graph=True)
    next(run)
    assert x.grad is None
    run.run()
    assert x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(StopIteration):
        next(run)


def test_run_after_some_steps_gives_one_backwards_gradients():
    """The steps run() finishes unpaused are plain VJPs; a hook on the way still fires once."""
    def loss(x, w):
        h = (x * w).tanh()
        h.register_hook(lambda g: g * 2)
        return (h * h + h).sum() + (x * 3).sum()
    x = gradviz.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w = gradviz.tensor([1.5, 0.25, -0.5], requires_grad=True)
    loss(x, w).backward()
    expected = x.grad.tolist(), w.grad.tolist()
    x.grad = w.grad = None
    run = backward_steps(loss(x, w))
    next(run), next(run)
    run.run()
    assert (x.grad.tolist(), w.grad.tolist()) == expected


def test_a_node_shared_by_several_roots_starts_once():
    x = gradviz.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    a, b = (x * 2).split(2)
    gradviz.autograd.backward([a, b, a], [gradviz.ones(2), gradviz.ones(2), gradviz.ones(2)])
    assert x.grad.tolist() == [4.0, 4.0, 2.0, 2.0]


def test_an_abandoned_step_run_keeps_what_it_wrote():
    import gc
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    w = gradviz.tensor([3.0, 4.0], requires_grad=True)
    run = backward_steps((x * w).sum())
    for step in run:
        if x.grad is not None:
            break
    del run, step
    gc.collect()
    assert x.grad.tolist() == [3.0, 4.0] and w.grad is None
    assert gradviz.is_grad_enabled()


def test_grad_mode_is_the_callers_between_steps():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    run = backward_steps((x * 2).sum())
    next(run)
    assert gradviz.is_grad_enabled()
    with gradviz.no_grad():
        next(run)
        assert not gradviz.is_grad_enabled()
    run.run()
    assert x.grad.tolist() == [2.0, 2.0]


def test_backward_steps_reduced_axes_show_unbroadcasting():
    a = gradviz.ones(3, 4, requires_grad=True)
    b = gradviz.ones(4, requires_grad=True)
    c = gradviz.ones(3, 1, requires_grad=True)
    steps = list(backward_steps(((a + b) * c).sum()))
    mul = next(s for s in steps if s.node.op.torch_name == "MulBackward0")
    add = next(s for s in steps if s.node.op.torch_name == "AddBackward0")
    assert mul.reduced_axes == ((), (1,)) and add.reduced_axes == ((), (0,))
    assert b.grad.tolist() == [3.0] * 4 and c.grad.tolist() == [[8.0]] * 3


def test_a_bias_takes_the_sum_over_the_batch_as_its_grad():
    """A gradient summed over leading axes only is a fresh array .grad takes, not a view it copies;
    its bits are the sum's with the axes kept."""
    g = np.random.default_rng(0).standard_normal((5, 3, 4)).astype(np.float32)
    b = gradviz.zeros(4, requires_grad=True)
    row = gradviz.zeros(1, 4, requires_grad=True)
    steps = list(backward_steps(gradviz.zeros(5, 3, 4) + b + row, gradviz.tensor(g)))
    ((_, contribution, total),) = next(s.accumulated for s in steps if s.accumulated and s.accumulated[0][0] is b)
    assert total is contribution and total.base is None
    assert b.grad._data.tobytes() == g.sum(axis=(0, 1), keepdims=True).reshape(4).tobytes()
    assert row.grad._data.tobytes() == g.sum(axis=(0, 1), keepdims=True).reshape(1, 4).tobytes()


def test_a_chain_of_100000_ops_backpropagates():
    x = gradviz.tensor([1.0], requires_grad=True)
    y = x
    for i in range(100_000):
        y = y * 1.0 if i % 2 else y + 0.0
    assert sys.getrecursionlimit() < 100_000
    steps = sum(1 for _ in backward_steps(y))        # what y.backward() runs, counted
    assert steps == 100_001                          # 100,000 VJPs and one AccumulateGrad
    assert x.grad.tolist() == [1.0]


def test_zero_dim_seed_is_an_array():
    x = gradviz.tensor(2.0, requires_grad=True)
    (step,) = list(backward_steps(x * 1))[:1]
    assert isinstance(step.grad_outputs[0], np.ndarray) and step.grad_outputs[0].shape == ()


def test_closing_a_paused_backward_leaves_the_callers_grad_mode_alone():
    x = gradviz.ones(3, requires_grad=True)
    run = gradviz.autograd.backward_steps((x * 2).exp().sum())
    next(run)
    with gradviz.no_grad():
        run._iter.close()          # abandoned halfway, inside the caller's no_grad
        assert not gradviz.is_grad_enabled()
    assert gradviz.is_grad_enabled()
    assert x.grad is None          # the first step (SumBackward0) wrote no leaf
