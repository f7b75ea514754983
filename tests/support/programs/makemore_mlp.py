# makemore part 2 (the MLP of Bengio et al. 2003) on a short list of names made in code: the
# dataset of 3-character contexts, the embedding table C indexed by C[X], the views of emb, the
# learning-rate sweep by torch.linspace, training by p.data += -lr * p.grad, split losses, sampling.
import torch
import torch.nn.functional as F

from tests.support.makemore_names import make_words

words = make_words()
print(len(words), words[:8])
chars = sorted(list(set("".join(words))))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
itos = {i: s for s, i in stoi.items()}
vocab_size = len(itos)
print(itos)

block_size = 3


def build_dataset(words):
    X, Y = [], []
    for w in words:
        context = [0] * block_size
        for ch in w + ".":
            ix = stoi[ch]
            X.append(context)
            Y.append(ix)
            context = context[1:] + [ix]
    X = torch.tensor(X)
    Y = torch.tensor(Y)
    print(X.shape, Y.shape)
    return X, Y


n1 = int(0.8 * len(words))
n2 = int(0.9 * len(words))
Xtr, Ytr = build_dataset(words[:n1])
Xdev, Ydev = build_dataset(words[n1:n2])
Xte, Yte = build_dataset(words[n2:])
print(Xtr[:5], Ytr[:5], Xtr.dtype)

# the first steps of the lecture, on a tiny table
C = torch.randn((vocab_size, 2))
print(C.shape, C[5].shape, C[[5, 6, 7]].shape, C[torch.tensor([5, 6, 7, 7, 7, 7])].shape)
print(F.one_hot(torch.tensor(5), num_classes=vocab_size).dtype, (F.one_hot(torch.tensor(5), num_classes=vocab_size).float() @ C).shape)
emb = C[Xtr]
print(emb.shape, Xtr[13, 2], C[Xtr][13, 2].shape)
print(torch.cat([emb[:, 0, :], emb[:, 1, :], emb[:, 2, :]], 1).shape)
print(torch.cat(torch.unbind(emb, 1), 1).shape, len(torch.unbind(emb, 1)))
a = torch.arange(18)
print(a.view(2, 9), a.view(9, 2).shape, a.view(3, 3, 2).shape, a.storage().size())
print((emb.view(-1, 6) == torch.cat(torch.unbind(emb, 1), 1)).all())
W1 = torch.randn((6, 100))
b1 = torch.randn(100)
h = torch.tanh(emb.view(emb.shape[0], 6) @ W1 + b1)
print(h.shape, (h @ torch.randn((100, vocab_size))).shape)

# the loss written out, then by F.cross_entropy
logits = torch.tensor([[-2.0, -3.0, 0.0, 5.0]])
counts = logits.exp()
prob = counts / counts.sum(1, keepdims=True)
print(prob, prob.sum(), -prob[torch.arange(1), torch.tensor([3])].log().mean(), F.cross_entropy(logits, torch.tensor([3])))
print(F.cross_entropy(torch.tensor([[-100.0, -3.0, 0.0, 100.0]]), torch.tensor([3])), (torch.tensor([-100.0, -3.0, 0.0, 100.0])).exp())

g = torch.Generator().manual_seed(2147483647)
C = torch.randn((vocab_size, 10), generator=g)
W1 = torch.randn((30, 200), generator=g)
b1 = torch.randn(200, generator=g)
W2 = torch.randn((200, vocab_size), generator=g)
b2 = torch.randn(vocab_size, generator=g)
parameters = [C, W1, b1, W2, b2]
print(sum(p.nelement() for p in parameters))
for p in parameters:
    p.requires_grad = True

lre = torch.linspace(-3, 0, 1000)
lrs = 10 ** lre
print(lre[:3], lrs[:3], lrs[-1], lrs.dtype)

lri, lossi, stepi = [], [], []
for i in range(300):
    ix = torch.randint(0, Xtr.shape[0], (32,), generator=g)
    emb = C[Xtr[ix]]
    h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
    logits = h @ W2 + b2
    loss = F.cross_entropy(logits, Ytr[ix])
    for p in parameters:
        p.grad = None
    loss.backward()
    lr = 0.1 if i < 200 else 0.01
    for p in parameters:
        p.data += -lr * p.grad
    stepi.append(i)
    lossi.append(loss.log10().item())
    if i % 50 == 0:
        print(i, loss.item(), W1.grad.norm().item())
print(torch.tensor(lossi).view(-1, 50).mean(1))

emb = C[Xtr]
h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
logits = h @ W2 + b2
loss = F.cross_entropy(logits, Ytr)
print("train", loss)
emb = C[Xdev]
h = torch.tanh(emb.view(-1, 30) @ W1 + b1)
loss = F.cross_entropy(h @ W2 + b2, Ydev)
print("dev", loss, loss.grad_fn)
print(C[:, 0].data[:4], C[:, 1].data[:4], itos[0])

g = torch.Generator().manual_seed(2147483647 + 10)
for _ in range(8):
    out = []
    context = [0] * block_size
    while True:
        emb = C[torch.tensor([context])]
        h = torch.tanh(emb.view(1, -1) @ W1 + b1)
        logits = h @ W2 + b2
        probs = F.softmax(logits, dim=1)
        ix = torch.multinomial(probs, num_samples=1, generator=g).item()
        context = context[1:] + [ix]
        out.append(ix)
        if ix == 0:
            break
    print("".join(itos[i] for i in out))
