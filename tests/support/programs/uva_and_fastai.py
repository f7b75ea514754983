# UvA Deep Learning tutorial 2 ("Introduction to PyTorch": tensors, the XOR dataset, a
# Dataset subclass, BCEWithLogitsLoss, training and evaluation loops) and fast.ai's chapter 4
# ("Under the hood: training a digit classifier": pixel similarity, broadcasting, SGD written by
# hand, BasicOptim, a simple net), with random images in place of MNIST.
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data as data

torch.manual_seed(42)
print("Using torch", torch.__version__ == torch.__version__)
x = torch.Tensor(2, 3, 4)
print(x.shape)
x = torch.Tensor([[1, 2], [3, 4]])
print(x)
x = torch.rand(2, 3, 4)
print(x)
shape = x.shape
print("Shape:", x.shape)
size = x.size()
print("Size:", size)
dim1, dim2, dim3 = x.size()
print("Size:", dim1, dim2, dim3)
x1 = torch.rand(2, 3)
x2 = torch.rand(2, 3)
y = x1 + x2
print("X1", x1)
print("X2", x2)
print("Y", y)
x2.add_(x1)
print("X2 (after)", x2)
x = torch.arange(6)
print("X", x)
x = x.view(2, 3)
print("X", x)
x = x.permute(1, 0)
print("X", x)
x = torch.arange(6)
x = x.view(2, 3)
W = torch.arange(9).view(3, 3)
h = torch.matmul(x, W)
print("h", h)
print(torch.bmm(torch.ones(2, 2, 3), torch.ones(2, 3, 4)).shape)
print("X", x)
print(x[:, 1])
print(x[0])
print(x[:1, -1])
print(x[1:3, :])
x = torch.ones((3,))
print(x.requires_grad)
x.requires_grad_(True)
print(x.requires_grad)
x = torch.arange(3, dtype=torch.float32, requires_grad=True)
print("X", x)
a = x + 2
b = a ** 2
c = b + 3
y = c.mean()
print("Y", y)
y.backward()
print(x.grad)
print("Is the GPU available? %s" % torch.cuda.is_available())
device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
print("Device", device)
x = torch.zeros(2, 3)
x = x.to(device)
print("X", x)


class SimpleClassifier(nn.Module):

    def __init__(self, num_inputs, num_hidden, num_outputs):
        super().__init__()
        self.linear1 = nn.Linear(num_inputs, num_hidden)
        self.act_fn = nn.Tanh()
        self.linear2 = nn.Linear(num_hidden, num_outputs)

    def forward(self, x):
        x = self.linear1(x)
        x = self.act_fn(x)
        x = self.linear2(x)
        return x


model = SimpleClassifier(num_inputs=2, num_hidden=4, num_outputs=1)
print(model)
for name, param in model.named_parameters():
    print(f"Parameter {name}, shape {param.shape}")


class XORDataset(data.Dataset):

    def __init__(self, size, std=0.1):
        super().__init__()
        self.size = size
        self.std = std
        self.generate_continuous_xor()

    def generate_continuous_xor(self):
        data = torch.randint(low=0, high=2, size=(self.size, 2), dtype=torch.float32)
        label = (data.sum(dim=1) == 1).to(torch.long)
        data += self.std * torch.randn(data.shape)
        self.data = data
        self.label = label

    def __len__(self):
        return self.size

    def __getitem__(self, idx):
        data_point = self.data[idx]
        data_label = self.label[idx]
        return data_point, data_label


dataset = XORDataset(size=200)
print("Size of dataset:", len(dataset))
print("Data point 0:", dataset[0])
data_loader = data.DataLoader(dataset, batch_size=8, shuffle=True)
data_inputs, data_labels = next(iter(data_loader))
print("Data inputs", data_inputs.shape, "\n", data_inputs)
print("Data labels", data_labels.shape, "\n", data_labels)
loss_module = nn.BCEWithLogitsLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_dataset = XORDataset(size=250)
train_data_loader = data.DataLoader(train_dataset, batch_size=32, shuffle=True)
model.to(device)


def train_model(model, optimizer, data_loader, loss_module, num_epochs=100):
    model.train()
    for epoch in range(num_epochs):
        for data_inputs, data_labels in data_loader:
            data_inputs = data_inputs.to(device)
            data_labels = data_labels.to(device)
            preds = model(data_inputs)
            preds = preds.squeeze(dim=1)
            loss = loss_module(preds, data_labels.float())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        if epoch % 10 == 9:
            print(epoch, loss.item())


train_model(model, optimizer, train_data_loader, loss_module, num_epochs=30)
state_dict = model.state_dict()
print(state_dict)
new_model = SimpleClassifier(num_inputs=2, num_hidden=4, num_outputs=1)
new_model.load_state_dict(state_dict)
print("Original model\n", model.state_dict())
print("\nLoaded model\n", new_model.state_dict())
test_dataset = XORDataset(size=100)
test_data_loader = data.DataLoader(test_dataset, batch_size=128, shuffle=False, drop_last=False)


def eval_model(model, data_loader):
    model.eval()
    true_preds, num_preds = 0., 0.
    with torch.no_grad():
        for data_inputs, data_labels in data_loader:
            data_inputs, data_labels = data_inputs.to(device), data_labels.to(device)
            preds = model(data_inputs)
            preds = preds.squeeze(dim=1)
            preds = torch.sigmoid(preds)
            pred_labels = (preds >= 0.5).long()
            true_preds += (pred_labels == data_labels).sum()
            num_preds += data_labels.shape[0]
    acc = true_preds / num_preds
    print(f"Accuracy of the model: {100.0*acc:4.2f}%")


eval_model(model, test_data_loader)

# fast.ai chapter 4
torch.manual_seed(0)
threes = [torch.rand(28, 28) * 0.6 + torch.linspace(0, 0.4, 28) for _ in range(40)]
sevens = [torch.rand(28, 28) * 0.6 + torch.linspace(0.4, 0, 28)[:, None] for _ in range(40)]
stacked_sevens = torch.stack(sevens).float() / 1
stacked_threes = torch.stack(threes).float()
print(stacked_threes.shape, len(stacked_threes.shape), stacked_threes.ndim)
mean3 = stacked_threes.mean(0)
mean7 = stacked_sevens.mean(0)
a_3 = stacked_threes[1]
dist_3_abs = (a_3 - mean3).abs().mean()
dist_3_sqr = ((a_3 - mean3) ** 2).mean().sqrt()
print(dist_3_abs, dist_3_sqr)
print(F.l1_loss(a_3.float(), mean7), F.mse_loss(a_3, mean7).sqrt())
data_ = [[1, 2, 3], [4, 5, 6]]
arr = torch.tensor(data_)
tns = torch.tensor(data_)
print(tns[1], tns[:, 1], tns[1, 1:3], tns + 1, tns.type(torch.float) * 1.5)
valid_3_tens = torch.stack([torch.rand(28, 28) * 0.6 + torch.linspace(0, 0.4, 28) for _ in range(20)])
valid_7_tens = torch.stack([torch.rand(28, 28) * 0.6 + torch.linspace(0.4, 0, 28)[:, None] for _ in range(20)])


def mnist_distance(a, b):
    return (a - b).abs().mean((-1, -2))


print(mnist_distance(a_3, mean3))
valid_3_dist = mnist_distance(valid_3_tens, mean3)
print(valid_3_dist, valid_3_dist.shape)
print(torch.tensor([1, 2, 3]) + torch.tensor(1))
print((valid_3_tens - mean3).shape)


def is_3(x):
    return mnist_distance(x, mean3) < mnist_distance(x, mean7)


print(is_3(a_3), is_3(a_3).float())
print(is_3(valid_3_tens))
accuracy_3s = is_3(valid_3_tens).float().mean()
accuracy_7s = (1 - is_3(valid_7_tens).float()).mean()
print(accuracy_3s, accuracy_7s, (accuracy_3s + accuracy_7s) / 2)


def f(x):
    return x ** 2


xt = torch.tensor(3.).requires_grad_()
yt = f(xt)
print(yt)
yt.backward()
print(xt.grad)
xt = torch.tensor([3., 4., 10.]).requires_grad_()


def f(x):
    return (x ** 2).sum()


yt = f(xt)
print(yt)
yt.backward()
print(xt.grad)
time = torch.arange(0, 20).float()
print(time)
speed = torch.randn(20) * 3 + 0.75 * (time - 9.5) ** 2 + 1


def f(t, params):
    a, b, c = params
    return a * (t ** 2) + (b * t) + c


def mse(preds, targets):
    return ((preds - targets) ** 2).mean()


params = torch.randn(3).requires_grad_()
orig_params = params.clone()
preds = f(time, params)
loss = mse(preds, speed)
print(loss)
loss.backward()
print(params.grad)
print(params.grad * 1e-5)
print(params)
lr = 1e-5
params.data -= lr * params.grad.data
params.grad = None
preds = f(time, params)
print(mse(preds, speed))


def apply_step(params, prn=True):
    preds = f(time, params)
    loss = mse(preds, speed)
    loss.backward()
    params.data -= lr * params.grad.data
    params.grad = None
    if prn:
        print(loss.item())
    return preds


for i in range(10):
    apply_step(params)

train_x = torch.cat([stacked_threes, stacked_sevens]).view(-1, 28 * 28)
train_y = torch.tensor([1] * len(threes) + [0] * len(sevens)).unsqueeze(1)
print(train_x.shape, train_y.shape)
dset = list(zip(train_x, train_y))
x, y = dset[0]
print(x.shape, y)
valid_x = torch.cat([valid_3_tens, valid_7_tens]).view(-1, 28 * 28)
valid_y = torch.tensor([1] * len(valid_3_tens) + [0] * len(valid_7_tens)).unsqueeze(1)
valid_dset = list(zip(valid_x, valid_y))


def init_params(size, std=1.0):
    return (torch.randn(size) * std).requires_grad_()


weights = init_params((28 * 28, 1))
bias = init_params(1)
print((train_x[0] * weights.T).sum() + bias)


def linear1(xb):
    return xb @ weights + bias


preds = linear1(train_x)
print(preds)
corrects = (preds > 0.0).float() == train_y
print(corrects)
print(corrects.float().mean().item())
with torch.no_grad():
    weights[0] *= 1.0001
preds = linear1(train_x)
print(((preds > 0.0).float() == train_y).float().mean().item())
trgts = torch.tensor([1, 0, 1])
prds = torch.tensor([0.9, 0.4, 0.2])


def mnist_loss(predictions, targets):
    return torch.where(targets == 1, 1 - predictions, predictions).mean()


print(torch.where(trgts == 1, 1 - prds, prds))
print(mnist_loss(prds, trgts))
print(mnist_loss(torch.tensor([0.9, 0.4, 0.8]), trgts))


def sigmoid(x):
    return 1 / (1 + torch.exp(-x))


def mnist_loss(predictions, targets):
    predictions = predictions.sigmoid()
    return torch.where(targets == 1, 1 - predictions, predictions).mean()


dl = data.DataLoader(range(15), batch_size=5, shuffle=True)
print(list(dl))
ds = list(zip(range(6), 'abcdef'))
dl = data.DataLoader(ds, batch_size=6, shuffle=True)
print(list(dl))
weights = init_params((28 * 28, 1))
bias = init_params(1)
dl = data.DataLoader(dset, batch_size=16, shuffle=True)
xb, yb = next(iter(dl))
print(xb.shape, yb.shape)
valid_dl = data.DataLoader(valid_dset, batch_size=16)
batch = train_x[:4]
print(batch.shape)
preds = linear1(batch)
print(preds)
loss = mnist_loss(preds, train_y[:4])
print(loss)
loss.backward()
print(weights.grad.shape, weights.grad.mean(), bias.grad)


def calc_grad(xb, yb, model):
    preds = model(xb)
    loss = mnist_loss(preds, yb)
    loss.backward()


calc_grad(batch, train_y[:4], linear1)
print(weights.grad.mean(), bias.grad)
calc_grad(batch, train_y[:4], linear1)
print(weights.grad.mean(), bias.grad)
weights.grad.zero_()
bias.grad.zero_()


def train_epoch(model, lr, params):
    for xb, yb in dl:
        calc_grad(xb, yb, model)
        for p in params:
            p.data -= p.grad * lr
            p.grad.zero_()


print((preds > 0.0).float() == train_y[:4])


def batch_accuracy(xb, yb):
    preds = xb.sigmoid()
    correct = (preds > 0.5) == yb
    return correct.float().mean()


print(batch_accuracy(linear1(batch), train_y[:4]))


def validate_epoch(model):
    accs = [batch_accuracy(model(xb), yb) for xb, yb in valid_dl]
    return round(torch.stack(accs).mean().item(), 4)


print(validate_epoch(linear1))
lr = 1.
params = weights, bias
train_epoch(linear1, lr, params)
print(validate_epoch(linear1))
for i in range(5):
    train_epoch(linear1, lr, params)
    print(validate_epoch(linear1), end=' ')
print()
linear_model = nn.Linear(28 * 28, 1)
w, b = linear_model.parameters()
print(w.shape, b.shape)


class BasicOptim:
    def __init__(self, params, lr):
        self.params, self.lr = list(params), lr

    def step(self, *args, **kwargs):
        for p in self.params:
            p.data -= p.grad.data * self.lr

    def zero_grad(self, *args, **kwargs):
        for p in self.params:
            p.grad = None


opt = BasicOptim(linear_model.parameters(), lr)


def train_epoch(model):
    for xb, yb in dl:
        calc_grad(xb, yb, model)
        opt.step()
        opt.zero_grad()


print(validate_epoch(linear_model))


def train_model(model, epochs):
    for i in range(epochs):
        train_epoch(model)
        print(validate_epoch(model), end=' ')
    print()


train_model(linear_model, 5)
linear_model = nn.Linear(28 * 28, 1)
opt = torch.optim.SGD(linear_model.parameters(), lr)
train_model(linear_model, 5)
simple_net = nn.Sequential(nn.Linear(28 * 28, 30), nn.ReLU(), nn.Linear(30, 1))
opt = torch.optim.SGD(simple_net.parameters(), 0.1)
train_model(simple_net, 5)
print(simple_net[0].weight.shape, simple_net)
