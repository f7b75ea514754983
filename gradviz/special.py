"""gradviz.special: the functions of torch.special that gradviz's ops compute, under torch.special's
names. Each is the same function as its torch.* twin (torch.special.expit is torch.sigmoid,
recorded as SigmoidBackward0; gammaln is lgamma), so it records the node torch's does."""
from . import (digamma, erf, erfc, erfinv, exp2, expm1, lgamma as gammaln, log1p, log_softmax,  # noqa: F401
               logit, logsumexp, mvlgamma as multigammaln, polygamma, sigmoid as expit, sinc, softmax, xlogy)
from . import round as _round

psi = digamma


def round(input):
    """torch.special.round: torch.round with decimals=0 given (RoundBackward1)."""
    return _round(input, decimals=0)
