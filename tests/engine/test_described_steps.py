"""The one backward loop has two ways through a step: a plain node goes straight to its VJP, any
other (hooks, a captured gradient, a leaf, or a step someone watches) through Backward._step. On
random graphs, a plain backward() and the same backward stepped with a listener give the same
gradients bit for bit and run the nodes in the same order."""
import numpy as np
import pytest

import gradviz
from gradviz import events
from gradviz.autograd import engine

SEEDS = range(30)
SHAPES = ((3, 4), (1, 4), (4,), (3, 1))   # all broadcast together to (3, 4)


def _build(seed: int):
    """A random graph: fan-out, broadcasting, mixed dtypes, a multi-output node with unused
    outputs, a leaf nobody uses. Returns (loss, leaves)."""
    rng = np.random.default_rng(seed)
    leaves = [gradviz.tensor(rng.uniform(0.5, 1.5, SHAPES[i % 4]),
                             dtype=gradviz.float32 if rng.random() < 0.3 else gradviz.float64, requires_grad=True)
              for i in range(5)]
    unused = gradviz.tensor(rng.uniform(size=(3, 4)), requires_grad=True)
    pool = list(leaves[:4]) + [gradviz.tensor(rng.uniform(0.5, 1.5, (3, 4)))]
    for _ in range(int(rng.integers(6, 25))):
        a, b = (pool[j] for j in rng.integers(0, len(pool), 2))
        kind = rng.integers(0, 6)
        if kind == 0:
            y = a * b + a
        elif kind == 1:
            y = a - b / (b * b + 1)
        elif kind == 2:
            y = a.tanh() + b.sin()
        elif kind == 3:   # a multi-output node, some outputs never used
            parts = (a + b).expand(3, 4).unbind(0)
            y = parts[int(rng.integers(0, 3))] * parts[0]
        elif kind == 4:
            y = (a * b).sum(0, keepdim=True)
        else:
            y = a * leaves[4]
        pool.append(y)
    outs = [t for t in pool[-3:] if t.requires_grad] or [leaves[0] * 1]
    return sum(t.sum() for t in outs), leaves + [unused]


def _run(monkeypatch, seed: int, described: bool):
    """The gradients (dtype, shape, bytes) and the order the nodes ran in (as ranks of their ids)."""
    order = []
    vjp, leaf = engine.node_vjp, engine.Backward._accumulate_leaf
    monkeypatch.setattr(engine, "node_vjp", lambda node, g, create_graph=False: order.append(node.id) or
                        vjp(node, g, create_graph))
    monkeypatch.setattr(engine.Backward, "_accumulate_leaf", lambda self, node, g, step: order.append(node.id) or
                        leaf(self, node, g, step))
    loss, leaves = _build(seed)
    if described:
        heard = []
        with events.listen(heard.append):
            steps = list(engine.backward_steps(loss))
        assert [e.step for e in heard if type(e) is events.NodeExecuted] == steps
    else:
        loss.backward()
    ranks = {node_id: rank for rank, node_id in enumerate(sorted(set(order)))}
    grads = [None if t.grad is None else (t.grad.dtype, tuple(t.grad.shape), t.grad.numpy().tobytes())
             for t in leaves]
    return grads, [ranks[i] for i in order]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_plain_and_a_described_backward_agree(monkeypatch, seed):
    plain = _run(monkeypatch, seed, described=False)
    described = _run(monkeypatch, seed, described=True)
    assert plain[1], "no node ran"
    assert plain == described
