# The advanced autograd tutorials of pytorch.org: torch.autograd.functional (jacobian, hessian,
# vjp, jvp, hvp), forward-mode AD with dual numbers, "Double Backward with Custom Functions",
# higher-order gradients with create_graph, and the autograd mechanics notes.
import torch
import torch.autograd.forward_ad as fwAD
from torch.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp

torch.manual_seed(0)


def exp_reducer(x):
    return x.exp().sum(dim=1)


inputs = torch.rand(2, 2)
print(jacobian(exp_reducer, inputs))
print(jacobian(exp_reducer, inputs, create_graph=True))


def exp_adder(x, y):
    return 2 * x.exp() + 3 * y


inputs = (torch.rand(2), torch.rand(2))
print(jacobian(exp_adder, inputs))
print(jacobian(exp_adder, inputs, vectorize=True))


def pow_reducer(x):
    return x.pow(3).sum()


inputs = torch.rand(2, 2)
print(hessian(pow_reducer, inputs))
print(hessian(pow_reducer, inputs, create_graph=True))


def pow_adder_reducer(x, y):
    return (2 * x.pow(2) + 3 * y.pow(2)).sum()


inputs = (torch.rand(2), torch.rand(2))
print(hessian(pow_adder_reducer, inputs))


def exp_reducer(x):
    return x.exp().sum(dim=1)


inputs = torch.rand(4, 4)
v = torch.ones(4)
print(vjp(exp_reducer, inputs, v))
print(vjp(exp_reducer, inputs, v, create_graph=True))


def adder(x, y):
    return 2 * x + 3 * y


inputs = (torch.rand(2), torch.rand(2))
v = torch.ones(2)
print(vjp(adder, inputs, v))
inputs = torch.rand(4, 4)
v = torch.ones(4, 4)
print(jvp(exp_reducer, inputs, v))
print(jvp(exp_reducer, inputs, v, create_graph=True))


def pow_reducer(x):
    return x.pow(3).sum()


inputs = torch.rand(2, 2)
v = torch.ones(2, 2)
print(vhp(pow_reducer, inputs, v))
print(hvp(pow_reducer, inputs, v))


# jacobian of a linear layer, compared with its weight
def f(x):
    return x.tanh() @ torch.arange(6.0).reshape(3, 2)


x = torch.randn(3)
J = jacobian(f, x)
print(J.shape, J)
print(torch.allclose(J, (torch.arange(6.0).reshape(3, 2) * (1 - x.tanh() ** 2)[:, None]).T))

# Forward-mode AD
primal = torch.randn(10, 10)
tangent = torch.randn(10, 10)


def fn(x, y):
    return x ** 2 + y ** 2


with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    print(fwAD.unpack_dual(dual_input).tangent is tangent)
    dual_input_alt = fwAD.make_dual(primal, tangent.T)
    print(fwAD.unpack_dual(dual_input_alt).tangent is tangent)
    plain_tensor = torch.randn(10, 10)
    dual_output = fn(dual_input, plain_tensor)
    jvp_ = fwAD.unpack_dual(dual_output).tangent
print(fwAD.unpack_dual(dual_output).tangent)
print(jvp_[0], torch.allclose(jvp_, 2 * primal * tangent))

import torch.nn as nn

model = nn.Linear(5, 5)
input = torch.randn(16, 5)
params = {name: p for name, p in model.named_parameters()}
tangents = {name: torch.rand_like(p) for name, p in params.items()}
with fwAD.dual_level():
    for name, p in params.items():
        delattr(model, name)
        setattr(model, name, fwAD.make_dual(p, tangents[name]))
    out = model(input)
    jvp_ = fwAD.unpack_dual(out).tangent
# detached: torch's tangent here requires grad (its formula multiplies a zero tangent by the parameter)
print(jvp_.detach()[0])
print(torch.allclose(jvp_, input @ tangents["weight"].T + tangents["bias"]))


class Fn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, foo):
        result = torch.exp(foo)
        ctx.result = result
        return result

    @staticmethod
    def jvp(ctx, gI):
        gO = gI * ctx.result
        del ctx.result
        return gO


fn = Fn.apply
primal = torch.randn(10, 10, dtype=torch.double, requires_grad=True)
tangent = torch.randn(10, 10)
with fwAD.dual_level():
    dual_input = fwAD.make_dual(primal, tangent)
    dual_output = fn(dual_input)
    jvp_ = fwAD.unpack_dual(dual_output).tangent
print(jvp_[0, :3])
print(torch.autograd.gradcheck(Fn.apply, (primal,), check_forward_ad=True, check_backward_ad=False,
                               check_undefined_grad=False, check_batched_grad=False))


# Double backward with custom functions
class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 2

    @staticmethod
    def backward(ctx, grad_out):
        x, = ctx.saved_tensors
        return grad_out * 2 * x


x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
print(torch.autograd.gradcheck(Square.apply, x))
print(torch.autograd.gradgradcheck(Square.apply, x))


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        result, = ctx.saved_tensors
        return result * grad_out


x = torch.tensor(1., requires_grad=True, dtype=torch.double).clone()
print(torch.autograd.gradcheck(Exp.apply, x))
print(torch.autograd.gradgradcheck(Exp.apply, x))


class Sinh(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, _grad_out_exp, _grad_out_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        grad_input += _grad_out_exp * expx
        grad_input -= _grad_out_negexp * expnegx
        return grad_input


def sinh(x):
    return Sinh.apply(x)[0]


x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
print(torch.autograd.gradcheck(sinh, x))
print(torch.autograd.gradgradcheck(sinh, x))


class SinhBad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.expx = expx
        ctx.expnegx = expnegx
        return (expx - expnegx) / 2

    @staticmethod
    def backward(ctx, grad_out):
        expx = ctx.expx
        expnegx = ctx.expnegx
        grad_input = grad_out * (expx + expnegx) / 2
        return grad_input


x = torch.rand(3, requires_grad=True, dtype=torch.double)
out = SinhBad.apply(x)
g, = torch.autograd.grad(out.sum(), x, create_graph=True)
print(g.requires_grad, g.grad_fn)


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(x):
        result = x ** 3
        dx = 3 * x ** 2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx + grad_dx * 6 * x
        return result


def my_cube(x):
    result, dx = Cube.apply(x)
    return result


x = torch.rand(3, 3, requires_grad=True, dtype=torch.double)
print(torch.autograd.gradcheck(my_cube, x))
print(torch.autograd.gradgradcheck(my_cube, x))

# Higher-order gradients with create_graph
x = torch.tensor(2.0, requires_grad=True)
y = x ** 3
dy, = torch.autograd.grad(y, x, create_graph=True)
d2y, = torch.autograd.grad(dy, x, create_graph=True)
d3y, = torch.autograd.grad(d2y, x)
print(dy, d2y, d3y)
x = torch.linspace(-2, 2, 5, requires_grad=True)
y = torch.sin(x)
g, = torch.autograd.grad(y.sum(), x, create_graph=True)
g.sum().backward()
print(g, x.grad)

# Gradient penalty
torch.manual_seed(0)
D = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
real = torch.randn(6, 4)
fake = torch.randn(6, 4)
alpha = torch.rand(6, 1)
interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
out = D(interp)
grads = torch.autograd.grad(outputs=out, inputs=interp, grad_outputs=torch.ones_like(out),
                            create_graph=True, retain_graph=True)[0]
gp = ((grads.norm(2, dim=1) - 1) ** 2).mean()
gp.backward()
print(gp, D[0].weight.grad[0])

# autograd mechanics: saved tensors, retain_graph, the version counter
x = torch.randn(5, requires_grad=True)
y = x.pow(2)
print(y.grad_fn._saved_self.equal(x), y.grad_fn._saved_self is x)
print(y.grad_fn._saved_exponent)
y = x.exp()
print(y.grad_fn._saved_result.equal(y), y.grad_fn._saved_result is y)
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
b = a.sigmoid()
c = b * 2
b.mul_(2)
try:
    c.sum().backward()
except RuntimeError as e:
    print(e)
b = a.exp()
b.add_(1)
try:
    b.sum().backward()
except RuntimeError as e:
    print(e)
b = a * 3
b.add_(1)
b.sum().backward()
print(a.grad)
loss = (a * a).sum()
loss.backward(retain_graph=True)
loss.backward()
print(a.grad)
loss = (a * a).sum()
loss.backward()
try:
    loss.backward()
except RuntimeError as e:
    print(e)
try:
    torch.autograd.grad((a * 2).sum(), torch.ones(2, requires_grad=True))
except RuntimeError as e:
    print(e)
print(torch.autograd.grad((a * 2).sum(), [a, torch.ones(2, requires_grad=True)], allow_unused=True))
print(torch.autograd.grad((a * 2).sum(), [a, torch.ones(2, requires_grad=True)], allow_unused=True,
                          materialize_grads=True))
x = torch.ones(2, 2, requires_grad=True)
try:
    (x + 1).backward()
except RuntimeError as e:
    print(e)
try:
    torch.tensor([1, 2], requires_grad=True)
except RuntimeError as e:
    print(e)
try:
    x.add_(1)
except RuntimeError as e:
    print(e)
try:
    x.numpy()
except RuntimeError as e:
    print(e)
print(x.detach().numpy())
