"""What watching torch's forward for the learner's lines costs a training loop.

  python benchmarks/torch_lines.py [--rounds N] [--steps N]

`gradviz render|animate train.py` watches a torch script from the moment it imports torch until the
backward it records starts (torch_bridge.lines.LineWatch: a TorchFunctionMode that gives each new
node the script's line); `record_forward` watches a block the same way and also keeps each op's value
and module. Here one training step (zero_grad, forward, cross-entropy, backward, SGD step) of three
models runs plain, under a TorchFunctionMode that does nothing (the floor any mode costs), under the
watch, and under record_forward, interleaved round by round in one process: a tiny MLP (4-8-3, batch
5: almost nothing but per-call overhead, the worst case), an MLP (784-256-10, batch 64) and a small
CNN (two 3x3 conv layers, 1x28x28, batch 32). Medians of the rounds of seconds per step, CPU time
(this process) with its ratio to plain, and wall time beside it.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch import nn
import torch.nn.functional as F

from gradviz.torch_bridge import record_forward
from gradviz.torch_bridge.lines import LineWatch


class TinyMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(784, 256), nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x.flatten(1))))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.conv2 = nn.Conv2d(1, 8, 3, padding=1), nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


MODELS = {"tiny MLP": (TinyMLP, (5, 4), 3), "MLP 784-256-10": (MLP, (64, 1, 28, 28), 10),
          "CNN 2 conv": (CNN, (32, 1, 28, 28), 10)}


def setup(name: str):
    cls, shape, classes = MODELS[name]
    torch.manual_seed(0)
    model = cls()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(*shape), torch.randint(0, classes, (shape[0],))
    return model, opt, x, y


def train_step(model, opt, x, y) -> None:
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()


class EmptyMode(torch.overrides.TorchFunctionMode):
    """A mode that does nothing: what any TorchFunctionMode costs, the floor under the watch's."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def timed(how: str, model, opt, x, y, steps: int) -> tuple:
    """(wall, cpu) seconds per step of `steps` training steps run `how`."""
    watch, empty = LineWatch(), EmptyMode()
    if how == "watched":   # as the command line watches a script until the backward it records
        watch.start()
    elif how == "empty mode":
        empty.__enter__()
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        if how == "record_forward":
            with record_forward(model):
                train_step(model, opt, x, y)
        else:
            train_step(model, opt, x, y)
    wall, cpu = (time.perf_counter() - wall) / steps, (time.process_time() - cpu) / steps
    watch.stop()
    if how == "empty mode":
        empty.__exit__(None, None, None)
    return wall, cpu


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--steps", type=int, default=20)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)   # one core each: the ratios, not the machine's sharing, are the figure
    hows = ("plain", "empty mode", "watched", "record_forward")
    print(f"torch {torch.__version__}, {args.rounds} rounds of {args.steps} steps, medians; ms per training step")
    print(f"{'model':<16}" + "".join(f"{h + ' cpu':>24}{'wall':>9}" for h in hows))
    for name in MODELS:
        model, opt, x, y = setup(name)
        for how in hows:
            timed(how, model, opt, x, y, 3)   # warm up
        times = {h: [] for h in hows}
        for _ in range(args.rounds):
            for how in hows:
                times[how].append(timed(how, model, opt, x, y, args.steps))
        wall = {h: statistics.median(t[0] for t in times[h]) for h in hows}
        cpu = {h: statistics.median(t[1] for t in times[h]) for h in hows}
        row = f"{name:<16}"
        for how in hows:
            ratio = "" if how == "plain" else f" (x{cpu[how] / cpu['plain']:.2f})"
            row += f"{cpu[how] * 1e3:>15.3f}{ratio:>9}{wall[how] * 1e3:>9.3f}"
        print(row)


if __name__ == "__main__":
    main()
