# pytorch.org "Spatial Transformer Networks Tutorial", as written: the localization network and the
# fc_loc regressor started at the identity transform (weight.data.zero_(), bias.data.copy_), stn() by
# F.affine_grid and F.grid_sample, the MNIST classifier with Dropout2d, SGD, train() and test() with
# size_average=False, the transformed batch shown as NumPy images. 64 random 28x28 images (a bright
# square whose corner gives the class) stand in for MNIST; 2 epochs; torchvision's make_grid and
# matplotlib are left out (the arrays they would show are summarised).
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
import numpy as np

torch.manual_seed(0)
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def make_digits(n):
    images = torch.rand(n, 1, 28, 28) * 0.2
    labels = torch.randint(0, 10, (n,))
    for i in range(n):
        r, c = 2 + 2 * int(labels[i]), 4 + int(labels[i])
        images[i, 0, r:r + 8, c:c + 8] += 0.8
    return (images - 0.1307) / 0.3081, labels


train_set = torch.utils.data.TensorDataset(*make_digits(64))
test_set = torch.utils.data.TensorDataset(*make_digits(32))
# Training dataset
train_loader = torch.utils.data.DataLoader(train_set, batch_size=16, shuffle=True, num_workers=0)
# Test dataset
test_loader = torch.utils.data.DataLoader(test_set, batch_size=16, shuffle=True, num_workers=0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)

        # Spatial transformer localization-network
        self.localization = nn.Sequential(
            nn.Conv2d(1, 8, kernel_size=7),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
            nn.Conv2d(8, 10, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True)
        )

        # Regressor for the 3 * 2 affine matrix
        self.fc_loc = nn.Sequential(
            nn.Linear(10 * 3 * 3, 32),
            nn.ReLU(True),
            nn.Linear(32, 3 * 2)
        )

        # Initialize the weights/bias with identity transformation
        self.fc_loc[2].weight.data.zero_()
        self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

    # Spatial transformer network forward function
    def stn(self, x):
        xs = self.localization(x)
        xs = xs.view(-1, 10 * 3 * 3)
        theta = self.fc_loc(xs)
        theta = theta.view(-1, 2, 3)

        grid = F.affine_grid(theta, x.size())
        x = F.grid_sample(x, grid)

        return x

    def forward(self, x):
        # transform the input
        x = self.stn(x)

        # Perform the usual forward pass
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


model = Net().to(device)
print(model)

optimizer = optim.SGD(model.parameters(), lr=0.01)


def train(epoch):
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)

        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        if batch_idx % 2 == 0:
            print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, batch_idx * len(data), len(train_loader.dataset),
                100. * batch_idx / len(train_loader), loss.item()))
#
# A simple test procedure to measure the STN performances on MNIST.
#


def test():
    with torch.no_grad():
        model.eval()
        test_loss = 0
        correct = 0
        for data, target in test_loader:
            data, target = data.to(device), target.to(device)
            output = model(data)

            # sum up batch loss
            test_loss += F.nll_loss(output, target, size_average=False).item()
            # get the index of the max log-probability
            pred = output.max(1, keepdim=True)[1]
            correct += pred.eq(target.view_as(pred)).sum().item()

        test_loss /= len(test_loader.dataset)
        print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'
              .format(test_loss, correct, len(test_loader.dataset),
                      100. * correct / len(test_loader.dataset)))


def convert_image_np(inp):
    """Convert a Tensor to numpy image."""
    inp = inp.numpy().transpose((1, 2, 0))
    mean = np.array([0.485, 0.456, 0.406])
    std = np.array([0.229, 0.224, 0.225])
    inp = std * inp + mean
    inp = np.clip(inp, 0, 1)
    return inp

# We want to visualize the output of the spatial transformers layer
# after the training, we visualize a batch of input images and
# the corresponding transformed batch using STN.


def visualize_stn():
    with torch.no_grad():
        # Get a batch of training data
        data = next(iter(test_loader))[0].to(device)

        input_tensor = data.cpu()
        transformed_input_tensor = model.stn(data).cpu()

        in_grid = convert_image_np(input_tensor[0].repeat(3, 1, 1))
        out_grid = convert_image_np(transformed_input_tensor[0].repeat(3, 1, 1))
        print(in_grid.shape, out_grid.shape, out_grid.dtype, round(float(in_grid.mean()), 4),
              round(float(out_grid.mean()), 4))


for epoch in range(1, 2 + 1):
    train(epoch)
    test()

# Visualize the STN transformation on some input batch
visualize_stn()

theta = model.fc_loc(model.localization(test_set[0][0][None]).view(-1, 90)).view(-1, 2, 3)
print(theta)
grid = F.affine_grid(theta, (1, 1, 4, 4), align_corners=False)
print(grid.shape, grid.grad_fn)
out = F.grid_sample(test_set[0][0][None], grid, align_corners=False)
print(out.grad_fn, out.sum())
out.sum().backward()
print(model.fc_loc[2].bias.grad)
