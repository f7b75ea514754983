# Walking a model's autograd graph from loss.grad_fn through next_functions, as tutorials do to
# show what backward will run (torchviz's traversal, written out): names, the saved tensors'
# shapes, and the leaves reached, for the layers courses use.
import torch
import torch.nn as nn
import torch.nn.functional as F


def walk(fn, depth=0, seen=None):
    seen = set() if seen is None else seen
    if fn is None:
        print("  " * depth + "None")
        return
    name = fn.name()
    if name == "torch::autograd::AccumulateGrad":
        print("  " * depth + f"AccumulateGrad {tuple(fn.variable.shape)}")
        return
    print("  " * depth + name + (" (seen)" if fn in seen else ""))
    if fn in seen:
        return
    seen.add(fn)
    for next_fn, nr in fn.next_functions:
        walk(next_fn, depth + 1, seen)


torch.manual_seed(0)
x = torch.randn(4, 3)
target = torch.tensor([0, 2, 1, 1])
mlp = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 3))
walk(F.cross_entropy(mlp(x), target).grad_fn)
walk(F.mse_loss(mlp(x), torch.zeros(4, 3)).grad_fn)
walk(nn.BCEWithLogitsLoss()(mlp(x)[:, 0], torch.ones(4)).grad_fn)
walk(F.nll_loss(F.log_softmax(mlp(x), dim=1), target).grad_fn)
walk(F.softmax(mlp(x), dim=-1).sum().grad_fn)
walk(mlp(x).sigmoid().mean().grad_fn)
walk(mlp(x).tanh().pow(2).sum().grad_fn)

net = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1), nn.BatchNorm2d(2), nn.ReLU(), nn.MaxPool2d(2),
                    nn.Dropout(0.5), nn.Flatten(), nn.Linear(8, 2))
img = torch.randn(3, 1, 4, 4)
walk(net(img).sum().grad_fn)
net.eval()
walk(net(img).sum().grad_fn)
print(net[1].running_mean, net[1].num_batches_tracked)

emb = nn.Embedding(10, 4)
ln = nn.LayerNorm(4)
idx = torch.tensor([[1, 2, 3], [4, 5, 6]])
walk(ln(emb(idx)).mean().grad_fn)
attn = nn.MultiheadAttention(4, 2, batch_first=True)
e = emb(idx)
o, w = attn(e, e, e)
print(o.grad_fn.name(), w.grad_fn.name(), w.shape)

q = torch.randn(2, 3, 4, requires_grad=True)
k = torch.randn(2, 3, 4, requires_grad=True)
v = torch.randn(2, 3, 4, requires_grad=True)
walk(F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().grad_fn)
walk((q @ k.transpose(-2, -1) / 2).masked_fill(torch.triu(torch.ones(3, 3), 1).bool(), float("-inf"))
     .softmax(-1).sum().grad_fn)
scores = torch.einsum("bqd,bkd->bqk", q, k)   # einsum contracts by bmm between permutes and views
walk(torch.einsum("bqk,bkd->bqd", scores.softmax(-1), v).sum().grad_fn)
walk(torch.einsum("ij,jk,kl->il", q[0], k[0].T, v[0]).sum().grad_fn)

a = torch.randn(3, requires_grad=True)
b = a.view(3, 1).expand(3, 2).contiguous()
walk((b * 2).sum().grad_fn)
c = a.clone()
c[0] = 5
walk(c.sum().grad_fn)
d = a.unsqueeze(0).repeat(2, 1)
walk(torch.stack([d[0], d[1]]).max().grad_fn)
walk(torch.cat([a, a * 2]).norm().grad_fn)
walk(torch.where(a > 0, a, a * 0.1).sum().grad_fn)
walk(a[[0, 2]].exp().prod().grad_fn)
walk(F.gelu(a).abs().sum().grad_fn)
walk((a.float() / a.sum()).log1p().sum().grad_fn)
walk(a.sort().values.cumsum(0).sum().grad_fn)
walk(a.topk(2).values.std().grad_fn)
walk(a.clamp(min=0).var().grad_fn)
walk(F.leaky_relu(a, 0.1).logsumexp(0).grad_fn)
walk(a.max(dim=0).values.grad_fn)
walk(a.reshape(3, 1).squeeze(1).flip(0).roll(1).sum().grad_fn)
walk((a ** 2).mean().sqrt().grad_fn)
walk((1 / a).rsqrt().nan_to_num().sum().grad_fn)
walk(torch.outer(a, a).trace().grad_fn)
walk(torch.dist(a, torch.zeros(3)).grad_fn)
walk(F.normalize(a, dim=0).sum().grad_fn)
walk(F.pad(a, (1, 1)).sum().grad_fn)
walk(F.one_hot(torch.tensor([0, 2]), 3).float().mul(a).sum().grad_fn)
walk(F.silu(a).sum().grad_fn)
walk(F.elu(a).sum().grad_fn)
walk(F.softplus(a).sum().grad_fn)
walk(F.cosine_similarity(a, a * 2, dim=0).grad_fn)
walk(F.smooth_l1_loss(a, torch.zeros(3)).grad_fn)
walk(F.huber_loss(a, torch.zeros(3)).grad_fn)
walk(F.kl_div(F.log_softmax(a, 0), F.softmax(torch.ones(3), 0), reduction="batchmean").grad_fn)
walk(F.binary_cross_entropy(torch.sigmoid(a), torch.ones(3)).grad_fn)
walk(F.l1_loss(a, torch.zeros(3)).grad_fn)
walk(F.cross_entropy(a.unsqueeze(0), torch.tensor([1]), label_smoothing=0.1).grad_fn)
