"""The tutorials' examples, as small named functions the demo (and anything else) can draw.

Each builds its graph with the public API and returns an Example: the tensors to
draw, their names, and the gradient a backward over them starts from. The demo
runs each one, records its backward and writes one file per writer; adding an
example or an output format is one entry in EXAMPLES or in cli.DEMO_WRITERS.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Example:
    title: str
    tensors: tuple
    names: dict = field(default_factory=dict)
    gradient: object = None          # the seed for backward (None: the outputs are scalars)


def barlow() -> Example:
    """The Barlow-Twins-style loss: standardise, cross-correlate, minus the trace."""
    import gradviz as torch
    N, D = 4, 3
    z1 = torch.randn(N, D, requires_grad=True)
    z2 = torch.randn(N, D, requires_grad=True)
    z1n = (z1 - z1.mean(0)) / z1.std(0)
    c = z1n.T @ z2 / N
    loss = -torch.diagonal(c).sum()
    return Example("Barlow-style loss", (loss,), {"z1": z1, "z2": z2, "loss": loss})


def pow3() -> Example:
    """t.pow(3).sum(): the gradient is 3t²."""
    import gradviz as torch
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    out = t.pow(3).sum()
    return Example("t.pow(3).sum()", (out,), {"t": t, "out": out})


def doubling() -> Example:
    """y = x*2 doubled until its norm passes 1000: a data-dependent chain of MulBackward0."""
    import gradviz as torch
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    v = torch.tensor([0.1, 1.0, 0.0001])
    return Example("the doubling loop", (y,), {"x": x, "y": y}, gradient=v)


def mm() -> Example:
    """torch.mm(x, M): backward with a vector v gives vᵀJ."""
    import gradviz as torch
    x = torch.randn(2, 3, requires_grad=True)
    M = torch.randn(3, 2, requires_grad=True)
    out = torch.mm(x, M)
    return Example("torch.mm(x, M)", (out,), {"x": x, "M": M, "out": out}, gradient=torch.ones(2, 2))


EXAMPLES = {"barlow": barlow, "pow": pow3, "doubling": doubling, "mm": mm}
