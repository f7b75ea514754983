"""Higher order, animated: a create_graph gradient's own graph stepped and drawn apart, and a
Hessian-vector product (forward over reverse) animated end to end."""
from __future__ import annotations

import html

import numpy as np

import gradviz
from gradviz.player.orders import box_title
from tests.support.parity import needs_torch, real_torch


def _torch_names(t) -> set:
    seen, stack, names = set(), [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.add(type(node).__name__)
        stack.extend(n for n, _ in node.next_functions)
    return names


def double_backward(lib):
    x = lib.tensor([0.5, -1.0], requires_grad=True)
    y = x.sin().tanh().sum()
    (g,) = lib.autograd.grad(y, x, create_graph=True)
    return x, g.sum()


@needs_torch
def test_animate_steps_the_double_backward_with_torchs_node_names():
    x, gg = double_backward(gradviz)
    anim = gradviz.animate(gg)
    ops = {n.name: n for n in anim.trace.nodes if n.kind == "op"}
    assert set(ops) | {"AccumulateGrad"} == _torch_names(double_backward(real_torch)[1])
    # the gradient's own graph is order 1 and boxed apart; the forward graph it reads stays order 0
    order_1 = {name for name, n in ops.items() if n.order == 1}
    assert order_1 == {"TanhBackwardBackward0", "CosBackward0", "MulBackward0"}
    assert all(n.scope[:1] == (box_title(1),) for n in ops.values() if n.order == 1)
    assert all(n.scope == () for n in ops.values() if n.order == 0)
    assert html.escape(box_title(1)) in anim.svg.replace("&#39;", "&#x27;")   # the box is drawn, titled
    # its edges link into the forward graph: TanhBackwardBackward0 reads TanhBackward0's output
    by_id = {n.id: n for n in anim.trace.nodes}
    links = {(by_id[e.src].name, by_id[e.dst].name) for e in anim.trace.edges}
    assert ("TanhBackward0", "TanhBackwardBackward0") in links
    # every node runs once in the double backward, and the recorded .grad is torch's second derivative
    ran = [by_id[s.node].name for s in anim.steps]
    assert sorted(ran) == sorted([*ops, "AccumulateGrad"])
    tx, tgg = double_backward(real_torch)
    tgg.backward()
    written = [a.total for s in anim.steps for a in s.accumulations]
    np.testing.assert_allclose(written[-1].values, tx.grad.numpy(), rtol=1e-6)
    assert x.grad is None   # recording changed nothing


def test_nodes_made_between_steps_are_forward_nodes():
    x = gradviz.tensor([0.5, -1.0], requires_grad=True)
    y = x.exp().sum()
    run = gradviz.autograd.engine.backward_steps((y,), None, create_graph=True)
    next(run)
    between = x * 2              # user code while the stepper is paused: an ordinary forward node
    run.run()
    assert between.grad_fn.order == 0 and y.grad_fn.order == 0
    assert x.grad.grad_fn.order == 1
    z = gradviz.tensor([0.5, -1.0], requires_grad=True)
    (g,) = gradviz.autograd.grad(z.tanh().sum(), z, create_graph=True)
    (h,) = gradviz.autograd.grad(g.sum(), z, create_graph=True)
    # a node is one order above the node whose VJP made it (the Recorder's rule), so differentiating the
    # order-1 graph again builds order-2 nodes
    orders, stack, seen = set(), [h.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            orders.add(node.order)
            stack.extend(n for n, _ in node.next_functions)
    assert orders == {0, 1, 2}


@needs_torch
def test_animate_hvp_end_to_end():
    torch = real_torch

    def f(x):
        h = x.sin().tanh()
        return h.sum()

    x, v = [0.5, -1.0, 0.3], [1.0, 0.0, -2.0]
    anim = gradviz.animate_hvp(f, gradviz.tensor(x, dtype=gradviz.float64), gradviz.tensor(v, dtype=gradviz.float64))
    want = torch.autograd.functional.hvp(lambda t: t.sin().tanh().sum(), torch.tensor(x, dtype=torch.float64),
                                         torch.tensor(v, dtype=torch.float64))
    for got, exp in zip(anim.result, want):
        assert str(got.dtype) == str(exp.dtype) and tuple(got.shape) == tuple(exp.shape)
        np.testing.assert_allclose(got.numpy(), exp.numpy(), rtol=1e-12)
    names = [anim.trace.node(s.node).name for s in anim.trace.tangents]
    assert names[:3] == ["sin", "tanh", "sum"]                       # forward through f
    gradient_ops = [n for n in anim.trace.nodes if n.kind == "op" and n.order == 1]
    assert {n.name for n in gradient_ops} == {"tanh_backward", "cos", "mul"}   # then through its gradient
    assert all(n.scope == (box_title(1),) for n in gradient_ops)
    # the tangent the last op sends is H v, drawn on the edge to the gradient `grad`
    grad = next(n for n in anim.trace.nodes if n.kind == "output" and n.name == "grad")
    last = anim.trace.tangents[-1]
    assert any(e.src == last.node and e.dst == grad.id for e in anim.trace.edges)
    np.testing.assert_allclose(last.tangents_out[0].values, want[1].numpy(), rtol=1e-12)
    assert "ġrad" in anim.frames[-1].caption


def test_the_panel_says_which_pass_built_each_node():
    """A node of order 1 was built by the first backward (create_graph=True), not by the forward pass;
    an order-0 node keeps the forward's words, in the panel and in the caption."""
    x = gradviz.tensor([0.5, -1.0], requires_grad=True)
    (g,) = gradviz.autograd.grad(x.sin().tanh().sum(), x, create_graph=True)
    anim = gradviz.animate(g.sum())
    orders = {n.name: n.order for n in anim.trace.nodes if n.kind == "op"}
    built = {f.title.split(" · ")[1]: f for f in anim.frames if f.phase == "forward"}
    assert orders["TanhBackwardBackward0"] == 1 and orders["SinBackward0"] == 0
    # the title says which pass made the node; k/n counts the steps of that pass
    passes = ["forward" if orders[name] == 0 else "first backward (create_graph)" for name in built]
    assert [f.title.split(" · ")[0] for f in built.values()] == [
        f"{p} {passes[:k].count(p) + 1}/{passes.count(p)}" for k, p in enumerate(passes)]
    assert passes.count("forward") >= 2 and passes.count("first backward (create_graph)") >= 2
    first = built["TanhBackwardBackward0"]
    assert '<p class="gv-say">The first backward (create_graph=True) computes <math' in first.text
    assert "The forward pass" not in first.text
    assert first.caption.startswith("built by the first backward (create_graph=True): TanhBackwardBackward0  t₃ = ")
    forward = built["SinBackward0"]
    assert '<p class="gv-say">The forward pass computes <math' in forward.text
    assert forward.caption == "forward: SinBackward0  t₁ = sin x = [0.4794, -0.8415]"
