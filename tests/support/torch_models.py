"""Four real PyTorch models, written here (random initialisation, no downloads), for the torch
bridge's tests and benchmarks/peers.py: a 2-layer MLP with cross-entropy; ResNet-18 layer for
layer as torchvision writes it; a nanoGPT-style GPT (2 layers, 2 heads, d=64, tied embeddings);
and an Embedding -> nn.LSTM -> Linear classifier. Each `make_*` returns a Case: the model, its
inputs, and the loss of one forward pass. REAL_SIZE holds two of them at the size a learner trains
(ResNet-18 on 4 images of 224x224; the GPT of nanoGPT's Shakespeare run: 6 layers, 6 heads, d=384,
128 tokens, batch 4), for benchmarks/peers.py."""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn
from torch.nn import functional as F


@dataclass
class Case:
    model: nn.Module
    inputs: tuple
    loss_of: Callable   # loss_of(model, *inputs) -> scalar loss

    def loss(self):
        return self.loss_of(self.model, *self.inputs)


# -- a 2-layer MLP -----------------------------------------------------------------------------
class MLP(nn.Module):
    def __init__(self, d_in=20, hidden=32, classes=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(hidden, classes)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def _classify(model, x, y):
    return F.cross_entropy(model(x), y)


def make_mlp(seed: int = 0) -> Case:
    torch.manual_seed(seed)
    return Case(MLP(), (torch.randn(8, 20), torch.randint(0, 10, (8,))), _classify)


# -- ResNet-18, as torchvision.models.resnet writes it ------------------------------------------
def conv3x3(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=3, stride=stride, padding=1, bias=False)


def conv1x1(in_planes, out_planes, stride=1):
    return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet(nn.Module):
    def __init__(self, layers=(2, 2, 2, 2), num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(self.inplanes)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], stride=2)
        self.layer3 = self._make_layer(256, layers[2], stride=2)
        self.layer4 = self._make_layer(512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * BasicBlock.expansion, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(conv1x1(self.inplanes, planes, stride), nn.BatchNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        layers += [BasicBlock(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def make_resnet18(seed: int = 0) -> Case:
    torch.manual_seed(seed)
    return Case(ResNet(), (torch.randn(1, 3, 64, 64), torch.tensor([3])), _classify)


# -- a nanoGPT-style GPT ----------------------------------------------------------------------
class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size=65, block_size=16, n_layer=2, n_head=2, n_embd=64):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd), wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd)))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight   # weight tying

    def forward(self, idx):
        pos = torch.arange(idx.size(1))
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


def _language_model(model, idx, targets):
    logits = model(idx)
    return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def make_gpt(seed: int = 0) -> Case:
    torch.manual_seed(seed)
    idx = torch.randint(0, 65, (2, 16))
    return Case(GPT(), (idx, torch.randint(0, 65, (2, 16))), _language_model)


# -- Embedding -> nn.LSTM -> Linear ---------------------------------------------------------------
class LSTMClassifier(nn.Module):
    def __init__(self, vocab=50, d=16, hidden=32, classes=5):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d)
        self.lstm = nn.LSTM(d, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, tokens):
        out, _ = self.lstm(self.embedding(tokens))
        return self.head(out[:, -1])


def make_lstm(seed: int = 0) -> Case:
    torch.manual_seed(seed)
    return Case(LSTMClassifier(), (torch.randint(0, 50, (3, 6)), torch.randint(0, 5, (3,))), _classify)


def torch_walk(loss) -> Counter:
    """The node names torch's own walk of next_functions reaches from the loss."""
    seen, stack = set(), [loss.grad_fn]
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        stack.extend(nxt for nxt, _ in fn.next_functions)
    return Counter(type(fn).__name__ for fn in seen)


MODELS = {"mlp": make_mlp, "resnet18": make_resnet18, "gpt": make_gpt, "lstm": make_lstm}


def make_resnet18_224(seed: int = 0) -> Case:
    torch.manual_seed(seed)
    return Case(ResNet(), (torch.randn(4, 3, 224, 224), torch.randint(0, 1000, (4,))), _classify)


def make_gpt_6l(seed: int = 0) -> Case:
    torch.manual_seed(seed)
    idx = torch.randint(0, 65, (4, 128))
    model = GPT(vocab_size=65, block_size=128, n_layer=6, n_head=6, n_embd=384)
    return Case(model, (idx, torch.randint(0, 65, (4, 128))), _language_model)


REAL_SIZE = {"resnet18-224": make_resnet18_224, "gpt-6l": make_gpt_6l}
