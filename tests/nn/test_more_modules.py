"""The smaller names learners' programs reach for, against torch: nn.ParameterDict, nn.PReLU,
nn.Unflatten, nn.DataParallel (on a machine without an accelerator it wraps the module and
calls it), nn.utils.skip_init, nn.init.orthogonal_ and LSTM/GRU/RNN.flatten_parameters()."""
from __future__ import annotations

import textwrap

import pytest

import gradviz
from tests.support.parity import gradviz_output, needs_torch, torch_output

pytestmark = needs_torch


def same_output(source: str) -> str:
    source = textwrap.dedent(source)
    ours, theirs = gradviz_output(source), torch_output(source)
    assert ours == theirs
    return ours[0]


def test_parameter_dict():
    out = same_output("""
    from collections import OrderedDict
    nn = torch.nn
    torch.manual_seed(0)
    pd = nn.ParameterDict({"b": nn.Parameter(torch.randn(2, 3)), "a": torch.ones(4)})
    pd["c"] = nn.Parameter(torch.zeros(1, dtype=torch.float64))
    pd.update([("d", torch.ones(2))])
    pd["e"] = "not a tensor"
    print(pd, len(pd), list(pd), "a" in pd, type(pd["a"]).__name__, pd["a"].requires_grad)
    print(list(pd.keys()), [k for k, _ in pd.items()], pd.get("zz", 5), list(reversed(pd)))
    print([n for n, _ in pd.named_parameters()], list(pd.state_dict()))
    print(pd.pop("d"), pd.popitem()[0], list(pd), pd.setdefault("f", torch.ones(1)), list(pd))
    both = pd | nn.ParameterDict(OrderedDict([("z", torch.ones(1)), ("y", torch.ones(2))]))
    print(list(both), type(both).__name__, list(pd.copy()), list(pd.fromkeys(["x", "w"], torch.ones(1))))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.params = nn.ParameterDict({"left": nn.Parameter(torch.randn(5, 10)),
                                            "right": nn.Parameter(torch.randn(5, 10))})

        def forward(self, x, choice):
            return self.params[choice].mv(x)

    model = Model()
    model("left" and torch.ones(10), "right").sum().backward()
    print(model, model.params["right"].grad.sum(), model.params["left"].grad)
    pd.clear()
    print(pd, len(pd))
    for bad in (lambda: pd.update(3), lambda: pd.update([(1, 2, 3)]), lambda: pd.update([3]),
                lambda: pd.__setitem__(1, torch.ones(1)), lambda: pd(torch.ones(1))):
        try:
            bad()
        except (TypeError, ValueError, RuntimeError) as e:
            print(type(e).__name__, e)
    """)
    assert "ParameterDict(" in out


def test_prelu_and_unflatten():
    same_output("""
    nn = torch.nn
    act, per_channel = nn.PReLU(), nn.PReLU(3, init=0.1)
    print(act, per_channel, act.weight, list(per_channel.state_dict()))
    x = torch.linspace(-2, 2, 12).reshape(2, 3, 2).requires_grad_()
    y = per_channel(x)
    y.sum().backward()
    print(y, y.grad_fn.name(), per_channel.weight.grad, x.grad)
    un = nn.Unflatten(1, (2, 5))
    z = un(torch.arange(20.).reshape(2, 10))
    print(un, z.shape, z.grad_fn, nn.Unflatten(-1, [2, 2]), nn.Sequential(nn.Flatten(), nn.Unflatten(1, (3, 2)))(x).shape)
    for bad in (lambda: nn.Unflatten(1, 6), lambda: nn.Unflatten(1, (2, 3.0)), lambda: nn.Unflatten(1.0, (2, 3))):
        try:
            bad()
        except TypeError as e:
            print(e)
    """)


def test_data_parallel_wraps_and_calls_the_module():
    same_output("""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 1))
    if torch.cuda.device_count() > 1:
        print("Let's use", torch.cuda.device_count(), "GPUs!")
    wrapped = nn.DataParallel(model)
    out = wrapped(torch.ones(5, 3))
    out.sum().backward()
    print(wrapped, wrapped.device_ids, wrapped.module is model, list(wrapped.state_dict()))
    print(out.squeeze(), model[0].bias.grad, type(wrapped).__module__.replace("torch", "gradviz"))
    print(isinstance(wrapped, nn.Module), [n for n, _ in wrapped.named_parameters()][:2])
    """)


def test_skip_init_draws_no_random_numbers_and_leaves_the_values_to_the_caller():
    same_output("""
    nn = torch.nn
    torch.manual_seed(0)
    layer = nn.utils.skip_init(nn.Linear, 5, 2, bias=False)
    after = torch.rand(3)
    torch.manual_seed(0)
    print(torch.equal(after, torch.rand(3)), layer, layer.weight.shape, layer.weight.requires_grad)
    nn.init.orthogonal_(layer.weight)
    print(torch.allclose(layer.weight @ layer.weight.T, torch.eye(2), atol=1e-6))
    m = nn.utils.skip_init(nn.Linear, in_features=6, out_features=1)
    print(m, [tuple(p.shape) for p in m.parameters()])
    try:
        nn.utils.skip_init(nn.ReLU)
    except RuntimeError as e:
        print(e)
    try:
        nn.utils.skip_init(int)
    except RuntimeError as e:
        print(e)
    """)


@pytest.mark.parametrize("shape,gain", [((3, 5), 2.0), ((5, 3), 1.0), ((4, 2, 2), 1.0), ((1, 1), 0.5)])
def test_orthogonal_init_draws_torchs_matrix(shape, gain):
    out = same_output(f"""
    torch.manual_seed(0)
    w = torch.empty{shape}
    print(torch.nn.init.orthogonal_(w, gain={gain}) is w, w)
    g = torch.Generator().manual_seed(3)
    print(torch.nn.init.orthogonal_(torch.empty{shape}, generator=g))
    """)
    assert "True" in out


def test_orthogonal_init_errors_and_empty_tensors():
    same_output("""
    try:
        torch.nn.init.orthogonal_(torch.empty(3))
    except ValueError as e:
        print(e)
    print(torch.nn.init.orthogonal_(torch.empty(0, 3)).shape)
    """)


def test_flatten_parameters_is_a_no_op_without_cudnn():
    same_output("""
    torch.manual_seed(0)
    for rnn in (torch.nn.LSTM(3, 4, 2), torch.nn.GRU(3, 4), torch.nn.RNN(3, 4, batch_first=True)):
        before = [p.clone() for p in rnn.parameters()]
        print(rnn.flatten_parameters(), all(torch.equal(a, b) for a, b in zip(before, rnn.parameters())))
    """)


def test_to_empty_keeps_the_parameter_objects():
    layer = gradviz.nn.Linear(3, 2)
    weight = layer.weight
    assert layer.to_empty(device="cpu") is layer and layer.weight is weight and weight.shape == (2, 3)
