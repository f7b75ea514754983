"""Forward-mode AD (autograd.forward_ad): every op's tangent J·t against reverse mode and
central finite differences, the derived rule kinds, the TangentComputed event, and
torch's API and messages (dual_level, make_dual, unpack_dual)."""
import numpy as np
import pytest
from tests.ops.cases import select
from tests.support.op_inputs import PAIRS, SHAPES, rng_for, sample
from tests.support.parity import needs_torch, real_torch

import gradviz as torch
from gradviz import events
from gradviz.autograd import forward_ad as fwAD
from gradviz.autograd import grad


def _outputs(out):
    return out if isinstance(out, tuple) else (out,)


def check_jvp(fn, arrays, seed_text):
    """Forward-mode tangents of fn at `arrays` in a random direction t, against
    (1) the dot-product test ⟨J t, u⟩ = ⟨t, Jᵀ u⟩ with reverse mode, to rounding, and
    (2) central finite differences along t."""
    rng = rng_for("jvp" + seed_text)
    ts = [rng.standard_normal(a.shape) for a in arrays]
    with fwAD.dual_level():
        duals = [fwAD.make_dual(torch.tensor(a), torch.tensor(t)) for a, t in zip(arrays, ts)]
        outs = _outputs(fn(*duals))
        unpacked = [fwAD.unpack_dual(o) for o in outs]
    float_outs = [(o, u) for o, u in zip(outs, unpacked) if o.is_floating_point()]
    assert float_outs
    for _, (primal, tangent) in float_outs:
        assert tangent is not None, "no tangent reached the output"
        assert tangent.shape == primal.shape and tangent.dtype == primal.dtype
    # (1) dot-product test against the VJPs
    xs = [torch.tensor(a, requires_grad=True) for a in arrays]
    routs = [o for o in _outputs(fn(*xs)) if o.is_floating_point()]
    us = [rng.standard_normal(tuple(o.shape)) for o in routs]
    total = sum((o * torch.tensor(u)).sum() for o, u in zip(routs, us))
    vjps = grad(total, xs, allow_unused=True, materialize_grads=True)
    lhs = sum(float((u * tan._data).sum()) for u, (_, (_, tan)) in zip(us, float_outs))
    rhs = sum(float((t * g._data).sum()) for t, g in zip(ts, vjps))
    assert np.isclose(lhs, rhs, rtol=1e-9, atol=1e-9), (lhs, rhs)
    # (2) finite differences along t
    eps = 1e-6
    with torch.no_grad():
        plus = [o for o in _outputs(fn(*[torch.tensor(a + eps * t) for a, t in zip(arrays, ts)]))
                if o.is_floating_point()]
        minus = [o for o in _outputs(fn(*[torch.tensor(a - eps * t) for a, t in zip(arrays, ts)]))
                 if o.is_floating_point()]
    for p, m, (_, (_, tan)) in zip(plus, minus, float_outs):
        np.testing.assert_allclose(tan._data, (p._data - m._data) / (2 * eps), rtol=1e-4, atol=1e-5)


def _arrays(specs, text):
    rng = rng_for(text)
    return [sample(s, rng) for s in specs]


def _on_gradviz(cases):
    """(fn over gradviz tensors, inputs) params of the finite-difference rows (tests/ops/cases.py)."""
    return [pytest.param((lambda case: lambda *xs: case.fn(torch, *xs))(case), case.inputs, id=case.name)
            for case in cases if all(isinstance(s, np.ndarray) or len(s) < 3 or s[2] for s in case.inputs)]


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("fn, domains", _on_gradviz(select("gradcheck", "unary")))
def test_unary_jvp(fn, domains, shape):
    (domain,) = domains
    check_jvp(fn, _arrays([(shape, domain)], f"{domain}{shape}"), str(shape))


@pytest.mark.parametrize("shapes", PAIRS[:4] + PAIRS[-3:], ids=str)
@pytest.mark.parametrize("fn, domains", _on_gradviz([c for c in select("gradcheck", "binary")
                                                     if c.name != "where_fixed_cond"]))
def test_binary_jvp(fn, domains, shapes):
    (sa, sb), (da, db) = shapes, domains
    check_jvp(fn, _arrays([(sa, da), (sb, db)], f"{sa}{sb}"), str(shapes))


@pytest.mark.parametrize("fn, specs", _on_gradviz(select("gradcheck", "reduction", "linalg", "shape", "indexing")))
def test_table_jvp(fn, specs):
    check_jvp(fn, _arrays(specs, str(specs)), str(specs))


def test_rule_kinds_come_from_the_registry():
    """Elementwise ops reuse their VJP (diagonal Jacobian), shape ops and sums are linear,
    products bilinear; ops without a rule use the transpose of their VJP."""
    from gradviz.ops import linalg, pointwise, reduce, shape
    assert fwAD.rule_kind(pointwise.EXP) == "pointwise"
    assert fwAD.rule_kind(reduce.SOFTMAX) == "pointwise"
    assert fwAD.rule_kind(shape.PERMUTE) == "linear" and fwAD.rule_kind(reduce.SUM_DIM) == "linear"
    assert fwAD.rule_kind(linalg.MM) == "bilinear" and fwAD.rule_kind(pointwise.MUL) == "bilinear"
    assert fwAD.rule_kind(reduce.LOG_SOFTMAX) == "transpose"
    assert fwAD.rule_kind(linalg.CHOLESKY) == "explicit" and fwAD.rule_kind(reduce.NORM) == "explicit"


def test_tangent_events_flow_forward():
    x = torch.tensor([0.5, 1.0], dtype=torch.float64)
    seen = []
    with events.listen(seen.append), fwAD.dual_level():
        y = fwAD.make_dual(x, torch.ones(2, dtype=torch.float64))
        z = (y.exp() * y).log_softmax(0)
    computed = [e for e in seen if isinstance(e, events.TangentComputed)]
    assert [e.op.torch_name for e in computed] == ["ExpBackward0", "MulBackward0", "LogSoftmaxBackward0"]
    assert [e.rule for e in computed] == ["pointwise", "bilinear", "transpose"]
    assert computed[-1].outputs[0] is z
    # the inner reverse pass of the transpose rule is not reported as the user's computation
    assert not any(isinstance(e, (events.BackwardStarted, events.NodeExecuted)) for e in seen)


def test_no_tangent_outside_the_level_and_without_a_dual_input():
    with fwAD.dual_level():
        y = fwAD.make_dual(torch.ones(2), torch.ones(2))
        plain = torch.ones(2) * 3
        assert fwAD.unpack_dual(plain).tangent is None
        assert fwAD.unpack_dual(y.detach()).tangent is None
        with torch.no_grad():   # forward mode does not depend on grad mode, as in torch
            assert fwAD.unpack_dual(y * 3).tangent.tolist() == [3.0, 3.0]
    assert fwAD.unpack_dual(y).tangent is None


def test_an_in_place_write_outside_autograd_replaces_the_tangent():
    """zero_, fill_ and the random fills write constants (a zero tangent); copy_ writes its source
    (the source's tangent, broadcast), as in torch."""
    with fwAD.dual_level():
        x = fwAD.make_dual(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))
        for write in (lambda y: y.zero_(), lambda y: y.fill_(2.0), lambda y: y.normal_(), torch.zero_):
            assert fwAD.unpack_dual(write(x * 1)).tangent.tolist() == [0.0, 0.0]
        assert fwAD.unpack_dual(torch.zeros(2, 2).copy_(x)).tangent.tolist() == [[3.0, 4.0], [3.0, 4.0]]
        assert fwAD.unpack_dual(torch.zeros(2).copy_(torch.ones(2))).tangent is None


def test_tangent_is_differentiable_when_the_primal_requires_grad():
    """Reverse over forward: d/dx (J(x)·t) for exp is eˣ·t."""
    x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    t = torch.tensor([1.0, 2.0], dtype=torch.float64)
    with fwAD.dual_level():
        tan = fwAD.unpack_dual(fwAD.make_dual(x, t).exp()).tangent
    assert tan.grad_fn is not None
    (g,) = grad(tan.sum(), x)
    np.testing.assert_allclose(g._data, np.exp(x._data) * t._data)


def test_errors_in_torch_words():
    with pytest.raises(RuntimeError, match="no level exists, make sure to enter_dual_level"):
        fwAD.make_dual(torch.ones(2), torch.ones(2))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported at the moment"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[2\] while the given forward gradient is of "
                                               r"size \[3\]"):
            fwAD.make_dual(torch.ones(2), torch.ones(3))


@needs_torch
@pytest.mark.torch
def test_matches_torch_on_a_small_program():
    def program(mod, x, t, w):
        F = mod.autograd.forward_ad
        with F.dual_level():
            d = F.make_dual(x, t)
            h = (d @ w).tanh()
            out = (h.softmax(-1) * h).sum(-1).log1p() + d.norm(dim=-1) ** 2
            p, tan = F.unpack_dual(out)
            return type(F.unpack_dual(out)).__name__, p.detach().numpy(), tan.detach().numpy(), \
                type(d.grad_fn).__name__
    rng = np.random.default_rng(1)
    arrs = [rng.standard_normal(s) for s in ((3, 4), (3, 4), (4, 5))]
    ours = program(torch, *[torch.tensor(a) for a in arrs])
    theirs = program(real_torch, *[real_torch.tensor(a) for a in arrs])
    assert ours[0] == theirs[0] == "UnpackedDualTensor" and ours[3] == theirs[3]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-10)


@needs_torch
@pytest.mark.torch
def test_in_place_writes_into_a_plain_tensor_take_the_tangent_as_in_torch():
    """copy_ and in-place arithmetic with a dual operand, outside any recorded graph, run through the op so
    the written tensor takes its tangent (diff(n=0) is such a copy)."""
    def program(mod, x, t):
        F = mod.autograd.forward_ad
        with F.dual_level():
            d = F.make_dual(x, t)
            outs = (mod.zeros(3, dtype=mod.float64).copy_(d), mod.ones(3, dtype=mod.float64).mul_(d).add_(d, alpha=2),
                    mod.diff(d, n=0))
            return [F.unpack_dual(o).tangent.numpy() for o in outs]
    x, t = np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.25, -3.0])
    for ours, theirs in zip(program(torch, torch.tensor(x), torch.tensor(t)),
                            program(real_torch, real_torch.tensor(x), real_torch.tensor(t))):
        np.testing.assert_allclose(ours, theirs)


@needs_torch
@pytest.mark.torch
def test_explicit_rules_are_differentiable_as_in_torch():
    """Reverse over forward through the records' own JVPs (Cholesky's, the norm's at a zero entry)."""
    def program(mod, a, t):
        F = mod.autograd.forward_ad
        x = mod.tensor(a, requires_grad=True)
        with F.dual_level():
            d = F.make_dual(x, mod.tensor(t))
            out = mod.linalg.cholesky(d @ d.mT + mod.eye(2, dtype=mod.float64)).sum() + d.norm(p=3) + d.norm(p=1.5)
            tangent = F.unpack_dual(out).tangent
        return tangent.detach().numpy(), mod.autograd.grad(tangent, x)[0].numpy()
    a, t = np.array([[0.0, 1.0], [-2.0, 0.5]]), np.array([[0.3, -0.7], [1.1, 0.4]])
    for ours, theirs in zip(program(torch, a, t), program(real_torch, a, t)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


def test_singular_values_have_a_first_order_jvp_only():
    """dσ = diag(Uᵀ dA V) with U, V constants of the primal: a primal that requires grad would need their
    derivative, which is not implemented, so that raises rather than give a wrong gradient."""
    a, t = np.array([[2.0, 0.5], [0.3, 1.0]]), torch.ones(2, 2, dtype=torch.float64)
    with fwAD.dual_level():
        assert fwAD.unpack_dual(torch.linalg.svdvals(fwAD.make_dual(torch.tensor(a), t))).tangent is not None
        with pytest.raises(NotImplementedError, match="derivative of svdvals's gradient"):
            torch.linalg.svdvals(fwAD.make_dual(torch.tensor(a, requires_grad=True), t))
