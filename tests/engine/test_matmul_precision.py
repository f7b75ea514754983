"""torch.set_float32_matmul_precision / get_float32_matmul_precision against PyTorch: what is kept,
what is warned about and ignored, what is refused, and that gradviz's matmul stays full float32."""
import warnings

import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch as torch

import gradviz


@pytest.fixture
def restore():
    yield
    for L in (torch, gradviz):
        L.set_float32_matmul_precision("highest")


def _set_and_get(L, value):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = L.set_float32_matmul_precision(value)
    words = [str(w.message).split(" (Triggered internally")[0] for w in caught]
    return result, L.get_float32_matmul_precision(), words


@needs_torch
def test_default_is_highest():
    assert gradviz.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "highest"


@needs_torch
@pytest.mark.parametrize("sequence", [["high"], ["medium"], ["high", "highest"], ["medium", "foo"], ["high", "HIGH"]])
def test_kept_or_warned_and_ignored_as_torch(sequence, restore):
    for value in sequence:
        assert _set_and_get(gradviz, value) == _set_and_get(torch, value)


@needs_torch
@pytest.mark.parametrize("value", [3, None, 1.5])
def test_a_non_string_is_refused(value, restore):
    for L in (torch, gradviz):
        with pytest.raises(RuntimeError, match=f"set_float32_matmul_precision expects a str, but got "
                                               f"{type(value).__name__ if value is not None else 'NoneType'}"):
            L.set_float32_matmul_precision(value)


def test_matmul_numbers_do_not_change(restore):
    a = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    before = (gradviz.tensor(a) @ gradviz.tensor(a.T)).numpy()
    gradviz.set_float32_matmul_precision("medium")
    np.testing.assert_array_equal((gradviz.tensor(a) @ gradviz.tensor(a.T)).numpy(), before)
