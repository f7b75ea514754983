# pytorch.org "Learn the Basics", as written: a custom Dataset with transform and target_transform
# (the one-hot Lambda by zeros(...).scatter_(0, torch.tensor(y), value=1)), DataLoader; "Build the
# Neural Network" (NeuralNetwork with Flatten and a Linear/ReLU stack, Softmax(dim=1), the layer by
# layer walk, named_parameters with param[:2]); "Automatic Differentiation" (binary_cross_entropy_with_logits,
# grad_fn, no_grad, detach, the Jacobian product of torch.eye(4, 5) called twice and after zero_());
# "Optimizing Model Parameters" (train_loop/test_loop with the tutorial's f-strings); "Save and Load"
# (state_dict with weights_only=True, a whole Sequential with weights_only=False). FashionMNIST is replaced
# by 256 random 28x28 images, the hidden width 512 by 32; 3 epochs.
import os
import tempfile

import numpy as np
import torch
from torch import nn
from torch.utils.data import Dataset, DataLoader

device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
print(f"Using {device} device")
torch.manual_seed(0)

labels_map = {
    0: "T-Shirt", 1: "Trouser", 2: "Pullover", 3: "Dress", 4: "Coat",
    5: "Sandal", 6: "Shirt", 7: "Sneaker", 8: "Bag", 9: "Ankle Boot",
}


class CustomImageDataset(Dataset):
    def __init__(self, images, labels, transform=None, target_transform=None):
        self.img_labels = labels
        self.images = images
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self):
        return len(self.img_labels)

    def __getitem__(self, idx):
        image = self.images[idx]
        label = self.img_labels[idx]
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label


def ToTensor(pic):
    """torchvision's ToTensor of a uint8 HxW image: a float CxHxW tensor in [0, 1]."""
    return torch.from_numpy(pic).unsqueeze(0).float().div(255)


rng = np.random.default_rng(0)
labels = rng.integers(0, 10, 320)
pictures = rng.integers(0, 100, (320, 28, 28), dtype=np.uint8)
for i, y in enumerate(labels):
    pictures[i, 2 * y:2 * y + 6, 4:24] += 150

training_data = CustomImageDataset(pictures[:256], labels[:256].tolist(), transform=ToTensor)
test_data = CustomImageDataset(pictures[256:], labels[256:].tolist(), transform=ToTensor)
ds = CustomImageDataset(pictures[:4], labels[:4].tolist(), transform=ToTensor,
                        target_transform=lambda y: torch.zeros(10, dtype=torch.float).scatter_(0, torch.tensor(y), value=1))
img, label = ds[0]
print(img.shape, img.dtype, img.max(), label, labels_map[labels[0].item()])

train_dataloader = DataLoader(training_data, batch_size=64, shuffle=True)
test_dataloader = DataLoader(test_data, batch_size=64, shuffle=True)
train_features, train_labels = next(iter(train_dataloader))
print(f"Feature batch shape: {train_features.size()}")
print(f"Labels batch shape: {train_labels.size()}")
img = train_features[0].squeeze()
label = train_labels[0]
print(img.shape, f"Label: {label}")


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28*28, 32),
            nn.ReLU(),
            nn.Linear(32, 32),
            nn.ReLU(),
            nn.Linear(32, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


model = NeuralNetwork().to(device)
print(model)

X = torch.rand(1, 28, 28, device=device)
logits = model(X)
pred_probab = nn.Softmax(dim=1)(logits)
y_pred = pred_probab.argmax(1)
print(f"Predicted class: {y_pred}")

input_image = torch.rand(3,28,28)
print(input_image.size())
flatten = nn.Flatten()
flat_image = flatten(input_image)
print(flat_image.size())
layer1 = nn.Linear(in_features=28*28, out_features=20)
hidden1 = layer1(flat_image)
print(hidden1.size())
print(f"Before ReLU: {hidden1}\n\n")
hidden1 = nn.ReLU()(hidden1)
print(f"After ReLU: {hidden1}")
seq_modules = nn.Sequential(
    flatten,
    layer1,
    nn.ReLU(),
    nn.Linear(20, 10)
)
input_image = torch.rand(3,28,28)
logits = seq_modules(input_image)
softmax = nn.Softmax(dim=1)
pred_probab = softmax(logits)
print(pred_probab)
print(f"Model structure: {model}\n\n")

for name, param in model.named_parameters():
    print(f"Layer: {name} | Size: {param.size()} | Values : {param[:2, :4] if param.ndim > 1 else param[:2]} \n")

# Automatic Differentiation with torch.autograd
x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w)+b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")
loss.backward()
print(w.grad)
print(b.grad)
z = torch.matmul(x, w)+b
print(z.requires_grad)

with torch.no_grad():
    z = torch.matmul(x, w)+b
print(z.requires_grad)
z = torch.matmul(x, w)+b
z_det = z.detach()
print(z_det.requires_grad)

inp = torch.eye(4, 5, requires_grad=True)
out = (inp+1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")

# Optimizing Model Parameters
learning_rate = 1e-1
batch_size = 64
epochs = 3

loss_fn = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)


def train_loop(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    # Set the model to training mode - important for batch normalization and dropout layers
    # Unnecessary in this situation but added for best practices
    model.train()
    for batch, (X, y) in enumerate(dataloader):
        # Compute prediction and loss
        pred = model(X)
        loss = loss_fn(pred, y)

        # Backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        if batch % 2 == 0:
            loss, current = loss.item(), batch * batch_size + len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")


def test_loop(dataloader, model, loss_fn):
    # Set the model to evaluation mode - important for batch normalization and dropout layers
    # Unnecessary in this situation but added for best practices
    model.eval()
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    test_loss, correct = 0, 0

    # Evaluating the model with torch.no_grad() ensures that no gradients are computed during test mode
    # also serves to reduce unnecessary gradient computations and memory usage for tensors with requires_grad=True
    with torch.no_grad():
        for X, y in dataloader:
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()

    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")


for t in range(epochs):
    print(f"Epoch {t+1}\n-------------------------------")
    train_loop(train_dataloader, model, loss_fn, optimizer)
    test_loop(test_dataloader, model, loss_fn)
print("Done!")

# Save and Load the Model
with tempfile.TemporaryDirectory() as folder:
    torch.save(model.state_dict(), os.path.join(folder, 'model_weights.pth'))
    model2 = NeuralNetwork()
    print(model2.load_state_dict(torch.load(os.path.join(folder, 'model_weights.pth'), weights_only=True)))
    model2.eval()
    # the tutorial saves a torchvision model whole; a class defined in this script cannot be found by
    # pickle here (it runs under exec), so the library's Sequential is saved whole instead
    torch.save(model.linear_relu_stack, os.path.join(folder, 'model.pth'))
    model3 = torch.load(os.path.join(folder, 'model.pth'), weights_only=False)
X, y = next(iter(DataLoader(test_data, batch_size=4)))
print(model(X).argmax(1), model2(X).argmax(1), model3(X.flatten(1)).argmax(1), y)
print(torch.equal(model(X), model3(X.flatten(1))), type(model3).__name__)

# the quickstart's prediction
classes = list(labels_map.values())
model.eval()
x, y = test_data[0][0], test_data[0][1]
with torch.no_grad():
    x = x.to(device)
    pred = model(x)
    predicted, actual = classes[pred[0].argmax(0)], classes[y]
    print(f'Predicted: "{predicted}", Actual: "{actual}"')
