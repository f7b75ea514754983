"""The fused backward loop (fast_paths.run_straight) against the readable one (Backward._run):
random graphs through both, every gradient compared bit for bit, the nodes run in one order."""
from collections import deque

import numpy as np
import pytest

import gradviz
from gradviz import events
from gradviz.autograd import engine

SEEDS = range(40)
SHAPES = ((3, 4), (1, 4), (4,), (3, 1))   # all broadcast together to (3, 4)


def _build(seed: int, hooked: bool = False):
    """A random graph: fan-out, broadcasting, mixed dtypes, a multi-output node with unused
    outputs, a leaf nobody uses. Returns (loss, leaves, a retained intermediate)."""
    rng = np.random.default_rng(seed)
    leaves = [gradviz.tensor(rng.uniform(0.5, 1.5, SHAPES[i % 4]),
                             dtype=gradviz.float32 if rng.random() < 0.3 else gradviz.float64, requires_grad=True)
              for i in range(5)]
    unused = gradviz.tensor(rng.uniform(size=(3, 4)), requires_grad=True)
    pool = list(leaves[:4]) + [gradviz.tensor(rng.uniform(0.5, 1.5, (3, 4)))]   # leaves[4] joins later
    kept = None
    for i in range(int(rng.integers(6, 25))):
        a, b = (pool[j] for j in rng.integers(0, len(pool), 2))
        kind = rng.integers(0, 7)
        if kind == 0:
            y = a + b
        elif kind == 1:
            y = a * b
        elif kind == 2:
            y = a - b / (b * b + 1)
        elif kind == 3:
            y = a.tanh() + b.sin()
        elif kind == 4:   # a multi-output node, some outputs never used
            whole = (a + b).expand(3, 4)
            parts = whole.unbind(0)
            y = parts[int(rng.integers(0, 3))] * parts[0]
        elif kind == 5:
            y = (a * b).sum(0, keepdim=True)
        else:
            y = a * leaves[4]
        if hooked and kept is None and y.grad_fn is not None:
            y.retain_grad()
            y.register_hook(lambda g: g * 2)
            kept = y
        pool.append(y)
    outs = [t for t in pool[-3:] if t.requires_grad] or [leaves[0] * 1]
    loss = sum(t.sum() for t in outs)
    return loss, leaves + [unused], kept


def _readable_run(self):
    """Backward.run as the readable loop alone drives it."""
    self._straight = True
    deque(self._iter, maxlen=0)
    return self


def _through(monkeypatch, readable: bool, program):
    """Run `program` with one loop; returns what it returns and the nodes run, in order."""
    order = []
    vjp, leaf = engine.node_vjp, engine.Backward._accumulate_leaf

    def recorded_vjp(node, g, create_graph=False):
        order.append(node.id)
        return vjp(node, g, create_graph)

    def recorded_leaf(self, node, g, step):
        order.append(node.id)
        return leaf(self, node, g, step)

    with monkeypatch.context() as m:
        m.setattr(engine, "node_vjp", recorded_vjp)
        m.setattr(engine.Backward, "_accumulate_leaf", recorded_leaf)
        if readable:
            m.setattr(engine.Backward, "run", _readable_run)
        result = program()
    ranks = {node_id: rank for rank, node_id in enumerate(sorted(set(order)))}   # ids differ, ranks do not
    return result, [ranks[i] for i in order]


def _bits(t):
    if t is None:
        return None
    data = t._data if hasattr(t, "_data") else t
    return (data.dtype.str, data.shape, np.ascontiguousarray(data).tobytes())


def _grads(tensors):
    return [_bits(t.grad) for t in tensors]


def _both(monkeypatch, program):
    """`program` through the fused loop and through the readable one: the same result, same order."""
    fused = _through(monkeypatch, False, program)
    readable = _through(monkeypatch, True, program)
    assert fused[0] == readable[0]
    assert fused[1] == readable[1]
    assert fused[1], "no node ran"
    return fused[0]


def test_a_plain_backward_runs_the_fused_loop(monkeypatch):
    calls = []
    original = engine.run_straight
    monkeypatch.setattr(engine, "run_straight", lambda *a: calls.append(1) or original(*a))
    loss, leaves, _ = _build(0)
    loss.backward()
    assert calls == [1]
    assert leaves[0].grad is not None


def test_a_listener_or_anomaly_mode_runs_the_readable_loop(monkeypatch):
    monkeypatch.setattr(engine, "run_straight", lambda *a: pytest.fail("the fused loop ran"))
    loss, _, _ = _build(1)
    with events.listen(lambda event: None):
        loss.backward(retain_graph=True)
    with gradviz.autograd.set_detect_anomaly(True):
        loss.backward()


@pytest.mark.parametrize("seed", SEEDS)
def test_backward(monkeypatch, seed):
    def program():
        loss, leaves, _ = _build(seed)
        loss.backward()
        return _grads(leaves)
    _both(monkeypatch, program)


@pytest.mark.parametrize("seed", SEEDS)
def test_retain_graph_accumulates_twice(monkeypatch, seed):
    def program():
        loss, leaves, _ = _build(seed)
        loss.backward(retain_graph=True)
        loss.backward()
        return _grads(leaves)
    _both(monkeypatch, program)


@pytest.mark.parametrize("seed", SEEDS[:15])
def test_create_graph_and_double_backward(monkeypatch, seed):
    def program():
        loss, leaves, _ = _build(seed)
        firsts = gradviz.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
        total = sum(g.sum() for g in firsts if g is not None and g.requires_grad)
        seconds = gradviz.autograd.grad(total, leaves, allow_unused=True) if isinstance(total, gradviz.Tensor) \
            else ()
        loss2, leaves2, _ = _build(seed)
        loss2.backward(create_graph=True)
        return [_bits(g) for g in firsts + seconds] + _grads(leaves2)
    _both(monkeypatch, program)


@pytest.mark.parametrize("seed", SEEDS[:20])
def test_inputs_and_unused_inputs(monkeypatch, seed):
    def program():
        loss, leaves, kept = _build(seed, hooked=True)
        chosen = [leaves[0], leaves[4], leaves[5]] + ([kept] if kept is not None else [])
        loss.backward(inputs=chosen, retain_graph=True)
        asked = gradviz.autograd.grad(loss, leaves[1:4] + leaves[5:], allow_unused=True)
        return _grads(leaves) + [_bits(g) for g in asked] + ([_bits(kept.grad)] if kept is not None else [])
    _both(monkeypatch, program)


@pytest.mark.parametrize("seed", SEEDS[:20])
def test_hooks_and_retained_gradients(monkeypatch, seed):
    def program():
        loss, leaves, kept = _build(seed, hooked=True)
        seen = []
        leaves[0].register_post_accumulate_grad_hook(lambda t: seen.append(_bits(t.grad)))
        loss.backward()
        return _grads(leaves) + seen + ([_bits(kept.grad)] if kept is not None else [])
    _both(monkeypatch, program)


@pytest.mark.parametrize("seed", SEEDS[:20])
def test_an_error_midway_rolls_back(monkeypatch, seed):
    """A saved tensor changed in place after the forward: backward fails after some .grad was
    written, and every .grad is as it was before."""
    def program():
        loss, leaves, _ = _build(seed)
        leaves[0].grad = gradviz.ones_like(leaves[0])
        early = leaves[1] * 3
        deep = early * early                     # saves `early`
        with gradviz.no_grad():
            early.add_(1)                        # ...which then changes
        total = loss + deep.sum() + (leaves[2] * 5).sum()   # leaves[2]'s .grad is written first
        before = _grads(leaves)
        with pytest.raises(RuntimeError) as error:
            total.backward()
        assert _grads(leaves) == before
        return before, str(error.value)
    _both(monkeypatch, program)
