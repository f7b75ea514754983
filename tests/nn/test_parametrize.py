"""nn.utils.parametrize and nn.utils.parametrizations.weight_norm against PyTorch: the
parametrizations tutorial's Symmetric and chained parametrizations, cached(), assignment through
right_inverse, remove_parametrizations, and weight_norm's class, repr, state_dict keys, node,
values and gradients."""
import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch as torch

import gradviz
from gradviz.autograd import gradcheck, gradgradcheck


def _symmetric(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()
    return Symmetric()


def _double(lib):
    class Double(lib.nn.Module):
        def forward(self, X):
            return 2 * X
    return Double()


def _loaded(lib, make, state):
    m = make(lib)
    m.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    return m


def _pair(make):
    """The same module from both libraries, with torch's initial values."""
    torch.manual_seed(0)
    theirs = make(torch)
    state = {k: v.detach().numpy() for k, v in theirs.state_dict().items()}
    return _loaded(gradviz, make, state), theirs


def _run(m, lib, x):
    y = m(lib.tensor(x))
    y.pow(2).sum().backward()
    return y


PARAMETRIZED = {
    "weight_norm": lambda lib: lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 4).double()),
    "weight_norm_conv_dim1": lambda lib: lib.nn.utils.parametrizations.weight_norm(
        lib.nn.Conv2d(2, 3, 2).double(), dim=1),
    "weight_norm_whole": lambda lib: lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 4).double(),
                                                                                 dim=None),
    "symmetric": lambda lib: lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(3, 3).double(), "weight",
                                                                                _symmetric(lib)),
    "chained": lambda lib: lib.nn.utils.parametrize.register_parametrization(
        lib.nn.utils.parametrize.register_parametrization(lib.nn.Linear(3, 3).double(), "weight", _symmetric(lib)),
        "weight", _double(lib)),
}


@needs_torch
@pytest.mark.parametrize("name", PARAMETRIZED)
def test_parametrized_module_matches_torch(name):
    ours, theirs = _pair(PARAMETRIZED[name])
    assert repr(ours) == repr(theirs)
    assert type(ours).__name__ == type(theirs).__name__
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    x = np.random.default_rng(1).standard_normal((2, 2, 3, 3) if "conv" in name else (2, 3))
    y, yt = _run(ours, gradviz, x), _run(theirs, torch, x)
    assert ours.weight.grad_fn.name() == theirs.weight.grad_fn.name()
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    for (n, p), (_, pt) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(p.grad.numpy(), pt.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=n)


@needs_torch
@pytest.mark.parametrize("leave", [True, False])
def test_assignment_and_removal_match_torch(leave):
    results = []
    for lib in (gradviz, torch):
        P = lib.nn.utils.parametrize
        m = P.register_parametrization(lib.nn.Linear(3, 3).double(), "weight", _symmetric(lib))
        m.weight = lib.arange(9.0, dtype=lib.float64).reshape(3, 3)   # through right_inverse
        original = m.parametrizations.weight.original
        assigned = (m.weight.detach().numpy().copy(), original.detach().numpy().copy())
        P.remove_parametrizations(m, "weight", leave_parametrized=leave)
        results.append((assigned, m.weight.detach().numpy(), type(m).__name__, P.is_parametrized(m),
                        m.weight is original, repr(m), list(m.state_dict())))
    (a, *rest), (b, *rest_t) = results
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(rest[0], rest_t[0])
    assert rest[1:] == rest_t[1:]


def test_cached_computes_each_parametrized_tensor_once():
    calls = []

    class Counted(gradviz.nn.Module):
        def forward(self, X):
            calls.append(1)
            return X * 1.0
    m = gradviz.nn.utils.parametrize.register_parametrization(gradviz.nn.Linear(2, 2), "weight", Counted())
    calls.clear()
    with gradviz.nn.utils.parametrize.cached():
        assert m.weight is m.weight
    assert len(calls) == 1
    m.weight, m.weight
    assert len(calls) == 3


@needs_torch
@pytest.mark.parametrize("call", [
    "P.register_parametrization(L.nn.Linear(2, 2), 'scale', Double)",
    "P.remove_parametrizations(L.nn.Linear(2, 2), 'weight')",
    "P.remove_parametrizations(L.nn.utils.parametrizations.weight_norm(L.nn.Linear(2, 2)), 'weight', False)",
    "P.register_parametrization(L.nn.Linear(2, 2), 'weight', Flatten)",
])
def test_errors_match_torch(call):
    messages = []
    for lib in (gradviz, torch):
        try:
            eval(call, {"P": lib.nn.utils.parametrize, "L": lib, "Double": _double(lib),
                        "Flatten": lib.nn.Flatten(0)})
            messages.append(None)
        except ValueError as e:
            messages.append(str(e))
    assert messages[0] is not None and messages[0] == messages[1]


@pytest.mark.parametrize("dim", [0, 1])
def test_weight_norm_node_is_twice_differentiable(dim):
    from gradviz.functions.nnops import _weight_norm
    rng = np.random.default_rng(4)
    v = gradviz.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    g = gradviz.tensor(rng.standard_normal((3, 1) if dim == 0 else (1, 4)), requires_grad=True)
    assert gradcheck(lambda a, b: _weight_norm(a, b, dim), (v, g))
    assert gradgradcheck(lambda a, b: _weight_norm(a, b, dim), (v, g))


@needs_torch
@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_norm_except_dim_matches_torch(dim):
    a = np.random.default_rng(6).standard_normal((3, 4, 2))
    ours, theirs = gradviz.norm_except_dim(gradviz.tensor(a), 2, dim), torch.norm_except_dim(torch.tensor(a), 2, dim)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


@needs_torch
def test_a_parametrized_module_deep_copies_and_refuses_to_pickle_as_torch():
    import copy
    import io
    outcomes = []
    for lib in (gradviz, torch):
        m = lib.nn.utils.parametrizations.weight_norm(lib.nn.Linear(3, 2))
        c = copy.deepcopy(m)
        assert type(c).__name__ == "ParametrizedLinear"
        assert c.parametrizations.weight.original0 is not m.parametrizations.weight.original0
        np.testing.assert_array_equal(c.weight.detach().numpy(), m.weight.detach().numpy())
        with pytest.raises(RuntimeError) as caught:
            lib.save(m, io.BytesIO())
        outcomes.append(str(caught.value))
    assert outcomes[0] == outcomes[1]
