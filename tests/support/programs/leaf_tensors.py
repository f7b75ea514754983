# pytorch.org "Understanding requires_grad, retain_grad, Leaf, and Non-leaf Tensors", the warnings
# of a non-leaf's .grad printed by the program itself, and the "autograd mechanics" notes on
# no_grad / inference_mode / set_grad_enabled, detach, .data, requires_grad_ and in-place rules.
import warnings

import torch
import torch.nn.functional as F


def caught(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        value = fn()
    for item in w:
        print("warning:", item.category.__name__, str(item.message).split(" (Triggered")[0])
    return value


torch.manual_seed(0)
x = torch.ones(1, 3)
W = torch.ones(3, 2, requires_grad=True)
b = torch.ones(2, requires_grad=True)
y = torch.ones(1, 2)
z = x @ W + b
y_pred = F.relu(z)
loss = F.mse_loss(y_pred, y)
loss.backward()
print(W.grad)
print(b.grad)
caught(lambda: print(z.grad))

tensors = [x, W, b, z, y_pred, loss]
for name, t in zip(["x", "W", "b", "z", "y_pred", "loss"], tensors):
    print(f"{name:7}", t.requires_grad, t.is_leaf, t.retains_grad, t.grad_fn.__class__.__name__ if t.grad_fn else None)

z = x @ W + b
y_pred = F.relu(z)
loss = F.mse_loss(y_pred, y)
z.retain_grad()
y_pred.retain_grad()
loss.retain_grad()
W.grad.zero_()
b.grad.zero_()
loss.backward()
print(z.retains_grad, z.is_leaf)
print(z.grad, y_pred.grad, loss.grad)
print(W.grad, b.grad)
print(x.grad, x.is_leaf)

a = torch.tensor([2.0, 3.0], requires_grad=True)
c = a * 2
print(c.is_leaf, c.requires_grad)
d = c.detach()
print(d.is_leaf, d.requires_grad, d.grad_fn)
e = c.data
print(e.is_leaf, e.requires_grad)
f = torch.tensor([1.0, 2.0])
f.requires_grad_()
print(f.is_leaf, f.requires_grad)
g = a.clone()
print(g.is_leaf, g.grad_fn.name())
try:
    c.requires_grad = False
except RuntimeError as err:
    print(err)
try:
    a.add_(1)
except RuntimeError as err:
    print(err)
with torch.no_grad():
    a.add_(1)
print(a, a._version)
h = a.view(2, 1)
print(h._base is a, h.is_leaf, h.grad_fn)
try:
    with torch.no_grad():
        v = a.view(2)
    v.mul_(2)
except RuntimeError as err:
    print(err)

with torch.no_grad():
    n = a * 2
print(n.requires_grad, n.is_leaf)
with torch.enable_grad():
    print((a * 2).requires_grad)
torch.set_grad_enabled(False)
print((a * 2).requires_grad, torch.is_grad_enabled())
torch.set_grad_enabled(True)
with torch.set_grad_enabled(False):
    print((a * 2).requires_grad)
with torch.inference_mode():
    i = a * 2
print(i.requires_grad, i.is_inference(), torch.is_inference_mode_enabled())
try:
    (i * a).sum().backward()
except RuntimeError as err:
    print(err)


@torch.no_grad()
def doubler(t):
    return t * 2


print(doubler(a).requires_grad)


@torch.inference_mode()
def tripler(t):
    return t * 3


print(tripler(a).is_inference())
m = torch.nn.Linear(2, 1)
with torch.no_grad():
    m.weight.fill_(1.0)
    m.bias.zero_()
print(m.weight, m.bias, m.weight.grad)
out = m(torch.ones(1, 2))
out.backward()
print(m.weight.grad, m.bias.grad)
out = m(torch.ones(1, 2))
caught(lambda: out.backward(torch.ones(1, 1)))
print(m.weight.grad)
try:
    out.backward()
except RuntimeError as err:
    print(err)
k = torch.ones(2, requires_grad=True)
caught(lambda: print((k * 1).grad))
r = k * 1
r.retain_grad()
(r * r).sum().backward()
print(r.grad)
caught(lambda: torch.tensor(k))
print(caught(lambda: torch.tensor(k)).requires_grad)
print(k.detach().requires_grad_(True).is_leaf)
p = torch.nn.Parameter(torch.ones(2))
print(p.is_leaf, p.requires_grad, (p * 2).is_leaf, type(p * 2).__name__)
print(torch.autograd.grad((p ** 2).sum(), p), p.grad)
