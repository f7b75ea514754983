# A two-layer MLP trained with backprop written by hand: each gradient is stored on its tensor as
# x.g (a fast.ai-style course), checked against autograd; torch.range and the documented aliases.
import torch

torch.manual_seed(0)
x = torch.randn(64, 5)
y = (x[:, :1] * 2 - x[:, 1:2]).sin()
w1, b1 = torch.randn(5, 16) / 5 ** 0.5, torch.zeros(16)
w2, b2 = torch.randn(16, 1) / 4, torch.zeros(1)


def lin_grad(inp, out, w, b):
    inp.g = out.g @ w.t()
    w.g = inp.t() @ out.g
    b.g = out.g.sum(0)


def forward_and_backward(inp, targ):
    l1 = inp @ w1 + b1
    l2 = l1.clamp_min(0.)
    out = l2 @ w2 + b2
    diff = out[:, 0] - targ[:, 0]
    loss = diff.pow(2).mean()
    out.g = 2. * diff[:, None] / inp.shape[0]
    lin_grad(l2, out, w2, b2)
    l1.g = (l1 > 0).float() * l2.g
    lin_grad(inp, l1, w1, b1)
    return loss


for step in range(5):
    loss = forward_and_backward(x, y)
    for p in (w1, b1, w2, b2):
        p -= 0.1 * p.g
    print(f"step {step}: loss {loss.item():.6f}, |w1.g| {w1.g.norm():.6f}, has g: {hasattr(b2, 'g')}")

params = [p.clone().requires_grad_() for p in (w1, b1, w2, b2)]
out = (x @ params[0] + params[1]).clamp_min(0.) @ params[2] + params[3]
out[:, 0].sub(y[:, 0]).pow(2).mean().backward()
forward_and_backward(x, y)
print([torch.allclose(p.grad, q.g, atol=1e-6) for p, q in zip(params, (w1, b1, w2, b2))])

r = torch.range(1, 4)
print(r, r.dtype, torch.range(0, 1, 0.25))
a, b = torch.tensor([1., 2., 3.]), torch.tensor([3., 2., 1.])
print(torch.multiply(a, b), torch.subtract(a, b), torch.divide(a, b), torch.true_divide(a, 2))
print(torch.greater(a, b), torch.less_equal(a, b), torch.not_equal(a, b), torch.negative(a), torch.absolute(-a))
print(a.multiply(b), a.greater_equal(b), a.clone().multiply_(2), a.clone().floor_divide_(2))
