"""x[key] = value as PyTorch 2.13 reads it: the value's leading 1-dims dropped (a ViewBackward0 in
the graph), then expanded to the indexed region, for every form of key, with PyTorch's errors
and nothing written when one is raised."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

KEYS = {
    "int": 1, "negative int": -1, "slice": slice(1, 3), "step slice": slice(None, None, 2), "ellipsis": ...,
    "None": None, "int, slice": (1, slice(None)), "list": [0, 2], "index tensor": "index",
    "mask": "mask", "row mask": "row mask", "ellipsis, int": (..., 1), "None, int": (None, 1),
    "list, list": ([0, 1], [1, 2]), "slice, list": (slice(None), [0, 2]), "int, None, slice": (0, None, slice(0, 2)),
    "0-d index tensor": "0-d", "True": True, "False": False, "()": (), "False, int": (False, 1),
    "True, list": (True, [0, 1]), "empty slice": slice(0, 0),
}
VALUE_SHAPES = [(), (1,), (4,), (1, 4), (1, 1, 4), (2, 1), (2, 4), (1, 2, 4), (3, 4), (1, 3, 4), (2, 2, 4), (2,),
                (1, 2), (3,), (3, 1), (0,), (1, 0, 4)]


def key_for(lib, name):
    key = KEYS[name]
    tensors = {"index": lambda: lib.tensor([2, 0]), "0-d": lambda: lib.tensor(1),
               "mask": lambda: lib.tensor([[True, False, True, False]] * 3),
               "row mask": lambda: lib.tensor([True, False, True])}
    return tensors[key]() if isinstance(key, str) else key


def chain(fn, depth=3):
    """grad_fn names three levels down: what a graph drawing of the assignment shows."""
    if fn is None or depth == 0:
        return fn.name() if fn is not None else None
    return [fn.name()] + [chain(f, depth - 1) for f, _ in fn.next_functions]


def assign(lib, name, shape, graph):
    """What x[key] = value does: the values written, the gradients, the graph, or the error and
    whether x was left untouched."""
    base = lib.zeros(3, 4, requires_grad=True)
    x = base * 1 if graph else lib.zeros(3, 4)
    value = lib.arange(1.0, 1.0 + float(np.prod(shape))).reshape(shape)
    if graph:
        value = value.requires_grad_(True) * 1
    before = x.detach().clone()
    try:
        x[key_for(lib, name)] = value
    except Exception as exc:  # noqa: BLE001  (the error is part of the answer)
        return type(exc).__name__, str(exc).splitlines()[0], bool(lib.equal(x.detach(), before))
    if not graph:
        return x.tolist()
    x.sum().backward()
    return x.tolist(), base.grad.tolist(), chain(x.grad_fn)


CASES = list(itertools.product(KEYS, VALUE_SHAPES, (False, True)))


@needs_torch
@pytest.mark.parametrize("name, shape, graph", CASES, ids=[f"{k}-{s}-{'graph' if g else 'plain'}" for k, s, g in CASES])
def test_setitem_as_torch(name, shape, graph):
    assert assign(gradviz, name, shape, graph) == assign(real_torch, name, shape, graph)


def test_a_row_takes_a_value_with_a_leading_one():
    """The character-level model's `logits[i] = model(x)`: a (1, 27) value into a (27,) row."""
    weights = gradviz.randn(27, 27, requires_grad=True)
    logits = gradviz.zeros(3, 27)
    for i in range(3):
        logits[i] = gradviz.ones(1, 27) @ weights
    loss = logits.sum()
    loss.backward()
    assert logits.grad_fn.name() == "torch::autograd::CopySlices"
    assert [f.name() for f, _ in logits.grad_fn.next_functions][1] == "ViewBackward0"
    assert np.allclose(weights.grad.numpy(), 3.0)


def test_a_failed_assignment_writes_nothing():
    x = gradviz.zeros(3, 4)
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3, 4\] cannot be broadcast "
                                           r"to indexing result of shape \[2, 4\]"):
        x[[0, 2]] = gradviz.ones(1, 3, 4)
    assert x.eq(0).all()
