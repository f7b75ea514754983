"""torch.distributions: Distribution, Normal, Categorical, Bernoulli, Uniform and kl_divergence, written
with gradviz's functions in torch's formulas, so samples (seeded), values, gradients and grad_fn chains
are torch's. The rest of torch.distributions is listed on docs/fidelity.md as not written."""
from . import constraints, kl  # noqa: F401
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .kl import kl_divergence, register_kl
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "Uniform", "kl_divergence", "register_kl"]
