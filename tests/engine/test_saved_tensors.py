"""Autograd internals a learner reads about: saved-tensor hooks and save_on_cpu, _raw_saved_*
(SavedTensor.register_hooks), which tensors a node saves, node pre/post hooks, post-accumulate
and multi-tensor gradient hooks, inference_mode, anomaly mode naming the forward line, and
the second-order graph with torch's node names. Each snippet prints the same under torch."""
import linecache
import warnings

import numpy as np
import pytest
from tests.support.parity import gradviz_output, needs_torch, torch_output

import gradviz as torch

SNIPPETS = {
    "saved_selection": """
a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
c = torch.tensor([[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]])
for fn in [lambda: a * c, lambda: c * a, lambda: a / c, lambda: c / a, lambda: a @ c.T, lambda: c.T @ a,
           lambda: a[0].dot(c[0]), lambda: a * a, lambda: a.exp()]:
    n = fn().grad_fn
    print(n.name(), [(k, getattr(n, k) is None) for k in sorted(dir(n)) if k.startswith("_saved_") and "sym" not in k])
""",
    "saved_tensors_hooks": """
a = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
packed = []
def pack(t):
    packed.append(tuple(t.shape))
    return ("box", t)
with torch.autograd.graph.saved_tensors_hooks(pack, lambda p: p[1] * 2):
    y = (a * a).exp().sum()
print(packed)
y.backward()
print(a.grad)
a.grad = None
with torch.autograd.graph.save_on_cpu():
    y = (a.sin() * a).sum()
y.backward()
print(a.grad)
""",
    "raw_saved": """
a = torch.tensor([[1.0, 2.0], [4.0, 5.0]], requires_grad=True)
y = a.exp()
r = y.grad_fn._raw_saved_result
print(type(r).__name__)
r.register_hooks(lambda t: t + 1, lambda t: t)
print(y.grad_fn._saved_result)
y.sum().backward()
print(a.grad)
try:
    r.register_hooks(lambda t: t, lambda t: t)
except RuntimeError as e:
    print(e)
z = a.sin()
s = z.grad_fn._raw_saved_self
s.register_hooks(lambda t: t, lambda t: t * 0)
try:
    s.register_hooks(lambda t: t, lambda t: t)
except RuntimeError as e:
    print(e)
z.sum().backward()
print(a.grad)
""",
    "grad_hooks": """
a = torch.tensor([[1.0, 2.0], [4.0, 5.0]], requires_grad=True)
seen = []
h = a.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.sum().item()))
(a * 3).sum().backward(); print(seen)
h.remove(); (a * 3).sum().backward(); print(seen)
try:
    (a * 2).register_post_accumulate_grad_hook(lambda t: None)
except RuntimeError as e:
    print(e)
b = torch.tensor([1.0, 2.0], requires_grad=True); d = torch.tensor([3.0], requires_grad=True)
calls = []
hd = torch.autograd.graph.register_multi_grad_hook((b, d), lambda gs: calls.append([None if g is None else g.tolist() for g in gs]))
(b * 2).sum().backward(); (b.sum() * d).sum().backward(); print(calls)
hd.remove(); (b * 2).sum().backward(); print(len(calls))
torch.autograd.graph.register_multi_grad_hook((b, d), lambda g: calls.append(("any", g.tolist())), mode="any")
(b.sum() * d).sum().backward(); print(calls[-1])
y = a.sin() * 2
order = []
y.grad_fn.register_prehook(lambda go: order.append("pre"))
y.grad_fn.register_hook(lambda gi, go: order.append("post"))
y.grad_fn.next_functions[0][0].next_functions[0][0].register_prehook(lambda go: order.append("acc-pre"))
y.grad_fn.next_functions[0][0].next_functions[0][0].register_hook(lambda gi, go: order.append("acc-post"))
y.sum().backward(); print(order)
""",
    "inference_mode": """
print(torch.is_inference_mode_enabled())
with torch.inference_mode():
    print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
    with torch.inference_mode(False):
        print(torch.is_inference_mode_enabled(), torch.is_grad_enabled())
with torch.no_grad():
    with torch.inference_mode(False):
        print(torch.is_grad_enabled())
print(torch.is_inference_mode_enabled())
""",
    "anomaly_nan": """
print(torch.is_anomaly_enabled())
with torch.autograd.detect_anomaly():
    x = torch.tensor([1.0, -1.0], requires_grad=True)
    z = x.sqrt()
    try:
        (z * 0).sum().backward()
    except RuntimeError as e:
        print(e)
    print(torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled())
print(torch.is_anomaly_enabled())
""",
    "anomaly_inplace": """
with torch.autograd.set_detect_anomaly(True):
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    e = x.exp(); e.mul_(2)
    try:
        e.sum().backward()
    except RuntimeError as err:
        print(err)
    print(list(e.grad_fn.next_functions[0][0].metadata))
print(torch.is_anomaly_enabled())
""",
    "second_order_names": """
def walk(n, d=0, seen=None):
    seen = set() if seen is None else seen
    if n is None or id(n) in seen:
        return
    seen.add(id(n)); print("  " * d + n.name())
    for m, _ in n.next_functions:
        walk(m, d + 1, seen)
x = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
for f in [lambda x: x ** 2, lambda x: x ** 3, lambda x: x.tanh(), lambda x: x.sigmoid(), lambda x: x.relu(),
          lambda x: x.sqrt(), lambda x: (x * x).mean(), lambda x: x.exp().sin()]:
    g, = torch.autograd.grad(f(x).sum(), x, create_graph=True)
    walk(g.grad_fn)
    print(torch.autograd.grad(g.sum(), x)[0])
m = torch.ones(2, 2, requires_grad=True); w = torch.ones(2, 3, requires_grad=True)
gs = torch.autograd.grad((m @ w).tanh().sum(), (m, w), create_graph=True)
walk(gs[0].grad_fn); walk(gs[1].grad_fn)
print(torch.autograd.grad(gs[0].sum() + gs[1].sum(), (m, w)))
print(m.t().grad_fn.name(), m.T.grad_fn.name(), (x * 2).grad_fn.name())
""",
    # ops whose forward keeps work for the backward: an unpack hook's values still feed their VJP
    "unpacked_inputs_of_kept_work": """
x = torch.tensor([[0.5, -1.0, 2.0, 0.25], [1.5, 0.0, -0.5, 3.0]], requires_grad=True)
q = torch.tensor([[[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]]], requires_grad=True)
for f in [lambda: torch.nn.functional.gelu(x), lambda: torch.nn.functional.scaled_dot_product_attention(q, q * 1, q * 1)]:
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 2):
        y = f()
    print([None if g is None else g.round(decimals=4) for g in torch.autograd.grad((y * y).sum(), (x, q), allow_unused=True)])
""",
}


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name", SNIPPETS)
def test_prints_what_torch_prints(name):
    ours, our_warnings = gradviz_output(SNIPPETS[name])
    theirs, their_warnings = torch_output(SNIPPETS[name])
    assert ours == theirs
    assert [_from_snippet(w) for w in our_warnings] == [_from_snippet(w) for w in their_warnings]


def _from_snippet(message: str) -> str:
    """An anomaly warning's forward traceback from the snippet's own frames on (the frames
    above it are the test harness's, which differ between the two runs)."""
    if "Traceback of forward call" not in message:
        return message
    head, stack = message.split("\n", 1)
    return head + "\n" + stack[stack.index('  File "<snippet>"'):]


# -- without torch: the behaviours themselves -----------------------------------------------
def test_unpack_hook_feeds_the_vjp():
    a = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(lambda t: t.detach().numpy().copy(),
                                                  lambda arr: torch.tensor(arr) * 10):
        y = (a * a).sum()
    y.backward()
    assert a.grad.tolist() == [20.0, 40.0]   # 10a (unpacked other) + 10a (unpacked self)


def test_anomaly_warning_names_the_forward_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with torch.autograd.detect_anomaly():
            x = torch.tensor([0.0], requires_grad=True)
            z = x.sqrt()   # the line the warning must show
            with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in its 0th output"):
                (z * 0).sum().backward()   # 0 / (2√0)
    texts = [str(w.message) for w in caught]
    assert texts[0].startswith("Anomaly Detection has been enabled")
    detected = [t for t in texts if t.startswith("Error detected in")]
    assert detected and "z = x.sqrt()   # the line the warning must show" in detected[0]
    # attributed, as torch's C++ warnings are, to the learner's line that called backward
    where = next(w for w in caught if str(w.message).startswith("Error detected in"))
    assert where.filename == __file__ and "backward()" in linecache.getline(where.filename, where.lineno)
    assert "gradviz" not in detected[0].split("\n", 1)[1]
    assert not torch.is_anomaly_enabled()


def test_second_order_nodes_are_differentiable_again():
    """tanh''' through TanhBackwardBackward0's own VJP, against the closed form."""
    x = torch.tensor([0.3, -0.7], dtype=torch.float64, requires_grad=True)
    (g1,) = torch.autograd.grad(x.tanh().sum(), x, create_graph=True)
    (g2,) = torch.autograd.grad(g1.sum(), x, create_graph=True)
    (g3,) = torch.autograd.grad(g2.sum(), x)
    t = np.tanh(x._data)
    np.testing.assert_allclose(g2._data, -2 * t * (1 - t ** 2))
    np.testing.assert_allclose(g3._data, (1 - t ** 2) * (6 * t ** 2 - 2))


def test_multi_grad_hook_all_waits_for_every_computed_gradient():
    a = torch.tensor([1.0], requires_grad=True)
    b = torch.tensor([2.0], requires_grad=True)
    got = []
    torch.autograd.graph.register_multi_grad_hook((a, b), lambda gs: got.append(gs))
    (a * b).sum().backward()
    assert len(got) == 1 and [g.tolist() for g in got[0]] == [[2.0], [1.0]]


def test_saved_attributes_belong_to_the_node_class():
    """_saved_* and _raw_saved_* are attributes of a node's class, not answered by a __getattr__ (under
    which CPython reads every attribute of every node on its slow path); they read as before."""
    x = torch.ones(3, requires_grad=True)
    c = torch.ones(3)
    node = (x * c).grad_fn
    assert not any("__getattr__" in vars(cls) for cls in type(node).__mro__ if cls is not object)
    assert node._saved_other is c and node._saved_self is None   # self is kept only for other's gradient
    assert [name for name in dir(node) if name.startswith(("_saved_", "_raw_saved_"))] == \
        ["_raw_saved_other", "_saved_other", "_saved_self"]
    with pytest.raises(AttributeError, match="'MulBackward0' object has no attribute '_raw_saved_self'"):
        node._raw_saved_self
    with pytest.raises(AttributeError, match="'MulBackward0' object has no attribute '_saved_dim'"):
        node._saved_dim
    assert x.sum(dim=0).grad_fn._saved_dim == (0,)
