# Data loading and optimizer setups as the tutorials write them: a Dataset subclass with a
# transform, random_split, Subset, ConcatDataset, collate of dicts and tuples, a collate_fn with
# pad_sequence, WeightedRandomSampler, BatchSampler, an IterableDataset; per-parameter-group
# options, add_param_group, changing lr by hand, MultiStepLR, LinearLR, SequentialLR,
# CosineAnnealingWarmRestarts, CyclicLR, a frozen backbone (transfer learning), pack_padded_sequence.
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import (BatchSampler, ConcatDataset, DataLoader, Dataset, IterableDataset, RandomSampler,
                              SequentialSampler, Subset, TensorDataset, WeightedRandomSampler, random_split)
from torch.utils.data.dataloader import default_collate

torch.manual_seed(0)


class FaceLandmarksDataset(Dataset):
    def __init__(self, n, transform=None):
        self.images = torch.rand(n, 3, 4, 4)
        self.landmarks = torch.randn(n, 5, 2)
        self.transform = transform

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        if torch.is_tensor(idx):
            idx = idx.tolist()
        sample = {'image': self.images[idx], 'landmarks': self.landmarks[idx], 'idx': idx}
        if self.transform:
            sample = self.transform(sample)
        return sample


def normalize(sample):
    image = (sample['image'] - 0.5) / 0.5
    return {'image': image, 'landmarks': sample['landmarks'], 'idx': sample['idx']}


ds = FaceLandmarksDataset(10, transform=normalize)
print(len(ds), ds[0]['image'].shape, ds[torch.tensor(3)]['idx'])
loader = DataLoader(ds, batch_size=4, shuffle=True)
for i_batch, sample_batched in enumerate(loader):
    print(i_batch, sample_batched['image'].size(), sample_batched['landmarks'].size(), sample_batched['idx'])
print(default_collate([(1, 2.0, 'a'), (3, 4.0, 'b')]))
print(default_collate([{'x': torch.ones(2), 'y': 1}, {'x': torch.zeros(2), 'y': 2}]))
print(default_collate([[torch.tensor(1), torch.tensor([2, 3])], [torch.tensor(4), torch.tensor([5, 6])]]))

full = TensorDataset(torch.arange(20.).reshape(10, 2), torch.arange(10))
train, val = random_split(full, [8, 2], generator=torch.Generator().manual_seed(42))
print(len(train), len(val), train.indices, val.indices, val[0])
a, b, c = random_split(range(10), [0.5, 0.3, 0.2], generator=torch.Generator().manual_seed(1))
print(list(a), list(b), list(c))
sub = Subset(full, [0, 2, 4])
print(len(sub), sub[1])
cat = ConcatDataset([sub, Subset(full, [9])])
print(len(cat), cat[3], cat.cumulative_sizes)
print(list(DataLoader(full, batch_size=4, drop_last=True, shuffle=False)))
weights = torch.tensor([0.1, 0.1, 5.0, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 3.0])
sampler = WeightedRandomSampler(weights, num_samples=8, replacement=True, generator=torch.Generator().manual_seed(0))
print(list(sampler))
print(list(BatchSampler(SequentialSampler(range(10)), batch_size=3, drop_last=False)))
print(list(BatchSampler(RandomSampler(range(10), generator=torch.Generator().manual_seed(3)), batch_size=4,
                        drop_last=True)))
print([y.tolist() for _, y in DataLoader(full, sampler=sampler, batch_size=4)])


class Stream(IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter(torch.arange(self.n) * 10)


print(list(DataLoader(Stream(7), batch_size=3)))


def collate_batch(batch):
    labels = torch.tensor([label for _, label in batch])
    texts = [torch.tensor(t) for t, _ in batch]
    lengths = torch.tensor([len(t) for t in texts])
    return pad_sequence(texts, batch_first=True, padding_value=0), labels, lengths


data = [([1, 2, 3], 0), ([4, 5], 1), ([6], 0), ([7, 8, 9, 10], 1)]
for texts, labels, lengths in DataLoader(data, batch_size=2, collate_fn=collate_batch):
    print(texts, labels, lengths)
seqs = [torch.tensor([1., 2, 3]), torch.tensor([4., 5]), torch.tensor([6.])]
padded = pad_sequence(seqs)
print(padded, padded.shape)
packed = pack_padded_sequence(padded.unsqueeze(-1), torch.tensor([3, 2, 1]))
print(packed.data.squeeze(-1), packed.batch_sizes)
rnn = nn.GRU(1, 2)
out, h = rnn(packed)
unpacked, lens = pad_packed_sequence(out)
print(unpacked.shape, lens, h.shape)
packed = pack_padded_sequence(torch.randn(3, 4, 1), [2, 4, 3], batch_first=True, enforce_sorted=False)
print(packed.sorted_indices, packed.unsorted_indices, packed.batch_sizes)


# Optimizer setups
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.base = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.classifier = nn.Linear(8, 3)

    def forward(self, x):
        return self.classifier(self.base(x))


torch.manual_seed(0)
model = Net()
opt = torch.optim.SGD([{'params': model.base.parameters()},
                       {'params': model.classifier.parameters(), 'lr': 1e-3}], lr=1e-2, momentum=0.9)
print(opt)
x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
loss_fn = nn.CrossEntropyLoss()
for step in range(3):
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    print(step, loss.item(), [g['lr'] for g in opt.param_groups])
for g in opt.param_groups:
    g['lr'] = g['lr'] * 0.1
print([g['lr'] for g in opt.param_groups])
extra = nn.Parameter(torch.ones(2))
opt.add_param_group({'params': [extra], 'lr': 0.5})
print(len(opt.param_groups), opt.param_groups[2]['momentum'], opt.state_dict()['param_groups'][2])
try:
    opt.add_param_group({'params': model.classifier.parameters()})
except ValueError as e:
    print(e)

# transfer learning: a frozen backbone
for param in model.base.parameters():
    param.requires_grad = False
model.classifier = nn.Linear(8, 2)
opt = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=1e-3)
print(sum(p.numel() for p in model.parameters() if p.requires_grad), len(opt.param_groups[0]['params']))
y2 = torch.randint(0, 2, (16,))
for step in range(2):
    opt.zero_grad()
    loss = loss_fn(model(x), y2)
    loss.backward()
    opt.step()
print(loss.item(), model.base[0].weight.grad, model.classifier.bias)

# schedulers the tutorials use
def lrs(opt, sched, n, metric=False):
    out = []
    for epoch in range(n):
        opt.step()
        sched.step()
        out.append(round(sched.get_last_lr()[0], 6))
    return out


p = [nn.Parameter(torch.zeros(1))]
opt = torch.optim.SGD(p, lr=0.1)
print(lrs(opt, torch.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.5), 6))
opt = torch.optim.SGD(p, lr=0.1)
print(lrs(opt, torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=4), 6))
opt = torch.optim.SGD(p, lr=0.1)
s1 = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=2)
s2 = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
print(lrs(opt, torch.optim.lr_scheduler.SequentialLR(opt, schedulers=[s1, s2], milestones=[2]), 6))
opt = torch.optim.SGD(p, lr=0.1)
print(lrs(opt, torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=2, eta_min=0.01), 10))
opt = torch.optim.SGD(p, lr=0.1, momentum=0.9)
print(lrs(opt, torch.optim.lr_scheduler.CyclicLR(opt, base_lr=0.01, max_lr=0.1, step_size_up=2), 8))
opt = torch.optim.SGD(p, lr=0.1)
print(lrs(opt, torch.optim.lr_scheduler.PolynomialLR(opt, total_iters=4, power=2.0), 5))
opt = torch.optim.SGD(p, lr=0.1)
s1 = torch.optim.lr_scheduler.ConstantLR(opt, factor=0.5, total_iters=2)
s2 = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
print(lrs(opt, torch.optim.lr_scheduler.ChainedScheduler([s1, s2]), 4))
opt = torch.optim.SGD(p, lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
print(sched.state_dict(), sched.last_epoch, opt.param_groups[0]['initial_lr'])
