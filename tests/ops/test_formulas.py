"""Every displayed formula proven by evaluation: each record's LaTeX (its forward and each VJP) is
computed by tests/support/latex_eval.py on the arrays of real nodes and compared with what the
record's forward made and what its VJP sends.

The nodes come from the rows of tests/ops/cases.py that run under gradcheck (every shape for the
elementwise ops), a few per record. A formula the evaluator cannot read (words, index notation over
windows) must be listed in UNEVALUATED under its reason: the list is checked both ways, so a part
that becomes readable is taken off it, and a part nobody listed fails.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from tests.ops.cases import select
from tests.support.latex_eval import Evaluator, Unreadable, Whole, sum_to
from tests.support.op_inputs import PAIRS, SHAPES, rng_for, sample

import gradviz as torch
from gradviz.autograd.engine import node_vjp
from gradviz.autograd.graph import Node
from gradviz.ops.core import given
from gradviz.ops.registry import ops
from gradviz.render.formula import part_index

PER_RECORD = 3   # nodes checked per record


def _walk(outputs) -> list:
    seen, order, stack = set(), [], [o.grad_fn for o in outputs if o.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, Node) and getattr(node, "op", None) is not None:
            order.append(node)
        stack.extend(n for n, _ in getattr(node, "next_functions", ()))
    return order


def _runs():
    """(case id, program, inputs) for every gradcheck row and sample, then the double backwards."""
    for name, f in DOUBLE_BACKWARD.items():
        yield f"double_backward/{name}", _double_backward(f), [((3, 4), "away")]
    for name, f in REDUCED_LOSSES.items():
        for reduction in ("sum", "none"):
            yield f"reduced/{name}/{reduction}", (lambda f, r: lambda x: f(x, r))(f, reduction), [((3, 4), "away")]
    for case in select("gradcheck"):
        fn = (lambda c: lambda *xs: c.fn(torch, *xs))(case)
        if case.group == "unary":
            for shape in SHAPES:
                yield case.id, fn, [(shape, case.inputs[0])]
        elif case.group == "binary":
            for sa, sb in PAIRS:
                yield case.id, fn, [(sa, case.inputs[0]), (sb, case.inputs[1])]
        else:
            for inputs in (case.inputs, *case.more_inputs):
                yield case.id, fn, list(inputs)


def _double_backward(f):
    """A program whose output is the gradient of f, with its graph (create_graph): it holds the nodes
    of f's own VJP (TanhBackwardBackward0, ...), which no gradcheck row builds alone."""
    def program(x):
        y = f(x)
        w = torch.linspace(-1.5, 2.0, y.numel(), dtype=x.dtype).reshape(y.shape)
        return torch.autograd.grad((y * w).sum(), x, create_graph=True)[0]
    return program


F = torch.nn.functional
# the losses whose gradcheck rows call them with the default reduction only, called with "sum" and "none"
_TARGETS = torch.tensor([0, 3, 1]), torch.tensor([[0, 3, 1, 2], [1, 1, 0, 3], [2, 0, 3, 3]])
REDUCED_LOSSES = {
    "mse": lambda x, r: F.mse_loss(x, torch.linspace(-1.0, 1.0, 12, dtype=x.dtype).reshape(3, 4), reduction=r),
    "nll": lambda x, r: F.nll_loss(F.log_softmax(x, 1), _TARGETS[0], reduction=r),
    "nll2d": lambda x, r: F.nll_loss(F.log_softmax(x.reshape(1, 3, 4, 1).expand(1, 3, 4, 3), 1),
                                     _TARGETS[1].T[None] % 3, reduction=r),
    "huber": lambda x, r: F.huber_loss(x, torch.linspace(-1.0, 1.0, 12, dtype=x.dtype).reshape(3, 4), reduction=r,
                                       delta=0.5),
    "multi_margin": lambda x, r: F.multi_margin_loss(x, _TARGETS[0], reduction=r),
    "multilabel_margin": lambda x, r: F.multilabel_margin_loss(x, torch.tensor([[3, 0, -1, 1]] * 3), reduction=r),
    "soft_margin": lambda x, r: F.soft_margin_loss(x, torch.tensor([[1.0, -1, 1, 1]] * 3, dtype=x.dtype), reduction=r),
}
def _conv_of_x(x):
    """x as the input of a grouped, strided convolution whose weight is a leaf (its double backward
    records ConvolutionBackwardBackward0, the input gradient as a node)."""
    w = torch.linspace(-1.0, 1.0, 8, dtype=x.dtype).reshape(4, 1, 2, 1).requires_grad_()
    return F.conv2d(x.reshape(1, 2, 2, 3), w, stride=(1, 2), padding=(1, 0), groups=2)


def _conv_of_w(x):
    """x as the weight of a convolution whose input is a leaf (the weight gradient as a node)."""
    inp = torch.linspace(-2.0, 2.0, 2 * 2 * 4 * 5, dtype=x.dtype).reshape(2, 2, 4, 5).requires_grad_()
    return F.conv2d(inp, x.reshape(6, 1, 2, 1), stride=(2, 1), dilation=(1, 2), groups=2)


DOUBLE_BACKWARD = {"tanh": torch.tanh, "sigmoid": torch.sigmoid, "relu": torch.relu,
                   "leaky_relu": lambda x: F.leaky_relu(x, 0.2), "hardtanh": F.hardtanh,
                   "conv_input": _conv_of_x, "conv_weight": _conv_of_w}


def _collect() -> dict:
    """record name -> up to PER_RECORD nodes that ran it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _collect_quietly()


def _collect_quietly() -> dict:
    names = {id(op): name for name, op in ops().items()}
    found: dict = {}
    for case_id, fn, specs in _runs():
        rng = rng_for(case_id + str(specs))
        try:
            xs = [torch.tensor(sample(s, rng), dtype=torch.float64, requires_grad=True) for s in specs]
            out = fn(*xs)
        except Exception:   # a row whose inputs the generic runner cannot build: its own test runs it
            continue
        outs = out if isinstance(out, tuple) else (out,)
        for node in _walk([o for o in outs if isinstance(o, torch.Tensor)]):
            name = names.get(id(node.op))
            if name is None:
                continue
            kept = found.setdefault(name, [])
            # a loss's every reduction is proven: "sum" and "none" draw formulas of their own (Op.reduced)
            if len(kept) < PER_RECORD or _reduction(node) not in {_reduction(k) for k in kept}:
                kept.append(node)
    return found


def _reduction(node):
    return dict(zip(node.op.param_names, node.params)).get("reduction")


_NODES = None


def nodes() -> dict:
    global _NODES
    if _NODES is None:
        _NODES = _collect()
    return _NODES


def _free_symbols(name: str, node, slot) -> dict:
    """Symbols a record's formula uses that are not its inputs, output or parameters: what they are
    on this node (N the number of terms averaged, y the targets, an index i running over the batch)."""
    op = node.op
    params = dict(zip(op.param_names, node.params))
    x = node.inputs[0]._data
    out = {}
    if name in ("loss.NLL_LOSS", "loss.NLL_LOSS2D"):
        target = np.asarray(params["target"])
        out.update(y=target, i=np.arange(x.shape[0]) if x.ndim > 1 else np.asarray(0))
        mean = params["reduction"] in ("mean", 1)
        out["N"] = float(target.size) if mean else 1.0
    if name.startswith("loss.") and "reduction" in params and "N" not in out:
        out["N"] = float(x.size) if params["reduction"] in ("mean", 1) else 1.0
        weight = params.get("weight")
        out["w"] = 1.0 if weight is None else np.asarray(getattr(weight, "_data", weight))
        pos = params.get("pos_weight")
        out["p"] = 1.0 if pos is None else np.asarray(getattr(pos, "_data", pos))
        if "target" in params:
            out["y"] = np.asarray(getattr(params["target"], "_data", params["target"]))
        if len(node.inputs) > 1:
            out["d"] = x - node.inputs[1]._data    # written once on the forward, read by both VJPs
    if name in ("reduce.MEAN", "reduce.MEAN_DIM"):
        dim = params.get("dim")
        out["n"] = float(x.size if dim is None else np.prod([x.shape[d] for d in np.atleast_1d(dim)]))
    if name == "pointwise.WHERE":
        out["\\mathrm{cond}"] = np.asarray(params["condition"])
    if "mask" in params:
        out["\\mathrm{mask}"] = np.asarray(getattr(params["mask"], "_data", params["mask"])).astype(bool)
    if name in ("nnops.HARDTANH", "nnops.HARDTANH_BACKWARD"):
        out["\\mathrm{lo}"], out["\\mathrm{hi}"] = params["min_val"], params["max_val"]
    if name.startswith("shape.TRANSPOSE"):
        out["transposed axes"] = (params["dim0"], params["dim1"])
    if name.startswith("conv."):   # the letters of the index forms, which the forward's panel spells out
        out.update({"s": np.asarray(params["stride"]), "q": np.asarray(params["padding"]),
                    "d": np.asarray(params["dilation"])})
    if name in ("linalg.BMM", "linalg.BADDBMM", "linalg.ADDBMM"):
        out["i"] = Whole() if slot is not None or name != "linalg.ADDBMM" else np.arange(node.inputs[1].shape[0])
    return out


_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}   # torch's Reduction enum, where a node keeps the number


def shown(node):
    """The record as the node's diagram reads it: a loss with reduction="sum" or "none" has its own
    formulas (Op.reduced), which are the ones to prove."""
    reduction = _reduction(node)
    return node.op.reduced(_REDUCTIONS.get(reduction, reduction))


@np.errstate(all="ignore")   # a formula may pass through log(0) where the op's own code does too
def evaluate(name: str, node, latex: str | None = None, slot: int | None = None, g=None):
    """The part's value on `node`: the forward's right sides (slot None), or input `slot`'s VJP on ḡ."""
    op = shown(node)
    inputs = [t._data for t in node.inputs]
    absent = tuple(k for k, a in enumerate(inputs) if not given(a))   # a convolution without a bias
    env = Evaluator.bindings(op, inputs, node.out_data, node.params)
    env.update(_free_symbols(name, node, slot))
    matrix = name.startswith("linalg.")
    try:
        if slot is None:
            return Evaluator(env, matrix).forward(Evaluator.source(op, latex if latex is not None else op.latex,
                                                                   node.params, absent))
        env["\\bar{g}"] = g
        text = latex if latex is not None else op.vjp_latex[min(slot, len(op.vjp_latex) - 1)]
        if "$part" in text:   # a cat's or a stack's part of ḡ, as the panel writes it for this node
            part = part_index(node.params[-1], [a.shape for a in inputs], slot, np.shape(node.out_data))
            text = text.replace("$part", part)
        return Evaluator(env, matrix, target_shape=inputs[slot].shape).vjp(Evaluator.source(op, text, node.params,
                                                                                             absent))
    except ValueError as e:   # numpy's: shapes the formula leaves to be broadcast in words
        raise Unreadable(f"shapes that do not broadcast as written ({e})") from None


def _fit(value, shape):
    value = np.asarray(value, dtype=float)
    if value.shape == tuple(shape):
        return value
    if value.size == int(np.prod(shape)) and value.ndim != len(shape):
        return value.reshape(shape)
    return sum_to(np.broadcast_to(value, np.broadcast_shapes(value.shape, tuple(shape))), shape)


def check_forward(name: str, node, latex: str | None = None) -> None:
    out = np.asarray(node.out_data)
    for side in evaluate(name, node, latex):
        got = _fit(side, out.shape)
        assert np.allclose(got, out, rtol=1e-7, atol=1e-9, equal_nan=True), \
            f"{name}: the formula gives\n{got}\nbut the forward made\n{out}"


def check_vjp(name: str, node, slot: int, latex: str | None = None) -> None:
    rng = rng_for(name + "vjp")
    g = rng.standard_normal(np.shape(node.out_data))
    sent, _ = node_vjp(node, g)
    if sent[slot] is None:
        return
    shape = node.inputs[slot]._data.shape
    got = _fit(evaluate(name, node, latex, slot, g), shape)
    assert np.allclose(got, sent[slot], rtol=1e-7, atol=1e-9, equal_nan=True), \
        f"{name}: VJP {slot}'s formula gives\n{got}\nbut the VJP sends\n{sent[slot]}"


def parts() -> list:
    """(record, slot) for every formula: slot None is the forward's."""
    out = []
    for name, op in ops().items():
        out.append((name, None))
        out += [(name, k) for k in range(len(op.vjp_latex))] if op.vjp is not None else []
    return out


def part_id(name: str, slot) -> str:
    return name if slot is None else f"{name} vjp{slot}"


# every formula the evaluator cannot prove, with the reason; reviewed: each is words, index notation, a
# node no row builds alone, an op the formula names rather than computes, or a symbol left to the op
UNEVALUATED = {
    'attention.GROUP_NORM': 'index notation (a clause that defines nothing)',
    'attention.GROUP_NORM vjp0': 'a broadcast the formula leaves unwritten (over the normalized or reduced dims)',
    'attention.GROUP_NORM vjp1': 'index notation (a reduction over \\text {batch, positions})',
    'attention.GROUP_NORM vjp2': 'index notation (a reduction over \\text {batch, positions})',
    'attention.SAFE_SOFTMAX': 'stated in words ((0 on a row that is } {-\\infty } \\text { throughout))',
    'attention.SDPA': 'no gradcheck row builds this node alone',
    'attention.SDPA vjp0': 'no gradcheck row builds this node alone',
    'attention.SDPA vjp1': 'no gradcheck row builds this node alone',
    'attention.SDPA vjp2': 'no gradcheck row builds this node alone',
    'fill.FILL_TENSOR': 'no gradcheck row builds this node alone',
    'fill.FILL_TENSOR vjp0': 'no gradcheck row builds this node alone',
    'fill.FILL_TENSOR vjp1': 'no gradcheck row builds this node alone',
    'fill.COPY': 'no gradcheck row builds this node alone',
    'fill.COPY vjp0': 'no gradcheck row builds this node alone',
    'fill.COPY vjp1': 'no gradcheck row builds this node alone',
    'fill.UNIFORM': 'a random sample (c ~ a distribution)',
    'fill.NORMAL': 'a random sample (c ~ a distribution)',
    'fill.BERNOULLI': 'a random sample (c ~ a distribution)',
    'fill.BERNOULLI_TENSOR': 'a random sample (c ~ a distribution)',
    'fill.EXPONENTIAL': 'a random sample (c ~ a distribution)',
    'fill.CAUCHY': 'a random sample (c ~ a distribution)',
    'fill.LOG_NORMAL': 'a random sample (c ~ a distribution)',
    'fill.GEOMETRIC': 'a random sample (c ~ a distribution)',
    'fill.RANDOM_FROM_TO': 'index notation (a clause that defines nothing)',
    'fill.RANDOM_TO': 'index notation (a clause that defines nothing)',
    'fill.RANDOM_FULL': 'index notation (a clause that defines nothing)',
    'grid.AFFINE_GRID': 'index notation (its left side is not the output alone)',
    'grid.AFFINE_GRID vjp0': 'index notation (a reduction over h, w)',
    'grid.GRID_SAMPLE': 'index notation (its left side is not the output alone)',
    'grid.GRID_SAMPLE vjp0': 'index notation (a reduction over p, k : \\pi _k(G[n, p]) = j)',
    'grid.GRID_SAMPLE vjp1': 'index notation (a reduction over c, k)',
    'index.SELECT': 'index notation (a subscript [\\dots , i])',
    'index.SELECT vjp0': 'stated in words (placed at index)',
    'index.SLICE': 'index notation (a subscript [\\dots , \\mathrm {start}:\\mathrm {end}:\\mathrm {step}])',
    'index.SLICE vjp0': 'stated in words (placed in the slice of zeros)',
    'index.INDEX': 'a symbol the formula defines in words or leaves to the op (\\mathrm{idx})',
    'index.INDEX vjp0': 'stated in words (scatter-added at idx (repeats accumulate))',
    'index.PACK_PADDED_SEQUENCE': 'a symbol the formula defines in words or leaves to the op (\\mathrm{steps})',
    'index.PACK_PADDED_SEQUENCE vjp0': 'stated in words (placed back in the padded batch, zeros elsewhere)',
    'index.COPY_SLICES': 'no gradcheck row builds this node alone',
    'index.COPY_SLICES vjp0': 'no gradcheck row builds this node alone',
    'index.COPY_SLICES vjp1': 'no gradcheck row builds this node alone',
    'index.INDEX_PUT': 'index notation (statements run in order (a write into the output))',
    'index.INDEX_PUT vjp0': 'stated in words (with zeros at idx)',
    'index.INDEX_PUT vjp1': 'a symbol the formula defines in words or leaves to the op (\\mathrm{idx})',
    'index.GATHER': 'index notation (its left side is not the output alone)',
    'index.GATHER vjp0': 'stated in words (scatter-added back along dim)',
    'index.SCATTER_ADD': 'index notation (a clause that defines nothing)',
    'index.SCATTER_ADD vjp1': 'names an operation (gather) rather than computing it',
    'index.INDEX_SELECT': 'a symbol the formula defines in words or leaves to the op (\\mathrm{idx})',
    'index.INDEX_SELECT vjp0': 'stated in words (scatter-added at idx)',
    'index.INDEX_SCATTER': 'no gradcheck row builds this node alone',
    'index.INDEX_SCATTER vjp0': 'no gradcheck row builds this node alone',
    'index.SCATTER_ADD_ZEROS': 'no gradcheck row builds this node alone',
    'index.SCATTER_ADD_ZEROS vjp0': 'no gradcheck row builds this node alone',
    'index.DIAGONAL_SCATTER': 'no gradcheck row builds this node alone',
    'index.DIAGONAL_SCATTER vjp0': 'no gradcheck row builds this node alone',
    'index.INDEX_FILL_ZERO': 'no gradcheck row builds this node alone',
    'index.INDEX_FILL_ZERO vjp0': 'no gradcheck row builds this node alone',
    'index.INDEX_PUT_ACC': 'index notation (a clause that defines nothing)',
    'index.INDEX_PUT_ACC vjp1': 'a symbol the formula defines in words or leaves to the op (\\mathrm{idx})',
    'index.SORT': 'names an operation (sort) rather than computing it',
    'index.SORT vjp0': 'stated in words (scattered back to where each value came from)',
    'index.TOPK': 'names an operation (topk) rather than computing it',
    'index.TOPK vjp0': 'stated in words (scattered back to where each value came from)',
    'index.MASKED_SELECT vjp0': 'stated in words (placed where mask holds)',
    'index.INDEX_ADD': 'index notation (a clause that defines nothing)',
    'index.INDEX_COPY': 'index notation (a clause that defines nothing)',
    'index.SCATTER_REDUCE': 'index notation (a clause that defines nothing)',
    'index.DELAYED_ERROR': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'index.DELAYED_ERROR vjp0': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'index.SCATTER_REDUCE vjp0': 'stated in words (by the rule of)',
    'index.SCATTER_REDUCE vjp1': 'stated in words (by the rule of)',
    'index.INDEX_COPY vjp0': 'stated in words (, 0 at idx)',
    'index.INDEX_COPY vjp1': 'notation the evaluator does not read (\\dots)',
    'index.MASKED_SCATTER': 'index notation (a clause that defines nothing)',
    'index.MASKED_SCATTER vjp0': 'stated in words (, 0 where mask holds)',
    'index.MASKED_SCATTER vjp1': 'stated in words (, then zeros)',
    'index.INDEX_ADD vjp1': 'notation the evaluator does not read (\\dots)',
    'index.INDEX_FILL': 'index notation (statements run in order (a write into the output))',
    'index.INDEX_FILL vjp0': 'stated in words (, 0 at idx)',
    'index.SCATTER': 'index notation (statements run in order (a write into the output))',
    'index.SCATTER vjp0': 'stated in words (, 0 at idx)',
    'index.SCATTER vjp1': 'names an operation (gather) rather than computing it',
    'index.SCATTER_VALUE': 'index notation (statements run in order (a write into the output))',
    'index.SCATTER_VALUE vjp0': 'stated in words (, 0 at idx)',
    'index.INDEX_FILL_TENSOR': 'index notation (statements run in order (a write into the output))',
    'index.INDEX_FILL_TENSOR vjp0': 'stated in words (, 0 at idx)',
    'index.INDEX_FILL_TENSOR vjp1': 'stated in words (at idx)',
    'index.TAKE': 'names an operation (flat) rather than computing it',
    'index.TAKE vjp0': 'stated in words (scatter-added into)',
    'index.SELECT_SCATTER': 'index notation (statements run in order (a write into the output))',
    'index.SELECT_SCATTER vjp0': 'stated in words (with zeros at index)',
    'index.SELECT_SCATTER vjp1': 'index notation (a subscript [\\dots , {\\PARAMb }])',
    'index.SLICE_SCATTER': 'index notation (statements run in order (a write into the output))',
    'index.SLICE_SCATTER vjp0': 'stated in words (with zeros in the slice)',
    'index.SLICE_SCATTER vjp1': 'index notation (a subscript [\\dots , {\\PARAMb }:{\\PARAMc }:{\\PARAMd }])',
    'index.DIAGONAL_SCATTER_SRC': 'index notation (statements run in order (a write into the output))',
    'index.DIAGONAL_SCATTER_SRC vjp0': 'stated in words (with zeros on the diagonal)',
    'index.DIAGONAL_SCATTER_SRC vjp1': 'names an operation (diag) rather than computing it',
    'linalg.BMM': 'index notation (its left side is not the output alone)',
    'linalg.DIAGONAL': 'names an operation (diag) rather than computing it',
    'linalg.DIAGONAL vjp0': 'stated in words (on the diagonal of zeros)',
    'linalg.TRACE vjp0': 'a symbol the formula defines in words or leaves to the op (I)',
    'linalg.BADDBMM': 'index notation (its left side is not the output alone)',
    'linalg.SLOGDET': 'several outputs: the formula names each (s, m = ...)',
    'linalg.SLOGDET vjp0': 'several outputs: the formula names each (s, m = ...)',
    'linalg.CHOLESKY': 'index notation (statements run in order (a write into the output))',
    'linalg.CHOLESKY vjp0': 'names an operation (sym) rather than computing it',
    'linalg.CHOLESKY_LEGACY': 'index notation (statements run in order (a write into the output))',
    'linalg.CHOLESKY_LEGACY vjp0': 'names an operation (sym) rather than computing it',
    'linalg.MATRIX_EXP': 'a matrix function (e^A of the matrix), which the evaluator reads entry by entry',
    'linalg.SOLVE_TRIANGULAR': 'names an operation (tri: the triangle of A the solve reads) rather than computing it',
    'linalg.SOLVE_TRIANGULAR vjp0': 'names an operation (tri: the triangle of A the solve reads) rather than computing it',
    'linalg.SOLVE_TRIANGULAR vjp1': 'names an operation (tri: the triangle of A the solve reads) rather than computing it',
    'linalg.SOLVE_TRIANGULAR_RIGHT': 'names an operation (tri: the triangle of A the solve reads) rather than computing it',
    'linalg.SOLVE_TRIANGULAR_RIGHT vjp0': 'names an operation (tri: the triangle of A the solve reads) rather than computing it',
    'linalg.SOLVE_TRIANGULAR_RIGHT vjp1': 'names an operation (tri: the triangle of A the solve reads) rather than computing it',
    'linalg.QR': 'several outputs: the formula names each (Q, R = ...)',
    'linalg.QR vjp0': 'several outputs: the formula names each (Q, R = ...)',
    'linalg.PINV': 'names an operation (the pseudo-inverse A⁺) rather than computing it',
    'linalg.PINV vjp0': 'a symbol the formula defines in words or leaves to the op (I)',
    'linalg.LSTSQ': 'several outputs: the formula names each (X, residuals = ...)',
    'linalg.LSTSQ vjp0': 'several outputs: the formula names each (X, residuals = ...)',
    'linalg.LSTSQ vjp1': 'several outputs: the formula names each (X, residuals = ...)',
    'linalg.MATRIX_EXP vjp0': 'notation the evaluator does not read (a block matrix, smallmatrix)',
    'linalg.SVDVALS': 'stated in words ((singular values))',
    'linalg.SVDVALS vjp0': 'a symbol the formula defines in words or leaves to the op (U)',
    'linalg.EIGVALSH': 'a symbol the formula defines in words or leaves to the op (\\lambda)',
    'linalg.EIGVALSH vjp0': 'a symbol the formula defines in words or leaves to the op (V)',
    'linalg.CDIST': 'index notation (its left side is not the output alone)',
    'linalg.CDIST vjp0': 'index notation (a reduction over j)',
    'linalg.CDIST vjp1': 'index notation (a reduction over i)',
    'loss.NLL_LOSS vjp0': 'stated in words (at each target class)',
    'loss.NLL_LOSS2D': 'index notation (a reduction over i,h,w)',
    'loss.NLL_LOSS2D vjp0': "stated in words (at each position's target class)",
    'loss.HUBER_LOSS': 'a symbol the formula defines in words or leaves to the op (\\delta)',
    'loss.HUBER_LOSS vjp0': 'a symbol the formula defines in words or leaves to the op (\\delta)',
    'loss.HUBER_LOSS vjp1': 'a symbol the formula defines in words or leaves to the op (\\delta)',
    'loss.BINARY_CROSS_ENTROPY vjp0': 'a symbol the formula defines in words or leaves to the op (\\varepsilon)',
    'loss.MULTI_MARGIN_LOSS': 'index notation (a reduction over i)',
    'loss.MULTI_MARGIN_LOSS vjp0': 'index notation (a clause that defines nothing)',
    'loss.MULTILABEL_MARGIN_LOSS': 'no gradcheck row builds this node alone',
    'loss.CTC_LOSS': 'index notation (a reduction over \\pi  \\to  l)',
    'loss.CTC_LOSS vjp0': 'index notation (t, k and the recursions α, β the formula leaves to the op)',
    'loss.MULTILABEL_MARGIN_LOSS vjp0': 'no gradcheck row builds this node alone',
    'nnops.NORM': 'notation the evaluator does not read (\\lVert)',
    'nnops.NORM vjp0': "notation the evaluator does not read (expected '}', met |)",
    'nnops.ELU': 'a symbol the formula defines in words or leaves to the op (\\kappa)',
    'nnops.ELU vjp0': 'a symbol the formula defines in words or leaves to the op (\\kappa)',
    'nnops.ELU_RESULT': 'a symbol the formula defines in words or leaves to the op (\\kappa)',
    'nnops.ELU_RESULT vjp0': 'a symbol the formula defines in words or leaves to the op (\\kappa)',
    'nnops.RRELU': 'a random slope the formula states in words (r ∼ U(lower, upper))',
    'nnops.RRELU vjp0': 'a symbol the formula defines in words or leaves to the op (r)',
    'nnops.RRELU_RESULT': 'a random slope the formula states in words (r ∼ U(lower, upper))',
    'nnops.RRELU_RESULT vjp0': 'a symbol the formula defines in words or leaves to the op (r)',
    'nnops.RRELU_BACKWARD': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'nnops.RRELU_BACKWARD vjp0': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'nnops.RRELU_BACKWARD vjp1': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'nnops.LAYER_NORM': 'a symbol the formula defines in words or leaves to the op (\\mu)',
    'nnops.LAYER_NORM vjp0': 'a broadcast the formula leaves unwritten (over the normalized or reduced dims)',
    'nnops.LAYER_NORM vjp1': 'a symbol the formula defines in words or leaves to the op (\\hat{x})',
    'nnops.BATCH_NORM': 'a symbol the formula defines in words or leaves to the op (\\mu)',
    'nnops.BATCH_NORM vjp0': 'a symbol the formula defines in words or leaves to the op (r)',
    'nnops.BATCH_NORM vjp1': 'a symbol the formula defines in words or leaves to the op (\\hat{x})',
    'nnops.NORM_DIM': 'notation the evaluator does not read (\\lVert)',
    'nnops.NORM_DIM vjp0': "notation the evaluator does not read (expected '}', met |)",
    'nnops.EMBEDDING': 'a symbol the formula defines in words or leaves to the op (\\mathrm{idx})',
    'nnops.EMBEDDING vjp0': 'stated in words (rows idx of)',
    'nnops.EMBEDDING_BAG': 'index notation (its left side is not the output alone)',
    'nnops.EMBEDDING_BAG vjp0': 'stated in words (rows idx)',
    'nnops.EMBEDDING_BAG vjp1': 'notation the evaluator does not read (\\partial)',
    'nnops.CONSTANT_PAD': 'names an operation (pad) rather than computing it',
    'nnops.CONSTANT_PAD vjp0': 'stated in words (with the padding cut off)',
    'nnops.GLU': 'index notation (statements run in order (a write into the output))',
    'nnops.GLU vjp0': 'a symbol the formula defines in words or leaves to the op (a)',
    'nnops.TRILINEAR': 'index notation (its left side is not the output alone)',
    'nnops.TRILINEAR vjp0': 'index notation (a reduction over o,j)',
    'nnops.TRILINEAR vjp1': 'index notation (a reduction over n)',
    'nnops.TRILINEAR vjp2': 'index notation (a reduction over o,i)',
    'nnops.PDIST': 'notation the evaluator does not read (\\lVert)',
    'nnops.PDIST vjp0': 'index notation (a clause that defines nothing)',
    'pointwise.GELU_TANH': 'a symbol the formula defines in words or leaves to the op (\\tilde{\\Phi})',
    'pointwise.GELU_TANH vjp0': 'a symbol the formula defines in words or leaves to the op (\\tilde{\\Phi})',
    'pointwise.DIV_ROUNDED': 'stated in words (round: floor or trunc, the rounding mode)',
    'pointwise.FLOOR_DIVIDE': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.FLOOR_DIVIDE vjp0': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.FLOOR_DIVIDE_SCALAR': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.FLOOR_DIVIDE_SCALAR vjp0': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.REMAINDER': 'notation the evaluator does not read (\\bmod)',
    'pointwise.REMAINDER_SCALAR': 'notation the evaluator does not read (\\bmod)',
    'pointwise.NOT': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.NAN_TO_NUM': 'stated in words (with nan and)',
    'pointwise.NAN_TO_NUM vjp0': 'stated in words (finite)',
    'pointwise.LOGIT': 'stated in words (with eps, the input clamped first)',
    'pointwise.LOGIT vjp0': 'stated in words (with eps, 0 where the input was clamped)',
    'pointwise.ISNAN': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.ISINF': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.ISFINITE': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.ERFINV': 'notation the evaluator does not read (a power of the function erf)',
    'pointwise.LGAMMA': 'notation the evaluator does not read (\\Gamma)',
    'pointwise.LGAMMA vjp0': 'notation the evaluator does not read (\\psi)',
    'pointwise.DIGAMMA': 'notation the evaluator does not read (\\psi)',
    'pointwise.DIGAMMA vjp0': 'notation the evaluator does not read (\\psi)',
    'pointwise.POLYGAMMA': 'notation the evaluator does not read (\\psi)',
    'pointwise.POLYGAMMA vjp0': 'notation the evaluator does not read (\\psi)',
    'pointwise.MVLGAMMA': 'index notation (a reduction over j=0)',
    'pointwise.MVLGAMMA vjp0': 'index notation (a reduction over j=0)',
    'pointwise.HEAVISIDE': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.HEAVISIDE vjp0': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.HEAVISIDE vjp1': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.SIGNBIT': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.ISPOSINF': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.ISNEGINF': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.ISREAL': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.BITWISE_NOT': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.GCD': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.LCM': "no derivative (PyTorch's neither): nothing builds the node",
    'pointwise.FREXP': 'a symbol the formula defines in words or leaves to the op (e)',
    'pointwise.FREXP vjp0': 'a symbol the formula defines in words or leaves to the op (e)',
    'pool.AVG_POOL2D': 'index notation (a clause that defines nothing)',
    'pool.AVG_POOL2D vjp0': 'index notation (a reduction over i : j \\in  \\mathrm {win}_i)',
    'pool.AVG_POOL2D_BACKWARD': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.AVG_POOL2D_BACKWARD vjp0': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.AVG_POOL3D': 'index notation (a clause that defines nothing)',
    'pool.AVG_POOL3D vjp0': 'index notation (a reduction over i : j \\in  \\mathrm {win}_i)',
    'pool.AVG_POOL3D_BACKWARD': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.AVG_POOL3D_BACKWARD vjp0': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.ADAPTIVE_AVG_POOL2D': 'index notation (a clause that defines nothing)',
    'pool.ADAPTIVE_AVG_POOL2D vjp0': 'index notation (a reduction over i : j \\in  \\mathrm {win}_i)',
    'pool.ADAPTIVE_AVG_POOL2D_BACKWARD': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.ADAPTIVE_AVG_POOL2D_BACKWARD vjp0': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.ADAPTIVE_AVG_POOL3D': 'index notation (a clause that defines nothing)',
    'pool.ADAPTIVE_AVG_POOL3D vjp0': 'index notation (a reduction over i : j \\in  \\mathrm {win}_i)',
    'pool.ADAPTIVE_AVG_POOL3D_BACKWARD': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.ADAPTIVE_AVG_POOL3D_BACKWARD vjp0': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.MAX_POOL2D': 'index notation (a clause that defines nothing)',
    'pool.MAX_POOL2D vjp0': 'names an operation (argmax) rather than computing it',
    'pool.MAX_POOL3D': 'index notation (a clause that defines nothing)',
    'pool.MAX_POOL3D vjp0': 'names an operation (argmax) rather than computing it',
    'pool.ADAPTIVE_MAX_POOL2D': 'index notation (a clause that defines nothing)',
    'pool.ADAPTIVE_MAX_POOL2D vjp0': 'names an operation (argmax) rather than computing it',
    'pool.ADAPTIVE_MAX_POOL3D': 'index notation (a clause that defines nothing)',
    'pool.ADAPTIVE_MAX_POOL3D vjp0': 'names an operation (argmax) rather than computing it',
    'pool.IM2COL': 'index notation (a clause that defines nothing)',
    'pool.IM2COL vjp0': 'index notation (a reduction over (k, p) : s p + d k - q = j)',
    'pool.COL2IM_OF_IM2COL': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.COL2IM_OF_IM2COL vjp0': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.COL2IM': 'index notation (a clause that defines nothing)',
    'pool.COL2IM vjp0': 'a symbol the formula defines in words or leaves to the op (n)',
    'pool.IM2COL_OF_COL2IM': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.IM2COL_OF_COL2IM vjp0': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.UNFOLD': 'index notation (its left side is not the output alone)',
    'pool.UNFOLD vjp0': 'index notation (a reduction over p, t : {\\PARAMc } p + t = j)',
    'pool.UNFOLD_BACKWARD': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.UNFOLD_BACKWARD vjp0': "a VJP's own node (double backward): no gradcheck row builds it alone",
    'pool.PIXEL_SHUFFLE': 'index notation (its left side is not the output alone)',
    'pool.PIXEL_SHUFFLE vjp0': 'a symbol the formula defines in words or leaves to the op (i)',
    'pool.PIXEL_UNSHUFFLE': 'index notation (its left side is not the output alone)',
    'pool.PIXEL_UNSHUFFLE vjp0': 'a symbol the formula defines in words or leaves to the op (i)',
    'pool.CHANNEL_SHUFFLE': 'index notation (its left side is not the output alone)',
    'pool.CHANNEL_SHUFFLE vjp0': "notation the evaluator does not read (':' where a value belongs)",
    'reduce.SUM vjp0': 'stated in words (broadcast to the shape of)',
    'reduce.SUM_DIM vjp0': 'stated in words (broadcast over dim)',
    'reduce.MEAN vjp0': 'stated in words (broadcast to the shape of)',
    'reduce.MEAN_DIM': 'names an operation (mean) rather than computing it',
    'reduce.MEAN_DIM vjp0': 'stated in words (broadcast over dim)',
    'reduce.VAR': 'a symbol the formula defines in words or leaves to the op (\\bar{{\\INPUTa}})',
    'reduce.VAR vjp0': 'a symbol the formula defines in words or leaves to the op (\\bar{{\\INPUTa}})',
    'reduce.STD': 'a symbol the formula defines in words or leaves to the op (\\bar{{\\INPUTa}})',
    'reduce.STD vjp0': 'a symbol the formula defines in words or leaves to the op (\\bar{{\\INPUTa}})',
    'reduce.MAX_ALL vjp0': 'stated in words (to the argmax (shared among ties))',
    'reduce.MIN_ALL vjp0': 'stated in words (to the argmin (shared among ties))',
    'reduce.AMAX vjp0': 'stated in words (to the maxima (shared among ties))',
    'reduce.AMIN vjp0': 'stated in words (to the minima (shared among ties))',
    'reduce.MAX_DIM vjp0': 'stated in words (scattered to the indices)',
    'reduce.MIN_DIM vjp0': 'stated in words (scattered to the indices)',
    'reduce.CUMSUM': 'index notation (its left side is not the output alone)',
    'reduce.CUMSUM vjp0': 'stated in words (reverse cumulative sum of)',
    'reduce.CUMPROD': 'index notation (its left side is not the output alone)',
    'reduce.CUMPROD vjp0': 'index notation (a reduction over j \\ge  i)',
    'reduce.LOGCUMSUMEXP': 'index notation (its left side is not the output alone)',
    'reduce.LOGCUMSUMEXP vjp0': 'index notation (a subscript i)',
    'reduce.MEDIAN': 'names an operation (median) rather than computing it',
    'reduce.MEDIAN vjp0': 'stated in words (to the median (shared among ties))',
    'reduce.MEDIAN_NAN': 'no gradcheck row builds this node alone',
    'reduce.MEDIAN_NAN vjp0': 'no gradcheck row builds this node alone',
    'reduce.MEDIAN_DIM': 'names an operation (median) rather than computing it',
    'reduce.MEDIAN_DIM vjp0': 'stated in words (scattered to the indices)',
    'reduce.STD_MEAN': 'several outputs: the formula names each (s, m = ...)',
    'reduce.STD_MEAN vjp0': 'several outputs: the formula names each (s, m = ...)',
    'reduce.VAR_MEAN': 'several outputs: the formula names each (s, m = ...)',
    'reduce.VAR_MEAN vjp0': 'several outputs: the formula names each (s, m = ...)',
    'reduce.AMINMAX': 'several outputs: the formula names each (s, m = ...)',
    'reduce.AMINMAX vjp0': 'several outputs: the formula names each (s, m = ...)',
    'reduce.DIST': 'notation the evaluator does not read (\\lVert)',
    'reduce.DIST vjp0': 'notation the evaluator does not read (\\partial)',
    'reduce.DIST vjp1': 'notation the evaluator does not read (\\partial)',
    'reduce.NANSUM': 'index notation (a reduction over {\\INPUTa } \\ne  \\mathrm {nan})',
    'reduce.NANSUM vjp0': 'a broadcast the formula leaves unwritten (over the normalized or reduced dims)',
    'reduce.CUMMAX': 'index notation (its left side is not the output alone)',
    'reduce.CUMMAX vjp0': 'stated in words (scatter-added to where each max was)',
    'reduce.CUMMIN': 'index notation (its left side is not the output alone)',
    'reduce.CUMMIN vjp0': 'stated in words (scatter-added to where each min was)',
    'reduce.KTHVALUE': 'stated in words (the)',
    'reduce.KTHVALUE vjp0': 'stated in words (scattered to the indices)',
    'reduce.MODE': 'stated in words (the most frequent of)',
    'reduce.RENORM': 'notation the evaluator does not read (\\lVert)',
    'reduce.RENORM vjp0': 'notation the evaluator does not read (\\lVert)',
    'reduce.MODE vjp0': 'stated in words (scattered to the indices)',
    'reduce.NANMEDIAN': 'names an operation (median) rather than computing it',
    'reduce.NANMEDIAN vjp0': 'stated in words (to the median (shared among ties))',
    'reduce.NANMEDIAN_DIM': 'names an operation (median) rather than computing it',
    'reduce.NANMEDIAN_DIM vjp0': 'stated in words (scattered to the indices)',
    'reparam.WEIGHT_NORM': 'notation the evaluator does not read (\\lVert)',
    'reparam.WEIGHT_NORM vjp0': 'notation the evaluator does not read (\\lVert)',
    'reparam.WEIGHT_NORM vjp1': 'notation the evaluator does not read (\\langle)',
    'search.HISTOGRAM': "no derivative (PyTorch's neither): counts, carried by the record",
    'search.HISTOGRAM vjp0': "no derivative (PyTorch's neither): nothing builds the node",
    'search.UNIQUE': "no derivative (PyTorch's neither): nothing builds the node",
    'search.UNIQUE vjp0': "no derivative (PyTorch's neither): nothing builds the node",
    'search.UNIQUE_DIM': "no derivative (PyTorch's neither): nothing builds the node",
    'search.UNIQUE_DIM vjp0': "no derivative (PyTorch's neither): nothing builds the node",
    'search.UNIQUE_CONSECUTIVE': "no derivative (PyTorch's neither): nothing builds the node",
    'search.UNIQUE_CONSECUTIVE vjp0': "no derivative (PyTorch's neither): nothing builds the node",
    'shape.VIEW': 'names an operation (view) rather than computing it',
    'shape.VIEW vjp0': 'stated in words (reshaped to the shape of)',
    'shape.RESHAPE_ALIAS': 'names an operation (reshape) rather than computing it',
    'shape.RESHAPE_ALIAS vjp0': 'stated in words (reshaped to the shape of)',
    'shape.UNSAFE_VIEW': 'names an operation (reshape) rather than computing it',
    'shape.UNSAFE_VIEW vjp0': 'stated in words (reshaped to the shape of)',
    'shape.SQUEEZE_DIMS': 'names an operation (squeeze) rather than computing it',
    'shape.SQUEEZE_DIMS vjp0': 'stated in words (reshaped to the shape of)',
    'shape.SQUEEZE_INPLACE': 'names an operation (squeeze) rather than computing it',
    'shape.SQUEEZE_INPLACE vjp0': 'stated in words (reshaped to the shape of)',
    'shape.SQUEEZE': 'names an operation (squeeze) rather than computing it',
    'shape.SQUEEZE vjp0': 'stated in words (unsqueezed)',
    'shape.SQUEEZE_DIM': 'names an operation (squeeze) rather than computing it',
    'shape.SQUEEZE_DIM vjp0': 'stated in words (unsqueezed)',
    'shape.UNSQUEEZE': 'names an operation (unsqueeze) rather than computing it',
    'shape.UNSQUEEZE vjp0': 'stated in words (squeezed)',
    'shape.PERMUTE': 'names an operation (permute) rather than computing it',
    'shape.PERMUTE vjp0': 'stated in words (permuted back)',
    'shape.TRANSPOSE': 'stated in words ((dim } {\\PARAMa } \\leftrightarrow  {\\PARAMb }\\text {))',
    'shape.SQUEEZE_ALL_INPLACE': 'names an operation (squeeze) rather than computing it',
    'shape.SQUEEZE_ALL_INPLACE vjp0': 'stated in words (unsqueezed)',
    'shape.SQUEEZE_DIMS_INPLACE': 'names an operation (squeeze) rather than computing it',
    'shape.SQUEEZE_DIMS_INPLACE vjp0': 'stated in words (reshaped to the shape of)',
    'shape.UNSQUEEZE_INPLACE': 'names an operation (unsqueeze) rather than computing it',
    'shape.UNSQUEEZE_INPLACE vjp0': 'stated in words (squeezed)',
    'shape.TRANSPOSE_INPLACE': 'stated in words ((dim } {\\PARAMa } \\leftrightarrow  {\\PARAMb }\\text {, in pla)',
    'shape.T_INPLACE': 'stated in words ((in place))',
    'shape.EXPAND': 'names an operation (expand) rather than computing it',
    'shape.EXPAND vjp0': 'stated in words (over the expanded axes)',
    'shape.REPEAT': 'names an operation (repeat) rather than computing it',
    'shape.REPEAT vjp0': 'stated in words (over the copies)',
    'shape.FLIP': 'names an operation (flip) rather than computing it',
    'shape.FLIP vjp0': 'names an operation (flip) rather than computing it',
    'shape.CLONE_CONTIGUOUS': 'stated in words ((contiguous))',
    'shape.TO_COPY': 'stated in words (cast to)',
    'shape.TO_COPY vjp0': 'stated in words (cast back)',
    'shape.TO_DEVICE': 'no gradcheck row builds this node alone',
    'shape.TO_DEVICE vjp0': 'no gradcheck row builds this node alone',
    'shape.CAT': 'a symbol the formula defines in words or leaves to the op (a)',
    'shape.STACK': 'names an operation (stack) rather than computing it',
    'shape.TRIL': 'stated in words (lower triangle of)',
    'shape.TRIL vjp0': 'stated in words (lower triangle of)',
    'shape.TRIU': 'stated in words (upper triangle of)',
    'shape.TRIU vjp0': 'stated in words (upper triangle of)',
    'shape.DIAG_EMBED': 'names an operation (diag) rather than computing it',
    'shape.DIAG_EMBED vjp0': 'stated in words (the diagonal of)',
    'shape.DIAG_COPY': 'names an operation (diag) rather than computing it',
    'shape.DIAG_COPY vjp0': 'stated in words (on the diagonal of zeros)',
    'shape.ROLL': 'names an operation (roll) rather than computing it',
    'shape.ROLL vjp0': 'names an operation (roll) rather than computing it',
    'shape.ROT90': 'stated in words (rot90)',
    'shape.ROT90 vjp0': 'stated in words (rot90)',
    'shape.BLOCK_DIAG': 'index notation (its left side is not the output alone)',
    'shape.BLOCK_DIAG vjp0': 'stated in words (the block of)',
}


@pytest.mark.parametrize("name, slot", parts(), ids=[part_id(*p) for p in parts()])
def test_formula_is_what_the_record_computes(name, slot):
    found = nodes().get(name)
    listed = UNEVALUATED.get(part_id(name, slot))
    if listed is not None:
        if found and ops()[name].n_outputs == 1:   # the list stays honest: a listed part does not pass
            with pytest.raises((Unreadable, AssertionError)):
                for node in found:
                    check_forward(name, node) if slot is None else check_vjp(name, node, slot)
        return
    assert found, f"{name}: no gradcheck row builds this node; list it in UNEVALUATED with the reason"
    for node in found:
        check_forward(name, node) if slot is None else check_vjp(name, node, slot)


def test_the_list_names_only_formulas_that_exist():
    assert set(UNEVALUATED) <= {part_id(*p) for p in parts()}


def test_every_reduction_of_a_loss_is_proven():
    """reduction="sum" and "none" nodes are sampled beside "mean" ones (a VAE's summed BCE once read
    as a mean): each loss the rows build with several reductions has a node of each."""
    losses = {name: {_reduction(n) for n in found} for name, found in nodes().items()
              if name.startswith("loss.") and found and _reduction(found[0]) is not None}
    assert {"mean", "sum", "none"} <= losses["loss.BINARY_CROSS_ENTROPY"]
    assert all({"sum", "none"} <= r for r in losses.values()), losses


def test_a_wrong_formula_fails():
    """The old NllLossBackward0 formula took the log of what is already a log-probability."""
    node = nodes()["loss.NLL_LOSS"][0]
    check_forward("loss.NLL_LOSS", node)
    with pytest.raises(AssertionError, match="the formula gives"):
        check_forward("loss.NLL_LOSS", node, r"$c = -\frac{1}{N} \sum_i \log $0[i,\, y_i]")
    with pytest.raises(AssertionError, match="VJP 0's formula gives"):
        check_vjp("pointwise.MUL", nodes()["pointwise.MUL"][0], 0, r"\bar{g} \odot $0")


def test_the_evaluator_reads_what_it_claims():
    """A few readings of the evaluator itself, on plain numbers."""
    from tests.support.latex_eval import Evaluator
    ev = Evaluator({"x": np.array([1.0, -2.0]), "\\bar{g}": np.array([3.0, 4.0])})
    assert np.allclose(ev.expression(__import__("tests.support.latex_eval", fromlist=["_tokens"])
                                     ._tokens(r"\frac{1}{1 + e^{-x}}")), 1 / (1 + np.exp([-1.0, 2.0])))
    assert np.allclose(ev.vjp(r"\bar{g} \odot [x > 0]"), [3.0, 0.0])
    assert np.allclose(ev.vjp(r"\bar{g} \odot \begin{cases} 1 & x > 0 \\ 0.5 & \text{otherwise} \end{cases}"),
                       [3.0, 2.0])
    assert np.allclose(ev.vjp(r"d \odot \bar{g},\; d = |x|"), [3.0, 8.0])
    with pytest.raises(Unreadable, match="words: broadcast"):
        ev.vjp(r"\bar{g}\text{ broadcast}")


def test_every_convolution_row_is_proven():
    """Beyond the few nodes per record: every convolution of the op table's rows (1-d to 3-d, strides,
    paddings, dilations, groups, output padding, no bias, unbatched) shows true formulas."""
    names = {id(op): name for name, op in ops().items()}
    seen = set()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case_id, fn, specs in _runs():
            if not case_id.startswith("conv/"):
                continue
            xs = [torch.tensor(sample(s, rng_for(case_id + str(specs))), dtype=torch.float64, requires_grad=True)
                  for s in specs]
            for node in _walk([fn(*xs)]):
                name = names.get(id(node.op))
                if name in ("conv.CONVOLUTION", "conv.CONV_TRANSPOSE"):
                    seen.add(case_id)
                    check_forward(name, node)
                    for slot in range(len(node.op.vjp_latex)):
                        check_vjp(name, node, slot)
    assert {"conv/conv1d_depthwise", "conv/conv3d", "conv/conv_transpose1d", "conv/conv_transpose3d",
            "conv/conv_transpose2d_groups_dilation", "conv/conv2d_unbatched"} <= seen, seen


def test_a_transposed_convolution_does_not_read_as_a_convolution():
    """A transposed convolution's node (torch's ConvolutionBackward0 with transposed=True) once showed the
    ordinary convolution's formulas: its forward, and ∂L/∂x as a transposed convolution of ḡ, are false
    on its nodes, where its own are true; and a grouped convolution's channels must be counted in groups."""
    from gradviz.ops import conv
    found = nodes()["conv.CONV_TRANSPOSE"]
    for node in found:
        check_forward("conv.CONV_TRANSPOSE", node)
        check_vjp("conv.CONV_TRANSPOSE", node, 0)
        with pytest.raises(AssertionError, match="the formula gives"):
            check_forward("conv.CONV_TRANSPOSE", node, conv.CONVOLUTION.latex)
    with pytest.raises(AssertionError, match="VJP 0's formula gives"):   # ḡ ⋆ flip(W) at [n, i, j]
        check_vjp("conv.CONV_TRANSPOSE", found[0], 0, conv.CONVOLUTION.vjp_latex[0])
    grouped = [n for n in nodes()["conv.CONVOLUTION"] if dict(zip(n.op.param_names, n.params))["groups"] > 1]
    assert grouped, "a grouped convolution among the nodes proven"
    ungrouped = r"$c[n, o, p] = \sum_{i,\, k} $1[o, i, k]\, $0[n,\, i,\, s p + d k - q]"
    with pytest.raises(AssertionError, match="the formula gives"):
        check_forward("conv.CONVOLUTION", grouped[0], r"$c = $0 \star $1:\; " + ungrouped)
