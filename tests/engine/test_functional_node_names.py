"""autograd.functional's results carry torch 2.13's nodes: jacobian and hessian with create_graph
stack the gradient rows (StackBackward0) and view the stack (ViewBackward0), and vjp, jvp, hvp
and vhp return the function's outputs with their own grad_fn, never an alias of them."""
from __future__ import annotations

import itertools

import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch


def chain(fn, depth):
    """grad_fn names `depth` levels down."""
    if fn is None or depth == 0:
        return fn.name() if fn is not None else None
    return [fn.name()] + [chain(f, depth - 1) for f, _ in fn.next_functions]


def names(result, depth):
    if isinstance(result, tuple):
        return tuple(names(r, depth) for r in result)
    return chain(result.grad_fn, depth)


FUNCTIONS = {
    "sum over a dim": lambda t, x: (x ** 2).sum(dim=0),
    "matrix product": lambda t, x: (x @ x.T).sum(),
    "sin": lambda t, x: t.sin(x).sum(),
    "tanh layer": lambda t, x: t.tanh(x @ t.ones(3, 2, dtype=t.float64)),
    "two inputs": lambda t, x: (x * x.exp(), x.sum()),
}


def jacobian_names(lib, name, requires_grad, create_graph, vectorize, hessian):
    lib.manual_seed(0)
    x = lib.randn(2, 3, dtype=lib.float64, requires_grad=requires_grad)
    f = FUNCTIONS[name]
    functional = lib.autograd.functional
    if hessian:
        result = functional.hessian(lambda x: f(lib, x) if name in ("matrix product", "sin") else f(lib, x).sum(), x,
                                    create_graph=create_graph, vectorize=vectorize)
    else:
        result = functional.jacobian(lambda x: f(lib, x), x, create_graph=create_graph, vectorize=vectorize)
    # vectorized, torch batches the rows with vmap (SplitWithSizesBackward0 under the view); the
    # row-by-row graph gradviz records there is compared at the top only
    return names(result, 0 if vectorize else 3)


CASES = [c for c in itertools.product(FUNCTIONS, (False, True), (False, True), (False, True), (False, True))
         if not ((c[3] or c[4]) and c[0] == "two inputs")]   # vectorized, torch's vmap gives even a constant
                                                                 # block (d x.sum() / dx) a graph


@needs_torch
@pytest.mark.parametrize("name, requires_grad, create_graph, vectorize, hessian", CASES)
def test_jacobian_and_hessian_nodes_are_torchs(name, requires_grad, create_graph, vectorize, hessian):
    args = (name, requires_grad, create_graph, vectorize, hessian)
    assert jacobian_names(gradviz, *args) == jacobian_names(real_torch, *args)


def products(lib, create_graph):
    functional = lib.autograd.functional
    x = lib.linspace(-1, 1, 3, dtype=lib.float64)
    y = lib.linspace(0.5, 2, 3, dtype=lib.float64)
    v = lib.ones(3, dtype=lib.float64)
    cube = lambda x: (x ** 3).sum()  # noqa: E731
    return {
        "vjp": names(functional.vjp(lambda x: x.exp() * 2, x, v, create_graph=create_graph), 2),
        "vjp of two inputs": names(functional.vjp(lambda x, y: (x * y).sum(), (x, y), None,
                                                  create_graph=create_graph), 2),
        "jvp": names(functional.jvp(lambda x: x.exp() * 2, x, v, create_graph=create_graph), 1),
        "hvp": names(functional.hvp(cube, x, v, create_graph=create_graph), 0),
        "vhp": names(functional.vhp(cube, x, v, create_graph=create_graph), 2),
    }


@needs_torch
@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_jvp_hvp_vhp_nodes_are_torchs(create_graph):
    assert products(gradviz, create_graph) == products(real_torch, create_graph)


def test_jvp_returns_the_functions_own_output():
    x = gradviz.ones(3, dtype=gradviz.float64)
    out, tangent = gradviz.autograd.functional.jvp(lambda x: x.exp() * 2, x, gradviz.ones(3, dtype=gradviz.float64),
                                                   create_graph=True)
    assert out.grad_fn.name() == "MulBackward0"
    assert gradviz.allclose(tangent, out)


CUSTOM_TWICE = """
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x
    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g
x = torch.tensor([1.0, 2.0], requires_grad=True)
y = Square.apply(Square.apply(x)).sum()
gx, = torch.autograd.grad(y, x, create_graph=True)
out = gx.sum()
"""


def custom_function_graph(lib):
    namespace = {"torch": lib}
    exec(CUSTOM_TWICE, namespace)
    return chain(namespace["out"].grad_fn, 6), chain(namespace["y"].grad_fn, 6)


@needs_torch
def test_a_custom_backward_records_python_arithmetic():
    """`2 * x` in a custom Function's backward is Python arithmetic (MulBackward0 over a wrapped
    number), not one of torch's C++ formulas (MulBackward1): the double-backward graph is torch's."""
    assert custom_function_graph(gradviz) == custom_function_graph(real_torch)
