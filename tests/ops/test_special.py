"""gradviz.special: each of its functions is torch.special's, with torch's values, gradients and
grad_fn graph, and it names nothing torch.special lacks."""
import pytest

import gradviz
from tests.support.parity import assert_matches_torch, needs_torch, real_torch

pytestmark = needs_torch

# name -> (program, its inputs): a domain where torch's function and its derivative are finite
CASES = {
    "digamma": (lambda t, x: t.special.digamma(x), [((2, 3), "pos")]),
    "psi": (lambda t, x: t.special.psi(x), [((2, 3), "pos")]),
    "erf": (lambda t, x: t.special.erf(x), [((2, 3), "real")]),
    "erfc": (lambda t, x: t.special.erfc(x), [((2, 3), "real")]),
    "erfinv": (lambda t, x: t.special.erfinv(x), [((2, 3), "unit")]),
    "exp2": (lambda t, x: t.special.exp2(x), [((2, 3), "real")]),
    "expit": (lambda t, x: t.special.expit(x), [((2, 3), "real")]),
    "expm1": (lambda t, x: t.special.expm1(x), [((2, 3), "real")]),
    "gammaln": (lambda t, x: t.special.gammaln(x), [((2, 3), "pos")]),
    "log1p": (lambda t, x: t.special.log1p(x), [((2, 3), "pos")]),
    "logit": (lambda t, x: t.special.logit(x / 4 + 0.5), [((2, 3), "unit")]),
    "multigammaln": (lambda t, x: t.special.multigammaln(x + 2, 2), [((2, 3), "pos")]),
    "polygamma": (lambda t, x: t.special.polygamma(1, x), [((2, 3), "pos")]),
    "round": (lambda t, x: t.special.round(x * 3), [((2, 3), "real")]),
    "sinc": (lambda t, x: t.special.sinc(x), [((2, 3), "real")]),
    "xlogy": (lambda t, x, y: t.special.xlogy(x, y), [((2, 3), "real"), ((2, 3), "pos")]),
    "softmax": (lambda t, x: t.special.softmax(x, 1), [((2, 3), "real")]),
    "log_softmax": (lambda t, x: t.special.log_softmax(x, 0), [((2, 3), "real")]),
    "logsumexp": (lambda t, x: t.special.logsumexp(x, 1), [((2, 3), "real")]),
}


def test_special_names_only_what_torch_special_has_and_each_is_checked():
    ours = {n for n in dir(gradviz.special) if not n.startswith("_")}
    assert ours <= set(dir(real_torch.special))
    assert ours == set(CASES)


# gradviz's series for the polygamma functions (digamma's derivative among them) agree with torch's to
# about 1e-9 relative, not to the last bits
ROUGHER = {"digamma", "psi", "polygamma"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_special_function_matches_torch(name):
    fn, inputs = CASES[name]
    assert_matches_torch(fn, inputs, seed_text=name, **({"rtol": 1e-8} if name in ROUGHER else {}))


def test_round_with_decimals_given_is_torchs_second_overload():
    for decimals in (0, 1):
        assert_matches_torch(lambda t, x: t.round(x * 3, decimals=decimals), [((4,), "real")], seed_text="round")
