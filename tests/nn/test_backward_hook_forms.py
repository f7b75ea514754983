"""Module backward hooks beyond register_full_backward_hook, against torch: backward pre-hooks
(which may replace grad_output), the deprecated non-full register_backward_hook (on the output's
own grad_fn, with torch's FutureWarnings), the hooks torch.nn.modules.module registers for every
module, and the in-place write into a hooked module's output that torch refuses (the output of
a custom Function, tests/engine/test_custom_function.py)."""
import pytest

import gradviz
from tests.support.parity import needs_torch, same_output

pytestmark = [pytest.mark.torch, needs_torch]

NET = """
import numpy as np
torch.manual_seed(0)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(4, 3)
        self.r = torch.nn.ReLU()
        self.l2 = torch.nn.Linear(3, 1)
    def forward(self, x):
        return self.l2(self.r(self.l1(x)))
net = Net().double()
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.tensor(np.linspace(-0.5, 0.7, p.numel()).reshape(tuple(p.shape)) * (i + 1)))
x = torch.tensor(np.linspace(-2, 2, 8).reshape(2, 4), requires_grad=True)
"""


def test_backward_pre_hook_sees_and_may_replace_grad_output():
    same_output(NET, """
    calls = []
    def pre(m, gout):
        calls.append(("pre", type(m).__name__, tuple(gout[0].shape)))
        return (gout[0] * 3,)
    h = net.l2.register_full_backward_pre_hook(pre)
    net.r.register_full_backward_pre_hook(lambda m, gout: calls.append(("pre", "ReLU", round(gout[0].sum().item(), 9))),
                                          prepend=True)
    net(x).sum().backward()
    print(calls, x.grad)
    h.remove()
    x.grad = None
    net(x).sum().backward()
    print(x.grad)
    net.l1.register_full_backward_pre_hook(lambda m, gout: (gout[0], gout[0]))
    try:
        net(x).sum().backward()
    except RuntimeError as e:
        print(e)
    """)


def test_backward_pre_hook_alone_warns_when_no_input_needs_a_gradient():
    same_output(NET, """
    seen = []
    net.l1.register_full_backward_pre_hook(lambda m, gout: seen.append(gout[0].shape))
    net(x.detach()).sum().backward()
    print(seen)
    """)


def test_non_full_backward_hook_gets_the_last_nodes_gradients_and_torchs_warning():
    same_output(NET, """
    got = []
    net.l2.register_backward_hook(lambda m, gi, go: got.append(([None if g is None else tuple(g.shape) for g in gi],
                                                                 [tuple(g.shape) for g in go])))
    net.r.register_backward_hook(lambda m, gi, go: got.append((round(gi[0].sum().item(), 9), round(go[0].sum().item(), 9))))
    net(x).sum().backward()
    print(got)
    try:
        net.l2.register_full_backward_hook(lambda *a: None)
    except RuntimeError as e:
        print(e)
    net.l1.register_full_backward_hook(lambda *a: None)
    try:
        net.l1.register_backward_hook(lambda *a: None)
    except RuntimeError as e:
        print(e)
    """)


def test_non_full_backward_hook_may_replace_the_nodes_gradients():
    same_output(NET, """
    net.r.register_backward_hook(lambda m, gi, go: (gi[0] * 0,))
    net(x).sum().backward()
    print(x.grad, net.l1.weight.grad)
    """)


def test_hooks_for_every_module_run_before_each_modules_own():
    same_output(NET, """
    mm = torch.nn.modules.module
    seen = []
    handles = [mm.register_module_forward_pre_hook(lambda m, a: seen.append("pre " + type(m).__name__)),
               mm.register_module_forward_hook(lambda m, a, o: seen.append(type(m).__name__)),
               mm.register_module_full_backward_pre_hook(lambda m, go: seen.append("bpre " + type(m).__name__)),
               mm.register_module_full_backward_hook(lambda m, gi, go: seen.append("bwd " + type(m).__name__))]
    net.l2.register_forward_hook(lambda m, a, o: seen.append("own"))
    try:
        mm.register_module_backward_hook(lambda *a: None)
    except RuntimeError as e:
        print(e)
    net(x).sum().backward()
    for h in handles:
        h.remove()
    print(seen)
    seen.clear()
    net(x)
    print(seen)
    """)


def test_inplace_write_into_a_hooked_modules_output_is_refused():
    same_output("""
    m = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU(inplace=True))
    m[0].register_full_backward_hook(lambda *a: None)
    try:
        m(torch.ones(3, 2, requires_grad=True))
    except RuntimeError as e:
        print(e)
    """)


def test_the_global_tables_are_torchs_module_functions():
    from gradviz.nn.modules import module
    names = [n for n in dir(module) if n.startswith("register_module_")]
    assert names == ["register_module_backward_hook", "register_module_forward_hook",
                     "register_module_forward_pre_hook", "register_module_full_backward_hook",
                     "register_module_full_backward_pre_hook"]
    assert gradviz.nn.Module._global_hooks_registered in (True, False)
