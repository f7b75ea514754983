"""Tensor: PyTorch's printing, attributes, dtypes, conversions, in-place rules and .data/.detach().

Printing is compared character for character with PyTorch (where it is installed) over
many tensors, and against golden strings from PyTorch 2.13 (always).
"""
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import gradviz
from tests.support.parity import mask, needs_torch, real_torch

# -- printing -------------------------------------------------------------------------------
_rng = np.random.default_rng(7)
f32 = np.float32


def _normal(*shape, scale=1.0, dtype=f32):
    return (_rng.standard_normal(shape) * scale).astype(dtype)


# (id, array, tensor(...) keyword arguments)
REPR_CASES = [
    ("int", np.arange(5), {}),
    ("int_negative", np.array([-5, 10, 0, 123]), {}),
    ("int_large", np.array([-5, 10 ** 12]), {}),
    ("int32", np.arange(20, dtype=np.int32), {}),
    ("int16", np.array([1, 2], np.int16), {}),
    ("uint8", np.array([1, 255], np.uint8), {}),
    ("bool", np.array([True, False]), {}),
    ("bool_2d", np.array([[True, False], [False, True]]), {}),
    ("bool_0d", np.array(True), {}),
    ("int_0d", np.array(-7), {}),
    ("float_intlike", np.array([1.0, 2.0, 3.0], f32), {}),
    ("float_intlike_neg", np.array([-1.0, 2.0, 300.0], f32), {}),
    ("float_zeros", np.array([0.0, 0.0], f32), {}),
    ("float_negzero", np.full((3, 3), -0.0, f32), {}),
    ("float_plain", np.array([0.1, 100.0], f32), {}),
    ("float_sci_ratio", np.array([0.1, 1000.0], f32), {}),
    ("float_sci_small", np.array([1e-5, 1.0], f32), {}),
    ("float_boundary_small", np.array([1e-4, 1.0], f32), {}),
    ("float_below_small", np.array([9.99e-5, 0.5], f32), {}),
    ("float_sci_large", np.array([1e10, 1.0], f32), {}),
    ("float_1e8", np.array([1e8, 0.5], f32), {}),
    ("float_intlike_1e8", np.array([1e8, 1.0], f32), {}),
    ("float_intlike_1e9", np.array([1e9], f32), {}),
    ("float_intlike_ratio", np.array([1001.0, 1.0], f32), {}),
    ("float_intlike_1000", np.array([1000.0, 1.0], f32), {}),
    ("float_big_plain", np.array([100000.0, 1.5], f32), {}),
    ("float_neg_sci", np.array([-1e-5, -2.0], f32), {}),
    ("float_mixed_small", np.array([0.0001, 0.1], f32), {}),
    ("float_tiny_pair", np.array([0.5, 1e-10], f32), {}),
    ("float_2_40", np.array([2.0 ** 40], f32), {}),
    ("nan_inf", np.array([np.nan, 1.0, np.inf, -np.inf], f32), {}),
    ("nan_only", np.array([np.nan], f32), {}),
    ("inf_frac", np.array([np.inf, 2.5], f32), {}),
    ("nan_tiny", np.array([np.nan, 1e-8], f32), {}),
    ("scalar", np.array(1.5, f32), {}),
    ("scalar_intlike", np.array(1.0, f32), {}),
    ("scalar_tiny", np.array(1e-7, f32), {}),
    ("scalar_negzero", np.array(-0.0, f32), {}),
    ("scalar_nan", np.array(np.nan, f32), {}),
    ("scalar_f64_large", np.array(1e20), {}),
    ("empty", np.zeros((0,), f32), {}),
    ("empty_2d", np.zeros((0, 3), f32), {}),
    ("empty_int_2d", np.zeros((2, 0), np.int64), {}),
    ("empty_int", np.zeros((0,), np.int64), {}),
    ("empty_f64", np.zeros((0,), np.float64), {}),
    ("empty_bool", np.zeros((0,), bool), {}),
    ("empty_3d", np.zeros((1, 0, 2), f32), {}),
    ("matrix", _normal(3, 4), {}),
    ("tall", _normal(7, 2), {}),
    ("cube", _normal(2, 3, 4), {}),
    ("4d", _normal(2, 2, 2, 2), {}),
    ("one_one_one", _normal(1, 1, 1), {}),
    ("summarized_1d", _normal(2000), {}),
    ("summarized_2d", _normal(40, 40), {}),
    ("summarized_3d", _normal(11, 10, 12), {}),
    ("summarized_rows", _normal(8, 8, 20), {}),
    ("summarized_int", np.arange(2000), {}),
    ("summarized_int_random", _rng.integers(-1000, 1000, (1100,)), {}),
    ("summarized_intlike", np.arange(1001.0, dtype=f32), {}),
    ("summarized_big_column", _normal(40, 1, scale=1e6), {}),
    ("wrapping_fixed", np.arange(30, dtype=f32) * 1.1, {}),
    ("wrapping_wide", np.arange(30, dtype=f32) * 1000.5, {}),
    ("wrapping_rows", _normal(3, 30), {}),
    ("float64", _normal(3, dtype=np.float64), {}),
    ("float64_intlike", np.array([1.0, 2.0]), {}),
    ("float64_scalar", np.array(2.0), {}),
    ("float64_sci", np.array([1e15, 1e-15]), {}),
    ("float64_digits", np.array([1.23456789e-3, 2.0]), {}),
    ("float16", np.array([1.0, 2.0], np.float16), {}),
    ("float16_sci", np.array([1e-3, 5e4], np.float16), {}),
    ("requires_grad", np.array([1.0, 2.0, 3.0], f32), {"requires_grad": True}),
    ("requires_grad_scalar", np.array(1.0, f32), {"requires_grad": True}),
    ("requires_grad_wraps", _normal(25), {"requires_grad": True}),
    ("requires_grad_f64", _normal(9, dtype=np.float64, scale=10), {"requires_grad": True}),
    ("requires_grad_empty_f64", np.zeros((0, 4)), {"requires_grad": True}),
]
for _n in (5, 6, 7, 8, 9, 10, 11, 12, 13):
    REPR_CASES.append((f"line_{_n}_rg", _normal(_n, scale=10), {"requires_grad": True}))
    REPR_CASES.append((f"line_{_n}_f64_rg", _normal(_n, scale=10, dtype=np.float64), {"requires_grad": True}))
    REPR_CASES.append((f"line_{_n}_bigint", np.round(_normal(_n, scale=1e6)).astype(np.int64), {}))
    REPR_CASES.append((f"line_{_n}_small_f64", _normal(_n, scale=1e-6, dtype=np.float64), {}))

# What computes a tensor with a grad_fn; `m` is torch or gradviz
GRAD_FN_CASES = {
    "mul": lambda m: m.tensor([1.0, 2.0], requires_grad=True) * 2,
    "exp_scalar": lambda m: m.tensor(1.0, requires_grad=True).exp(),
    "sum_dim_f64": lambda m: (m.tensor([[1.0, 2.0]], dtype=m.float64, requires_grad=True) * 2).sum(0),
    "wrapped_suffix": lambda m: m.arange(300.0, requires_grad=True) * 3.3,
    "empty": lambda m: m.zeros(0, requires_grad=True) * 2,
    "sci": lambda m: m.tensor([1e-6, 1.0], requires_grad=True) + 0,
    "matrix": lambda m: m.arange(12.).reshape(3, 4).requires_grad_() * 1.5,
    "mixed_widths": lambda m: m.tensor([123456.5, 0.5, 33.25, 1.125, 1000.75, 3.0, 7.5, 2.25, 1e3],
                                       requires_grad=True) * 1,
    "summarized": lambda m: m.arange(1200.0, requires_grad=True) * 0.5,
    "f64_long_line": lambda m: m.arange(11, dtype=m.float64, requires_grad=True) * 1.7 - 5.1,
    "detach": lambda m: (m.tensor([1.0, 2.0], requires_grad=True) * 2).detach(),
    "data": lambda m: (m.tensor([1.0, 2.0], requires_grad=True) * 2).data,
    "T": lambda m: m.tensor([[1.0, 2.0]], requires_grad=True).T,
    "select": lambda m: m.tensor([[1.0, 2.0]], requires_grad=True)[0],
    "mean": lambda m: m.tensor([[1.0, 2.0]], requires_grad=True).mean(),
    "view": lambda m: m.tensor([[1.0, 2.0]], requires_grad=True).view(2),
    "mm": lambda m: m.tensor([[1.0, 2.0]], requires_grad=True) @ m.ones(2, 2),
    "max_dim": lambda m: m.tensor([[1.0, 2.0]], requires_grad=True).max(1),
    "double": lambda m: m.tensor([[1.0, 2.0]], requires_grad=True).double(),
    "compare": lambda m: m.tensor([[1.0, 2.0]], requires_grad=True) > 1,
    "argmax": lambda m: m.tensor([[1.0, 2.0]], requires_grad=True).argmax(),
    "long": lambda m: m.tensor([1.5, 2.5], requires_grad=True).long(),
    "int_div": lambda m: m.tensor([1, 2]) / 2,
    "int_times_float": lambda m: m.tensor([1, 2]) * 2.5,
    "int_plus_bool": lambda m: m.tensor([1, 2]) + True,
    "int32_plus_0d_int64": lambda m: m.tensor([1, 2], dtype=m.int32) + m.tensor(5),
    "int32_plus_0d_float": lambda m: m.tensor([1], dtype=m.int32) + m.tensor(1.0),
    "f64_plus_f32": lambda m: m.tensor([1.0], dtype=m.float64) + m.tensor([1.0]),
    "arange": lambda m: m.arange(5),
    "arange_float": lambda m: m.arange(0, 1, 0.25),
    "arange_negative_step": lambda m: m.arange(5, 0, -1.5),
    "linspace": lambda m: m.linspace(0, 1, 5),
    "eye": lambda m: m.eye(2, 3),
    "full_int": lambda m: m.full((2,), 3),
    "full_float": lambda m: m.full((2,), 3.0),
    "full_bool": lambda m: m.full((2,), True),
    "zeros_long": lambda m: m.zeros(2, 3, dtype=m.long),
    "FloatTensor": lambda m: m.FloatTensor([[1, 0]]),
    "LongTensor": lambda m: m.LongTensor([1.7]),
    "DoubleTensor": lambda m: m.DoubleTensor([1]),
    "ByteTensor": lambda m: (m.ByteTensor([1, 2]), isinstance(m.ones(1, dtype=m.uint8), m.ByteTensor)),
    "HalfTensor_CharTensor_ShortTensor": lambda m: (m.HalfTensor([1.5]), m.HalfTensor(2).shape, m.CharTensor([-1]), m.ShortTensor([3])),
    "Tensor_list": lambda m: m.Tensor([1, 2]),
    "tensor_of_tensors": lambda m: m.tensor([m.tensor(1.0), m.tensor(2.0)]),
    "tensor_mixed": lambda m: m.tensor([1, 2.5]),
    "tensor_bool_int": lambda m: m.tensor([True, 2]),
    "str": lambda m: str(m.tensor([1.0, 2.0], requires_grad=True)),
    "Size": lambda m: m.zeros(2, 3).size(),
    "Size_0d": lambda m: m.zeros(()).shape,
    "dtype": lambda m: (m.tensor([1]).dtype, m.tensor([1.0]).dtype, m.tensor(True).dtype, m.float64),
    "device": lambda m: m.zeros(1).device,
    "type": lambda m: (m.zeros(1).type(), m.zeros(1, dtype=m.float64).type(), m.zeros(1, dtype=m.long).type()),
}

GOLDEN = {
    "int": "tensor([0, 1, 2, 3, 4])",
    "bool_2d": "tensor([[ True, False],\n        [False,  True]])",
    "float_intlike_neg": "tensor([ -1.,   2., 300.])",
    "float_sci_ratio": "tensor([1.0000e-01, 1.0000e+03])",
    "float_sci_small": "tensor([1.0000e-05, 1.0000e+00])",
    "float_plain": "tensor([  0.1000, 100.0000])",
    "nan_inf": "tensor([nan, 1., inf, -inf])",
    "scalar": "tensor(1.5000)",
    "scalar_negzero": "tensor(-0.)",
    "empty": "tensor([])",
    "empty_int_2d": "tensor([], size=(2, 0), dtype=torch.int64)",
    "empty_f64": "tensor([], dtype=torch.float64)",
    "float64_intlike": "tensor([1., 2.], dtype=torch.float64)",
    "int32": "tensor([ 0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14, 15, 16, 17,\n"
             "        18, 19], dtype=torch.int32)",
    "requires_grad": "tensor([1., 2., 3.], requires_grad=True)",
    "summarized_int": "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])",
    "wrapping_fixed": (
        "tensor([ 0.0000,  1.1000,  2.2000,  3.3000,  4.4000,  5.5000,  6.6000,  7.7000,\n"
        "         8.8000,  9.9000, 11.0000, 12.1000, 13.2000, 14.3000, 15.4000, 16.5000,\n"
        "        17.6000, 18.7000, 19.8000, 20.9000, 22.0000, 23.1000, 24.2000, 25.3000,\n"
        "        26.4000, 27.5000, 28.6000, 29.7000, 30.8000, 31.9000])"),
}
GOLDEN_GRAD_FN = {
    "mul": "tensor([2., 4.], grad_fn=<MulBackward0>)",
    "sum_dim_f64": "tensor([2., 4.], dtype=torch.float64, grad_fn=<SumBackward1>)",
    "empty": "tensor([], grad_fn=<MulBackward0>)",
    "summarized": "tensor([0.0000e+00, 5.0000e-01, 1.0000e+00,  ..., 5.9850e+02, 5.9900e+02,\n"
                  "        5.9950e+02], grad_fn=<MulBackward0>)",
    "long": "tensor([1, 2])",
    "Tensor_list": "tensor([1., 2.])",
    "T": "tensor([[1.],\n        [2.]], grad_fn=<PermuteBackward0>)",
    "str": "tensor([1., 2.], requires_grad=True)",
    "Size": "torch.Size([2, 3])",
    "Size_0d": "torch.Size([])",
    "dtype": "(torch.int64, torch.float32, torch.bool, torch.float64)",
    "type": "('torch.FloatTensor', 'torch.DoubleTensor', 'torch.LongTensor')",
}


def _shown(value) -> str:
    return mask(value if isinstance(value, str) else repr(value))


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_repr_golden(name):
    array, kwargs = next((a, k) for n, a, k in REPR_CASES if n == name)
    assert repr(gradviz.tensor(array, **kwargs)) == GOLDEN[name]


@pytest.mark.parametrize("name", sorted(GOLDEN_GRAD_FN))
def test_repr_golden_computed(name):
    assert _shown(GRAD_FN_CASES[name](gradviz)) == GOLDEN_GRAD_FN[name]


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name,array,kwargs", REPR_CASES, ids=[c[0] for c in REPR_CASES])
def test_repr_matches_torch(name, array, kwargs):
    assert repr(gradviz.tensor(array, **kwargs)) == repr(real_torch.tensor(array, **kwargs))


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(GRAD_FN_CASES))
def test_computed_repr_matches_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert _shown(GRAD_FN_CASES[name](gradviz)) == _shown(GRAD_FN_CASES[name](real_torch))


@needs_torch
@pytest.mark.torch
def test_repr_with_float64_default_dtype_matches_torch():
    def shown(m):
        m.set_default_dtype(m.float64)
        try:
            return [repr(t) for t in (m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0], dtype=m.float32), m.zeros(0),
                                      m.zeros(0, dtype=m.float32), m.arange(3), m.tensor(1.5),
                                      m.tensor([1, 2]) / 2)]
        finally:
            m.set_default_dtype(m.float32)
    assert shown(gradviz) == shown(real_torch)
    assert gradviz.get_default_dtype() is gradviz.float32


def test_repr_line_width_is_80_columns():
    text = repr(gradviz.tensor(np.arange(100, dtype=f32) * 1.5, requires_grad=True))
    assert max(len(line) for line in text.splitlines()) <= 80
    assert text.endswith(",\n       requires_grad=True)") or text.endswith(", requires_grad=True)")


# -- attributes ---------------------------------------------------------------------------------
def test_leaf_and_computed_attributes():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    assert x.is_leaf and x.grad_fn is None and x.requires_grad
    assert not y.is_leaf and y.grad_fn.name() == "MulBackward0" and y.requires_grad
    c = gradviz.tensor([1.0])
    assert c.is_leaf and not c.requires_grad and c.grad is None
    assert (x.shape, x.size(), x.size(0), x.size(-1), x.ndim, x.dim(), x.numel()) == ((2,), (2,), 2, 2, 1, 1, 2)
    assert repr(gradviz.zeros(2, 3).mT.shape) == "torch.Size([3, 2])"
    assert str(x.device) == "cpu" and not x.is_cuda


def test_legacy_constructor():
    assert gradviz.Tensor(2, 3).shape == (2, 3) and gradviz.Tensor(2, 3).dtype is gradviz.float32
    assert gradviz.Tensor([1, 2]).dtype is gradviz.float32
    assert gradviz.Tensor().shape == (0,)
    assert gradviz.Tensor(np.array([1, 2])).dtype is gradviz.int64   # arrays keep their dtype


def test_grad_assignment_checks_like_torch():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    x.grad = gradviz.ones(2)
    assert x.grad.tolist() == [1.0, 1.0]
    x.grad = None
    assert x.grad is None
    with pytest.raises(RuntimeError, match=re.escape(
            "attempting to assign a gradient of size '[3]' to a tensor of size '[2]'. Please ensure that the "
            "gradient and the tensor are the same size")):
        x.grad = gradviz.zeros(3)
    with pytest.raises(RuntimeError, match=re.escape(
            "attempting to assign a gradient with dtype 'double' to a tensor with grad_dtype 'Float'.")):
        x.grad = gradviz.zeros(2, dtype=gradviz.float64)
    with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but got grad of type list"):
        x.grad = [1.0, 2.0]
    assert x.grad is None


def test_conversions_and_errors():
    t = gradviz.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        t.item()
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(t)
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(gradviz.tensor(2.7))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(gradviz.tensor(2.7))
    with pytest.raises(RuntimeError, match=re.escape(
            "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")):
        gradviz.tensor([1.0], requires_grad=True).numpy()
    with pytest.raises(TypeError, match=r"new\(\): invalid data type 'str'"):
        gradviz.tensor("a")
    assert float(gradviz.tensor([2.5])) == 2.5 and int(gradviz.tensor(2.7)) == 2
    assert [10, 20, 30][gradviz.tensor(1)] == 20
    assert f"{gradviz.tensor(2.5):.3f}" == "2.500"
    assert gradviz.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert gradviz.allclose(gradviz.tensor([1.0]), gradviz.tensor([1.0 + 1e-9])) is True


def test_iteration_records_unbind_like_torch():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    parts = list(x * 2)
    assert [p.item() for p in parts] == [2.0, 4.0]
    assert all(not p.is_leaf for p in parts)
    sum(parts).backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_integer_casts_do_not_require_grad():
    x = gradviz.tensor([1.5, -2.5], requires_grad=True)
    for t in (x.long(), x.int(), x.bool(), x.to(gradviz.int64), x > 0, x.argmax()):
        assert not t.requires_grad and t.grad_fn is None
    y = x.double()
    assert y.grad_fn.name() == "ToCopyBackward0"
    y.sum().backward()
    assert x.grad.dtype is gradviz.float32 and x.grad.tolist() == [1.0, 1.0]
    assert x.float() is x and x.to(gradviz.float32) is x and x.to("cpu") is x


def test_T_warns_on_other_than_2d_like_torch():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="The use of `x.T` on tensors of dimension other than 2"):
        t = x.T
    assert t.grad_fn.name() == "PermuteBackward0"
    with pytest.warns(UserWarning, match="Tensor.T is deprecated on 0-D tensors"):
        gradviz.tensor(1.0).T
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert gradviz.zeros(2, 3).T.shape == (3, 2)


# -- requires_grad ----------------------------------------------------------------------------------
def test_requires_grad_on_integer_tensors_raises_torchs_errors():
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require gradients$"):
        gradviz.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype can require "
                                           "gradients$"):
        gradviz.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype"):
        gradviz.arange(3, requires_grad=True)
    t = gradviz.tensor([1, 2])
    with pytest.raises(RuntimeError, match="^only Tensors of floating point and complex dtype"):
        t.requires_grad = True
    assert not t.requires_grad
    assert gradviz.tensor([1, 2]).float().requires_grad_().requires_grad


def test_requires_grad_flags_of_non_leaves():
    y = gradviz.tensor([1.0], requires_grad=True) * 2
    assert y.requires_grad_(True) is y
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf variables. If you want "
                                           "to use a computed variable in a subgraph that doesn't require "
                                           "differentiation use var_no_grad = var.detach()."):
        y.requires_grad_(False)
    x = gradviz.tensor([1.0], requires_grad=True).requires_grad_(False)
    assert not x.requires_grad and x.is_leaf


@needs_torch
@pytest.mark.torch
def test_requires_grad_errors_match_torch():
    def errors(m):
        out = []
        for f in (lambda: m.tensor([1, 2]).requires_grad_(), lambda: m.tensor([1, 2], requires_grad=True),
                  lambda: m.arange(3, requires_grad=True), lambda: setattr(m.tensor([1]), "requires_grad", True),
                  lambda: (m.tensor([1.0], requires_grad=True) * 2).requires_grad_(False)):
            with pytest.raises(RuntimeError) as info:
                f()
            out.append(str(info.value))
        return out
    assert errors(gradviz) == errors(real_torch)


# -- .data and .detach() ------------------------------------------------------------------------------
def test_data_shares_storage_and_is_detached():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    d = x.data
    d[0] = 5.0
    assert x.tolist() == [5.0, 2.0]
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    x.data = gradviz.tensor([7.0, 8.0])
    assert repr(x) == "tensor([7., 8.], requires_grad=True)"


def test_detach_shares_storage_and_version_counter():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d.is_leaf
    d[0] = 5.0
    assert y.tolist() == [5.0, 4.0]
    assert y._version == d._version == 1
    data = y.data
    data.add_(1)
    assert data._version == 1 and y._version == 1   # .data has its own counter, as in torch


def test_detach_in_place():
    y = gradviz.tensor([1.0, 2.0], requires_grad=True) * 2
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and repr(y) == "tensor([2., 4.])"


def test_from_numpy_shares_memory_and_tensor_copies():
    a = np.array([1.0, 2.0])
    gradviz.from_numpy(a).add_(1)
    assert a.tolist() == [2.0, 3.0]
    b = np.array([1.0, 2.0])
    gradviz.tensor(b).add_(1)
    assert b.tolist() == [1.0, 2.0]


def test_tensor_from_tensor_warns_like_torch():
    with pytest.warns(UserWarning, match=re.escape("To copy construct from a tensor, it is recommended to use "
                                                   "sourceTensor.detach().clone()")):
        t = gradviz.tensor(gradviz.tensor([1.0, 2.0], requires_grad=True))
    assert not t.requires_grad


# -- in-place ops -------------------------------------------------------------------------------------
LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
IN_PLACE = {
    "add_": lambda t: t.add_(1), "sub_": lambda t: t.sub_(1), "mul_": lambda t: t.mul_(2),
    "div_": lambda t: t.div_(2), "pow_": lambda t: t.pow_(2), "exp_": lambda t: t.exp_(),
    "neg_": lambda t: t.neg_(), "relu_": lambda t: t.relu_(), "clamp_": lambda t: t.clamp_(0, 1),
    "zero_": lambda t: t.zero_(), "fill_": lambda t: t.fill_(2), "copy_": lambda t: t.copy_(gradviz.ones(2)),
    "uniform_": lambda t: t.uniform_(), "normal_": lambda t: t.normal_(), "iadd": lambda t: t.__iadd__(1),
    "imul": lambda t: t.__imul__(2), "sigmoid_": lambda t: t.sigmoid_(), "tanh_": lambda t: t.tanh_(),
    "sqrt_": lambda t: t.sqrt_(), "log_": lambda t: t.log_(), "abs_": lambda t: t.abs_(),
}


@pytest.mark.parametrize("op", sorted(IN_PLACE))
def test_in_place_on_leaf_that_requires_grad_raises(op):
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=f"^{re.escape(LEAF_MESSAGE)}$"):
        IN_PLACE[op](x)
    assert x.tolist() == [1.0, 2.0] and x._version == 0


def test_setitem_on_leaf_says_view_of_a_leaf():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation.$"):
        x[0] = 5.0


@pytest.mark.parametrize("op", sorted(IN_PLACE))
def test_in_place_on_leaf_is_allowed_under_no_grad(op):
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    with gradviz.no_grad():
        out = IN_PLACE[op](x)
    assert out is x and x.is_leaf and x.requires_grad and x._version >= 1


def test_in_place_errors_on_dtype_and_shape_like_torch():
    with pytest.raises(RuntimeError, match="^result type Float can't be cast to the desired output type Long$"):
        gradviz.tensor([1, 2]).add_(1.5)
    with pytest.raises(RuntimeError, match="^result type Long can't be cast to the desired output type Bool$"):
        gradviz.tensor([True]).add_(2)
    with pytest.raises(RuntimeError, match=re.escape("output with shape [2] doesn't match the broadcast shape "
                                                     "[2, 2]")):
        gradviz.tensor([1.0, 2.0]).mul_(gradviz.ones(2, 2))
    t = gradviz.tensor([1.0], dtype=gradviz.float32)
    t.add_(gradviz.tensor([1.5], dtype=gradviz.float64))
    assert t.dtype is gradviz.float32 and t.tolist() == [2.5]
    t = gradviz.tensor([1, 2])
    t[0] = 2.7
    assert t.tolist() == [2, 2]


def test_in_place_returns_self_and_bumps_the_version():
    t = gradviz.tensor([1.0])
    ops = [lambda: t.add_(1), lambda: t.__setitem__(0, 1.0), lambda: t.zero_(), lambda: t.copy_(gradviz.ones(1)),
           lambda: t.fill_(2), lambda: t.uniform_(), lambda: t.normal_(), lambda: t.mul_(2)]
    for i, op in enumerate(ops, 1):
        op()
        assert t._version == i
    u = t
    u += 1
    assert u is t and t._version == len(ops) + 1
    t * 2
    t.sum()
    assert t._version == len(ops) + 1


@needs_torch
@pytest.mark.torch
def test_in_place_on_non_leaves_matches_torch():
    # each case: values and gradients after an in-place op on a non-leaf
    cases = {
        "pow_": lambda m, x, w: (x * 1).pow_(2),
        "pow_then_add_": lambda m, x, w: (x * 1).pow_(2).add_(1),
        "mul_leaf": lambda m, x, w: (x * 1).mul_(w),
        "div_leaf": lambda m, x, w: (x * 1).div_(w),
        "exp_": lambda m, x, w: (x * 1).exp_(),
        "relu_": lambda m, x, w: (x - 1.5).relu_(),
        "clamp_": lambda m, x, w: (x * 1).clamp_(0, 1.5),
        "neg_": lambda m, x, w: (x * 1).neg_(),
        "setitem": lambda m, x, w: _setitem(x * 1, 0, 7.0),
        "setitem_grad": lambda m, x, w: _setitem(x * 1, 1, w[0] * 3),
        "copy_": lambda m, x, w: (x * 1).copy_(m.tensor([5.0, 6.0])),
        "copy_grad": lambda m, x, w: (x * 1).copy_(w * 2),
        "fill_": lambda m, x, w: (x * 1).fill_(3),
        "zero_": lambda m, x, w: (x * 1).zero_(),
        "sigmoid_": lambda m, x, w: (x * 1).sigmoid_(),
        "mul_then_tanh_": lambda m, x, w: (x * 1).mul_(w).tanh_(),
        "into_constant": lambda m, x, w: m.zeros(2).add_(w),
    }

    def run(m):
        out = {}
        for name, f in cases.items():
            x = m.tensor([1.0, 2.0], requires_grad=True)
            w = m.tensor([3.0, 4.0], requires_grad=True)
            y = f(m, x, w)
            (y * m.tensor([1.0, 10.0])).sum().backward()
            out[name] = (_rounded(y), y.grad_fn.name().split("::")[-1], _rounded(x.grad), _rounded(w.grad))
        return out
    assert run(gradviz) == run(real_torch)


def _rounded(t):
    """Values to 5 significant digits (exp and tanh differ in the last bits of a float32)."""
    return None if t is None else [float(f"{v:.5g}") for v in t.tolist()]


def _setitem(t, key, value):
    t[key] = value
    return t


def test_in_place_on_non_leaf_rebases_history():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    first = y.grad_fn
    y.add_(1)
    y.mul_(3)
    assert y.grad_fn.name() == "MulBackward0" and y.grad_fn is not first
    assert y.grad_fn.next_functions[0][0].name() == "AddBackward0"
    assert y.grad_fn.next_functions[0][0].next_functions[0][0] is first
    assert y._version == 2 and y.tolist() == [9.0, 15.0]
    y.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_in_place_pow_keeps_the_value_its_vjp_needs():
    # d/dx (x²) at the old x, not at the new value written in place
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 1
    y.pow_(2)
    y.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_retain_grad_follows_an_in_place_op():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    y.sum().backward()
    assert y.retains_grad and y.grad.tolist() == [1.0, 1.0] and x.grad.tolist() == [6.0, 6.0]


def test_in_place_into_a_plain_tensor_from_one_that_requires_grad():
    w = gradviz.tensor([1.0, 2.0], requires_grad=True)
    a = gradviz.zeros(2)
    a.add_(w)
    assert not a.is_leaf and a.grad_fn.name() == "AddBackward0"
    a.sum().backward()
    assert w.grad.tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        gradviz.zeros(2, dtype=gradviz.int64).add_(w)


def test_in_place_through_a_view_of_a_leaf_raises_torchs_error():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    for write in (lambda: x[0:1].mul_(2), lambda: x.view(2).add_(1), lambda: x.view(2, 1).T.zero_()):
        with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used in an "
                                               "in-place operation.$"):
            write()
    assert x.tolist() == [1.0, 2.0]


def test_in_place_through_a_view_of_a_non_leaf_rebases_the_base():
    # PyTorch writes into the base and rebases its history (CopySlices); tests/tensor/test_views.py has the rest
    y = gradviz.tensor([1.0, 2.0], requires_grad=True) * 1
    y[0:1].mul_(2)
    assert y.tolist() == [2.0, 2.0] and y.grad_fn.name() == "torch::autograd::CopySlices"
    y[0] = 5.0                                        # indexing assignment is recorded the same way
    assert y.grad_fn.name() == "torch::autograd::CopySlices" and y.tolist() == [5.0, 2.0]
    plain = gradviz.zeros(3)
    plain[0:2].add_(1)                                # without autograd, views write through as in PyTorch
    assert plain.tolist() == [1.0, 1.0, 0.0]


# -- creation ------------------------------------------------------------------------------------------
def test_tensor_construction_errors_and_inference_like_torch():
    with pytest.raises(ValueError, match=re.escape("expected sequence of length 2 at dim 1 (got 3)")):
        gradviz.tensor([[1, 2], [3, 4, 5]])
    with pytest.raises(ValueError, match=re.escape("expected sequence of length 2 at dim 1 (got 1)")):
        gradviz.tensor([[[1], [2]], [[3]]])
    with pytest.raises(RuntimeError, match="Could not infer dtype of NoneType"):
        gradviz.tensor(None)
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        gradviz.tensor([2 ** 63])
    assert gradviz.tensor(np.float64(1.5)).dtype is gradviz.float64   # NumPy scalars keep their dtype
    assert gradviz.tensor(np.int32(3)).dtype is gradviz.int32
    assert gradviz.tensor([1, 2], dtype=float).dtype is gradviz.float64   # Python float is double, as in torch
    assert gradviz.tensor([1.5, 2], dtype=int).tolist() == [1, 2]


@needs_torch
def test_numpy_values_in_a_list_count_with_their_dtypes_as_in_torch():
    """torch.tensor([np.mean(a), 2]) is float64 in torch: a NumPy scalar or array inside a list counts with
    its own dtype, promoted with the Python numbers beside it."""
    cases = ["[np.float64(1.5), 2]", "[2, np.float64(1.5)]", "[np.float32(1.5), 2.5]", "[np.float16(1.5)]",
             "[np.int32(1), 2]", "[np.int32(1), 2.5]", "[np.int8(1), np.int16(2)]", "[np.uint8(3), 4]",
             "[[np.float64(1)], [2.0]]", "[np.float64(1.5), np.float32(2)]", "[1, 2.0, np.float64(3)]",
             "[np.float64(1.0), True]", "[np.array([1.5, 2.0])]", "[np.array([1, 2], dtype=np.int32), [3, 4]]"]
    for case in cases:
        ours, theirs = gradviz.tensor(eval(case)), real_torch.tensor(eval(case))
        assert str(ours.dtype) == str(theirs.dtype) and ours.tolist() == theirs.tolist(), case
    assert gradviz.tensor([np.float64(1.5)], dtype=gradviz.float32).dtype is gradviz.float32
    assert gradviz.as_tensor([np.float64(1.5)]).dtype is gradviz.float64
    assert gradviz.Tensor([np.float64(1.5)]).dtype is gradviz.float32


def test_size_behaves_like_torch_size():
    s = gradviz.zeros(2, 3, 4).shape
    assert repr(s[1:]) == "torch.Size([3, 4])" and s[-1] == 4
    assert repr(s + (5,)) == "torch.Size([2, 3, 4, 5])" and repr((1,) + s) == "torch.Size([1, 2, 3, 4])"
    assert s == (2, 3, 4) and s.numel() == 24


def test_creation_arguments_like_torch():
    assert gradviz.ones(size=(2,)).shape == (2,) and gradviz.zeros(gradviz.Size([2, 3])).shape == (2, 3)
    assert gradviz.randn(size=(3, 1)).shape == (3, 1)
    r = gradviz.randint(5, (3,))
    assert r.shape == (3,) and r.dtype is gradviz.int64 and 0 <= r.min().item() and r.max().item() < 5
    assert gradviz.randint(3, 10, (2, 2), dtype=gradviz.int32).dtype is gradviz.int32
    with pytest.raises(RuntimeError, match="^step must be nonzero$"):
        gradviz.arange(0, 1, 0.0)
    with pytest.raises(RuntimeError, match="^upper bound and lower bound inconsistent with step sign$"):
        gradviz.arange(5, 0, 1)
    with pytest.raises(RuntimeError, match=re.escape("Trying to create tensor with negative dimension -1: [-1]")):
        gradviz.ones(-1)
    assert repr(gradviz.arange(0, 0)) == "tensor([], dtype=torch.int64)"
    assert gradviz.arange(0, 5.5).dtype is gradviz.float32 and gradviz.arange(5).dtype is gradviz.int64


@needs_torch
@pytest.mark.torch
def test_creation_matches_torch():
    def made(m):
        m.manual_seed(0)
        return [repr(t) for t in (
            m.arange(0, 1, 0.1), m.arange(-1, 1, 0.3), m.arange(0, 1, 0.1, dtype=m.float64), m.arange(0, 5.5),
            m.arange(0, 5, dtype=m.int32), m.linspace(0, 10, 5, dtype=m.int64), m.linspace(0, 1, 0),
            m.full((2,), 1.0, dtype=m.int64), m.zeros_like(m.tensor([1, 2])), m.full_like(m.tensor([1, 2]), 2.7),
            m.ones_like(m.tensor([1.0], dtype=m.float64)), m.eye(3, dtype=m.int64), m.tensor([True, 2]),
            m.tensor(np.float64(1.5)), m.tensor(np.array([1, 2], dtype=np.int32)), m.tensor([[True], [False]]),
            m.LongTensor([1, 2]), m.tensor([1.5]).half(), m.tensor([1.5]).to("cpu", m.float64),
            m.tensor([1.5]).to(m.tensor([1], dtype=m.int32)), m.tensor([1, -2], dtype=m.int8))]
    assert made(gradviz) == made(real_torch)


# -- print options ----------------------------------------------------------------------------------------
PRINT_SETTINGS = [dict(precision=2), dict(precision=8), dict(threshold=5), dict(edgeitems=1), dict(edgeitems=0),
                  dict(linewidth=40), dict(linewidth=200), dict(sci_mode=True), dict(sci_mode=False),
                  dict(profile="short"), dict(profile="full"), dict(precision=3, sci_mode=False, linewidth=60),
                  dict(threshold=10, edgeitems=2)]
PRINT_ARRAYS = [np.arange(5, dtype=f32) * 1.123456, _normal(40, 40, scale=100), _normal(2000),
                np.array([1e-6, 1.0], f32), np.array([1.0, 2.0], f32), np.arange(30), _normal(3, 30),
                np.array(3.14159, f32), _normal(8, 9, 10), np.array([np.nan, np.inf], f32), np.zeros((0, 2), f32)]


@pytest.fixture
def default_print_options():
    yield
    gradviz.set_printoptions(profile="default")
    if real_torch is not None:
        real_torch.set_printoptions(profile="default")


def test_set_printoptions(default_print_options):
    gradviz.set_printoptions(precision=2)
    assert repr(gradviz.tensor([1.23456, 2.0])) == "tensor([1.23, 2.00])"
    gradviz.set_printoptions(sci_mode=True)           # precision stays 2
    assert repr(gradviz.tensor([1.5, 2.0])) == "tensor([1.50e+00, 2.00e+00])"
    gradviz.set_printoptions(threshold=3, edgeitems=1)
    assert repr(gradviz.arange(10)) == "tensor([0,  ..., 9])"
    gradviz.set_printoptions(profile="default")
    assert repr(gradviz.tensor([1.23456, 2.0])) == "tensor([1.2346, 2.0000])"
    from gradviz._tensor_str import get_printoptions, printoptions
    with printoptions(precision=1):
        assert repr(gradviz.tensor([1.25])) == "tensor([1.2])"
    assert get_printoptions()["precision"] == 4


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("settings", PRINT_SETTINGS, ids=[str(s) for s in PRINT_SETTINGS])
def test_print_options_match_torch(settings, default_print_options):
    for m in (gradviz, real_torch):
        m.set_printoptions(profile="default")
        m.set_printoptions(**settings)
    for array in PRINT_ARRAYS:
        for requires_grad in ((False, True) if array.dtype.kind == "f" else (False,)):
            assert repr(gradviz.tensor(array, requires_grad=requires_grad)) == \
                repr(real_torch.tensor(array, requires_grad=requires_grad))


FLOAT_OF_A_SCALAR = """
import warnings, {lib} as torch
x = torch.ones(2, requires_grad=True)
conversions = {{"float": lambda: float(x.sum()), "item": lambda: x.sum().item(), "int": lambda: int(x.sum()),
               "format": lambda: f"{{x.sum():.2f}}", "detached": lambda: float(x.sum().detach())}}
for name, convert in conversions.items():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        convert()
    print(name, [str(w.message).split(" (Triggered")[0] for w in caught])
"""


@pytest.mark.parametrize("lib", ["gradviz", pytest.param("torch", marks=needs_torch)])
def test_float_of_a_tensor_that_requires_grad_warns_as_torch_does(lib):
    # in a fresh process: torch warns once per process, so an earlier float() (a program of the
    # fidelity suite prints a loss with one) would hide its warning
    out = subprocess.run([sys.executable, "-c", FLOAT_OF_A_SCALAR.format(lib=lib)], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(Path(gradviz.__file__).parents[1])}).stdout
    assert out.splitlines() == [
        "float ['Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\\n"
        "Consider using tensor.detach() first.']", "item []", "int []", "format []", "detached []"]


FLOAT_OF_A_VECTOR = """
import warnings, {lib} as torch
x = torch.ones(3, requires_grad=True)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
        float(x)
    except ValueError as error:
        print(repr(str(error)))
print([str(w.message).split(" (Triggered")[0] for w in caught])
"""


@pytest.mark.parametrize("lib", ["gradviz", pytest.param("torch", marks=needs_torch)])
def test_float_of_a_vector_that_requires_grad_warns_then_refuses_as_torch_does(lib):
    # in a fresh process: torch warns once per process, so an earlier float() would hide its warning
    out = subprocess.run([sys.executable, "-c", FLOAT_OF_A_VECTOR.format(lib=lib)], capture_output=True, text=True,
                         check=True, env={**os.environ, "PYTHONPATH": str(Path(gradviz.__file__).parents[1])}).stdout
    assert out.splitlines() == [
        "'only one element tensors can be converted to Python scalars'",
        "['Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\\n"
        "Consider using tensor.detach() first.']"]


@pytest.mark.parametrize("lib", [gradviz, pytest.param(real_torch, marks=needs_torch)], ids=["gradviz", "torch"])
def test_numpy_ufuncs_on_a_tensor_give_a_tensor_as_torch_does(lib):
    x = lib.tensor([[1.0, -2.0], [3.0, 0.5]])
    ends = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # torch's own __array_wrap__ signature is the old one
        for name, f in {"exp": lambda: np.exp(x), "maximum": lambda: np.maximum(x, 0), "greater": lambda: np.greater(x, 0),
                        "matmul": lambda: x @ np.eye(2)}.items():
            r = f()
            ends[name] = (type(r).__name__, str(r.dtype).replace("torch.", ""), np.asarray(r).tolist())
    assert ends == {"exp": ("Tensor", "float32", np.exp(np.array([[1.0, -2.0], [3.0, 0.5]], np.float32)).tolist()),
                    "maximum": ("Tensor", "float32", [[1.0, 0.0], [3.0, 0.5]]),
                    "greater": ("Tensor", "uint8", [[1, 0], [1, 1]]),
                    "matmul": ("Tensor", "float64", [[1.0, -2.0], [3.0, 0.5]])}
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad"):
        np.exp(lib.ones(2, requires_grad=True))


def test_a_dtype_pickles_by_name_and_loads_weights_only():
    import io
    import pickle
    for d in (gradviz.bool, gradviz.uint8, gradviz.int64, gradviz.float16, gradviz.float32, gradviz.float64,
              gradviz.bfloat16):
        assert pickle.loads(pickle.dumps(d)) is d
    buffer = io.BytesIO()
    gradviz.save({"dtype": gradviz.float64, "t": gradviz.ones(2)}, buffer)
    buffer.seek(0)
    assert gradviz.load(buffer)["dtype"] is gradviz.float64   # torch's weights-only load takes a dtype too
