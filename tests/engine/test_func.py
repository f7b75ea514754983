"""Functional transforms: torch.autograd.functional (vjp, jvp, jacobian, hessian, vhp, hvp)
and torch.func (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap,
functional_call), against finite differences and against PyTorch's values, structures
and messages."""
import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch

import gradviz as torch
from gradviz import func as F
from gradviz.autograd import functional as AF

X = np.array([0.5, 1.0, 2.0])
Y = np.array([[0.3, -1.0], [2.0, 0.1]])
V = np.array([1.0, -2.0, 0.5])


def f(a):
    return (a.sin() * a).exp()


def g(a):
    return (a ** 3).sum() + a.prod()


def h(a, b):
    return (a.sum() * b.tanh()).sum() + (a ** 2).sum() * b[0, 1]


def t(a):
    return torch.tensor(a, dtype=torch.float64)


def fd_jacobian(fn, a, eps=1e-6):
    """Central differences of a NumPy-valued function: shape out.shape + a.shape."""
    out = np.asarray(fn(a))
    jac = np.zeros(out.shape + a.shape)
    for idx in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[idx] = eps
        jac[(...,) + idx] = (np.asarray(fn(a + d)) - np.asarray(fn(a - d))) / (2 * eps)
    return jac


def np_of(fn):
    return lambda a: fn(t(a))._data


# -- against finite differences -----------------------------------------------------------------
def test_jacobians_match_finite_differences():
    expected = fd_jacobian(np_of(f), X)
    for jac in (AF.jacobian(f, t(X)), AF.jacobian(f, t(X), vectorize=True, strategy="forward-mode"),
                F.jacrev(f)(t(X)), F.jacfwd(f)(t(X))):
        np.testing.assert_allclose(jac._data, expected, rtol=1e-6, atol=1e-8)


def test_hessians_match_finite_differences_of_the_gradient():
    expected = fd_jacobian(lambda a: F.grad(g)(t(a))._data, X)
    for hess in (AF.hessian(g, t(X)), AF.hessian(g, t(X), vectorize=True, outer_jacobian_strategy="forward-mode"),
                 F.hessian(g)(t(X)), F.jacrev(F.jacrev(g))(t(X)), F.jacfwd(F.jacfwd(g))(t(X))):
        np.testing.assert_allclose(hess._data, expected, rtol=1e-6, atol=1e-6)
    hv = expected @ V
    np.testing.assert_allclose(AF.hvp(g, t(X), t(V))[1]._data, hv, rtol=1e-6)
    np.testing.assert_allclose(AF.vhp(g, t(X), t(V))[1]._data, V @ expected, rtol=1e-6)


def test_products_match_the_jacobian():
    jac = fd_jacobian(np_of(f), X)
    out, jv = AF.jvp(f, t(X), t(V))
    np.testing.assert_allclose(jv._data, jac @ V, rtol=1e-6)
    np.testing.assert_allclose(AF.vjp(f, t(X), t(V))[1]._data, V @ jac, rtol=1e-6)
    np.testing.assert_allclose(F.jvp(f, (t(X),), (t(V),))[1]._data, jac @ V, rtol=1e-6)
    np.testing.assert_allclose(F.vjp(f, t(X))[1](t(V))[0]._data, V @ jac, rtol=1e-6)


def test_third_derivative_by_nested_grad():
    x = torch.tensor(0.7, dtype=torch.float64)
    d3 = F.grad(F.grad(F.grad(lambda a: a.sin() * a)))(x)
    # (x sin x)''' = −3 sin x − x cos x
    assert np.isclose(float(d3), -3 * np.sin(0.7) - 0.7 * np.cos(0.7))


def test_jacobian_with_create_graph_is_differentiable():
    x = t(X).requires_grad_()
    jac = AF.jacobian(f, x, create_graph=True)
    assert jac.requires_grad and jac.grad_fn is not None
    (dx,) = torch.autograd.grad(jac.sum(), x)
    expected = fd_jacobian(lambda a: AF.jacobian(f, t(a))._data.sum(axis=0), X)
    np.testing.assert_allclose(dx._data, expected.sum(axis=0), rtol=1e-6)
    assert not AF.jacobian(f, x).requires_grad


def test_results_are_plain_unless_an_input_requires_grad():
    assert not F.grad(g)(t(X)).requires_grad and not F.jacrev(f)(t(X)).requires_grad
    x = t(X).requires_grad_()
    gx = F.grad(g)(x)
    assert gx.requires_grad
    (d2,) = torch.autograd.grad(gx.sum(), x)
    np.testing.assert_allclose(d2._data, AF.hessian(g, t(X))._data.sum(axis=0), rtol=1e-12)


def test_vmap_is_a_loop_over_the_mapped_dimension():
    y = t(Y)
    np.testing.assert_allclose(F.vmap(torch.sum)(y)._data, Y.sum(axis=1))
    np.testing.assert_allclose(F.vmap(lambda a: a * 2, in_dims=1, out_dims=1)(y)._data, Y * 2)
    np.testing.assert_allclose(F.vmap(lambda a, b: a * b, in_dims=(0, None))(y, t(V[:2]))._data, Y * V[:2])
    per_row = F.vmap(F.grad(lambda a: (a ** 3).sum()))(y)
    np.testing.assert_allclose(per_row._data, 3 * Y ** 2)
    np.testing.assert_allclose(F.vmap(F.vmap(lambda a: a * a))(y)._data, Y * Y)


def test_functional_call_swaps_and_restores_parameters():
    net = torch.nn.Linear(3, 2).double()
    before = {k: p._data.copy() for k, p in net.named_parameters()}
    params = {k: torch.full_like(p, 0.5).detach() for k, p in net.named_parameters()}
    out = F.functional_call(net, params, (t(X),))
    np.testing.assert_allclose(out._data, np.full(2, 0.5 * X.sum() + 0.5))
    grads = F.grad(lambda p, a: F.functional_call(net, p, (a,)).sum())(params, t(X))
    np.testing.assert_allclose(grads["weight"]._data, np.tile(X, (2, 1)))
    np.testing.assert_allclose(grads["bias"]._data, np.ones(2))
    for k, p in net.named_parameters():
        np.testing.assert_array_equal(p._data, before[k])
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): 'bias'"):
        F.functional_call(net, {"weight": params["weight"]}, (t(X),), strict=True)


def test_errors_in_torch_words():
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor, got tensor with 1 dims"):
        F.grad(lambda a: a * 2)(t(X))
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        F.jvp(f, t(X), t(V))
    with pytest.raises(ValueError, match="same size in the mapped dimension, got sizes \\[3, 2\\]"):
        F.vmap(lambda a, b: a)(t(X), t(Y))
    with pytest.raises(RuntimeError, match="Got argnum=2, but only 1 positional inputs"):
        F.grad(g, argnums=2)(t(X))
    with pytest.raises(TypeError, match="must be either a Tensor or a tuple of Tensors but the given inputs has type"):
        AF.jacobian(f, [t(X)])
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        AF.jacobian(f, t(X), strategy="forward-mode")
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is independent of input 1"):
        AF.jacobian(lambda a, b: a * 2, (t(X), t(Y)), strict=True)
    with pytest.raises(RuntimeError, match="should contain a single element"):
        AF.hessian(f, t(X))


# -- against PyTorch -------------------------------------------------------------------------
def _plain(r):
    """Nested results as (structure, rounded values) to compare two libraries."""
    if isinstance(r, (tuple, list, dict)):
        items = r.items() if isinstance(r, dict) else enumerate(r)
        return type(r).__name__, [(k, _plain(e)) for k, e in items]
    return tuple(r.shape), np.asarray(r.detach().numpy()).round(9).tolist(), r.requires_grad


def _both(program):
    import importlib
    ours = program(torch, F, AF, lambda a: torch.tensor(a, dtype=torch.float64))
    tf = importlib.import_module("torch.func")
    theirs = program(real_torch, tf, real_torch.autograd.functional,
                     lambda a: real_torch.tensor(a, dtype=real_torch.float64))
    assert _plain(ours) == _plain(theirs)


PROGRAMS = {
    "autograd.functional": lambda m, fn, af, T: (
        af.jvp(f, T(X), T(V)), af.vjp(f, T(X), T(V)), af.jacobian(f, T(X)),
        af.jacobian(lambda a, b: (a * 2, (b @ b).sum() + a.sum()), (T(X), T(Y))),
        af.jacobian(lambda a, b: (a * 2, (b @ b).sum() + a.sum()), (T(X), T(Y)), vectorize=True,
                    strategy="forward-mode"),
        af.hessian(g, T(X)), af.hessian(h, (T(X), T(Y))), af.hvp(h, (T(X), T(Y)), (T(V), T(Y))),
        af.vhp(h, (T(X), T(Y)), (T(V), T(Y))), af.jvp(f, T(X), T(V), create_graph=True),
        af.jacobian(f, T(X), create_graph=True)),
    "func": lambda m, fn, af, T: (
        fn.grad(g)(T(X)), fn.grad(h, argnums=(0, 1))(T(X), T(Y)), fn.grad_and_value(h, argnums=1)(T(X), T(Y)),
        fn.grad(lambda a: (g(a), a.mean()), has_aux=True)(T(X)), fn.vjp(h, T(X), T(Y))[1](T(1.5)),
        fn.jvp(h, (T(X), T(Y)), (T(V), T(Y))), fn.jacrev(f)(T(X)), fn.jacfwd(f)(T(X)),
        fn.jacrev(h, argnums=(0, 1))(T(X), T(Y)), fn.jacfwd(h, argnums=(0, 1))(T(X), T(Y)),
        fn.hessian(g)(T(X)), fn.hessian(h, argnums=(0, 1))(T(X), T(Y)),
        fn.vmap(lambda a: (a.sum(), a * 2), in_dims=1, out_dims=(0, 1))(T(Y)),
        fn.vmap(fn.grad(lambda a: (a ** 2).sum()))(T(Y))),
}


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name", PROGRAMS)
def test_values_and_structures_match_torch(name):
    _both(PROGRAMS[name])


@needs_torch
@pytest.mark.torch
def test_grad_of_an_input_that_requires_grad_keeps_the_graph_like_torch():
    def program(m, fn, af, T):
        x = T(X).requires_grad_()
        gx = fn.grad(g)(x)
        return gx, m.autograd.grad(gx.sum(), x)
    _both(program)
