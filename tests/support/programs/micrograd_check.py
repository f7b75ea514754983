# micrograd's sanity checks against PyTorch: the lecture's neuron (torch.Tensor([2.0]).double(),
# requires_grad set after the tensor is made, o.data.item(), x.grad.item()), test_engine.py's
# test_sanity_check and test_more_ops, and a small MLP's gradients compared value by value.
import math
import random

import torch

x1 = torch.Tensor([2.0]).double()
x1.requires_grad = True
x2 = torch.Tensor([0.0]).double()
x2.requires_grad = True
w1 = torch.Tensor([-3.0]).double()
w1.requires_grad = True
w2 = torch.Tensor([1.0]).double()
w2.requires_grad = True
b = torch.Tensor([6.8813735870195432]).double()
b.requires_grad = True
n = x1 * w1 + x2 * w2 + b
o = torch.tanh(n)

print(o.data.item())
o.backward()

print("---")
print("x2", x2.grad.item())
print("w2", w2.grad.item())
print("x1", x1.grad.item())
print("w1", w1.grad.item())
print(x1, x1.dtype, o, o.grad_fn, o.item(), n.data, b.grad, type(x2.grad.item()))
print(torch.Tensor([2.0]), torch.Tensor([2.0]).dtype, torch.Tensor([2.0]).double().requires_grad)
print(torch.Tensor(2, 3).shape, torch.Tensor([[1, 2], [3, 4]]).dtype, torch.tensor([1, 2]).double())

# test_engine.py: test_sanity_check
x = torch.Tensor([-4.0]).double()
x.requires_grad = True
z = 2 * x + 2 + x
q = z.relu() + z * x
h = (z * z).relu()
y = h + q + q * x
y.backward()
xpt, ypt = x, y
print(ypt.data.item(), xpt.grad.item(), ypt.grad_fn, z.grad_fn, q.grad_fn)

# test_engine.py: test_more_ops
a = torch.Tensor([-4.0]).double()
b = torch.Tensor([2.0]).double()
a.requires_grad = True
b.requires_grad = True
c = a + b
d = a * b + b ** 3
c = c + c + 1
c = c + 1 + c + (-a)
d = d + d * 2 + (b + a).relu()
d = d + 3 * d + (b - a).relu()
e = c - d
f = e ** 2
g = f / 2.0
g = g + 10.0 / f
g.backward()
apt, bpt, gpt = a, b, g
tol = 1e-6
print(gpt.data.item(), apt.grad.item(), bpt.grad.item())
print(abs(gpt.data.item() - 24.70408163265306) < tol, abs(apt.grad.item() - 138.83381924198252) < tol,
      abs(bpt.grad.item() - 645.5772594752186) < tol)
print(g.grad_fn, g.grad_fn.next_functions, f.grad_fn, e.is_leaf, a.is_leaf, c.requires_grad)

# the neuron with exp written out, as the lecture's second form of tanh
e = (2 * n.detach()).exp()
print(((e - 1) / (e + 1)).item(), math.tanh(n.item()), torch.exp(torch.tensor(2.0, dtype=torch.float64)))

# a small MLP (micrograd's nn.MLP(3, [4, 4, 1])) in torch, its loss and gradients
random.seed(1337)


def param(*shape):
    t = torch.tensor([[random.uniform(-1, 1) for _ in range(shape[1])] for _ in range(shape[0])]).double()
    t.requires_grad = True
    return t


Ws = [param(3, 4), param(4, 4), param(4, 1)]
bs = [param(1, 4), param(1, 4), param(1, 1)]
xs = torch.tensor([[2.0, 3.0, -1.0], [3.0, -1.0, 0.5], [0.5, 1.0, 1.0], [1.0, 1.0, -1.0]]).double()
ys = torch.tensor([1.0, -1.0, -1.0, 1.0]).double()
for k in range(20):
    out = xs
    for i, (W, bb) in enumerate(zip(Ws, bs)):
        out = out @ W + bb
        if i < 2:
            out = out.tanh()
    ypred = out.squeeze(1)
    loss = sum((yout - ygt) ** 2 for ygt, yout in zip(ys, ypred))
    for p in Ws + bs:
        p.grad = None
    loss.backward()
    for p in Ws + bs:
        p.data += -0.05 * p.grad
    if k % 5 == 0:
        print(k, loss.item(), loss.grad_fn, Ws[0].grad[0, 0].item())
print(ypred, ypred.tolist(), loss.dtype, loss.shape)
