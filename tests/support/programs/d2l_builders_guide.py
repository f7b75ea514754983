# Dive into Deep Learning (d2l.ai), "Builders' Guide": layers and modules, parameter management
# (access, tied parameters, init), custom layers, lazy initialization, file I/O; plus the
# pytorch.org "Modules" note (named_modules, apply, buffers, train/eval, register_parameter).
import io

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(20, 256), nn.ReLU(), nn.Linear(256, 10))
X = torch.rand(2, 20)
print(net(X).shape)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.LazyLinear(256)
        self.out = nn.LazyLinear(10)

    def forward(self, X):
        return self.out(F.relu(self.hidden(X)))


net = MLP()
print(net)
print(net(X).shape)
print(net)


class MySequential(nn.Module):
    def __init__(self, *args):
        super().__init__()
        for idx, module in enumerate(args):
            self.add_module(str(idx), module)

    def forward(self, X):
        for module in self.children():
            X = module(X)
        return X


net = MySequential(nn.Linear(20, 256), nn.ReLU(), nn.Linear(256, 10))
print(net(X).shape, net)


class FixedHiddenMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.rand_weight = torch.rand((20, 20))
        self.linear = nn.Linear(20, 20)

    def forward(self, X):
        X = self.linear(X)
        X = F.relu(X @ self.rand_weight + 1)
        X = self.linear(X)
        while X.abs().sum() > 1:
            X /= 2
        return X.sum()


net = FixedHiddenMLP()
print(net(X))


class NestMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
        self.linear = nn.Linear(32, 16)

    def forward(self, X):
        return self.linear(self.net(X))


chimera = nn.Sequential(NestMLP(), nn.Linear(16, 20), FixedHiddenMLP())
print(chimera(X))

# Parameter management
net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
X = torch.rand(size=(2, 4))
print(net(X).shape)
print(net[2].state_dict())
print(type(net[2].bias), net[2].bias.data)
print(net[2].weight.grad == None)
print([(name, param.shape) for name, param in net.named_parameters()])
print(*[(name, param.shape) for name, param in net[0].named_parameters()])
print(net.state_dict()['2.bias'].data)


def block1():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4), nn.ReLU())


def block2():
    net = nn.Sequential()
    for i in range(4):
        net.add_module(f'block {i}', block1())
    return net


rgnet = nn.Sequential(block2(), nn.Linear(4, 1))
print(rgnet(X))
print(rgnet)
print(rgnet[0][1][0].bias.data)


def init_normal(module):
    if type(module) == nn.Linear:
        nn.init.normal_(module.weight, mean=0, std=0.01)
        nn.init.zeros_(module.bias)


net.apply(init_normal)
print(net[0].weight.data[0], net[0].bias.data[0])


def init_constant(module):
    if type(module) == nn.Linear:
        nn.init.constant_(module.weight, 1)
        nn.init.zeros_(module.bias)


net.apply(init_constant)
print(net[0].weight.data[0], net[0].bias.data[0])


def init_xavier(module):
    if type(module) == nn.Linear:
        nn.init.xavier_uniform_(module.weight)


def init_42(module):
    if type(module) == nn.Linear:
        nn.init.constant_(module.weight, 42)


net[0].apply(init_xavier)
net[2].apply(init_42)
print(net[0].weight.data[0])
print(net[2].weight.data)


def my_init(module):
    if type(module) == nn.Linear:
        print("Init", *[(name, param.shape) for name, param in module.named_parameters()][0])
        nn.init.uniform_(module.weight, -10, 10)
        module.weight.data *= module.weight.data.abs() >= 5


net.apply(my_init)
print(net[0].weight[:2])
net[0].weight.data[:] += 1
net[0].weight.data[0, 0] = 42
print(net[0].weight.data[0])

shared = nn.LazyLinear(8)
net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), shared, nn.ReLU(), shared, nn.ReLU(), nn.LazyLinear(1))
net(X)
print(net[2].weight.data[0] == net[4].weight.data[0])
net[2].weight.data[0, 0] = 100
print(net[2].weight.data[0] == net[4].weight.data[0])
print(len(list(net.parameters())), sum(p.numel() for p in net.parameters()))

# Custom layers
class CenteredLayer(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, X):
        return X - X.mean()


layer = CenteredLayer()
print(layer(torch.tensor([1.0, 2, 3, 4, 5])))
net = nn.Sequential(nn.LazyLinear(128), CenteredLayer())
Y = net(torch.rand(4, 8))
print(Y.mean().abs() < 1e-6)


class MyLinear(nn.Module):
    def __init__(self, in_units, units):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_units, units))
        self.bias = nn.Parameter(torch.randn(units,))

    def forward(self, X):
        linear = torch.matmul(X, self.weight.data) + self.bias.data
        return F.relu(linear)


linear = MyLinear(5, 3)
print(linear.weight)
print(linear(torch.rand(2, 5)))
net = nn.Sequential(MyLinear(64, 8), MyLinear(8, 1))
print(net(torch.rand(2, 64)))

# File I/O
x = torch.arange(4)
buf = io.BytesIO()
torch.save(x, buf)
buf.seek(0)
x2 = torch.load(buf)
print(x2)
y = torch.zeros(4)
buf = io.BytesIO()
torch.save([x, y], buf)
buf.seek(0)
x2, y2 = torch.load(buf)
print(x2, y2)
mydict = {'x': x, 'y': y}
buf = io.BytesIO()
torch.save(mydict, buf)
buf.seek(0)
print(torch.load(buf))


class MLP2(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(20, 256)
        self.output = nn.Linear(256, 10)

    def forward(self, x):
        return self.output(F.relu(self.hidden(x)))


net = MLP2()
X = torch.randn(size=(2, 20))
Y = net(X)
buf = io.BytesIO()
torch.save(net.state_dict(), buf)
buf.seek(0)
clone = MLP2()
print(clone.load_state_dict(torch.load(buf)))
print(clone.eval())
Y_clone = clone(X)
print(Y_clone == Y)

# Modules note (pytorch.org)
class MyLinear(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features))
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, input):
        return (input @ self.weight) + self.bias


m = MyLinear(4, 3)
sample_input = torch.randn(4)
print(m(sample_input))
for parameter in m.named_parameters():
    print(parameter)


class DynamicNet(nn.Module):
    def __init__(self, num_layers):
        super().__init__()
        self.linears = nn.ModuleList([MyLinear(4, 4) for _ in range(num_layers)])
        self.activations = nn.ModuleDict({'relu': nn.ReLU(), 'lrelu': nn.LeakyReLU()})
        self.final = MyLinear(4, 1)

    def forward(self, x, act):
        for linear in self.linears:
            x = linear(x)
            x = self.activations[act](x)
        x = self.final(x)
        return x


dynamic_net = DynamicNet(3)
sample_input = torch.randn(4)
output = dynamic_net(sample_input, 'relu')
print(output)
for parameter in dynamic_net.named_parameters():
    print(parameter[0], parameter[1].shape)
print(dynamic_net)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.l0 = MyLinear(4, 3)
        self.l1 = MyLinear(3, 1)

    def forward(self, x):
        x = self.l0(x)
        x = F.relu(x)
        x = self.l1(x)
        return x


net = Net()
for child in net.named_children():
    print(child)
big_net = nn.Sequential(MyLinear(5, 4), nn.ReLU(), MyLinear(4, 1))
for module in big_net.named_modules():
    print(module)


@torch.no_grad()
def init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.xavier_normal_(m.weight)
        m.bias.fill_(0.0)


big_net = nn.Sequential(nn.Linear(5, 4), nn.ReLU(), nn.Linear(4, 1))
print(big_net.apply(init_weights))


class ModalModule(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if self.training:
            return x + 1.
        else:
            return x - 1.


m = ModalModule()
x = torch.randn(4)
print('training mode output: {}'.format(m(x)))
m.eval()
print('evaluation mode output: {}'.format(m(x)))


class RunningMean(nn.Module):
    def __init__(self, num_features, momentum=0.9):
        super().__init__()
        self.momentum = momentum
        self.register_buffer('mean', torch.zeros(num_features))

    def forward(self, x):
        self.mean = self.momentum * self.mean + (1.0 - self.momentum) * x
        return self.mean


m = RunningMean(4)
for _ in range(10):
    input = torch.randn(4)
    m(input)
print(m)
print(m.state_dict())
print(list(m.named_buffers()))


class StatefulModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.param1 = nn.Parameter(torch.randn(2))
        self.register_parameter('param2', nn.Parameter(torch.randn(3)))
        self.param3 = None
        self.param4 = nn.ParameterList([nn.Parameter(torch.randn(2))])
        self.param5 = nn.ParameterDict({'foo': nn.Parameter(torch.randn(3)), 'bar': nn.Parameter(torch.randn(4))})
        self.register_buffer('buffer1', torch.randn(4), persistent=True)
        self.register_buffer('buffer2', torch.randn(5), persistent=False)
        self.register_buffer('buffer3', None)
        self.linear = nn.Linear(2, 3)


m = StatefulModule()
print(list(m.named_parameters()))
print(list(m.named_buffers()))
print(m.state_dict())
print(m)
m = nn.Linear(5, 3, dtype=torch.float64)
print(m.weight.dtype)
m = nn.Linear(5, 3)
m.to(torch.float64)
print(m.weight.dtype, m.bias.dtype)
print(sum(p.numel() for p in m.parameters() if p.requires_grad))
m.requires_grad_(False)
print(m.weight.requires_grad)
print(m.extra_repr(), repr(m))
m.zero_grad()
print(m.weight.grad)
