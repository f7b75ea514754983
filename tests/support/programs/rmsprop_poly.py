import math

import torch

x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)
p = torch.tensor([1, 2, 3])
xx = x.unsqueeze(-1).pow(p)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1))
loss_fn = torch.nn.MSELoss(reduction="sum")
optimizer = torch.optim.RMSprop(model.parameters(), lr=1e-3)
for t in range(2000):
    loss = loss_fn(model(xx), y)
    if t % 400 == 399:
        print(t, loss.item())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
linear = model[0]
print(f"Result: y = {linear.bias.item()} + {linear.weight[:, 0].item()} x + {linear.weight[:, 1].item()} x^2 + "
      f"{linear.weight[:, 2].item()} x^3")
