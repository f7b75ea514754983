# pytorch.org "Jacobians, Hessians, hvp, vhp, and more: composing function transforms" and
# "Per-sample gradients" (torch.func: vjp, jacrev, jacfwd, hessian, vmap, grad, functional_call).
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

torch.manual_seed(0)


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


D = 16
weight = torch.randn(D, D)
bias = torch.randn(D)
x = torch.randn(D)


def compute_jac(xp):
    jacobian_rows = [torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0]
                     for vec in unit_vectors]
    return torch.stack(jacobian_rows)


xp = x.clone().requires_grad_()
unit_vectors = torch.eye(D)
jacobian = compute_jac(xp)
print(jacobian.shape)
print(jacobian[0])

_, vjp_fn = vjp(partial_predict := (lambda x: predict(weight, bias, x)), x)
ft_jacobian, = vmap(vjp_fn)(unit_vectors)
assert torch.allclose(ft_jacobian, jacobian)
ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
print(torch.allclose(ft_jacobian, jacobian))
ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
print(ft_jac_weight.shape, ft_jac_bias.shape)
ref_weight = jacrev(predict, argnums=0)(weight, bias, x)
print(torch.allclose(ft_jac_weight, ref_weight))
jacfwd_out = jacfwd(predict, argnums=2)(weight, bias, x)
print(torch.allclose(jacfwd_out, jacobian, atol=1e-6))

hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
print(hess_api.shape, torch.allclose(hess_api, hess_fwdfwd, atol=1e-6), torch.allclose(hess_api, hess_revrev, atol=1e-6))
print(hess_api[0, 0, :4])

batch_size = 4
Dout = 3
weight = torch.randn(Dout, D)
bias = torch.randn(Dout)
x = torch.randn(batch_size, D)
compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, x)
print(batch_jacobian0.shape)


def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)


batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
print(torch.allclose(batch_jacobian0, batch_jacobian1))
compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))
batch_hess = compute_batch_hessian(weight, bias, x)
print(batch_hess.shape)


def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def f(x):
    return x.sin().sum()


x = torch.randn(2048)
tangent = torch.randn(2048)
result = hvp(f, (x,), (tangent,))
print(torch.allclose(result, -x.sin() * tangent, atol=1e-6))

# Per-sample gradients
class SimpleCNN(torch.nn.Module):
    def __init__(self):
        super(SimpleCNN, self).__init__()
        self.conv1 = torch.nn.Conv2d(1, 4, 3, 1)
        self.conv2 = torch.nn.Conv2d(4, 8, 3, 1)
        self.fc1 = torch.nn.Linear(8 * 2 * 2, 16)
        self.fc2 = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


torch.manual_seed(0)
batch_size = 8
data = torch.randn(batch_size, 1, 8, 8)
targets = torch.randint(10, (batch_size,))
model = SimpleCNN()


def compute_grad(sample, target):
    sample = sample.unsqueeze(0)
    target = target.unsqueeze(0)
    prediction = model(sample)
    loss = loss_fn(prediction, target)
    return torch.autograd.grad(loss, list(model.parameters()))


def compute_sample_grads(data, targets):
    sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
    sample_grads = zip(*sample_grads)
    sample_grads = [torch.stack(shards) for shards in sample_grads]
    return sample_grads


per_sample_grads = compute_sample_grads(data, targets)
print(per_sample_grads[1].shape)
params = {k: v.detach() for k, v in model.named_parameters()}
buffers = {k: v.detach() for k, v in model.named_buffers()}


def compute_loss(params, buffers, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, (params, buffers), (batch,))
    loss = loss_fn(predictions, targets)
    return loss


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
for per_sample_grad, ft_per_sample_grad in zip(per_sample_grads, ft_per_sample_grads.values()):
    assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
print(list(ft_per_sample_grads.keys()))
print(ft_per_sample_grads['fc2.bias'][:2])
print(per_sample_grads[3][0, :4])
