"""optim.swap_in_optimizer_params_and_state against torch.optim's: the step inside the block acts on
the given parameters and state, everything of the optimizer's own comes back after it, and the
refusals are torch's."""
import numpy as np
import pytest

import gradviz

from tests.support.parity import needs_torch, real_torch as torch

pytestmark = [pytest.mark.torch, needs_torch]


def _trained(t):
    w = t.nn.Parameter(t.tensor(np.arange(6.0).reshape(2, 3)))
    b = t.nn.Parameter(t.tensor([1.0, 2.0]))
    opt = t.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
    (w.sum() * b.sum()).backward()
    opt.step()
    return w, b, opt


def _swap_and_step(t) -> list:
    """What a user can see of one swapped-in step: inside, then the swapped tensors, then the live ones."""
    w, b, opt = _trained(t)
    sd = opt.state_dict()
    other = {"w": w.detach().clone(), "b": b.detach().clone()}
    osd = {"state": {k: {key: v.clone() for key, v in s.items()} for k, s in sd["state"].items()},
           "param_groups": [dict(g) for g in sd["param_groups"]]}
    osd["param_groups"][0]["lr"] = 1.0
    for p in other.values():
        p.grad = t.ones_like(p)
    seen = []
    with t.optim.swap_in_optimizer_params_and_state(opt, other, osd):
        seen += [opt.param_groups[0]["lr"], len(opt.state), opt.param_groups[1]["params"][0] is other["b"]]
        opt.step()
    arrays = [other["w"], other["b"], osd["state"][0]["exp_avg"], osd["state"][0]["step"],
              osd["state"][1]["exp_avg_sq"], w, b, opt.state[w]["step"]]
    seen += [a.detach().numpy().tolist() for a in arrays]
    seen += [opt.param_groups[0]["lr"], opt.param_groups[0]["params"][0] is w, sorted(opt.param_groups[1])]
    return seen


def test_swapped_in_step_matches_torch():
    assert _swap_and_step(gradviz) == _swap_and_step(torch)


BAD = [
    lambda sd: {"state": [], "param_groups": []},
    lambda sd: {"state": {}, "param_groups": {}},
    lambda sd: {"state": {}, "param_groups": [{}]},
    lambda sd: {"state": {}, "param_groups": [{}, {}]},
    lambda sd: {"state": {}, "param_groups": [{"params": [0]}, {"params": [1]}]},
    lambda sd: {"state": {}, "param_groups": [dict(g, params=[0, 1]) for g in sd["param_groups"]]},
    lambda sd: {"state": {0: 1}, "param_groups": sd["param_groups"]},
    lambda sd: {"state": {5: {}}, "param_groups": sd["param_groups"]},
    lambda sd: {"state": {}, "param_groups": [dict(g, extra=1) for g in sd["param_groups"]]},
    lambda sd: 3,
]


@pytest.mark.parametrize("bad", BAD)
def test_refusals_match_torch_and_change_nothing(bad):
    said = []
    for t in (torch, gradviz):
        w, b, opt = _trained(t)
        before = (repr(opt), [dict(g) for g in opt.param_groups])
        with pytest.raises(RuntimeError) as info:
            with t.optim.swap_in_optimizer_params_and_state(opt, {"w": w, "b": b}, bad(opt.state_dict())):
                pass
        said.append(str(info.value))
        assert (repr(opt), [dict(g) for g in opt.param_groups]) == before
    assert said[0] == said[1]


def test_fresh_optimizer_is_refused_as_torch_refuses():
    for t in (torch, gradviz):
        w = t.nn.Parameter(t.ones(2))
        with pytest.raises(RuntimeError, match="swap_in_optimizer_params_and_state requires initialized optimizer "
                                               "state."):
            with t.optim.swap_in_optimizer_params_and_state(t.optim.SGD([w], lr=0.1), {"w": w}, {}):
                pass
