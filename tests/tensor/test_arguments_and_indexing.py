"""Tensor API gaps: out=, range and lists of ints as indices, NumPy's argument names (axis=,
keepdims=, x=), histc / histogram / bincount, and indexing errors in torch's words."""
import warnings

import numpy as np
import pytest
from tests.support.parity import gradviz_output, needs_torch, torch_output

import gradviz as torch

# the in-place methods both in-place snippets call, on one table of arguments
INPLACE_CALLS = """
import numpy as np
def attempt(f):
    try:
        r = f()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, str(e).splitlines()[0])
base = np.linspace(-1.5, 2.0, 12).reshape(3, 4)
idx = torch.tensor([2, 0, 2])
src = torch.tensor(np.linspace(0.5, 3.0, 12).reshape(3, 4))
scatter_index = torch.tensor([[1, 0, 2, 1], [0, 2, 1, 0]])
calls = {
    "masked_fill_": lambda t: t.masked_fill_(t > 0.3, -2.5),
    "masked_fill_row": lambda t: t.masked_fill_(torch.tensor([True, False, True, False]), 7.0),
    "index_add_": lambda t: t.index_add_(0, idx, src, alpha=2.0),
    "index_add_1": lambda t: t.index_add_(1, torch.tensor([3, 3]), src[:t.shape[0], :2]),
    "index_fill_": lambda t: t.index_fill_(1, torch.tensor([0, 3]), 9.0),
    "scatter_": lambda t: t.scatter_(0, scatter_index, src[:2] * 10),
    "scatter_value": lambda t: t.scatter_(1, scatter_index, 4.5),
    "scatter_value_kw": lambda t: t.scatter_(1, scatter_index, value=4.5),
    "scatter_add_": lambda t: t.scatter_add_(0, scatter_index, src[:2]),
    "fill_diagonal_": lambda t: t.fill_diagonal_(5.0),
    "unsqueeze_": lambda t: t.unsqueeze_(1),
    "unsqueeze_-1": lambda t: t.unsqueeze_(-1),
    "squeeze_": lambda t: t.unsqueeze_(0).squeeze_(),
    "squeeze_dim": lambda t: t.unsqueeze_(2).squeeze_(2),
    "squeeze_dims": lambda t: t.unsqueeze_(0).squeeze_((0, 1)),
    "squeeze_noop": lambda t: t.squeeze_(0),
    "transpose_": lambda t: t.transpose_(0, 1),
    "swapdims_": lambda t: t.swapdims_(1, 0),
    "swapaxes_": lambda t: t.swapaxes_(-1, 0),
    "t_": lambda t: t.t_(),
}
"""


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
 "as T view": lambda: x[0].T,   # x.T of a 3-D tensor warns, and torch warns once per process
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
    "inplace_methods_record_autograd": INPLACE_CALLS + """
weights = torch.tensor(np.linspace(0.1, 1.2, 12), dtype=torch.float64)
for name, call in calls.items():
    print("==", name)
    x = torch.tensor(base, requires_grad=True)
    attempt(lambda: call(x))
    y = x * 1.5
    v0 = y._version
    out = call(y)
    print(out is y, y.grad_fn, y.grad_fn.next_functions, y._version - v0, tuple(y.shape), y.stride(), y.is_contiguous())
    print(y)
    (y * weights.view(y.shape) if y.numel() == 12 else y).sum().backward()
    print(x.grad)
    # a view of a non-leaf, a view of a leaf
    z = x.detach().clone().requires_grad_()
    w = z * 1
    view = w[1:]
    attempt(lambda: (call(view).grad_fn, w.grad_fn, view._version, w._version, view._base is w))
    attempt(lambda: call(z[1:]))
    with torch.no_grad():
        plain = torch.tensor(base)
        r = call(plain)
        print(r is plain, plain._version, tuple(plain.shape), plain.stride())
        print(plain)
        q = x * 1
        call(q)
        print(q.grad_fn, q.requires_grad)
""",
    "inplace_sources_and_saved_tensors": INPLACE_CALLS + """
weights = torch.tensor(np.linspace(0.1, 1.2, 12), dtype=torch.float64)
x = torch.tensor(base, requires_grad=True)
s = src.clone().requires_grad_()
y = x * 1
y.index_add_(0, idx, s, alpha=-0.5)
y.scatter_add_(1, scatter_index, s[:2, :].exp())
y.scatter_(0, scatter_index, s[:2] ** 2)
v = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
y.masked_fill_(y > 1, v)
print(y.grad_fn, y)
(y * weights.view(3, 4)).sum().backward()
print(x.grad, s.grad, v.grad)
# in-place on something saved for backward
a = torch.tensor(base, requires_grad=True)
b = a.exp()
b.masked_fill_(b > 2, 0.0)
attempt(lambda: b.sum().backward())
c = a.sigmoid()
c.t_()
attempt(lambda: c.sum().backward())
print(a.grad)
""",
    "fill_diagonal": """
import numpy as np
def attempt(f):
    try:
        r = f()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, str(e).splitlines()[0])
# fill_diagonal_ shapes
for shape in [(3, 3), (2, 5), (7, 3), (8, 2), (3, 3, 3), (2, 2, 2, 2)]:
    for wrap in (False, True):
        t = torch.zeros(shape)
        t.fill_diagonal_(1.0, wrap=wrap)
        print(shape, wrap, t.flatten().nonzero().flatten().tolist(), t._version)
t = torch.zeros(8, 2).t().contiguous().t()
attempt(lambda: t.fill_diagonal_(1.0, wrap=False).flatten().nonzero().flatten().tolist())
for shape in [(3,), (2, 3, 3), ()]:
    attempt(lambda: torch.zeros(shape).fill_diagonal_(1.0))
w = torch.zeros(3, 3, requires_grad=True)
ww = w * 1
ww.fill_diagonal_(2.0, wrap=True)
print(ww.grad_fn, ww._version)
ww.sum().backward()
print(w.grad)
print(torch.zeros(7, 3, dtype=torch.int64).fill_diagonal_(3, wrap=True))
x = torch.zeros(3, 8).t()
x.fill_diagonal_(1.0, wrap=True)
print(x.nonzero().tolist())
y = torch.zeros(8, 3)
y.fill_diagonal_(1.0, wrap=True)
print(y.nonzero().tolist())
w = torch.nn.Parameter(torch.zeros(3, 3))
with torch.no_grad():
    w.fill_diagonal_(2.0)
print(w, w._version)
torch.nn.init.eye_(w)
print(w)
""",
    "inplace_errors_and_view_ops": """
import numpy as np
def attempt(f):
    try:
        r = f()
        print("ok", r)
    except Exception as e:
        print(type(e).__name__, str(e).splitlines()[0])
base = np.linspace(-1.5, 2.0, 12).reshape(3, 4)
# errors in torch's words
x = torch.zeros(2, 3)
for f in [lambda: x.clone().unsqueeze_(3), lambda: x.clone().squeeze_(2), lambda: x.clone().transpose_(0, 2),
          lambda: torch.zeros(2, 2, 2).t_(), lambda: x.clone().masked_fill_(torch.tensor([1, 0, 1]), 1.0),
          lambda: x.clone().masked_fill_(torch.ones(2, 2, 3, dtype=torch.bool), 1.0),
          lambda: x.clone().masked_fill_(x > 0, torch.ones(2)),
          lambda: x.clone().index_add_(0, torch.tensor([0.5]), torch.ones(1, 3)),
          lambda: x.clone().scatter_(0, torch.tensor([[3]]), 1.0),
          lambda: torch.zeros(3).expand(2, 3).masked_fill_(torch.ones(2, 3, dtype=torch.bool), 1.0),
          lambda: torch.zeros(2, 3, dtype=torch.int64).masked_fill_(torch.ones(2, 3, dtype=torch.bool), 1.5)]:
    attempt(f)
# 0-d and 1-d view ops
print(torch.tensor(2.0).t_().shape, torch.arange(3.).t_().stride(), torch.tensor(2.0).unsqueeze_(0).shape,
      torch.tensor(2.0).transpose_(0, -1).shape, torch.zeros(1, 1).squeeze_().shape)
x = torch.arange(6.).view(2, 3)
u = x.view(6)
x.t_()
print(x.stride(), x.is_contiguous(), u._version, x._version, x.storage_offset())
# retain_grad and hooks after an in-place view op
a = torch.tensor(base, requires_grad=True)
b = a * 2
b.retain_grad()
b.unsqueeze_(0)
b.sum().backward()
print(b.grad.shape if b.grad is not None else None, a.grad)
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


# -- the in-place methods without torch: finite differences, and the same program on the CuPy stand-in --
_BASE = np.linspace(-1.5, 2.0, 12).reshape(3, 4)
_SRC = np.linspace(0.5, 3.0, 12).reshape(3, 4)


def _inplace_programs(lib, device="cpu"):
    """name -> f(x, s): an in-place method applied to a non-leaf made from x, with sources from s."""
    idx = lib.tensor([2, 0, 2], device=device)
    where = lib.tensor([[1, 0, 2, 1], [0, 2, 1, 0]], device=device)
    return {
        "masked_fill_": lambda x, s: (x * s).masked_fill_(x > 0.3, -2.5),
        "masked_fill_tensor": lambda x, s: (x * 1).masked_fill_(x > 0.3, s.sum()),
        "index_add_": lambda x, s: (x * 1).index_add_(0, idx, s * s, alpha=2.0),
        "index_fill_": lambda x, s: (x * s).index_fill_(1, idx[:2], 9.0),
        "scatter_": lambda x, s: (x * 1).scatter_(0, where, s[:2].exp()),
        "scatter_value": lambda x, s: (x * s).scatter_(1, where, 4.5),
        "scatter_add_": lambda x, s: (x * 1).scatter_add_(0, where, s[:2] * s[1:]),
        "fill_diagonal_": lambda x, s: (x * s).fill_diagonal_(5.0),
        "fill_diagonal_view": lambda x, s: (x * s)[1:].fill_diagonal_(5.0),
        "unsqueeze_": lambda x, s: (x * s).unsqueeze_(1) * s[:, None],
        "squeeze_": lambda x, s: (x * s)[None, :, None].squeeze_() * s,
        "transpose_": lambda x, s: (x * s).transpose_(0, 1) @ s,
        "t_": lambda x, s: (x * s)[1:].t_() @ s[1:],
    }


@pytest.mark.parametrize("name", sorted(_inplace_programs(torch)))
def test_inplace_methods_pass_gradcheck(name):
    program = _inplace_programs(torch)[name]
    x = torch.tensor(_BASE + 0.01, requires_grad=True)   # away from the masks' threshold
    s = torch.tensor(_SRC, requires_grad=True)
    assert torch.autograd.gradcheck(program, (x, s))


@pytest.mark.parametrize("name", sorted(_inplace_programs(torch)))
def test_inplace_methods_on_the_device_match_the_cpu(cuda_namespace, name):
    from tests.support import strict_namespace
    if name.startswith("fill_diagonal_") and cuda_namespace is strict_namespace.cupy:
        pytest.skip("a write through a view reads the array's address (a.data.ptr), which the stand-in lacks")
    results = []
    for device in ("cpu", "cuda"):
        x = torch.tensor(_BASE, device=device, requires_grad=True)
        s = torch.tensor(_SRC, device=device, requires_grad=True)
        out = _inplace_programs(torch, device)[name](x, s)
        out.sum().backward()
        assert out.device.type == device
        results.append([t.detach().cpu().numpy() for t in (out, x.grad, s.grad)])
    for ours, cpu in zip(results[1], results[0]):
        np.testing.assert_allclose(ours, cpu, rtol=1e-12)


def test_inplace_view_ops_change_metadata_only():
    x = torch.arange(6.0).reshape(2, 3)
    memory = x._data
    assert x.t_() is x and x.shape == (3, 2) and x.stride() == (1, 3) and x._version == 1
    assert np.shares_memory(x._data, memory) and not x.is_contiguous()
    assert x.unsqueeze_(0).shape == (1, 3, 2) and x.stride() == (3, 1, 3) and x._version == 2   # torch's too
    assert x.squeeze_().transpose_(0, 1).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and x.is_contiguous()
    y = torch.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        y.unsqueeze_(0)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        y[1:].t_()
    h = y.sigmoid()
    h.t_()   # the sigmoid saved its result, whose version the t_ bumped
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        h.sum().backward()


def test_stride_and_storage_offset_of_views():
    x = torch.arange(24.0).reshape(2, 3, 4)
    assert x.stride() == (12, 4, 1) and x.transpose(0, 2).stride() == (1, 4, 12) and x.stride(-2) == 4
    assert x[1, 1:, ::2].stride() == (4, 2) and x[1, 1:, ::2].storage_offset() == 16
    assert x[:, None].stride() == (12, 12, 4, 1) and torch.arange(3.0).expand(2, 3).stride() == (0, 1)
    assert torch.zeros(0, 3).stride() == (3, 1) and x.element_size() == 4
    assert torch.ones(2, dtype=torch.float64).type_as(torch.tensor([1])).dtype == torch.int64
