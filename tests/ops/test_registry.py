"""The op registry (gradviz.ops.registry.OPS) read as a table: every record's display fields
fit its arity, and every differentiable record is exercised by a finite-difference case
(tests/ops/test_gradcheck.py) and a PyTorch parity case (tests/ops/test_torch_parity.py).

Adding an op: write its record in gradviz/ops/<module>.py (forward, vjp, its formulas in LaTeX, and
`symbols=` when the inputs are not a, b, ...), then add one row to a table of each of the two
test files above. This test names exactly what is missing.
"""
import importlib
import warnings

import numpy as np
import pytest
from tests.support.op_inputs import rng_for, sample

import gradviz
from gradviz import events
from gradviz.ops.registry import by_torch_name, ops

# records no test can reach through the public API, with the reason
UNREACHABLE = {
    "pointwise.FLOOR_DIVIDE": "floor_divide has no derivative in PyTorch either (NotImplemented)",
    "pointwise.FLOOR_DIVIDE_SCALAR": "floor_divide has no derivative in PyTorch either (NotImplemented)",
    "pointwise.HEAVISIDE": "heaviside has no derivative in PyTorch either (NotImplemented)",
    "search.UNIQUE": "unique has no derivative in PyTorch either (Unique2Backward0 raises)",
    "search.UNIQUE_DIM": "unique(dim=) has no derivative in PyTorch either (UniqueDimBackward0 raises)",
    "search.UNIQUE_CONSECUTIVE": "unique_consecutive has no derivative in PyTorch either (its node raises)",
}


# records with a gradient test outside any case table, that the generic runner below cannot reach:
# known gaps, listed so that every other record stays covered (move one to a table to drop it here)
KNOWN_GAPS = {
    "attention.SDPA": "the fused float32 attention record; tests/nn/test_layers.py checks it in float32",
    "pool.ADAPTIVE_AVG_POOL2D_BACKWARD": "a pooling VJP's own record (double backward)",
    "pool.AVG_POOL2D_BACKWARD": "a pooling VJP's own record (double backward)",
    "pool.COL2IM_OF_IM2COL": "an unfold/fold VJP's own record (double backward)",
    "pool.IM2COL_OF_COL2IM": "an unfold/fold VJP's own record (double backward)",
    "reduce.MEDIAN_NAN": "median of an input holding NaN: no finite differences through NaN",
    "index.COPY_SLICES": "index_put with slices among its keys; x[key] = v through a view records "
                         "autograd.views' CopySlices instead",
}


def _differentiable() -> dict:
    return {name: op for name, op in ops().items()
            if op.vjp is not None and name not in UNREACHABLE and name not in KNOWN_GAPS}


def _arity(op) -> int:
    return 3 if op.arg_names == ("tensors",) else len(op.arg_names)


@pytest.mark.parametrize("name", sorted(ops()))
def test_display_fields_fit_the_record(name):
    op = ops()[name]
    n = _arity(op)
    symbols = op.input_symbols(n)
    assert len(symbols) == n, f"{name}: {n} inputs but symbols {symbols}; give the record symbols=(...)"
    assert len(set(symbols)) == n, f"{name}: two inputs share a symbol in {symbols}"
    assert op.out_symbol not in symbols, f"{name}: the output symbol {op.out_symbol!r} names an input too"
    if op.vjp is None or name in UNREACHABLE:
        return
    rules = len(op.vjp) if isinstance(op.vjp, tuple) else None
    if rules is not None and op.arg_names != ("tensors",):
        assert rules == n, f"{name}: {n} inputs ({op.arg_names}) but {rules} VJP rules"
    if op.vjp_formulas and op.arg_names != ("tensors",):
        assert len(op.vjp_formulas) == n, \
            f"{name}: {n} inputs but {len(op.vjp_formulas)} vjp_formulas; write one formula per input"
    if op.vjp_latex:
        assert len(op.vjp_latex) == len(op.vjp_formulas), f"{name}: one vjp_latex per vjp_formula"
    if op.broadcasts:
        assert all(0 <= s < n for s in op.broadcasts), f"{name}: broadcasts names a slot it does not have"


def test_the_torch_bridge_reads_the_registry():
    from gradviz.torch_bridge import _op_table
    table = _op_table()
    for torch_name, op in by_torch_name().items():
        assert table[torch_name] is op


# -- which records the test tables reach ----------------------------------------------------------
def _tables(module):
    """The module's case tables: lists of (name, fn, ...) rows, dicts of name -> (fn, inputs)."""
    for value in list(vars(module).values()):
        if callable(value) and getattr(value, "__name__", "").startswith("_") and \
                getattr(value, "__code__", None) is not None and value.__code__.co_argcount == 0:
            try:
                value = value()   # a table built by a function (_reduction_cases)
            except Exception:
                continue
        if isinstance(value, list):
            for row in value:
                if isinstance(row, tuple) and len(row) >= 3 and isinstance(row[0], str) and callable(row[1]):
                    yield row[0], row[1], _inputs(row[2:])
        elif isinstance(value, dict):
            for name, row in value.items():
                if isinstance(row, tuple) and len(row) == 2 and callable(row[0]) and isinstance(row[1], list) \
                        and row[1] and isinstance(row[1][0], tuple):
                    yield name, row[0], list(row[1][0])


def _inputs(rest):
    """Input specs or arrays from a row's tail: a domain, two domains, or a list of specs/arrays."""
    if len(rest) >= 1 and isinstance(rest[0], str):
        return [((3, 4), r) for r in rest if isinstance(r, str)]
    if len(rest) >= 1 and isinstance(rest[0], (list, tuple)):
        return list(rest[0])
    return None


def _tensor(item, rng):
    if isinstance(item, np.ndarray):
        return gradviz.tensor(item.astype(np.float64) if item.dtype.kind == "f" else item,
                              requires_grad=item.dtype.kind == "f")
    return gradviz.tensor(sample(item, rng), dtype=gradviz.float64,
                          requires_grad=len(item) < 3 or bool(item[2]))


def _call(fn, xs):
    """The row's function, whichever way its table calls it: f(*xs), f(lib, *xs) or f(lib, F, *xs)."""
    for prefix in ((), (gradviz,), (gradviz, gradviz.nn.functional)):
        try:
            return fn(*prefix, *xs)
        except TypeError:
            continue
    return None


def _reached(module) -> set:
    """Records whose nodes the module's rows create, forward and in a create_graph backward."""
    found: set = set()

    def listener(event):
        if type(event) is events.NodeCreated:
            found.add(id(event.node.op))

    with events.listen(listener), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, fn, items in _tables(module):
            if not items:
                continue
            try:
                rng = rng_for(name)
                xs = [_tensor(item, rng) for item in items]
                out = _call(fn, xs)
                if out is None:
                    continue
                outs = [o for o in (out if isinstance(out, (tuple, list)) else [out])
                        if getattr(o, "requires_grad", False) and o.dtype.is_floating_point]
                leaves = [x for x in xs if x.requires_grad]
                if outs and leaves:
                    total = sum(o.double().sum() for o in outs)
                    grads = gradviz.autograd.grad(total, leaves, create_graph=True, allow_unused=True)
                    for _ in range(2):   # second and third order: the VJPs of VJPs are records too
                        grads = [g for g in grads if g is not None and g.requires_grad]
                        if not grads:
                            break
                        grads = gradviz.autograd.grad(sum(g.sum() for g in grads), leaves, create_graph=True,
                                                      allow_unused=True)
            except Exception:   # a row this generic runner cannot drive: its own test still runs it
                continue
    return found


# the test modules whose tables hold gradient cases (finite differences and PyTorch parity); a new
# test module with a table of (name, fn, inputs) rows joins by being listed here
_SHARED = ["tests.ops.test_extra_functions", "tests.nn.test_functional", "tests.ops.test_conv", "tests.nn.test_layers",
           "tests.ops.test_sort", "tests.ops.test_op_table", "tests.ops.test_registry", "tests.ops.test_set_ops",
           "tests.tensor.test_unfold"]
GRADCHECK_MODULES = ["tests.ops.test_gradcheck", *_SHARED]
PARITY_MODULES = ["tests.ops.test_torch_parity", *_SHARED]


# records that need a second device, whose cases run on the strict stand-in for CuPy instead
ON_A_SECOND_DEVICE = {"shape.TO_DEVICE": "tests/ops/test_device_parity.py::test_moving_between_devices_is_differentiable"}


def _missing(module_names) -> list:
    reached: set = set()
    for module_name in module_names:
        try:
            module = importlib.import_module(module_name)
        except ImportError:   # a module that needs what this machine lacks (torch)
            continue
        reached |= _reached(module)
    return sorted(name for name, op in _differentiable().items() if id(op) not in reached and name not in ON_A_SECOND_DEVICE)


def test_every_differentiable_record_has_a_gradcheck_case():
    missing = _missing(GRADCHECK_MODULES)
    assert not missing, ("records with no finite-difference case: add a row for each to a case table in one "
                         f"of {', '.join(m.replace('.', '/') + '.py' for m in GRADCHECK_MODULES)} (EXTRA below takes any op): "
                         f"{', '.join(missing)}")


@pytest.mark.torch
def test_every_differentiable_record_has_a_parity_case():
    pytest.importorskip("torch")
    missing = _missing(PARITY_MODULES)
    assert not missing, ("records with no PyTorch parity case: add a row for each to a case table in one "
                         f"of {', '.join(m.replace('.', '/') + '.py' for m in PARITY_MODULES)} (EXTRA below takes any op): "
                         f"{', '.join(missing)}")


# -- the records whose cases live nowhere else: one row each, checked both ways ------------------------
V = np.array([[0.3, 1.6, -0.7, 2.2], [-1.4, 0.45, 3.1, -2.6]])   # away from integers and from ties
W = np.array([[1.5, -0.7, 2.5, 1.2], [0.65, 1.9, -1.1, 0.6]])
MASK = np.array([[True, False, False, True], [False, True, False, False]])
LABELS = np.array([1, 3])
EXTRA = [
    ("sort", lambda t, x: t.sort(x, dim=-1)[0], [V]),
    ("topk", lambda t, x: t.topk(x, 2)[0], [V]),
    ("mse_loss", lambda t, x, y: t.nn.functional.mse_loss(x, y), [V, W]),
    ("nll_loss", lambda t, x: t.nn.functional.nll_loss(t.log_softmax(x, 1), t.tensor(LABELS)), [V]),
    ("ceil", lambda t, x: t.ceil(x) * x, [V]),
    ("floor", lambda t, x: t.floor(x) * x, [V]),
    ("round", lambda t, x: t.round(x) * x, [V]),
    ("trunc", lambda t, x: t.trunc(x) * x, [V]),
    ("div_floor", lambda t, x, y: t.div(x, y, rounding_mode="floor") * x, [V, W]),
    ("masked_fill_tensor", lambda t, x, v: x.masked_fill(t.tensor(MASK), v.sum()), [V, W]),
    ("remainder", lambda t, x, y: t.remainder(x, y), [V, W]),
    ("remainder_scalar", lambda t, x: t.remainder(x, 1.5), [V]),
    ("rsub", lambda t, x, y: t.rsub(x, y, alpha=2.0), [V, W]),
    ("sub_alpha", lambda t, x, y: t.sub(x, y, alpha=0.5), [V, W]),
    ("to_copy", lambda t, x: x.to(t.float32).to(t.float64) * 1.0, [V]),
    ("squeeze_", lambda t, x, y: t.matmul(x[0], y.T), [V, W]),   # vector @ matrix squeezes in place
    ("index_fill_tensor", lambda t, x, v: x.index_fill(1, t.tensor([0, 2]), v.sum()), [V, W]),
    ("index_put_accumulate", lambda t, x, y: t.index_put(x, (t.tensor([1, 0, 1]),), y[0, :4] * 1.0,
                                                         accumulate=True), [V, W]),
    ("round_decimals", lambda t, x: t.round(x + 0.013, decimals=1) * x, [V]),   # away from .x5 ties
    ("cross_entropy_probabilities", lambda t, x, y: t.nn.functional.cross_entropy(x, t.softmax(y, 1)), [V, W]),
    ("nll_loss2d", lambda t, x: t.nn.functional.nll_loss(t.log_softmax(x.reshape(2, 2, 2, 1), 1),
                                                         t.tensor(LABELS.reshape(2, 1, 1) % 2).expand(2, 2, 1)), [V]),
    # the in-place view ops, on a non-leaf (a leaf that requires grad refuses them)
    ("unsqueeze_", lambda t, x: (x * x).unsqueeze_(1), [V]),
    ("squeeze_all", lambda t, x: (x * x)[None].squeeze_(), [V]),
    ("squeeze_dims", lambda t, x: (x * x)[:, None, :, None].squeeze_((1, 3)), [V]),
    ("transpose_", lambda t, x, y: (x * y).transpose_(0, 1) @ y, [V, W]),
    ("t_", lambda t, x, y: (x * y).t_() @ y, [V, W]),
    # the in-place writes that replace a non-leaf's values: the old values get a zero gradient (a
    # sample times 0 keeps the finite differences exact)
    ("zero_", lambda t, x: (x * 1).zero_() + x, [V]),
    ("fill_", lambda t, x: (x * 1).fill_(2.0) * x, [V]),
    ("uniform_", lambda t, x: (x * 1).uniform_() * 0 + x, [V]),
    ("normal_", lambda t, x: (x * 1).normal_() * 0 + x, [V]),
    ("bernoulli_", lambda t, x: (x * 1).bernoulli_(0.5) * 0 + x, [V]),
    ("bernoulli_tensor", lambda t, x: (x * 1).bernoulli_(t.full_like(x, 0.5)) * 0 + x, [V]),
    ("exponential_", lambda t, x: (x * 1).exponential_() * 0 + x, [V]),
    ("cauchy_", lambda t, x: (x * 1).cauchy_() * 0 + x, [V]),
    ("log_normal_", lambda t, x: (x * 1).log_normal_() * 0 + x, [V]),
    ("geometric_", lambda t, x: (x * 1).geometric_(0.5) * 0 + x, [V]),
    ("random_", lambda t, x: (x * 1).random_() * 0 + x, [V]),
    ("random_to", lambda t, x: (x * 1).random_(5) * 0 + x, [V]),
    ("random_from_to", lambda t, x: (x * 1).random_(1, 5) * 0 + x, [V]),
    # torch._weight_norm, the node of nn.utils.parametrizations.weight_norm: over the first dim, then the last
    ("weight_norm", lambda t, v, g: _weight_norm(t)(v, g[:, :1], 0), [V, W]),
    ("weight_norm_last", lambda t, v, g: _weight_norm(t)(v, g[:1], 1), [V, W]),
]


def _weight_norm(lib):
    return lib._weight_norm if lib is not gradviz else gradviz.functions.nnops._weight_norm


@pytest.mark.parametrize("name, prog, arrays", EXTRA, ids=[row[0] for row in EXTRA])
def test_extra_gradcheck(name, prog, arrays):
    xs = tuple(gradviz.tensor(a, dtype=gradviz.float64, requires_grad=True) for a in arrays)
    eps = 1e-3 if name == "to_copy" else 1e-6   # a float32 round trip in the middle
    assert gradviz.autograd.gradcheck(lambda *a: prog(gradviz, *a), xs, eps=eps)


@pytest.mark.torch
@pytest.mark.parametrize("name, prog, arrays", EXTRA, ids=[row[0] for row in EXTRA])
def test_extra_parity(name, prog, arrays):
    real = pytest.importorskip("torch")
    results = []
    for lib in (gradviz, real):
        xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out = prog(lib, *xs)
        out.backward(lib.ones_like(out))
        results.append((out.detach().numpy(), [x.grad.numpy() for x in xs], type(out.grad_fn).__name__))
    (ours, our_grads, our_name), (theirs, their_grads, their_name) = results
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)
    assert our_name == their_name
