import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2), nn.ReLU(), nn.Linear(2, 1))
print(model)
for name, tensor in model.state_dict().items():
    print(name, tuple(tensor.shape))
print(model.state_dict())
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
model(torch.randn(4, 3)).sum().backward()
opt.step()
print(opt.state_dict())
print(opt)
print(model[1].running_mean, model[1].num_batches_tracked)
