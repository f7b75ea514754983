import torch
import torch.nn as nn

torch.manual_seed(0)
X = torch.randn(16, 5, 3)
y = (X.sum(dim=(1, 2)) > 0).long()


class Classifier(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(3, 6, batch_first=True)
        self.fc = nn.Linear(6, 2)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.fc(out[:, -1])


for cell in (nn.RNN, nn.LSTM, nn.GRU):
    torch.manual_seed(1)
    model = Classifier(cell)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    loss_fn = nn.CrossEntropyLoss()
    for step in range(4):
        opt.zero_grad()
        loss = loss_fn(model(X), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    print(cell.__name__, f"{loss.item():.5f}", model(X[:3]).argmax(1))
lstm = nn.LSTM(2, 3, num_layers=2)
out, (h, c) = lstm(torch.randn(4, 1, 2))
print(out.shape, h.shape, c.shape)
print(h)
