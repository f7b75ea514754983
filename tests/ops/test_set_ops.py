"""What sorting finds: unique / unique_consecutive, argwhere, searchsorted / bucketize, quantile /
nanquantile, diff, cartesian_prod, combinations, and torch.testing.assert_close.

SNIPPETS run on gradviz and on PyTorch and must end alike (values, dtypes, shapes, or the error's type
and message). The differentiable ones have their rows in tests/ops/cases.py (group "sorting")."""
import pytest
from tests.support.bad_inputs import outcome

import gradviz


# -- values, dtypes and errors, as PyTorch ends them ------------------------------------------------
SNIPPETS = [
    "torch.unique(torch.tensor([3, 1, 2, 3, 1]), return_inverse=True, return_counts=True)",
    "torch.unique(torch.tensor([[3., 1.], [2., 3.]]), sorted=False, return_inverse=True)",
    "torch.unique(torch.tensor([float('nan'), 1., float('nan'), -0., 0.]), return_inverse=True, return_counts=True)",
    "torch.unique(torch.tensor([True, False, True]), return_counts=True)",
    "torch.unique(torch.tensor(4), return_inverse=True)",
    "torch.unique(torch.tensor([[1, 2], [3, 4], [1, 2]]), dim=0, return_inverse=True, return_counts=True)",
    "torch.unique(torch.tensor([[1, 2, 1], [3, 4, 3]]), dim=-1, return_inverse=True)",
    "torch.unique(torch.tensor([[float('nan'), 1.], [float('nan'), 1.], [0., 1.]]), dim=0, return_counts=True)",
    "torch.unique(torch.zeros(0, 3), dim=0, return_inverse=True, return_counts=True)",
    "torch.unique(torch.zeros(3, 0), dim=0)",
    "torch.unique(torch.zeros(0, 0), dim=1)",
    "torch.unique(torch.tensor(4), dim=0)",
    "torch.unique(torch.tensor([1, 2]), dim=1)",
    "torch.unique([3, 1, 3])",
    "torch.tensor([3, 1, 3]).unique(True, True, True)",
    "torch.unique_consecutive(torch.tensor([1, 1, 2, 2, 3, 1, 1, 2]), return_inverse=True, return_counts=True)",
    "torch.unique_consecutive(torch.tensor([[1, 1], [2, 2], [2, 2], [1, 1]]), dim=0, return_counts=True)",
    "torch.tensor([[1, 1, 2], [1, 1, 3]]).unique_consecutive(return_inverse=True, dim=1)",
    "x = torch.tensor([3., 2., 2.], requires_grad=True); y = torch.unique(x); "
    "(y.requires_grad, type(y.grad_fn).__name__)",
    "torch.unique(torch.tensor([3., 2., 2.], requires_grad=True), return_inverse=True)[1].requires_grad",
    "torch.unique(torch.tensor([3., 2., 2.], requires_grad=True)).sum().backward()",
    "torch.unique(torch.tensor([[3., 2., 2.]], requires_grad=True), dim=1).sum().backward()",
    "torch.unique_consecutive(torch.tensor([3., 2., 2.], requires_grad=True)).sum().backward()",
    "torch.argwhere(torch.tensor([[1, 0], [0, 3]]))",
    "torch.argwhere(torch.tensor([0.5, float('nan'), 0.], requires_grad=True))",
    "torch.argwhere(torch.tensor(5.))",
    "torch.tensor([[0., 2.]]).argwhere()",
    "torch.searchsorted(torch.tensor([1., 3., 5., 7.]), torch.tensor([[3., 6.], [9., 0.]]))",
    "torch.searchsorted(torch.tensor([1., 3., 5., 7.]), torch.tensor([3., 6., 9., 0.]), right=True)",
    "torch.searchsorted(torch.tensor([1., 3., 5., 7.]), torch.tensor([3., 7.]), side='right', out_int32=True)",
    "torch.searchsorted(torch.tensor([[1., 3., 5., 7.], [2., 4., 6., 8.]]), torch.tensor([[3., 6.], [3., 6.]]))",
    "torch.searchsorted(torch.tensor([5., 1., 7., 3.]), torch.tensor([3., 6.]), sorter=torch.tensor([1, 3, 0, 2]))",
    "torch.searchsorted(torch.tensor([1, 3, 5, 7]), 5.5)",
    "torch.searchsorted(torch.tensor([1., float('nan')]), torch.tensor([float('nan'), 2., 0.]))",
    "torch.searchsorted(torch.tensor([]), torch.tensor([1.]))",
    "torch.searchsorted(torch.tensor([1., 3.]), torch.tensor([3.]), side='left', right=True)",
    "torch.searchsorted(torch.tensor([1., 3.]), torch.tensor([3.]), side='middle')",
    "torch.searchsorted(torch.tensor([[1., 3.], [5., 7.]]), torch.tensor([3., 6.]))",
    "torch.searchsorted(torch.tensor([[1., 3.], [5., 7.]]), 4.)",
    "torch.searchsorted(torch.tensor(1.), torch.tensor([3., 6.]))",
    "torch.searchsorted(torch.tensor([5., 1.]), torch.tensor([3.]), sorter=torch.tensor([1, 0, 2]))",
    "torch.searchsorted(torch.tensor([5., 1.]), torch.tensor([3.]), sorter=torch.tensor([1, 2]))",
    "torch.searchsorted(torch.tensor([5., 1.]), torch.tensor([3.]), sorter=torch.tensor([1, 0], dtype=torch.int32))",
    "torch.searchsorted(torch.tensor([True, False]), torch.tensor([True]))",
    "torch.bucketize(torch.tensor([[3., 6.], [9., 0.]]), torch.tensor([1., 3., 5., 7.]))",
    "torch.bucketize(torch.tensor([3, 6]), torch.tensor([1., 3., 5., 7.]), right=True, out_int32=True)",
    "torch.bucketize(5, torch.tensor([1., 3., 5., 7.]))",
    "torch.bucketize(torch.tensor([3., 6.]), torch.tensor([[1., 3.], [5., 7.]]))",
    "torch.bucketize(torch.tensor([3., 6.]), torch.tensor([]))",
    "torch.quantile(torch.tensor([3., 1., 2., 2., 5.]), torch.tensor([0.2, 0.5, 0.9]))",
    "torch.quantile(torch.arange(12.).reshape(3, 4), torch.tensor([0.25, 0.5]), dim=1, keepdim=True)",
    "torch.quantile(torch.arange(12., dtype=torch.float64).reshape(3, 4), 0.4, dim=0)",
    "torch.quantile(torch.tensor(2.), torch.tensor([0.3, 0.5]), keepdim=True)",
    "torch.quantile(torch.tensor([1., float('nan'), 3.]), 0.5)",
    "torch.nanquantile(torch.tensor([[1., float('nan'), 3.], [float('nan')] * 3]), torch.tensor([0.3, 1.]), dim=1)",
    "torch.quantile(torch.tensor([0., 1., 2., 3., 4.]), torch.tensor([0.125, 0.375, 0.625]), interpolation='nearest')",
    "torch.quantile(torch.tensor([0., 1., 2., 3.]), torch.tensor([0.1, 0.5]), interpolation='midpoint')",
    "torch.quantile(torch.tensor([1., 2., 3.]), torch.tensor([]))",
    "torch.quantile(torch.tensor([1, 2, 3]), 0.5)",
    "torch.quantile(torch.tensor([1., 2., 3.]), 1.5)",
    "torch.nanquantile(torch.tensor([1., 2., 3.]), float('nan'))",
    "torch.quantile(torch.tensor([1., 2., 3.]), torch.tensor([0.5, 1.5]))",
    "torch.quantile(torch.tensor([1., 2., 3.]), torch.tensor([[0.5]]))",
    "torch.quantile(torch.tensor([1., 2., 3.], dtype=torch.float64), torch.tensor([0.5]))",
    "torch.quantile(torch.tensor([]), 0.5)",
    "torch.quantile(torch.tensor([1., 2., 3.]), 0.5, interpolation='foo')",
    "torch.quantile(torch.tensor([1., 2., 3.]), 0.5, dim=1)",
    "torch.quantile(torch.tensor([1., 2., 3.]), [0.5])",
    "torch.quantile(torch.tensor([1., 2., 3.]), 0.5, axis=0)",
    "torch.diff(torch.tensor([True, False, False]))",
    "torch.diff(torch.tensor([1, 4, 2]), n=2)",
    "torch.diff(torch.tensor(1.))",
    "torch.diff(torch.tensor([1., 4., 2.]), prepend=torch.tensor(0.))",
    "torch.diff(torch.tensor([[1., 4., 2.]]), prepend=torch.tensor([[0.], [1.]]))",
    "x = torch.tensor([1., 2.], requires_grad=True); y = torch.diff(x, n=0); (y is x, type(y.grad_fn).__name__)",
    "torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3., 4.]))",
    "torch.cartesian_prod()",
    "torch.combinations(torch.tensor([1, 2, 3]), 3, True)",
    "torch.combinations(torch.tensor([1., 2.]), 0)",
    "torch.combinations(torch.tensor([1., 2.]), 4)",
    "torch.combinations(torch.tensor([1, 2, 3]), -1)",
    "torch.combinations(torch.tensor([[1, 2, 3]]))",
]


@pytest.mark.torch
@pytest.mark.parametrize("snippet", SNIPPETS)
def test_ends_as_pytorch(snippet):
    real = pytest.importorskip("torch")
    assert outcome(snippet, gradviz) == outcome(snippet, real)


def test_unique_values_inverse_and_counts():
    x = gradviz.tensor([[3, 1], [2, 3]])
    values, inverse, counts = gradviz.unique(x, return_inverse=True, return_counts=True)
    assert values.tolist() == [1, 2, 3] and inverse.tolist() == [[2, 0], [1, 2]] and counts.tolist() == [1, 1, 2]
    assert inverse.dtype == gradviz.int64 and counts.dtype == gradviz.int64
    rows, inverse = x.unique(dim=1, return_inverse=True)
    assert rows.tolist() == [[1, 3], [3, 2]] and inverse.tolist() == [1, 0]
    y = gradviz.tensor([1.0, 1.0, 2.0], requires_grad=True)
    out = gradviz.unique_consecutive(y)
    assert out.tolist() == [1.0, 2.0] and type(out.grad_fn).__name__ == "UniqueConsecutiveBackward0"
    with pytest.raises(NotImplementedError, match="the derivative for 'unique_consecutive' is not implemented."):
        out.sum().backward()


def test_searches_and_quantiles():
    b = gradviz.tensor([1.0, 3.0, 5.0, 7.0])
    assert gradviz.searchsorted(b, gradviz.tensor([3.0, 6.0])).tolist() == [1, 3]
    assert gradviz.bucketize(gradviz.tensor([3.0, 6.0]), b, right=True).tolist() == [2, 3]
    assert gradviz.argwhere(gradviz.tensor([[0, 2], [3, 0]])).tolist() == [[0, 1], [1, 0]]
    x = gradviz.tensor([3.0, 1.0, 2.0, 2.0, 5.0], requires_grad=True)   # ties: the later 2 is the median's rank
    q = gradviz.quantile(x, 0.5)
    assert q.item() == 2.0 and q.grad_fn.name() == "SqueezeBackward4"
    assert q.grad_fn.next_functions[0][0].name() == "LerpBackward1"
    q.backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 1.0, 0.0]


def test_assert_close_messages():
    close = gradviz.testing.assert_close
    t = gradviz.tensor
    close(t([1.0, 2.0, 3.0]), t([1.0, 2.0, 3.00001]))
    cases = [
        ((t([1.0, 2.0, 3.0]), t([1.0, 2.5, 3.0])), AssertionError,
         "Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\nGreatest absolute difference: 0.5 at "
         "index (1,) (up to 1e-05 allowed)\nGreatest relative difference: 0.20000000298023224 at index (1,) (up to "
         "1.3e-06 allowed)"),
        ((t([1.0, 2.0, 3.0]), t([1.0, 2.0])), AssertionError,
         "The values for attribute 'shape' do not match: torch.Size([3]) != torch.Size([2])."),
        ((t([1.0]), t([1.0], dtype=gradviz.float64)), AssertionError,
         "The values for attribute 'dtype' do not match: torch.float32 != torch.float64."),
        ((1.0, 1.1), AssertionError,
         "Scalars are not close!\n\nExpected 1.1 but got 1.0.\nAbsolute difference: 0.10000000000000009 (up to 1e-07 "
         "allowed)\nRelative difference: 0.09090909090909098 (up to 1e-07 allowed)"),
        (([1, 2], [1, 3]), AssertionError,
         "Scalars are not equal!\n\nExpected 3 but got 2.\nAbsolute difference: 1\nRelative difference: "
         "0.3333333333333333\n\nThe failure occurred for item [1]"),
        ((t([1.0, 2.0]), [1.0, 2.0]), TypeError,
         "No comparison pair was able to handle inputs of type <class 'torch.Tensor'> and <class 'list'>."),
    ]
    for args, error, message in cases:
        with pytest.raises(error) as caught:
            close(*args)
        assert str(caught.value) == message


ASSERT_CLOSE = [
    "torch.testing.assert_close(torch.tensor([1., 2., 3.]), torch.tensor([1., 2.5, 3.]))",
    "torch.testing.assert_close(torch.tensor([[1., 2.], [3., 4.]]), torch.tensor([[1., 2.], [3.5, 4.2]]))",
    "torch.testing.assert_close(torch.tensor([1., 2., 3.]), torch.tensor([1., 2., 3.5], dtype=torch.float64), "
    "check_dtype=False)",
    "torch.testing.assert_close(torch.tensor(1.), torch.tensor(1.1))",
    "torch.testing.assert_close(torch.tensor([1, 2, 3]), torch.tensor([1, 3, 5]))",
    "torch.testing.assert_close(torch.tensor([True, False]), torch.tensor([True, True]))",
    "torch.testing.assert_close(torch.tensor([float('nan'), 1.]), torch.tensor([float('nan'), 1.]))",
    "torch.testing.assert_close(torch.tensor([float('nan'), 1.]), torch.tensor([float('nan'), 1.]), equal_nan=True)",
    "torch.testing.assert_close(torch.tensor([float('inf'), 1.]), torch.tensor([float('-inf'), 1.]))",
    "torch.testing.assert_close(torch.tensor([0., 2.]), torch.tensor([1., 0.]))",
    "torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1.1, 2.]), rtol=0, atol=0)",
    "torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1.1, 2.]), rtol=0.2)",
    "torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 3.]), msg=lambda m: 'H ' + m)",
    "torch.testing.assert_close(torch.tensor([1., 2.]), torch.tensor([1., 3.]), msg='custom')",
    "torch.testing.assert_close(torch.tensor([1, 2]), torch.tensor([1., 2.5]), check_dtype=False)",
    "torch.testing.assert_close(torch.ones(2, 3), torch.ones(3, 2))",
    "torch.testing.assert_close(1.0, 1)",
    "torch.testing.assert_close(1.0, 1, check_dtype=False)",
    "torch.testing.assert_close(True, False)",
    "torch.testing.assert_close(None, 1.)",
    "torch.testing.assert_close([torch.tensor(1.), torch.tensor([1., 2.])], "
    "[torch.tensor(1.), torch.tensor([1., 2.1])])",
    "torch.testing.assert_close({'a': 1.0, 'b': torch.tensor([1.])}, {'a': 1.0, 'b': torch.tensor([2.])})",
    "torch.testing.assert_close({'a': 1.0}, {'b': 1.0})",
    "torch.testing.assert_close([1., 2.], [1., 2., 3.])",
    "torch.testing.assert_close(torch.tensor([1., 2.]), 1.)",
    "torch.testing.assert_close(torch.Size([2]), torch.Size([3]))",
    "torch.testing.assert_close(torch.tensor([1., 2.]).numpy(), torch.tensor([1., 2.5]).numpy())",
    "torch.testing.assert_close(torch.nn.Parameter(torch.tensor([1., 2.])), torch.tensor([1., 2.]), "
    "allow_subclasses=False)",
]


@pytest.mark.torch
@pytest.mark.parametrize("snippet", ASSERT_CLOSE)
def test_assert_close_ends_as_pytorch(snippet):
    real = pytest.importorskip("torch")
    assert outcome(snippet, gradviz) == outcome(snippet, real)
