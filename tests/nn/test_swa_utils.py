"""torch.optim.swa_utils: AveragedModel (SWA and EMA averages), SWALR and update_bn, step for step
against torch 2.13 on the same float64 weights."""
import numpy as np
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch

pytestmark = needs_torch


def _run(t, steps=5):
    """Average a model whose weights are set from the same random draws each step; anneal with SWALR."""
    rng = np.random.default_rng(3)
    model = t.nn.Sequential(t.nn.Linear(3, 4), t.nn.BatchNorm1d(4), t.nn.Linear(4, 1)).double()
    swa_utils = t.optim.swa_utils
    averaged = [swa_utils.AveragedModel(model),
                swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9)),
                swa_utils.AveragedModel(model, avg_fn=swa_utils.get_ema_avg_fn(0.8), use_buffers=True),
                swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_swa_multi_avg_fn())]
    opt = t.optim.SGD(model.parameters(), lr=0.1)
    schedulers = [swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3)]
    lrs = []
    x = t.tensor(rng.standard_normal((8, 3)))
    for _ in range(steps):
        for p in model.parameters():
            p.data = t.tensor(rng.standard_normal(tuple(p.shape)))
        model(x)   # moves the BatchNorm's running statistics (buffers)
        opt.step()
        schedulers[0].step()
        lrs.append(opt.param_groups[0]["lr"])
        for m in averaged:
            m.update_parameters(model)
    swa_utils.update_bn([x[:4], (x[4:],)], averaged[0])
    weights = [[p.detach().numpy().copy() for p in list(m.parameters()) + list(m.buffers())] for m in averaged]
    return weights, lrs, averaged[0](x).detach().numpy(), schedulers[0]


def test_averaged_models_and_swalr_match_torch():
    (ours, our_lrs, our_out, our_sched), (theirs, their_lrs, their_out, their_sched) = _run(gradviz), _run(real_torch)
    assert our_lrs == their_lrs
    for mine, torchs in zip(ours, theirs):
        assert len(mine) == len(torchs)
        for a, b in zip(mine, torchs):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)   # torch's lerp kernel fuses its multiply-add
    np.testing.assert_allclose(our_out, their_out, rtol=1e-12)
    assert sorted(our_sched.state_dict()) == sorted(their_sched.state_dict())


@pytest.mark.parametrize("build", [
    lambda t: t.optim.swa_utils.get_ema_avg_fn(1.5),
    lambda t: t.optim.swa_utils.SWALR(t.optim.SGD([t.nn.Parameter(t.ones(1))], lr=0.1), 0.05, anneal_strategy="exp"),
    lambda t: t.optim.swa_utils.SWALR(t.optim.SGD([t.nn.Parameter(t.ones(1))], lr=0.1), 0.05, anneal_epochs=-1),
    lambda t: t.optim.swa_utils.AveragedModel(t.nn.Linear(1, 1), avg_fn=lambda *a: 0, multi_avg_fn=lambda *a: 0),
])
def test_errors_match_torch(build):
    with pytest.raises(Exception) as theirs:
        build(real_torch)
    with pytest.raises(type(theirs.value), match=str(theirs.value).replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
        build(gradviz)


def test_public_names_are_torchs():
    assert sorted(gradviz.optim.swa_utils.__all__) == sorted(real_torch.optim.swa_utils.__all__)
