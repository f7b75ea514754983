# makemore part 1: the bigram model by counts (an int32 table N[ix1, ix2] += 1, rows normalised with
# keepdim, the broadcasting bug of P.sum(1) without it, sampling by torch.multinomial with a Generator,
# the average negative log likelihood), then the same model as a one-layer network on one-hot inputs
# trained by gradient descent, and the mistakes learners make on the way, with PyTorch's messages.
import torch
import torch.nn.functional as F

from tests.support.makemore_names import make_words

words = make_words()
print(words[:5], len(words), min(len(w) for w in words), max(len(w) for w in words))

b = {}
for w in words:
    chs = ["<S>"] + list(w) + ["<E>"]
    for ch1, ch2 in zip(chs, chs[1:]):
        bigram = (ch1, ch2)
        b[bigram] = b.get(bigram, 0) + 1
print(sorted(b.items(), key=lambda kv: -kv[1])[:5])

N = torch.zeros((27, 27), dtype=torch.int32)
chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        N[ix1, ix2] += 1
print(N[0], N.dtype, N.sum(), N[3, 4].item(), type(N[3, 4].item()))
print(N[:3, :6])

p = N[0].float()
p = p / p.sum()
print(p)
g = torch.Generator().manual_seed(2147483647)
p3 = torch.rand(3, generator=g)
p3 = p3 / p3.sum()
print(p3, torch.multinomial(p3, num_samples=100, replacement=True, generator=g))
ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
print(ix, itos[ix])

P = (N + 1).float()
print(P.sum(1, keepdim=True).shape, P.sum(1).shape, P.sum(0, keepdim=True).shape)
wrong = P / P.sum(1)
P /= P.sum(1, keepdims=True)
print(P[0].sum(), wrong[0].sum(), P.sum(1)[:4], P.shape, P.dtype)

g = torch.Generator().manual_seed(2147483647)
for i in range(5):
    out = []
    ix = 0
    while True:
        p = P[ix]
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
    print("".join(out))

log_likelihood = 0.0
n = 0
for w in words[:3]:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        ix1 = stoi[ch1]
        ix2 = stoi[ch2]
        prob = P[ix1, ix2]
        logprob = torch.log(prob)
        log_likelihood += logprob
        n += 1
        print(f"{ch1}{ch2}: {prob:.4f} {logprob:.4f}")
print(f"{log_likelihood=}")
nll = -log_likelihood
print(f"{nll=}")
print(f"{nll/n}")

# the bigram model as a neural net
xs, ys = [], []
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs = torch.tensor(xs)
ys = torch.tensor(ys)
num = xs.nelement()
print("number of examples: ", num, xs.dtype, xs[:5], ys[:5])
xenc = F.one_hot(xs, num_classes=27).float()
print(xenc.shape, xenc.dtype, F.one_hot(xs[:5]).shape)

g = torch.Generator().manual_seed(2147483647)
W = torch.randn((27, 27), generator=g, requires_grad=True)
for k in range(20):
    xenc = F.one_hot(xs, num_classes=27).float()
    logits = xenc @ W
    counts = logits.exp()
    probs = counts / counts.sum(1, keepdims=True)
    loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W ** 2).mean()
    if k % 5 == 0:
        print(k, loss.item())
    W.grad = None
    loss.backward()
    W.data += -50 * W.grad
print(probs.shape, probs[0].sum(), loss, W.grad[0, :3], W.is_leaf, logits.is_leaf)

g = torch.Generator().manual_seed(2147483647)
for i in range(5):
    out = []
    ix = 0
    while True:
        xenc = F.one_hot(torch.tensor([ix]), num_classes=27).float()
        logits = xenc @ W
        counts = logits.exp()
        p = counts / counts.sum(1, keepdims=True)
        ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
        out.append(itos[ix])
        if ix == 0:
            break
    print("".join(out))

# what goes wrong on the way
attempts = {
    "one-hot of floats": lambda: F.one_hot(xs.float(), num_classes=27),
    "int one-hot times float W": lambda: F.one_hot(xs, num_classes=27) @ W,
    "item of many": lambda: probs[0].item(),
    "view of the wrong size": lambda: xenc.view(32, 6),
    "float index": lambda: P[torch.tensor([1.0])],
    "second backward": lambda: (loss.backward(), loss.backward()),
    "multinomial of a negative": lambda: torch.multinomial(torch.tensor([0.5, -0.1]), 1, generator=g),
    "multinomial of zeros": lambda: torch.multinomial(torch.zeros(3), 1, generator=g),
    "too many samples": lambda: torch.multinomial(torch.tensor([0.5, 0.5]), 3, generator=g),
    "one-hot out of range": lambda: F.one_hot(torch.tensor([3, 27]), num_classes=27),
    "int tensor requires grad": lambda: torch.zeros(3, dtype=torch.int32, requires_grad=True),
    "int32 table += float": lambda: N.__iadd__(0.5),
}
for name, attempt in attempts.items():
    try:
        attempt()
        print(name, "ran")
    except Exception as err:
        print(f"{name}: {type(err).__name__}: {err}")
