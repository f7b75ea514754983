"""gradviz.optim: SGD and Adam, updating parameters in place under no_grad."""
from __future__ import annotations

from .autograd.grad_mode import no_grad


class Optimizer:
    def __init__(self, params, defaults: dict):
        self.params = [p for p in params]
        self.defaults = defaults
        self.state: dict = {}

    def _gradients(self, weight_decay: float):
        """(parameter, gradient array with weight decay added) for each parameter that has a .grad."""
        for p in self.params:
            if p.grad is not None:
                d = p.grad._data
                yield p, (d + weight_decay * p._data if weight_decay else d)

    def zero_grad(self, set_to_none: bool = True) -> None:
        for p in self.params:
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0.0, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, momentum=momentum, weight_decay=weight_decay))

    @no_grad()
    def step(self) -> None:
        lr, momentum, wd = self.defaults["lr"], self.defaults["momentum"], self.defaults["weight_decay"]
        for p, d in self._gradients(wd):
            if momentum:
                buf = self.state.get(id(p))
                buf = d.copy() if buf is None else buf * momentum + d
                self.state[id(p)] = buf
                d = buf
            p.sub_(lr * d)


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @no_grad()
    def step(self) -> None:
        lr, (b1, b2), eps, wd = (self.defaults[k] for k in ("lr", "betas", "eps", "weight_decay"))
        for p, d in self._gradients(wd):
            t, m, v = self.state.get(id(p), (0, 0.0, 0.0))
            t, m, v = t + 1, b1 * m + (1 - b1) * d, b2 * v + (1 - b2) * d * d
            self.state[id(p)] = (t, m, v)
            m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
            p.sub_(lr * m_hat / (v_hat ** 0.5 + eps))
