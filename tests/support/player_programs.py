"""The three programs the player is checked on (browser tests, screenshots, `make assets`).

A Barlow-style loss (wide: two standardised branches meet in a matmul), a small MLP with
cross-entropy (deep, with parameters fanning in) and the doubling loop (a long data-dependent
chain of MulBackward0). Each returns (tensors, names, gradient) for animate()/step().
"""
from __future__ import annotations

import gradviz as torch

PROGRAMS = ("barlow", "mlp", "doubling")

SOURCE = {
    "barlow": """\
z1 = torch.randn(8, 4, requires_grad=True)
z2 = torch.randn(8, 4, requires_grad=True)
a = (z1 - z1.mean(0)) / z1.std(0)
b = (z2 - z2.mean(0)) / z2.std(0)
loss = -torch.diagonal(a.T @ b / 8).sum()
args, names, gradient = (loss,), {"z1": z1, "z2": z2, "loss": loss}, None
""",
    "mlp": """\
x = torch.randn(5, 4)
target = torch.tensor([0, 2, 1, 2, 0])
W1 = torch.randn(4, 6, requires_grad=True)
b1 = torch.zeros(6, requires_grad=True)
W2 = torch.randn(6, 3, requires_grad=True)
b2 = torch.zeros(3, requires_grad=True)
h = torch.relu(x @ W1 + b1)
loss = torch.nn.functional.cross_entropy(h @ W2 + b2, target)
args, names, gradient = (loss,), {"W1": W1, "b1": b1, "W2": W2, "b2": b2, "loss": loss}, None
""",
    "doubling": """\
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
while y.norm() < 1000:
    y = y * 2
args, names, gradient = (y,), {"x": x, "y": y}, torch.tensor([0.1, 1.0, 0.0001])
""",
    # not one of PROGRAMS: a line that wraps to several rows in a small window's code box
    "long_line": """\
a = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
weights = torch.tensor([0.5, -1.0, 2.0])
loss = (torch.tanh(a * weights) + torch.sigmoid(a * weights) * torch.exp(-a * weights) - torch.log1p(a * a * weights * weights)).sum()
args, names, gradient = (loss,), {"a": a, "loss": loss}, None
""",
    # not one of PROGRAMS: the README's picture of a running sum (x feeds three ops, its .grad adds three terms)
    "fanout": """\
x = torch.tensor([[1.0, -2.0, 0.5], [3.0, 0.0, -1.0]], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = x * w
z = torch.tanh(x)
loss = (y + z * x).sum()
args, names, gradient = (loss,), {"x": x, "w": w, "y": y, "z": z, "loss": loss}, None
""",
}


def program(name: str) -> tuple:
    """(tensors, names, gradient) of one of PROGRAMS, with a fixed seed."""
    torch.manual_seed(0)
    scope: dict = {"torch": torch}
    exec(SOURCE[name], scope)
    return scope["args"], scope["names"], scope["gradient"]


def tracked_animation(name: str, folder, **options):
    """One of PROGRAMS run from a file in `folder` with source tracking on (as in a notebook), so the
    player lists its code and highlights the line of each node."""
    import runpy
    from pathlib import Path

    from gradviz import code_lines
    path = Path(folder) / f"{name}.py"
    path.write_text("import gradviz as torch\ntorch.manual_seed(0)\n" + SOURCE[name])
    was = code_lines.source_tracking()
    code_lines.set_source_tracking(True)
    try:
        scope = runpy.run_path(str(path))
    finally:
        code_lines.set_source_tracking(was)
    return torch.animate(*scope["args"], names=scope["names"], gradient=scope["gradient"], **options)


def animation(name: str, **options):
    tensors, names, gradient = program(name)
    return torch.animate(*tensors, names=names, gradient=gradient, **options)
