"""The indices torch's CPU kernels report where their sorts are not stable: mode (libstdc++'s std::sort,
then the end of the longest run) and median/nanmedian along a dim (std::nth_element; NaN), against
PyTorch on many random integer-valued tensors, with NaNs, and on slices long enough for introsort;
and scatter_reduce's ties and zeros, where torch's backward shares ḡ or refuses a second derivative."""
import numpy as np
import pytest

import gradviz
from gradviz.ops.stdsort import nth_element, std_sort

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


@pytest.mark.parametrize("seed", range(4))
def test_mode_median_and_nanmedian_indices_are_torchs(seed):
    rng = np.random.default_rng(seed)
    for n in (1, 2, 5, 16, 17, 33, 100, 700):
        for values, nan in ((2, 0.0), (3, 0.1), (7, 0.5), (1000, 0.0), (4, 0.95)):
            a = rng.integers(0, values, (6, n)).astype(np.float64)
            a[rng.random(a.shape) < nan] = np.nan
            for name in ("mode", "median", "nanmedian"):
                expected, actual = getattr(torch.from_numpy(a), name)(1), getattr(gradviz.tensor(a), name)(1)
                assert actual.indices.tolist() == expected.indices.tolist(), (name, n, values, nan)
                np.testing.assert_array_equal(actual.values.numpy(), expected.values.numpy())


def test_the_sorts_are_libstdcxxs_on_their_own():
    """A sort by the first item keeps no order among equal keys; nth_element with no order at all."""
    pairs = std_sort([(k % 3, i) for i, k in enumerate(range(40))], lambda x, y: x[0] < y[0])
    assert [k for k, _ in pairs] == sorted(k % 3 for k in range(40))
    assert [i for k, i in pairs if k == 0] != sorted(i for k, i in pairs if k == 0)   # not stable
    assert nth_element(list(range(5)), 0, lambda i, j: False)[0] == 2
    assert nth_element([5, 1, 4, 2, 3, 0, 9], 3, lambda i, j: i < j)[3] == 3


def test_scatter_reduce_with_ties_and_zeros_is_torchs_to_the_second_derivative():
    rng = np.random.default_rng(0)
    for _ in range(6):
        a = rng.integers(-2, 3, (3, 5)) * rng.choice([1, 0.5], (3, 5))
        s = rng.integers(-2, 3, (3, 4)) * rng.choice([1, 1.5], (3, 4))
        idx = rng.integers(0, 5, (3, 4))
        for reduce in ("sum", "prod", "mean", "amax", "amin"):
            for include_self in (True, False):
                found = []
                for t in (torch, gradviz):
                    x, y = t.tensor(a, requires_grad=True), t.tensor(s, requires_grad=True)
                    g = t.tensor(np.arange(15.).reshape(3, 5) - 7, requires_grad=True)
                    out = x.scatter_reduce(1, t.tensor(idx), y, reduce, include_self=include_self)
                    gx, gy = t.autograd.grad(out, (x, y), g, create_graph=True)
                    try:
                        second = [None if v is None else v.detach().numpy() for v in
                                  t.autograd.grad((gx * gx).sum() + (gy ** 3).sum(), (x, y, g), allow_unused=True)]
                    except RuntimeError as error:
                        second = str(error)
                    found.append((gx.detach().numpy().tobytes(), gy.detach().numpy().tobytes(), gy.grad_fn.name(), second))
                (*first, second), (*mine, my_second) = found
                assert first == mine, (reduce, include_self)
                if isinstance(second, str):
                    assert second == my_second
                else:
                    for theirs, ours in zip(second, my_second):
                        assert (theirs is None) == (ours is None)
                        if theirs is not None:
                            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
