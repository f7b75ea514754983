"""Memory as PyTorch keeps it: after a backward without retain_graph a node holds no tensor
and no activation, only shapes and dtypes, so keeping `loss` (or a list of losses) alive
keeps no activations alive; a tensor's in-place bookkeeping is one counter, however many
times it is written."""
import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import gradviz as torch
import gradviz.nn.functional as F


def _mlp(seed=0, batch=64, width=128):
    rng = np.random.default_rng(seed)
    params = [torch.tensor(rng.standard_normal((width, width)) * 0.05, dtype=torch.float32, requires_grad=True),
              torch.zeros(width, requires_grad=True),
              torch.tensor(rng.standard_normal((width, 10)) * 0.05, dtype=torch.float32, requires_grad=True),
              torch.zeros(10, requires_grad=True)]
    x = torch.tensor(rng.standard_normal((batch, width)), dtype=torch.float32)
    y = torch.tensor(rng.integers(0, 10, batch))

    def step():
        w1, b1, w2, b2 = params
        h = (x @ w1 + b1).relu()
        loss = F.cross_entropy(h @ w2 + b2, y)
        loss.backward()
        with torch.no_grad():
            for p in params:
                p -= 0.01 * p.grad
                p.grad = None
        return loss
    return step


def _growth(run, steps: int, warmup: int = 20) -> int:
    """Bytes still allocated after `steps` calls of run() (after a warm-up), as tracemalloc counts."""
    for _ in range(warmup):
        run()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(steps):
            run()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_activations_are_freed_with_the_root_alive():
    x = torch.randn(32, 16)
    w = torch.randn(16, 16, requires_grad=True)
    h = (x @ w).tanh()
    e = h.exp()
    refs = [weakref.ref(t) for t in (h, e)] + [weakref.ref(t._data) for t in (h, e)]
    loss = (h * e).sum()
    del h, e
    assert all(r() is not None for r in refs)        # the graph keeps what its VJPs need
    loss.backward()
    assert all(r() is None for r in refs)            # and after backward nothing: loss is still alive
    assert loss.grad_fn is not None and w.grad is not None


def test_freed_nodes_keep_only_shapes_and_can_rerun_if_they_saved_nothing():
    a = torch.ones(3, 4, requires_grad=True)
    b = torch.ones(4, requires_grad=True)
    s = (a * 1 + b * 1).sum()
    s.backward()
    node = s.grad_fn.next_functions[0][0]            # AddBackward0 saved nothing: it may run again
    assert node.name() == "AddBackward0"
    assert all(t._data.strides == (0,) * t.ndim for t in node.inputs)   # ghosts, no values
    assert node.next_functions[0][0].inputs[0] is a  # a leaf that requires grad is alive anyway
    assert node.next_functions[0][0].name() == "MulBackward0"
    (a + b).sum().backward()
    assert a.grad.tolist() == [[2.0] * 4] * 3 and b.grad.tolist() == [6.0] * 4
    y = a * b
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.sum().backward()


def _held_bytes(root) -> int:
    """Bytes of array data that the graph below `root` holds (ghosts hold none)."""
    total, seen, stack = 0, set(), [root.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        arrays = [t._data for t in node.inputs if not t._requires_grad]   # parameters are alive anyway
        arrays += [p for p in node.params if isinstance(p, np.ndarray)]
        out = node.out_data
        arrays += [] if out is None else list(out) if isinstance(out, tuple) else [out]
        total += sum(a.nbytes for a in arrays if 0 not in a.strides or a.size <= 1)
        stack.extend(n for n, _ in node.next_functions)
    return total


def test_keeping_every_loss_keeps_memory_flat():
    # before: every kept loss held its whole graph's activations (~160 KB a step here)
    step = _mlp(batch=256, width=32)
    losses = []
    growth = _growth(lambda: losses.append(step()), 200)
    assert growth < 200 * 8 * 2 ** 10, f"{growth / 200 / 2 ** 10:.1f} KiB a step for kept losses"
    for _ in range(1000 - len(losses)):
        losses.append(step())
    held = [_held_bytes(loss) for loss in losses]
    assert max(held) <= 2048, f"a kept loss's graph holds {max(held)} bytes of arrays"   # the targets, as torch


def test_a_long_sgd_loop_does_not_grow():
    # every parameter is written in place once a step: its version counter is one int
    target = torch.tensor([0.5, -1.0, 2.0, 0.25])
    w = torch.zeros(4, requires_grad=True)

    def step():
        ((w - target) ** 2).sum().backward()
        with torch.no_grad():
            w.sub_(0.01 * w.grad)
        w.grad = None

    growth = _growth(step, 3000, warmup=100)
    assert growth < 64 * 2 ** 10, f"{growth / 2 ** 10:.1f} KiB over 3,000 steps"
    assert w._version == 3100 and np.allclose(w.detach().numpy(), target.numpy(), atol=1e-4)


def test_version_counter_is_bounded():
    t = torch.zeros(3)
    view = t[1:]
    for _ in range(3000):
        t.add_(1)
    assert t._version == view._version == 3000
    assert t._vc is view._vc and vars(type(t._vc)).get("__slots__") == ("version",)
