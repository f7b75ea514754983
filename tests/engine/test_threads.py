"""Threads: backward passes running at once in several threads into one shared leaf never
lose a contribution (accumulation into .grad is atomic, as PyTorch's AccumulateGrad)."""
import sys
import threading

import numpy as np
import pytest

import gradviz as torch

THREADS, STEPS = 4, 150


@pytest.fixture
def switch_often():
    """Let the interpreter switch threads as often as it can, so any race shows."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _run_threads(work) -> list:
    start = threading.Barrier(THREADS)
    errors = []

    def body():
        start.wait()
        try:
            for _ in range(STEPS):
                work()
        except BaseException as exc:   # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=body) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


def test_concurrent_backward_into_a_shared_leaf_loses_no_update(switch_often):
    w = torch.ones(3, requires_grad=True)

    def work():
        (w * torch.tensor([1.0, 2.0, 3.0])).sum().backward()

    assert _run_threads(work) == []
    assert w.grad.tolist() == [THREADS * STEPS * v for v in (1.0, 2.0, 3.0)]


def test_concurrent_first_writes_into_fresh_leaves(switch_often):
    # the first contribution creates .grad: two threads that both saw None must not both set it
    leaves = [torch.zeros(2, requires_grad=True) for _ in range(STEPS)]
    start = threading.Barrier(THREADS)
    errors = []

    def body():
        try:
            for leaf in leaves:
                start.wait()
                (leaf + 1).sum().backward()
        except BaseException as exc:   # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=body) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert [leaf.grad.tolist() for leaf in leaves] == [[float(THREADS)] * 2] * STEPS


def test_concurrent_graphs_sharing_a_subgraph(switch_often):
    # each thread builds its own graph on top of shared leaves, through views and in-place ops
    w = torch.ones(2, 3, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(3, dtype=torch.float64, requires_grad=True)

    def work():
        y = w * 2
        y[0].mul_(3)
        (y.sum(0) + b).sum().backward()

    assert _run_threads(work) == []
    n = THREADS * STEPS
    np.testing.assert_array_equal(w.grad.numpy(), [[6.0 * n] * 3, [2.0 * n] * 3])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0 * n] * 3)


def test_grad_mode_is_per_thread():
    seen = {}

    def other():
        x = torch.ones(2, requires_grad=True)
        seen["other"] = (x * 2).requires_grad

    with torch.no_grad():
        t = threading.Thread(target=other)
        t.start()
        t.join()
        seen["here"] = (torch.ones(2, requires_grad=True) * 2).requires_grad
    assert seen == {"other": True, "here": False}
