"""gradviz.distributions against torch 2.13's: seeded samples, rsample, log_prob, entropy, moments and
kl_divergence (values, the whole grad_fn graph and the parameters' gradients), repr, shapes, expand
and the validate_args errors, word for word."""
import numpy as np
import pytest

import gradviz
from tests.support.parity import assert_matches_torch, assert_raises_as_torch, needs_torch, real_torch

pytestmark = needs_torch

LOC = np.array([0.5, -1.0, 2.0])
SCALE = np.array([1.0, 0.5, 2.0])
LOGITS = np.array([[0.1, 0.5, -1.0, 0.7], [2.0, 0.0, 0.3, -0.4]])
PROBS = np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.4, 0.1]])
P01 = np.array([0.1, 0.9, 0.5])
LOW, HIGH = np.array([0.0, -1.0, 2.0]), np.array([1.0, 3.0, 2.5])


def _seeded(t, fn):
    t.manual_seed(7)
    return fn()


def _D(t):
    return t.distributions


PARITY = {
    "normal_log_prob": (lambda t, m, s: _D(t).Normal(m, s).log_prob(t.tensor([0.1, 0.2, 0.3], dtype=m.dtype)),
                        [LOC, SCALE]),
    "normal_log_prob_number": (lambda t, m: _D(t).Normal(m, 2.0).log_prob(t.zeros(3, dtype=m.dtype)), [LOC]),
    "normal_rsample": (lambda t, m, s: _seeded(t, lambda: _D(t).Normal(m, s).rsample((2,))), [LOC, SCALE]),
    "normal_entropy": (lambda t, m, s: _D(t).Normal(m, s).entropy(), [LOC, SCALE]),
    "normal_moments": (lambda t, m, s: (_D(t).Normal(m, s).mean * 1, _D(t).Normal(m, s).variance,
                                        _D(t).Normal(m, s).stddev * 1), [LOC, SCALE]),
    "normal_cdf_icdf": (lambda t, m, s: (_D(t).Normal(m, s).cdf(t.zeros(3, dtype=m.dtype)),
                                         _D(t).Normal(m, s).icdf(t.full((3,), 0.3, dtype=m.dtype))), [LOC, SCALE]),
    "normal_kl": (lambda t, m, s, m2: _D(t).kl_divergence(_D(t).Normal(m, s), _D(t).Normal(m2, s * 2)),
                  [LOC, SCALE, SCALE - 1]),
    "normal_expand_rsample": (lambda t, m, s: _seeded(t, lambda: _D(t).Normal(m, s).expand((2, 3)).rsample()),
                              [LOC, SCALE]),
    "categorical_logits": (lambda t, lg: (_D(t).Categorical(logits=lg).log_prob(t.tensor([[1, 3], [0, 2]]).T),
                                          _D(t).Categorical(logits=lg).entropy(),
                                          _D(t).Categorical(logits=lg).probs * 1), [LOGITS]),
    "categorical_probs": (lambda t, p: (_D(t).Categorical(probs=p).log_prob(t.tensor([2, 0])),
                                        _D(t).Categorical(probs=p).entropy(),
                                        _D(t).Categorical(probs=p).logits * 1), [PROBS]),
    "categorical_kl": (lambda t, lg, p: _D(t).kl_divergence(_D(t).Categorical(logits=lg), _D(t).Categorical(p)),
                       [LOGITS, PROBS]),
    "bernoulli_probs": (lambda t, p: (_D(t).Bernoulli(p).log_prob(t.tensor([1.0, 0.0, 1.0], dtype=p.dtype)),
                                      _D(t).Bernoulli(p).entropy(), _D(t).Bernoulli(p).variance), [P01]),
    "bernoulli_logits": (lambda t, lg: (_D(t).Bernoulli(logits=lg).log_prob(t.tensor([0.0, 1.0, 1.0], dtype=lg.dtype)),
                                        _D(t).Bernoulli(logits=lg).mean * 1), [LOC]),
    "bernoulli_kl": (lambda t, p, lg: _D(t).kl_divergence(_D(t).Bernoulli(p), _D(t).Bernoulli(logits=lg)),
                     [P01, LOC]),
    "uniform": (lambda t, lo, hi: (_D(t).Uniform(lo, hi + 1).log_prob(t.tensor([0.5, 0.0, 2.2], dtype=lo.dtype)),
                                   _D(t).Uniform(lo, hi + 1).entropy(), _D(t).Uniform(lo, hi + 1).mean,
                                   _D(t).Uniform(lo, hi + 1).variance, _D(t).Uniform(lo, hi + 1).stddev),
                [LOW, HIGH]),
    "uniform_rsample": (lambda t, lo, hi: _seeded(t, lambda: _D(t).Uniform(lo, hi + 1).rsample((4,))), [LOW, HIGH]),
    "exponential": (lambda t, r: (_D(t).Exponential(r).log_prob(t.tensor([0.5, 0.0, 2.2], dtype=r.dtype)),
                                  _D(t).Exponential(r).entropy(), _D(t).Exponential(r).mean,
                                  _D(t).Exponential(r).variance, _D(t).Exponential(r).cdf(t.ones(3, dtype=r.dtype)),
                                  _D(t).Exponential(r).icdf(t.full((3,), 0.3, dtype=r.dtype))), [SCALE]),
    "exponential_rsample": (lambda t, r: _seeded(t, lambda: _D(t).Exponential(r).rsample((4,))), [SCALE]),
    "exponential_kl": (lambda t, r, r2: _D(t).kl_divergence(_D(t).Exponential(r), _D(t).Exponential(r2 + 1)),
                       [SCALE, SCALE]),
    "laplace": (lambda t, m, s: (_D(t).Laplace(m, s).log_prob(t.tensor([0.1, 0.2, 0.3], dtype=m.dtype)),
                                 _D(t).Laplace(m, s).entropy(), _D(t).Laplace(m, s).variance,
                                 _D(t).Laplace(m, s).stddev, _D(t).Laplace(m, s).cdf(t.zeros(3, dtype=m.dtype)),
                                 _D(t).Laplace(m, s).icdf(t.full((3,), 0.3, dtype=m.dtype))), [LOC, SCALE]),
    "laplace_rsample": (lambda t, m, s: _seeded(t, lambda: _D(t).Laplace(m, s).rsample((4,))), [LOC, SCALE]),
    "laplace_kl": (lambda t, m, s, m2: _D(t).kl_divergence(_D(t).Laplace(m, s), _D(t).Laplace(m2, s * 2)),
                   [LOC, SCALE, SCALE - 1]),
    "independent_normal": (lambda t, m, s: (_D(t).Independent(_D(t).Normal(m, s), 1).log_prob(t.zeros(3, dtype=m.dtype)),
                                            _D(t).Independent(_D(t).Normal(m, s), 1).entropy(),
                                            _seeded(t, lambda: _D(t).Independent(_D(t).Normal(m, s), 1).rsample((2,)))),
                           [LOC, SCALE]),
    "independent_kl": (lambda t, m, s, m2: _D(t).kl_divergence(_D(t).Independent(_D(t).Normal(m, s), 1),
                                                               _D(t).Independent(_D(t).Normal(m2, s), 1)),
                       [LOC, SCALE, SCALE - 1]),
    "one_hot_categorical": (lambda t, lg: (_D(t).OneHotCategorical(logits=lg).log_prob(t.eye(4, dtype=lg.dtype)[[1, 3]]),
                                           _D(t).OneHotCategorical(logits=lg).entropy(),
                                           _D(t).OneHotCategorical(logits=lg).variance), [LOGITS]),
    "one_hot_straight_through": (lambda t, lg: _seeded(t, lambda: _D(t).OneHotCategoricalStraightThrough(
        logits=lg).rsample((3,))), [LOGITS]),
    "one_hot_kl": (lambda t, lg, p: _D(t).kl_divergence(_D(t).OneHotCategorical(logits=lg),
                                                        _D(t).OneHotCategorical(p)), [LOGITS, PROBS]),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(PARITY))
def test_values_graphs_and_gradients_are_torchs(name, dtype):
    fn, inputs = PARITY[name]
    tol = dict(rtol=1e-12, atol=1e-14) if dtype == "float64" else dict(rtol=1e-6, atol=1e-7)
    assert_matches_torch(fn, inputs, dtype=dtype, **tol)


SAMPLES = {
    "normal": lambda t: _D(t).Normal(t.tensor([0.5, -1.0, 2.0]), t.tensor([1.0, 0.5, 2.0])).sample((4,)),
    "normal_numbers": lambda t: _D(t).Normal(0.0, 1.0).sample((5,)),
    "normal_float64": lambda t: _D(t).Normal(t.zeros(2, dtype=t.float64), 3.0).sample((3,)),
    "categorical": lambda t: _D(t).Categorical(logits=t.tensor([[0.1, 0.5, -1.0], [2.0, 0.0, 0.3]])).sample((6,)),
    "categorical_probs": lambda t: _D(t).Categorical(t.tensor([0.2, 0.3, 0.5])).sample(),
    "bernoulli": lambda t: _D(t).Bernoulli(t.tensor([0.1, 0.9, 0.5])).sample((4,)),
    "bernoulli_logits": lambda t: _D(t).Bernoulli(logits=t.tensor([[0.1], [-2.0]])).sample((3,)),
    "uniform": lambda t: _D(t).Uniform(t.tensor([0.0, -1.0]), t.tensor([1.0, 3.0])).sample((5,)),
    "uniform_numbers": lambda t: _D(t).Uniform(-2.0, 2.0).sample(),
    "exponential": lambda t: _D(t).Exponential(t.tensor([0.5, 2.0])).sample((3,)),
    # float64: a float32 log1p rounds its last bit differently from torch's vectorised one
    "laplace": lambda t: _D(t).Laplace(t.tensor([0.0, 1.0], dtype=t.float64), 2.0).sample((3,)),
    "independent": lambda t: _D(t).Independent(_D(t).Normal(t.zeros(2, 3), 1.0), 2).sample((2,)),
    "one_hot_categorical": lambda t: _D(t).OneHotCategorical(t.tensor([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]])).sample((4,)),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_seeded_samples_equal_torchs(name):
    real_torch.manual_seed(3)
    theirs = SAMPLES[name](real_torch)
    gradviz.manual_seed(3)
    ours = SAMPLES[name](gradviz)
    assert ours.shape == theirs.shape and str(ours.dtype) == str(theirs.dtype)
    assert ours.grad_fn is None and not ours.requires_grad
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    # the stream is left where torch's is: the next draw agrees too
    np.testing.assert_array_equal(gradviz.rand(3).numpy(), real_torch.rand(3).numpy())


def test_sample_takes_no_gradient():
    loc = gradviz.zeros(3, requires_grad=True)
    assert gradviz.distributions.Normal(loc, 1.0).sample().requires_grad is False
    assert gradviz.distributions.Normal(loc, 1.0).rsample().requires_grad is True


DESCRIBED = {
    "normal": lambda t: _D(t).Normal(t.zeros(3), t.ones(3)),
    "normal_numbers": lambda t: _D(t).Normal(0.0, 1.0),
    "normal_scalar_tensors": lambda t: _D(t).Normal(t.tensor(0.5), t.tensor([2.0])),
    "normal_expanded": lambda t: _D(t).Normal(t.zeros(3), t.ones(3)).expand((4, 3)),
    "categorical_logits": lambda t: _D(t).Categorical(logits=t.zeros(2, 5)),
    "categorical_probs": lambda t: _D(t).Categorical(t.tensor([0.2, 0.8])),
    "categorical_expanded": lambda t: _D(t).Categorical(t.tensor([0.2, 0.8])).expand((3,)),
    "bernoulli": lambda t: _D(t).Bernoulli(t.tensor([0.3, 0.6])),
    "bernoulli_number": lambda t: _D(t).Bernoulli(0.3),
    "bernoulli_logits": lambda t: _D(t).Bernoulli(logits=t.zeros(2, 2)),
    "uniform": lambda t: _D(t).Uniform(t.zeros(2), 3.0),
    "exponential": lambda t: _D(t).Exponential(t.tensor([0.5, 2.0])),
    "exponential_number": lambda t: _D(t).Exponential(2.0),
    "laplace": lambda t: _D(t).Laplace(t.zeros(2), 3.0),
    "laplace_expanded": lambda t: _D(t).Laplace(0.0, 1.0).expand((3,)),
    "independent": lambda t: _D(t).Independent(_D(t).Normal(t.zeros(2, 3), 1.0), 1),
    "independent_expanded": lambda t: _D(t).Independent(_D(t).Normal(t.zeros(3), 1.0), 1).expand((4,)),
    "one_hot_categorical": lambda t: _D(t).OneHotCategorical(t.tensor([0.2, 0.8])),
    "one_hot_expanded": lambda t: _D(t).OneHotCategorical(logits=t.zeros(3)).expand((2,)),
}


@pytest.mark.parametrize("name", sorted(DESCRIBED))
def test_repr_and_shapes_are_torchs(name):
    theirs, ours = DESCRIBED[name](real_torch), DESCRIBED[name](gradviz)
    assert repr(ours) == repr(theirs)
    assert (tuple(ours.batch_shape), tuple(ours.event_shape)) == (tuple(theirs.batch_shape), tuple(theirs.event_shape))
    assert type(ours.batch_shape).__name__ == "Size"
    assert repr(ours.support) == repr(theirs.support)
    assert {k: repr(v) for k, v in ours.arg_constraints.items()} == {k: repr(v) for k, v in theirs.arg_constraints.items()}
    assert tuple(ours.sample((2,)).shape) == tuple(theirs.sample((2,)).shape)


INVALID = {
    "normal_scale": lambda t: _D(t).Normal(t.zeros(3), t.tensor([1.0, -1.0, 0.0])),
    "normal_loc_nan": lambda t: _D(t).Normal(t.tensor([float("nan")]), 1.0),
    "categorical_probs": lambda t: _D(t).Categorical(probs=t.tensor([0.5, -0.5, 1.0])),
    "categorical_neither": lambda t: _D(t).Categorical(),
    "categorical_both": lambda t: _D(t).Bernoulli(probs=t.tensor([0.5]), logits=t.tensor([0.0])),
    "categorical_scalar": lambda t: _D(t).Categorical(logits=t.tensor(1.0)),
    "bernoulli_probs": lambda t: _D(t).Bernoulli(t.tensor([1.5])),
    "uniform_order": lambda t: _D(t).Uniform(t.tensor([2.0]), t.tensor([1.0])),
    "log_prob_not_tensor": lambda t: _D(t).Normal(0.0, 1.0).log_prob(3.0),
    "log_prob_outside_support": lambda t: _D(t).Bernoulli(0.3).log_prob(t.tensor(0.5)),
    "log_prob_category": lambda t: _D(t).Categorical(t.tensor([0.3, 0.7])).log_prob(t.tensor([3])),
    "log_prob_shape": lambda t: _D(t).Normal(t.zeros(3), 1.0).log_prob(t.zeros(2)),
    "log_prob_uniform": lambda t: _D(t).Uniform(0.0, 1.0).log_prob(t.tensor([2.0])),
    "kl_unregistered": lambda t: _D(t).kl_divergence(_D(t).Categorical(t.tensor([0.5, 0.5])), _D(t).Normal(0.0, 1.0)),
    "exponential_rate": lambda t: _D(t).Exponential(t.tensor([1.0, 0.0])),
    "exponential_log_prob": lambda t: _D(t).Exponential(1.0).log_prob(t.tensor([-1.0])),
    "laplace_scale": lambda t: _D(t).Laplace(0.0, -1.0),
    "independent_ndims": lambda t: _D(t).Independent(_D(t).Normal(t.zeros(2, 3), 1.0), 3),
    "independent_log_prob_shape": lambda t: _D(t).Independent(_D(t).Normal(t.zeros(2, 3), 1.0), 1).log_prob(t.zeros(2)),
    "one_hot_log_prob": lambda t: _D(t).OneHotCategorical(t.tensor([0.2, 0.8])).log_prob(t.tensor([1.0, 1.0])),
    "one_hot_probs": lambda t: _D(t).OneHotCategorical(t.tensor([0.2, -0.8])),
}


@pytest.mark.parametrize("name", sorted(INVALID))
def test_validation_errors_are_torchs_word_for_word(name):
    assert_raises_as_torch(INVALID[name])
    with pytest.raises(Exception) as theirs:
        INVALID[name](real_torch)
    with pytest.raises(type(theirs.value)) as ours:
        INVALID[name](gradviz)
    assert str(ours.value) == str(theirs.value)


def test_validate_args_false_skips_the_checks():
    for t in (real_torch, gradviz):
        d = t.distributions.Normal(t.zeros(2), t.tensor([-1.0, 1.0]), validate_args=False)
        assert np.isnan(d.log_prob(t.zeros(2)).numpy()[0])


def test_expand_keeps_the_gradient_path():
    def fn(t, m, s):
        return _D(t).Normal(m, s).expand((2, 3)).log_prob(t.ones(2, 3, dtype=m.dtype))
    assert_matches_torch(fn, [LOC, SCALE])


def test_a_vae_loss_and_a_reinforce_loss_train_as_torchs():
    def vae(t, mu, logvar):
        std = t.exp(0.5 * logvar)
        q = _D(t).Normal(mu, std)
        t.manual_seed(1)
        z = q.rsample()
        kl = _D(t).kl_divergence(q, _D(t).Normal(t.zeros_like(mu), t.ones_like(std))).sum()
        return (z ** 2).sum() + kl

    def reinforce(t, logits):
        t.manual_seed(2)
        m = _D(t).Categorical(logits=logits)
        action = m.sample()
        return -(m.log_prob(action) * 1.5).sum() - 0.01 * m.entropy().sum()

    assert_matches_torch(vae, [LOC, SCALE - 1.5])
    assert_matches_torch(reinforce, [LOGITS])


def test_a_subclass_without_constraints_warns_as_torchs():
    def make(t):
        class Coin(t.distributions.Distribution):
            def log_prob(self, value):
                self._validate_sample(value)
                return value * 0

        return Coin

    for t in (real_torch, gradviz):
        with pytest.warns(UserWarning) as caught:
            coin = make(t)(validate_args=True)
            coin.log_prob(t.zeros(()))
        messages = [str(w.message).replace(t.__name__, "LIB").split("'")[-1] for w in caught]
        if t is real_torch:
            theirs = messages
    assert messages == theirs and len(theirs) == 2
