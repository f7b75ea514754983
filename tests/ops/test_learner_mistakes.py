"""Every learner mistake of tests/support/learner_mistakes.py ends under gradviz as under PyTorch:
the same error type and message (PyTorch's words, perhaps followed by gradviz's hint in brackets),
or the same value and warnings. LEFT lists the snippets that still differ, each with the reason."""
from __future__ import annotations

import pytest

from tests.support.learner_mistakes import MISTAKES, verdict
from tests.support.parity import needs_torch

# snippet -> (how it differs, why it is left)
LEFT = {
    "x = torch.ones(2, requires_grad=True); (x * 2).sum().backward(create_graph=True); x.grad.requires_grad":
        ("warning", "PyTorch warns of a reference cycle between parameters and their .grad that its C++ graph "
                    "makes; gradviz's Python graph is collected normally, so there is nothing to warn of"),
    "import numpy as np; torch.from_numpy(np.array(['a']))":
        ("words", "PyTorch's list of convertible dtypes names complex and wide unsigned types that gradviz "
                  "does not hold; gradviz lists the ones it does"),
    "m = torch.nn.Linear(2, 2); o = torch.optim.SGD(m.parameters(), lr='0.1'); m(torch.ones(1, 2)).sum()"
    ".backward(); o.step()":
        ("words", "both raise Python's TypeError for comparing a str with a float; the comparison each "
                  "makes first differs ('<' in PyTorch, '>=' in gradviz)"),
    "torch.ones(2).cuda()": ("type", "gradviz reaches a GPU through CuPy and says how to install it; "
                                     "PyTorch's AssertionError names its own CPU-only build"),
    "torch.nn.Linear(2, 2).to('cuda')": ("type", "as torch.ones(2).cuda(): gradviz's GPU is CuPy's"),
    "torch.ones(2, device='cuda:0')": ("type", "as torch.ones(2).cuda(): gradviz's GPU is CuPy's"),
    "torch.ones(2).to('gpu')": ("words", "gradviz lists the device types it has (cpu, cuda), not PyTorch's twenty"),
    "torch.ones(3, 1).expand(3, -2)":
        ("words", "PyTorch's words come from an overflow in its size arithmetic ('numel: integer "
                  "multiplication overflow'); gradviz names the negative size"),
    "torch.nn.Conv2d(1, 1, 3, padding='full')":
        ("words", "PyTorch prints a Python set, whose order follows PYTHONHASHSEED from run to run"),
    "torch.ones(2, 3).sum(dim=1.0)":
        ("words", "a TypeError in both; PyTorch's parser lists every signature of sum"),
    "torch.ones(2, 3).mean(1, True, torch.float64).shape":
        ("words", "a TypeError in both; PyTorch's parser counts a method's arguments without self"),
    "torch.where(torch.ones(2) > 0, torch.ones(2))":
        ("words", "a TypeError in both; PyTorch's parser lists every signature of where"),
    "torch.ones(2).resize_(3).shape": ("raises", "Tensor.resize_ is not implemented in gradviz"),
    "torch.ones(6).view((2, 3), 1)": ("words", "a TypeError in both; PyTorch's parser lists view's two signatures"),
    "torch.ones(2, 3).unflatten(1, (-1, -1))":
        ("words", "PyTorch's message carries its C++ stack trace; gradviz's is the error it wraps"),
    "torch.ones(2, 3).transpose(0)":
        ("words", "Python's own missing-argument TypeError, named Tensor.transpose(); PyTorch's parser's wording"),
    "torch.ones(2, 3).max(1, 2)":
        ("words", "the same TypeError; PyTorch names the position of a keepdim given positionally"),
    "torch.max(torch.ones(2, 3), 1, keepdim=3)":
        ("words", "a TypeError in both; PyTorch's parser lists every signature of max"),
    "torch.ones(2, 3).sum(keepdims=True).shape":
        ("words", "the same TypeError and signatures; PyTorch echoes the misspelt keyword, gradviz the one it reads"),
    "torch.ones(2, 3).softmax()":
        ("words", "Python's own missing-argument TypeError names the method's class; PyTorch's parser's wording"),
    "torch.ones(2, 3).cumsum()": ("words", "as softmax(): Python's missing-argument wording"),
}


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("family,snippet", MISTAKES, ids=[f"{f}-{i}" for i, (f, _) in enumerate(MISTAKES)])
def test_mistake_ends_as_in_pytorch(family, snippet):
    found, theirs, ours = verdict(snippet)
    allowed = ("same", "hint") + ((LEFT[snippet][0],) if snippet in LEFT else ())   # a set's order may match
    assert found in allowed, f"{snippet}\n  PyTorch: {theirs}\n  gradviz: {ours}"


def test_sweep_is_large_and_left_is_small():
    snippets = [s for _, s in MISTAKES]
    assert len(snippets) >= 600 and len(set(snippets)) == len(snippets)
    assert set(LEFT) <= set(snippets)
    assert len(LEFT) < len(snippets) // 20
