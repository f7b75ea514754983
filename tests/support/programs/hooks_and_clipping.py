# Module and tensor hooks as the tutorials and forum answers use them (forward hooks collecting
# activations, forward pre-hooks, full backward hooks, tensor hooks changing a gradient,
# register_post_accumulate_grad_hook), gradient clipping by norm and by value, and seeded
# random streams (manual_seed, fork_rng, get_rng_state/set_rng_state, Generator, initial_seed).
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
activations = {}


def get_activation(name):
    def hook(model, input, output):
        activations[name] = output.detach()
    return hook


h1 = model[0].register_forward_hook(get_activation('fc1'))
h2 = model[1].register_forward_hook(get_activation('relu'))
x = torch.randn(2, 4)
out = model(x)
print(activations['fc1'])
print(activations['relu'])
print(h1, type(h1).__name__)
h1.remove()
h2.remove()
activations.clear()
model(x)
print(activations)


def printnorm(self, input, output):
    print('Inside ' + self.__class__.__name__ + ' forward')
    print('')
    print('input: ', type(input))
    print('input[0]: ', type(input[0]))
    print('output: ', type(output))
    print('')
    print('input size:', input[0].size())
    print('output size:', output.data.size())
    print('output norm:', output.data.norm())


def printgradnorm(self, grad_input, grad_output):
    print('Inside ' + self.__class__.__name__ + ' backward')
    print('Inside class:' + self.__class__.__name__)
    print('')
    print('grad_input: ', type(grad_input))
    print('grad_input[0]: ', type(grad_input[0]))
    print('grad_output: ', type(grad_output))
    print('grad_output[0]: ', type(grad_output[0]))
    print('')
    print('grad_input size:', grad_input[0].size())
    print('grad_output size:', grad_output[0].size())
    print('grad_input norm:', grad_input[0].norm())


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3)
        self.conv2 = nn.Conv2d(4, 6, kernel_size=3)
        self.fc1 = nn.Linear(6 * 2 * 2, 10)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = x.view(-1, 6 * 2 * 2)
        x = self.fc1(x)
        return F.log_softmax(x, dim=1)


torch.manual_seed(0)
net = Net()
net.conv2.register_forward_hook(printnorm)
net.conv2.register_full_backward_hook(printgradnorm)
inp = torch.randn(1, 1, 14, 14)
out = net(inp)
err = F.nll_loss(out, torch.tensor([3]))
err.backward()
print(err)


def pre_hook(module, args):
    print('pre', type(module).__name__, [a.shape for a in args])
    return (args[0] * 2,)


def pre_hook_kwargs(module, args, kwargs):
    print('pre kwargs', sorted(kwargs))
    return args, kwargs


lin = nn.Linear(3, 2)
hp = lin.register_forward_pre_hook(pre_hook)
hk = lin.register_forward_pre_hook(pre_hook_kwargs, with_kwargs=True)
y = lin(torch.ones(1, 3))
print(y)
hp.remove()
hk.remove()
print(torch.allclose(lin(torch.ones(1, 3) * 2), y))


def fwd_hook_replace(module, args, output):
    return output + 100


h = lin.register_forward_hook(fwd_hook_replace)
print(lin(torch.ones(1, 3)))
h.remove()


def bwd_hook_scale(module, grad_input, grad_output):
    print('bwd', [None if g is None else g.shape for g in grad_input], [g.shape for g in grad_output])
    return (grad_input[0] * 0,)


def bwd_pre(module, grad_output):
    print('bwd pre', grad_output[0])
    return (grad_output[0] * 10,)


xin = torch.ones(1, 3, requires_grad=True)
hb = lin.register_full_backward_hook(bwd_hook_scale)
hbp = lin.register_full_backward_pre_hook(bwd_pre)
lin(xin).sum().backward()
print(xin.grad, lin.weight.grad)
hb.remove()
hbp.remove()

# tensor hooks
v = torch.tensor([0., 0., 0.], requires_grad=True)
h = v.register_hook(lambda grad: grad * 2)
v.backward(torch.tensor([1., 2., 3.]))
print(v.grad)
h.remove()
seen = []
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = a * 3
b.register_hook(lambda g: seen.append(g.clone()))
b.retain_grad()
c = (b ** 2).sum()
c.backward()
print(seen, b.grad, a.grad)
p = nn.Parameter(torch.ones(2))
p.register_post_accumulate_grad_hook(lambda t: print('accumulated', t.grad))
(p * 3).sum().backward()
(p * 3).sum().backward()
print(p.grad)

# gradient clipping
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 10), nn.Tanh(), nn.Linear(10, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
X = torch.randn(16, 10) * 10
Y = torch.randn(16, 1)
for step in range(3):
    opt.zero_grad()
    loss = F.mse_loss(model(X), Y)
    loss.backward()
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    after = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    print(step, loss.item(), total, after)
    opt.step()
nn.utils.clip_grad_value_(model.parameters(), clip_value=0.01)
print(model[0].weight.grad.abs().max(), model[2].bias.grad)
print(nn.utils.clip_grad_norm_(model.parameters(), 0.5, norm_type=float('inf')))
print(nn.utils.clip_grad_norm_(model.parameters(), 0.5, norm_type=1))
print(nn.utils.get_total_norm([p.grad for p in model.parameters()]))
vec = nn.utils.parameters_to_vector(model.parameters())
print(vec.shape, vec[:4])
nn.utils.vector_to_parameters(vec * 0 + 1, model.parameters())
print(model[2].weight)

# random streams
torch.manual_seed(42)
print(torch.rand(2), torch.randn(2), torch.randint(0, 10, (3,)), torch.randperm(5))
print(torch.initial_seed())
state = torch.get_rng_state()
a = torch.rand(3)
torch.set_rng_state(state)
b = torch.rand(3)
print(torch.equal(a, b), state.dtype, state.shape)
with torch.random.fork_rng():
    torch.rand(100)
print(torch.rand(1))
g = torch.Generator().manual_seed(2147483647)
print(torch.rand(2, generator=g), torch.randn(2, generator=g), g.initial_seed())
torch.manual_seed(0)
print(torch.empty(3).uniform_(-1, 1), torch.empty(3).normal_(0, 2), torch.empty(2).exponential_())
print(torch.bernoulli(torch.full((6,), 0.5)), torch.multinomial(torch.tensor([0.1, 0.2, 0.7]), 4, replacement=True))
print(torch.normal(torch.zeros(3), torch.ones(3)), torch.randn(2, dtype=torch.float64))
print(torch.rand(3, dtype=torch.float64), torch.randint(-5, 5, (2, 2), dtype=torch.int32))
print(torch.empty(4).random_(0, 10), torch.empty(2).cauchy_(), torch.empty(2).log_normal_(), torch.empty(2).geometric_(0.3))
print(torch.seed() != 0)
