"""Optimizers and learning-rate schedulers, step for step against torch.optim on the same
parameters and the same gradients; state_dict round trips; PyTorch's errors."""
import math
import warnings

import numpy as np
import pytest

import gradviz
from gradviz import optim
from gradviz.optim import lr_scheduler

from tests.support.parity import needs_torch, real_torch as torch

pytestmark = [pytest.mark.torch, needs_torch]

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("Adam", dict(lr=0.01, amsgrad=True, eps=1e-6)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, weight_decay=0.1, amsgrad=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, weight_decay=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, alpha=0.9)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, maximize=True)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5)),
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, weight_decay=0.05)),
    ("NAdam", dict()),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.95), weight_decay=0.1, momentum_decay=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("RAdam", dict()),
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.6), weight_decay=0.1)),   # ρ_t passes 5 within the steps
    ("RAdam", dict(lr=0.01, betas=(0.5, 0.6), weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adamax", dict()),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), eps=1e-3, weight_decay=0.1, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=2, weight_decay=0.1)),   # averaging from step 2
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=1.5, weight_decay=0.1, maximize=True)),
]


def _pair(dtype, shapes=((3, 4), (4,), ())):
    rng = np.random.default_rng(7)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ours = [gradviz.nn.Parameter(gradviz.tensor(a)) for a in arrays]
    theirs = [torch.nn.Parameter(torch.tensor(a)) for a in arrays]
    return ours, theirs, rng


def _run(name, kwargs, dtype, steps=6):
    """Run both optimizers on the same gradients (a fresh random gradient each step, some steps
    skipping a parameter) and compare the parameters and every state buffer after each step."""
    ours, theirs, rng = _pair(dtype)
    opt = getattr(optim, name)(ours, **kwargs)
    ref = getattr(torch.optim, name)(theirs, **kwargs)
    for step in range(steps):
        for i, (p, q) in enumerate(zip(ours, theirs)):
            if step == 2 and i == 1:            # a parameter without a gradient is skipped
                p.grad, q.grad = None, None
                continue
            g = rng.standard_normal(p.shape).astype(dtype)
            p.grad, q.grad = gradviz.tensor(g), torch.tensor(g)
        opt.step()
        ref.step()
        yield ours, theirs, opt, ref


@pytest.mark.parametrize("name,kwargs", CONFIGS)
def test_optimizer_matches_torch_float64(name, kwargs):
    for ours, theirs, opt, ref in _run(name, kwargs, np.float64):
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-13, atol=1e-15)
            mine, torchs = opt.state[p], ref.state[q]
            assert list(mine) == list(torchs)
            for key in torchs:
                np.testing.assert_allclose(np.asarray(mine[key]), torchs[key].numpy(), rtol=1e-13, atol=1e-15)
                assert mine[key].dtype.__str__() == str(torchs[key].dtype)


@pytest.mark.parametrize("name,kwargs", CONFIGS)
def test_optimizer_matches_torch_float32(name, kwargs):
    for ours, theirs, _, _ in _run(name, kwargs, np.float32):
        for p, q in zip(ours, theirs):
            assert p.dtype == gradviz.float32
            np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=2e-6, atol=1e-6)


def test_param_groups_with_decay_and_no_decay():
    """The GPT recipe: weights decay, biases and norms do not; each group keeps its own lr."""
    ours, theirs, rng = _pair(np.float64)
    groups = lambda ps: [{"params": ps[:1], "weight_decay": 0.1}, {"params": ps[1:], "weight_decay": 0.0, "lr": 0.5}]
    opt = optim.AdamW(groups(ours), lr=0.01, betas=(0.9, 0.95))
    ref = torch.optim.AdamW(groups(theirs), lr=0.01, betas=(0.9, 0.95))
    assert [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups] == \
           [{k: v for k, v in g.items() if k != "params"} for g in ref.param_groups]
    for _ in range(4):
        for p, q in zip(ours, theirs):
            g = rng.standard_normal(p.shape)
            p.grad, q.grad = gradviz.tensor(g), torch.tensor(g)
        opt.step()
        ref.step()
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-13)
    assert repr(opt) == repr(ref)


def test_add_param_group_and_state_dict_round_trip():
    ours, theirs, rng = _pair(np.float64)
    opt = optim.SGD(ours[:2], lr=0.1, momentum=0.9)
    ref = torch.optim.SGD(theirs[:2], lr=0.1, momentum=0.9)
    opt.add_param_group({"params": ours[2], "lr": 0.01})
    ref.add_param_group({"params": theirs[2], "lr": 0.01})
    for p, q in zip(ours, theirs):
        g = rng.standard_normal(p.shape)
        p.grad, q.grad = gradviz.tensor(g), torch.tensor(g)
    opt.step()
    ref.step()
    mine, torchs = opt.state_dict(), ref.state_dict()
    assert mine["param_groups"] == torchs["param_groups"]
    assert sorted(mine["state"]) == sorted(torchs["state"])
    for i in torchs["state"]:
        np.testing.assert_allclose(np.asarray(mine["state"][i]["momentum_buffer"]),
                                   torchs["state"][i]["momentum_buffer"].numpy())
    # a fresh optimizer loaded from the state continues exactly where the first one is
    fresh = optim.SGD([{"params": ours[:2]}, {"params": [ours[2]]}], lr=0.5)
    fresh.load_state_dict(mine)
    assert fresh.param_groups[1]["lr"] == 0.01 and fresh.param_groups[0]["momentum"] == 0.9
    assert fresh.state[ours[0]]["momentum_buffer"] is not opt.state[ours[0]]["momentum_buffer"]
    snapshot = [p.detach().clone() for p in ours]
    fresh.step()
    opt_params = [p.detach().clone() for p in ours]
    for p, s in zip(ours, snapshot):
        p.data = s.clone()
    opt.step()
    for p, q in zip(ours, opt_params):
        np.testing.assert_array_equal(p.detach().numpy(), q.numpy())


@pytest.mark.parametrize("build,message", [
    (lambda m, ps: m.SGD(ps, lr=-1), "Invalid learning rate: -1"),
    (lambda m, ps: m.SGD(ps, lr=0.1, momentum=-0.5), "Invalid momentum value: -0.5"),
    (lambda m, ps: m.SGD(ps, lr=0.1, nesterov=True), "Nesterov momentum requires a momentum and zero dampening"),
    (lambda m, ps: m.Adam(ps, betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    (lambda m, ps: m.AdamW(ps, eps=-1e-8), "Invalid epsilon value: -1e-08"),
    (lambda m, ps: m.RMSprop(ps, alpha=-0.1), "Invalid alpha value: -0.1"),
    (lambda m, ps: m.Adagrad(ps, lr_decay=-1), "Invalid lr_decay value: -1"),
    (lambda m, ps: m.Adadelta(ps, rho=1.5), "Invalid rho value: 1.5"),
    (lambda m, ps: m.SGD([], lr=0.1), "optimizer got an empty parameter list"),
    (lambda m, ps: m.SGD([{"params": ps[:1]}, {"params": ps[:1]}], lr=0.1),
     "some parameters appear in more than one parameter group"),
])
def test_errors_match_torch(build, message):
    ours, theirs, _ = _pair(np.float64)
    with pytest.raises(ValueError) as theirs_err:
        build(torch.optim, theirs)
    with pytest.raises(ValueError) as ours_err:
        build(optim, ours)
    assert str(ours_err.value) == str(theirs_err.value) == message


def test_type_errors_match_torch():
    ours, theirs, _ = _pair(np.float64)
    for mod, ps in ((optim, ours), (torch.optim, theirs)):
        with pytest.raises(TypeError, match="params argument given to the optimizer should be an iterable of "
                                            "Tensors or dicts, but got torch.DoubleTensor"):
            mod.SGD(ps[0], lr=0.1)
        with pytest.raises(TypeError, match="ordering of tensors in sets will change"):
            mod.SGD([{"params": set(ps)}], lr=0.1)
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            mod.SGD([ps[0] * 2], lr=0.1)


def _break_params(opt, ps):
    opt.param_groups[-1]["params"].append(5)


def _break_decay(opt, ps):
    opt.param_groups[-1]["weight_decay"] = "a"


def _break_lr(opt, ps):
    opt.param_groups[-1]["lr"] = None


def _break_state(opt, ps):
    state = opt.state[ps[-1]]
    for key in state:
        if key != "step":
            state[key] = state[key].new_zeros(5)


@pytest.mark.parametrize("name,kwargs", [
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("Adam", dict(lr=0.01, amsgrad=True)),
    ("AdamW", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5)),
    ("Adagrad", dict(lr=0.1)),
    ("Adadelta", dict()),
])
@pytest.mark.parametrize("breaking", [_break_params, _break_decay, _break_lr, _break_state])
def test_failing_step_changes_nothing(name, kwargs, breaking):
    """A step that raises has written nothing: every parameter keeps its values and _version, and
    every state its values (PyTorch may have updated the parameters before the one that failed)."""
    messages = []
    for mod in (gradviz, torch):
        ps = [mod.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True), mod.tensor([2.0, -1.0], requires_grad=True),
              mod.tensor(0.5, requires_grad=True)]
        opt = getattr(mod.optim, name)([{"params": ps[:2]}, {"params": ps[2:]}], **kwargs)
        for _ in range(2):
            opt.zero_grad()
            (ps[0].sum() * ps[1].prod() + ps[2] ** 3).backward()
            opt.step()
        breaking(opt, ps)
        before = [(p.tolist(), p._version) for p in ps]
        state = {i: {k: v.tolist() for k, v in opt.state[p].items()} for i, p in enumerate(ps)}
        with pytest.raises(Exception) as err:
            opt.step()
        messages.append((type(err.value).__name__, str(err.value)))
        if mod is gradviz:
            assert [(p.tolist(), p._version) for p in ps] == before
            assert {i: {k: v.tolist() for k, v in opt.state[p].items()} for i, p in enumerate(ps)} == state
    assert messages[0] == messages[1]


@pytest.mark.parametrize("name,kwargs", [c for c in CONFIGS if c[0] in ("Adam", "AdamW")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_group_updated_as_one_array_matches_each_alone(name, kwargs, dtype):
    """Adam and AdamW update a group's small parameters as one flat array: the same bits as each
    parameter updated alone (in a group of its own), the same state (its tensors keep their identity),
    also when a parameter skipped a step and the step counts differ."""
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype(dtype) for s in ((3, 4), (4,), (), (70, 70), (2, 3))]   # one large
    together = [gradviz.nn.Parameter(gradviz.tensor(a)) for a in arrays]
    alone = [gradviz.nn.Parameter(gradviz.tensor(a)) for a in arrays]
    opt = getattr(optim, name)(together, **kwargs)
    ref = getattr(optim, name)([{"params": [p]} for p in alone], **kwargs)
    held = {}
    for step in range(5):
        for i, (p, q) in enumerate(zip(together, alone)):
            skip = step == 2 and i == 1
            g = None if skip else rng.standard_normal(p.shape).astype(dtype)
            p.grad, q.grad = (None, None) if skip else (gradviz.tensor(g), gradviz.tensor(g))
        opt.step()
        ref.step()
        for p, q in zip(together, alone):
            assert p.detach().numpy().tobytes() == q.detach().numpy().tobytes() and p._version == q._version
            assert list(opt.state[p]) == list(ref.state[q])
            for key, value in opt.state[p].items():
                assert value.shape == ref.state[q][key].shape and value.dtype == ref.state[q][key].dtype
                assert np.asarray(value).tobytes() == np.asarray(ref.state[q][key]).tobytes()
                assert held.setdefault((id(p), key), value) is value   # updated in place, as torch's


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_failing_step_of_a_whole_group_changes_nothing(name):
    """A step whose first group (updated as one array) fails leaves every parameter and state as it was."""
    ps = [gradviz.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True), gradviz.tensor([2.0, -1.0], requires_grad=True),
          gradviz.tensor(0.5, requires_grad=True)]
    opt = getattr(optim, name)([{"params": ps[:2]}, {"params": ps[2:]}], lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        (ps[0].sum() * ps[1].prod() + ps[2] ** 3).backward()
        opt.step()
    opt.param_groups[0]["lr"] = None
    before = [(p.tolist(), p._version) for p in ps]
    state = {i: {k: v.tolist() for k, v in opt.state[p].items()} for i, p in enumerate(ps)}
    with pytest.raises(TypeError):
        opt.step()
    assert [(p.tolist(), p._version) for p in ps] == before
    assert {i: {k: v.tolist() for k, v in opt.state[p].items()} for i, p in enumerate(ps)} == state


def test_zero_grad_and_closure():
    p = gradviz.nn.Parameter(gradviz.tensor([1.0, 2.0]))
    opt = optim.SGD([p], lr=0.1)
    (p * p).sum().backward()
    grad = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is grad and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    loss = opt.step(closure)
    assert loss.item() == 5.0 and p.tolist() == pytest.approx([0.8, 1.6])
    assert p._version == 1


# -- schedulers -------------------------------------------------------------------------------------
SCHEDULERS = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.3)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=5, eta_min=0.001)),
    ("LambdaLR", dict(lr_lambda=lambda epoch: 0.95 ** epoch / (1 + epoch))),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=13)),
    ("OneCycleLR", dict(max_lr=[0.5, 0.2], epochs=3, steps_per_epoch=4, anneal_strategy="linear",
                        three_phase=True)),
    ("MultiplicativeLR", dict(lr_lambda=lambda epoch: 0.95 - 0.01 * epoch)),
    ("ConstantLR", dict(factor=0.3, total_iters=4)),
    ("ConstantLR", dict()),
    ("LinearLR", dict(start_factor=0.1, total_iters=6)),
    ("LinearLR", dict(start_factor=1.0, end_factor=0.2, total_iters=9)),
    ("PolynomialLR", dict(total_iters=8, power=2.0)),
    ("PolynomialLR", dict()),
    ("CosineAnnealingWarmRestarts", dict(T_0=3, T_mult=2, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", dict(T_0=4)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3)),
    ("CyclicLR", dict(base_lr=[0.01, 0.02], max_lr=0.2, step_size_up=2, step_size_down=5, mode="triangular2")),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9,
                      base_momentum=0.7, max_momentum=0.85)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=4, scale_fn=lambda x: 0.5 ** x,
                      scale_mode="iterations", cycle_momentum=False)),
]


@pytest.mark.parametrize("name,kwargs", SCHEDULERS)
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_scheduler_matches_torch(name, kwargs, opt_name):
    ours, theirs, rng = _pair(np.float64)
    groups = lambda ps: [{"params": ps[:2]}, {"params": ps[2:], "lr": 0.05}]
    extra = dict(momentum=0.9) if opt_name == "SGD" else {}
    opt = getattr(optim, opt_name)(groups(ours), lr=0.1, **extra)
    ref = getattr(torch.optim, opt_name)(groups(theirs), lr=0.1, **extra)
    sched = getattr(lr_scheduler, name)(opt, **kwargs)
    tsched = getattr(torch.optim.lr_scheduler, name)(ref, **kwargs)
    assert sched.get_last_lr() == tsched.get_last_lr()
    steps = 12 if name == "OneCycleLR" else 14
    for _ in range(steps):
        for p, q in zip(ours, theirs):
            g = rng.standard_normal(p.shape)
            p.grad, q.grad = gradviz.tensor(g), torch.tensor(g)
        opt.step()
        ref.step()
        sched.step()
        tsched.step()
        assert sched.get_last_lr() == tsched.get_last_lr()
        for g, h in zip(opt.param_groups, ref.param_groups):
            assert {k: v for k, v in g.items() if k != "params"} == {k: v for k, v in h.items() if k != "params"}
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12)


def test_scheduler_warnings_and_errors_match_torch():
    said = []
    for mod in (gradviz, torch):
        p = mod.nn.Parameter(mod.ones(2))
        opt = mod.optim.SGD([p], lr=0.1)
        sched = mod.optim.lr_scheduler.StepLR(opt, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched.step()
        said.append([str(w.message) for w in caught])
        assert said[-1][0].startswith("Detected call of `lr_scheduler.step()` before `optimizer.step()`")
        with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
            sched.get_lr()
        with pytest.raises(TypeError, match="list is not an Optimizer"):
            mod.optim.lr_scheduler.StepLR([p], 2)
        with pytest.raises(ValueError, match="You must define either total_steps OR"):
            mod.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0)
        one = mod.optim.lr_scheduler.OneCycleLR(mod.optim.SGD([p], lr=0.1, momentum=0.9), max_lr=1.0, total_steps=2)
        one.optimizer.step()
        one.step()
        one.step()
        with pytest.raises(ValueError, match="Tried to step 3 times. The specified number of total steps is 2"):
            one.step()
    assert said[0] == said[1]


def test_scheduler_state_dict_resumes():
    p = gradviz.nn.Parameter(gradviz.ones(2))
    opt = optim.SGD([p], lr=1.0)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=10)
    for _ in range(3):
        opt.step()
        sched.step()
    state = sched.state_dict()
    assert "optimizer" not in state and state["last_epoch"] == 3
    opt2 = optim.SGD([p], lr=1.0)
    opt2.load_state_dict(opt.state_dict())
    sched2 = lr_scheduler.CosineAnnealingLR(opt2, T_max=10, last_epoch=2)
    sched2.load_state_dict(state)
    opt.step()
    opt2.step()
    sched.step()
    sched2.step()
    assert sched2.get_last_lr() == sched.get_last_lr()
    assert sched.get_last_lr()[0] == pytest.approx((1 + math.cos(math.pi * 4 / 10)) / 2)


@pytest.mark.parametrize("default", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", [c for c in CONFIGS if c[0] != "SGD"])
def test_step_counter_dtype_follows_the_default_dtype(default, name, kwargs):
    """torch keeps state['step'] in float64 while the default dtype is float64 (float32 otherwise)."""
    saved = gradviz.get_default_dtype(), torch.get_default_dtype()
    gradviz.set_default_dtype(getattr(gradviz, default))
    torch.set_default_dtype(getattr(torch, default))
    try:
        for _, _, opt, ref in _run(name, kwargs, np.float64, steps=2):
            mine, torchs = opt.state_dict()["state"], ref.state_dict()["state"]
            assert list(mine) == list(torchs)
            for i in torchs:
                assert str(mine[i]["step"].dtype) == str(torchs[i]["step"].dtype) == f"torch.{default}"
                assert float(mine[i]["step"]) == float(torchs[i]["step"])
    finally:
        gradviz.set_default_dtype(saved[0])
        torch.set_default_dtype(saved[1])


@pytest.mark.parametrize("kwargs", [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.1, maximize=True)])
def test_optimizer_state_dict_lists_only_parameters_with_state(kwargs):
    """Plain SGD keeps no per-parameter state, so torch's state_dict()['state'] stays empty."""
    for _, _, opt, ref in _run("SGD", kwargs, np.float64, steps=3):
        mine, torchs = opt.state_dict()["state"], ref.state_dict()["state"]
        assert list(mine) == list(torchs)
        assert len(opt.state) == len(ref.state)
        for i in torchs:
            assert list(mine[i]) == list(torchs[i])


@pytest.mark.parametrize("name,kwargs", [
    ("StepLR", dict(step_size=2)), ("MultiStepLR", dict(milestones=[1, 3])), ("ExponentialLR", dict(gamma=0.9)),
    ("CosineAnnealingLR", dict(T_max=4)), ("LambdaLR", dict(lr_lambda=lambda e: 0.5 ** e)),
    ("OneCycleLR", dict(max_lr=0.1, total_steps=5)), ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.9)),
    ("ConstantLR", dict()), ("LinearLR", dict()), ("PolynomialLR", dict()),
    ("CosineAnnealingWarmRestarts", dict(T_0=2)), ("CyclicLR", dict(base_lr=0.01, max_lr=0.1)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, mode="exp_range")),
])
def test_scheduler_state_dict_has_torchs_keys(name, kwargs):
    """A scheduler's state_dict() names the same attributes, in the same order, as torch's."""
    ours = getattr(lr_scheduler, name)(optim.SGD([gradviz.nn.Parameter(gradviz.ones(2))], lr=0.1, momentum=0.9),
                                       **kwargs)
    theirs = getattr(torch.optim.lr_scheduler, name)(
        torch.optim.SGD([torch.nn.Parameter(torch.ones(2))], lr=0.1, momentum=0.9), **kwargs)
    for _ in range(2):
        ours.optimizer.step(), theirs.optimizer.step()
        ours.step(), theirs.step()
        assert list(ours.state_dict()) == list(theirs.state_dict())
        assert ours.state_dict()["_get_lr_called_within_step"] is False


# -- LBFGS: step(closure) runs the quasi-Newton iterations, with or without the strong-Wolfe search --------
def _lbfgs(t, steps=3, **kwargs):
    rng = np.random.default_rng(1)
    a = t.tensor(rng.standard_normal((6, 6)) + 4 * np.eye(6))
    w = t.nn.Parameter(t.tensor(rng.standard_normal(6)))
    b = t.nn.Parameter(t.tensor(rng.standard_normal(2)))
    opt = t.optim.LBFGS([w, b], **kwargs)

    def closure():
        opt.zero_grad()
        loss = ((a @ w - 1) ** 2).sum() + (w ** 4).sum() * 0.1 + ((b - 2) ** 2).sum() + 0.5 * (w[:2] * b).sum()
        loss.backward()
        return loss
    losses = [opt.step(closure).detach().item() for _ in range(steps)]
    state = opt.state[w]
    return losses, w.detach().numpy(), b.detach().numpy(), list(state), state["func_evals"], state["n_iter"], opt


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad=True")   # float(loss), in torch too
@pytest.mark.parametrize("kwargs", [dict(), dict(line_search_fn="strong_wolfe"),
                                    dict(lr=0.5, max_iter=5, history_size=3),
                                    dict(history_size=2, line_search_fn="strong_wolfe", max_iter=7)])
def test_lbfgs_matches_torch(kwargs):
    ours, theirs = _lbfgs(gradviz, **kwargs), _lbfgs(torch, **kwargs)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-9)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-7, atol=1e-9)
    assert ours[3:6] == theirs[3:6]   # the state's keys (in torch's order) and its counts of evaluations
    assert ours[6].defaults == theirs[6].defaults


def test_lbfgs_errors_match_torch():
    for t in (gradviz, torch):
        w = t.nn.Parameter(t.ones(2))
        with pytest.raises(ValueError, match="Invalid learning rate: -1"):
            t.optim.LBFGS([w], lr=-1)
        with pytest.raises(ValueError, match=r"LBFGS doesn't support per-parameter options \(parameter groups\)"):
            t.optim.LBFGS([{"params": [w]}, {"params": [t.nn.Parameter(t.ones(1))]}])
        opt = t.optim.LBFGS([w], line_search_fn="wolfe")
        w.grad = t.ones(2)
        with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
            opt.step(lambda: (w * w).sum().detach())


def test_optim_public_names_are_torchs():
    """dir(gradviz.optim) is dir(torch.optim) but for what gradviz leaves out (listed on docs/fidelity.md)."""
    left_out = {"SparseAdam"}
    public = {n for n in dir(gradviz.optim) if not n.startswith("_")}
    assert public == {n for n in dir(torch.optim) if not n.startswith("_")} - left_out


def test_optim_all_is_torchs():
    """`from torch.optim import *` brings what torch's __all__ lists, in its order, but SparseAdam."""
    assert gradviz.optim.__all__ == [n for n in torch.optim.__all__ if n != "SparseAdam"]
    namespace = {}
    exec("from gradviz.optim import *", namespace)
    assert {n for n in namespace if n != "__builtins__"} == set(gradviz.optim.__all__)



@pytest.mark.parametrize("name,kwargs", [("ConstantLR", dict(factor=0.5, total_iters=3)),
                                         ("LinearLR", dict(start_factor=0.25, total_iters=4)),
                                         ("PolynomialLR", dict(total_iters=5, power=1.5))])
def test_scheduler_closed_form_matches_torch(name, kwargs):
    """step(epoch) takes the closed form (with torch's deprecation warning) and lands on torch's rates."""
    scheds = [getattr(L.optim.lr_scheduler, name)(L.optim.SGD([L.nn.Parameter(L.ones(2))], lr=0.1), **kwargs)
              for L in (gradviz, torch)]
    for epoch in (2, 7, 3):
        for sched in scheds:
            sched.optimizer.step()
            with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step\\(\\)` was not necessary"):
                sched.step(epoch)
        assert scheds[0].get_last_lr() == scheds[1].get_last_lr()


@pytest.mark.parametrize("make", [
    lambda L, o: L.optim.lr_scheduler.ConstantLR(o, factor=1.5),
    lambda L, o: L.optim.lr_scheduler.ConstantLR(o, factor=-0.1),
    lambda L, o: L.optim.lr_scheduler.LinearLR(o, start_factor=0),
    lambda L, o: L.optim.lr_scheduler.LinearLR(o, end_factor=1.2),
    lambda L, o: L.optim.lr_scheduler.MultiplicativeLR(o, lr_lambda=0.9),
    lambda L, o: L.optim.lr_scheduler.MultiplicativeLR(o, lr_lambda=[lambda e: 1.0, lambda e: 1.0]),
    lambda L, o: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda L, o: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2.0),
    lambda L, o: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda L, o: L.optim.lr_scheduler.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
    lambda L, o: L.optim.lr_scheduler.ChainedScheduler([]),
    lambda L, o: L.optim.lr_scheduler.ChainedScheduler([L.optim.lr_scheduler.ReduceLROnPlateau(o)]),
    lambda L, o: L.optim.lr_scheduler.ChainedScheduler([object()], optimizer=o),
    lambda L, o: L.optim.lr_scheduler.SequentialLR(o, [], milestones=[]),
    lambda L, o: L.optim.lr_scheduler.CyclicLR(o, 0.01, 0.1, mode="triangle"),
    lambda L, o: L.optim.lr_scheduler.CyclicLR(o, [0.01, 0.02], 0.1),
    lambda L, o: L.optim.lr_scheduler.CyclicLR(L.optim.Adagrad([L.nn.Parameter(L.ones(1))]), 0.01, 0.1),
    lambda L, o: L.optim.lr_scheduler.SequentialLR(o, [L.optim.lr_scheduler.ConstantLR(o)], milestones=[2]),
    lambda L, o: L.optim.lr_scheduler.SequentialLR(
        o, [L.optim.lr_scheduler.ConstantLR(L.optim.SGD([L.nn.Parameter(L.ones(1))], lr=0.1))], milestones=[]),
])
def test_new_scheduler_errors_match_torch(make):
    said = []
    for L in (gradviz, torch):
        with pytest.raises((ValueError, TypeError)) as info:
            make(L, L.optim.SGD([L.nn.Parameter(L.ones(2))], lr=0.1))
        said.append((type(info.value), str(info.value)))
    assert said[0] == said[1]


def _step_both(ours, theirs, steps):
    """Step two schedulers (and their optimizers) side by side; their rates must agree at every step."""
    assert ours.get_last_lr() == theirs.get_last_lr()
    for _ in range(steps):
        for s in (ours, theirs):
            s.optimizer.step()
            s.step()
        assert ours.get_last_lr() == theirs.get_last_lr()
        assert ours.optimizer.param_groups[0]["lr"] == theirs.optimizer.param_groups[0]["lr"]


def _chain(L):
    opt = L.optim.SGD([L.nn.Parameter(L.ones(2))], lr=0.1, momentum=0.9)
    sched = L.optim.lr_scheduler
    return sched.ChainedScheduler([sched.ConstantLR(opt, factor=0.5, total_iters=2),
                                   sched.ExponentialLR(opt, gamma=0.9)])


def test_chained_scheduler_matches_torch():
    """The factors of its schedulers multiply each step; state_dict holds each one's, in torch's order."""
    ours, theirs = _chain(gradviz), _chain(torch)
    _step_both(ours, theirs, 6)
    mine, torchs = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(torchs)
    assert [list(d) for d in mine["_schedulers"]] == [list(d) for d in torchs["_schedulers"]]
    again = _chain(gradviz)
    again.load_state_dict(mine)
    assert again.get_last_lr() == ours.get_last_lr() and again._schedulers[1].last_epoch == 6


def test_warm_restarts_fractional_and_closed_epochs_match_torch():
    scheds = [L.optim.lr_scheduler.CosineAnnealingWarmRestarts(L.optim.SGD([L.nn.Parameter(L.ones(2))], lr=0.1),
                                                                T_0=3, T_mult=2) for L in (gradviz, torch)]
    for epoch in (0.5, 1.25, 4, 11, 2.75, 30):
        for s in scheds:
            s.optimizer.step()
            s.step(epoch)
        assert scheds[0].get_last_lr() == scheds[1].get_last_lr()
        assert (scheds[0].T_cur, scheds[0].T_i, scheds[0].last_epoch) == (scheds[1].T_cur, scheds[1].T_i,
                                                                          scheds[1].last_epoch)




def _sequence(L):
    opt = L.optim.SGD([L.nn.Parameter(L.ones(2))], lr=0.1, momentum=0.9)
    sched = L.optim.lr_scheduler
    parts = [sched.LinearLR(opt, start_factor=0.1, total_iters=3), sched.ExponentialLR(opt, gamma=0.9),
             sched.CosineAnnealingLR(opt, T_max=4)]
    return sched.SequentialLR(opt, schedulers=parts, milestones=[3, 7])


def test_sequential_lr_matches_torch():
    """Each scheduler takes over at its milestone from its own epoch 0, as torch's (warm-up then decay)."""
    ours, theirs = _sequence(gradviz), _sequence(torch)
    _step_both(ours, theirs, 12)
    mine, torchs = ours.state_dict(), theirs.state_dict()
    assert list(mine) == list(torchs) and mine["last_epoch"] == torchs["last_epoch"]
    assert [list(d) for d in mine["_schedulers"]] == [list(d) for d in torchs["_schedulers"]]



def test_lr_scheduler_all_is_torchs():
    assert lr_scheduler.__all__ == torch.optim.lr_scheduler.__all__
    assert all(isinstance(getattr(lr_scheduler, n), type) for n in lr_scheduler.__all__)
