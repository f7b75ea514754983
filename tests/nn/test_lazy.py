"""Lazy modules against torch: uninitialized parameters (printing, state_dict, torch's errors when
computed with), the first call that infers the shapes, initializes as torch does from the same
seed and turns the module into its ordinary class, load_state_dict before the first call, and a
LeNet built only of lazy layers, as an executable textbook builds its models."""
from __future__ import annotations

import copy

import gradviz
from tests.support.parity import needs_torch, same_output

pytestmark = needs_torch


def test_lazy_modules_behave_and_print_as_torchs():
    out = same_output("""
    nn = torch.nn
    m = nn.LazyLinear(4)
    print(m, m.weight, m.state_dict(), m.has_uninitialized_params())
    p = m.weight
    for f in [lambda: p.numel(), lambda: p.sum(), lambda: p + 1, lambda: p * 2, lambda: p.shape, lambda: p.size(),
              lambda: p.dtype, lambda: p.requires_grad, lambda: p.dim(), lambda: p.data, lambda: p.detach(),
              lambda: p.ndim, lambda: p.grad, lambda: sum(q.numel() for q in m.parameters())]:
        try: print(repr(f()))
        except Exception as e: print(type(e).__name__, e)
    torch.manual_seed(0)
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    y = m(torch.ones(2, 3))
    print(type(m).__name__, m, m.weight, type(m.weight).__name__, opt.param_groups[0]['params'][0] is m.weight, y)
    y.sum().backward(); opt.step(); print(m.weight)
    print(nn.LazyConv2d(8, 3, padding=1), nn.LazyBatchNorm1d(), nn.LazyInstanceNorm2d(), nn.LazyConvTranspose1d(3, 2),
          nn.LazyConv1d(2, 3, bias=False))
    b = nn.LazyBatchNorm2d(); print(b.state_dict(), b.running_mean, list(b._buffers))
    b(torch.randn(2, 3, 4, 4)); print(b, b.running_mean, b.weight)
    s = nn.Sequential(nn.LazyLinear(3))
    print(s.load_state_dict({"0.weight": torch.ones(3, 5), "0.bias": torch.zeros(3)}))
    print(s, s[0].weight)
    print(s(torch.ones(1, 5)), s)
    torch.manual_seed(1)
    net = nn.Sequential(nn.LazyConv2d(6, kernel_size=5, padding=2), nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
                        nn.LazyConv2d(16, kernel_size=5), nn.Sigmoid(), nn.AvgPool2d(kernel_size=2, stride=2),
                        nn.Flatten(), nn.LazyLinear(120), nn.Sigmoid(), nn.LazyLinear(84), nn.Sigmoid(),
                        nn.LazyLinear(10))
    X = torch.rand(size=(1, 1, 28, 28), dtype=torch.float32)
    for layer in net:
        X = layer(X)
        print(layer.__class__.__name__, 'output shape:\t', X.shape)
    print(net, X)
    c = nn.LazyConvTranspose2d(4, 3, stride=2, groups=2)
    print(c(torch.randn(1, 6, 3, 3)).shape, c)
    try:
        nn.LazyConv2d(4, 3, groups=4)(torch.randn(1, 6, 3, 3))
    except ValueError as e:
        print(e)
    try:
        nn.LazyConv2d(4, 3)(torch.randn(6, 3))
    except RuntimeError as e:
        print(e)
    i = nn.LazyInstanceNorm1d(); print(i(torch.randn(2, 3, 5)).shape, i)
    d = nn.LazyLinear(2, dtype=torch.float64); print(d(torch.ones(1, 2, dtype=torch.float64)).dtype)
    """)
    assert "<UninitializedParameter>" in out and "Linear(in_features=5, out_features=3, bias=True)" in out


def test_a_deep_copy_stays_lazy_and_a_materialized_parameter_is_the_same_object():
    layer = gradviz.nn.LazyLinear(3)
    twin = copy.deepcopy(layer)
    weight = layer.weight
    layer(gradviz.ones(2, 4))
    assert layer.weight is weight and type(weight) is gradviz.nn.Parameter and weight.shape == (3, 4)
    assert type(twin).__name__ == "LazyLinear" and repr(twin.weight) == "<UninitializedParameter>"
    twin(gradviz.ones(1, 7))
    assert twin.in_features == 7 and type(twin) is gradviz.nn.Linear


def test_a_lazy_model_saved_whole_loads_back_lazy():
    import io
    model = gradviz.nn.Sequential(gradviz.nn.LazyLinear(3), gradviz.nn.ReLU())
    buffer = io.BytesIO()
    gradviz.save(model, buffer)
    buffer.seek(0)
    loaded = gradviz.load(buffer, weights_only=False)
    assert type(loaded[0]).__name__ == "LazyLinear" and repr(loaded[0].weight) == "<UninitializedParameter>"
    assert tuple(loaded(gradviz.ones(2, 4)).shape) == (2, 3) and loaded[0].in_features == 4


def test_a_lazy_batch_norm_loaded_from_a_checkpoint_runs_and_checks_as_torchs():
    """Loaded before its first call, a LazyBatchNorm keeps num_features 0 (torch prints it so); its
    input is checked against the loaded tensors, as torch's batch_norm checks it, not against 0."""
    out = same_output("""
    nn = torch.nn
    b = nn.LazyBatchNorm2d(); b.load_state_dict(nn.BatchNorm2d(3).state_dict())
    y = b(torch.randn(2, 3, 2, 2)); print(b, b.num_features, y.shape, b.num_batches_tracked)
    for m, x in [(b, torch.randn(2, 4, 2, 2)), (nn.BatchNorm1d(3), torch.randn(2, 4)),
                 (nn.BatchNorm1d(3, track_running_stats=False), torch.randn(2, 4)),
                 (nn.BatchNorm1d(3, affine=False).eval(), torch.randn(2, 4)), (nn.BatchNorm1d(3), torch.randn(1, 3)),
                 (nn.BatchNorm1d(3, track_running_stats=False, affine=False), torch.randn(2, 4))]:
        try: print(m(x).shape)
        except Exception as e: print(type(e).__name__, e)
    """)
    assert "BatchNorm2d(0, eps=1e-05" in out and "running_mean should contain 4 elements not 3" in out
    assert "weight should contain 4 elements not 3" in out


def test_a_refused_input_leaves_the_batch_norms_count_as_it_was():
    b = gradviz.nn.BatchNorm1d(3)
    for x in (gradviz.randn(2, 4), gradviz.randn(1, 3)):
        try:
            b(x)
        except (RuntimeError, ValueError):
            pass
    assert int(b.num_batches_tracked) == 0 and b.running_mean.tolist() == [0.0, 0.0, 0.0]


def test_a_lazy_module_holds_torchs_two_hooks_until_its_first_call():
    """A load pre-hook (which materializes from a checkpoint) and a forward pre-hook, both removed by the
    first call: the hook ids a program prints after building lazy layers are torch's."""
    out = same_output("""
    nn = torch.nn
    m = nn.LazyLinear(3)
    print(len(m._load_state_dict_pre_hooks), len(m._forward_pre_hooks), m._initialize_hook.id - m._load_hook.id)
    first = torch.utils.hooks.RemovableHandle.next_id
    nn.Sequential(nn.LazyConv2d(2, 3), nn.LazyBatchNorm2d())
    print(torch.utils.hooks.RemovableHandle.next_id - first)
    m(torch.ones(1, 4))
    print(len(m._load_state_dict_pre_hooks), len(m._forward_pre_hooks), hasattr(m, "_load_hook"), type(m).__name__)
    lazy = nn.LazyLinear(3)
    lazy.load_state_dict(m.state_dict())
    print(lazy.weight.shape, len(lazy._load_state_dict_pre_hooks), type(lazy).__name__)
    """)
    assert out.splitlines() == ["1 1 1", "4", "0 0 False Linear", "torch.Size([3, 4]) 1 LazyLinear"]
