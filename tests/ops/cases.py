"""The one table of op test cases, in the style of PyTorch's op_db: every row is an OpCase (a
program written once over a library `t`, gradviz or torch, its inputs, and which checks apply).

The checks read it: tests/ops/test_gradcheck.py runs the "gradcheck" and "gradgradcheck" rows
against finite differences, tests/ops/test_torch_parity.py runs the "parity", "parity_second" and
"float32" rows against PyTorch through tests/support/parity.py, and tests/ops/test_registry.py
finds every differentiable record reached by some gradcheck row and some parity row. Adding an
op: add one row here, to the section of its kind (any op fits a `section("function", ...)`).

An input is (shape, domain[, requires_grad]) with a domain of tests/support/op_inputs.py, or a fixed
array. Rows of the groups "unary" and "binary" give only their domains: the tests run them on every
shape of SHAPES and every pair of PAIRS.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

import gradviz
from tests.support.op_inputs import SHAPES

R = "real"

# the checks a row can ask for
CHECKS = ("gradcheck",       # first derivatives against central finite differences, in float64
          "gradgradcheck",   # the gradient's own gradient (create_graph=True) against finite differences
          "parity",          # values, dtypes, gradients and the grad_fn graph against PyTorch
          "parity_second",   # second derivatives against PyTorch's
          "float32")         # values, dtypes and gradients against PyTorch in float32, the default dtype


@dataclass(frozen=True)
class OpCase:
    """One row: a program over a library, its inputs, and which checks run it with what settings."""
    group: str                 # the kind of op: the section of this table it lives in
    name: str                  # unique within the group and a check; the test id is group/name
    fn: Callable               # fn(t, *inputs), t being gradviz or torch
    inputs: tuple              # one input per argument of fn (domains only in "unary" and "binary")
    checks: frozenset          # which of CHECKS run it
    more_inputs: tuple = ()    # further input lists that gradcheck runs too (PyTorch parity runs on `inputs`)
    gradcheck: dict = field(default_factory=dict)   # eps and atol, where gradcheck's defaults do not fit
    dtypes: tuple = ("float64",)                    # the dtypes PyTorch parity runs in
    tol: dict = field(default_factory=dict)         # dtype -> the parity harness's rtol, atol, grad_rtol, grad_atol
    graph: str = "whole"       # how much of the grad_fn graph parity compares: "whole", "names", "root", "none"
    skips: dict = field(default_factory=dict)       # check -> why it does not apply to this row

    @property
    def id(self) -> str:
        return f"{self.group}/{self.name}"

    def runs(self, check: str) -> bool:
        return check in self.checks and check not in self.skips


def section(group: str, checks: tuple, rows, **options) -> list[OpCase]:
    """OpCases from rows (name, fn, inputs[, overrides]) or (name, fn, *domains) sharing one group, its
    checks and options; a row's trailing dict overrides the options for that row."""
    cases = []
    for name, fn, *rest in rows:
        own = rest.pop() if rest and isinstance(rest[-1], dict) else {}
        assert isinstance(rest[0], str) or len(rest) == 1, f"{group}/{name}: one list of inputs"
        inputs = tuple(rest) if isinstance(rest[0], str) else tuple(rest[0])
        cases.append(OpCase(group, name, fn, inputs, frozenset(checks), **{**options, **own}))
    return cases


def function(name: str) -> Callable:
    """The library's own function by that name, applied to the inputs: function("exp")(t, a) is t.exp(a)."""
    def call(t, *inputs):
        return getattr(t, name)(*inputs)
    call.__name__ = name
    return call


def F(t):
    """The library's nn.functional."""
    return t.nn.functional


def select(check: str, *groups: str) -> list[OpCase]:
    """The rows that run `check`, of the given groups (all groups when none is given)."""
    return [case for case in OP_CASES if case.runs(check) and (not groups or case.group in groups)]


def find(name: str, *groups: str) -> OpCase:
    """The row of that name in one of the groups (the first, where a gradcheck and a parity row share it)."""
    return next(case for case in OP_CASES if case.name == name and case.group in groups)


def _reversed_T(a):
    """a.T of any number of dims, without the warning torch gives for other than 2."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return a.T


OP_CASES: list[OpCase] = []

# -- elementwise, one input: every row runs on every shape of SHAPES (and at (3, 4) in float32) ------------
# against finite differences and against PyTorch
OP_CASES += section("unary", ("gradcheck", "parity", "float32"), [
    ("neg", lambda t, a: -a, "real"),
    ("abs", lambda t, a: t.abs(a), "away"),
    ("exp", lambda t, a: t.exp(a), "real"),
    ("log", lambda t, a: t.log(a), "pos"),
    ("log1p", lambda t, a: t.log1p(a), "gt-1"),
    ("rsqrt", lambda t, a: t.rsqrt(a), "pos"),
    ("sin", lambda t, a: t.sin(a), "real"),
    ("tan", lambda t, a: t.tan(a), "unit"),
    ("tanh", lambda t, a: t.tanh(a), "real"),
    ("sigmoid", lambda t, a: t.sigmoid(a), "real"),
    ("relu", lambda t, a: t.relu(a), "away"),
    ("gelu", lambda t, a: F(t).gelu(a), "real"),
    ("gelu_tanh", lambda t, a: F(t).gelu(a, approximate="tanh"), "real"),
    ("softplus", lambda t, a: F(t).softplus(a), "real"),
    ("erf", lambda t, a: t.erf(a), "real"),
    ("clamp", lambda t, a: t.clamp(a, -0.5, 0.5), "real"),
    ("sign", lambda t, a: t.sign(a), "away"),
    ("reciprocal", lambda t, a: t.reciprocal(a), "away"),
    ("pow_2", lambda t, a: a ** 2, "real"),
])

# against finite differences only
OP_CASES += section("unary", ("gradcheck",), [
    ("neg_fn", function("neg"), "real"),
    ("abs_builtin", lambda t, a: abs(a), "away"),
    ("sqrt", function("sqrt"), "pos"),
    ("cos", function("cos"), "real"),
    ("leaky_relu", lambda t, a: t.nn.functional.leaky_relu(a), "away"),
    ("leaky_relu_0.2", lambda t, a: t.nn.functional.leaky_relu(a, 0.2), "away"),
    ("softplus_beta2_threshold1", lambda t, a: t.nn.functional.softplus(a, beta=2.0, threshold=1.0), "real"),
    ("clamp_min", lambda t, a: a.clamp(min=-0.3), "real"),
    ("clamp_max", lambda t, a: a.clamp(max=0.3), "real"),
    ("clip", lambda t, a: a.clip(-1.0, 0.2), "real"),
    ("pow_3", lambda t, a: a.pow(3), "real"),
    ("pow_int_0", lambda t, a: a ** 0, "real"),
    ("pow_1", lambda t, a: a ** 1, "real"),
    ("pow_0.5", lambda t, a: a ** 0.5, "pos"),
    ("pow_-1.5", lambda t, a: t.pow(a, -1.5), "pos"),
    ("pow_-2", lambda t, a: a ** -2, "away"),
    ("rpow_2", lambda t, a: 2 ** a, "real"),
    ("rpow_0.5", lambda t, a: 0.5 ** a, "real"),
    ("rpow_fn", lambda t, a: t.pow(3.0, a), "real"),
    ("add_scalar", lambda t, a: a + 2.5, "real"),
    ("radd_scalar", lambda t, a: 2.5 + a, "real"),
    ("sub_scalar", lambda t, a: a - 2.5, "real"),
    ("rsub_scalar", lambda t, a: 2.5 - a, "real"),
    ("rsub_int", lambda t, a: 1 - a, "real"),
    ("mul_scalar", lambda t, a: a * 2.5, "real"),
    ("rmul_scalar", lambda t, a: -1.5 * a, "real"),
    ("div_scalar", lambda t, a: a / 2.5, "real"),
    ("rdiv_scalar", lambda t, a: 2.5 / a, "away"),
    ("add_alpha", lambda t, a: a.add(a, alpha=2), "real"),
    ("square_by_mul", lambda t, a: a * a, "real"),
    ("x_over_x", lambda t, a: a / a.exp(), "real"),
    ("where_self", lambda t, a: t.where(a > 0, a, a * a), "away"),
    ("where_scalar_other", lambda t, a: t.where(a > 0, a, 0.0), "away"),
    ("where_scalar_self", lambda t, a: t.where(a > 0, 1.0, a), "away"),
    ("masked_fill", lambda t, a: a.masked_fill(a < 0, 2.0), "away"),
])


# against PyTorch only
OP_CASES += section("unary", ("parity", "float32"), [
    ("sqrt", lambda t, a: a.sqrt(), "pos"),
    ("cos", lambda t, a: a.cos(), "real"),
    ("F.relu", lambda t, a: F(t).relu(a), "away"),
    ("leaky_relu", lambda t, a: F(t).leaky_relu(a, 0.2), "away"),
    ("softplus_beta", lambda t, a: F(t).softplus(a, beta=2.0, threshold=1.0), "real"),
    ("clamp_min", lambda t, a: a.clamp(min=0.1), "real"),
    ("clamp_tensor_min", lambda t, a: a.clamp(min=t.zeros(a.shape, dtype=t.float64)), "away"),
    ("pow_-1.5", lambda t, a: a.pow(-1.5), "pos"),
    ("pow_0", lambda t, a: a ** 0, "real"),
    ("rpow", lambda t, a: 2 ** a, "real"),
    ("radd", lambda t, a: 1.5 + a, "real"),
    ("rsub", lambda t, a: 1.5 - a, "real"),
    ("rmul", lambda t, a: 1.5 * a, "real"),
    ("rdiv", lambda t, a: 1.5 / a, "away"),
    ("sub_scalar", lambda t, a: a - 1, "real"),
    ("div_scalar", lambda t, a: a / 3, "real"),
    ("where_scalar", lambda t, a: t.where(a > 0, a, 0.0), "away"),
    ("masked_fill", lambda t, a: a.masked_fill(a < 0, 1.0), "away"),
])


# -- elementwise, two inputs: every row on every pair of PAIRS (same shapes and broadcast pairs); against
# PyTorch also with one input requiring grad at a time, and at ((3, 4), (4,)) in float32 ------------------
# against finite differences and against PyTorch
OP_CASES += section("binary", ("gradcheck", "parity", "float32"), [
    ("add", lambda t, a, b: a + b, "real", "real"),
    ("sub", lambda t, a, b: a - b, "real", "real"),
    ("mul", lambda t, a, b: a * b, "real", "real"),
    ("div", lambda t, a, b: a / b, "real", "away"),
    ("pow", lambda t, a, b: a ** b, "pos", "real"),
    ("maximum", lambda t, a, b: t.maximum(a, b), "distinct", "distinct"),
    ("minimum", lambda t, a, b: t.minimum(a, b), "distinct", "distinct"),
])

# against finite differences only
OP_CASES += section("binary", ("gradcheck",), [
    ("add_fn_alpha", lambda t, a, b: t.add(a, b, alpha=-2), "real", "real"),
    ("sub_alpha", lambda t, a, b: a.sub(b, alpha=0.5), "real", "real"),
    ("pow_fn", lambda t, a, b: t.pow(a, b), "pos", "real"),
    ("max_other", lambda t, a, b: t.max(a, b), "distinct", "distinct"),
    ("min_other", lambda t, a, b: t.min(a, b), "distinct", "distinct"),
    ("where", lambda t, a, b: t.where((a + b) > 0, a, b), "away", "away"),
    ("clamp_tensor_bounds", lambda t, a, b: t.clamp(a, min=b, max=b + 1), "real", "real"),
    ("clamp_tensor_max", lambda t, a, b: a.clamp(max=b), "real", "real"),
    ("where_fixed_cond", lambda t, a, b: t.where(t.tensor([True, False, False, True]), a, b), "real", "real"),
    ("composite", lambda t, a, b: (a * b).sin() / (b * b + 1), "real", "real"),
])


# against PyTorch only
OP_CASES += section("binary", ("parity", "float32"), [
    ("add_alpha", lambda t, a, b: t.add(a, b, alpha=2), "real", "real"),
    ("clamp_by_tensors", lambda t, a, b: t.clamp(a, min=b, max=b + 1), "real", "real"),
    ("clamp_max_tensor", lambda t, a, b: a.clamp(max=b), "real", "real"),
    ("where", lambda t, a, b: t.where(a > b, a, b * 2), "real", "real"),
])


# -- reductions ---------------------------------------------------------------------------------------
def _reductions_on_every_shape():
    """sum, mean, amax, ... over every dim, keepdim and correction (finite differences)."""
    table = []
    for shape in SHAPES + [(2, 3, 4)]:
        nd = len(shape)
        dims = [None] + list(range(-1, nd)) if nd else [None, 0, -1]
        if nd >= 2:
            dims += [(0, 1), (-1, 0)]
        if nd == 3:
            dims += [(0, 2)]
        for dim in dims:
            for keep in (False, True):
                if dim is None and keep:
                    continue
                kw = {} if dim is None else {"dim": dim, "keepdim": keep}
                tag = f"{shape}-dim={dim}-keep={keep}"
                table += [
                    (f"sum-{tag}", lambda t, a, kw=kw: a.sum(**kw), [(shape, "real")]),
                    (f"mean-{tag}", lambda t, a, kw=kw: a.mean(**kw), [(shape, "real")]),
                    (f"amax-{tag}", lambda t, a, kw=kw: a.amax(**kw),
                     [(shape, "distinct")]),
                    (f"amin-{tag}", lambda t, a, kw=kw: t.amin(a, **kw) if kw else a.amin(), [(shape, "distinct")]),
                    (f"logsumexp-{tag}", lambda t, a, kw=kw: t.logsumexp(a, kw.get("dim", tuple(range(a.ndim))),
                                                                          kw.get("keepdim", False)),
                     [(shape, "real")]),
                ]
                n = int(np.prod([shape[d] for d in ((dim,) if isinstance(dim, int) else dim)])) \
                    if dim is not None and nd else int(np.prod(shape, dtype=int))
                for corr in (0, 1, 2):
                    if n - corr <= 0:
                        continue   # nan (n ≤ correction), as in PyTorch
                    table.append((f"var-c{corr}-{tag}", lambda t, a, kw=kw, c=corr: a.var(correction=c, **kw),
                                  [(shape, "real")]))
                    if n > 1:   # std of one element is 0: not differentiable there
                        table.append((f"std-c{corr}-{tag}", lambda t, a, kw=kw, c=corr: a.std(correction=c, **kw),
                                      [(shape, "real")]))
                if n > 1:
                    table.append((f"var-unbiased-false-{tag}", lambda t, a, kw=kw: t.var(a, unbiased=False, **kw),
                                  [(shape, "real")]))
                    table.append((f"std-unbiased-{tag}", lambda t, a, kw=kw: t.std(a, unbiased=True, **kw),
                                  [(shape, "real")]))
                for p in (1, 2, 3, float("inf"), "fro"):
                    if p == "fro" and dim is not None and isinstance(dim, int):
                        continue
                    domain = "distinct" if p == float("inf") else "away"
                    table.append((f"norm-p{p}-{tag}", lambda t, a, kw=kw, p=p: a.norm(p=p, **kw), [(shape, domain)]))
                if dim is None or isinstance(dim, int):
                    if dim is None:
                        table.append((f"prod-{tag}", lambda t, a: a.prod(), [(shape, "real")]))
                        table.append((f"max-{tag}", lambda t, a: a.max(), [(shape, "distinct")]))
                        table.append((f"min-{tag}", lambda t, a: t.min(a), [(shape, "distinct")]))
                    else:
                        table += [
                            (f"prod-{tag}", lambda t, a, kw=kw: a.prod(**kw), [(shape, "real")]),
                            (f"max-{tag}", lambda t, a, kw=kw: a.max(**kw).values, [(shape, "distinct")]),
                            (f"min-{tag}", lambda t, a, kw=kw: t.min(a, **kw)[0], [(shape, "distinct")]),
                            (f"softmax-{tag}", lambda t, a, d=dim: t.softmax(a, d), [(shape, "real")]),
                            (f"log_softmax-{tag}", lambda t, a, d=dim: a.log_softmax(d), [(shape, "real")]),
                            (f"cumsum-{tag}", lambda t, a, d=dim: t.cumsum(a, d), [(shape, "real")]),
                        ]
    # de-duplicate (keepdim does not change softmax, cumsum)
    seen, out = set(), []
    for name, fn, specs in table:
        key = name.replace("-keep=True", "-keep=False") if name.split("-")[0] in (
            "softmax", "log_softmax", "cumsum") else name
        if key not in seen:
            seen.add(key)
            out.append((name, fn, specs))
    return out



OP_CASES += section("reduction", ("gradcheck",), _reductions_on_every_shape())


def _reductions_against_torch():
    """The reductions over dims and keepdim, as the PyTorch parity rows."""
    table = []
    for shape, dims in [((), [None, 0, -1]), ((4,), [None, 0, -1]), ((3, 4), [None, 0, 1, -1, (0, 1)]),
                        ((1, 4), [None, 0, 1]), ((2, 3, 4), [None, 1, (0, 2), (-1, 0)])]:
        for dim in dims:
            for keep in ([False] if dim is None else [False, True]):
                kw = {} if dim is None else {"dim": dim, "keepdim": keep}
                tag = f"{shape}-{dim}-{keep}"
                single = dim is None or isinstance(dim, int)
                n = int(np.prod(shape if dim is None or not shape else
                                [shape[d] for d in ((dim,) if isinstance(dim, int) else dim)], dtype=int))
                table += [
                    (f"sum-{tag}", lambda t, a, kw=kw: a.sum(**kw), [(shape, R)]),
                    (f"mean-{tag}", lambda t, a, kw=kw: t.mean(a, **kw), [(shape, R)]),
                    (f"amax-{tag}", lambda t, a, kw=kw: a.amax(**kw), [(shape, "distinct")]),
                    (f"amin-{tag}", lambda t, a, kw=kw: t.amin(a, **kw), [(shape, "distinct")]),
                    (f"norm-{tag}", lambda t, a, kw=kw: a.norm(**kw), [(shape, "away")]),
                    (f"norm1-{tag}", lambda t, a, kw=kw: a.norm(p=1, **kw), [(shape, "away")]),
                    (f"norm3-{tag}", lambda t, a, kw=kw: t.norm(a, p=3, **kw), [(shape, "away")]),
                    (f"norminf-{tag}", lambda t, a, kw=kw: a.norm(p=float("inf"), **kw), [(shape, "distinct")]),
                ]
                if dim is not None:
                    table.append((f"logsumexp-{tag}", lambda t, a, kw=kw: t.logsumexp(a, **kw), [(shape, R)]))
                for corr in (0, 1, 2):
                    if n - corr > 0 and n > 1:
                        table.append((f"var-{corr}-{tag}", lambda t, a, kw=kw, c=corr: a.var(correction=c, **kw),
                                      [(shape, R)]))
                        table.append((f"std-{corr}-{tag}", lambda t, a, kw=kw, c=corr: t.std(a, correction=c, **kw),
                                      [(shape, R)]))
                if n > 1:
                    table.append((f"var-unbiased=False-{tag}", lambda t, a, kw=kw: a.var(unbiased=False, **kw),
                                  [(shape, R)]))
                if single:
                    if dim is None:
                        table += [(f"prod-{tag}", lambda t, a: a.prod(), [(shape, R)]),
                                  (f"max-{tag}", lambda t, a: a.max(), [(shape, "distinct")]),
                                  (f"min-{tag}", lambda t, a: t.min(a), [(shape, "distinct")])]
                    else:
                        table += [
                            (f"prod-{tag}", lambda t, a, kw=kw: a.prod(**kw), [(shape, R)]),
                            (f"max-{tag}", lambda t, a, kw=kw: a.max(**kw).values, [(shape, "distinct")]),
                            (f"min-{tag}", lambda t, a, kw=kw: t.min(a, **kw)[0], [(shape, "distinct")]),
                            (f"max-indices-{tag}", lambda t, a, kw=kw: a.max(**kw).indices.double() * a.sum(),
                             [(shape, "distinct")]),
                        ]
                        if not keep:
                            table += [
                                (f"softmax-{tag}", lambda t, a, d=dim: t.softmax(a, d), [(shape, R)]),
                                (f"log_softmax-{tag}", lambda t, a, d=dim: F(t).log_softmax(a, dim=d), [(shape, R)]),
                                (f"cumsum-{tag}", lambda t, a, d=dim: a.cumsum(d), [(shape, R)]),
                            ]
    return table


OP_CASES += section("reduction", ("parity",), _reductions_against_torch())

TIES = np.random.default_rng(5).integers(0, 4, (4, 20)).astype(float)   # repeats, long enough for introsort
TIES[1, [2, 7]] = TIES[3, :] = np.nan
ZERO_ENTRIES = np.array([[0.0, 1.0, -2.0], [0.0, 0.0, 0.0]])   # a zero entry, a zero row: torch's subgradient 0
OP_CASES += section("reduction", ("parity",), [
    ("sum_dim_empty_tuple", lambda t, a: a.sum(dim=()), [((2, 3), R)]),
    ("mean_dim_empty_list", lambda t, a: a.mean(dim=[]), [((2, 3), R)]),
    ("sum_dim_list", lambda t, a: a.sum(dim=[1, 0], keepdim=True), [((2, 3), R)]),
    ("norm_p0", lambda t, a: a.norm(p=0) * a, [np.array([1.0, 0.0, -2.0])]),
    ("norm_zero_entries", lambda t, a: a.norm(p=1.5, dim=1) + a.norm(p=0.5, dim=1) + a.norm(p=-1, dim=1),
     [ZERO_ENTRIES]),
    ("std_positional_unbiased", lambda t, a: a.std(0, False), [((2, 3), R)]),
    ("var_keepdim_all", lambda t, a: a.var(dim=None, keepdim=True), [((2, 3), R)]),
    ("amax_tuple", lambda t, a: a.amax(dim=(0, 1)), [((2, 3), "distinct")]),
    ("masked_softmax", lambda t, a: a.masked_fill(t.tensor([[False, True, False]]), float("-inf")).softmax(-1),
     [((2, 3), R)]),
    ("masked_log_softmax", lambda t, a: a.masked_fill(t.tensor([False, True, False]), float("-inf")).log_softmax(0),
     [((3,), R)]),
    ("softmax_extremes", lambda t, a: t.softmax(a * 1000, -1) + t.log_softmax(a * 1000, -1).exp(), [((3,), R)]),
    # repeated values: the index torch's unstable sorts report (mode's run end, a median's tie, NaN rows)
    ("mode_ties", lambda t, a: a.mode(1), [TIES]),
    ("mode_ties_dim0_keepdim", lambda t, a: t.mode(a, 0, True), [TIES]),
    ("median_dim_nan", lambda t, a: a.median(1), [TIES]),
    ("nanmedian_dim_nan", lambda t, a: a.nanmedian(1), [TIES]),
    ("nanmedian_nan", lambda t, a: a.nanmedian() * a[2].nanmedian(), [TIES]),
])

# dtype= casts the input before the reduction runs: the node is the reduction's own (torch records
# no ToCopyBackward0 for sum, mean, prod, nansum, cumsum, cumprod; softmax does), ḡ goes back in the leaf's dtype;
# the values are float32's
ROUNDED_TO_FLOAT32 = {"float64": dict(rtol=1e-5, atol=1e-6)}
OP_CASES += section("reduction", ("parity",), [
    ("sum_dtype", lambda t, a: a.sum(dtype=t.float32), [((3, 4), R)]),
    ("sum_dim_dtype", lambda t, a: t.sum(a, 1, dtype=t.float32) ** 2, [((3, 4), R)]),
    ("mean_keepdim_dtype", lambda t, a: a.mean(0, keepdim=True, dtype=t.float32) ** 2, [((3, 4), R)]),
    ("prod_dtype", lambda t, a: a.prod(dtype=t.float32), [((2, 3), R)]),
    ("prod_dim_dtype", lambda t, a: a.prod(1, dtype=t.float32), [np.array([[2.0, 0.0, 3.0], [1.5, -2.0, 0.5]])]),
    ("nansum_dtype", lambda t, a: a.nansum(1, dtype=t.float32), [((3, 4), R)]),
    ("cumsum_dtype", lambda t, a: a.cumsum(1, dtype=t.float32) ** 2, [((3, 4), R)]),
    ("cumprod_dtype", lambda t, a: a.cumprod(0, dtype=t.float32), [((3, 4), R)]),
    ("softmax_dtype", lambda t, a: t.softmax(a, 1, dtype=t.float32), [((3, 4), R)]),
    ("log_softmax_dtype", lambda t, a: F(t).log_softmax(a, 0, dtype=t.float32), [((3, 4), R)]),
], tol=ROUNDED_TO_FLOAT32)


# -- linear algebra ------------------------------------------------------------------------------------
_MATMUL_SHAPES = [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 5)), ((3, 4), (4, 5)), ((1, 4), (4, 1)),
                 ((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 3, 4), (4,)),
                 ((4,), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 5)), ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (1, 4, 5)),
                 ((2, 2, 3, 4), (2, 4, 2)), ((2, 1, 3, 4), (1, 2, 4, 2))]
# against finite differences and against PyTorch
OP_CASES += section("linalg", ("gradcheck", "parity", "float32"), [
    ("mm", lambda t, a, b: t.mm(a, b), [((3, 4), R), ((4, 5), R)]),
    ("bmm", lambda t, a, b: t.bmm(a, b), [((2, 3, 4), R), ((2, 4, 5), R)]),
    ("dot", lambda t, a, b: t.dot(a, b), [((4,), R), ((4,), R)]),
    ("vdot", lambda t, a, b: t.vdot(a, b) * t.linalg.vecdot(b, a), [((4,), R), ((4,), R)]),
    ("mv", lambda t, a, b: t.mv(a, b), [((3, 4), R), ((4,), R)]),
    ("outer", lambda t, a, b: t.outer(a, b), [((3,), R), ((4,), R)]),
    ("trace", lambda t, a: t.trace(a), [((3, 4), R)]),
    ("addmm", lambda t, b, x, y: t.addmm(b, x, y), [((5,), R), ((3, 4), R), ((4, 5), R)]),
    ("addmm_2d_bias", lambda t, b, x, y: t.addmm(b, x, y), [((3, 5), R), ((3, 4), R), ((4, 5), R)]),
    ("addmm_beta_alpha", lambda t, b, x, y: t.addmm(b, x, y, beta=0.5, alpha=2.0),
     [((5,), R), ((3, 4), R), ((4, 5), R)]),
    ("linear", lambda t, x, w, b: F(t).linear(x, w, b), [((3, 4), R), ((5, 4), R), ((5,), R)]),
    ("linear_3d", lambda t, x, w, b: F(t).linear(x, w, b), [((2, 3, 4), R), ((5, 4), R), ((5,), R)]),
    ("linear_1d", lambda t, x, w, b: F(t).linear(x, w, b), [((4,), R), ((5, 4), R), ((5,), R)]),
])

# against finite differences only
_LINALG = [
    ("mm_outer_shape", function("mm"), [((3, 1), "real"), ((1, 2), "real")]),
    ("trace_square", lambda t, a: a.trace(), [((4, 4), "real")]),
    ("trace_tall", function("trace"), [((4, 2), "real")]),
    ("addmm_col_bias", function("addmm"), [((3, 1), "real"), ((3, 4), "real"), ((4, 5), "real")]),
    ("addmm_scalar_bias", function("addmm"), [((), "real"), ((3, 4), "real"), ((4, 5), "real")]),
    ("linear_nobias", lambda t, x, w: t.nn.functional.linear(x, w), [((3, 4), "real"), ((5, 4), "real")]),
]
for _off in (0, 1, -1, 2, -2, 3):
    _LINALG.append((f"diagonal_{_off}", lambda t, a, o=_off: t.diagonal(a, o), [((3, 4), "real")]))
_LINALG += [
    ("diagonal_3d_dims12", lambda t, a: a.diagonal(0, 1, 2), [((2, 3, 4), "real")]),
    ("diagonal_3d_dims20_off1", lambda t, a: t.diagonal(a, 1, 2, 0), [((2, 3, 4), "real")]),
    ("diagonal_neg_dims", lambda t, a: t.diagonal(a, -1, -1, -2), [((2, 3, 4), "real")]),
    ("diagonal_square", lambda t, a: t.diagonal(a), [((1, 4), "real")]),
]
for _sa, _sb in _MATMUL_SHAPES:
    _LINALG.append((f"matmul_{_sa}@{_sb}", lambda t, a, b: a @ b, [(_sa, "real"), (_sb, "real")]))
    _LINALG.append((f"matmul_fn_{_sa}@{_sb}", function("matmul"), [(_sa, "real"), (_sb, "real")]))

OP_CASES += section("linalg", ("gradcheck",), _LINALG)

# against PyTorch only
OP_CASES += section("linalg", ("parity", "float32"), [
    ("linear_no_bias", lambda t, x, w: F(t).linear(x, w), [((3, 4), R), ((5, 4), R)]),
    ("linear_const_input", lambda t, x, w, b: F(t).linear(x, w, b), [((3, 4), R, False), ((5, 4), R), ((5,), R)]),
    ("linear_4d_no_bias", lambda t, x, w: F(t).linear(x, w), [((2, 2, 3, 4), R), ((5, 4), R)]),
    ("linear_2d_bias", lambda t, x, w, b: F(t).linear(x, w, b), [((2, 3, 4), R), ((5, 4), R), ((3, 5), R)]),
    ("linear_transposed_input", lambda t, x, w, b: F(t).linear(x.transpose(0, 1), w, b),
     [((2, 3, 4), R), ((5, 4), R), ((5,), R)]),
    ("diagonal", lambda t, a: t.diagonal(a), [((3, 4), R)]),
    ("diagonal_offsets", lambda t, a: t.diagonal(a, 1).sum() + a.diagonal(-1).sum() + a.diagonal(3).sum(),
     [((3, 4), R)]),
    ("diagonal_3d", lambda t, a: a.diagonal(0, 1, 2), [((2, 3, 4), R)]),
    ("diagonal_reshape", lambda t, a: a.diagonal().reshape(3, 1), [((3, 4), R)]),
])


# -- shape ops -----------------------------------------------------------------------------------------
# against finite differences and against PyTorch
OP_CASES += section("shape", ("gradcheck", "parity"), [
    ("flatten", lambda t, a: t.flatten(a), [((2, 3, 4), R)]),
    ("flatten_scalar", lambda t, a: a.flatten(), [((), R)]),
    ("flatten_1", lambda t, a: a.flatten(1), [((2, 3, 4), R)]),
    ("squeeze", lambda t, a: a.squeeze(), [((1, 4), R)]),
    ("squeeze_dims", lambda t, a: a.squeeze((0, 2)), [((1, 4, 1), R)]),
    ("transpose", lambda t, a: a.transpose(0, 1), [((3, 4), R)]),
    ("permute", lambda t, a: a.permute(2, 0, 1), [((2, 3, 4), R)]),
    ("t", lambda t, a: a.t(), [((3, 4), R)]),
    ("T", lambda t, a: a.T, [((3, 4), R)]),
    ("T_3d", lambda t, a: _reversed_T(a), [((2, 3, 4), R)]),
    ("mT", lambda t, a: a.mT, [((2, 3, 4), R)]),
    ("expand_as", lambda t, a, b: a.expand_as(b) * b, [((4,), R), ((3, 4), R)]),
    ("clone", lambda t, a: a.clone(), [((3, 4), R)]),
])

# against finite differences only
OP_CASES += section("shape", ("gradcheck",), [
    ("reshape_flat", lambda t, a: a.reshape(-1), [((3, 4), R)]),
    ("reshape_4x3", lambda t, a: a.reshape(4, 3), [((3, 4), R)]),
    ("reshape_tuple", lambda t, a: t.reshape(a, (2, 2, 3)), [((3, 4), R)]),
    ("reshape_scalar_to_1", lambda t, a: a.reshape(1, 1), [((), R)]),
    ("reshape_to_scalar", lambda t, a: a.reshape(()), [((1,), R)]),
    ("view", lambda t, a: a.view(2, -1), [((3, 4), R)]),
    ("view_as", lambda t, a, b: a.view_as(b), [((3, 4), R), ((12,), R)]),
    ("flatten_0_1", lambda t, a: a.flatten(0, 1), [((2, 3, 4), R)]),
    ("squeeze_dim0", lambda t, a: a.squeeze(0), [((1, 4), R)]),
    ("squeeze_dim_not1", lambda t, a: a.squeeze(1), [((1, 4), R)]),
    ("squeeze_scalar", lambda t, a: a.squeeze(), [((), R)]),
    ("unsqueeze_0", lambda t, a: a.unsqueeze(0), [((3, 4), R)]),
    ("unsqueeze_-1", lambda t, a: t.unsqueeze(a, -1), [((3, 4), R)]),
    ("unsqueeze_scalar", lambda t, a: a.unsqueeze(0), [((), R)]),
    ("transpose_3d", lambda t, a: t.transpose(a, -1, 0), [((2, 3, 4), R)]),
    ("swapaxes", lambda t, a: a.swapaxes(0, 2), [((2, 3, 4), R)]),
    ("permute_tuple", lambda t, a: t.permute(a, (1, 0)), [((3, 4), R)]),
    ("t_1d", function("t"), [((4,), R)]),
    ("mT_2d", lambda t, a: a.mT, [((1, 4), R)]),
    ("expand", lambda t, a: a.expand(3, 4), [((1, 4), R)]),
    ("expand_new_dims", lambda t, a: a.expand(2, 3, -1), [((1, 4), R)]),
    ("expand_scalar", lambda t, a: a.expand(3, 2), [((), R)]),
    ("repeat", lambda t, a: a.repeat(2, 3), [((3, 4), R)]),
    ("repeat_more_dims", lambda t, a: a.repeat(2, 1, 2), [((1, 4), R)]),
    ("repeat_scalar", lambda t, a: a.repeat(3), [((), R)]),
    ("cat_0", lambda t, a, b: t.cat([a, b]), [((3, 4), R), ((1, 4), R)]),
    ("cat_1", lambda t, a, b, c: t.cat((a, b, c), dim=1), [((3, 4), R), ((3, 1), R), ((3, 2), R)]),
    ("cat_-1_1d", lambda t, a, b: t.cat([a, b], -1), [((4,), R), ((2,), R)]),
    ("cat_same", lambda t, a: t.cat([a, a * 2, a]), [((4,), R)]),
    ("stack_0", lambda t, a, b: t.stack([a, b]), [((3, 4), R), ((3, 4), R)]),
    ("stack_1", lambda t, a, b: t.stack([a, b], 1), [((1, 4), R), ((1, 4), R)]),
    ("stack_-1", lambda t, a, b, c: t.stack([a, b, c], dim=-1), [((4,), R), ((4,), R), ((4,), R)]),
    ("stack_scalars", lambda t, a, b: t.stack([a, b]), [((), R), ((), R)]),
    ("split_2", lambda t, a: a.split(2), [((3, 4), R)]),
    ("split_sizes", lambda t, a: t.split(a, [1, 3], dim=1), [((3, 4), R)]),
    ("split_one_used", lambda t, a: a.split(2, 1)[1] * 3, [((3, 4), R)]),
    ("chunk", lambda t, a: a.chunk(2, 1), [((3, 4), R)]),
    ("chunk_uneven", lambda t, a: t.chunk(a, 3), [((4,), R)]),
    ("unbind", lambda t, a: a.unbind(), [((3, 4), R)]),
    ("unbind_1", lambda t, a: t.unbind(a, 1), [((1, 4), R)]),
    ("unbind_partial", lambda t, a: a.unbind(1)[2].exp(), [((3, 4), R)]),
    ("flip", lambda t, a: a.flip(0), [((3, 4), R)]),
    ("flip_dims", lambda t, a: t.flip(a, (0, -1)), [((2, 3, 4), R)]),
    ("flip_scalar", lambda t, a: a.flip(0), [((4,), R)]),
    ("clone_fn", function("clone"), [((), R)]),
    ("to_float64_noop", lambda t, a: a.double() * a, [((3, 4), R)]),
    ("contiguous", lambda t, a: a.T.contiguous(), [((3, 4), R)]),
    ("reshape_after_T", lambda t, a: a.T.reshape(-1), [((3, 4), R)]),
    ("transpose_reshape_matmul", lambda t, a, b: (a.transpose(0, 1).reshape(4, 3) @ b).sum(0),
     [((3, 4), R), ((3, 2), R)]),
])


# against PyTorch only
OP_CASES += section("shape", ("parity",), [
    ("reshape", lambda t, a: a.reshape(4, 3), [((3, 4), R)]),
    ("reshape_same", lambda t, a: a.reshape(3, 4), [((3, 4), R)]),
    ("view", lambda t, a: a.view(2, 6), [((3, 4), R)]),
    ("view_as", lambda t, a, b: a.view_as(b), [((3, 4), R), ((12,), R, False)]),
    ("reshape_of_T", lambda t, a: a.T.reshape(-1), [((3, 4), R)]),
    ("reshape_of_T_alias", lambda t, a: a.T.reshape(2, 2, 3), [((3, 4), R)]),
    ("reshape_of_T_same_shape", lambda t, a: a.T.reshape(4, 3), [((3, 4), R)]),
    ("view_of_T", lambda t, a: a.T.view(2, 2, 3), [((3, 4), R)]),
    ("reshape_of_expand", lambda t, a: a.expand(3, 4).reshape(-1), [((1, 4), R)]),
    ("reshape_of_slice", lambda t, a: a[:, 1:3].reshape(-1) + a[1:].reshape(-1)[:6], [((3, 4), R)]),
    ("reshape_of_flip", lambda t, a: a.flip(0).reshape(-1), [((3, 4), R)]),
    ("reshape_of_clone_of_T", lambda t, a: a.T.clone().reshape(-1), [((3, 4), R)]),
    ("transpose_flatten", lambda t, a: a.transpose(1, 2).flatten(2), [((2, 3, 4, 1), R)]),
    # whether reshape copies depends on the strides each op leaves behind
    ("reshape_after_unary_of_T", lambda t, a: (a.T * 2).exp().reshape(-1), [((3, 4), R)]),
    ("reshape_after_contiguous_plus_T", lambda t, a, b: (b + a.T).reshape(-1), [((3, 4), R), ((4, 3), R)]),
    ("reshape_after_reduction", lambda t, a: a.reshape(2, 2, 3).permute(2, 0, 1).sum(1).reshape(-1), [((3, 4), R)]),
    ("reshape_after_softmax_of_T", lambda t, a: a.T.softmax(0).reshape(-1) + a.T.log_softmax(1).reshape(-1),
     [((3, 4), R)]),
    ("reshape_after_cumsum_of_T", lambda t, a: a.T.cumsum(0).reshape(-1), [((3, 4), R)]),
    ("reshape_after_index_of_T", lambda t, a: a.T[:, [0, 1]].reshape(-1).sum() + a.T[[1, 0]].reshape(-1).sum(),
     [((3, 4), R)]),
    ("reshape_after_flip_of_T", lambda t, a: a.T.flip(0).reshape(-1), [((3, 4), R)]),
    ("reshape_after_masked_fill_of_T", lambda t, a: a.T.masked_fill(a.T > 0, 0.0).reshape(-1), [((3, 4), R)]),
    ("reshape_after_slices_of_T", lambda t, a: a.T[1:].reshape(-1).sum() + a.T[:, 1:].reshape(-1).sum()
     + a.T.unsqueeze(1).reshape(-1).sum(), [((3, 4), R)]),
    ("attention_heads", lambda t, a: a.view(2, 3, 2, 2).transpose(1, 2).reshape(2, 2, 6).transpose(1, 2)
     .contiguous().view(2, 12), [((2, 3, 4), R)]),
    ("contiguous", lambda t, a: a.T.contiguous() + a.contiguous().T, [((3, 4), R)]),
    ("flatten_1d", lambda t, a: a.flatten() * 2, [((4,), R)]),
    ("squeeze_dim", lambda t, a: a.squeeze(0), [((1, 4), R)]),
    ("squeeze_dim_noop", lambda t, a: a.squeeze(1), [((1, 4), R)]),
    ("unsqueeze", lambda t, a: a.unsqueeze(-1), [((3, 4), R)]),
    ("t_1d", lambda t, a: a.t(), [((4,), R)]),
    ("T_1d", lambda t, a: _reversed_T(a) * 2, [((4,), R)]),
    ("expand", lambda t, a: a.expand(2, 3, 4), [((1, 4), R)]),
    ("expand_-1", lambda t, a: a.expand(3, -1), [((1, 4), R)]),
    ("repeat", lambda t, a: a.repeat(2, 1, 2), [((1, 4), R)]),
    ("cat", lambda t, a, b: t.cat([a, b], 1), [((3, 4), R), ((3, 2), R)]),
    ("cat_const", lambda t, a, b: t.cat([a, b, a]), [((4,), R), ((2,), R, False)]),
    ("cat_mixed_dtypes", lambda t, a, b: t.cat([a.float(), b]), [((4,), R), ((2,), R)]),
    ("stack_mixed_dtypes", lambda t, a, b: t.stack([a, b.float()], 1), [((4,), R), ((4,), R)]),
    ("stack", lambda t, a, b: t.stack([a, b], -1), [((3, 4), R), ((3, 4), R)]),
    ("split", lambda t, a: a.split(3, 1), [((3, 4), R)]),
    ("split_sizes", lambda t, a: t.split(a, [1, 3], 1), [((3, 4), R)]),
    ("split_partial", lambda t, a: a.split(2)[1] * 2, [((3, 4), R)]),
    ("chunk", lambda t, a: a.chunk(3), [((4,), R)]),
    ("unbind", lambda t, a: a.unbind(1), [((3, 4), R)]),
    ("unbind_partial", lambda t, a: a.unbind()[1].exp(), [((3, 4), R)]),
    ("flip", lambda t, a: a.flip(0, 1), [((3, 4), R)]),
    ("double_noop", lambda t, a: a.double() * 2, [((3, 4), R)]),
    ("to_float32_and_back", lambda t, a: a.float().double() * 2, [((3, 4), R)]),
])


# -- indexing --------------------------------------------------------------------------------------------
def _setitem(key, value_shape=None, scalar=None):
    """b = f(a); b[key] = v: a CopySlices (or IndexPut) on a non-leaf; a callable key builds a tensor
    of the library. Without value_shape the value is the fixed scalar."""
    def write(t, b, value):
        b[key(t) if callable(key) else key] = value
        return b
    if value_shape is None:
        return lambda t, a: write(t, a * 1.5, scalar)
    # exp saves its result: writing into it directly would be an error, as in torch
    return lambda t, a, v: write(t, a.exp() * 1, v) * a


IDX = np.array([0, 2, 0, 0])
MASK = np.array([[True, False, True, False], [False, False, False, False], [True, True, False, True]])
# against finite differences and against PyTorch
OP_CASES += section("indexing", ("gradcheck", "parity"), [
    ("scatter_add", lambda t, a, s: a.scatter_add(1, t.tensor([[0, 0], [3, 1], [2, 2]]), s),
     [((3, 4), R), ((3, 2), R)]),
])

# against finite differences only
OP_CASES += section("indexing", ("gradcheck",), [
    ("int", lambda t, a: a[1], [((3, 4), R)]),
    ("int_neg", lambda t, a: a[-1], [((3, 4), R)]),
    ("int_int", lambda t, a: a[1, 2], [((3, 4), R)]),
    ("int_1d", lambda t, a: a[3], [((4,), R)]),
    ("slice", lambda t, a: a[1:3], [((3, 4), R)]),
    ("slice_step", lambda t, a: a[::2], [((3, 4), R)]),
    ("slice_step_both", lambda t, a: a[1::2, ::3], [((3, 4), R)]),
    ("slice_neg", lambda t, a: a[-2:], [((4,), R)]),
    ("slice_empty", lambda t, a: a[2:1].sum() + a.sum(), [((4,), R)]),
    ("slice_full", lambda t, a: a[:], [((3, 4), R)]),
    ("slice_int", lambda t, a: a[:, 2], [((3, 4), R)]),
    ("none", lambda t, a: a[None], [((3, 4), R)]),
    ("none_scalar", lambda t, a: a[None], [((), R)]),
    ("none_middle", lambda t, a: a[:, None, 1:], [((3, 4), R)]),
    ("ellipsis", lambda t, a: a[..., 1], [((2, 3, 4), R)]),
    ("ellipsis_scalar", lambda t, a: a[...], [((), R)]),
    ("ellipsis_none", lambda t, a: a[..., None, ::2], [((3, 4), R)]),
    ("tensor_idx_repeats", lambda t, a: a[t.tensor(IDX)], [((3, 4), R)]),
    ("tensor_idx_1d", lambda t, a: a[t.tensor([3, 3, 1])], [((4,), R)]),
    ("list_idx_repeats", lambda t, a: a[[0, 2, 2]], [((3, 4), R)]),
    ("list_idx_dim1", lambda t, a: a[:, [1, 1, 3]], [((3, 4), R)]),
    ("list_idx_2d", lambda t, a: a[t.tensor([[0, 1], [1, 1]])], [((3, 4), R)]),
    ("paired_lists", lambda t, a: a[[0, 2, 0], [1, 3, 1]], [((3, 4), R)]),
    ("int_and_list", lambda t, a: a[1, [0, 0, 2]], [((3, 4), R)]),
    ("slice_and_tensor", lambda t, a: a[1:, t.tensor(IDX)], [((3, 4), R)]),
    ("bool_mask", lambda t, a: a[t.tensor(MASK)], [((3, 4), R)]),
    ("bool_mask_rows", lambda t, a: a[t.tensor([True, False, True])], [((3, 4), R)]),
    ("bool_mask_from_data", lambda t, a: a[a > 0], [((3, 4), "away")]),
    ("gather_1", lambda t, a: a.gather(1, t.tensor([[0, 0], [3, 1], [2, 2]])), [((3, 4), R)]),
    ("gather_0", lambda t, a: t.gather(a, 0, t.tensor([[0, 2, 2, 1], [0, 0, 0, 0]])), [((3, 4), R)]),
    ("gather_1d", lambda t, a: a.gather(0, t.tensor([1, 1, 3])), [((4,), R)]),
    ("scatter_add_0_big_src", lambda t, a, s: t.scatter_add(a, 0, t.tensor([[2, 2, 0, 1]]), s),
     [((3, 4), R), ((2, 4), R)]),
    ("index_select_0", lambda t, a: a.index_select(0, t.tensor([2, 0, 2])), [((3, 4), R)]),
    ("index_select_1", lambda t, a: t.index_select(a, 1, t.tensor([3, 3])), [((3, 4), R)]),
    ("index_select_1d", lambda t, a: a.index_select(0, t.tensor([1])), [((4,), R)]),
    ("setitem_int_scalar", _setitem(0, scalar=5.0), [((3, 4), R)]),
    ("setitem_int_tensor", _setitem(1, (4,)), [((3, 4), R), ((4,), R)]),
    ("setitem_int_broadcast", _setitem(1, ()), [((3, 4), R), ((), R)]),
    ("setitem_slice", _setitem((slice(None), slice(1, 3)), (3, 2)), [((3, 4), R), ((3, 2), R)]),
    ("setitem_step", _setitem(slice(None, None, 2), (1, 4)), [((3, 4), R), ((1, 4), R)]),
    ("setitem_tensor_idx", _setitem(lambda t: t.tensor([0, 2]), (4,)), [((3, 4), R), ((4,), R)]),
    ("setitem_mask_scalar", _setitem(lambda t: t.tensor(MASK), scalar=0.0), [((3, 4), R)]),
    ("setitem_mask_tensor", _setitem(lambda t: t.tensor(MASK), ()), [((3, 4), R), ((), R)]),
    ("setitem_twice", lambda t, a, v: _setitem(0, (4,))(t, a, v)[1:].sum(0) + _setitem(2, (4,))(t, a, v)[0],
     [((3, 4), R), ((4,), R)]),
])


def set_item(key, value=None):
    """b = 2a; b[key] = v (the second input, else `value`): a callable key builds a tensor of the library."""
    def fn(t, a, *v):
        b = a * 2
        b[key(t) if callable(key) else key] = v[0] if v else value
        return b
    return fn


# against PyTorch only
OP_CASES += section("indexing", ("parity",), [
    ("x[0]", lambda t, a: a[0], [((3, 4), R)]),
    ("x[-1, 2]", lambda t, a: a[-1, 2], [((3, 4), R)]),
    ("x[1:3]", lambda t, a: a[1:3], [((3, 4), R)]),
    ("x[::2, 1::2]", lambda t, a: a[::2, 1::2], [((3, 4), R)]),
    ("x[:]", lambda t, a: a[:], [((3, 4), R)]),
    ("x[:, :]", lambda t, a: a[:, :], [((3, 4), R)]),
    ("x[...]", lambda t, a: a[...], [((3, 4), R)]),
    ("x[...]_0d", lambda t, a: a[...], [((), R)]),
    ("x[None]", lambda t, a: a[None], [((3, 4), R)]),
    ("x[..., None, 1]", lambda t, a: a[..., None, 1], [((2, 3, 4), R)]),
    ("x[:, None, 1:]", lambda t, a: a[:, None, 1:], [((3, 4), R)]),
    ("x[idx]", lambda t, a: a[t.tensor([0, 2, 0, 0])], [((3, 4), R)]),
    ("x[list]", lambda t, a: a[[2, 2, 1]], [((3, 4), R)]),
    ("x[:, list]", lambda t, a: a[:, [3, 1, 3]], [((3, 4), R)]),
    ("x[list, list]", lambda t, a: a[[0, 2, 0], [1, 3, 1]], [((3, 4), R)]),
    ("x[[list, list]]", lambda t, a: a[[[0, 2, 0], [1, 3, 1]]], [((3, 4), R)]),   # a list of lists is a tuple
    ("x[[list]]", lambda t, a: a[[[2, 0]]], [((3, 4), R)]),
    ("x[0, list]", lambda t, a: a[0, [1, 1, 3]], [((3, 4), R)]),
    ("x[list, 1:]", lambda t, a: a[[1, 0], 1:], [((3, 4), R)]),
    ("x[0, :, list]", lambda t, a: a[0, :, [1, 2]], [((2, 3, 4), R)]),
    ("x[list, :, list]", lambda t, a: a[[0, 1], :, [1, 2]], [((2, 3, 4), R)]),
    ("x[idx2d]", lambda t, a: a[t.tensor([[0, 1], [1, 1]])], [((3, 4), R)]),
    ("x[tensor0d]", lambda t, a: a[t.tensor(1)], [((3, 4), R)]),
    ("x[[]]", lambda t, a: a[[]], [((3, 4), R)]),
    ("x[:, []]", lambda t, a: a[:, t.tensor([], dtype=t.long)], [((3, 4), R)]),
    ("x[True]", lambda t, a: a[True], [((3, 4), R)]),
    ("x[-5:10]", lambda t, a: a[-5:10], [((3, 4), R)]),
    ("x[2:1]", lambda t, a: a[2:1], [((3, 4), R)]),
    ("x[mask]", lambda t, a: a[t.tensor(MASK)], [((3, 4), R)]),
    ("x[byte_mask]", lambda t, a: a[t.tensor(MASK, dtype=t.uint8)], [((3, 4), R)]),
    ("x[row_mask, 1]", lambda t, a: a[t.tensor([True, False, True]), 1], [((3, 4), R)]),
    ("x[x > 0]", lambda t, a: a[a > 0], [((3, 4), "away")]),
    ("gather", lambda t, a: a.gather(1, t.tensor([[0, 0], [3, 1], [2, 2]])), [((3, 4), R)]),
    ("index_select", lambda t, a: a.index_select(1, t.tensor([3, 3, 0])), [((3, 4), R)]),
    ("b[0] = 5", set_item(0, 5.0), [((3, 4), R)]),
    ("b[1] = v", set_item(1), [((3, 4), R), ((4,), R)]),
    ("b[:, 1:3] = v", set_item((slice(None), slice(1, 3))), [((3, 4), R), ((3, 2), R)]),
    ("b[::2] = v0d", set_item(slice(None, None, 2)), [((3, 4), R), ((), R)]),
    ("b[idx] = v", set_item(lambda t: t.tensor([0, 2])), [((3, 4), R), ((4,), R)]),
    ("b[mask] = 0", set_item(lambda t: t.tensor(MASK), 0.0), [((3, 4), R)]),
    ("b[[list, list]] = v", set_item([[0, 2], [1, 3]]), [((3, 4), R), ((2,), R)]),
    ("b[byte_mask] = v", set_item(lambda t: t.tensor(MASK, dtype=t.uint8)), [((3, 4), R), ((5,), R)]),
    ("b[0, list] = v", set_item((0, [1, 3])), [((3, 4), R), ((2,), R)]),
    ("b[1] = const", set_item(1), [((3, 4), R), ((4,), R, False)]),
])


# -- longer programs: whole chains -------------------------------------------------------------------
def barlow_loss(t, z1, z2):
    n = z1.shape[0]
    z1 = (z1 - z1.mean(0)) / z1.std(0)
    z2 = (z2 - z2.mean(0)) / z2.std(0)
    c = z1.T @ z2 / n
    return -t.diagonal(c).sum()


def _mlp(t, x, w1, b1, w2, b2):
    h = F(t).relu(F(t).linear(x, w1, b1))
    logits = h @ w2.T + b2
    return F(t).log_softmax(logits, dim=1)[t.arange(3), t.tensor([0, 2, 1])].mean().neg()


def _attention(t, x, wq, wk):
    q, k = x @ wq, x @ wk
    scores = q @ k.transpose(-2, -1) / 2.0
    return t.softmax(scores, dim=-1) @ x


def _layernorm(t, x, w):
    mu = x.mean(-1, keepdim=True)
    var = x.var(-1, unbiased=False, keepdim=True)
    return (x - mu) / (var + 1e-5).sqrt() * w


OP_CASES += section("program", ("parity", "float32"), [
    ("tutorial_mul", lambda t, x, y: x * y, [((), R), ((), R, False)]),
    ("tutorial_pow3_sum", lambda t, x: x.pow(3).sum(), [((5,), R)]),
    ("tutorial_doubling", lambda t, x: x * 2 * 2 * 2 * 2, [((3,), R)]),
    ("tutorial_mm", lambda t, x, m: t.mm(x, m), [((1, 2), R), ((2, 2), R, False)]),
    ("barlow_twins_loss", barlow_loss, [((5, 3), R), ((5, 3), R)]),
    ("mlp_nll", _mlp, [((3, 4), R), ((5, 4), R), ((5,), R), ((3, 5), R), ((3,), R)]),
    ("attention", _attention, [((2, 3, 4), R), ((4, 4), R), ((4, 4), R)]),
    ("layernorm", _layernorm, [((2, 3, 4), R), ((4,), R)]),
    ("shared_input", lambda t, x: (x * x.exp() + x.sin()).sum(), [((3,), R)]),
    ("diamond", lambda t, x: (lambda y: y.tanh() * y.sigmoid())(x * 3), [((2, 2), R)]),
    ("scalar_minus_tensor_chain", lambda t, x: (1 - x.sigmoid()).log().mean(), [((4,), R)]),
    ("cross_entropy", lambda t, x: F(t).cross_entropy(x, t.tensor([1, 0, 3])), [((3, 4), R)]),
    ("mse_loss", lambda t, x, y: F(t).mse_loss(x, y), [((3, 4), R), ((3, 4), R, False)]),
    ("norm_and_softmax", lambda t, x: t.softmax(x / x.norm(dim=1, keepdim=True), 0).logsumexp(1),
     [((3, 4), R)]),
    ("index_then_setitem", lambda t, x, v: (lambda b: (b.__setitem__((slice(None), 0), v), b)[1])(x[1:] * 2).sum(0),
     [((3, 4), R), ((2,), R)]),
])


# -- second derivatives: grad of grad (create_graph=True) against finite differences, and against torch --
OP_CASES += section("second_order", ("gradgradcheck",), [
    ("mul", lambda t, a, b: a * b * a, [((3, 4), R), ((4,), R)]),
    ("div", lambda t, a, b: a / b, [((3, 4), R), ((3, 1), "away")]),
    ("pow_scalar", lambda t, a: a ** 3, [((3, 4), R)]),
    ("pow_frac", lambda t, a: a ** 1.5, [((4,), "pos")]),
    ("pow_tensor", lambda t, a, b: a ** b, [((3, 4), "pos"), ((4,), R)]),
    ("rpow", lambda t, a: 2.0 ** a, [((4,), R)]),
    ("exp", lambda t, a: t.exp(a) * a, [((3, 4), R)]),
    ("log", lambda t, a: t.log(a) * a, [((3, 4), "pos")]),
    ("sqrt", lambda t, a: a.sqrt(), [((4,), "pos")]),
    ("tanh", function("tanh"), [((3, 4), R)]),
    ("sigmoid", function("sigmoid"), [((3, 4), R)]),
    ("sin_cos", lambda t, a: a.sin() * a.cos(), [((4,), R)]),
    ("cos", lambda t, a: a.cos(), [((3, 4), R)]),
    ("gelu", lambda t, a: t.nn.functional.gelu(a), [((4,), R)]),
    ("softplus", lambda t, a: t.nn.functional.softplus(a), [((4,), R)]),
    ("leaky_relu", lambda t, a: t.nn.functional.leaky_relu(a, 0.2) * a, [((3, 4), "away")]),
    ("hardtanh", lambda t, a: t.nn.functional.hardtanh(a * 3, -0.5, 0.5) * a, [((3, 4), "away")]),
    ("matmul_2d", lambda t, a, b: (a @ b) ** 2, [((3, 4), R), ((4, 5), R)]),
    ("matmul_batched", lambda t, a, b: (a @ b) ** 2, [((2, 3, 4), R), ((4, 2), R)]),
    ("matmul_bmm", lambda t, a, b: (a @ b).tanh(), [((2, 3, 4), R), ((2, 4, 2), R)]),
    ("matmul_broadcast", lambda t, a, b: (a @ b).tanh(), [((2, 1, 3, 4), R), ((3, 4, 2), R)]),
    ("mv", lambda t, a, b: (a @ b) ** 2, [((3, 4), R), ((4,), R)]),
    ("dot", lambda t, a, b: t.dot(a, b) * a, [((4,), R), ((4,), R)]),
    ("sum", lambda t, a: a.sum() * a, [((3, 4), R)]),
    ("sum_dim", lambda t, a: a.sum(0, keepdim=True) * a, [((3, 4), R)]),
    ("mean", lambda t, a: a.mean(-1) ** 2, [((3, 4), R)]),
    ("mean_all", lambda t, a: a.mean() * a, [((3, 4), R)]),
    ("softmax", lambda t, a: t.softmax(a, 1), [((3, 4), R)]),
    ("log_softmax", lambda t, a: t.log_softmax(a, 0), [((3, 4), R)]),
    ("logsumexp", lambda t, a: t.logsumexp(a, 1), [((3, 4), R)]),
    ("std", lambda t, a: a.std(0), [((3, 4), R)]),
    ("std_all", lambda t, a: a.std(), [((3, 4), R)]),
    ("var", lambda t, a: a.var(1, keepdim=True) * a, [((3, 4), R)]),
    ("norm", lambda t, a: a.norm(dim=1), [((3, 4), "away")]),
    ("prod", lambda t, a: a.prod(1), [((3, 4), R)]),
    ("prod_with_zeros", lambda t, a: a.prod(1) + a.prod(),
     [np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0], [1.5, 2.0, 3.0]])]),
    ("prod_one_zero", lambda t, a: a.prod(0) * a, [np.array([2.0, 0.0, 3.0, -1.5])]),
    ("index_int", lambda t, a: a[1] * a[2], [((3, 4), R)]),
    ("index_slice", lambda t, a: a[1:, ::2] ** 2, [((3, 4), R)]),
    ("index_tensor", lambda t, a: a[t.tensor(IDX)] ** 2, [((3, 4), R)]),
    ("index_mask", lambda t, a: a[t.tensor(MASK)] ** 2, [((3, 4), R)]),
    ("gather", lambda t, a: a.gather(1, t.tensor([[0, 0], [3, 1], [2, 2]])) ** 2, [((3, 4), R)]),
    ("index_select", lambda t, a: a.index_select(1, t.tensor([3, 3, 0])) ** 2, [((3, 4), R)]),
    ("diagonal", lambda t, a: t.diagonal(a * a, 1), [((3, 4), R)]),
    ("trace", lambda t, a: t.trace(a @ a.T) * a, [((3, 4), R)]),
    ("cat_stack", lambda t, a, b: t.stack([t.cat([a, b]) ** 2, t.cat([b, a])]), [((4,), R), ((4,), R)]),
    ("where", lambda t, a: t.where(a > 0, a ** 2, a ** 3), [((3, 4), "away")]),
    ("max_dim", lambda t, a: a.max(1).values ** 2, [((3, 4), "distinct")]),
    ("cumsum", lambda t, a: t.cumsum(a, 1) ** 2, [((3, 4), R)]),
    ("setitem", lambda t, a, v: _setitem(1, (4,))(t, a, v) ** 2, [((3, 4), R), ((4,), R)]),
    ("transpose_reshape", lambda t, a: (a.T.reshape(2, 6) ** 2).sum(0), [((3, 4), R)]),
    ("expand_repeat", lambda t, a: a.expand(3, 4).repeat(2, 1) ** 2, [((1, 4), R)]),
    ("cholesky", lambda t, a: t.linalg.cholesky(a @ a.mT + t.eye(2, dtype=t.float64)) ** 2, [((2, 2), R)]),
    ("matrix_exp", lambda t, a: a.matrix_exp() ** 2, [((2, 2), R)]),
    ("qr", lambda t, a: (lambda q, r: q.sin().sum() * r)(*t.linalg.qr(a)), [((3, 2), R)]),
    ("pinv", lambda t, a: t.linalg.pinv(a) ** 2, [((3, 2), R)]),
    ("lstsq", lambda t, a, b: (lambda r: r.solution ** 2 + r.residuals)(t.linalg.lstsq(a, b, driver="gels")),
     [((3, 2), R), ((3, 2), R)]),
    ("qr_wide", lambda t, a: (lambda q, r: q.sin().sum() * r)(*t.linalg.qr(a)), [((2, 3), R)]),
    ("solve_triangular", lambda t, a, b: t.linalg.solve_triangular(a + 3 * t.eye(2, dtype=t.float64), b, upper=True,
                                                                   left=False) ** 2, [((2, 2), R), ((3, 2), R)]),
])


OP_CASES += section("second_order", ("parity_second",), [
    ("prod_one_zero", lambda t, a: a.prod(), [np.array([0.0, 2.0, 3.0])]),
    # scatter_reduce's gradient recorded as torch's backward records it (a gather, a scatter, prod's own scatter_reduce)
    *[(f"scatter_reduce_{reduce}" + ("" if include_self else "_without_self"),
       lambda t, a, b, reduce=reduce, include_self=include_self:
       a.scatter_reduce(1, t.tensor([[0, 2, 2], [1, 1, 0]]), b, reduce, include_self=include_self) ** 2,
       [np.array([[0.5, -1.0, 2.0], [1.5, 0.0, -0.5]]), np.array([[2.0, 0.0, -1.5], [-0.5, 1.0, 1.0]])])
      for reduce in ("sum", "prod", "mean", "amax", "amin") for include_self in (True, False)],
    # rrelu's gradient is its own node (RreluWithNoiseBackwardBackward0), in training and in eval
    ("rrelu_training", lambda t, a: (t.manual_seed(3), t.rrelu(a, 0.1, 0.3, True) ** 2)[1], [np.array([1.5, -2.0, 0.5, -0.25])]),
    ("rrelu_eval", lambda t, a: F(t).rrelu(a) ** 2, [np.array([1.5, -2.0, 0.5, -0.25])]),
    ("rrelu_inplace", lambda t, a: F(t).rrelu(a * 1, inplace=True) ** 2, [np.array([1.5, -2.0, 0.5, -0.25])]),
    ("prod_two_zeros", lambda t, a: a.prod(), [np.array([0.0, 0.0, 3.0])]),
    ("prod_dim_zeros", lambda t, a: a.prod(1), [np.array([[0.0, 2.0, 3.0], [1.0, 0.0, 0.0], [1.0, 2.0, 3.0]])]),
    ("norm_inf", lambda t, a: a.norm(p=float("inf")) * a, [((4,), "distinct")]),
    ("norm3_dim", lambda t, a: a.norm(p=3, dim=0), [((3, 2), "away")]),
    ("norm_p3_zero_row", lambda t, a: a.norm(p=3, dim=1), [ZERO_ENTRIES]),
    ("cholesky", lambda t, a: t.linalg.cholesky(a @ a.mT + t.eye(2, dtype=t.float64), upper=True) ** 2,
     [((2, 2), R)]),
    ("cholesky_legacy", lambda t, a: t.cholesky(a @ a.mT + t.eye(2, dtype=t.float64)) ** 2, [((2, 2), R)]),
    ("norm_zero_row", lambda t, a: a.norm(dim=1) + a.norm(p=1.5, dim=1) + a.norm(p=0.5, dim=1),
     [np.array([[0.0, 0.0, 0.0], [-1.5, 1.0, 0.5]])]),   # torch's second derivative: nan on the zero row
    ("amax", lambda t, a: a.amax(1) * a.sum(), [((3, 2), "distinct")]),
    ("max_dim", lambda t, a: a.min(0).values ** 2, [((3, 2), "distinct")]),
    ("abs_relu_clamp", lambda t, a: a.abs() * a + t.relu(a) ** 2 + a.clamp(-0.5, 0.5) ** 2, [((4,), "away")]),
    ("clamp_tensor", lambda t, a, b: t.clamp(a, min=b) ** 2, [((4,), R), ((4,), R)]),
    ("maximum", lambda t, a, b: t.maximum(a, b) ** 2, [((4,), "distinct"), ((4,), R)]),
    ("tan_rsqrt_reciprocal", lambda t, a: t.tan(a) + t.rsqrt(a) + a.reciprocal() + a.log1p(), [((4,), "pos")]),
    ("erf_gelu_softplus", lambda t, a: t.erf(a) + F(t).gelu(a, approximate="tanh") + F(t).softplus(a, 2, 1),
     [((4,), R)]),
    ("pow_forms", lambda t, a, b: a ** b + 3.0 ** a + a ** -2 + (2 - a) ** 2, [((4,), "pos"), ((4,), R)]),
    ("div_remainder", lambda t, a, b: a / b + (a % b) ** 2, [((4,), R), ((4,), "pos")]),
    ("where_masked_fill", lambda t, a, b: t.where(a > 0, a, b) ** 2 + a.masked_fill(a > 0, 1.0) ** 2,
     [((4,), "away"), ((4,), R)]),
    ("var_std", lambda t, a: a.var(0) + (a.std(1, keepdim=True) * a).sum(0), [((3, 2), R)]),
    ("softmax_family", lambda t, a: a.logsumexp(0) + a.softmax(0).sum(1)[:2] + a.log_softmax(1)[0], [((3, 2), R)]),
    ("cumsum", lambda t, a: a.cumsum(1) ** 2, [((3, 2), R)]),
    ("addmm", lambda t, b, x, y: t.addmm(b, x, y, beta=0.5, alpha=2) ** 2, [((2,), R), ((3, 4), R), ((4, 2), R)]),
    ("matmuls", lambda t, x, y, z: ((x @ y) ** 2).sum() + ((y.mT @ x.mT) ** 2).sum() + (z @ y[:, 0]).sum() ** 2,
     [((2, 3, 4), R), ((4, 2), R), ((3, 4), R)]),
    ("mv_dot_outer_trace", lambda t, x, y: t.mv(x, y).sum() ** 2 + t.dot(y, y) ** 2 + t.outer(y, y).sum() * t.trace(x),
     [((3, 4), R), ((4,), R)]),
    ("shape_ops", lambda t, x: (x.T.reshape(-1) ** 2).sum() + (x.flip(0) * x).sum() + (x.repeat(2, 1) ** 3).sum()
     + (x.split([1, 3], 1)[1] ** 2).sum() + (x.unbind(1)[2] ** 2).sum() + (x.diagonal(1) ** 2).sum(),
     [((3, 4), R)]),
    ("indexing", lambda t, x, v: (lambda b: (b.__setitem__((0, [1, 2]), v), b ** 2)[1])(x * 1).sum()
     + (x[0, [1, 1]] ** 2).sum() + (x[x > 0] ** 3).sum() + (x[...] * x).sum(), [((3, 4), "away"), ((2,), R)]),
    ("scatter_gather", lambda t, x, s: (x.scatter_add(1, t.tensor([[0, 0], [3, 1], [2, 2]]), s) ** 2).sum()
     + (x.gather(1, t.tensor([[1], [1], [0]])) ** 3).sum(), [((3, 4), R), ((3, 2), R)]),
    ("losses", lambda t, x, y: F(t).cross_entropy(x, t.tensor([1, 0, 3])) + F(t).mse_loss(x, y),
     [((3, 4), R), ((3, 4), R)]),
    ("casts", lambda t, x: x.float().double() ** 2, [((4,), R)]),
])


# -- public functions, each on two shapes ---------------------------------------------------------------
_TWO_SHAPES_RNG = np.random.default_rng(7)


def arr(*shape, lo=-1.0, hi=1.0):
    """Uniform samples in [lo, hi), drawn in the order of the rows."""
    return _TWO_SHAPES_RNG.uniform(lo, hi, shape)


POS = dict(lo=0.2, hi=0.9)     # inside (0, 1): logs, asin, acos, logit
IDX_ROWS = np.array([[0], [2], [1]])
IDX3 = np.array([0, 2])
MASK33 = np.array([[True, False, True], [False, True, True], [True, True, False]])

# name -> (fn(t, *tensors), the input arrays on each of two shapes: PyTorch parity runs on the first)
_ON_TWO_SHAPES = {
    "square": (lambda t, x: t.square(x), [(arr(3),), (arr(2, 3),)]),
    "log2": (lambda t, x: t.log2(x), [(arr(3, **POS),), (arr(2, 3, **POS),)]),
    "log10": (lambda t, x: x.log10(), [(arr(3, **POS),), (arr(2, 2, **POS),)]),
    "exp2": (lambda t, x: t.exp2(x), [(arr(3),), (arr(2, 3),)]),
    "expm1": (lambda t, x: x.expm1(), [(arr(3),), (arr(2, 3),)]),
    "sinh": (lambda t, x: t.sinh(x), [(arr(3),), (arr(2, 3),)]),
    "cosh": (lambda t, x: t.cosh(x), [(arr(3),), (arr(2, 3),)]),
    "asin": (lambda t, x: t.asin(x), [(arr(3, **POS),), (arr(2, 3, lo=-0.8, hi=0.8),)]),
    "acos": (lambda t, x: x.acos(), [(arr(3, **POS),), (arr(2, 3, lo=-0.8, hi=0.8),)]),
    "atan": (lambda t, x: t.atan(x), [(arr(3),), (arr(2, 3),)]),
    "atan2": (lambda t, x, y: t.atan2(x, y), [(arr(3), arr(3)), (arr(2, 3), arr(3))]),
    "lerp": (lambda t, x, y: t.lerp(x, y, 0.3), [(arr(3), arr(3)), (arr(2, 3), arr(3))]),
    "lerp_tensor": (lambda t, x, y, w: x.lerp(y, w), [(arr(3), arr(3), arr(3)), (arr(2, 3), arr(2, 3), arr(3))]),
    "addcmul": (lambda t, x, y, z: t.addcmul(x, y, z, value=0.5), [(arr(3), arr(3), arr(3)),
                                                                   (arr(2, 3), arr(3), arr(2, 1))]),
    "addcdiv": (lambda t, x, y, z: x.addcdiv(y, z, value=2), [(arr(3), arr(3), arr(3, **POS)),
                                                              (arr(2, 3), arr(2, 3), arr(3, **POS))]),
    "hypot": (lambda t, x, y: t.hypot(x, y), [(arr(3), arr(3)), (arr(2, 3), arr(2, 3))]),
    "nan_to_num": (lambda t, x: t.nan_to_num(x, posinf=5.0), [(arr(3),), (arr(2, 3),)]),
    "logit": (lambda t, x: t.logit(x), [(arr(3, **POS),), (arr(2, 3, **POS),)]),
    "logit_eps": (lambda t, x: x.logit(eps=0.3), [(arr(4, lo=0.05, hi=0.95),), (arr(2, 3, lo=0.05, hi=0.95),)]),
    "sgn": (lambda t, x: t.sgn(x) + x, [(arr(3),), (arr(2, 3),)]),
    "negative": (lambda t, x: t.negative(x), [(arr(3),), (arr(2, 3),)]),
    "true_divide": (lambda t, x, y: t.true_divide(x, y), [(arr(3), arr(3, **POS)), (arr(2, 3), arr(3, **POS))]),
    "fmod": (lambda t, x, y: t.fmod(x, y), [(arr(3, lo=1, hi=3), arr(3, lo=0.3, hi=0.7)),
                                            (arr(2, 3, lo=-3, hi=-1), arr(3, lo=0.3, hi=0.7))]),
    "fmod_scalar": (lambda t, x: x.fmod(0.7), [(arr(3, lo=0.1, hi=0.6),), (arr(2, 3, lo=0.1, hi=0.6),)]),
    "float_power": (lambda t, x: t.float_power(x, 3), [(arr(3),), (arr(2, 3),)]),
    "float_power_tensor": (lambda t, x, y: t.float_power(x, y), [(arr(3, **POS), arr(3)), (arr(2, 3, **POS), arr(3))]),
    "cumprod": (lambda t, x: t.cumprod(x, 1), [(arr(2, 4),), (arr(3, 3),)]),
    "cumprod_zeros": (lambda t, x: (x * t.tensor([1.0, 0.0, 1.0, 0.0], dtype=t.float64)).cumprod(-1),
                      [(arr(4),), (arr(2, 4),)]),
    "median": (lambda t, x: t.median(x), [(arr(5),), (arr(2, 3),)]),
    "median_dim": (lambda t, x: x.median(dim=0)[0], [(arr(3, 2),), (arr(4, 3),)]),
    "std_mean": (lambda t, x: t.std_mean(x, 1), [(arr(2, 3),), (arr(3, 4),)]),
    "var_mean": (lambda t, x: t.var_mean(x), [(arr(4),), (arr(2, 3),)]),
    "aminmax": (lambda t, x: t.aminmax(x), [(arr(4),), (arr(2, 3),)]),
    "aminmax_dim": (lambda t, x: x.aminmax(dim=1), [(arr(2, 3),), (arr(3, 4),)]),
    "dist": (lambda t, x, y: t.dist(x, y), [(arr(3), arr(3)), (arr(2, 3), arr(3))]),
    "dist_p3": (lambda t, x, y: x.dist(y, 3), [(arr(3), arr(3)), (arr(2, 3), arr(2, 3))]),
    "logcumsumexp": (lambda t, x: t.logcumsumexp(x, 0), [(arr(4),), (arr(3, 2),)]),
    "diff": (lambda t, x: t.diff(x), [(arr(4),), (arr(2, 4),)]),
    "diff_n2": (lambda t, x: x.diff(n=2, dim=0), [(arr(4),), (arr(4, 2),)]),
    "tril": (lambda t, x: t.tril(x), [(arr(3, 3),), (arr(2, 3, 4),)]),
    "triu": (lambda t, x: x.triu(1), [(arr(3, 3),), (arr(3, 4),)]),
    "diag_vector": (lambda t, x: t.diag(x, 1), [(arr(3),), (arr(2),)]),
    "diag_matrix": (lambda t, x: t.diag(x), [(arr(3, 3),), (arr(2, 4),)]),
    "diag_matrix_offset": (lambda t, x: x.diag(-1), [(arr(3, 3),), (arr(4, 2),)]),
    "diag_embed": (lambda t, x: t.diag_embed(x), [(arr(3),), (arr(2, 3),)]),
    "broadcast_to": (lambda t, x: t.broadcast_to(x, (2, 3)), [(arr(3),), (arr(2, 1),)]),
    "broadcast_tensors": (lambda t, x, y: t.broadcast_tensors(x, y), [(arr(3), arr(2, 3)), (arr(2, 1), arr(3))]),
    "movedim": (lambda t, x: t.movedim(x, 0, 2), [(arr(2, 3, 4),), (arr(1, 2, 3),)]),
    "moveaxis": (lambda t, x: t.moveaxis(x, (0, 1), (2, 0)), [(arr(2, 3, 4),), (arr(3, 1, 2),)]),
    "swapaxes": (lambda t, x: t.swapaxes(x, 0, 1), [(arr(2, 3),), (arr(2, 3, 4),)]),
    "swapdims": (lambda t, x: t.swapdims(x, 0, -1), [(arr(2, 3),), (arr(2, 3, 4),)]),
    "narrow": (lambda t, x: t.narrow(x, 0, 1, 2), [(arr(3),), (arr(3, 2),)]),
    "select": (lambda t, x: t.select(x, -1, 1), [(arr(3),), (arr(2, 3),)]),
    "take_along_dim": (lambda t, x: t.take_along_dim(x, t.tensor(IDX_ROWS), 1), [(arr(3, 3),), (arr(3, 4),)]),
    "take_along_dim_flat": (lambda t, x: x.take_along_dim(t.tensor(IDX3)), [(arr(3),), (arr(2, 3),)]),
    "masked_select": (lambda t, x: t.masked_select(x, t.tensor(MASK33)), [(arr(3, 3),), (arr(3),)]),
    "roll": (lambda t, x: t.roll(x, 1, 0), [(arr(3),), (arr(3, 2),)]),
    "roll_flat": (lambda t, x: x.roll(2), [(arr(3),), (arr(2, 3),)]),
    "roll_dims": (lambda t, x: t.roll(x, (1, -1), (0, 1)), [(arr(2, 3),), (arr(3, 3),)]),
    "tile": (lambda t, x: t.tile(x, (2,)), [(arr(3),), (arr(2, 3),)]),
    "ravel": (lambda t, x: t.ravel(x), [(arr(2, 3),), (arr(3, 2),)]),
    "ravel_transposed": (lambda t, x: t.ravel(x.t()), [(arr(2, 3),), (arr(3, 2),)]),
    "atleast_1d": (lambda t, x: t.atleast_1d(x.sum()), [(arr(3),), (arr(2, 3),)]),
    "meshgrid_ij": (lambda t, x, y: t.meshgrid(x, y, indexing="ij"), [(arr(3), arr(2)), (arr(2), arr(4))]),
    "meshgrid_xy": (lambda t, x, y: t.meshgrid(x, y, indexing="xy"), [(arr(3), arr(2)), (arr(2), arr(4))]),
    "index_add": (lambda t, x, y: t.index_add(x, 0, t.tensor(IDX3), y, alpha=2), [(arr(3, 2), arr(2, 2)),
                                                                                 (arr(3), arr(2))]),
    "index_fill": (lambda t, x: x.index_fill(1, t.tensor([0, 2]), -1.0), [(arr(2, 3),), (arr(3, 3),)]),
    # the first shapes are the ones compared with PyTorch, whose backward rejects a src larger than index
    "scatter_src": (lambda t, x, y: t.scatter(x, 1, t.tensor(IDX_ROWS), y), [(arr(3, 4), arr(3, 1)),
                                                                            (arr(3, 3), arr(3, 2))]),
    "scatter_value": (lambda t, x: x.scatter(1, t.tensor(IDX_ROWS), 2.0), [(arr(3, 3),), (arr(3, 4),)]),
    "clip": (lambda t, x: t.clip(x, -0.5, 0.5), [(arr(3),), (arr(2, 3),)]),
    "einsum_matmul": (lambda t, x, y: t.einsum("ij,jk->ik", x, y), [(arr(2, 3), arr(3, 4)), (arr(1, 2), arr(2, 2))]),
    "einsum_batch": (lambda t, x, y: t.einsum("bij,bjk->bik", x, y), [(arr(2, 2, 3), arr(2, 3, 2)),
                                                                     (arr(1, 2, 2), arr(1, 2, 3))]),
    "einsum_trace": (lambda t, x: t.einsum("ii", x), [(arr(3, 3),), (arr(2, 2),)]),
    "einsum_transpose": (lambda t, x: t.einsum("ij->ji", x), [(arr(2, 3),), (arr(3, 1),)]),
    "einsum_outer": (lambda t, x, y: t.einsum("i,j->ij", x, y), [(arr(3), arr(2)), (arr(2), arr(4))]),
    "einsum_sum": (lambda t, x: t.einsum("ij->", x), [(arr(2, 3),), (arr(3, 1),)]),
    "einsum_rowsum": (lambda t, x: t.einsum("ij->i", x), [(arr(2, 3),), (arr(3, 1),)]),
    "einsum_dot": (lambda t, x, y: t.einsum("i,i->", x, y), [(arr(3), arr(3)), (arr(2), arr(2))]),
    "einsum_implicit": (lambda t, x, y: t.einsum("ij,jk", x, y), [(arr(2, 3), arr(3, 2)), (arr(1, 2), arr(2, 2))]),
    "tensordot": (lambda t, x, y: t.tensordot(x, y, 1), [(arr(2, 3), arr(3, 2)), (arr(3), arr(3, 2))]),
    "tensordot_dims": (lambda t, x, y: t.tensordot(x, y, ([1, 2], [0, 1])), [(arr(2, 3, 2), arr(3, 2)),
                                                                            (arr(1, 2, 3), arr(2, 3, 2))]),
    "kron": (lambda t, x, y: t.kron(x, y), [(arr(2, 2), arr(2, 3)), (arr(2), arr(3))]),
    "addmv": (lambda t, b, m, v: t.addmv(b, m, v, beta=0.5, alpha=2), [(arr(2), arr(2, 3), arr(3)),
                                                                       (arr(1), arr(3, 2), arr(2))]),
    "baddbmm": (lambda t, b, x, y: t.baddbmm(b, x, y), [(arr(2, 2, 2), arr(2, 2, 3), arr(2, 3, 2)),
                                                        (arr(2, 1), arr(3, 2, 2), arr(3, 2, 1))]),
}

OP_CASES += section("function", ("gradcheck", "parity"), [
    (name, fn, list(first), {"more_inputs": (tuple(second),), "graph": "names"})
    for name, (fn, (first, second)) in _ON_TWO_SHAPES.items()],
    dtypes=("float64", "float32"), tol={"float64": dict(rtol=1e-12, atol=1e-12, grad_rtol=1e-11, grad_atol=1e-11),
                                        "float32": dict(rtol=1e-5, atol=1e-5, grad_rtol=1e-4, grad_atol=1e-4)})


# -- functions from torch's op table (tests/ops/test_opinfo.py runs torch's own samples through them) -----
V = np.array([[0.3, 1.6, -0.7, 2.2], [-1.4, 0.45, 3.1, -2.6]])   # away from integers and from ties
W = np.array([[1.5, -0.7, 2.5, 1.2], [0.65, 1.9, -1.1, 0.6]])
P = np.array([[0.35, 1.6, 0.7, 2.2], [1.4, 0.45, 3.1, 2.6]])       # positive
U = np.array([[0.3, -0.6, 0.1, 0.8], [-0.45, 0.25, -0.9, 0.55]])  # inside (-1, 1)
BIG = P + 1.2                                                       # above 1 (acosh) and above 2 (mvlgamma)
SQUARE = np.array([[2.0, 0.3, -0.5], [0.4, 1.5, 0.2], [-0.3, 0.6, 1.8]])  # well-conditioned square matrices
SQUARE2 = np.array([[0.7, -1.2, 0.4], [1.1, 0.2, -0.8], [0.5, 0.9, 1.3]])

# where torch records more than one node, parity compares the output's node only
SEVERAL_NODES = {"graph": "root"}
OP_CASES += section("function", ("gradcheck", "parity"), [
    ("acosh", lambda t, x: t.acosh(x), [BIG]),
    ("asinh", lambda t, x: t.asinh(x), [V]),
    ("atanh", lambda t, x: t.atanh(x), [U]),
    ("erfc", lambda t, x: t.erfc(x), [V]),
    ("erfinv", lambda t, x: t.erfinv(x), [U]),
    ("lgamma", lambda t, x: t.lgamma(x), [V]),
    ("digamma", lambda t, x: t.digamma(x), [V]),
    ("polygamma", lambda t, x: t.polygamma(2, x), [V]),
    ("mvlgamma", lambda t, x: t.mvlgamma(x, 3), [BIG]),
    ("deg2rad", lambda t, x: t.deg2rad(x), [V]),
    ("rad2deg", lambda t, x: t.rad2deg(x), [V]),
    ("frac", lambda t, x: t.frac(x), [V]),
    ("sinc", lambda t, x: t.sinc(x), [V]),
    ("clamp_max", lambda t, x: t.clamp_max(x, 0.5), [V]),
    ("clamp_min", lambda t, x: t.clamp_min(x, 0.5), [V]),
    ("clamp_max_tensor", lambda t, x, y: t.clamp_max(x, y), [V, W]),
    ("clamp_min_tensor", lambda t, x, y: t.clamp_min(x, y), [V, W]),
    ("xlogy", lambda t, x, y: t.xlogy(x, y), [V, P]),
    ("xlogy_scalar_self", lambda t, y: t.xlogy(2.5, y), [P]),
    ("xlogy_scalar_other", lambda t, x: t.xlogy(x, 2.5), [V]),
    ("logaddexp", lambda t, x, y: t.logaddexp(x, y), [V, W]),
    ("logaddexp2", lambda t, x, y: t.logaddexp2(x, y[:1]), [V, W]),
    ("copysign", lambda t, x, y: t.copysign(x, y), [V, W]),
    ("copysign_scalar", lambda t, x: t.copysign(x, -1.5), [V]),
    ("fmax", lambda t, x, y: t.fmax(x, y), [V, W]),
    ("fmin", lambda t, x, y: t.fmin(x, y), [V, W]),
    ("ldexp", lambda t, x, y: t.ldexp(x, y), [V, W]),
    ("rot90", lambda t, x: t.rot90(x, 3, (1, 0)), [V]),
    ("block_diag", lambda t, x, y: t.block_diag(x, y[0], y[1, 0]), [V, W]),
    ("take", lambda t, x: t.take(x, t.tensor([[0, 5], [5, -1]])), [V]),
    ("select_scatter", lambda t, x, y: t.select_scatter(x, y[0], 0, 1), [V, W]),
    ("slice_scatter", lambda t, x, y: t.slice_scatter(x, y[:, :2], 1, 1, 4, 2), [V, W]),
    ("diagonal_scatter", lambda t, x, y: t.diagonal_scatter(x, y[0, :2], 1), [V, W]),
    ("repeat_interleave", lambda t, x: t.repeat_interleave(x, t.tensor([2, 0, 1, 3]), dim=1), [V]),
    ("tensor_split", lambda t, x: t.tensor_split(x, 3, 1)[1] * t.hsplit(x, [1, 3])[2].sum(), [V]),
    ("hardshrink", lambda t, x: t.nn.functional.hardshrink(x, 0.5), [V]),
    ("softshrink", lambda t, x: t.nn.functional.softshrink(x, 0.5), [V]),
    ("threshold", lambda t, x: t.nn.functional.threshold(x, 0.4, -2.0), [V]),
    ("glu", lambda t, x: t.nn.functional.glu(x, 1), [V]),
    ("prelu", lambda t, x, w: t.nn.functional.prelu(x.reshape(1, 2, 4), w[:, 0] * 0.3), [V, W]),
    ("pdist", lambda t, x: t.nn.functional.pdist(x.reshape(4, 2), 3.0), [V]),
    ("soft_margin_loss", lambda t, x, y: t.nn.functional.soft_margin_loss(x, y.detach().sign()), [V, W]),
    ("nansum", lambda t, x: t.nansum(x, 1), [V]),
    ("cummax", lambda t, x: t.cummax(x, 1)[0], [V]),
    ("cummin", lambda t, x: t.cummin(x, 0)[0], [V]),
    ("kthvalue", lambda t, x: t.kthvalue(x, 3, 1)[0], [V]),
    # renorm: the slice norms are NumPy's sums (float64 results within an ulp or two of torch's)
    ("renorm", lambda t, x: x.renorm(2, 0, 2.0) + t.renorm(x, 1, 1, 1.0) + x.renorm(3, 1, 2.5), [V]),
    ("mode", lambda t, x: t.mode(x, 1)[0], [V]),
    ("frexp", lambda t, x: t.frexp(x).mantissa * x.frexp()[1], [V]),
    *[(f"scatter_reduce_{reduce}" + ("" if include_self else "_without_self"),
       lambda t, x, y, reduce=reduce, include_self=include_self:
       x.scatter_reduce(1, t.tensor([[0, 2, 2, 3], [1, 1, 1, 0]]), y + 0.05, reduce, include_self=include_self), [V, W])
      for reduce in ("sum", "prod", "mean", "amax", "amin") for include_self in (True, False)],
    ("sum_to_size", lambda t, x: x.reshape(2, 2, 2).sum_to_size(2, 1) * x.sum_to_size((1, 4)), [V], SEVERAL_NODES),
    ("index_copy", lambda t, x, y: x.index_copy(1, t.tensor([3, 0]), y[:, :2]), [V, W]),
    ("index_copy_repeated", lambda t, x, y: t.index_copy(x, 0, t.tensor([1, 1]), y), [V, W],
     {"skips": {"gradcheck": "torch's rule (index_select of ḡ) also sends ḡ to the slice a repeat overwrote"}}),
    ("masked_scatter", lambda t, x, y: x.masked_scatter(t.tensor([[True, False, False, True], [False, True, True, False]]), y),
     [V, W]),
    ("masked_scatter_broadcast", lambda t, x, y: x[0].masked_scatter(t.tensor([[True], [False]]), y), [V, W]),
    ("nanmedian", lambda t, x: t.nanmedian(x), [V]),
    ("nanmedian_dim", lambda t, x: x.nanmedian(0, keepdim=True)[0], [V]),
    ("det", lambda t, a: t.linalg.det(a), [SQUARE]),
    ("slogdet", lambda t, a: t.linalg.slogdet(a)[1], [SQUARE]),
    ("inv", lambda t, a: t.linalg.inv(a), [SQUARE]),
    ("matrix_exp", lambda t, a: t.matrix_exp(a) + t.linalg.matrix_exp(a.reshape(1, 3, 3) * 3.0).mT, [SQUARE]),
    ("solve", lambda t, a, b: t.linalg.solve(a, b), [SQUARE, SQUARE2]),
    ("solve_triangular", lambda t, a, b: t.linalg.solve_triangular(a, b, upper=True)
     + t.linalg.solve_triangular(a, b[:2], upper=False, left=False, unitriangular=True).sum(0), [SQUARE, SQUARE2]),
    ("qr", lambda t, a: (lambda q, r: q.exp().sum() * r)(*t.linalg.qr(a.mT)), [V]),
    ("cond", lambda t, a, b: t.linalg.cond(a) + t.linalg.cond(a, -2) * t.linalg.cond(a, "nuc") + t.linalg.cond(b),
     [SQUARE, V]),
    ("lstsq", lambda t, a, b: (lambda r: r.solution.sum(0) + r.residuals)(t.linalg.lstsq(a.mT, b.mT, driver="gelsd"))
     + t.linalg.lstsq(a, b[:, 0]).solution[:2], [V, W]),
    ("pinv", lambda t, a, b: t.linalg.pinv(a) + t.pinverse(b).mT[:, :3] + t.linalg.pinv(a.mT @ a, hermitian=True)
     @ a.mT, [V[:, :3].T.copy(), V]),
    ("qr_wide", lambda t, a: (lambda q, r: q.exp().sum() * r)(*a.qr()), [V]),
    ("cholesky", lambda t, a: t.linalg.cholesky(a @ a.mT + t.eye(3, dtype=t.float64), upper=True), [SQUARE]),
    ("cholesky_legacy", lambda t, a: t.cholesky(a @ a.mT + t.eye(3, dtype=t.float64)), [SQUARE]),
    ("svdvals", lambda t, a: t.linalg.svdvals(a), [V]),
    ("eigvalsh", lambda t, a: t.linalg.eigvalsh(a + a.mT), [SQUARE]),
    ("cross", lambda t, a, b: t.linalg.cross(a, b, dim=0), [SQUARE, SQUARE2]),
    ("addr", lambda t, m, u, v: t.addr(m, u[0], v[1], beta=0.5, alpha=2.0), [SQUARE, SQUARE2, SQUARE]),
    ("addbmm", lambda t, m, a, b: t.addbmm(m, a.reshape(2, 2, 2), b.reshape(2, 2, 2), beta=2.0, alpha=0.5),
     [SQUARE[:2, :2], V, W]),
    ("cdist", lambda t, a, b: t.cdist(a.reshape(4, 2), b.reshape(4, 2), 1.5), [V, W]),
    ("stacks", lambda t, x, y: t.dstack([x, y]).sum(2) + t.vstack([x[0], y[1]])
     * t.column_stack([x[:, 0], y[:, 1]]).sum(), [V, W]),
], gradcheck=dict(eps=1e-6, atol=1e-5), graph="root",
    tol={"float64": dict(rtol=1e-9, atol=1e-12, grad_rtol=1e-8, grad_atol=1e-12)})


# -- rounding, in-place writes and random fills, losses, weight_norm ------------------------------------
MASK24 = np.array([[True, False, False, True], [False, True, False, False]])


def _weight_norm(t):
    """torch._weight_norm, the node of nn.utils.parametrizations.weight_norm (private in gradviz)."""
    return t._weight_norm if t is not gradviz else gradviz.functions.nnops._weight_norm


LABELS = np.array([1, 3])
OP_CASES += section("function", ("gradcheck", "parity"), [
    ("sort", lambda t, x: t.sort(x, dim=-1)[0], [V]),
    ("topk", lambda t, x: t.topk(x, 2)[0], [V]),
    ("mse_loss", lambda t, x, y: t.nn.functional.mse_loss(x, y), [V, W]),
    ("nll_loss", lambda t, x: t.nn.functional.nll_loss(t.log_softmax(x, 1), t.tensor(LABELS)), [V]),
    # cos − margin as torch's C++ subtracts a Scalar (SubBackward1), mag + eps as it adds one (AddBackward1)
    ("cosine_embedding_loss_margin", lambda t, x, y: t.nn.functional.cosine_embedding_loss(
        x, y, t.tensor([1, -1]), margin=-0.5), [V, W]),
    ("ceil", lambda t, x: t.ceil(x) * x, [V]),
    ("floor", lambda t, x: t.floor(x) * x, [V]),
    ("round", lambda t, x: t.round(x) * x, [V]),
    ("trunc", lambda t, x: t.trunc(x) * x, [V]),
    ("div_floor", lambda t, x, y: t.div(x, y, rounding_mode="floor") * x, [V, W]),
    ("masked_fill_tensor", lambda t, x, v: x.masked_fill(t.tensor(MASK24), v.sum()), [V, W]),
    ("remainder", lambda t, x, y: t.remainder(x, y), [V, W]),
    ("remainder_scalar", lambda t, x: t.remainder(x, 1.5), [V]),
    ("rsub", lambda t, x, y: t.rsub(x, y, alpha=2.0), [V, W]),
    ("sub_alpha", lambda t, x, y: t.sub(x, y, alpha=0.5), [V, W]),
    # a float32 round trip in the middle
    ("to_copy", lambda t, x: x.to(t.float32).to(t.float64) * 1.0, [V], {"gradcheck": dict(eps=1e-3)}),
    ("squeeze_", lambda t, x, y: t.matmul(x[0], y.T), [V, W]),   # vector @ matrix squeezes in place
    ("index_fill_tensor", lambda t, x, v: x.index_fill(1, t.tensor([0, 2]), v.sum()), [V, W]),
    ("index_put_accumulate", lambda t, x, y: t.index_put(x, (t.tensor([1, 0, 1]),), y[0, :4] * 1.0,
                                                         accumulate=True), [V, W]),
    ("round_decimals", lambda t, x: t.round(x + 0.013, decimals=1) * x, [V]),   # away from .x5 ties
    ("cross_entropy_probabilities", lambda t, x, y: t.nn.functional.cross_entropy(x, t.softmax(y, 1)), [V, W]),
    ("nll_loss2d", lambda t, x: t.nn.functional.nll_loss(t.log_softmax(x.reshape(2, 2, 2, 1), 1),
                                                         t.tensor(LABELS.reshape(2, 1, 1) % 2).expand(2, 2, 1)), [V]),
    # margins kept away from the hinge's kink at 0
    ("multi_margin_loss", lambda t, x: t.nn.functional.multi_margin_loss(x, t.tensor(LABELS), p=2, margin=0.7,
                                                                         weight=t.tensor([0.5, 2.0, 1.0, 1.5], dtype=x.dtype)), [V]),
    ("multi_margin_loss_none", lambda t, x: t.nn.functional.multi_margin_loss(x, t.tensor(LABELS), reduction="none"),
     [V]),
    # CTC of 4 steps of 2 labels and a blank against the target [1]: its gradient presumes log_softmax
    # before it (torch's), so the row differentiates through one
    ("ctc_loss", lambda t, x: t.nn.functional.ctc_loss(t.log_softmax(x.reshape(4, 1, 2), 2), t.tensor([[1]]), (4,),
                                                       (1,)), [V]),
    ("ctc_loss_none", lambda t, x, y: t.nn.functional.ctc_loss(
        t.cat([x, y], 1).reshape(4, 2, 2).log_softmax(2), t.tensor([1, 1, 1]), (4, 3), (2, 1), reduction="none"),
     [V, W]),
    # a class listed twice counts twice; the list ends at the first -1
    ("multilabel_margin_loss", lambda t, x: t.nn.functional.multilabel_margin_loss(
        x, t.tensor([[1, 2, -1, 0], [0, 2, 2, -1]]), reduction="none"), [V]),
    # the in-place view ops, on a non-leaf (a leaf that requires grad refuses them)
    ("unsqueeze_", lambda t, x: (x * x).unsqueeze_(1), [V]),
    ("squeeze_all", lambda t, x: (x * x)[None].squeeze_(), [V]),
    ("squeeze_dims", lambda t, x: (x * x)[:, None, :, None].squeeze_((1, 3)), [V]),
    ("transpose_", lambda t, x, y: (x * y).transpose_(0, 1) @ y, [V, W]),
    ("t_", lambda t, x, y: (x * y).t_() @ y, [V, W]),
    # the in-place writes that replace a non-leaf's values: the old values get a zero gradient (a
    # sample times 0 keeps the finite differences exact)
    ("zero_", lambda t, x: (x * 1).zero_() + x, [V]),
    ("torch_zero_", lambda t, x: t.zero_(x * 1) + x, [V]),
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
], gradcheck=dict(eps=1e-6), graph="root",
    tol={"float64": dict(rtol=1e-6, atol=0, grad_rtol=1e-6, grad_atol=1e-12)})


# -- what sorting finds: quantiles, diff, cartesian_prod, combinations --------------------------------

V5 = np.array([[0.3, 1.6, -0.7, 2.2, 0.9], [-1.4, 0.45, 3.1, -2.6, 1.25]])   # no ties
W5 = np.array([[1.5, -0.7, 2.5, 1.2, 0.35], [0.65, 1.9, -1.1, 0.6, 2.75]])
GAPS = np.array([[False, True, False, False, True], [False, False, False, True, False]])   # NaN there

OP_CASES += section("sorting", ("gradcheck", "parity"), [
    ("quantile", lambda t, x: t.quantile(x, 0.3), [V5]),
    ("quantile_dim", lambda t, x: t.quantile(x, 0.65, dim=1, keepdim=True), [V5]),
    ("quantile_q_tensor", lambda t, x: t.quantile(x, t.tensor([0.1, 0.5, 0.95], dtype=x.dtype), dim=0), [V5]),
    ("quantile_q_grad", lambda t, x, y: t.quantile(x, y[0, :3] * 0.1 + 0.45, dim=1), [V5, W5]),
    ("quantile_midpoint", lambda t, x: t.quantile(x, 0.3, dim=1, interpolation="midpoint"), [V5]),
    ("quantile_lower", lambda t, x: x.quantile(0.3, dim=0, interpolation="lower"), [V5]),
    ("quantile_higher", lambda t, x: t.quantile(x, 0.3, interpolation="higher", keepdim=True), [V5]),
    ("quantile_nearest", lambda t, x: t.quantile(x, t.tensor([0.2, 0.8], dtype=x.dtype), 1,
                                                 interpolation="nearest"), [V5]),
    ("nanquantile", lambda t, x: t.nanquantile(x.masked_fill(t.tensor(GAPS), float("nan")), 0.4, dim=1), [V5]),
    ("nanquantile_q_grad", lambda t, x, y: x.nanquantile(y[1, :2] * 0.1 + 0.45, dim=0), [V5, W5]),
    ("diff", lambda t, x: t.diff(x, n=2, dim=1, prepend=x[:, :1] * 2.0), [V5]),
    ("diff_append", lambda t, x, y: t.diff(x, dim=0, append=y), [V5, W5]),
    ("cartesian_prod", lambda t, x, y: t.cartesian_prod(x[0, :3], y[1, :2], x[1, 3:]), [V5, W5]),
    ("combinations", lambda t, x: t.combinations(x[0], 3), [V5]),
    ("combinations_replacement", lambda t, x: t.combinations(x[1, :3], 2, with_replacement=True), [V5]),
], gradcheck=dict(eps=1e-6, atol=1e-5), dtypes=("float64", "float32"),
    tol={"float64": dict(rtol=0, atol=0, grad_rtol=1e-12, grad_atol=1e-12),   # the same arithmetic, so the same bits
         "float32": dict(rtol=0, atol=0, grad_rtol=1e-6, grad_atol=1e-12)})


# -- sort and topk: the values are a gather along dim -------------------------------------------------
X_SORT = np.array([[0.3, -1.2, 2.5, 0.7], [1.1, 0.2, -0.4, 3.3], [-2.0, 0.9, 0.1, 1.6]])
OP_CASES += section("sorting", ("gradcheck",), [
    ("sort-dim1", lambda t, x: x.sort(dim=1)[0], [X_SORT]),
    ("sort-dim0-desc", lambda t, x: x.sort(dim=0, descending=True).values, [X_SORT]),
    ("sort-flat", lambda t, x: t.sort(x.reshape(-1))[0], [X_SORT]),
    ("topk-dim1", lambda t, x: x.topk(2, dim=1).values, [X_SORT]),
    ("topk-smallest", lambda t, x: t.topk(x, 1, dim=0, largest=False)[0], [X_SORT]),
])
OP_CASES += section("sorting", ("parity",), [
    ("sort_topk", lambda t, x: (x.sort(dim=1, descending=True).values, x.topk(3, dim=0).values), [X_SORT]),
])


# -- convolutions, pools, window views and resampling (a representative set of strides, paddings, ...) --
CONV_RNG = np.random.default_rng(11)
X2 = CONV_RNG.standard_normal((2, 4, 7, 6))
X2S = CONV_RNG.standard_normal((1, 2, 5, 5))          # small: gradcheck costs one backward per output
X1 = CONV_RNG.standard_normal((2, 4, 9))
X3S = CONV_RNG.standard_normal((1, 1, 2, 3, 3))        # volumetric (N, C, D, H, W)
W2 = CONV_RNG.standard_normal((6, 4, 3, 2))
W2G = CONV_RNG.standard_normal((6, 2, 3, 3))          # groups=2
W2S = CONV_RNG.standard_normal((3, 2, 3, 3))
W2E = CONV_RNG.standard_normal((3, 2, 2, 2))          # an even kernel: 'same' pads asymmetrically
W1 = CONV_RNG.standard_normal((3, 4, 3))
W1G = CONV_RNG.standard_normal((4, 1, 2))             # depthwise: groups = channels
B6, B3, B4 = CONV_RNG.standard_normal(6), CONV_RNG.standard_normal(3), CONV_RNG.standard_normal(4)
# distinct values, so no max-pool window has a tie (finite differences need a unique winner)
D2 = CONV_RNG.permutation(np.linspace(-3, 3, 2 * 3 * 7 * 6)).reshape(2, 3, 7, 6)
D1 = CONV_RNG.permutation(np.linspace(-3, 3, 2 * 3 * 11)).reshape(2, 3, 11)
THETA = CONV_RNG.standard_normal((2, 2, 3)) * 0.8
GRID = CONV_RNG.uniform(-1.3, 1.3, (1, 3, 4, 2))     # beyond ±1 too: the padding modes decide those
D3 = CONV_RNG.permutation(np.linspace(-3, 3, 2 * 3 * 4 * 5)).reshape(1, 2, 3, 4, 5)
COLS = CONV_RNG.standard_normal((2, 3 * 4, 6))
COLS8 = CONV_RNG.standard_normal((2, 3 * 4, 8))
WT2 = CONV_RNG.standard_normal((2, 3, 2, 2))          # transposed: (in, out / groups, *k)
WT2G = CONV_RNG.standard_normal((2, 2, 3, 2))         # transposed, groups=2
WT1 = CONV_RNG.standard_normal((4, 2, 3))
WT3 = CONV_RNG.standard_normal((1, 2, 2, 2, 2))
W3 = CONV_RNG.standard_normal((2, 1, 2, 2, 2))

OP_CASES += section("conv", ("gradcheck", "parity"), [
    ("conv2d", lambda t, x, w, b: F(t).conv2d(x, w, b), [X2, W2, B6]),
    ("conv2d_nobias", lambda t, x, w: F(t).conv2d(x, w), [X2, W2]),
    ("conv2d_stride_pad", lambda t, x, w, b: F(t).conv2d(x, w, b, stride=2, padding=1), [X2, W2, B6]),
    ("conv2d_stride_pad_dilation", lambda t, x, w: F(t).conv2d(x, w, stride=(1, 2), padding=(2, 1),
                                                                   dilation=(2, 1)), [X2, W2]),
    ("conv2d_groups", lambda t, x, w, b: F(t).conv2d(x, w, b, padding=1, groups=2), [X2, W2G, B6]),
    ("conv2d_groups_stride_dilation", lambda t, x, w: F(t).conv2d(x, w, stride=2, dilation=2, groups=2),
     [X2, W2G]),
    ("conv2d_same", lambda t, x, w, b: F(t).conv2d(x, w, b, padding="same"), [X2S, W2S, B3]),
    ("conv2d_same_dilation", lambda t, x, w: F(t).conv2d(x, w, padding="same", dilation=2), [X2S, W2S]),
    ("conv2d_same_even", lambda t, x, w: F(t).conv2d(x, w, padding="same"), [X2S, W2E]),
    ("conv2d_valid", lambda t, x, w: F(t).conv2d(x, w, padding="valid"), [X2S, W2S]),
    ("conv2d_unbatched", lambda t, x, w: F(t).conv2d(x[0], w), [X2S, W2S]),
    ("conv1d", lambda t, x, w: F(t).conv1d(x, w), [X1, W1]),
    ("conv1d_stride_pad_dilation", lambda t, x, w: F(t).conv1d(x, w, stride=2, padding=2, dilation=3), [X1, W1]),
    ("conv1d_depthwise", lambda t, x, w, b: F(t).conv1d(x, w, b, padding=1, groups=4), [X1, W1G, B4]),
    ("conv1d_same", lambda t, x, w: F(t).conv1d(x, w, padding="same"), [X1, W1]),
    ("conv3d", lambda t, x, w, b: F(t).conv3d(x, w, b, padding=(0, 1, 1)), [X3S, W3, B3[:2]]),
    ("conv_transpose2d", lambda t, x, w, b: F(t).conv_transpose2d(x, w, b), [X2S, WT2, B3]),
    ("conv_transpose2d_stride_pad_output_pad",
     lambda t, x, w: F(t).conv_transpose2d(x, w, stride=2, padding=1, output_padding=1), [X2S, WT2]),
    ("conv_transpose2d_groups_dilation", lambda t, x, w, b: F(t).conv_transpose2d(
        x, w, b, stride=(1, 2), padding=(2, 0), groups=2, dilation=(2, 1)), [X2S, WT2G, B4]),
    # output_padding ≥ stride, allowed by a larger dilation: the far pixels receive nothing
    ("conv_transpose2d_output_pad_dilation", lambda t, x, w: F(t).conv_transpose2d(
        x, w, padding=1, output_padding=1, dilation=2), [X2S, WT2]),
    ("conv_transpose1d", lambda t, x, w, b: F(t).conv_transpose1d(x, w, b, stride=3, padding=1, output_padding=2),
     [X1[:1], WT1, B3[:2]]),
    ("conv_transpose1d_unbatched", lambda t, x, w: F(t).conv_transpose1d(x[0], w, stride=2), [X1, WT1]),
    ("conv_transpose3d", lambda t, x, w: F(t).conv_transpose3d(x, w, stride=(1, 2, 1), padding=(0, 1, 0)),
     [X3S, WT3]),
])

OP_CASES += section("pool", ("gradcheck", "parity"), [
    ("max_pool2d", lambda t, x: F(t).max_pool2d(x, 2), [D2]),
    ("max_pool2d_stride_pad", lambda t, x: F(t).max_pool2d(x, 3, stride=2, padding=1), [D2]),
    ("max_pool2d_overlap_dilation", lambda t, x: F(t).max_pool2d(x, (3, 2), stride=1, dilation=(2, 1)), [D2]),
    ("max_pool2d_ceil", lambda t, x: F(t).max_pool2d(x, 2, ceil_mode=True), [D2]),
    ("max_pool2d_ceil_pad", lambda t, x: F(t).max_pool2d(x, 3, 2, 1, ceil_mode=True), [D2]),
    ("max_pool1d", lambda t, x: F(t).max_pool1d(x, 3, stride=2), [D1]),
    ("max_pool1d_pad_ceil", lambda t, x: F(t).max_pool1d(x, 2, padding=1, ceil_mode=True), [D1]),
    ("avg_pool2d", lambda t, x: F(t).avg_pool2d(x, 2), [X2]),
    ("avg_pool2d_pad", lambda t, x: F(t).avg_pool2d(x, 3, stride=2, padding=1), [X2]),
    ("avg_pool2d_pad_exclude", lambda t, x: F(t).avg_pool2d(x, 3, 2, 1, count_include_pad=False), [X2]),
    ("avg_pool2d_ceil", lambda t, x: F(t).avg_pool2d(x, 2, ceil_mode=True), [X2]),
    ("avg_pool2d_ceil_pad", lambda t, x: F(t).avg_pool2d(x, 3, 2, 1, ceil_mode=True), [X2]),
    ("avg_pool2d_divisor", lambda t, x: F(t).avg_pool2d(x, 2, 1, divisor_override=3), [X2]),
    ("avg_pool1d", lambda t, x: F(t).avg_pool1d(x, 3, stride=2, padding=1), [X1]),
    ("adaptive_avg_pool2d", lambda t, x: F(t).adaptive_avg_pool2d(x, (3, 4)), [X2]),
    ("adaptive_avg_pool2d_one", lambda t, x: F(t).adaptive_avg_pool2d(x, 1), [X2]),
    ("adaptive_avg_pool2d_none", lambda t, x: F(t).adaptive_avg_pool2d(x, (None, 2)), [X2]),
    ("adaptive_avg_pool1d", lambda t, x: F(t).adaptive_avg_pool1d(x, 4), [X1]),
    ("adaptive_max_pool2d", lambda t, x: F(t).adaptive_max_pool2d(x, (3, 4)), [D2]),
    ("adaptive_max_pool2d_up", lambda t, x: F(t).adaptive_max_pool2d(x, 5), [D2]),
    ("max_pool3d", lambda t, x: F(t).max_pool3d(x, 2), [D3]),
    ("max_pool3d_overlap_pad_dilation", lambda t, x: F(t).max_pool3d(x, (2, 3, 2), stride=1, padding=(0, 1, 1),
                                                                       dilation=(1, 1, 2)), [D3]),
    ("max_pool3d_ceil", lambda t, x: F(t).max_pool3d(x, 2, ceil_mode=True), [D3]),
    ("adaptive_max_pool3d", lambda t, x: F(t).adaptive_max_pool3d(x, (2, 3, 4)), [D3]),
    ("adaptive_max_pool3d_up_unbatched", lambda t, x: F(t).adaptive_max_pool3d(x[0], (4, None, 6)), [D3]),
    ("max_unpool3d", lambda t, x: F(t).max_unpool3d(*F(t).max_pool3d(x, 2, return_indices=True), 2,
                                                      output_size=(3, 5, 5)), [D3]),
    ("avg_pool3d", lambda t, x: F(t).avg_pool3d(x, 2, stride=1), [D3]),
    ("avg_pool3d_pad_exclude_ceil", lambda t, x: F(t).avg_pool3d(x, 3, 2, 1, ceil_mode=True,
                                                                   count_include_pad=False), [D3]),
    ("max_unpool2d", lambda t, x: F(t).max_unpool2d(*F(t).max_pool2d(x, 2, return_indices=True), 2,
                                                      output_size=(7, 6)), [D2[:1]]),
    # windows that do not overlap: where they do, one input can win twice and unpooling keeps one write
    ("max_unpool1d", lambda t, x: F(t).max_unpool1d(*F(t).max_pool1d(x, 2, 3, return_indices=True), 2, 3), [D1]),
    # squared, so the gradient's own graph records the adjoint (AvgPool3DBackwardBackward0)
    ("avg_pool3d_squared", lambda t, x: F(t).avg_pool3d(x, 2, stride=1) ** 2, [D3]),
    ("avg_pool3d_divisor", lambda t, x: F(t).avg_pool3d(x, (1, 2, 2), divisor_override=3), [D3]),
])

OP_CASES += section("resample", ("gradcheck", "parity"), [
    ("unfold", lambda t, x: F(t).unfold(x, 2), [X2]),
    ("unfold_all", lambda t, x: F(t).unfold(x, (3, 2), dilation=(1, 2), padding=1, stride=2), [X2]),
    # small enough for gradcheck (the two above have over 200 output elements)
    ("unfold_small", lambda t, x: F(t).unfold(x, 2, padding=1, stride=2), [X2S]),
    ("fold", lambda t, c: F(t).fold(c, (4, 5), 2, stride=(2, 1)), [COLS8]),
    ("fold_overlap", lambda t, c: F(t).fold(c, (3, 4), 2), [COLS]),
    ("pixel_shuffle", lambda t, x: F(t).pixel_shuffle(x, 2), [X2[:, :, :3, :3]]),
    ("pixel_unshuffle", lambda t, x: F(t).pixel_unshuffle(x, 2), [X2[:, :, :6, :4]]),
    ("channel_shuffle", lambda t, x: F(t).channel_shuffle(x, 2), [X2S[:, :, :2]]),
    ("channel_shuffle3d", lambda t, x: t.nn.ChannelShuffle(3)(x), [CONV_RNG.standard_normal((2, 6, 3))]),
    ("upsample_nearest", lambda t, x: F(t).interpolate(x, scale_factor=2), [X2S]),
    ("upsample_nearest_size", lambda t, x: F(t).interpolate(x, size=(7, 3)), [X2S]),
    ("upsample_nearest1d", lambda t, x: F(t).interpolate(x, scale_factor=3), [X1]),
    ("upsample_bilinear", lambda t, x: F(t).interpolate(x, scale_factor=2, mode="bilinear"), [X2S]),
    ("upsample_bilinear_size", lambda t, x: F(t).interpolate(x, size=(8, 3), mode="bilinear"), [X2S]),
    ("upsample_bilinear_corners", lambda t, x: F(t).interpolate(x, size=(9, 7), mode="bilinear",
                                                                  align_corners=True), [X2S]),
    ("upsample_linear1d", lambda t, x: F(t).interpolate(x, size=13, mode="linear"), [X1]),
    ("upsample_bicubic", lambda t, x: F(t).interpolate(x, scale_factor=1.6, mode="bicubic"), [X2S]),
    ("upsample_bicubic_corners", lambda t, x: F(t).interpolate(x, size=(7, 3), mode="bicubic",
                                                                 align_corners=True), [X2S]),
    ("upsample_trilinear", lambda t, x: F(t).interpolate(x, size=(3, 4, 2), mode="trilinear"), [X3S]),
    ("upsample_nearest3d", lambda t, x: F(t).interpolate(x, scale_factor=(2, 1, 1.5)), [X3S]),
    ("upsample_nearest_exact", lambda t, x: F(t).interpolate(x, size=(7, 3), mode="nearest-exact"), [X2S]),
    ("upsample_nearest_exact1d", lambda t, x: F(t).interpolate(x, size=5, mode="nearest-exact"), [X1]),
    ("interpolate_area", lambda t, x: F(t).interpolate(x, size=(3, 2), mode="area"), [X2S]),
    ("adaptive_avg_pool3d", lambda t, x: F(t).adaptive_avg_pool3d(x, (1, 3, 2)), [X3S]),
    # squared, so the gradient's own graph records the adjoint (AdaptiveAvgPool3DBackwardBackward0)
    ("adaptive_avg_pool3d_squared", lambda t, x: F(t).adaptive_avg_pool3d(x, (1, 3, 2)) ** 2, [X3S]),
    ("affine_grid", lambda t, th: F(t).affine_grid(th, (2, 3, 4, 5), align_corners=False), [THETA]),
    ("affine_grid_corners", lambda t, th: F(t).affine_grid(th, (2, 1, 3, 2), align_corners=True), [THETA]),
    *[(f"grid_sample_{mode}_{pad}_{int(corners)}", lambda t, x, g, mode=mode, pad=pad, corners=corners:
       F(t).grid_sample(x, g, mode, pad, corners), [X2S[:, :, :4], GRID])
      for mode in ("bilinear", "nearest") for pad in ("zeros", "border", "reflection") for corners in (False, True)],
    # the spatial transformer: a grid from θ, then the image sampled at it (both inputs get gradients)
    ("affine_grid_then_grid_sample", lambda t, x, th: F(t).grid_sample(
        x, F(t).affine_grid(th[:1], (1, 2, 3, 4), align_corners=False), align_corners=False), [X2S, THETA]),
    ("pad_reflect", lambda t, x: F(t).pad(x, (1, 2, 2, 1), mode="reflect"), [X2]),
    ("pad_reflect1d", lambda t, x: F(t).pad(x, (3, 1), mode="reflect"), [X1]),
    ("pad_replicate", lambda t, x: F(t).pad(x, (2, 0, 1, 3), mode="replicate"), [X2]),
    # PyTorch builds circular padding from in-place slice copies (a chain of CopySlices); here it is one cat
    ("pad_circular", lambda t, x: F(t).pad(x, (1, 2, 2, 1), mode="circular"), [X2], {"graph": "none"}),
    # a negative pad crops first, then the positive pads wrap the cropped values around
    ("pad_circular_crop", lambda t, x: F(t).pad(x, (-1, 2, 3, -2), mode="circular"), [X2], {"graph": "none"}),
    ("pad_constant", lambda t, x: F(t).pad(x, (1, 1, 2, 0), value=0.5), [X2]),
])


def _output_size(case: OpCase) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # padding='same' with an even kernel warns, as in PyTorch
        return int(np.prod(case.fn(gradviz, *[gradviz.tensor(a) for a in case.inputs]).shape))


# gradcheck is one backward per output element: it runs on the rows with small outputs
OP_CASES[:] = [replace(case, skips={"gradcheck": "over 200 output elements, one backward each"})
               if case.group in ("conv", "pool", "resample") and _output_size(case) > 200 else case
               for case in OP_CASES]


# -- nn.functional: activations, losses, norms, embeddings, padding ---------------------------------------
def away_from(points, shape, seed):
    """Samples in [−4, 4] kept 0.05 away from the kinks of piecewise functions."""
    x = np.random.default_rng(seed).uniform(-4, 4, shape)
    for p in points:
        near = np.abs(x - p) < 0.05
        x[near] += 0.1
    return x


XK = away_from((-3, -1, 0, 1, 3, 6), (3, 4), 1)
YK = away_from((), (3, 4), 2)
PROBS = np.random.default_rng(3).uniform(0.05, 1, (3, 4))   # probabilities / positive targets
# probabilities inside (0, 1), away from BCE's clamp
PROBS_INSIDE = np.random.default_rng(4).uniform(0.05, 0.95, (3, 4))

OP_CASES += section("nn", ("gradcheck", "parity"), [
    ("relu6", lambda t, x: F(t).relu6(x * 2), [XK], SEVERAL_NODES),
    ("hardtanh", lambda t, x: F(t).hardtanh(x), [XK]),
    ("hardtanh_range", lambda t, x: F(t).hardtanh(x, -2.0, 0.5), [XK]),
    ("elu", lambda t, x: F(t).elu(x), [XK]),
    ("elu_alpha", lambda t, x: F(t).elu(x, 0.5), [XK]),
    ("selu", lambda t, x: F(t).selu(x), [XK]),
    ("celu", lambda t, x: F(t).celu(x), [XK]),
    ("celu_alpha", lambda t, x: F(t).celu(x, 0.5), [XK]),
    # in place, on a tensor the graph made: the same node, or leaky_relu_'s own (it reads the result)
    ("relu_inplace", lambda t, x: F(t).relu(x * 1, inplace=True), [XK]),
    ("leaky_relu_inplace", lambda t, x: F(t).leaky_relu(x * 1, 0.2, inplace=True), [XK]),
    ("leaky_relu_", lambda t, x: F(t).leaky_relu_(x * 1), [XK]),
    ("hardtanh_inplace", lambda t, x: F(t).hardtanh(x * 1, -0.5, 0.5, inplace=True), [XK]),
    ("relu6_inplace", lambda t, x: F(t).relu6(x * 3, inplace=True), [XK]),
    ("silu_inplace", lambda t, x: F(t).silu(x * 1, inplace=True), [XK]),
    # elu_, selu_ and celu_ read the result (EluBackward1, CeluBackward1), as leaky_relu_
    ("elu_inplace", lambda t, x: F(t).elu(x * 1, inplace=True), [XK]),
    ("elu_inplace_alpha", lambda t, x: F(t).elu_(x * 1, 0.5), [XK]),
    ("selu_inplace", lambda t, x: F(t).selu(x * 1, inplace=True), [XK]),
    ("celu_inplace_alpha", lambda t, x: F(t).celu(x * 1, 0.5, inplace=True), [XK]),
    # torch.selu, torch.celu and torch.threshold: the same records, without F's inplace=
    ("torch_selu", lambda t, x: t.selu(x), [XK]),
    ("torch_celu_alpha", lambda t, x: t.celu(x, alpha=0.5), [XK]),
    ("torch_threshold", lambda t, x: t.threshold(x, 0.4, -2.0), [XK]),
    # threshold_ keeps its input (ThresholdBackward1): a value above the threshold hides what it replaced
    ("threshold_inplace", lambda t, x: F(t).threshold(x * 1, 0.4, 2.0, inplace=True), [XK]),
    ("torch_threshold_", lambda t, x: t.threshold_(x * 1, 0.4, -2.0), [XK]),
    # rrelu: in eval leaky_relu's numbers with the mean slope; in training slopes drawn from the seeded stream
    ("rrelu_eval", lambda t, x: F(t).rrelu(x, 0.1, 0.3), [XK]),
    ("rrelu_training", lambda t, x: (t.manual_seed(7), F(t).rrelu(x, 0.1, 0.3, training=True))[1], [XK]),
    ("rrelu_inplace", lambda t, x: (t.manual_seed(7), F(t).rrelu(x * 1, training=True, inplace=True))[1], [XK]),
    ("torch_rrelu_", lambda t, x: t.rrelu_(x * 1, 0.2, 0.4), [XK]),
    # x₁ᵀ W x₂ + b over a batch of (2, 6) pairs: two views, TrilinearBackward0, a view back, the bias
    ("bilinear_batched", lambda t, a, b, w, bias: F(t).bilinear(a, b, w, bias),
     [np.linspace(-1, 1, 36).reshape(2, 6, 3), np.linspace(1, -2, 48).reshape(2, 6, 4),
      np.linspace(-0.5, 0.7, 60).reshape(5, 3, 4), np.array([0.1, -0.2, 0.3, 0.0, 0.5])]),
    # three sequences of lengths 3, 2, 1 padded to (3, 3, 4), and the same batch first
    ("pack_padded_sequence", lambda t, x: t.nn.utils.rnn.pack_padded_sequence(x.reshape(3, 3, 4), [3, 2, 1]).data,
     [np.linspace(-1, 1, 36).reshape(9, 4)], SEVERAL_NODES),
    ("pack_padded_sequence_batch_first",
     lambda t, x: t.nn.utils.rnn.pack_padded_sequence(x.reshape(3, 3, 4), [3, 2, 1], batch_first=True).data,
     [np.linspace(-1, 1, 36).reshape(9, 4)], SEVERAL_NODES),
    ("silu", lambda t, x: F(t).silu(x), [XK]),
    ("mish", lambda t, x: F(t).mish(x), [XK]),
    ("softsign", lambda t, x: F(t).softsign(x), [XK], SEVERAL_NODES),
    ("hardsigmoid", lambda t, x: F(t).hardsigmoid(x), [XK]),
    ("hardswish", lambda t, x: F(t).hardswish(x), [XK]),
    ("logsigmoid", lambda t, x: F(t).logsigmoid(x), [XK]),
    ("softmin", lambda t, x: F(t).softmin(x, 1), [XK], SEVERAL_NODES),
    ("normalize", lambda t, x: F(t).normalize(x), [XK], SEVERAL_NODES),
    ("normalize_dim0_p1", lambda t, x: F(t).normalize(x, 1.0, 0), [XK], SEVERAL_NODES),
    ("l1_loss", lambda t, x, y: F(t).l1_loss(x, y), [XK, YK], SEVERAL_NODES),
    ("l1_loss_none", lambda t, x, y: F(t).l1_loss(x, y, reduction="none"), [XK, YK], SEVERAL_NODES),
    ("smooth_l1_loss", lambda t, x, y: F(t).smooth_l1_loss(x, y), [XK, YK]),
    ("smooth_l1_loss_beta", lambda t, x, y: F(t).smooth_l1_loss(x, y, reduction="sum", beta=2.5), [XK, YK]),
    ("smooth_l1_loss_none", lambda t, x, y: F(t).smooth_l1_loss(x, y, reduction="none", beta=0.5), [XK, YK]),
    ("huber_loss", lambda t, x, y: F(t).huber_loss(x, y), [XK, YK]),
    ("huber_loss_delta", lambda t, x, y: F(t).huber_loss(x, y, reduction="none", delta=2.0), [XK, YK]),
    ("bce_with_logits", lambda t, x, y: F(t).binary_cross_entropy_with_logits(x, y), [XK, PROBS]),
    ("bce_with_logits_none", lambda t, x, y: F(t).binary_cross_entropy_with_logits(x, y, reduction="none"),
     [XK * 10, PROBS]),
    ("bce_with_logits_weights", lambda t, x, y: F(t).binary_cross_entropy_with_logits(
        x, y, weight=t.tensor([1.0, 2.0, 0.5, 3.0], dtype=t.float64),
        pos_weight=t.tensor([0.5, 1.0, 2.0, 4.0], dtype=t.float64), reduction="sum"), [XK, PROBS]),
    ("bce", lambda t, p, y: F(t).binary_cross_entropy(p, y), [PROBS_INSIDE, PROBS]),
    ("bce_sum", lambda t, p, y: F(t).binary_cross_entropy(p, y, reduction="sum"), [PROBS_INSIDE, PROBS]),
    ("bce_weight_none", lambda t, p, y: F(t).binary_cross_entropy(
        p, y, weight=t.tensor([1.0, 2.0, 0.5, 3.0], dtype=t.float64), reduction="none"), [PROBS_INSIDE, PROBS]),
    ("kl_div", lambda t, x, y: F(t).kl_div(F(t).log_softmax(x, 1), y, reduction="batchmean"), [XK, PROBS],
     SEVERAL_NODES),
    ("kl_div_sum", lambda t, x, y: F(t).kl_div(x, y, reduction="sum"), [XK, PROBS], SEVERAL_NODES),
    ("kl_div_log_target", lambda t, x, y: F(t).kl_div(x, y, reduction="none", log_target=True), [XK, YK],
     SEVERAL_NODES),
    ("cosine_similarity", lambda t, x, y: F(t).cosine_similarity(x, y), [XK, YK], SEVERAL_NODES),
    ("cosine_similarity_dim0", lambda t, x, y: F(t).cosine_similarity(x, y, dim=0), [XK, YK], SEVERAL_NODES),
    ("pairwise_distance", lambda t, x, y: F(t).pairwise_distance(x, y), [XK, YK], SEVERAL_NODES),
    ("pairwise_distance_p1", lambda t, x, y: F(t).pairwise_distance(x, y, p=1.0, keepdim=True), [XK, YK],
     SEVERAL_NODES),
    ("layer_norm", lambda t, x: F(t).layer_norm(x, (4,)), [XK]),
    ("layer_norm_2d", lambda t, x: F(t).layer_norm(x, (3, 4), eps=1e-3), [XK]),
    ("layer_norm_affine", lambda t, x, w, b: F(t).layer_norm(x, (4,), w, b), [XK, YK[0], YK[1]]),
    ("layer_norm_weight_only", lambda t, x, w: F(t).layer_norm(x, [4], w), [XK, YK[0]]),
    ("batch_norm_train", lambda t, x, w, b: F(t).batch_norm(x, None, None, w, b, training=True),
     [XK, YK[0], YK[1]]),
    ("batch_norm_3d", lambda t, x: F(t).batch_norm(x, None, None, training=True), [XK.reshape(2, 3, 2)]),
    ("batch_norm_eval", lambda t, x, w, b: F(t).batch_norm(x, t.tensor(YK[2], dtype=t.float64),
                                                             t.tensor(PROBS[0], dtype=t.float64), w, b),
     [XK, YK[0], YK[1]]),
    ("embedding", lambda t, w: F(t).embedding(t.tensor([[0, 2, 2], [1, 0, 2]]), w), [XK]),
    ("embedding_padding", lambda t, w: F(t).embedding(t.tensor([0, 2, 2, 1]), w, padding_idx=2), [XK],
     {"skips": {"gradcheck": "padding_idx's row gets no gradient by definition: no finite differences"}}),
    ("embedding_bag_mean", lambda t, w: F(t).embedding_bag(t.tensor([0, 2, 1, 2, 0]), w, t.tensor([0, 2, 2])),
     [XK]),
    ("embedding_bag_sum_weights", lambda t, w, s: F(t).embedding_bag(t.tensor([[0, 2], [1, 1]]), w, mode="sum",
                                                                       per_sample_weights=s),
     [XK, PROBS[0].reshape(2, 2)]),
    ("embedding_bag_max", lambda t, w: F(t).embedding_bag(t.tensor([0, 2, 1, 2, 0, 1]), w, t.tensor([0, 3, 4, 6]),
                                                            mode="max", include_last_offset=True), [XK]),
    ("embedding_bag_padding", lambda t, w: F(t).embedding_bag(t.tensor([[0, 2, 1], [2, 2, 2]]), w, padding_idx=2),
     [XK]),
    ("pad", lambda t, x: F(t).pad(x, (1, 2)), [XK]),
    ("pad_value_2d", lambda t, x: F(t).pad(x, (0, 1, 2, 1), value=3.5), [XK]),
    ("pad_negative", lambda t, x: F(t).pad(x, (-1, 2, 1, -1)), [XK]),
])


# losses torch composes from smaller ops: values and gradients against PyTorch
_LOSS_RNG = np.random.default_rng(3)
XC, YC, ZC = (_LOSS_RNG.standard_normal((4, 5)) for _ in range(3))
SIGNS = np.where(_LOSS_RNG.standard_normal(4) > 0, 1.0, -1.0)
OP_CASES += section("nn", ("parity",), [
    ("margin_ranking_loss", lambda t, a, b, c: F(t).margin_ranking_loss(a[:, 0], b[:, 0], t.tensor(SIGNS), 0.3),
     [XC, YC, ZC]),
    ("hinge_embedding_loss", lambda t, a, b, c: F(t).hinge_embedding_loss(a[:, 0], t.tensor(SIGNS), 0.5),
     [XC, YC, ZC]),
    ("poisson_nll_loss", lambda t, a, b, c: F(t).poisson_nll_loss(a, b.abs() * 3, full=True), [XC, YC, ZC]),
    ("gaussian_nll_loss", lambda t, a, b, c: F(t).gaussian_nll_loss(a, b, c.abs() + 0.1, full=True), [XC, YC, ZC]),
    ("cosine_embedding_loss", lambda t, a, b, c: F(t).cosine_embedding_loss(a, b, t.tensor(SIGNS), 0.2),
     [XC, YC, ZC]),
    ("triplet_margin_loss", lambda t, a, b, c: F(t).triplet_margin_loss(a, b, c, swap=True), [XC, YC, ZC]),
    ("multilabel_soft_margin_loss", lambda t, a, b, c: F(t).multilabel_soft_margin_loss(a, (b > 0) * 1.0),
     [XC, YC, ZC]),
    ("tanhshrink", lambda t, a, b, c: F(t).tanhshrink(a).sum(), [XC, YC, ZC]),
    ("bilinear", lambda t, a, b, c: F(t).bilinear(a[:, :2], b[:, :3], c[:, :, None].expand(4, 5, 3)[:, :2],
                                                  c[:, 0]).sum(), [XC, YC, ZC]),
], graph="none", tol={"float64": dict(rtol=1e-9, atol=1e-12)})

# -- norms, attention and recurrent cells -----------------------------------------------------------------
LAYER_RNG = np.random.default_rng(21)
X4 = LAYER_RNG.standard_normal((2, 4, 3, 3))
C4, C4B = LAYER_RNG.standard_normal(4), LAYER_RNG.standard_normal(4)
XL = LAYER_RNG.standard_normal((2, 3, 4))
QA, KA, VA = (LAYER_RNG.standard_normal((2, 2, 3, 4)), LAYER_RNG.standard_normal((2, 2, 5, 4)),
              LAYER_RNG.standard_normal((2, 2, 5, 3)))
QS = LAYER_RNG.standard_normal((2, 2, 4, 4))
FLOAT_MASK = LAYER_RNG.standard_normal((3, 5))
MASK4 = np.tril(np.ones((4, 4), dtype=bool)) | np.eye(4, k=2, dtype=bool)
BOOL_MASK = np.array([[1, 0, 1, 1, 0], [1, 1, 0, 1, 1], [0, 1, 1, 1, 1]], dtype=bool)
XI, H3 = LAYER_RNG.standard_normal((2, 3)), LAYER_RNG.standard_normal((2, 4))
W_IH = {g: LAYER_RNG.standard_normal((g * 4, 3)) * 0.5 for g in (1, 3, 4)}
W_HH = {g: LAYER_RNG.standard_normal((g * 4, 4)) * 0.5 for g in (1, 3, 4)}
B_IH = {g: LAYER_RNG.standard_normal(g * 4) * 0.5 for g in (1, 3, 4)}
B_HH = {g: LAYER_RNG.standard_normal(g * 4) * 0.5 for g in (1, 3, 4)}


def _const(t, a):
    return t.tensor(a)


OP_CASES += section("nn", ("gradcheck", "parity"), [
    ("group_norm", lambda t, x: F(t).group_norm(x, 2), [X4]),
    ("group_norm_affine", lambda t, x, w, b: F(t).group_norm(x, 4, w, b, eps=1e-3), [X4, C4, C4B]),
    ("group_norm_one_group", lambda t, x, w, b: F(t).group_norm(x, 1, w, b), [X4, C4, C4B]),
    ("instance_norm", lambda t, x: F(t).instance_norm(x), [X4]),
    ("instance_norm_affine", lambda t, x, w, b: F(t).instance_norm(x, weight=w, bias=b), [X4, C4, C4B]),
    ("rms_norm", lambda t, x: F(t).rms_norm(x, (4,)), [XL]),
    ("rms_norm_weight_2d", lambda t, x, w: F(t).rms_norm(x, (3, 4), w, eps=1e-4), [XL, XL[0]]),
    ("layer_norm_2d_affine", lambda t, x, w, b: F(t).layer_norm(x, (3, 4), w, b), [XL, XL[0], XL[1]]),
    ("sdpa", lambda t, q, k, v: F(t).scaled_dot_product_attention(q, k, v), [QA, KA, VA]),
    ("sdpa_causal", lambda t, q, k, v: F(t).scaled_dot_product_attention(q, k, v, is_causal=True),
     [QS, QS * 0.5, QS[..., :3]]),
    ("sdpa_bool_mask", lambda t, q, k, v: F(t).scaled_dot_product_attention(q, k, v, _const(t, BOOL_MASK)),
     [QA, KA, VA]),
    ("sdpa_float_mask_scale", lambda t, q, k, v: F(t).scaled_dot_product_attention(
        q, k, v, _const(t, FLOAT_MASK), scale=0.3), [QA, KA, VA]),
    ("rnn_tanh_cell", lambda t, x, h, wi, wh, bi, bh: torch_cell(t, "rnn_tanh_cell")(x, h, wi, wh, bi, bh),
     [XI, H3, W_IH[1], W_HH[1], B_IH[1], B_HH[1]]),
    ("gru_cell", lambda t, x, h, wi, wh, bi, bh: torch_cell(t, "gru_cell")(x, h, wi, wh, bi, bh),
     [XI, H3, W_IH[3], W_HH[3], B_IH[3], B_HH[3]]),
    ("lstm_cell", lambda t, x, h, c, wi, wh, bi, bh: torch_cell(t, "lstm_cell")(x, (h, c), wi, wh, bi, bh)[0] *
     torch_cell(t, "lstm_cell")(x, (h, c), wi, wh, bi, bh)[1], [XI, H3, H3 * 0.5, W_IH[4], W_HH[4], B_IH[4],
                                                                B_HH[4]]),
])


def torch_cell(t, name):
    """The cell functions live in torch (as torch.rnn_tanh_cell, ...) and in gradviz.nn.functional."""
    return getattr(gradviz.nn.functional if t is gradviz else t, name)


# -- Tensor.unfold, a strided view -------------------------------------------------------------------------
X_WINDOWS = np.array([[0.3, 1.6, -0.7, 2.2, 0.9], [-1.4, 0.45, 3.1, -2.6, 1.15], [0.8, -0.25, 1.7, 0.05, -1.9]])
# squares make the second order depend on the windows' overlaps
OP_CASES += section("unfold", ("gradcheck", "parity"), [
    ("unfold_overlapping", lambda t, x: x.unfold(1, 3, 1) ** 2, [X_WINDOWS]),
    ("unfold_step", lambda t, x: x.unfold(1, 2, 2) ** 2, [X_WINDOWS]),
    ("unfold_dim0_gaps", lambda t, x: x.unfold(0, 1, 2) ** 2, [X_WINDOWS]),
    ("unfold_negative_dim", lambda t, x: x.unfold(-2, 2, 1) ** 2, [X_WINDOWS]),
    ("unfold_twice", lambda t, x: x.unfold(1, 3, 1).unfold(0, 2, 1) ** 2, [X_WINDOWS]),
    ("unfold_0d", lambda t, x: x.sum().unfold(0, 1, 1) ** 2, [X_WINDOWS]),
])
