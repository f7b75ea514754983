import torch
from torch.utils.data import DataLoader, TensorDataset

text = "to be or not to be, that is the question: whether 'tis nobler in the mind to suffer"
chars = sorted(set(text))
vocab_size = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for ch, i in stoi.items()}
encode = lambda s: [stoi[c] for c in s]
decode = lambda l: "".join(itos[i] for i in l)
print(vocab_size, "".join(chars))
data = torch.tensor(encode(text), dtype=torch.long)
print(data.shape, data.dtype)
print(data[:20])
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]
torch.manual_seed(1337)
block_size, batch_size = 8, 4


def get_batch(split):
    d = train_data if split == "train" else val_data
    ix = torch.randint(len(d) - block_size, (batch_size,))
    x = torch.stack([d[i:i + block_size] for i in ix])
    y = torch.stack([d[i + 1:i + block_size + 1] for i in ix])
    return x, y


xb, yb = get_batch("train")
print(xb.shape, yb.shape)
print(xb)
print(yb)
for t in range(3):
    print(f"when input is {xb[0, :t + 1].tolist()} the target: {yb[0, t]}")
print(decode(xb[1].tolist()))
windows = torch.stack([data[i:i + block_size + 1] for i in range(0, len(data) - block_size, 4)])
dataset = TensorDataset(windows[:, :-1], windows[:, 1:])
loader = DataLoader(dataset, batch_size=3, shuffle=True, generator=torch.Generator().manual_seed(0))
print(len(dataset), len(loader))
for i, (x, y) in enumerate(loader):
    if i == 2:
        break
    print(x.shape, y[:, -1])
