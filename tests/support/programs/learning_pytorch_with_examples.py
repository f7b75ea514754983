# "Learning PyTorch with Examples" (pytorch.org tutorials): the cubic fit of sin(x) written with
# tensors, with autograd, with a custom autograd.Function, with nn, with a custom nn.Module, and
# the DynamicNet with random control flow and weight sharing. Seeded, and fewer steps than the
# tutorial's 2,000 (RMSprop's long run is rmsprop_poly.py).
import math
import random

import numpy as np
import torch

# Warm-up: numpy
np.random.seed(0)
xn = np.linspace(-math.pi, math.pi, 2000)
yn = np.sin(xn)
an, bn, cn, dn = np.random.randn(), np.random.randn(), np.random.randn(), np.random.randn()
for t in range(200):
    y_pred = an + bn * xn + cn * xn ** 2 + dn * xn ** 3
    grad_y_pred = 2.0 * (y_pred - yn)
    an -= 1e-6 * grad_y_pred.sum()
    bn -= 1e-6 * (grad_y_pred * xn).sum()
    cn -= 1e-6 * (grad_y_pred * xn ** 2).sum()
    dn -= 1e-6 * (grad_y_pred * xn ** 3).sum()
print(f'Result: y = {an} + {bn} x + {cn} x^2 + {dn} x^3')

dtype = torch.float
device = torch.device("cpu")
print(device, dtype)

# Tensors: the gradients by hand
torch.manual_seed(0)
x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
y = torch.sin(x)
print(torch.allclose(y, torch.from_numpy(yn).float()), x.dtype, y.shape)
a = torch.randn((), device=device, dtype=dtype)
b = torch.randn((), device=device, dtype=dtype)
c = torch.randn((), device=device, dtype=dtype)
d = torch.randn((), device=device, dtype=dtype)
print(a, b.shape, c.dim(), d.item())
learning_rate = 1e-6
for t in range(300):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum().item()
    if t % 100 == 99:
        print(t, loss)
    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()
    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d
print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')

# Autograd
torch.manual_seed(0)
a = torch.randn((), dtype=dtype, requires_grad=True)
b = torch.randn((), dtype=dtype, requires_grad=True)
c = torch.randn((), dtype=dtype, requires_grad=True)
d = torch.randn((), dtype=dtype, requires_grad=True)
print(a, a.is_leaf, a.grad)
for t in range(300):
    y_pred = a + b * x + c * x ** 2 + d * x ** 3
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())
    if t == 0:
        print(loss, loss.grad_fn, y_pred.grad_fn.next_functions)
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        if t == 0:
            print(a, a.grad, a.requires_grad, a.is_leaf)
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f'Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3')


# Defining new autograd functions
class LegendrePolynomial3(torch.autograd.Function):
    """P3(x) = (5x^3 - 3x) / 2, with its derivative written by hand."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return 0.5 * (5 * input ** 3 - 3 * input)

    @staticmethod
    def backward(ctx, grad_output):
        input, = ctx.saved_tensors
        return grad_output * 1.5 * (5 * input ** 2 - 1)


a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)
print(a, b, d)
learning_rate = 5e-6
for t in range(300):
    P3 = LegendrePolynomial3.apply
    y_pred = a + b * P3(c + d * x)
    loss = (y_pred - y).pow(2).sum()
    if t % 100 == 99:
        print(t, loss.item())
    if t == 0:
        print(y_pred.grad_fn.next_functions[1][0].next_functions)
    loss.backward()
    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad
        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None
print(f'Result: y = {a.item()} + {b.item()} * P3({c.item()} + {d.item()} x)')
print(torch.autograd.gradcheck(LegendrePolynomial3.apply, (torch.randn(5, dtype=torch.double, requires_grad=True),)))

# nn module
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
print(p, xx.shape, xx[1])
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(0, 1)
)
print(model)
loss_fn = torch.nn.MSELoss(reduction='sum')
print(loss_fn)
learning_rate = 1e-6
for t in range(300):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    if t == 0:
        print(y_pred.shape, y_pred.grad_fn, loss.grad_fn)
    model.zero_grad()
    loss.backward()
    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad
linear_layer = model[0]
print(f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + '
      f'{linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3')
print(linear_layer.weight, linear_layer.bias.grad)

# optim
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
print(optimizer)
for t in range(200):
    y_pred = model(xx)
    loss = loss_fn(y_pred, y)
    if t % 50 == 49:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(model[0].weight)


# Custom nn Modules
class Polynomial3(torch.nn.Module):
    def __init__(self):
        """Four parameters a, b, c, d."""
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        return self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3

    def string(self):
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3'


torch.manual_seed(0)
model = Polynomial3()
print(model)
print(list(model.named_parameters()))
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-6)
for t in range(300):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f'Result: {model.string()}')


# Control flow + weight sharing
class DynamicNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        for exp in range(4, random.randint(4, 6)):
            y = y + self.e * x ** exp
        return y

    def string(self):
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?'


random.seed(0)
torch.manual_seed(0)
model = DynamicNet()
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
print(optimizer.state_dict()['param_groups'])
for t in range(600):
    y_pred = model(x)
    loss = criterion(y_pred, y)
    if t % 100 == 99:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f'Result: {model.string()}')
print(model.e.grad, optimizer.state[model.e])
