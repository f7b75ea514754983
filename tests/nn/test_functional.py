"""gradviz.nn against finite differences and against torch.nn.

Functional layer: the rows of group "nn" in tests/ops/cases.py run under gradcheck in float64
and against PyTorch with every other row; here, their second derivatives. Modules: weights are
copied from a torch module into the gradviz one, then outputs, input and parameter
gradients, grad_fn names and running statistics are compared. Also nn.init's statistics
and the containers' parameters and diagram scopes.
"""
import math
import textwrap
import warnings

import numpy as np
import pytest
from tests.ops.cases import PROBS as P, XK as X, YK as Y, find
from tests.support.op_inputs import graph_of
from tests.support.parity import gradviz_output, leaf, needs_torch, real_torch as torch, torch_output

import gradviz
import gradviz.nn as nn
import gradviz.nn.functional as F
from gradviz.autograd import gradcheck

SECOND_ORDER = ["elu", "selu", "silu", "mish", "logsigmoid", "hardswish", "layer_norm", "layer_norm_affine",
                "batch_norm_train", "smooth_l1_loss", "huber_loss", "bce_with_logits", "bce_with_logits_weights", "normalize", "cosine_similarity",
                "bce", "bce_weight_none", "embedding_bag_sum_weights"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_order(name):
    """The VJPs run on Tensors too (create_graph=True): the gradient's gradient matches finite differences."""
    case = find(name, "nn")
    prog, arrays = case.fn, case.inputs
    seed = gradviz.tensor(np.random.default_rng(5).standard_normal(prog(gradviz, *[leaf(gradviz, a) for a in
                                                                                  arrays]).shape),
                          dtype=gradviz.float64)

    def first_grad(*xs):
        with gradviz.enable_grad():   # gradcheck takes its finite differences under no_grad
            out = prog(gradviz, *xs)
            return gradviz.autograd.grad(out, xs, seed, create_graph=True)[0]

    xs = tuple(leaf(gradviz, a) for a in arrays)
    assert first_grad(*xs).requires_grad, "create_graph=True gave a gradient without a graph"
    assert gradcheck(first_grad, xs)


def test_kinks_match_torch_at_the_boundaries():
    """At the kinks themselves the one-sided choice is PyTorch's."""
    if torch is None:
        pytest.skip("PyTorch is not installed")
    pts = np.array([-3.0, -1.0, 0.0, 1.0, 3.0, 6.0])
    for fn in ("relu6", "hardtanh", "hardsigmoid", "hardswish", "elu", "silu"):
        ours, theirs = leaf(gradviz, pts), leaf(torch, pts)
        getattr(F, fn)(ours).sum().backward()
        getattr(torch.nn.functional, fn)(theirs).sum().backward()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, err_msg=fn)
    for fn in ("smooth_l1_loss", "huber_loss"):
        a, b = leaf(gradviz, pts), leaf(torch, pts)
        getattr(F, fn)(a, gradviz.zeros(6, dtype=gradviz.float64), reduction="sum").backward()
        getattr(torch.nn.functional, fn)(b, torch.zeros(6, dtype=torch.float64), reduction="sum").backward()
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12, err_msg=fn)


def test_extreme_logits_stay_finite():
    x = gradviz.tensor([-800.0, -30.0, 0.0, 30.0, 800.0], dtype=gradviz.float64, requires_grad=True)
    for fn in (F.logsigmoid, F.silu, F.mish):
        x.grad = None
        fn(x).sum().backward()
        assert np.isfinite(x.grad.numpy()).all(), fn.__name__
    loss = F.binary_cross_entropy_with_logits(x, gradviz.tensor([0.0, 1.0, 0.5, 0.0, 1.0], dtype=gradviz.float64))
    assert np.isfinite(loss.item())


# programs printing what both libraries compute at the edges: values, gradients, grad_fn names, errors, warnings
EDGE_SNIPPETS = {
    "bce_saturated": """
F = torch.nn.functional
for t in ([1., 0.], [0., 1.]):
    p = torch.tensor([1., 0.], requires_grad=True)
    l = torch.nn.BCELoss()(p, torch.tensor(t))
    l.backward()
    print(l, p.grad)
x = torch.tensor([20.], requires_grad=True)
l = F.binary_cross_entropy(torch.sigmoid(x), torch.ones(1))
l.backward()
print(l, x.grad)
print(F.binary_cross_entropy(torch.tensor([1., 0.]), torch.tensor([1., 0.]), reduction='none'))
for dtype in (torch.float32, torch.float64):
    for reduction in ('mean', 'sum', 'none'):
        p = torch.tensor([0., 1., 0., 1., 0.25, 1e-30], dtype=dtype, requires_grad=True)
        t = torch.tensor([0., 1., 1., 0., 0.5, 0.], dtype=dtype, requires_grad=True)
        l = F.binary_cross_entropy(p, t, weight=torch.tensor([1., 2., 0.5, 3., 1.5, 1.], dtype=dtype),
                                   reduction=reduction)
        l.sum().backward()
        print(l, p.grad, t.grad)
        print(l.grad_fn.name(), [f if f is None else f.name() for f, _ in l.grad_fn.next_functions])
""",
    "bce_checks": """
F = torch.nn.functional
T = torch.tensor
calls = [
    lambda: F.binary_cross_entropy(T([0.5]), T([1.]), reduction='bad'),
    lambda: F.binary_cross_entropy(T([0.5]), T([1., 0.]), reduction='bad'),
    lambda: F.binary_cross_entropy(T([0.5]), T([1., 0.])),
    lambda: F.binary_cross_entropy(T([float('nan')]), T([1.])),
    lambda: F.binary_cross_entropy(T([0.5]), T([float('nan')])),
    lambda: F.binary_cross_entropy(T([0.5, 1.5]), T([2., 1.])),
    lambda: F.binary_cross_entropy(T([1.5, 0.5]), T([1., 2.])),
    lambda: F.binary_cross_entropy(T([0.5, 0.2, 0.3]), T([1., 0., 1.]), weight=T([1., 2.])),
    lambda: F.binary_cross_entropy(T([0.5, 0.2, 0.3]), T([1., 0., 1.]), weight=T([[1., 2., 3.], [1., 1., 1.]])),
    lambda: F.binary_cross_entropy(T([1.5]), T([1.]), weight=T([[1.], [2.]])),
    lambda: F.binary_cross_entropy(T([0.5], dtype=torch.float64), T([1.])),
    lambda: F.binary_cross_entropy(T([1.5]), T([1.], dtype=torch.float64)),
    lambda: F.binary_cross_entropy(T([0.5]), T([1])),
    lambda: F.binary_cross_entropy(T([1]), T([1])),
    lambda: F.binary_cross_entropy(T([0.3]), T([1.]), weight=T([1.], requires_grad=True)),
]
for call in calls:
    try:
        print(call())
    except (RuntimeError, ValueError, NotImplementedError) as e:
        print(type(e).__name__, e)
print(F.binary_cross_entropy(T([[0.5, 0.2, 0.3]]), T([[1., 0., 1.]]), weight=T([1., 2., 3.]), reduction='none'))
print(F.binary_cross_entropy(T([0.5, 0.25]), T([1., 0.]), weight=T([2., 3.], dtype=torch.float64), reduction='none'))
print(F.binary_cross_entropy(torch.zeros(0), torch.zeros(0)), F.binary_cross_entropy(torch.zeros(0), torch.zeros(0), reduction='sum'))
print(F.binary_cross_entropy(T([0.3, 0.4]), T([1., 0.]), None, None, False))
print(torch.nn.BCELoss(weight=T([1., 2.]), reduction='sum')(T([0.3, 0.4]), T([1., 0.])))
with torch.no_grad():
    print(F.binary_cross_entropy(T([0.3]), T([1.]), weight=T([1.], requires_grad=True)))
""",
    "bce_with_logits_saturated": """
F = torch.nn.functional
x = torch.tensor([100., -100.], requires_grad=True)
l = F.binary_cross_entropy_with_logits(x, torch.tensor([1., 0.]))
l.backward()
print(l, x.grad)
for dtype in (torch.float32, torch.float64):
    for pos_weight in (None, torch.tensor([2., 0.5, 1., 3.], dtype=dtype)):
        x = torch.tensor([100., -100., 1000., -1000.], dtype=dtype, requires_grad=True)
        t = torch.tensor([0., 1., 0., 1.], dtype=dtype, requires_grad=True)
        l = F.binary_cross_entropy_with_logits(x, t, pos_weight=pos_weight, reduction='none')
        l.sum().backward()
        print(l, x.grad, t.grad)
        x = torch.tensor([100., -100., 3., -2.], dtype=dtype, requires_grad=True)
        t = torch.tensor([1., 0., 0.25, 1.], dtype=dtype, requires_grad=True)
        l = F.binary_cross_entropy_with_logits(x, t, weight=torch.tensor([1., 2., 0.5, 1.], dtype=dtype),
                                               pos_weight=pos_weight)
        l.backward()
        print(x.grad, t.grad)
x, t = torch.tensor([0.3, -2.]), torch.tensor([1., 0.])
print(F.binary_cross_entropy_with_logits(x, t, weight=torch.tensor([1., 2.], dtype=torch.float64)),
      F.binary_cross_entropy_with_logits(x, t, pos_weight=torch.tensor([1., 2.], dtype=torch.float64)),
      F.binary_cross_entropy_with_logits(x, t.double()), F.binary_cross_entropy_with_logits(x.double(), t))
print(F.binary_cross_entropy_with_logits(x, t, size_average=False))
print(F.binary_cross_entropy_with_logits(x.half(), t), F.binary_cross_entropy_with_logits(x, t.half()))
for target in (torch.tensor([1, 0]), torch.tensor([True, False])):
    try:
        F.binary_cross_entropy_with_logits(x, target)
    except RuntimeError as e:
        print(e)
""",
    "target_size_warnings": """
F = torch.nn.functional
print(F.mse_loss(torch.zeros(3, 1), torch.zeros(3)), torch.nn.MSELoss()(torch.zeros(3, 1), torch.zeros(3)))
print(F.l1_loss(torch.zeros(3, 1), torch.zeros(3)), torch.nn.L1Loss()(torch.zeros(3, 1), torch.zeros(3)))
print(F.smooth_l1_loss(torch.zeros(3, 1), torch.zeros(3)), F.mse_loss(torch.zeros(3), torch.zeros(3)))
try:
    F.mse_loss(torch.zeros(3), torch.zeros(2, 3), reduction='bad')
except ValueError as e:
    print(e)
""",
}


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name", EDGE_SNIPPETS)
def test_loss_edges_print_what_torch_prints(name):
    ours, our_warnings = gradviz_output(EDGE_SNIPPETS[name])
    theirs, their_warnings = torch_output(EDGE_SNIPPETS[name])
    assert ours == theirs
    assert our_warnings == their_warnings


@needs_torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bce_gradients_at_the_clamp_are_torchs_bits(dtype):
    """At p = 0 and p = 1 the input gradient is ḡ (p − t) / max(p(1 − p), ε) with ATen's float ε, the target
    gradient −logit(p) = ±inf; both bit for bit, signed zeros too, beside the finite ones."""
    p = [0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1e-30, 0.5, 0.75]
    t = [0.0, 1.0, 1.0, 0.0, 0.5, 0.5, 0.0, 0.5, 0.25]
    results = []
    for lib, Ft in ((gradviz, F), (torch, torch.nn.functional)):
        a = lib.tensor(p, dtype=getattr(lib, dtype), requires_grad=True)
        b = lib.tensor(t, dtype=getattr(lib, dtype), requires_grad=True)
        out = Ft.binary_cross_entropy(a, b, reduction="none")
        out.backward(lib.ones_like(out))
        results.append((out.detach().numpy(), a.grad.numpy(), b.grad.numpy(), out.grad_fn.name()))
    (*ours, our_name), (*theirs, their_name) = results
    assert our_name == their_name == "BinaryCrossEntropyBackward0"
    for name, a, b in zip(("loss", "p.grad", "t.grad"), ours, theirs):
        close = np.isclose(a, b, rtol=1e-6 if dtype == "float32" else 1e-15, atol=0)
        assert np.array_equal(np.isfinite(a), np.isfinite(b)) and close[np.isfinite(b)].all(), (name, a, b)
        assert np.array_equal(a[~np.isfinite(a)], b[~np.isfinite(b)]), name
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b), err_msg=name)
    np.testing.assert_array_equal(ours[1], theirs[1])   # the input gradient's division is exact in both


def test_errors_are_pytorchs():
    x = gradviz.randn(3, 4)
    with pytest.raises(ValueError, match="Target size"):
        F.binary_cross_entropy_with_logits(x, gradviz.rand(4))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.l1_loss(x, x, reduction="avg")
    with pytest.raises(RuntimeError, match="Given normalized_shape=\\[3\\]"):
        F.layer_norm(x, (3,))
    with pytest.raises(IndexError, match="index out of range in self"):
        F.embedding(gradviz.tensor([5]), x)
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1, 2, 3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(4)(gradviz.randn(1, 4))


# -- modules against torch.nn ---------------------------------------------------------------------
def _copy_params(theirs, ours):
    tp = dict(theirs.named_parameters())
    names = [n for n, _ in ours.named_parameters()]
    assert names == list(tp)
    for name, p in ours.named_parameters():
        p._data[...] = tp[name].detach().numpy()


MODULES = [
    ("Identity", lambda m: m.Identity(), (3, 4)),
    ("ELU", lambda m: m.ELU(alpha=0.7), (3, 4)),
    ("SiLU", lambda m: m.SiLU(), (3, 4)),
    ("ReLU6", lambda m: m.ReLU6(), (3, 4)),
    ("Softplus", lambda m: m.Softplus(beta=2.0, threshold=5.0), (3, 4)),
    ("LayerNorm", lambda m: m.LayerNorm(4), (3, 4)),
    ("LayerNorm_no_affine", lambda m: m.LayerNorm([2, 4], elementwise_affine=False), (3, 2, 4)),
    ("BatchNorm1d", lambda m: m.BatchNorm1d(4), (5, 4)),
    ("BatchNorm1d_3d", lambda m: m.BatchNorm1d(3, momentum=0.3), (4, 3, 5)),
    ("BatchNorm1d_no_affine", lambda m: m.BatchNorm1d(4, affine=False), (5, 4)),
    ("Sequential_LN_MLP", lambda m: m.Sequential(m.Linear(4, 6), m.LayerNorm(6), m.SiLU(), m.Linear(6, 2)), (3, 4)),
]


def _perturb(module, seed):
    """Move weights away from ones/zeros so that a wrong weight or bias gradient shows."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.3))


@needs_torch
@pytest.mark.parametrize("name,make,shape", MODULES, ids=[m[0] for m in MODULES])
def test_module_parity(name, make, shape):
    theirs = make(torch.nn).double()
    _perturb(theirs, 11)
    ours = make(nn).double()
    _copy_params(theirs, ours)
    for step in range(3):   # three training steps: running statistics build up the same way
        x = np.random.default_rng(step).standard_normal(shape)
        tx, gx = leaf(torch, x), leaf(gradviz, x)
        tout, gout = theirs(tx), ours(gx)
        np.testing.assert_allclose(gout.detach().numpy(), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
        assert (gout.grad_fn is None) == (tout.grad_fn is None)
        if tout.grad_fn is not None:
            assert gout.grad_fn.name() == tout.grad_fn.name()
        seed = np.random.default_rng(100 + step).standard_normal(tuple(tout.shape))
        tout.backward(torch.tensor(seed))
        gout.backward(gradviz.tensor(seed))
        np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)
        for (n, gp), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
            np.testing.assert_allclose(gp.grad.numpy(), tp.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=n)
    for (n, gb), (tn, tb) in zip(ours.named_buffers(), theirs.named_buffers()):
        assert n == tn
        np.testing.assert_allclose(gb.numpy(), tb.numpy(), rtol=1e-12, err_msg=n)
    assert list(ours.state_dict()) == list(theirs.state_dict())


@needs_torch
def test_batchnorm_eval_uses_running_statistics():
    theirs, ours = torch.nn.BatchNorm1d(4).double(), nn.BatchNorm1d(4).double()
    _perturb(theirs, 3)
    _copy_params(theirs, ours)
    for step in range(4):
        x = np.random.default_rng(step).standard_normal((6, 4)) * 2 + 1
        theirs(torch.tensor(x))
        ours(gradviz.tensor(x))
    theirs.eval(), ours.eval()
    x = np.random.default_rng(9).standard_normal((3, 4))
    tx, gx = leaf(torch, x), leaf(gradviz, x)
    tout, gout = theirs(tx), ours(gx)
    np.testing.assert_allclose(gout.detach().numpy(), tout.detach().numpy(), rtol=1e-10)
    assert gout.grad_fn.name() == tout.grad_fn.name() == "NativeBatchNormBackward0"
    (tout * tout).sum().backward()
    (gout * gout).sum().backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-9)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-9)
    np.testing.assert_allclose(ours.running_mean.numpy(), theirs.running_mean.numpy(), rtol=1e-12)
    assert int(ours.num_batches_tracked.item()) == 4
    before = ours.running_mean.numpy().copy()
    ours(gradviz.randn(5, 4, dtype=gradviz.float64))
    np.testing.assert_array_equal(ours.running_mean.numpy(), before)   # eval mode leaves them alone


@needs_torch
def test_embedding_module_and_padding_row():
    theirs, ours = torch.nn.Embedding(5, 3, padding_idx=1).double(), nn.Embedding(5, 3, padding_idx=1).double()
    assert np.all(ours.weight.detach().numpy()[1] == 0)
    _copy_params(theirs, ours)
    idx = [[0, 1, 4], [4, 4, 2]]
    tout, gout = theirs(torch.tensor(idx)), ours(gradviz.tensor(idx))
    np.testing.assert_allclose(gout.detach().numpy(), tout.detach().numpy())
    assert gout.grad_fn.name() == tout.grad_fn.name() == "EmbeddingBackward0"
    seed = np.random.default_rng(1).standard_normal((2, 3, 3))
    tout.backward(torch.tensor(seed))
    gout.backward(gradviz.tensor(seed))
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-12)
    assert np.all(ours.weight.grad.numpy()[1] == 0)


LOSSES = [
    ("L1Loss", lambda m: m.L1Loss(), Y),
    ("SmoothL1Loss", lambda m: m.SmoothL1Loss(beta=0.5), Y),
    ("HuberLoss", lambda m: m.HuberLoss(delta=1.5, reduction="sum"), Y),
    ("BCEWithLogitsLoss", lambda m: m.BCEWithLogitsLoss(), P),
    ("KLDivLoss", lambda m: m.KLDivLoss(reduction="batchmean"), P),
]


@needs_torch
@pytest.mark.parametrize("name,make,target", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_module_parity(name, make, target):
    tx, gx = leaf(torch, X), leaf(gradviz, X)
    tl = make(torch.nn)(tx, torch.tensor(target))
    gl = make(nn)(gx, gradviz.tensor(target))
    np.testing.assert_allclose(gl.item(), tl.item(), rtol=1e-12)
    assert gl.grad_fn.name() == tl.grad_fn.name()
    tl.backward(), gl.backward()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-14)


@needs_torch
def test_bce_with_logits_module_pos_weight():
    pw = np.array([1.0, 3.0, 0.5, 2.0])
    tl = torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(pw))(leaf(torch, X), torch.tensor(P))
    gl = nn.BCEWithLogitsLoss(pos_weight=gradviz.tensor(pw))(leaf(gradviz, X), gradviz.tensor(P))
    np.testing.assert_allclose(gl.item(), tl.item(), rtol=1e-12)


# -- containers -----------------------------------------------------------------------------------
class Tower(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 5), nn.Linear(5, 3)])
        self.heads = nn.ModuleDict({"score": nn.Linear(3, 1), "aux": nn.Linear(3, 2)})
        self.scales = nn.ParameterList([nn.Parameter(gradviz.ones(5)), nn.Parameter(gradviz.ones(3))])

    def forward(self, x):
        for layer, scale in zip(self.layers, self.scales):
            x = F.relu(layer(x)) * scale
        return self.heads["score"](x).sum() + self.heads["aux"](x).sum()


def _scopes_on_chain(root):
    """Every scope path of the grad_fn graph under `root`."""
    seen, stack, paths = set(), [root], set()
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        paths.add(tuple(getattr(node, "scope", ()) or ()))
        stack.extend(n for n, _ in node.next_functions)
    return paths


def test_containers_register_parameters_and_scopes():
    model = Tower()
    names = [n for n, _ in model.named_parameters()]
    assert names == ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
                     "heads.score.weight", "heads.score.bias", "heads.aux.weight", "heads.aux.bias",
                     "scales.0", "scales.1"]
    assert len(list(model.parameters())) == 10
    assert len(model.layers) == 2 and list(model.heads) == ["score", "aux"] and len(model.scales) == 2
    assert model.layers[-1] is model.layers[1] and "aux" in model.heads
    loss = model(gradviz.randn(2, 4))
    paths = _scopes_on_chain(loss.grad_fn)
    assert ("Tower", "0 (Linear)") in paths
    assert ("Tower", "1 (Linear)") in paths
    assert ("Tower", "score (Linear)") in paths
    assert ("Tower", "aux (Linear)") in paths
    loss.backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_container_editing():
    layers = nn.ModuleList()
    layers.append(nn.Linear(2, 2)).extend([nn.ReLU(), nn.Identity()])
    layers.insert(1, nn.Tanh())
    assert [type(m).__name__ for m in layers] == ["Linear", "Tanh", "ReLU", "Identity"]
    assert [m._scope_name for m in layers] == ["0 (Linear)", "1 (Tanh)", "2 (ReLU)", "3 (Identity)"]
    layers[2] = nn.SiLU()
    assert isinstance(layers[2], nn.SiLU) and len(layers[1:]) == 3
    with pytest.raises(IndexError):
        layers[4]
    heads = nn.ModuleDict()
    heads["a"] = nn.Linear(2, 1)
    heads.update([("b", nn.Linear(2, 3))])
    assert list(heads.keys()) == ["a", "b"] and heads.pop("a") is not None and list(heads) == ["b"]
    assert [n for n, _ in heads.named_parameters()] == ["b.weight", "b.bias"]
    params = nn.ParameterList()
    params.append(gradviz.zeros(3))
    assert isinstance(params[0], nn.Parameter) and params[0].requires_grad


def test_modules_to_double_moves_buffers():
    bn = nn.BatchNorm1d(3).double()
    assert bn.running_mean.dtype == gradviz.float64 and bn.weight.dtype == gradviz.float64
    assert bn.num_batches_tracked.dtype == gradviz.int64
    assert list(bn.state_dict()) == ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]


# -- nn.init -------------------------------------------------------------------------------------
def test_init_fills_in_place_without_a_graph():
    w = nn.Parameter(gradviz.empty(200, 300))
    for fn in (nn.init.zeros_, nn.init.ones_, lambda t: nn.init.constant_(t, 0.25), nn.init.uniform_,
               nn.init.normal_, nn.init.xavier_uniform_, nn.init.xavier_normal_, nn.init.kaiming_uniform_,
               nn.init.kaiming_normal_):
        out = fn(w)
        assert out is w and w.is_leaf and w.grad_fn is None and w.requires_grad
        assert w.shape == (200, 300) and w.dtype == gradviz.float32
    assert np.all(nn.init.constant_(w, 0.25).detach().numpy() == 0.25)
    assert np.all(nn.init.ones_(w).detach().numpy() == 1) and np.all(nn.init.zeros_(w).detach().numpy() == 0)


def test_init_statistics():
    gradviz.manual_seed(0)
    w = gradviz.empty(400, 500, dtype=gradviz.float64)
    fan_in, fan_out = 500, 400

    def check(mean, std, lo=None, hi=None):
        a = w.numpy()
        assert abs(a.mean() - mean) < 0.02 * max(std, 1e-3) * 5
        assert abs(a.std() - std) / std < 0.02
        if lo is not None:
            assert a.min() >= lo and a.max() <= hi and a.min() < lo * 0.99 and a.max() > hi * 0.99

    nn.init.uniform_(w, -2, 3)
    check(0.5, 5 / math.sqrt(12), -2, 3)
    nn.init.normal_(w, 1.5, 0.3)
    check(1.5, 0.3)
    bound = math.sqrt(6 / (fan_in + fan_out))
    nn.init.xavier_uniform_(w)
    check(0, bound / math.sqrt(3), -bound, bound)
    nn.init.xavier_normal_(w, gain=2.0)
    check(0, 2.0 * math.sqrt(2 / (fan_in + fan_out)))
    nn.init.kaiming_uniform_(w, a=math.sqrt(5))   # what Linear uses: U(−1/√fan_in, 1/√fan_in)
    check(0, 1 / math.sqrt(fan_in) / math.sqrt(3), -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    check(0, math.sqrt(2 / fan_out))
    nn.init.eye_(w)
    assert np.array_equal(w.numpy(), np.eye(400, 500))


@needs_torch
def test_calculate_gain_matches_torch():
    for args in (("linear",), ("sigmoid",), ("tanh",), ("relu",), ("leaky_relu",), ("leaky_relu", 0.2),
                 ("selu",), ("conv2d",)):
        assert nn.init.calculate_gain(*args) == pytest.approx(torch.nn.init.calculate_gain(*args))
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        nn.init.calculate_gain("swish")
    with pytest.raises(ValueError, match="Fan in and fan out can not be computed"):
        nn.init.xavier_uniform_(gradviz.empty(4))
    with pytest.raises(ValueError, match="Only tensors with 2 dimensions"):
        nn.init.eye_(gradviz.empty(2, 2, 2))


def test_init_is_seeded():
    gradviz.manual_seed(42)
    a = nn.init.kaiming_normal_(gradviz.empty(3, 4)).numpy().copy()
    gradviz.manual_seed(42)
    b = nn.init.kaiming_normal_(gradviz.empty(3, 4)).numpy()
    assert np.array_equal(a, b)


CROSS_ENTROPY_FORMS = [dict(), dict(reduction="sum"), dict(reduction="none"), dict(label_smoothing=0.1),
                       dict(label_smoothing=0.1, reduction="sum"), dict(label_smoothing=0.1, reduction="none"),
                       dict(label_smoothing=0.1, weight=[1., 2., 3., 4.])]


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("form", CROSS_ENTROPY_FORMS, ids=[str(f) for f in CROSS_ENTROPY_FORMS])
@pytest.mark.parametrize("targets", ["probabilities", "indices"])
def test_cross_entropy_records_torchs_graph(form, targets):
    """Class probabilities: −Σ(log p ⊙ t), then a DivBackward1 for the mean; label smoothing with
    indices: (1 − ε)·nll + ε/C·smooth, two MulBackward1 nodes; values and gradients as torch's."""
    rng = np.random.default_rng(3)
    x, probs = rng.standard_normal((3, 4)), rng.dirichlet(np.ones(4), 3)

    def loss(lib, leaf):
        target = lib.tensor(probs) if targets == "probabilities" else lib.tensor([1, 0, 3])
        kw = {k: (lib.tensor(v, dtype=lib.float64) if k == "weight" else v) for k, v in form.items()}
        return lib.nn.functional.cross_entropy(leaf, target, **kw)
    _same_loss_graph_as_torch(loss, x)


def _same_loss_graph_as_torch(loss, x):
    """loss(lib, leaf) on gradviz and torch: the same grad_fn graph, values and gradients."""
    ends = []
    for lib in (gradviz, torch):
        leaf = lib.tensor(x, requires_grad=True)
        out = loss(lib, leaf)
        out.sum().backward()
        ends.append((graph_of(out.grad_fn, [leaf]), out.detach().numpy(), leaf.grad.numpy()))
    (graph, value, grad), (torch_graph, torch_value, torch_grad) = ends
    assert graph == torch_graph
    np.testing.assert_allclose(value, torch_value, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, torch_grad, rtol=1e-12, atol=1e-12)


SPATIAL = [((2, 3, 4), "mean"), ((2, 3, 2, 3), "mean"), ((2, 3, 2, 3), "none"), ((2, 3, 2, 3), "sum"),
           ((2, 3, 2, 1, 2), "none"), ((2, 3, 2, 1, 2), "mean"), ((0, 3, 2, 2), "mean"), ((2, 3, 0, 2), "none")]


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("shape, reduction", SPATIAL, ids=[f"{s}-{r}" for s, r in SPATIAL])
@pytest.mark.parametrize("loss", ["nll_loss", "cross_entropy"])
def test_a_map_of_scores_records_torchs_nll_loss2d(shape, reduction, loss):
    """(N, C, H, W) is one NllLoss2DBackward0; other ranks are viewed to (N, C, 1, ·) around it, as
    torch does; weights and an ignored position included, values and gradients as torch's."""
    rng = np.random.default_rng(5)
    x, c = rng.standard_normal(shape), shape[1]
    target = rng.integers(0, c, (shape[0],) + shape[2:])
    if target.size:
        target.flat[0] = -100
    weight = rng.random(c)
    _same_loss_graph_as_torch(lambda lib, leaf: getattr(lib.nn.functional, loss)(
        leaf, lib.tensor(target), weight=lib.tensor(weight), reduction=reduction), x)


IMPLICIT_DIM = {"F.softmax(x)": "softmax", "F.log_softmax(x)": "log_softmax", "F.softmin(x)": "softmin",
                "nn.Softmax()(x)": "softmax", "nn.LogSoftmax()(x)": "log_softmax", "nn.Softmin()(x)": "softmin"}


@pytest.mark.parametrize("lib", [gradviz, pytest.param(torch, marks=needs_torch)], ids=["gradviz", "torch"])
def test_softmax_family_without_dim_warns_naming_the_function_as_torch_does(lib):
    x = lib.tensor([[1.0, 2.0, 3.0], [0.0, 5.0, 1.0]])
    for call, name in IMPLICIT_DIM.items():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = eval(call, {"F": lib.nn.functional, "nn": lib.nn, "x": x})
        assert [str(w.message) for w in caught] == [f"Implicit dimension choice for {name} has been deprecated. "
                                                    "Change the call to include dim=X as an argument."]
        expected = {"softmax": np.exp(x.numpy()), "log_softmax": np.exp(x.numpy()), "softmin": np.exp(-x.numpy())}[name]
        expected = expected / expected.sum(1, keepdims=True)
        expected = np.log(expected) if name == "log_softmax" else expected
        assert np.allclose(out.detach().numpy(), expected, atol=1e-6), call


@needs_torch
def test_normalize_and_cosine_similarity_record_what_torch_records():
    """F.normalize clamps with clamp_min (ClampMinBackward0) and writes into out=; cosine_similarity
    clones the norms and clamps them in place with no grad, so a norm below eps still passes its
    gradient (torch's kernel), and the graph shows CloneBackward0 and no clamp."""
    source = textwrap.dedent("""
        F = torch.nn.functional
        x = torch.tensor([[3e-9, 4e-9], [1.0, 2.0]], dtype=torch.float64, requires_grad=True)
        y = torch.tensor([[1.0, -1.0], [0.5, 0.5]], dtype=torch.float64, requires_grad=True)
        c = F.cosine_similarity(x, y)
        divs = [d for d, _ in c.grad_fn.next_functions[0][0].next_functions]
        print(c, [[f.name() for f, _ in d.next_functions] for d in divs])
        c.sum().backward()
        print(x.grad, y.grad)
        buf = torch.empty(2, 2, dtype=torch.float64)
        print(F.normalize(x.detach(), dim=1, out=buf) is buf, buf)
        n = F.normalize(x, dim=0)
        print(n.grad_fn.next_functions[1][0].next_functions[0][0].name())
    """)
    ours, theirs = gradviz_output(source), torch_output(source)
    assert ours == theirs
    assert "CloneBackward0" in ours[0] and "ClampMinBackward0" in ours[0]


LOSS_GRAPHS = """
def tree(fn, seen):
    if fn is None:
        return "None"
    if fn in seen:
        return fn.name() + "*"
    seen.add(fn)
    return fn.name() + "(" + ",".join(tree(f, seen) for f, _ in fn.next_functions) + ")"

torch.manual_seed(0)
F = torch.nn.functional
a = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
b = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
v = torch.randn(3, dtype=torch.float64, requires_grad=True)
y = torch.tensor([1, -1, 1, -1])
for loss in (F.pairwise_distance(a, b), F.triplet_margin_loss(a, b, b * 2, margin=0.5),
             F.triplet_margin_loss(a, b, b * 2, swap=True), F.cosine_embedding_loss(a, b, y, margin=0.2),
             F.margin_ranking_loss(v, v * 2, torch.tensor([1., -1., 1.], dtype=torch.float64), margin=0.1),
             F.hinge_embedding_loss(a, y[:, None].expand(4, 3).double(), margin=0.5),
             F.kl_div(F.log_softmax(a, 1), F.softmax(b, 1), reduction="batchmean")):
    a.grad = b.grad = v.grad = None
    loss.sum().backward()
    print(tree(loss.grad_fn, set()))
    print(loss, a.grad, b.grad, v.grad)
t = torch.tensor([0.0, 0.5, 0.5], requires_grad=True)
F.kl_div(torch.zeros(3), t, reduction="sum").backward()
print(t.grad)
"""


@needs_torch
def test_distance_losses_record_what_torch_records():
    """pairwise_distance, the margin losses and kl_div record torch's own composition: a Python number added
    or subtracted as a Scalar (AddBackward1, SubBackward1), `margin − a` and `1 − cos` as a filled tensor
    minus a tensor (SubBackward0), zeros made with zeros_like, kl_div's xlogy (nan in the target's
    gradient where the target is 0, as torch's) -- with their values and gradients."""
    ours, theirs = gradviz_output(LOSS_GRAPHS), torch_output(LOSS_GRAPHS)
    assert ours == theirs
    assert "AddBackward1" in ours[0] and "SubBackward1" in ours[0] and "XlogyBackward0" in ours[0]
