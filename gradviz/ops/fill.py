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
UNIFORM = Op("uniform_", "UniformBackward0", r"$c \sim \mathcal{U}(\mathrm{lo},\, \mathrm{hi})",
             lambda xp, a, sample: sample,
             vjp=(_no_grad_to_self,), params=("sample",), vjp_latex=(r"0",))
NORMAL = Op("normal_", "NormalBackward0", r"$c \sim \mathcal{N}(\mu,\, \sigma^2)", lambda xp, a, sample: sample,
            vjp=(_no_grad_to_self,), params=("sample",), vjp_latex=(r"0",))
BERNOULLI = Op("bernoulli_", "BernoulliBackward2", r"$c \sim \operatorname{Bernoulli}(p)", lambda xp, a, sample: sample,
               vjp=(_no_grad_to_self,), params=("sample",), vjp_latex=(r"0",))
BERNOULLI_TENSOR = Op("bernoulli_", "BernoulliBackward1", r"$c \sim \operatorname{Bernoulli}(p)",
                      lambda xp, a, sample: sample,
                      vjp=(_no_grad_to_self,), params=("sample",), vjp_latex=(r"0",))
EXPONENTIAL = Op("exponential_", "ExponentialBackward0", r"$c \sim \operatorname{Exp}(\lambda)",
                 lambda xp, a, sample: sample,
                 vjp=(_no_grad_to_self,), params=("sample",), vjp_latex=(r"0",))
CAUCHY = Op("cauchy_", "CauchyBackward0", r"$c \sim \operatorname{Cauchy}(m,\, \sigma)", lambda xp, a, sample: sample,
            vjp=(_no_grad_to_self,), params=("sample",), vjp_latex=(r"0",))
LOG_NORMAL = Op("log_normal_", "LogNormalBackward0", r"$c \sim e^{\mathcal{N}(\mu,\, \sigma^2)}",
                lambda xp, a, sample: sample,
                vjp=(_no_grad_to_self,), params=("sample",), vjp_latex=(r"0",))
GEOMETRIC = Op("geometric_", "GeometricBackward0", r"$c \sim \operatorname{Geometric}(p)", lambda xp, a, sample: sample,
               vjp=(_no_grad_to_self,), params=("sample",), vjp_latex=(r"0",))
RANDOM_FROM_TO = Op("random_", "RandomBackward0", r"$c \sim \mathcal{U}\{\mathrm{from}, \dots, \mathrm{to} - 1\}",
                    lambda xp, a, sample: sample,
                    vjp=(_no_grad_to_self,), params=("sample",), vjp_latex=(r"0",))
RANDOM_TO = Op("random_", "RandomBackward1", r"$c \sim \mathcal{U}\{0, \dots, \mathrm{to} - 1\}",
               lambda xp, a, sample: sample,
               vjp=(_no_grad_to_self,), params=("sample",), vjp_latex=(r"0",))
RANDOM_FULL = Op("random_", "RandomBackward2", r"$c \sim \mathcal{U}\{0, \dots, \max\}", lambda xp, a, sample: sample,
                 vjp=(_no_grad_to_self,), params=("sample",), vjp_latex=(r"0",))
