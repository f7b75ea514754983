"""Losses that PyTorch records as one node each (NllLossBackward0, MseLossBackward0)."""
from __future__ import annotations

import numpy as np

from .. import backend
# the modules, not their records: the registry files a record under the module that binds it
from . import nnops, pointwise
from .nnops import _softplus
from .op import Op
from .pointwise import quiet


def _rows(logp, target):
    """Where each sample's target class is: (target,) for one sample, (arange(N), target) for a
    batch, and (n, target, h, w) with broadcasting index grids for a map of (N, C, H, W) scores."""
    if logp.ndim == 1:
        return (target,)
    xp = backend.namespace_of(target)
    ones = (1,) * (logp.ndim - 2)
    grids = [xp.arange(size).reshape(ones[:k] + (size,) + ones[k + 1:]) for k, size in enumerate(logp.shape[2:])]
    return (xp.arange(logp.shape[0]).reshape((-1,) + ones), target, *grids)


def _weights(logp, target, weight, ignore_index):
    """The targets with ignored ones read as class 0, and each sample's weight (0 where ignored)."""
    xp = backend.namespace_of(target)
    kept = target != ignore_index
    safe = xp.where(kept, target, 0)
    dtype = getattr(logp, "_data", logp).dtype   # logp is a Tensor when the VJP runs with create_graph
    return safe, kept.astype(dtype) if weight is None else weight[safe].astype(dtype) * kept


@quiet   # an empty or all-ignored batch's mean is 0/0: NaN, silently, as in torch
def _nll_forward(xp, logp, target, weight, reduction, ignore_index):
    safe, w = _weights(logp, target, weight, ignore_index)
    losses = -logp[_rows(logp, safe)] * w
    return losses.sum() / w.sum() if reduction == "mean" else _reduced(losses, reduction)


@quiet
def _nll_vjp(xp, g, c, logp, target, weight, reduction, ignore_index):
    safe, w = _weights(logp, target, weight, ignore_index)
    per_sample = g / w.sum() if reduction == "mean" else g
    return xp.index_scatter(-per_sample * w, logp.shape, _rows(logp, safe), True)


NLL_LOSS = Op("nll_loss", "NllLossBackward0", r"$c = -\frac{1}{N} \sum_i $0[i,\, y_i]",
              _nll_forward, vjp=(_nll_vjp,), params=("target", "weight", "reduction", "ignore_index"),
              saves=("target",), symbols=("p",),
              vjp_latex=(r"-\frac{\bar{g}}{N} \text{ at each target class}",), out_symbol="ℓ")
# the same loss over a map of scores (N, C, H, W), every position a sample (segmentation)
NLL_LOSS2D = Op("nll_loss2d", "NllLoss2DBackward0", r"$c = -\frac{1}{N} \sum_{i,h,w} $0[i,\, y_{i,h,w},\, h,\, w]",
                _nll_forward,
                vjp=(_nll_vjp,),
                params=("target", "weight", "reduction", "ignore_index"), saves=("target",), symbols=("p",),
                vjp_latex=(r"-\frac{\bar{g}}{N} \text{ at each position's target class}",), out_symbol="ℓ")


# -- elementwise losses on d = a − b, reduced by mean (over N entries), sum or none -------------
def _mean_scale(a, b, reduction, k=1.0):
    """k/N for reduction="mean", else k."""
    return k / max(int(np.prod(np.broadcast_shapes(a.shape, b.shape))), 1) if reduction == "mean" else k


def _reduced(d, reduction):
    return d if reduction == "none" else (d.sum() if reduction == "sum" else d.mean())


def _difference_loss(name, torch_name, latex, forward, grad, params=(), **display):
    """A loss of d = a − b: the target's gradient is the input's, negated."""
    return Op(name, torch_name, latex, forward,
              vjp=(lambda xp, g, c, a, b, *p: grad(xp, g, a, b, *p), lambda xp, g, c, a, b, *p: -grad(xp, g, a, b, *p)),
              args=("self", "target"), params=("reduction",) + params,
              saves=("self", "target"), **display)


MSE_LOSS = _difference_loss("mse_loss", "MseLossBackward0", r"$c = \frac{1}{N} \sum ($0 - $1)^2",
                            lambda xp, a, b, reduction: _reduced((a - b) * (a - b), reduction),
                            lambda xp, g, a, b, reduction: g * (a - b) * _mean_scale(a, b, reduction, 2.0),
                            vjp_latex=(r"\frac{2 \bar{g}\, ($0 - $1)}{N}", r"-\frac{2 \bar{g}\, ($0 - $1)}{N}",), out_symbol="ℓ")


def _smooth_l1_forward(xp, a, b, reduction, beta):
    d = xp.abs(a - b)
    return _reduced(d if beta == 0 else xp.where(d < beta, d * d * (0.5 / beta), d - 0.5 * beta), reduction)


def _smooth_l1_grad(xp, g, a, b, reduction, beta):
    # clamp((a − b)/β, −1, 1), written with where so that it also runs on Tensors
    d = a - b
    inner = xp.sign(d) if beta == 0 else xp.where(d > beta, 1.0, xp.where(d < -beta, -1.0, d / beta))
    return g * inner * _mean_scale(a, b, reduction)


SMOOTH_L1_LOSS = _difference_loss("smooth_l1_loss", "SmoothL1LossBackward0",
                                  r"$c = \frac{1}{N} \sum \begin{cases} \frac{d^2}{2\beta} & |d| < \beta \\ |d| - \frac{\beta}{2} & \text{otherwise} \end{cases},\; d = $0 - $1", _smooth_l1_forward,
                                  _smooth_l1_grad, ("beta",),
                                  vjp_latex=(r"\bar{g} \odot \frac{\operatorname{clamp}(d / \beta,\, -1,\, 1)}{N}", r"-\bar{g} \odot \frac{\operatorname{clamp}(d / \beta,\, -1,\, 1)}{N}",), out_symbol="ℓ")


def _huber_forward(xp, a, b, reduction, delta):
    d = xp.abs(a - b)
    return _reduced(xp.where(d < delta, d * d * 0.5, (d - 0.5 * delta) * delta), reduction)


def _huber_grad(xp, g, a, b, reduction, delta):
    d = a - b
    inner = xp.where(d > delta, delta, xp.where(d < -delta, -delta, d))
    return g * inner * _mean_scale(a, b, reduction)


HUBER_LOSS = _difference_loss("huber_loss", "HuberLossBackward0",
                              r"$c = \frac{1}{N} \sum \begin{cases} \frac{d^2}{2} & |d| < \delta \\ \delta (|d| - \frac{\delta}{2}) & \text{otherwise} \end{cases},\; d = $0 - $1", _huber_forward, _huber_grad, ("delta",),
                              vjp_latex=(r"\bar{g} \odot \frac{\operatorname{clamp}(d,\, -\delta,\, \delta)}{N}", r"-\bar{g} \odot \frac{\operatorname{clamp}(d,\, -\delta,\, \delta)}{N}",), out_symbol="ℓ")


# -- binary cross-entropy: PyTorch's kernels, each product in its order, the mean a division by N ---------
def _of(xp, op, x):
    """op's value at x: its forward on arrays; on Tensors (create_graph) its node, as PyTorch's
    backward formula records it (SigmoidBackward0, LogSigmoidBackward0)."""
    return op.forward(xp, x) if xp.arrays else xp.apply(op, (x,))


def _weighted(xp, x, weight):
    """x ⊙ w in x's dtype: PyTorch multiplies by the weight in place (loss.mul_(weight))."""
    if weight is None:
        return x
    if xp.arrays:
        return (x * weight).astype(x.dtype, copy=False)
    return x * weight.astype(x._data.dtype, copy=False)


def _per_mean(x, reduction, n):
    """x / N for reduction="mean" (PyTorch divides the gradient by the input's numel), else x."""
    return x / n if reduction == "mean" else x


def _numel(a):
    return int(np.prod(a.shape))


def _reduced_losses(xp, losses, reduction):
    """_reduced, with PyTorch's silent NaN for the mean of no losses."""
    if reduction == "mean" and losses.size == 0:
        return xp.full((), np.nan, dtype=losses.dtype)
    return _reduced(losses, reduction)


# on probabilities: ℓ = −w ⊙ (t max(log p, −100) + (1 − t) max(log(1 − p), −100))
_BCE_EPSILON = float(np.float32(1e-12))   # ATen's `constexpr float EPSILON = 1e-12`, as a double sees it


def _bce_forward(xp, p, t, weight, reduction):
    # ATen's kernel: (t − 1)·max(log1p(−p), −100) − t·max(log p, −100); its order gives its signed zeros
    losses = (t - 1) * xp.maximum(xp.log1p(-p), -100) - t * xp.maximum(xp.log(p), -100)
    return _reduced_losses(xp, _weighted(xp, losses, weight), reduction)


def _bce_dp(xp, g, c, p, t, weight, reduction):
    # ḡ (p − t) / max((1 − p) p, ε): finite at p = 0 and p = 1, where the clamped loss is flat or 100·w
    grad = g * (p - t) / xp.maximum((1 - p) * p, _BCE_EPSILON)
    return _per_mean(_weighted(xp, grad, weight), reduction, _numel(p))


def _bce_dt(xp, g, c, p, t, weight, reduction):
    # −logit(p) ḡ: the unclamped derivative, ±inf at p = 0 and p = 1 as in PyTorch
    grad = -xp.log(p / (1 - p)) * g
    return _per_mean(_weighted(xp, grad, weight), reduction, _numel(t))


BINARY_CROSS_ENTROPY = Op("binary_cross_entropy", "BinaryCrossEntropyBackward0",
                          r"$c = -\frac{1}{N} \sum w \odot \left($1 \max(\log $0,\, -100) + (1 - $1) \max(\log(1 - $0),\, -100)\right)",
                          quiet(_bce_forward), vjp=(quiet(_bce_dp), quiet(_bce_dt)),
                          args=("self", "target"), params=("weight", "reduction"),
                          saves=("self", "target"), symbols=("p", "t"),
                          vjp_latex=(r"\bar{g} \odot w \odot \frac{$0 - $1}{N \max\left($0 (1 - $0),\, \varepsilon\right)}",
                                     r"\bar{g} \odot w \odot \frac{\log(1 - $0) - \log $0}{N}",), out_symbol="ℓ")


# on logits: ℓ = (1 − t)x − (1 + (p − 1)t) log σ(x), weighted
def _bce_logits_forward(xp, x, t, weight, pos_weight, reduction):
    # ATen: (1 − t).mul_(x).sub_(log σ(x) ⊙ log_weight), then .mul_(w): in place, so the loss keeps the
    # dtype of 1 − t whatever the dtypes of x, w and p
    log_weight = 1 if pos_weight is None else (pos_weight - 1) * t + 1
    losses = (1 - t) * x + log_weight * _softplus(xp, -x)
    losses = losses.astype((1 - t).dtype, copy=False)
    return _reduced(_weighted(xp, losses, weight), reduction)


def _bce_logits_dx(xp, g, c, x, t, weight, pos_weight, reduction):
    # ATen's σ(x) (1/(1 + e^(−x)), 0 once e^(−x) overflows), so a saturated logit passes back exactly 0
    s = _of(xp, pointwise.SIGMOID, x)
    if pos_weight is None:
        inner = s - t
    else:
        pt = pos_weight * t
        inner = (pt + 1 - t) * s - pt
    return _per_mean(_weighted(xp, inner * g, weight), reduction, _numel(x))


def _bce_logits_dt(xp, g, c, x, t, weight, pos_weight, reduction):
    inner = -x if pos_weight is None else _of(xp, nnops.LOGSIGMOID, -x) - pos_weight * _of(xp, nnops.LOGSIGMOID, x)
    return _per_mean(_weighted(xp, inner * g, weight), reduction, _numel(t))


BCE_WITH_LOGITS = Op("binary_cross_entropy_with_logits", "BinaryCrossEntropyWithLogitsBackward0",
                     r"$c = \frac{1}{N} \sum w \odot \left((1 - $1)\, $0 + (1 + (p - 1)\, $1) \log(1 + e^{-$0})\right)", _bce_logits_forward,
                     vjp=(quiet(_bce_logits_dx), quiet(_bce_logits_dt)),
                     args=("self", "target"), params=("weight", "pos_weight", "reduction"),
                     saves=("self", "target"), symbols=("x", "t"),
                     vjp_latex=(r"\bar{g} \odot w \odot \frac{(1 + (p - 1)\, $1)\, \sigma($0) - p\, $1}{N}",
                                r"\bar{g} \odot w \odot \frac{\log \sigma(-$0) - p \log \sigma($0)}{N}",), out_symbol="ℓ")


# -- margin and likelihood losses ------------------------------------------------------------------
def _soft_margin_slope(xp, g, x, y, reduction):
    z = xp.exp(-(x * y))
    return g * -y * z / (z + 1) * _mean_scale(x, y, reduction)


# torch differentiates only the input (a target that requires grad is an error)
SOFT_MARGIN_LOSS = Op("soft_margin_loss", "SoftMarginLossBackward0",
                      r"$c = \frac{1}{N} \sum \log\left(1 + e^{-y $0}\right)",
                      lambda xp, x, y, reduction: _reduced(xp.log1p(xp.exp(-(x * y))), reduction),
                      vjp=(lambda xp, g, c, x, y, reduction: _soft_margin_slope(xp, g, x, y, reduction),), params=("target", "reduction"),
                      saves=("self", "target"), shown=("reduction",),
                      vjp_latex=(r"-\frac{\bar{g}\, y\, e^{-y $0}}{N\, (1 + e^{-y $0})}",), out_symbol="ℓ")


# -- multi-class hinge losses (PyTorch's kernels): each sample a row of C class scores x ------------------
def _samples(x):
    """x as (samples, classes): a vector is one sample, a scalar one sample of one class."""
    c = x.shape[-1] if x.ndim else 1
    return x.reshape(-1, c), c


def _label_losses_shape(x):
    """The shape of multilabel_margin_loss's losses with no reduction: one per row of a matrix, else a scalar."""
    return x.shape[:-1] if x.ndim == 2 else ()


def _per_sample(xp, g, shape, reduction):
    """The output gradient of each sample, as a column: ḡ spread over the samples, divided by their
    number for the mean."""
    gs = xp.broadcast_to(g, shape).reshape(-1, 1)
    return gs / int(np.prod(shape)) if reduction == "mean" else gs


def _first_order(name, torch_name, latex, forward, gradient, vjp_latex, params, aten=None, **record):
    """The loss's record, whose VJP PyTorch does not differentiate again: with create_graph the gradient
    is one `<aten>_backward` node (torch's NotImplemented) whose own backward fails as torch's does. That
    record stays inside the VJP, out of the op table: the torch bridge's NotImplemented is floor_divide's.
    `record` overrides the record's fields (args, saves, keeps, symbols); the gradient takes what the
    forward kept as `kept=` when it keeps something."""
    def fail(xp, *args):
        raise RuntimeError(f"derivative for aten::{aten or name}_backward is not implemented")
    backward = Op(f"{name}_backward", "NotImplemented", "$c = " + vjp_latex, gradient, vjp=(fail, fail),
                  args=("grad_output", record.get("args", ("self",))[0]), params=params,
                  vjp_latex=(r"\text{not implemented}",) * 2)

    def vjp(xp, g, c, x, *p, **kept):
        return gradient(xp, g, x, *p, **kept) if xp.arrays else xp.apply(backward, (g, x), p)
    fields = dict(params=params, saves=("self", "target"), symbols=("x",), vjp_latex=(vjp_latex,), out_symbol="ℓ")
    fields.update(record)
    return Op(name, torch_name, latex, None if "keeps" in record else forward, vjp=(vjp,), **fields)


def _hinges(xp, x, target, margin, weight):
    """Each sample's margins z[i, j] = margin − x[i, y_i] + x[i, j] (0 at j = y_i) and its class weight w[y_i]."""
    x2, c = _samples(x)
    t = target.reshape(-1)
    rows = xp.arange(t.shape[0])
    z = margin - x2[rows, t][:, None] + x2
    z[rows, t] = 0
    w = xp.ones((t.shape[0], 1), dtype=x.dtype) if weight is None else weight[t][:, None]
    return z, w, rows, t, c


def _multi_margin_forward(xp, x, target, p, margin, weight, reduction):
    z, w, _, _, c = _hinges(xp, x, target, margin, weight)
    h = xp.where(z > 0, z if p == 1 else z * z, 0)
    # an empty batch's mean: NaN (torch's is whatever its output's memory held)
    return _reduced_losses(xp, ((h * w).sum(1) / c).reshape(target.shape), reduction)


def _multi_margin_gradient(xp, g, x, target, p, margin, weight, reduction):
    z, w, rows, t, c = _hinges(xp, x, target, margin, weight)
    slope = z > 0 if p == 1 else xp.where(z > 0, 2 * z, 0)   # a bool times the scale keeps the input's dtype
    d = slope * (w * _per_sample(xp, g, target.shape, reduction) / c)
    d[rows, t] = 0 - d.sum(1)   # +0, as torch's subtraction from zero, where no margin is active
    return d.reshape(x.shape)


MULTI_MARGIN_LOSS = _first_order(
    "multi_margin_loss", "MultiMarginLossBackward0",
    r"$c = \frac{1}{N} \sum_i \frac{w_{y_i}}{C} \sum_{j \neq y_i} \max\left(0,\, $margin - $0[i,\, y_i] + $0[i,\, j]\right)^{$p}",
    _multi_margin_forward, _multi_margin_gradient,
    r"\frac{\bar{g}\, w_{y_i}}{N C}\, $p\, z_{ij}^{$p - 1} \text{ at each } j \text{ with } z_{ij} > 0,\quad "
    r"\text{their negated sum at } y_i,\; z_{ij} = $margin - $0[i,\, y_i] + $0[i,\, j]",
    ("target", "p", "margin", "weight", "reduction"))


def _label_pairs(xp, x, target):
    """Each sample's (listed class j, unlisted class k) pairs, counted (a class listed twice counts twice;
    the list ends at the first −1), and their margins z[i, j, k] = 1 − x[i, j] + x[i, k]."""
    x2, c = _samples(x)
    t2 = target.reshape(-1, c)
    listed = xp.cumprod(t2 >= 0, axis=1) > 0
    rows = xp.arange(t2.shape[0])[:, None]
    counts = xp.index_scatter(listed.astype(x2.dtype), x2.shape, (rows, xp.where(listed, t2, 0)))
    pairs = counts[:, :, None] * (counts == 0)[:, None, :]
    return pairs, 1 - x2[:, :, None] + x2[:, None, :], c


def _multilabel_margin_forward(xp, x, target, reduction):
    pairs, z, c = _label_pairs(xp, x, target)
    losses = (xp.where(z > 0, z, 0) * pairs).sum((1, 2)) / c
    return _reduced_losses(xp, losses.reshape(_label_losses_shape(x)), reduction)


def _multilabel_margin_gradient(xp, g, x, target, reduction):
    pairs, z, c = _label_pairs(xp, x, target)
    active = xp.where(z > 0, pairs, 0) / c
    # ḡ last, as torch's kernel: a class with no active pair passes back 0 · ḡ (−0 for a negative ḡ)
    gs = _per_sample(xp, g, _label_losses_shape(x), reduction)
    return ((active.sum(1) - active.sum(2)) * gs).reshape(x.shape)


MULTILABEL_MARGIN_LOSS = _first_order(
    "multilabel_margin_loss", "MultilabelMarginLossBackward0",
    r"$c = \frac{1}{N} \sum_i \frac{1}{C} \sum_{j \in Y_i} \sum_{k \notin Y_i} \max\left(0,\, 1 - $0[i,\, j] + $0[i,\, k]\right)",
    _multilabel_margin_forward, _multilabel_margin_gradient,
    r"\frac{\bar{g}}{N C} \text{ at each } k \text{ per } j \text{ with } z_{i,j,k} > 0,\quad "
    r"-\frac{\bar{g}}{N C} \text{ at each } j \text{ per } k,\; z_{i,j,k} = 1 - $0[i,\, j] + $0[i,\, k]",
    ("target", "reduction"))


# -- connectionist temporal classification (torch's CPU kernel, in its order of operations) ------------
# Per sample b: the target l with a blank between and around its labels, l' (2 |l| + 1 labels); α[t, s]
# sums, in log space, the paths through l'[0..s] that reach s at time t, β[t, s] those from s at t
# to the end; the loss is −log(α[T−1, last] + α[T−1, last − 1]).
def _log_add3(xp, a, b, c):
    """log(eᵃ + eᵇ + eᶜ) elementwise, as torch's kernel forms it (the largest taken out; −inf stays −inf)."""
    m = xp.maximum(xp.maximum(a, b), c)
    m = xp.where(m == -np.inf, 0, m)
    return xp.log(xp.exp(a - m) + xp.exp(b - m) + xp.exp(c - m)) + m


def _ctc_labels(xp, targets, target_lengths, blank):
    """Per sample, l' (the target with blanks) and where l'[s − 2] may be skipped (l'[s] ≠ l'[s − 2])."""
    flat = targets.ndim == 1
    offsets = np.concatenate([[0], np.cumsum(target_lengths)[:-1]]) if flat else None
    out = []
    for b, n in enumerate(target_lengths):
        labels = targets[offsets[b]:offsets[b] + n] if flat else targets[b, :n]
        ext = xp.full(2 * n + 1, blank, dtype=np.int64)
        ext[1::2] = labels
        skip = xp.zeros(2 * n + 1, dtype=bool)
        skip[2:] = ext[2:] != ext[:-2]
        out.append((ext, skip))
    return out


def _ctc_alpha(xp, lp, ext, skip, length):
    """log α of one sample (lp its (T, C) log-probabilities), and its negative log-likelihood."""
    alpha = xp.full((lp.shape[0], ext.shape[0]), -np.inf, dtype=lp.dtype)
    if length == 0:
        return alpha, -0.0 if ext.shape[0] == 1 else np.inf   # −(log 1) and −(log 0), as torch negates them
    alpha[0, 0] = lp[0, ext[0]]
    if ext.shape[0] > 1:
        alpha[0, 1] = lp[0, ext[1]]
    none = xp.full(1, -np.inf, dtype=lp.dtype)
    for t in range(1, length):
        prev = alpha[t - 1]
        one_back = xp.concatenate([none, prev[:-1]])
        two_back = xp.where(skip, xp.concatenate([none, none, prev[:-2]])[:ext.shape[0]], -np.inf)
        alpha[t] = _log_add3(xp, prev, one_back, two_back) + lp[t, ext]
    last = alpha[length - 1]
    l2 = last[-2] if ext.shape[0] > 1 else xp.asarray(-np.inf, dtype=lp.dtype)
    return alpha, -_log_add3(xp, last[-1], l2, xp.asarray(-np.inf, dtype=lp.dtype))


def _ctc_forward(xp, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity):
    """The per-sample losses (N,), and (log α per sample, the losses) kept for the gradient."""
    alphas, losses = [], xp.empty(log_probs.shape[1], dtype=log_probs.dtype)
    with np.errstate(all="ignore"):   # −inf − (−inf) where no path reaches: torch's NaN-free result is picked
        for b, (ext, skip) in enumerate(_ctc_labels(xp, targets, target_lengths, blank)):
            alpha, nll = _ctc_alpha(xp, log_probs[:, b], ext, skip, input_lengths[b])
            alphas.append(alpha)
            losses[b] = nll
    return losses, (alphas, losses)


def _ctc_gradient(xp, g, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, kept=None):
    """torch's ctc_loss_backward: per sample, β by the mirrored recursion, Σ_s α β collected per label
    (log-added in descending s), then exp(lp) − exp(collected + nll − lp), times the sample's ḡ."""
    alphas, losses = kept if kept is not None else _ctc_forward(xp, log_probs, targets, input_lengths,
                                                               target_lengths, blank, zero_infinity)[1]
    with np.errstate(all="ignore"):   # as in the forward; an impossible alignment's gradient is NaN, as torch's
        return _ctc_samples_gradient(xp, xp.broadcast_to(g, losses.shape), log_probs, targets, input_lengths,
                                     target_lengths, blank, zero_infinity, alphas, losses)


def _ctc_samples_gradient(xp, g, log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, alphas,
                          losses):
    grad = xp.zeros_like(log_probs)
    for b, (ext, skip) in enumerate(_ctc_labels(xp, targets, target_lengths, blank)):
        n, nll, lp = input_lengths[b], losses[b], log_probs[:, b]
        if n == 0 or (zero_infinity and nll == np.inf):
            continue
        beta = xp.full((n, ext.shape[0]), -np.inf, dtype=lp.dtype)
        beta[n - 1, -1] = lp[n - 1, blank]
        if ext.shape[0] > 1:
            beta[n - 1, -2] = lp[n - 1, ext[-2]]
        none = xp.full(1, -np.inf, dtype=lp.dtype)
        skip_ahead = xp.concatenate([skip[2:], xp.zeros(2, dtype=bool)])[:ext.shape[0]]
        for t in range(n - 2, -1, -1):
            nxt = beta[t + 1]
            one_on = xp.concatenate([nxt[1:], none])
            two_on = xp.where(skip_ahead, xp.concatenate([nxt[2:], none, none])[:ext.shape[0]], -np.inf)
            beta[t] = _log_add3(xp, nxt, one_on, two_on) + lp[t, ext]
        both = alphas[b][:n] + beta
        collected = xp.full((n, lp.shape[1]), -np.inf, dtype=lp.dtype)
        for s in range(ext.shape[0] - 1, -1, -1):
            col, ab = collected[:, ext[s]], both[:, s]
            m = xp.maximum(col, ab)
            collected[:, ext[s]] = xp.where(col == -np.inf, ab, xp.log(xp.exp(col - m) + xp.exp(ab - m)) + m)
        grad[:n, b] = (xp.exp(lp[:n]) - xp.exp(collected + nll - lp[:n])) * g[b]
    return grad


CTC_LOSS = _first_order(
    "ctc_loss", "CtcLossBackward0",
    r"$c = -\log \sum_{\pi \to l} \prod_t e^{$0[t,\, \pi_t]} \text{ per sample}",
    None, _ctc_gradient,
    r"\bar{g} \left(e^{$0[t,\, k]} - e^{$c - $0[t,\, k]} \sum_{s:\, l'_s = k} \alpha_t(s)\, \beta_t(s)\right)",
    ("targets", "input_lengths", "target_lengths", "blank", "zero_infinity"), aten="_ctc_loss",
    args=("log_probs",), saves=("log_probs",), keeps=_ctc_forward, symbols=("lp",), out_symbol="c")
