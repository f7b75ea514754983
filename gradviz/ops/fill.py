"""The in-place writes that replace a tensor's values (zero_, fill_, copy_ and the random
samplers): the old values get a zero gradient, copy_'s source the upstream gradient."""
from __future__ import annotations

from .op import Op


def _no_grad_to_self(xp, g, c, *args):
    return xp.zeros_like(g)


ZERO = Op("zero_", "ZeroBackward0", r"$c = 0",
          lambda xp, a: xp.zeros_like(a), vjp=(_no_grad_to_self,), vjp_latex=(r"0",))
FILL = Op("fill_", "FillBackward2", r"$c = $value",
          lambda xp, a, v: xp.full_like(a, v), vjp=(_no_grad_to_self,), params=("value",), vjp_latex=(r"0",))
FILL_TENSOR = Op("fill_", "FillBackward3", r"$c = $1", lambda xp, a, v: xp.full_like(a, v),
                 vjp=(_no_grad_to_self, lambda xp, g, c, a, v: xp.sum(g)),
                 args=("self", "value"), vjp_latex=(r"0", r"\sum \bar{g}"))
COPY = Op("copy_", "CopyBackwards", r"$c = $1", lambda xp, a, b: xp.broadcast_to(b, a.shape).astype(a.dtype),
          vjp=(_no_grad_to_self, lambda xp, g, c, a, b: g), args=("self", "src"), vjp_latex=(r"0", r"\bar{g}"))


def _draw(name: str, torch_name: str, latex: str) -> Op:
    """An in-place random fill (x.uniform_(), x.normal_(), ...): the sample drawn beforehand is its
    output, and no gradient flows back through it."""
    return Op(name, torch_name, latex, lambda xp, a, sample: sample, vjp=(_no_grad_to_self,), params=("sample",),
              vjp_latex=(r"0",))


UNIFORM = _draw("uniform_", "UniformBackward0", r"$c \sim \mathcal{U}(\mathrm{lo},\, \mathrm{hi})")
NORMAL = _draw("normal_", "NormalBackward0", r"$c \sim \mathcal{N}(\mu,\, \sigma^2)")
BERNOULLI = _draw("bernoulli_", "BernoulliBackward2", r"$c \sim \operatorname{Bernoulli}(p)")
BERNOULLI_TENSOR = _draw("bernoulli_", "BernoulliBackward1", r"$c \sim \operatorname{Bernoulli}(p)")
EXPONENTIAL = _draw("exponential_", "ExponentialBackward0", r"$c \sim \operatorname{Exp}(\lambda)")
CAUCHY = _draw("cauchy_", "CauchyBackward0", r"$c \sim \operatorname{Cauchy}(m,\, \sigma)")
LOG_NORMAL = _draw("log_normal_", "LogNormalBackward0", r"$c \sim e^{\mathcal{N}(\mu,\, \sigma^2)}")
GEOMETRIC = _draw("geometric_", "GeometricBackward0", r"$c \sim \operatorname{Geometric}(p)")
RANDOM_FROM_TO = _draw("random_", "RandomBackward0", r"$c \sim \mathcal{U}\{\mathrm{from}, \dots, \mathrm{to} - 1\}")
RANDOM_TO = _draw("random_", "RandomBackward1", r"$c \sim \mathcal{U}\{0, \dots, \mathrm{to} - 1\}")
RANDOM_FULL = _draw("random_", "RandomBackward2", r"$c \sim \mathcal{U}\{0, \dots, \max\}")
