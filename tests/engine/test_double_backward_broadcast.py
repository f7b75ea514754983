"""A gradient taken with create_graph through a broadcast records torch's nodes for undoing it
(at::sum_to): a full sum to a 0-d input (SumBackward0), a sum keeping its axes (SumBackward1), and
a view only where leading axes go (ViewBackward0); the whole graph below is torch's, and so are
the second derivatives."""
import numpy as np
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

pytestmark = needs_torch

SHAPES = [((), (2, 3)), ((3,), (2, 3)), ((1, 1), (2, 3)), ((1, 3), (2, 3)), ((2, 1), (2, 3)),
          ((2, 1, 3), (4, 2, 5, 3)), ((5, 1), (5, 4))]
PROGRAMS = {
    "mul": lambda t, a, b: (a * b).sum(),
    "expand": lambda t, a, b: (a.expand(*t.broadcast_shapes(a.shape, b.shape)) * b).sum(),
    "add squared": lambda t, a, b: ((a + b) ** 2).sum(),
    "sub squared": lambda t, a, b: ((b - a) ** 2).sum(),
    "div": lambda t, a, b: (b / a.exp()).sum(),
    "where": lambda t, a, b: t.where(b > 0, a * b, b).sum(),
}


def graph(fn, seen=None) -> list:
    """Every node's name below fn, depth first, each node once."""
    seen = set() if seen is None else seen
    if fn is None or id(fn) in seen:
        return []
    seen.add(id(fn))
    return [fn.name()] + [graph(f, seen) for f, _ in fn.next_functions]


def run(t, shapes, program):
    t.manual_seed(0)
    a = t.randn(shapes[0], dtype=t.float64, requires_grad=True)
    b = t.randn(shapes[1], dtype=t.float64, requires_grad=True)
    g, = t.autograd.grad(PROGRAMS[program](t, a, b), a, create_graph=True)
    second = t.autograd.grad((g * g).sum(), (a, b), allow_unused=True)
    return graph(g.grad_fn), tuple(g.shape), [None if s is None else s.detach().numpy() for s in second]


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_create_graph_through_a_broadcast_records_torchs_nodes(shapes, program):
    ours, theirs = run(gradviz, shapes, program), run(real_torch, shapes, program)
    assert ours[:2] == theirs[:2]
    for mine, torchs in zip(ours[2], theirs[2]):
        assert (mine is None) == (torchs is None)
        if mine is not None:
            np.testing.assert_allclose(mine, torchs, rtol=1e-12, atol=1e-14)
