"""The op registry (gradviz.ops.registry.OPS) read as a table: every record's display fields
fit its arity, and every differentiable record is reached by a row of tests/ops/cases.py that
runs under gradcheck (tests/ops/test_gradcheck.py) and by one compared with PyTorch
(tests/ops/test_torch_parity.py).

Adding an op: write its record in gradviz/ops/<module>.py (forward, vjp, its formulas in LaTeX, and
`symbols=` when the inputs are not a, b, ...), then add one row to tests/ops/cases.py that asks
for both checks. This test names exactly what is missing.
"""
import warnings
from collections import Counter

import numpy as np
import pytest
from tests.ops.cases import CHECKS, OP_CASES, OpCase
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
    "search.HISTOGRAM": "histogram has no derivative in PyTorch either (NotImplemented)",
    "index.DELAYED_ERROR": "torch's Error node: its backward raises, as torch's (tests/ops/test_unstable_sorts.py)",
}


# records with a gradient test outside the case table, that the generic runner below cannot reach:
# known gaps, listed so that every other record stays covered (give one a row to drop it here)
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
    from gradviz.torch_bridge import op_table as _op_table
    table = _op_table()
    for torch_name, op in by_torch_name().items():
        assert table[torch_name] is op


# -- which records the rows of the case table reach ----------------------------------------------------
def _tensor(item, rng):
    if isinstance(item, np.ndarray):
        return gradviz.tensor(item.astype(np.float64) if item.dtype.kind == "f" else item,
                              requires_grad=item.dtype.kind == "f")
    return gradviz.tensor(sample(item, rng), dtype=gradviz.float64,
                          requires_grad=len(item) < 3 or bool(item[2]))


def _inputs(case: OpCase) -> list:
    """The row's inputs; a "unary" or "binary" row's domains at shape (3, 4)."""
    return [((3, 4), d) for d in case.inputs] if case.group in ("unary", "binary") else list(case.inputs)


def _reached(cases) -> set:
    """Records whose nodes the rows create, forward and in a create_graph backward."""
    found: set = set()

    def listener(event):
        if type(event) is events.NodeCreated:
            found.add(id(event.node.op))

    with events.listen(listener), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            try:
                rng = rng_for(case.name)
                xs = [_tensor(item, rng) for item in _inputs(case)]
                out = case.fn(gradviz, *xs)
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
            except Exception:   # a row this generic runner cannot drive: its own check still runs it
                continue
    return found


# the checks that count as a finite-difference case and as a PyTorch parity case
GRADCHECKS = ("gradcheck", "gradgradcheck")
PARITY_CHECKS = ("parity", "parity_second", "float32")

# records that need a second device, whose cases run on the strict stand-in for CuPy instead
ON_A_SECOND_DEVICE = {"shape.TO_DEVICE": "tests/ops/test_device_parity.py::test_moving_between_devices_is_differentiable"}


def _missing(checks) -> list:
    reached = _reached([case for case in OP_CASES if any(case.runs(check) for check in checks)])
    return sorted(name for name, op in _differentiable().items() if id(op) not in reached and name not in ON_A_SECOND_DEVICE)


def test_every_differentiable_record_has_a_gradcheck_case():
    missing = _missing(GRADCHECKS)
    assert not missing, ("records with no finite-difference case: add a row for each to tests/ops/cases.py "
                         f"(section(\"function\", ...) takes any op): {', '.join(missing)}")


@pytest.mark.torch
def test_every_differentiable_record_has_a_parity_case():
    pytest.importorskip("torch")
    missing = _missing(PARITY_CHECKS)
    assert not missing, ("records with no PyTorch parity case: add a row for each to tests/ops/cases.py "
                         f"(section(\"function\", ...) takes any op): {', '.join(missing)}")


def test_row_names_are_unique_within_a_group_and_a_check():
    seen = Counter((case.group, case.name, check) for case in OP_CASES for check in case.checks)
    assert not [key for key, n in seen.items() if n > 1]
    assert all(set(case.checks) <= set(CHECKS) and set(case.skips) <= case.checks for case in OP_CASES)
