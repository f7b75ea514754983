"""torch.distributions: Distribution, Normal, Categorical, OneHotCategorical, Bernoulli, Uniform,
Exponential, Laplace, Independent and kl_divergence, written with gradviz's functions in torch's formulas,
so samples (seeded), values, gradients and grad_fn chains are torch's. The rest of torch.distributions
is listed on docs/fidelity.md as not written."""
from . import constraints, kl  # noqa: F401
from .bernoulli import Bernoulli
from .categorical import Categorical
from .distribution import Distribution
from .exponential import Exponential, Laplace
from .independent import Independent
from .kl import kl_divergence, register_kl
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Exponential", "Independent", "Laplace", "Normal",
           "OneHotCategorical", "OneHotCategoricalStraightThrough", "Uniform", "kl_divergence", "register_kl"]
