"""Random programs: 1–30 ops on random broadcastable shapes, drawn by Hypothesis.

A program starts from 1–3 float64 leaves whose shapes broadcast against each other; each
step applies an op (unary, binary, reduction, shape, indexing, linear algebra) to earlier
values. Ops are drawn only where they are smooth for the values at hand (log of values
above 0.1, relu away from 0, max without near-ties, ...), so central finite differences
are a fair reference. Each program is checked against finite differences and, when
PyTorch is installed, replayed in PyTorch: values, leaf gradients and the grad_fn graph.
"""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.op_inputs import graph_of
from tests.support.parity import needs_torch, real_torch as torch

import gradviz
from gradviz.autograd import gradcheck

GAP = 1e-3   # how far from a kink or a tie a value must be (finite differences step 1e-6)


# -- the op table: name -> (arity, usable(values) -> bool, params(draw, values), fn(t, params, *args)) --
def _np(x):
    return x.detach().numpy()


def _far_from(arr, points) -> bool:
    return all(np.min(np.abs(arr - p), initial=np.inf) > GAP for p in points)


def _no_ties(arr, dim) -> bool:
    """Along `dim` (None: all), the largest and smallest values are unique by a margin."""
    flat = arr.reshape(-1, 1) if dim is None else np.moveaxis(arr, dim, -1).reshape(-1, arr.shape[dim])
    if flat.shape[-1] < 2:
        return True
    s = np.sort(flat, axis=-1) if dim is not None else np.sort(flat.reshape(1, -1), axis=-1)
    return bool(np.all(s[..., 1] - s[..., 0] > GAP) and np.all(s[..., -1] - s[..., -2] > GAP))


def _dim(draw, v):
    return draw(st.integers(-v.ndim, v.ndim - 1)) if v.ndim else draw(st.sampled_from([0, -1]))


def _broadcasts(a, b) -> bool:
    try:
        np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
        return True
    except ValueError:
        return False


ALWAYS = lambda *vs: True  # noqa: E731
NO_PARAMS = lambda draw, *vs: ()  # noqa: E731

UNARY = {
    "neg": (ALWAYS, lambda t, p, a: -a),
    "exp": (lambda a: np.abs(_np(a)).max(initial=0) < 5, lambda t, p, a: a.exp()),
    "log": (lambda a: _np(a).min(initial=1) > 0.1, lambda t, p, a: t.log(a)),
    "log1p": (lambda a: _np(a).min(initial=1) > -0.9, lambda t, p, a: a.log1p()),
    "sqrt": (lambda a: _np(a).min(initial=1) > 0.1, lambda t, p, a: a.sqrt()),
    "rsqrt": (lambda a: _np(a).min(initial=1) > 0.1, lambda t, p, a: t.rsqrt(a)),
    "reciprocal": (lambda a: _far_from(_np(a), [0]) and np.abs(_np(a)).min(initial=1) > 0.1,
                   lambda t, p, a: a.reciprocal()),
    "sin": (ALWAYS, lambda t, p, a: t.sin(a)),
    "cos": (ALWAYS, lambda t, p, a: a.cos()),
    "tanh": (ALWAYS, lambda t, p, a: a.tanh()),
    "sigmoid": (ALWAYS, lambda t, p, a: t.sigmoid(a)),
    "relu": (lambda a: _far_from(_np(a), [0]), lambda t, p, a: t.relu(a)),
    "abs": (lambda a: _far_from(_np(a), [0]), lambda t, p, a: a.abs()),
    "leaky_relu": (lambda a: _far_from(_np(a), [0]), lambda t, p, a: t.nn.functional.leaky_relu(a, 0.1)),
    "gelu": (ALWAYS, lambda t, p, a: t.nn.functional.gelu(a)),
    "softplus": (ALWAYS, lambda t, p, a: t.nn.functional.softplus(a)),
    "clamp": (lambda a: _far_from(_np(a), [-0.5, 0.5]), lambda t, p, a: a.clamp(-0.5, 0.5)),
    "square": (ALWAYS, lambda t, p, a: a ** 2),
    "pow_1.5": (lambda a: _np(a).min(initial=1) > 0.1, lambda t, p, a: a ** 1.5),
    "rpow": (lambda a: np.abs(_np(a)).max(initial=0) < 5, lambda t, p, a: 2 ** a),
    "scale": (ALWAYS, lambda t, p, a: 0.5 * a - 1),
    "rsub": (ALWAYS, lambda t, p, a: 1 - a),
    "clone": (ALWAYS, lambda t, p, a: a.clone()),
}
BINARY = {
    "add": (ALWAYS, lambda t, p, a, b: a + b),
    "sub": (ALWAYS, lambda t, p, a, b: a - b),
    "mul": (ALWAYS, lambda t, p, a, b: a * b),
    "div": (lambda a, b: np.abs(_np(b)).min(initial=1) > 0.1, lambda t, p, a, b: a / b),
    "pow": (lambda a, b: _np(a).min(initial=1) > 0.1 and np.abs(_np(b)).max(initial=0) < 3,
            lambda t, p, a, b: a ** b),
    "maximum": (lambda a, b: _far_from(np.subtract(_np(a), _np(b)), [0]), lambda t, p, a, b: t.maximum(a, b)),
    "minimum": (lambda a, b: _far_from(np.subtract(_np(a), _np(b)), [0]), lambda t, p, a, b: t.minimum(a, b)),
    "where": (lambda a, b: _far_from(_np(a), [0]), lambda t, p, a, b: t.where(a > 0, a, b)),
    "add_alpha": (ALWAYS, lambda t, p, a, b: t.add(a, b, alpha=-0.5)),
}


def _reduce_dims(draw, a):
    if a.ndim == 0 or draw(st.booleans()):
        return None
    return _dim(draw, a)


def _kw(p):
    dim, keep = p
    return {} if dim is None else {"dim": dim, "keepdim": keep}


def _n(a, dim):
    return a.numel() if dim is None or a.ndim == 0 else a.shape[dim]


REDUCTIONS = {
    "sum": (ALWAYS, lambda t, p, a: a.sum(**_kw(p))),
    "mean": (ALWAYS, lambda t, p, a: a.mean(**_kw(p))),
    "var": (lambda a, p: _n(a, p[0]) > 1, lambda t, p, a: a.var(**_kw(p))),
    "std": (lambda a, p: _n(a, p[0]) > 1 and np.all(_np(a.var(**_kw(p))) > 1e-4), lambda t, p, a: a.std(**_kw(p))),
    "norm": (lambda a, p: np.all(_np(a.norm(**_kw(p))) > 1e-3), lambda t, p, a: a.norm(**_kw(p))),
    "amax": (lambda a, p: _no_ties(_np(a), None if p[0] is None or a.ndim == 0 else p[0]),
             lambda t, p, a: a.amax(**_kw(p))),
    "max": (lambda a, p: _no_ties(_np(a), None if p[0] is None or a.ndim == 0 else p[0]),
            lambda t, p, a: a.max() if p[0] is None else a.max(p[0], keepdim=p[1]).values),
    "min": (lambda a, p: _no_ties(_np(a), None if p[0] is None or a.ndim == 0 else p[0]),
            lambda t, p, a: a.min() if p[0] is None else t.min(a, p[0], keepdim=p[1])[0]),
    "prod": (ALWAYS, lambda t, p, a: a.prod() if p[0] is None else a.prod(p[0], keepdim=p[1])),
    "logsumexp": (lambda a, p: p[0] is not None, lambda t, p, a: t.logsumexp(a, p[0], keepdim=p[1])),
    "softmax": (lambda a, p: p[0] is not None, lambda t, p, a: t.softmax(a, p[0])),
    "log_softmax": (lambda a, p: p[0] is not None, lambda t, p, a: a.log_softmax(p[0])),
    "cumsum": (lambda a, p: p[0] is not None, lambda t, p, a: a.cumsum(p[0])),
}


def _shape_params(draw, name, a):
    nd = a.ndim
    if name in ("transpose", "flip", "select", "narrow", "index", "unsqueeze", "squeeze"):
        return (_dim(draw, a) if name != "unsqueeze" else draw(st.integers(-nd - 1, nd)),)
    if name == "permute":
        return (tuple(draw(st.permutations(range(nd)))),)
    if name == "expand":
        return (draw(st.integers(1, 3)),)
    if name == "repeat":
        return (tuple(draw(st.integers(1, 2)) for _ in range(nd + draw(st.integers(0, 1)))),)
    if name == "reshape":
        return (draw(st.sampled_from(["flat", "split", "merge"])),)
    return ()


def _reshape(t, how, a):
    shape = tuple(a.shape)
    if how == "flat" or a.ndim == 0:
        return a.reshape(-1)
    if how == "merge" and a.ndim >= 2:
        return a.reshape(*shape[:-2], shape[-2] * shape[-1])
    return a.reshape(*shape[:-1], 1, shape[-1])


def _select(t, p, a):
    d = p[0] % a.ndim
    return a.select(d, a.shape[d] - 1) if hasattr(a, "select") else a[(slice(None),) * d + (a.shape[d] - 1,)]


def _index(t, p, a):
    d = p[0] % a.ndim
    n = a.shape[d]
    idx = [i % n for i in (0, n - 1, 0)]   # repeated indices accumulate
    return a[(slice(None),) * d + (t.tensor(idx),)]


SHAPE_OPS = {
    "reshape": (ALWAYS, lambda t, p, a: _reshape(t, p[0], a)),
    "transpose": (lambda a: a.ndim >= 1, lambda t, p, a: a.transpose(p[0], -1)),
    "permute": (ALWAYS, lambda t, p, a: a.permute(p[0])),
    "T": (lambda a: a.ndim == 2, lambda t, p, a: a.T),
    "mT": (lambda a: a.ndim >= 2, lambda t, p, a: a.mT),
    "unsqueeze": (lambda a: a.ndim < 4, lambda t, p, a: a.unsqueeze(p[0])),
    "squeeze": (lambda a: a.ndim >= 1, lambda t, p, a: a.squeeze(p[0])),
    "squeeze_all": (ALWAYS, lambda t, p, a: a.squeeze()),
    "flip": (lambda a: a.ndim >= 1, lambda t, p, a: a.flip(p[0])),
    "expand": (lambda a: a.ndim < 4, lambda t, p, a: a.expand(p[0], *a.shape)),
    "repeat": (lambda a: a.numel() <= 12, lambda t, p, a: a.repeat(p[0])),
    "select": (lambda a: a.ndim >= 1 and a.shape[0] > 0, lambda t, p, a: _select(t, p, a)),
    "slice_step": (lambda a: a.ndim >= 1, lambda t, p, a: a[..., ::2]),
    "narrow": (lambda a: a.ndim >= 1, lambda t, p, a: a[(slice(None),) * (p[0] % a.ndim) + (slice(1, None),)]
               if a.shape[p[0] % a.ndim] > 1 else a[(slice(None),) * (p[0] % a.ndim) + (slice(0, 1),)]),
    "index": (lambda a: a.ndim >= 1, lambda t, p, a: _index(t, p, a)),
    "mask": (lambda a: a.ndim >= 1 and _far_from(_np(a), [0]), lambda t, p, a: a[a > 0]),
    "diagonal": (lambda a: a.ndim >= 2, lambda t, p, a: a.diagonal(0, -2, -1)),
    "split_last": (lambda a: a.ndim >= 1 and a.shape[-1] >= 2, lambda t, p, a: a.split(1, -1)[-1]),
    "unbind_first": (lambda a: a.ndim >= 1 and a.shape[0] >= 1, lambda t, p, a: a.unbind(0)[0]),
    "contiguous": (ALWAYS, lambda t, p, a: a.contiguous()),
}


def _matmul_ok(a, b):
    if a.ndim == 0 or b.ndim == 0:
        return False
    k = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if a.shape[-1] != k:
        return False
    try:
        np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
        return True
    except ValueError:
        return False


PAIR_OPS = {   # two operands with a constraint on their shapes
    "matmul": (_matmul_ok, lambda t, p, a, b: a @ b),
    "gram": (lambda a, b: a.ndim >= 1, lambda t, p, a, b: a @ a.mT if a.ndim >= 2 else a @ a),
    "cat": (lambda a, b: a.ndim >= 1 and a.ndim == b.ndim and tuple(a.shape[1:]) == tuple(b.shape[1:]),
            lambda t, p, a, b: t.cat([a, b])),
    "stack": (lambda a, b: tuple(a.shape) == tuple(b.shape), lambda t, p, a, b: t.stack([a, b], -1)),
}


def apply_step(t, step, values):
    kind, name, params, args = step
    table = {"unary": UNARY, "binary": BINARY, "reduce": REDUCTIONS, "shape": SHAPE_OPS, "pair": PAIR_OPS}[kind]
    return table[name][1](t, params, *(values[i] for i in args))


def run_program(t, steps, leaves):
    values = list(leaves)
    for step in steps:
        values.append(apply_step(t, step, values))
    return values[-1]


# -- drawing a program ------------------------------------------------------------------------
@st.composite
def programs(draw):
    """(leaf arrays, steps): steps are replayable in any library with torch's API."""
    base = [draw(st.integers(1, 3)) for _ in range(draw(st.sampled_from([1, 2, 2, 3, 3, 0])))]
    n_leaves = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    arrays = []
    for _ in range(n_leaves):
        # broadcastable against each other: drop some leading dims, set some dims to 1
        keep = len(base) - draw(st.sampled_from([0, 0, 0, 1, 2]) if base else st.just(0))
        shape = tuple(1 if draw(st.integers(0, 3)) == 0 else s for s in base[len(base) - max(keep, 0):])
        arrays.append(rng.standard_normal(shape))
    values = [gradviz.tensor(a, dtype=gradviz.float64, requires_grad=True) for a in arrays]
    steps = []
    wanted = draw(st.integers(1, 30))
    for _ in range(3 * wanted):   # ops that do not fit the values at hand are skipped
        if len(steps) >= wanted:
            break
        kind = draw(st.sampled_from(["unary", "unary", "binary", "binary", "reduce", "shape", "shape", "pair"]))
        i = draw(st.integers(0, len(values) - 1))
        a = values[i]
        if kind == "unary":
            name = draw(st.sampled_from(sorted(UNARY)))
            usable, params, args = UNARY[name][0](a), (), (i,)
        elif kind == "binary":
            j = draw(st.integers(0, len(values) - 1))
            name = draw(st.sampled_from(sorted(BINARY)))
            usable = _broadcasts(a, values[j]) and BINARY[name][0](a, values[j])
            params, args = (), (i, j)
        elif kind == "reduce":
            name = draw(st.sampled_from(sorted(REDUCTIONS)))
            params = (_reduce_dims(draw, a), draw(st.booleans()))
            usable, args = REDUCTIONS[name][0](a, params), (i,)
        elif kind == "shape":
            name = draw(st.sampled_from(sorted(SHAPE_OPS)))
            params = _shape_params(draw, name, a)
            usable, args = SHAPE_OPS[name][0](a), (i,)
        else:
            j = draw(st.integers(0, len(values) - 1))
            name = draw(st.sampled_from(sorted(PAIR_OPS)))
            usable, params, args = PAIR_OPS[name][0](a, values[j]), (), (i, j)
        if not usable:
            continue
        step = (kind, name, params, args)
        out = apply_step(gradviz, step, values)
        if out.numel() == 0 or out.numel() > 64:
            continue
        steps.append(step)
        values.append(out)
        if np.abs(_np(out)).max(initial=0) > 50:   # keep values moderate: finite differences stay accurate
            steps.append(("unary", "tanh", (), (len(values) - 1,)))
            values.append(values[-1].tanh())
    if not steps:
        steps.append(("unary", "sin", (), (len(values) - 1,)))
    return arrays, steps


def _leaves(t, arrays):
    return [t.tensor(a, dtype=t.float64, requires_grad=True) for a in arrays]


@settings(max_examples=300, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_program_gradients_match_finite_differences(program):
    arrays, steps = program
    leaves = _leaves(gradviz, arrays)
    out = run_program(gradviz, steps, leaves)
    weights = gradviz.tensor(np.random.default_rng(len(steps)).standard_normal(tuple(out.shape)))

    def loss(*xs):   # one scalar: vᵀ f(x), so each input needs two evaluations per element
        return (run_program(gradviz, steps, xs) * weights).sum()

    assert gradcheck(loss, tuple(leaves), atol=1e-5, rtol=1e-4)


@pytest.mark.torch
@needs_torch
@settings(max_examples=300, deadline=None, database=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_random_program_matches_torch(program):
    arrays, steps = program
    results = {}
    for t in (gradviz, torch):
        leaves = _leaves(t, arrays)
        out = run_program(t, steps, leaves)
        graph = graph_of(out.grad_fn, leaves)
        weights = t.tensor(np.random.default_rng(len(steps)).standard_normal(tuple(out.shape)), dtype=t.float64)
        if out.requires_grad:
            (out * weights).sum().backward()
        results[t] = (out.detach().numpy(), str(out.dtype), graph,
                      [None if x.grad is None else x.grad.numpy() for x in leaves])
    ours, theirs = results[gradviz], results[torch]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-9, atol=1e-12)
    assert ours[1] == theirs[1]
    assert ours[2] == theirs[2]
    for a, b in zip(ours[3], theirs[3]):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_program_strategy_covers_every_op():
    """The tables are all reachable: each op has a usable example in a small fixed program."""
    names = set(UNARY) | set(BINARY) | set(REDUCTIONS) | set(SHAPE_OPS) | set(PAIR_OPS)
    assert len(names) == len(UNARY) + len(BINARY) + len(REDUCTIONS) + len(SHAPE_OPS) + len(PAIR_OPS)
    x = gradviz.tensor(np.linspace(0.3, 1.4, 12).reshape(3, 4), dtype=gradviz.float64, requires_grad=True)
    y = gradviz.tensor(np.linspace(-1.2, 1.3, 4) + 0.05, dtype=gradviz.float64, requires_grad=True)
    sq = gradviz.tensor(np.linspace(0.2, 1.0, 9).reshape(3, 3), dtype=gradviz.float64, requires_grad=True)
    for name, (usable, fn) in UNARY.items():
        assert usable(x) or usable(y), name
        assert fn(gradviz, (), x if usable(x) else y).requires_grad
    for name, (usable, fn) in BINARY.items():
        assert usable(x, y) and fn(gradviz, (), x, y).requires_grad, name
    for name, (usable, fn) in REDUCTIONS.items():
        assert usable(x, (1, False)) and fn(gradviz, (1, False), x).requires_grad, name
    for name, (usable, fn) in SHAPE_OPS.items():
        p = {"permute": ((1, 0),), "expand": (2,), "repeat": ((2, 1),), "reshape": ("merge",)}.get(name, (0,))
        assert usable(x) and fn(gradviz, p, x).requires_grad, name
    for name, (usable, fn) in PAIR_OPS.items():
        assert usable(sq, sq) and fn(gradviz, (), sq, sq).requires_grad, name
    assert math.isfinite(float(PAIR_OPS["matmul"][1](gradviz, (), x, y).sum()))
