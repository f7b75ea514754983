"""The ops gradviz serves from torch's own op table (tests/ops/test_opinfo.py runs torch's samples
through them), where no gradient is involved: errors in torch's words, predicates and logic, the
indices of running extremes and triangle indices. Their rows of gradients live in
tests/ops/cases.py (group "function")."""
import numpy as np
import pytest

import gradviz


def test_torch_error_words():
    x = gradviz.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="polygamma\\(n, x\\) does not support negative n."):
        gradviz.polygamma(-1, x)
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        gradviz.mvlgamma(x, 0)
    with pytest.raises(RuntimeError, match="\"frac_cpu\" not implemented for 'Long'"):
        gradviz.frac(gradviz.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="\"logaddexp_cpu\" not implemented for 'Long'"):
        gradviz.logaddexp(gradviz.tensor([1, 2]), gradviz.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="heaviside is not yet implemented for tensors with different dtypes."):
        gradviz.heaviside(x, gradviz.tensor(1))
    with pytest.raises(NotImplementedError, match="\"bitwise_not_cpu\" not implemented for 'Float'"):
        gradviz.bitwise_not(x)
    h = gradviz.heaviside(gradviz.tensor([0.0, 2.0], requires_grad=True), gradviz.tensor([0.5, 0.5]))
    assert h.tolist() == [0.5, 1.0]
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        h.sum().backward()


def test_predicates_and_logic_give_bools_as_torch():
    x = gradviz.tensor([-0.0, 0.0, float("inf"), -float("inf"), 1.0])
    assert gradviz.signbit(x).tolist() == [True, False, False, True, False]
    assert gradviz.isposinf(x).tolist() == [False, False, True, False, False]
    assert gradviz.isneginf(x).tolist() == [False, False, False, True, False]
    assert gradviz.isreal(x).tolist() == [True] * 5
    a, b = gradviz.tensor([0, 1, 2, 0]), gradviz.tensor([0.0, 0.0, 3.0, 1.0])
    assert gradviz.logical_and(a, b).tolist() == [False, False, True, False]
    assert gradviz.logical_or(a, b).tolist() == [False, True, True, True]
    assert gradviz.logical_xor(a, b).tolist() == [False, True, False, True]
    assert gradviz.bitwise_not(gradviz.tensor([0, 5])).tolist() == [-1, -6]
    assert gradviz.bitwise_xor(gradviz.tensor([6]), gradviz.tensor([3])).tolist() == [5]


def test_shape_errors_in_torch_words():
    x = gradviz.zeros(4, 6)
    with pytest.raises(RuntimeError, match="torch.hsplit attempted to split along dimension 1, but the size of the "
                                           "dimension 6 is not divisible by the split_size 4!"):
        gradviz.hsplit(x, 4)
    with pytest.raises(RuntimeError, match="torch.dsplit requires a tensor with at least 3 dimension, but got a "
                                           "tensor with 2 dimensions!"):
        gradviz.dsplit(x, 2)
    with pytest.raises(RuntimeError, match="expected rotation dims to be different, but got dim0 = 1 and dim1 = -1"):
        gradviz.rot90(x, 1, (1, -1))
    with pytest.raises(RuntimeError, match="Input must be >= 2-d."):
        gradviz.fliplr(gradviz.zeros(3))
    with pytest.raises(RuntimeError, match=r"unflatten: Provided sizes \[4, 2\] don't multiply up to the size of "
                                           r"dim 1 \(6\) in the input tensor"):
        gradviz.unflatten(x, 1, (4, 2))
    with pytest.raises(IndexError, match="out of range: tried to access index 24 on a tensor of 24 elements."):
        gradviz.take(x, gradviz.tensor([24]))
    with pytest.raises(RuntimeError, match=r"expected src to have a size equal to the slice of self. src size = "
                                           r"\[6\], slice size = \[4\]"):
        gradviz.select_scatter(x, gradviz.zeros(6), 1, 0)
    with pytest.raises(RuntimeError, match="repeats must have the same size as input along dim, but got "
                                           r"repeats.size\(0\) = 2 and input.size\(0\) = 4"):
        gradviz.repeat_interleave(x, gradviz.tensor([1, 2]), dim=0)


@pytest.mark.torch
def test_indices_of_running_extremes_and_kth_values_follow_torch():
    real = pytest.importorskip("torch")
    a = np.array([[1.0, 3.0, 3.0, 2.0, np.nan, 5.0], [2.0, 2.0, 1.0, 1.0, 0.0, 0.0]])
    for name, call in [("cummax", lambda t, x: t.cummax(x, 1)), ("cummin", lambda t, x: t.cummin(x, 1)),
                       ("kthvalue", lambda t, x: t.kthvalue(x[1:], 2, 1, True))]:
        ours, theirs = call(gradviz, gradviz.tensor(a)), call(real, real.tensor(a))
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy(), err_msg=name)
        if name != "kthvalue":   # torch does not promise which of tied k-th values it names
            np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy(), err_msg=name)


def test_linalg_errors_in_torch_words():
    singular = gradviz.tensor([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(RuntimeError, match="linalg.inv: The diagonal element 2 is zero, the inversion could not be "
                                           "completed because the input matrix is singular."):
        gradviz.linalg.inv(singular)
    with pytest.raises(RuntimeError, match=r"linalg.cholesky: The factorization could not be completed because the "
                                           r"input is not positive-definite \(the leading minor of order 2 is not "
                                           r"positive-definite\)."):
        gradviz.linalg.cholesky(singular)
    with pytest.raises(RuntimeError, match="linalg.det: A must be batches of square matrices, but they are 2 by 3 "
                                           "matrices"):
        gradviz.linalg.det(gradviz.zeros(2, 3))
    with pytest.raises(RuntimeError, match="multi_dot\\(\\): expected at least 2 tensors but got 1"):
        gradviz.linalg.multi_dot([singular])
    with pytest.raises(RuntimeError, match="N must be greater than 1."):
        gradviz.linalg.vander(gradviz.ones(3), N=1)
    with pytest.raises(NotImplementedError, match="create_graph"):
        a = gradviz.tensor([[2.0, 1.0], [0.5, 3.0]], requires_grad=True)
        gradviz.autograd.grad(gradviz.linalg.svdvals(a).sum(), a, create_graph=True)


@pytest.mark.torch
@pytest.mark.parametrize("row, col, offset", [(3, 3, 0), (4, 3, 1), (3, 5, -1), (0, 3, 0), (3, 3, -5), (3, 3, 5)])
def test_triangle_indices_match_torch(row, col, offset):
    real = pytest.importorskip("torch")
    for name in ("tril_indices", "triu_indices"):
        ours, theirs = getattr(gradviz, name)(row, col, offset), getattr(real, name)(row, col, offset)
        assert ours.dtype == gradviz.int64
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
