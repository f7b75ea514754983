"""Layer ops that PyTorch records as one node each: the piecewise activations
(HardtanhBackward0, EluBackward0, SiluBackward0, ...), the normalizations
(NativeLayerNormBackward0, NativeBatchNormBackward0), embedding lookup and constant
padding. Each VJP is written against `xp`, so it also runs on Tensors (create_graph)."""
from __future__ import annotations

import numpy as np

from .core import given
from .op import Op
from .pointwise import LEAKY_RELU, _unary, half_in_float, opmath_number, quiet
from .reduce import NORM, _count, _norm_forward as _p_norm_forward, _norm_vjp as _p_norm_vjp   # p-norms (pdist)
from .reduce import sum_first, sum_last


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _sigmoid(xp, a):
    # σ(a) from e^(−|a|), which never overflows
    e = xp.exp(-xp.abs(a))
    return xp.where(a >= 0, 1 / (1 + e), e / (1 + e))


def _softplus(xp, a):
    """log(1 + eᵃ) = max(a, 0) + log1p(e^(−|a|)), finite for every a."""
    return xp.maximum(a, 0) + xp.log1p(xp.exp(-xp.abs(a)))


# PyTorch's hardtanh passes the gradient only strictly inside (lo, hi)
def _inside(a, lo, hi):
    """lo < a < hi as torch's hardtanh_backward compares (float16 against float32 bounds)."""
    lo, hi = opmath_number(a, lo), opmath_number(a, hi)
    return (a > lo) & (a < hi)


HARDTANH = _unary("hardtanh", "HardtanhBackward0", r"$c = \operatorname{clamp}($0,\, \mathrm{lo},\, \mathrm{hi})",
                  lambda xp, a, lo, hi: xp.clip(a, lo, hi),
                  lambda xp, g, c, a, lo, hi: xp.keep(g, _inside(a, lo, hi)), r"\bar{g} \odot [\mathrm{lo} < $0 < \mathrm{hi}]",
                  params=("min_val", "max_val"))
# hardtanh's first derivative as one op (torch's hardtanh_backward), the node create_graph records; its input g is the
# gradient it was given (ḡ, as everywhere, is what it receives)
HARDTANH_BACKWARD = Op("hardtanh_backward", "HardtanhBackwardBackward0",
                       r"$c = $0 \odot [\mathrm{lo} < $1 < \mathrm{hi}]",
                       lambda xp, g, a, lo, hi: xp.keep(g, _inside(a, lo, hi)),
                       vjp=(lambda xp, gg, c, g, a, lo, hi: xp.keep(gg, _inside(a, lo, hi)),
                            lambda xp, gg, c, g, a, lo, hi: xp.zeros_like(gg)), args=("grad_output", "self"),
                       params=("min_val", "max_val"), saves=("self",), symbols=("g", "a"),
                       vjp_latex=(r"\bar{g} \odot [\mathrm{lo} < $1 < \mathrm{hi}]", r"0"), jvp="pointwise")
ELU = _unary("elu", "EluBackward0",
             r"$c = \begin{cases} s\, $0 & $0 > 0 \\ s\, \alpha\, (e^{\kappa $0} - 1) & \text{otherwise} \end{cases}",
             quiet(half_in_float(lambda xp, a, alpha, scale, kappa: xp.where(a > 0, a * scale,
                                                                              xp.expm1(a * kappa) * (alpha * scale)))),
             quiet(half_in_float(lambda xp, g, c, a, alpha, scale, kappa: xp.where(
                 a > 0, g * scale, g * xp.exp(a * kappa) * (kappa * alpha * scale)))),
             r"\bar{g} \odot \begin{cases} s & $0 > 0 \\ s\, \alpha\, \kappa\, e^{\kappa $0} & \text{otherwise} \end{cases}", params=("alpha", "scale", "input_scale"))
# torch records celu as its own node (the derivative is elu's with scale 1 and input scale 1/alpha)
CELU = _unary("celu", "CeluBackward0",
              r"$c = \begin{cases} $0 & $0 > 0 \\ \alpha\, (e^{$0 / \alpha} - 1) & \text{otherwise} \end{cases}",
              quiet(lambda xp, a, alpha: ELU.forward(xp, a, alpha, 1.0, 1.0 / alpha)),
              quiet(lambda xp, g, c, a, alpha: ELU.vjp[0](xp, g, c, a, alpha, 1.0, 1.0 / alpha)),
              r"\bar{g} \odot \begin{cases} 1 & $0 > 0 \\ e^{$0 / \alpha} & \text{otherwise} \end{cases}",
              params=("alpha",))


def _elu_result_vjp(xp, g, c, a, alpha, scale, kappa):
    """torch's elu_backward(is_result=True): the slope read from the result c, the input being overwritten."""
    return xp.where(c <= 0, g * kappa * (c + alpha * scale), g * scale)


# elu_, selu_ and celu_ (in place) save their result, not their overwritten input, as leaky_relu_ does
ELU_RESULT = _unary("elu_", "EluBackward1", ELU.latex, ELU.forward, quiet(_elu_result_vjp),
                    r"\bar{g} \odot \begin{cases} s & $c > 0 \\ \kappa\, ($c + s\, \alpha) & \text{otherwise} \end{cases}",
                    saves=("result",), params=("alpha", "scale", "input_scale"))
CELU_RESULT = _unary("celu_", "CeluBackward1", CELU.latex, CELU.forward,
                     quiet(lambda xp, g, c, a, alpha: _elu_result_vjp(xp, g, c, a, alpha, 1.0, 1.0 / alpha)),
                     r"\bar{g} \odot \begin{cases} 1 & $c > 0 \\ ($c + \alpha) / \alpha & \text{otherwise} \end{cases}",
                     saves=("result",), params=("alpha",))
SILU = _unary("silu", "SiluBackward0", r"$c = $0\, \sigma($0)", half_in_float(lambda xp, a: a * _sigmoid(xp, a)),
              half_in_float(lambda xp, g, c, a: g * _sigmoid(xp, a) * (a * (1 - _sigmoid(xp, a)) + 1)), r"\bar{g} \odot \sigma($0) \left(1 + $0 (1 - \sigma($0))\right)")
MISH = _unary("mish", "MishBackward0", r"$c = $0 \tanh(\operatorname{softplus} $0)",
              half_in_float(lambda xp, a: a * xp.tanh(_softplus(xp, a))),
              half_in_float(lambda xp, g, c, a: g * _mish_grad(xp, a)), r"\bar{g} \odot \left(t + $0\, \sigma($0) (1 - t^2)\right),\; t = \tanh(\operatorname{softplus} $0)")


def _mish_grad(xp, a):
    t = xp.tanh(_softplus(xp, a))
    return t + a * _sigmoid(xp, a) * (1 - t * t)


# PyTorch's CPU kernel multiplies by 1/6 rounded to float32, even for float64 tensors
ONE_SIXTH_F32 = float(np.float32(1 / 6))
HARDSIGMOID = _unary("hardsigmoid", "HardsigmoidBackward0", r"$c = \frac{\operatorname{clamp}($0 + 3,\, 0,\, 6)}{6}",
                     half_in_float(lambda xp, a: xp.clip(a + 3, 0, 6) / 6),
                     half_in_float(lambda xp, g, c, a: xp.keep(g, (a > -3) & (a < 3)) * ONE_SIXTH_F32), r"\frac{\bar{g}}{6} \odot [-3 < $0 < 3]")
HARDSWISH = _unary("hardswish", "HardswishBackward0", r"$c = $0\, \frac{\operatorname{clamp}($0 + 3,\, 0,\, 6)}{6}",
                   half_in_float(lambda xp, a: a * xp.clip(a + 3, 0, 6) / 6),
                   half_in_float(lambda xp, g, c, a: xp.where(a <= -3, 0, xp.where(a < 3, g * (a / 3 + 0.5), g))),
                   r"\bar{g} \odot \begin{cases} 0 & $0 \le -3 \\ \frac{$0}{3} + \frac{1}{2} & $0 < 3 \\ 1 & \text{otherwise} \end{cases}")
LOGSIGMOID = _unary("log_sigmoid", "LogSigmoidBackward0", r"$c = \log \sigma($0)",
                    half_in_float(lambda xp, a: xp.minimum(a, 0) - xp.log1p(xp.exp(-xp.abs(a)))),   # torch's steps
                    half_in_float(lambda xp, g, c, a: g * _sigmoid(xp, -a)), r"\bar{g} \odot \sigma(-$0)")


# -- normalization --------------------------------------------------------------------------------
# One rule serves layer norm (statistics over the trailing dims) and batch norm (over every dim but
# the channel dim 1). With x̂ = (a − μ)·r, r = 1/√(var + ε), and ĝ = ḡ ⊙ w:
#   ∂ℓ/∂a = r ⊙ (ĝ − mean ĝ − x̂ ⊙ mean(ĝ ⊙ x̂))   (means over the statistics' dims)
#   ∂ℓ/∂w = Σ ḡ ⊙ x̂,  ∂ℓ/∂b = Σ ḡ               (sums over the other dims)
def _sum_over(xp, a, axes):
    """Σ over the statistics' dims, kept: layer norm's are the trailing ones (each row a product with ones)."""
    if axes == tuple(range(a.ndim - len(axes), a.ndim)):
        return sum_last(xp, a, len(axes))
    return xp.sum(a, axis=axes, keepdims=True)


def _stats(xp, a, axes, eps, mean, var):
    n = _count(a, axes)
    if mean is None:
        mean = _sum_over(xp, a, axes) / n
        d = a - mean
        var = _sum_over(xp, d * d, axes) / n
    else:   # fixed statistics (batch norm's running ones): arrays, constants of a rule on Tensors
        if not xp.arrays:
            mean, var = xp.constant(mean), xp.constant(var)
        d = a - mean
    return d, 1 / xp.sqrt(var + eps), n


def _norm_keeping(xp, a, w, b, axes, pshape, eps, mean, var):
    """The output, and (a − μ, r, x̂) kept for the VJP rules, which read them again (x̂ = (a − μ) r
    is the output before the affine steps; None when there are none, as x̂ is then the output)."""
    d, r, _ = _stats(xp, a, axes, eps, mean, var)
    out = xh = d * r   # arrays only: after the first affine step, which makes a fresh array, the
    for p, inplace, plain in ((w, "__imul__", "__mul__"), (b, "__iadd__", "__add__")):   # next writes
        if given(p):   # into it where its dtype stays
            p = p.reshape(pshape)
            out = out * p if out is xh else getattr(out, inplace if p.dtype == out.dtype else plain)(p)
    return out, (d, r, None if out is xh else xh)


def _norm_vjp_input(xp, g, c, a, w, b, axes, pshape, eps, mean, var, kept=None):
    d, r, xh = _stats(xp, a, axes, eps, mean, var)[:2] + (None,) if kept is None else kept
    n = _count(a, axes)
    gh = g * xp.reshape(w, pshape) if given(w) else g
    if mean is not None:      # fixed statistics (batch norm in eval mode): an affine map
        return gh * r
    if xh is None:
        xh = d * r
    if kept is None or gh.dtype != xh.dtype:   # on Tensors (a create_graph backward records these steps),
        # or a gradient of another dtype: no writes in place
        return r * (gh - _sum_over(xp, gh, axes) / n - xh * (_sum_over(xp, gh * xh, axes) / n))
    # arrays: the same steps, each written into a fresh array made by the step before (x̂ is the
    # forward's, which a second backward reads again: not written)
    out = gh - _sum_over(xp, gh, axes) / n
    t = gh * xh
    out -= xp.multiply(xh, _sum_over(xp, t, axes) / n, out=t)   # into ĝ ⊙ x̂'s array, once it is summed
    out *= r
    return out


def _sum_to(xp, x, a, pshape, shape):
    """x summed over the dims that w and b broadcast along, in the parameter's shape."""
    lead = a.ndim - len(pshape)
    other = tuple(d for d in range(a.ndim) if d < lead or pshape[d - lead] == 1)
    if other == tuple(range(lead)):   # layer norm's: the leading dims (a product of ones with the rows)
        return xp.reshape(sum_first(xp, x, lead), tuple(shape))
    return xp.reshape(xp.sum(x, axis=other) if other else x, tuple(shape))


def _norm_vjp_weight(xp, g, c, a, w, b, axes, pshape, eps, mean, var, kept=None):
    d, r = _stats(xp, a, axes, eps, mean, var)[:2] if kept is None else kept[:2]
    gx = g * d
    if kept is not None and gx.dtype == r.dtype:   # arrays: r applied in place (a Tensor's steps are recorded)
        gx *= r
    else:
        gx = gx * r
    return _sum_to(xp, gx, a, pshape, w.shape)


def _norm_vjp_bias(xp, g, c, a, w, b, axes, pshape, eps, mean, var, kept=None):
    return _sum_to(xp, g, a, pshape, b.shape)


def _norm_op(name, torch_name, latex, **display):
    return Op(name, torch_name, latex, keeps=_norm_keeping, vjp=(_norm_vjp_input, _norm_vjp_weight, _norm_vjp_bias),
              args=("input", "weight", "bias"), params=("dims", "param_shape", "eps", "running_mean", "running_var"),
              saves=("input", "weight"), symbols=("a", "w", "b"), broadcasts=(), shown=("eps",), **display)


LAYER_NORM = _norm_op("layer_norm", "NativeLayerNormBackward0",
                      r"$c = \frac{$0 - \mu}{\sqrt{\sigma^2 + \varepsilon}} \odot $1 + $2",
                      vjp_latex=(r"r \odot \left(\hat{g} - \operatorname{mean} \hat{g} - \hat{x} \odot \operatorname{mean}(\hat{g} \odot \hat{x})\right),\; \hat{g} = \bar{g} \odot $1", r"\sum \bar{g} \odot \hat{x}", r"\sum \bar{g}",))
BATCH_NORM = _norm_op("batch_norm", "NativeBatchNormBackward0",
                      r"$c = \frac{$0 - \mu_{\text{batch}}}{\sqrt{\sigma^2_{\text{batch}} + \varepsilon}} \odot $1 + $2",
                      vjp_latex=(r"r \odot \left(\hat{g} - \operatorname{mean} \hat{g} - \hat{x} \odot \operatorname{mean}(\hat{g} \odot \hat{x})\right),\; \hat{g} = \bar{g} \odot $1", r"\sum \bar{g} \odot \hat{x}", r"\sum \bar{g}",))


# torch.norm(x, p, dim) (what pairwise_distance calls) is recorded as NormBackward1
NORM_DIM = Op("norm", "NormBackward1", r"$c = \lVert $0 \rVert_{p}", NORM.forward, vjp=NORM.vjp,
              params=("p", "dim", "keepdim"), saves=NORM.saves,
              vjp_latex=(r"\bar{g} \odot \frac{$0\, |$0|^{p - 2}}{$c^{p - 1}}",))


# -- embedding and padding ------------------------------------------------------------------------
def _embedding_vjp(xp, g, c, w, idx, padding_idx):
    if padding_idx is not None:
        g = xp.keep(g, np.expand_dims(idx != padding_idx, -1))
    flat = xp.reshape(g, (-1, w.shape[1]))
    return xp.index_scatter(flat, tuple(w.shape), (idx.reshape(-1),), True)


EMBEDDING = Op("embedding", "EmbeddingBackward0", r"$c = $0[\mathrm{idx}]", lambda xp, w, idx, padding_idx: w[idx],
               vjp=(_embedding_vjp,),
               args=("weight",), params=("indices", "padding_idx"), saves=("indices",),
               symbols=("W",), broadcasts=(),
               vjp_latex=(r"\text{rows idx of } \partial $0 \text{ += } \bar{g} \text{ (not the padding row)}",))


# embedding_bag: each bag's rows of W reduced to one (sum, mean or max). The caller resolves the bags:
# `idx` the rows read (padding entries dropped), `pos` where each sits in the input (for the
# per-sample weights), `bag` which bag it adds to, `scale` its factor (1, or 1/count for mean);
# for max, `arg` is the row each (bag, feature) took its value from (−1 for an empty bag). `scale` has
# the weight's dtype.
def _bag_forward(xp, w, psw, idx, pos, bag, scale, arg, num_bags, mode):
    if mode == "max":
        taken = xp.take_along_axis(w, xp.maximum(arg, 0), 0)
        return xp.where(arg >= 0, taken, xp.zeros((), dtype=w.dtype))
    rows = w[idx] * scale[:, None]
    if given(psw):
        rows = rows * psw[pos][:, None]
    return xp.index_scatter(rows, (num_bags, w.shape[1]), (bag,), True)


def _bag_vjp_weight(xp, g, c, w, psw, idx, pos, bag, scale, arg, num_bags, mode):
    if mode == "max":
        rows, cols = np.nonzero(arg >= 0)
        return xp.index_scatter(g[rows, cols], tuple(w.shape), (arg[rows, cols], cols), True)
    rows = g[bag] * (scale[:, None] if xp.arrays else xp.constant(scale[:, None]))
    if given(psw):
        rows = rows * xp.expand_dims(psw[pos], -1)
    return xp.index_scatter(rows, tuple(w.shape), (idx,), True)


def _bag_vjp_weights(xp, g, c, w, psw, idx, pos, bag, scale, arg, num_bags, mode):
    # each sample weight scales its row of W: its gradient is that row's dot product with its bag's ḡ
    dots = xp.sum(w[idx] * g[bag], -1)
    return xp.index_scatter(dots, tuple(psw.shape), (pos,), True)


EMBEDDING_BAG = Op(
    "embedding_bag", "EmbeddingBagBackward0",
    r"$c[b] = \sum_{i \in b} $1_i\, $0[\mathrm{idx}_i]",
    _bag_forward, vjp=(_bag_vjp_weight, _bag_vjp_weights),
    args=("weight", "per_sample_weights"), params=("indices", "positions", "bags", "scale", "max_indices",
                                                   "num_bags", "mode"),
    saves=("weight", "per_sample_weights"), symbols=("W", "s"), broadcasts=(),
    vjp_latex=(r"\text{rows idx}_i \text{ of } \partial $0 \mathrel{+}= $1_i\, \bar{g}[b(i)]",
               r"\partial $1_i = $0[\mathrm{idx}_i] \cdot \bar{g}[b(i)]"))


def _pad_array(xp, a, pad, value):
    """Constant padding; a negative amount crops. pad lists (before, after) from the last dim back."""
    src, dst, shape = [slice(None)] * a.ndim, [slice(None)] * a.ndim, list(a.shape)
    for k in range(len(pad) // 2):
        d = a.ndim - 1 - k
        lo, hi = pad[2 * k], pad[2 * k + 1]
        n = a.shape[d]
        shape[d] = n + lo + hi
        if shape[d] < 0:
            raise RuntimeError(f"The input size {n}, plus negative padding {lo} and {hi} resulted in a negative "
                               f"output size, which is invalid. Check dimension {d} of your input.")
        src[d] = slice(max(-lo, 0), n - max(-hi, 0))
        dst[d] = slice(max(lo, 0), shape[d] - max(hi, 0))
    out = xp.full(tuple(shape), value, dtype=a.dtype)
    out[tuple(dst)] = a[tuple(src)]
    return out


def _pad_vjp(xp, g, c, a, pad, value):
    neg = tuple(-p for p in pad)
    if xp.arrays:
        return _pad_array(xp, g, neg, 0)
    return xp.apply(CONSTANT_PAD, (g,), (neg, 0))


CONSTANT_PAD = Op("constant_pad_nd", "ConstantPadNdBackward0", r"$c = \operatorname{pad}($0,\, $value)",
                  _pad_array, vjp=(_pad_vjp,), params=("pad", "value"), saves=(),
                  vjp_latex=(r"\bar{g}\text{ with the padding cut off}",))


# -- shrinkage, thresholds, gated and parametric units, pairwise distances ------------------------
def _outside(a, lambd):
    """Where |a| > λ (or a is NaN): the entries the shrink functions keep."""
    return ~((a >= -lambd) & (a <= lambd))


HARDSHRINK = _unary("hardshrink", "HardshrinkBackward0",
                    r"$c = \begin{cases} $0 & |$0| > $lambd \\ 0 & \text{otherwise} \end{cases}",
                    lambda xp, a, lambd: xp.where(_outside(a, lambd), a, 0).astype(a.dtype, copy=False),
                    lambda xp, g, c, a, lambd: xp.keep(g, _outside(a, lambd)), r"\bar{g} \odot [|$0| > $lambd]", params=("lambd",))
SOFTSHRINK = _unary("softshrink", "SoftshrinkBackward0",
                    r"$c = \begin{cases} $0 - $lambd \operatorname{sign} $0 & |$0| > $lambd \\ 0 & "
                          r"\text{otherwise} \end{cases}",
                    # float16 in float32, λ read as float32, as torch's kernel (λ rounded to float16 moved 1 in 30 results)
                    half_in_float(lambda xp, a, lambd: xp.where(a > lambd, a - lambd, xp.where(a < -lambd, a + lambd, a * 0))),
                    lambda xp, g, c, a, lambd: xp.keep(g, _outside(a, lambd)), r"\bar{g} \odot [|$0| > $lambd]", params=("lambd",))
THRESHOLD = _unary("threshold", "ThresholdBackward0",
                   r"$c = \begin{cases} $0 & $0 > $threshold \\ $value & \text{otherwise} \end{cases}",
                   # float16 compared with the threshold read as float32, as torch's kernel
                   lambda xp, a, th, value: xp.where(a > opmath_number(a, th), a, value).astype(a.dtype, copy=False),
                   lambda xp, g, c, a, th, value: xp.keep(g, ~(a <= opmath_number(a, th))), r"\bar{g} \odot [$0 > $threshold]", params=("threshold", "value"))
# threshold_ (in place) saves a copy of its input, unlike relu_: with value > threshold the result cannot
# tell which entries were replaced
THRESHOLD_INPLACE = _unary("threshold_", "ThresholdBackward1", THRESHOLD.latex, THRESHOLD.forward, THRESHOLD.vjp[0],
                           THRESHOLD.vjp_latex[0], params=("threshold", "value"))


def _rrelu(xp, a, lower, upper, training, noise):
    """Training: a ⊙ noise where a ≤ 0 (the function draws the noise); eval: leaky_relu with the mean slope."""
    return xp.where(a <= 0, a * noise, a) if training else LEAKY_RELU.forward(xp, a, (lower + upper) / 2)


def _rrelu_grad(xp, g, a, lower, upper, training, noise):
    """torch's rrelu_with_noise_backward (a: the input, or the result for rrelu_): ḡ ⊙ noise in training
    (unless the bounds meet), else leaky_relu's rule with the mean slope. On Tensors it is recorded as its
    own node, RreluWithNoiseBackwardBackward0, as torch records it."""
    if not xp.arrays:
        return xp.apply(RRELU_BACKWARD, (g, a), (lower, upper, training, noise))
    if training and upper - lower > 1e-6:
        return g * noise
    return xp.where(a > 0, g, g * ((lower + upper) / 2))


_RRELU_LATEX = r"$c = \begin{cases} $0 & $0 > 0 \\ r\, $0 & \text{otherwise} \end{cases},\; r \sim U($lower, $upper)"
RRELU = _unary("rrelu", "RreluWithNoiseBackward0", _RRELU_LATEX, _rrelu,
               lambda xp, g, c, a, *params: _rrelu_grad(xp, g, a, *params),
               r"\bar{g} \odot \begin{cases} 1 & $0 > 0 \\ r & \text{otherwise} \end{cases}",
               saves=("self", "lower", "upper", "training", "noise"), params=("lower", "upper", "training", "noise"))
# rrelu_ (in place) saves its result, as leaky_relu_
RRELU_RESULT = _unary("rrelu_", "RreluWithNoiseBackward1", _RRELU_LATEX, _rrelu,
                      lambda xp, g, c, a, *params: _rrelu_grad(xp, g, c, *params),
                      r"\bar{g} \odot \begin{cases} 1 & $c > 0 \\ r & \text{otherwise} \end{cases}",
                      saves=("result", "lower", "upper", "training", "noise"), params=("lower", "upper", "training", "noise"))
RRELU_BACKWARD = Op("rrelu_with_noise_backward", "RreluWithNoiseBackwardBackward0",
                    r"$c = $0 \odot \begin{cases} 1 & $1 > 0 \\ r & \text{otherwise} \end{cases}",
                    lambda xp, g, a, *params: _rrelu_grad(xp, g, a, *params),
                    vjp=(lambda xp, gg, c, g, a, *params: _rrelu_grad(xp, gg, a, *params),
                         lambda xp, gg, c, g, a, *params: xp.zeros_like(gg)), args=("grad_output", "self"),
                    params=("lower", "upper", "training", "noise"), saves=("self", "noise"), symbols=("g", "a"),
                    vjp_latex=(r"\bar{g} \odot \begin{cases} 1 & $1 > 0 \\ r & \text{otherwise} \end{cases}", r"0"))


def _halves(a, d):
    h = a.shape[d] // 2
    front = (slice(None),) * d
    return a[front + (slice(0, h),)], a[front + (slice(h, None),)]


def _glu_vjp(xp, g, c, a, d):
    x, gate = _halves(a, d)
    s = _sigmoid(xp, gate)
    return xp.concatenate([g * s, g * x * s * (1 - s)], axis=d)


GLU = _unary("glu", "GluBackward0", r"$c = a_1 \odot \sigma(a_2),\; $0 = [a_1,\, a_2] \text{ halved along dim } $dim",
             lambda xp, a, d: _halves(a, d)[0] * _sigmoid(xp, _halves(a, d)[1]), _glu_vjp,
             r"\left[\bar{g} \odot \sigma(a_2),\; "
             r"\bar{g} \odot a_1 \odot \sigma(a_2)(1 - \sigma(a_2))\right]", params=("dim",))
# bilinear's node, torch's _trilinear as bilinear calls it: x₁ (N, I), W (O, I, J) and x₂ (N, J) expanded
# to (N, O, I, J) (expand1 = [1, 3], expand2 = [0], expand3 = [1, 2]), multiplied, summed over I and J
# (sumdim = [2, 3]); each VJP is the same product with ḡ in its input's place, summed over what it lacks
def _expanded(xp, a, w, b):
    return xp.expand_dims(a, (1, 3)), xp.expand_dims(w, 0), xp.expand_dims(b, (1, 2))


def _trilinear_vjp(slot):
    def vjp(xp, g, c, a, w, b):
        parts = list(_expanded(xp, a, w, b))
        parts[slot] = xp.expand_dims(g, (2, 3))
        product = parts[0] * parts[1] * parts[2]
        return xp.sum(product, axis=((1, 3), (0,), (1, 2))[slot])
    return vjp


def _trilinear(xp, a, w, b):
    x1, weight, x2 = _expanded(xp, a, w, b)
    return xp.sum(x1 * weight * x2, axis=(2, 3))


TRILINEAR = Op("_trilinear", "TrilinearBackward0", r"$c[n, o] = \sum_{i,j} $0[n, i]\, $1[o, i, j]\, $2[n, j]", _trilinear,
               vjp=tuple(_trilinear_vjp(k) for k in range(3)), args=("i1", "i2", "i3"),
               saves=("i1", "i2", "i3"), symbols=("a", "W", "b"),
               vjp_latex=(r"\sum_{o,j} \bar{g}[n, o]\, $1[o, i, j]\, $2[n, j]",
                          r"\sum_{n} \bar{g}[n, o]\, $0[n, i]\, $2[n, j]",
                          r"\sum_{o,i} \bar{g}[n, o]\, $1[o, i, j]\, $0[n, i]"))


PRELU = Op("prelu", "PreluKernelBackward0",
           r"$c = \begin{cases} $0 & $0 > 0 \\ $1 \odot $0 & \text{otherwise} \end{cases}",
           lambda xp, a, w: xp.where(a > 0, a, w * a),
           vjp=(lambda xp, g, c, a, w: xp.where(a > 0, g, w * g), lambda xp, g, c, a, w: xp.where(a > 0, 0.0, a * g)), args=("self", "weight"), saves=("self", "weight"),
           symbols=("a", "w"), broadcasts=None,
           vjp_latex=(r"\bar{g} \odot \begin{cases} 1 & $0 > 0 \\ $1 & \text{otherwise} \end{cases}",
                      r"\sum \bar{g} \odot $0 \odot [$0 \le 0]"))


def _pdist_forward(xp, a, p, i, j):
    return _p_norm_forward(xp, a[i] - a[j], p, (1,), False)


def _pdist_vjp(xp, g, c, a, p, i, j):
    gd = _p_norm_vjp(xp, g, c, a[i] - a[j], p, (1,), False)
    return xp.index_scatter(gd, tuple(a.shape), (i,), True) - xp.index_scatter(gd, tuple(a.shape), (j,), True)


PDIST = Op("pdist", "PdistBackward0", r"$c = \left(\lVert $0_i - $0_j \rVert_{$p}\right)_{i < j}",
           quiet(_pdist_forward), vjp=(quiet(_pdist_vjp),), params=("p", "rows", "cols"),
           saves=("self", "result"),
           shown=("p",), symbols=("A",),
           vjp_latex=(r"\pm \bar{g} \odot \partial \lVert $0_i - $0_j \rVert_{$p} \text{ added to rows } i, j",))
