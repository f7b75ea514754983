"""torch.optim.LBFGS: limited-memory BFGS with an optional strong-Wolfe line search.

A quasi-Newton method: the step direction is the gradient multiplied by an approximation of the
inverse Hessian built from the last history_size (step, change of gradient) pairs by the two-loop
recursion. step(closure) runs up to max_iter iterations, re-evaluating the loss through the
closure; the code follows torch's (itself after minFunc) operation for operation, on tensors.
"""
from __future__ import annotations

from ..autograd.grad_mode import enable_grad, no_grad
from ..functions import cat
from .optimizer import Optimizer

__all__ = ["LBFGS"]

_MEMORY = ("old_dirs", "old_stps", "ro", "H_diag")   # the curvature pairs kept between steps, as torch names them


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), kept within bounds."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square.sqrt()
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _bracket(obj_func, x, t, d, f, g, gtd, c1, c2, max_ls):
    """The line search's first phase: grow t until an interval holding a point that satisfies the
    strong Wolfe conditions is bracketed (or such a point is found)."""
    f_new, g_new = obj_func(x, t, d)
    evals, gtd_new = 1, g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done, ls_iter = False, 0
    bracket = bracket_f = bracket_g = bracket_gtd = None
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f, bracket_g, bracket_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()], \
                [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g, done = [t], [f_new], [g_new], True
            break
        if gtd_new >= 0:
            bracket, bracket_f, bracket_g, bracket_gtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new.clone()], \
                [gtd_prev, gtd_new]
            break
        min_step, max_step = t + 0.01 * (t - t_prev), t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.clone(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    return (bracket, bracket_f, bracket_g, bracket_gtd), done, ls_iter, evals


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """torch's strong-Wolfe line search: bracket, then zoom in by cubic interpolation.
    Returns (loss, flat gradient, step length, evaluations)."""
    d_norm = d.abs().max()
    g = g.clone()
    (bracket, bracket_f, bracket_g, bracket_gtd), done, ls_iter, evals = _bracket(obj_func, x, t, d, f, g, gtd, c1,
                                                                                  c2, max_ls)
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:   # too close to an end: step away from it
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos], bracket_g[high_pos], bracket_gtd[high_pos] = \
                t, f_new, g_new.clone(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos], bracket_g[high_pos], bracket_gtd[high_pos] = \
                    bracket[low_pos], bracket_f[low_pos], bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos], bracket_g[low_pos], bracket_gtd[low_pos] = \
                t, f_new, g_new.clone(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], evals


class LBFGS(Optimizer):
    """L-BFGS over every parameter at once (one parameter group); step(closure) needs the closure."""

    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]
        self._numel_cache = None

    def _numel(self) -> int:
        if self._numel_cache is None:
            self._numel_cache = sum(p.numel() for p in self._params)
        return self._numel_cache

    def _gather_flat_grad(self):
        return cat([p.new_zeros(p.numel()) if p.grad is None else p.grad.view(-1) for p in self._params], 0)

    def _add_grad(self, step_size, update) -> None:
        offset = 0
        for p in self._params:
            numel = p.numel()
            p.add_(update[offset:offset + numel].view_as(p), alpha=step_size)
            offset += numel

    def _clone_param(self) -> list:
        return [p.clone() for p in self._params]

    def _set_param(self, params_data) -> None:
        for p, pdata in zip(self._params, params_data):
            p.copy_(pdata)

    def _directional_evaluate(self, closure, x, t, d):
        """The loss and flat gradient at x + t·d (the parameters are put back to x after)."""
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def _closure(self, closure):
        def evaluate():
            with enable_grad():
                return closure()
        return evaluate

    def step(self, closure):
        """Up to max_iter L-BFGS iterations; returns the closure's first loss."""
        with no_grad():
            return self._run(self._closure(closure))

    def _run(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if flat_grad.abs().max() <= tolerance_grad:
            return orig_loss
        d, t, prev_flat_grad, prev_loss = state.get("d"), state.get("t"), state.get("prev_flat_grad"), \
            state.get("prev_loss")
        memory = [state.get(key) for key in _MEMORY]   # old_dirs, old_stps, ro, H_diag
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            d = self._direction(state, memory, flat_grad, prev_flat_grad, d, t, group["history_size"])
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.clone()
            else:
                prev_flat_grad.copy_(flat_grad)
            prev_loss = loss
            t = min(1.0, 1.0 / flat_grad.abs().sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:   # not a descent direction
                break
            loss, flat_grad, t, ls_func_evals, opt_cond = self._move(closure, group, d, t, loss, flat_grad, gtd,
                                                                     current_evals, n_iter != max_iter)
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if d.mul(t).abs().max() <= tolerance_change or abs(loss - prev_loss) < tolerance_change:
                break
        state["d"], state["t"] = d, t
        state.update(zip(_MEMORY, memory))
        state["prev_flat_grad"], state["prev_loss"] = prev_flat_grad, prev_loss
        return orig_loss

    @staticmethod
    def _direction(state, memory, flat_grad, prev_flat_grad, d, t, history_size):
        """−H·g: the steepest descent first, then the two-loop recursion over the pairs kept in memory."""
        if state["n_iter"] == 1:
            memory[:] = [], [], [], 1
            return flat_grad.neg()
        old_dirs, old_stps, ro = memory[:3]
        y = flat_grad.sub(prev_flat_grad)
        s = d.mul(t)
        ys = y.dot(s)
        if ys > 1e-10:   # keep the pair only where the curvature condition holds
            if len(old_dirs) == history_size:
                old_dirs.pop(0)
                old_stps.pop(0)
                ro.pop(0)
            old_dirs.append(y)
            old_stps.append(s)
            ro.append(1.0 / ys)
            memory[3] = ys / y.dot(y)
        if "al" not in state:
            state["al"] = [None] * history_size
        al = state["al"]
        q = flat_grad.neg()
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = old_stps[i].dot(q) * ro[i]
            q.add_(old_dirs[i], alpha=-al[i])
        d = r = q.mul(memory[3])
        for i in range(len(old_dirs)):
            be_i = old_dirs[i].dot(r) * ro[i]
            r.add_(old_stps[i], alpha=al[i] - be_i)
        return d

    def _move(self, closure, group, d, t, loss, flat_grad, gtd, current_evals, evaluate):
        """Step along d (by the line search, or by t); the new loss, flat gradient, t, evaluations and
        whether the gradient is small enough to stop."""
        opt_cond = False
        ls_func_evals = 0
        if group["line_search_fn"] is not None:
            if group["line_search_fn"] != "strong_wolfe":
                raise RuntimeError("only 'strong_wolfe' is supported")
            x_init = self._clone_param()
            loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                lambda x, step, direction: self._directional_evaluate(closure, x, step, direction), x_init, t, d,
                loss, flat_grad, gtd, max_ls=group["max_eval"] - current_evals)
            self._add_grad(t, d)
            opt_cond = flat_grad.abs().max() <= group["tolerance_grad"]
        else:
            self._add_grad(t, d)
            if evaluate:
                loss = float(closure())
                flat_grad = self._gather_flat_grad()
                opt_cond = flat_grad.abs().max() <= group["tolerance_grad"]
                ls_func_evals = 1
        return loss, flat_grad, t, ls_func_evals, opt_cond
