import io

import torch
import torch.nn as nn

torch.manual_seed(0)
X, Y = torch.randn(20, 4), torch.randn(20, 1)


def make():
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))


model = make()
opt = torch.optim.Adam(model.parameters(), lr=0.01)


def step(m, o):
    o.zero_grad()
    loss = nn.functional.mse_loss(m(X), Y)
    loss.backward()
    o.step()
    return loss.item()


for _ in range(3):
    step(model, opt)
buffer = io.BytesIO()
torch.save({"epoch": 3, "model": model.state_dict(), "optimizer": opt.state_dict()}, buffer)
buffer.seek(0)
checkpoint = torch.load(buffer)
print(sorted(checkpoint), checkpoint["epoch"])
print(list(checkpoint["model"].keys()))
print(checkpoint["optimizer"]["param_groups"])
print(checkpoint["optimizer"]["state"][0]["step"], checkpoint["optimizer"]["state"][0]["exp_avg"].shape)
restored = make()
restored.load_state_dict(checkpoint["model"])
restored_opt = torch.optim.Adam(restored.parameters(), lr=0.01)
restored_opt.load_state_dict(checkpoint["optimizer"])
for _ in range(3):
    a, b = step(model, opt), step(restored, restored_opt)
    print(f"{a:.6f} {b:.6f} {a == b}")
print(torch.equal(model[0].weight, restored[0].weight))
buffer = io.BytesIO()
torch.save(torch.arange(6).reshape(2, 3), buffer)
buffer.seek(0)
print(torch.load(buffer))
