import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
X = torch.randn(32, 1, 8, 8)
y = (X.mean(dim=(1, 2, 3)) > 0).long()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.fc = nn.Linear(8 * 2 * 2, 2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        return self.fc(torch.flatten(x, 1))


net = Net()
print(net)
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
for epoch in range(5):
    opt.zero_grad()
    out = net(X)
    loss = F.cross_entropy(out, y)
    loss.backward()
    opt.step()
    acc = (out.argmax(1) == y).float().mean()
    print(f"epoch {epoch} loss {loss.item():.5f} acc {acc:.3f}")
print(net.conv1.weight.grad.shape, net.conv1.weight.grad.norm())
with torch.no_grad():
    print(net(X[:2]).softmax(dim=1))
