# pytorch.org "Extending PyTorch" (notes/extending): LinearFunction with ctx.needs_input_grad,
# MulConstant with a non-tensor argument, MyCube with setup_context and vmap, a Module wrapping a
# Function, gradcheck; once_differentiable, mark_dirty, mark_non_differentiable,
# set_materialize_grads, and the errors of a wrong backward.
import torch
from torch.autograd import Function, gradcheck
from torch.autograd.function import once_differentiable


class LinearFunction(Function):
    @staticmethod
    def forward(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        print("needs_input_grad", ctx.needs_input_grad)
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


linear = LinearFunction.apply
torch.manual_seed(0)
input = (torch.randn(20, 20, dtype=torch.double, requires_grad=True),
         torch.randn(30, 20, dtype=torch.double, requires_grad=True))
test = gradcheck(linear, input + (None,), eps=1e-6, atol=1e-4)
print(test)
x = torch.randn(3, 4, requires_grad=True)
w = torch.randn(2, 4)
b = torch.randn(2, requires_grad=True)
out = linear(x, w, b)
print(out.grad_fn, out.grad_fn.name())
out.sum().backward()
print(x.grad, b.grad, w.grad)


class MulConstant(Function):
    @staticmethod
    def forward(tensor, constant):
        return tensor * constant

    @staticmethod
    def setup_context(ctx, inputs, output):
        tensor, constant = inputs
        ctx.constant = constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


y = MulConstant.apply(x, 5.5)
y.sum().backward()
print(x.grad[0])


class MyCube(torch.autograd.Function):
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

    @staticmethod
    def vmap(info, in_dims, x):
        x_bdim, = in_dims
        x = x.movedim(x_bdim, 0)
        result = MyCube.apply(x)
        return result, (0, 0)


def my_cube(x):
    result, _ = MyCube.apply(x)
    return result


x = torch.randn(3, dtype=torch.double, requires_grad=True)
print(torch.func.vmap(my_cube)(x.detach()))
print(torch.func.grad(lambda t: my_cube(t).sum())(x.detach()))
g, = torch.autograd.grad(my_cube(x).sum(), x, create_graph=True)
gg, = torch.autograd.grad(g.sum(), x)
print(g, gg)


class LinearModule(torch.nn.Module):
    def __init__(self, input_features, output_features, bias=True):
        super().__init__()
        self.input_features = input_features
        self.output_features = output_features
        self.weight = torch.nn.Parameter(torch.empty(output_features, input_features))
        if bias:
            self.bias = torch.nn.Parameter(torch.empty(output_features))
        else:
            self.register_parameter('bias', None)
        self.weight.data.uniform_(-0.1, 0.1)
        if self.bias is not None:
            self.bias.data.uniform_(-0.1, 0.1)

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    def extra_repr(self):
        return 'input_features={}, output_features={}, bias={}'.format(
            self.input_features, self.output_features, self.bias is not None
        )


m = LinearModule(4, 2)
print(m)
o = m(torch.randn(5, 4))
o.pow(2).mean().backward()
print(m.weight.grad, m.bias.grad)


class ReLUOnce(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * (x > 0).float()


x = torch.tensor([-1.0, 2.0, 3.0], requires_grad=True)
y = ReLUOnce.apply(x)
g, = torch.autograd.grad(y.sum(), x, create_graph=True)
print(g, g.requires_grad, g.grad_fn)
try:
    g.sum().backward()
except RuntimeError as e:
    print(e)


class AddOneInplace(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad


a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a.clone()
c = AddOneInplace.apply(b)
print(c is b, c, c.grad_fn.name(), b._version)
c.sum().backward()
print(a.grad)


class SortWithIndex(Function):
    @staticmethod
    def forward(ctx, x):
        values, idx = x.sort()
        ctx.mark_non_differentiable(idx)
        ctx.save_for_backward(idx)
        return values, idx

    @staticmethod
    def backward(ctx, g_values, g_idx):
        idx, = ctx.saved_tensors
        grad = torch.zeros_like(g_values)
        grad.index_add_(0, idx, g_values)
        return grad


x = torch.tensor([3.0, 1.0, 2.0], requires_grad=True)
v, i = SortWithIndex.apply(x)
print(v, i, i.requires_grad)
(v * torch.tensor([1.0, 10.0, 100.0])).sum().backward()
print(x.grad)


class TwoOut(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        print("grads", g1, g2)
        total = 0
        if g1 is not None:
            total = total + g1 * 2
        if g2 is not None:
            total = total + g2 * 3
        return total


x = torch.ones(2, requires_grad=True)
p, q = TwoOut.apply(x)
p.sum().backward()
print(x.grad)


class BadShape(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g.sum()


class TooMany(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g, g


for F in (BadShape, TooMany):
    try:
        F.apply(torch.ones(3, requires_grad=True)).sum().backward()
    except RuntimeError as e:
        print(type(e).__name__, e)
try:
    LinearFunction(torch.ones(1))
except Exception as e:
    print(type(e).__name__, e)
