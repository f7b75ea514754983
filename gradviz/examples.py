"""The tutorials' examples, as small named programs the demo (and anything else) can draw.

Each example is a few lines of code written with the public API, run as if a learner had
typed it: with source tracking on, every node knows its line, so a player made from it
lists the code and highlights the line of each step, as a notebook's does. Each returns an
Example: the tensors to draw, their names, and the gradient a backward over them starts
from. Adding an example is one entry in CODE; an output format, one entry in cli.DEMO_WRITERS.
"""
from __future__ import annotations

import linecache
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

from . import code_lines
from .creation import tensor


@dataclass
class Example:
    title: str
    tensors: tuple
    names: dict = field(default_factory=dict)
    gradient: object = None          # the seed for backward (None: the outputs are scalars)


# name -> (title, code); the code leaves `tensors`, `names` and `gradient` behind
CODE = {
    "barlow": ("Barlow-style loss", """\
N, D = 4, 3
z1 = torch.randn(N, D, requires_grad=True)
z2 = torch.randn(N, D, requires_grad=True)
z1n = (z1 - z1.mean(0)) / z1.std(0)
c = z1n.T @ z2 / N
loss = -torch.diagonal(c).sum()
tensors, names, gradient = (loss,), {"z1": z1, "z2": z2, "loss": loss}, None
"""),
    "pow": ("t.pow(3).sum()", """\
t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
out = t.pow(3).sum()
tensors, names, gradient = (out,), {"t": t, "out": out}, None
"""),
    "doubling": ("the doubling loop", """\
x = torch.randn(3, requires_grad=True)
y = x * 2
while y.data.norm() < 1000:
    y = y * 2
tensors, names, gradient = (y,), {"x": x, "y": y}, torch.tensor([0.1, 1.0, 0.0001])
"""),
    "mm": ("torch.mm(x, M)", """\
x = torch.randn(2, 3, requires_grad=True)
M = torch.randn(3, 2, requires_grad=True)
out = torch.mm(x, M)
tensors, names, gradient = (out,), {"x": x, "M": M, "out": out}, torch.ones(2, 2)
"""),
}


def run(name: str) -> Example:
    """Run one example's code, its lines known to linecache (so each node's line can be shown)."""
    import gradviz as torch
    title, code = CODE[name]
    filename = f"<gradviz example {name}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    was = code_lines.source_tracking()
    code_lines.set_source_tracking(True)
    try:
        scope = {"torch": torch}
        exec(compile(code, filename, "exec"), scope)
    finally:
        code_lines.set_source_tracking(was)
    return Example(title, scope["tensors"], scope["names"], scope["gradient"])


def barlow() -> Example:
    """The Barlow-Twins-style loss: standardise, cross-correlate, minus the trace."""
    return run("barlow")


def pow3() -> Example:
    """t.pow(3).sum(): the gradient is 3t²."""
    return run("pow")


def doubling() -> Example:
    """y = x*2 doubled until its norm passes 1000: a data-dependent chain of MulBackward0."""
    return run("doubling")


def mm() -> Example:
    """torch.mm(x, M): backward with a vector v gives vᵀJ."""
    return run("mm")


EXAMPLES = {"barlow": barlow, "pow": pow3, "doubling": doubling, "mm": mm}


# -- small real data sets, shipped in gradviz/data with their licence (see its README.md) -----------
IRIS_SPECIES = ("setosa", "versicolor", "virginica")


def iris():
    """The Iris data set (Fisher, 1936; UCI, CC BY 4.0): 150 flowers as a (150, 4) float32 tensor of
    measurements in cm (sepal length and width, petal length and width) and a (150,) int64 tensor of
    species indices into IRIS_SPECIES."""
    text = resources.files("gradviz").joinpath("data/iris.csv").read_text(encoding="utf-8")
    rows = [line.split(",") for line in text.splitlines()[1:] if line]
    features = np.array([[float(v) for v in row[:4]] for row in rows], dtype=np.float32)
    labels = np.array([IRIS_SPECIES.index(row[4]) for row in rows], dtype=np.int64)
    return tensor(features), tensor(labels)
