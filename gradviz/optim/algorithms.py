"""The update rules: SGD, Adam, AdamW, RMSprop, Adagrad, Adadelta, NAdam, RAdam, Adamax, Rprop, ASGD,
Adafactor.

Each rule is torch's single-tensor algorithm (the one torch runs on the CPU) written
on arrays in the same order of operations, so runs agree with torch's to a few units in
the last place (torch's vectorised kernels fuse multiply-adds where NumPy rounds twice).
`x` is the parameter's array, `g` its gradient.
"""
from __future__ import annotations

import numbers

import numpy as np

from ..backend import namespace_of
from ..dtypes import float64, get_default_dtype
from ..tensor import Tensor
from .optimizer import ELEMENTWISE, Optimizer, state_tensor, step_count


def _check(condition: bool, message: str) -> None:
    if not condition:
        raise ValueError(message)


def _check_lr(lr) -> None:
    """A learning rate: a number or a one-element tensor, not negative."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    _check(lr >= 0.0, f"Invalid learning rate: {lr}")


def _number(value, where: str, kind: str = "Tensor"):
    """A hyperparameter that meets an array must be a number; PyTorch's words name the tensor op's argument."""
    if isinstance(value, numbers.Number) or (kind == "Tensor" and isinstance(value, Tensor)):
        return value
    raise TypeError(f"{where} must be {kind}, not {type(value).__name__}")


def _decay(g, x, weight_decay):
    """g + weight_decay·x (torch's grad.add(param, alpha=weight_decay)), or g itself when there is no decay."""
    if weight_decay == 0:
        return g
    return g + _number(weight_decay, "add(): argument 'alpha'", "Number") * x


def _other(op: str) -> str:
    return f"{op}(): argument 'other' (position 1)"


def _lerp_(a, b, w: float) -> None:
    """a ← a + w (b − a), computed as torch's lerp kernel does on each side of w = 0.5."""
    if abs(w) < 0.5:
        a += w * (b - a)
    else:
        a[...] = b - (b - a) * (1 - w)


def _differentiable(differentiable: bool) -> None:
    if differentiable:
        raise NotImplementedError("differentiable=True (an optimizer step recorded in the graph) is not supported")


def _check_adam(lr, betas, eps, weight_decay, differentiable) -> None:
    """The Adam family's checks, in torch's order and words."""
    _check_lr(lr)
    _check(eps >= 0.0, f"Invalid epsilon value: {eps}")
    _check(0.0 <= betas[0] < 1.0, f"Invalid beta parameter at index 0: {betas[0]}")
    _check(0.0 <= betas[1] < 1.0, f"Invalid beta parameter at index 1: {betas[1]}")
    _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
    _differentiable(differentiable)


def _moments(state, g, b1, b2) -> tuple:
    """The Adam family's running means of g and g², updated in place and returned (torch's
    exp_avg.lerp_(g, 1 − β₁) and exp_avg_sq.mul_(β₂).addcmul_(g, g, value=1 − β₂))."""
    m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
    _lerp_(m, g, 1 - b1)
    v *= b2
    v += (1 - b2) * g * g
    return m, v


def _decay_decoupled(g, x, group):
    """Weight decay as Adam, NAdam and RAdam take it: decoupled (x ← x·(1 − lr·λ), as AdamW) or added to g."""
    wd = group["weight_decay"]
    if wd != 0 and group["decoupled_weight_decay"]:
        x *= 1 - group["lr"] * wd
        return g
    return _decay(g, x, wd)


class SGD(Optimizer):
    """x ← x − lr·g, with optional weight decay, (Nesterov) momentum and dampening."""

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *, maximize: bool = False, foreach=None,
                 differentiable: bool = False, fused=None) -> None:
        _check_lr(lr)
        _check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        _differentiable(differentiable)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
                        fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def _update(self, p, x, g, state, group) -> None:
        momentum = group["momentum"]
        g = _decay(g, x, group["weight_decay"])
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = state_tensor(p)
                buf._data[...] = g
            else:
                b = buf._data
                b *= momentum
                b += (1 - group["dampening"]) * g
            g = g + momentum * buf._data if group["nesterov"] else buf._data
        x += -group["lr"] * g


class Adam(Optimizer):
    """Adaptive moments: m and v are running averages of g and g²; x ← x − lr·m̂/(√v̂ + ε)."""

    _decoupled = False

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, foreach=None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False, fused=None,
                 decoupled_weight_decay: bool | None = None) -> None:
        _check_adam(lr, betas, eps, weight_decay, differentiable)
        if decoupled_weight_decay is None:
            decoupled_weight_decay = self._decoupled
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _update(self, p, x, g, state, group) -> None:
        if not state:
            _init(state, p, "exp_avg", "exp_avg_sq", *(("max_exp_avg_sq",) if group["amsgrad"] else ()))
        step = step_count(state)
        lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
        g = _decay_decoupled(g, x, group)
        m, v = _moments(state, g, b1, b2)
        step_size = lr / (1 - b1 ** step)
        bc2_sqrt = (1 - b2 ** step) ** 0.5
        if group["amsgrad"]:
            vmax = state["max_exp_avg_sq"]._data
            namespace_of(vmax).maximum(vmax, v, out=vmax)
            v = vmax
        denom = _sqrt(v) / bc2_sqrt
        denom += _number(eps, _other("add_"))
        x += -step_size * m / denom


class AdamW(Adam):
    """Adam with decoupled weight decay: x ← x·(1 − lr·λ) before the Adam step."""

    _decoupled = True

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *, maximize: bool = False, foreach=None,
                 capturable: bool = False, differentiable: bool = False, fused=None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)


# Adam's update is about fifteen NumPy calls per parameter: on small parameters their own cost is most
# of the step, so a group's are updated together. SGD's is four, and updating them together cost more
# than it saved (LeNet-5's step: 0.19 against 0.175 ms).
ELEMENTWISE.add(Adam._update)


class RMSprop(Optimizer):
    """x ← x − lr·g/(√(running mean of g²) + ε), optionally centered and with momentum."""

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8, weight_decay: float = 0,
                 momentum: float = 0, centered: bool = False, capturable: bool = False, foreach=None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        _check_lr(lr)
        _check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        _check(momentum >= 0.0, f"Invalid momentum value: {momentum}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        _check(alpha >= 0.0, f"Invalid alpha value: {alpha}")
        _differentiable(differentiable)
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p, x, g, state, group) -> None:
        if not state:
            _init(state, p, "square_avg", *(("momentum_buffer",) if group["momentum"] > 0 else ()),
                  *(("grad_avg",) if group["centered"] else ()))
        step_count(state)
        alpha, momentum = group["alpha"], group["momentum"]
        g = _decay(g, x, group["weight_decay"])
        sq = state["square_avg"]._data
        sq *= _number(alpha, _other("mul_"))
        sq += (1 - alpha) * g * g
        if group["centered"]:
            ga = state["grad_avg"]._data
            _lerp_(ga, g, 1 - alpha)
            avg = _sqrt(sq + -1 * ga * ga)
        else:
            avg = _sqrt(sq)
        avg += _number(group["eps"], _other("add_"))
        if momentum > 0:
            buf = state["momentum_buffer"]._data
            buf *= momentum
            buf += g / avg
            x += -group["lr"] * buf
        else:
            x += -group["lr"] * g / avg


class Adagrad(Optimizer):
    """x ← x − lr_t·g/(√(Σ g²) + ε): each coordinate's step shrinks with its gradient history."""

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10, foreach=None, *, maximize: bool = False,
                 differentiable: bool = False, fused=None) -> None:
        _check_lr(lr)
        _check(lr_decay >= 0.0, f"Invalid lr_decay value: {lr_decay}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        _check(initial_accumulator_value >= 0.0,
               f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        _check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        _differentiable(differentiable)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:   # torch fills Adagrad's state when it is built, not at the first step
            for p in group["params"]:
                _init(self.state[p], p)
                self.state[p]["sum"] = state_tensor(p, group["initial_accumulator_value"])

    def _update(self, p, x, g, state, group) -> None:
        step = step_count(state)
        g = _decay(g, x, group["weight_decay"])
        clr = group["lr"] / (1 + (step - 1) * group["lr_decay"])
        s = state["sum"]._data
        s += 1 * g * g
        std = _sqrt(s)
        std += _number(group["eps"], _other("add_"))
        x += -clr * g / std


class Adadelta(Optimizer):
    """Steps scaled by √(running mean of past steps²)/√(running mean of g²): no learning rate needed."""

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6, weight_decay: float = 0,
                 foreach=None, *, capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        _check(0.0 <= rho <= 1.0, f"Invalid rho value: {rho}")
        _check(eps >= 0.0, f"Invalid epsilon value: {eps}")
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        _differentiable(differentiable)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p, x, g, state, group) -> None:
        if not state:
            _init(state, p, "square_avg", "acc_delta")
        step_count(state)
        rho, eps = group["rho"], group["eps"]
        g = _decay(g, x, group["weight_decay"])
        sq, acc = state["square_avg"]._data, state["acc_delta"]._data
        sq *= _number(rho, _other("mul_"))
        sq += (1 - rho) * g * g
        std = _sqrt(sq + _number(eps, _other("add")))
        delta = _sqrt(acc + eps)
        delta /= std
        delta *= g
        acc *= rho
        acc += (1 - rho) * delta * delta
        x += -group["lr"] * delta


class NAdam(Optimizer):
    """Adam with Nesterov momentum: the step looks ahead along the running mean, its momentum
    coefficient μ_t = β₁(1 − ½·0.96^(t·ψ)) warming up with the step count (ψ: momentum_decay)."""

    def __init__(self, params, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3, decoupled_weight_decay: bool = False, *,
                 foreach=None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        _check_adam(lr, betas, eps, weight_decay, differentiable)
        _check(momentum_decay >= 0.0, f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p, x, g, state, group) -> None:
        if not state:
            _init(state, p)
            state["mu_product"] = Tensor._make(np.ones((), dtype=state["step"]._data.dtype))
            state["exp_avg"], state["exp_avg_sq"] = state_tensor(p), state_tensor(p)
        step = step_count(state)
        lr, (b1, b2), decay = group["lr"], group["betas"], group["momentum_decay"]
        bias_correction2 = 1 - b2 ** step
        g = _decay_decoupled(g, x, group)
        mu = b1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = b1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        product = state["mu_product"]
        product._data = product._data * mu   # in the step counter's dtype, as torch keeps it
        m, v = _moments(state, g, b1, b2)
        denom = _sqrt(v / bias_correction2)
        product_now = float(product._data)
        product_next = product_now * mu_next
        denom += _number(group["eps"], _other("add_"))
        x += (-lr * (1.0 - mu) / (1.0 - product_now)) * g / denom
        x += ((-lr * mu_next) / (1.0 - product_next)) * m / denom


class RAdam(Optimizer):
    """Rectified Adam: plain momentum SGD while the variance of the adaptive step is untrustworthy
    (ρ_t ≤ 5, the first few steps), then Adam's step scaled by the rectification term r_t."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *, foreach=None,
                 maximize: bool = False, capturable: bool = False, differentiable: bool = False) -> None:
        _check_adam(lr, betas, eps, weight_decay, differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p, x, g, state, group) -> None:
        if not state:
            _init(state, p, "exp_avg", "exp_avg_sq")
        step = step_count(state)
        lr, (b1, b2) = group["lr"], group["betas"]
        g = _decay_decoupled(g, x, group)
        m, v = _moments(state, g, b1, b2)
        bias_correction1 = 1 - b1 ** step
        bias_correction2 = 1 - b2 ** step
        corrected = m / bias_correction1
        rho_inf = 2 / (1 - b2) - 1
        rho_t = rho_inf - 2 * step * (b2 ** step) / bias_correction2
        if rho_t > 5.0:
            root = _sqrt(v)
            root += _number(group["eps"], _other("add_"))
            adaptive = (bias_correction2 ** 0.5) / root
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            x -= corrected * lr * adaptive * rect
        else:
            x -= corrected * lr


class Adamax(Optimizer):
    """Adam with the infinity norm: u ← max(β₂·u, |g| + ε) in place of the mean of g²."""

    def __init__(self, params, lr: float = 2e-3, betas: tuple = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach=None, *, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_adam(lr, betas, eps, weight_decay, differentiable)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, p, x, g, state, group) -> None:
        if not state:
            _init(state, p, "exp_avg", "exp_inf")
        step = step_count(state)
        b1, b2 = group["betas"]
        g = _decay(g, x, group["weight_decay"])
        m, u = state["exp_avg"]._data, state["exp_inf"]._data
        _lerp_(m, g, 1 - b1)
        u *= b2
        namespace_of(u).maximum(u, namespace_of(g).abs(g) + _number(group["eps"], _other("add_")), out=u)
        clr = group["lr"] / (1 - b1 ** step)
        x += -clr * m / u


class Rprop(Optimizer):
    """Resilient backpropagation: only the gradient's sign is used; each coordinate's step size
    grows by η₊ while the sign holds and shrinks by η₋ when it flips (that step is skipped)."""

    def __init__(self, params, lr: float = 1e-2, etas: tuple = (0.5, 1.2), step_sizes: tuple = (1e-6, 50), *,
                 capturable: bool = False, foreach=None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        _check_lr(lr)
        _check(0.0 < etas[0] < 1.0 < etas[1], f"Invalid eta values: {etas[0]}, {etas[1]}")
        _differentiable(differentiable)
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, p, x, g, state, group) -> None:
        if not state:
            _init(state, p, "prev")
            state["step_size"] = state_tensor(p, group["lr"])
        step_count(state)
        (minus, plus), (smallest, largest) = group["etas"], group["step_sizes"]
        xp = namespace_of(x)
        prev, size = state["prev"]._data, state["step_size"]._data
        sign = xp.asarray(xp.sign(g * prev))   # (an array even for a 0-d parameter)
        sign[sign > 0] = plus
        sign[sign < 0] = minus
        sign[sign == 0] = 1
        size *= sign
        xp.clip(size, smallest, largest, out=size)
        g = xp.array(g)
        g[sign == minus] = 0
        x += -1 * xp.sign(g) * size
        prev[...] = g


class ASGD(Optimizer):
    """Averaged SGD: SGD with a decaying step η_t = lr/(1 + λ·lr·t)^α, keeping in 'ax' the running
    average of the iterates from step t0 on."""

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75, t0: float = 1e6,
                 weight_decay: float = 0, foreach=None, maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        _check_lr(lr)
        _check(weight_decay >= 0.0, f"Invalid weight_decay value: {weight_decay}")
        _differentiable(differentiable)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, p, x, g, state, group) -> None:
        if not state:
            _init(state, p)
            scalar = state["step"]._data.dtype
            state["eta"] = Tensor._make(np.asarray(group["lr"], dtype=scalar))
            state["mu"] = Tensor._make(np.ones((), dtype=scalar))
            state["ax"] = state_tensor(p)
        step = step_count(state)
        lr, lambd = group["lr"], group["lambd"]
        g = _decay(g, x, group["weight_decay"])
        eta = float(state["eta"]._data)
        x *= 1 - lambd * eta
        x += -eta * g
        ax, mu = state["ax"]._data, state["mu"]._data
        if float(mu) != 1:
            ax += (x - ax) * mu
        else:
            ax[...] = x
        state["eta"]._data = np.asarray(lr / ((1 + lambd * lr * step) ** group["alpha"]), dtype=mu.dtype)
        state["mu"]._data = np.asarray(1 / max(1, step - group["t0"]), dtype=mu.dtype)


class Adafactor(Optimizer):
    """Adam's second moment factored: a matrix keeps one running mean of g² per row and one per
    column (their outer product, normalised, estimates it); the step is clipped to RMS d and scaled
    by the parameter's own RMS, with a learning rate that decays as 1/√t."""

    def __init__(self, params, lr: float = 1e-2, beta2_decay: float = -0.8, eps: tuple = (None, 1e-3),
                 d: float = 1.0, weight_decay: float = 0.0, *, foreach=None, maximize: bool = False) -> None:
        _check(0.0 <= lr, f"Learning rate should be >= 0 but is: {lr}")
        _check(0.0 >= beta2_decay, f"beta2_decay should be <= 0 but is: {beta2_decay}")
        _check(eps[0] is None or 0.0 <= eps[0], f"epsilon1 should be >= 0 but is: {eps[0]}")
        _check(0.0 <= eps[1], f"epsilon2 should be >= 0 but is: {eps[1]}")
        _check(1.0 <= d, f"Clipping threshold d should be >= 1 but is: {d}")
        _check(0.0 <= weight_decay, f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _update(self, p, x, g, state, group) -> None:
        xp = namespace_of(x)
        if not state:
            _init(state, p)
            if g.ndim > 1:
                state["row_var"] = Tensor._make(xp.zeros(g.shape[:-1] + (1,), dtype=g.dtype))
                state["col_var"] = Tensor._make(xp.zeros(g.shape[:-2] + (1,) + g.shape[-1:], dtype=g.dtype))
            else:
                state["variance"] = state_tensor(p)
        step = step_count(state)
        lr, (eps1, eps2) = group["lr"], group["eps"]
        if eps1 is None:
            eps1 = float(np.finfo(x.dtype).eps)
        weight = step ** group["beta2_decay"]
        rho = min(lr, 1 / (step ** 0.5))
        alpha = max(eps2, float(_norm(x)) / (x.size ** 0.5)) * rho
        if group["weight_decay"] != 0:
            x *= 1 - lr * group["weight_decay"]
        if g.ndim > 1:
            row, col = state["row_var"]._data, state["col_var"]._data
            _lerp_(row, _norm(g, -1) ** 2 / g.shape[-1], weight)
            _lerp_(col, _norm(g, -2) ** 2 / g.shape[-2], weight)
            estimate = row @ col
            estimate /= xp.maximum(row.mean(axis=-2, keepdims=True), eps1)
        else:
            variance = state["variance"]._data
            _lerp_(variance, g * g, weight)
            estimate = variance.copy()
        update = 1 / _sqrt(xp.maximum(estimate, eps1 * eps1))
        update *= g
        denom = max(1.0, float(_norm(update)) / ((update.size ** 0.5) * group["d"]))
        x += (-alpha / denom) * update


def _norm(a, axis=None):
    """The 2-norm of a (over axis, kept as a size-1 axis), √(Σ a²)."""
    xp = namespace_of(a)
    return xp.sqrt((a * a).sum(axis=axis, keepdims=axis is not None))


def _sqrt(a):
    """√a in a's own namespace (NumPy or CuPy)."""
    return namespace_of(a).sqrt(a)


def _init(state: dict, p, *buffers: str) -> None:
    """A parameter's first state, in torch's key order: 'step' (a zero of torch's scalar dtype:
    float64 while the default dtype is float64, float32 otherwise), then zeroed buffers."""
    scalar = np.float64 if get_default_dtype() == float64 else np.float32
    state["step"] = Tensor._make(np.zeros((), dtype=scalar))
    for name in buffers:
        state[name] = state_tensor(p)
