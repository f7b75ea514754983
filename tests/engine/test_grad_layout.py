"""A leaf's first .grad is laid out as torch's gradient layout contract says (as the leaf: C order for a
contiguous one), however the gradient reaching it was laid out, so `p.grad.view(-1)` (LBFGS's flat
gradient) works as in torch; and float() of a tensor that requires grad warns only with grad mode on."""
import pytest

from tests.support.parity import needs_torch, same_output

pytestmark = [pytest.mark.torch, needs_torch]


def test_a_gradient_summed_from_transposed_paths_is_contiguous_as_in_torch():
    same_output("""
    torch.manual_seed(1)
    net = torch.nn.Sequential(torch.nn.Linear(1, 6), torch.nn.Tanh(), torch.nn.Linear(6, 6), torch.nn.Tanh(),
                              torch.nn.Linear(6, 1)).double()
    x = torch.linspace(0, 1, 8, dtype=torch.float64).view(-1, 1).requires_grad_(True)
    u = net(x)
    u_x = torch.autograd.grad(u, x, torch.ones_like(u), create_graph=True)[0]
    u_xx = torch.autograd.grad(u_x, x, torch.ones_like(u_x), create_graph=True)[0]
    ((u_xx ** 2).mean() + (net(torch.tensor([[0.0], [1.0]], dtype=torch.float64)) ** 2).mean()).backward()
    for name, p in net.named_parameters():
        if p.grad is not None and p.grad.dim() == 2 and min(p.grad.shape) > 1:
            print(name, p.grad.is_contiguous(), p.grad.stride(), p.grad.view(-1).shape)
    w = torch.ones(3, 2, dtype=torch.float64).t().detach().requires_grad_()   # a transposed leaf keeps its layout
    (w * torch.arange(6.0, dtype=torch.float64).view(2, 3)).sum().backward()
    print(w.grad.stride(), w.grad)
    """)


def test_float_of_a_tensor_that_requires_grad_warns_only_with_grad_mode_on():
    same_output("""
    t = torch.ones(1, requires_grad=True) * 2
    with torch.no_grad():
        print(float(t))
    w = torch.ones(2, requires_grad=True)
    opt = torch.optim.LBFGS([w], max_iter=3)
    def closure():
        opt.zero_grad()
        loss = ((w - 3) ** 2).sum()
        loss.backward()
        return loss
    print(opt.step(closure))
    """)
