"""Tensor API gaps: out=, range and lists of ints as indices, NumPy's argument names (axis=,
keepdims=, x=), histc / histogram / bincount, and indexing errors in torch's words."""
import warnings

import numpy as np
import pytest
from parity import gradviz_output, needs_torch, torch_output

import gradviz as torch

SNIPPETS = {
    "indexing": """
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(x[range(2)], x[:, range(0, 3, 2)], x[[1, 0]], x[[1, 0], [2, 2]], x[range(1, 2), 1:])
for key in [5, (0, 7), (0, 0, 0), 1.5, [1, 5], (slice(None), [0, 3])]:
    try:
        x[key]
    except IndexError as e:
        print(e)
for t in [torch.tensor(2.5).data, torch.tensor(2.5)]:
    try:
        t[0]
    except IndexError as e:
        print(e)
y = x.clone().requires_grad_()
y[range(2), [0, 2]].sum().backward()
print(y.grad)
""",
    "numpy_names": """
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
print(x.cumsum(axis=0), torch.cumsum(x, axis=1), torch.sum(x, axis=1, keepdims=True), x.argmax(axis=1))
print(torch.mean(x, axis=0), torch.softmax(x, axis=1), torch.cat([x, x], axis=1).shape, x.max(axis=1))
print(torch.exp(input=x), torch.add(x, other=x), x.std(axis=0), x[None].squeeze(axis=0).shape)
print(x.unsqueeze(axis=0).shape, x.prod(axis=0), x.logsumexp(axis=0), (x > 2).all(axis=0))
print(torch.amax(x, axis=1, keepdims=True), torch.flip(x, [1]), x.var(axis=1), torch.argsort(x, axis=0))
""",
    "out": """
x = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
o = torch.empty(2, 3)
r = torch.add(x, 1, out=o)
print(r is o, o, o._version)
print(torch.exp(x, out=torch.empty(0)), torch.sum(x, 1, out=torch.empty(2)), torch.mm(x, x.T, out=torch.empty(2, 2)))
print(torch.matmul(x, x.T, out=torch.empty(2, 2)), torch.cat([x, x], out=torch.empty(4, 3)))
print(torch.exp(x, out=torch.empty(3)))
print(torch.exp(x, out=torch.empty(2, 3, dtype=torch.float64)), torch.mul(x, 2, out=torch.empty(2, 3)))
v, i = torch.empty(0), torch.empty(0, dtype=torch.long)
res = torch.max(x, 1, out=(v, i))
print(res, v, i)
print(torch.where(x > 2, x, torch.zeros(2, 3), out=torch.empty(2, 3)), torch.clamp(x, 2, 5, out=torch.empty(2, 3)))
for call in [lambda: torch.exp(x, out=torch.empty(2, 3, dtype=torch.int64)),
             lambda: torch.exp(x.clone().requires_grad_(), out=torch.empty(2, 3))]:
    try:
        call()
    except RuntimeError as e:
        print(e)
""",
    "counting": """
print(torch.histc(torch.tensor([1., 2, 1, 2.5, 4]), bins=4, min=0, max=3))
print(torch.histc(torch.tensor([1., 2, 1, 2.5, 4]), bins=4), torch.histc(torch.tensor([1., 1., 1.]), bins=4))
print(torch.histc(torch.tensor([0., 1., 2., 3., float('nan')]), bins=3, min=0, max=3))
print(torch.histc(torch.linspace(0, 1, 101, dtype=torch.float64), bins=7))
print(torch.bincount(torch.tensor([4, 3, 6, 3, 4])), torch.bincount(torch.tensor([], dtype=torch.long), minlength=3))
print(torch.bincount(torch.tensor([4, 3, 6, 3, 4]), weights=torch.tensor([0.5, 1, 1, 1, 0.25]), minlength=9))
print(torch.bincount(torch.tensor([1, 1, 2]), weights=torch.tensor([1, 2, 3])))
print(torch.histogram(torch.tensor([1., 2, 1]), bins=4, range=(0., 3.), weight=torch.tensor([1., 2., 4.])))
print(torch.histogram(torch.tensor([1., 2, 1]), bins=4, range=(0., 3.), density=True))
print(torch.histogram(torch.tensor([1., 2, 1]), torch.tensor([0., 1.5, 3.])))
print(torch.histogram(torch.tensor([[1., 2.], [3., 4.]]), bins=3))
print(torch.tensor([1., 2., 2.]).histc(bins=2), torch.tensor([0, 2, 2]).bincount())
for call in [lambda: torch.bincount(torch.tensor([-1, 3])), lambda: torch.histc(torch.tensor([1., 2.]), bins=4, min=3, max=1),
             lambda: torch.histc(torch.tensor([1., 2.]), bins=0), lambda: torch.bincount(torch.tensor([[1]]))]:
    try:
        call()
    except RuntimeError as e:
        print(e)
for call in [lambda: torch.bincount(torch.tensor([1.0])), lambda: torch.histc(torch.tensor([1, 2]), bins=3)]:
    try:
        call()
    except NotImplementedError as e:
        print(e)
""",
    "strides_and_type_as": """
x = torch.arange(24.).reshape(2, 3, 4)
cases = {
 "x": lambda: x, "x.t-ish": lambda: x.transpose(0, 2), "permute": lambda: x.permute(2, 0, 1),
 "slice": lambda: x[1:], "slice step": lambda: x[:, ::2], "select": lambda: x[:, 1], "select last": lambda: x[..., 2],
 "narrow": lambda: x.narrow(2, 1, 2), "unsqueeze0": lambda: x.unsqueeze(0), "unsqueeze1": lambda: x.unsqueeze(1),
 "unsqueeze-1": lambda: x.unsqueeze(-1), "None idx": lambda: x[:, None], "T unsqueeze": lambda: x.transpose(0, 2).unsqueeze(1),
 "expand": lambda: x[:, :1].expand(2, 5, 4), "expand new": lambda: torch.arange(3.).expand(2, 3),
 "expand new1": lambda: torch.arange(3.).expand(1, 3),
 "view": lambda: x.view(6, 4), "view1": lambda: x.view(2, 1, 12), "reshape T": lambda: x.transpose(0, 1).reshape(3, 8),
 "diagonal": lambda: torch.arange(9.).view(3, 3).diagonal(), "diagonal1": lambda: torch.arange(9.).view(3, 3).diagonal(1),
 "flip": lambda: x.flip(0), "squeeze": lambda: x[:, :1].squeeze(1), "squeeze all": lambda: torch.zeros(1, 3, 1).squeeze(),
 "split": lambda: x.split(1, 1)[2], "chunk": lambda: x.chunk(2, 2)[1], "unbind": lambda: x.unbind(1)[1],
 "contig": lambda: x.transpose(0, 1).contiguous(), "clone T": lambda: x.transpose(0, 1).clone(),
 "mT": lambda: x.mT, "0d": lambda: torch.tensor(3.), "x[1,2,3]": lambda: x[1, 2, 3], "empty": lambda: torch.zeros(0, 3),
 "size1": lambda: torch.zeros(3, 1), "ones 1": lambda: torch.ones(1, 4), "sum keep": lambda: x.sum(1, keepdim=True),
 "mm": lambda: x[0] @ x[0].T, "T of 2d": lambda: x[0].t(), "int": lambda: torch.arange(6).view(2, 3)[:, 1:],
 "view of slice": lambda: x[1].view(12)[3:], "movedim": lambda: x.movedim(0, -1), "unflatten": lambda: x.unflatten(2, (2, 2)),
 "flatten": lambda: x.flatten(), "index": lambda: x[[0, 1]], "bool idx": lambda: x[x > 3],
 "as T view": lambda: x.T,
}
for name, f in cases.items():
    try:
        t = f()
        print(name, tuple(t.shape), t.stride(), t.storage_offset(), t.is_contiguous(), t.element_size())
    except Exception as e:
        print(name, "!!", type(e).__name__, e)
print(x.stride(0), x.stride(-1), x.transpose(0, 1).stride(1))
for a in (5, -4, "a", 1.0):
    try:
        x.stride(a)
    except Exception as e:
        print(type(e).__name__, e)
for a in (0, -1):
    try:
        torch.tensor(1.).stride(a)
    except Exception as e:
        print(type(e).__name__, e)
print(torch.tensor(1.).stride(), torch.ones(2, dtype=torch.bool).element_size(), torch.ones(2, dtype=torch.float64).element_size(),
      torch.ones(2, dtype=torch.int8).element_size(), torch.ones(2, dtype=torch.int16).element_size(), torch.ones(2, dtype=torch.float16).element_size())
a = torch.ones(2, 3, requires_grad=True)
b = torch.tensor([1, 2], dtype=torch.float64)
c = a.type_as(b)
print(c, c.dtype, c.grad_fn, a.type_as(a) is a, torch.tensor([1.7, -2.2]).type_as(torch.tensor([1])))
c.sum().backward()
print(a.grad)
try:
    a.type_as(3)
except TypeError as e:
    print(e)
for t in (torch.zeros(0, 3), torch.ones(2, 0), torch.zeros(2, 0, 3), torch.zeros(4, 1).expand(4, 1), torch.zeros(3).expand(1, 1, 3)):
    print(tuple(t.shape), t.stride())
""",
}


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name", SNIPPETS)
def test_prints_what_torch_prints(name):
    ours, our_warnings = gradviz_output(SNIPPETS[name])
    theirs, their_warnings = torch_output(SNIPPETS[name])
    assert ours == theirs
    assert our_warnings == their_warnings


# -- without torch ------------------------------------------------------------------------
def test_histc_matches_numpy_histogram():
    rng = np.random.default_rng(0)
    data = rng.standard_normal(1000)
    counts, _ = np.histogram(data, bins=13, range=(-2.0, 2.0))
    ours = torch.histc(torch.tensor(data), bins=13, min=-2.0, max=2.0)
    np.testing.assert_array_equal(ours._data, counts)


def test_out_writes_in_place_and_refuses_lossy_or_recorded_results():
    x = torch.tensor([1.0, 2.0])
    out = torch.zeros(2)
    storage = out._data
    assert torch.mul(x, 3, out=out) is out and out._data is storage and out.tolist() == [3.0, 6.0]
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        torch.exp(x, out=torch.zeros(2, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support automatic differentiation"):
        torch.exp(x.requires_grad_(), out=torch.zeros(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.exp(x.detach(), out=torch.empty(0))   # an empty out is resized without a warning


def test_numpy_names_are_aliases_only():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert torch.cumsum(x, axis=0).tolist() == torch.cumsum(x, 0).tolist()
    with pytest.raises(TypeError, match="multiple values for argument 'dim'"):
        torch.cumsum(x, dim=0, axis=0)
    assert torch.exp is not None and torch.cumsum.__name__ == "cumsum"


def test_range_index_has_a_gradient():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    x[range(0, 3, 2)].sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]


def test_stride_and_storage_offset_of_views():
    x = torch.arange(24.0).reshape(2, 3, 4)
    assert x.stride() == (12, 4, 1) and x.transpose(0, 2).stride() == (1, 4, 12) and x.stride(-2) == 4
    assert x[1, 1:, ::2].stride() == (4, 2) and x[1, 1:, ::2].storage_offset() == 16
    assert x[:, None].stride() == (12, 12, 4, 1) and torch.arange(3.0).expand(2, 3).stride() == (0, 1)
    assert torch.zeros(0, 3).stride() == (3, 1) and x.element_size() == 4
    assert torch.ones(2, dtype=torch.float64).type_as(torch.tensor([1])).dtype == torch.int64
