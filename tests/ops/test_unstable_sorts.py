"""The indices torch's CPU kernels report where their sorts are not stable: mode (libstdc++'s std::sort,
then the end of the longest run) and median/nanmedian along a dim (std::nth_element; NaN), against
PyTorch on many random integer-valued tensors, with NaNs, and on slices long enough for introsort."""
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
