"""Which warnings PyTorch 2.13 shows once a process (TORCH_WARN_ONCE) and which once a line,
with its words: each case calls the same thing from two lines under the "always" filter."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings

import pytest

import gradviz
from gradviz import _warn
from tests.support.parity import needs_torch

# case -> (program calling the warning thing twice, from two lines; how many warnings torch shows)
CASES = {
    "float": ("x = torch.ones(1, requires_grad=True)\nfloat(x)\nfloat(x * 2)", 1),
    "T on 0-d": ("x = torch.tensor(1.)\nx.T\nx.T", 1),
    "T on 3-d": ("x = torch.ones(2, 3, 4)\nx.T\nx.T", 1),
    "cholesky": ("a = torch.eye(2)\ntorch.cholesky(a)\ntorch.cholesky(a)", 1),
    "cross": ("a = torch.ones(3, 3)\ntorch.cross(a, a)\ntorch.cross(a, a)", 1),
    "meshgrid": ("a = torch.ones(2)\ntorch.meshgrid(a, a)\ntorch.meshgrid(a, a)", 1),
    "conv same": ("x, w = torch.ones(1, 1, 5), torch.ones(1, 1, 2)\n"
                  "torch.nn.functional.conv1d(x, w, padding='same')\ntorch.nn.functional.conv1d(x, w, padding='same')", 1),
    "copy construct": ("x = torch.ones(2)\ntorch.tensor(x)\ntorch.tensor(x)", 2),
    "cov": ("a = torch.ones(3, 1)\ntorch.cov(a)\ntorch.cov(a)", 2),
    "std": ("a = torch.ones(1)\ntorch.std(a)\ntorch.std(a)", 2),
    "non-leaf grad": ("x = torch.ones(2, requires_grad=True)\ny = x * 2\ny.grad\ny.grad", 2),
    "kl_div mean": ("a = torch.zeros(2, 3)\ntorch.nn.functional.kl_div(a, a)\ntorch.nn.KLDivLoss()(a, a)", 2),
    "softmax dim": ("x = torch.ones(2, 3)\ntorch.nn.functional.softmax(x)\ntorch.nn.functional.softmax(x)", 2),
}
TRIGGERED = re.compile(r" \(Triggered internally at .*\)$", re.S)


def shown(module, source: str) -> list[tuple[str, str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exec(compile(source, "<program>", "exec"), {"torch": module})
    return [(w.category.__name__, TRIGGERED.sub("", str(w.message))) for w in caught]


def fresh_gradviz(source: str) -> list[tuple[str, str]]:
    return shown(gradviz, source)   # conftest starts every test with no warning shown yet


@pytest.mark.parametrize("case", CASES)
def test_warned_as_often_as_torch(case):
    source, count = CASES[case]
    assert len(fresh_gradviz(source)) == count


def test_warn_once_survives_every_filter_and_names_the_callers_line():
    x = gradviz.ones(1, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        float(x)
        float(x)
        x.T, x.T
    assert [w.filename for w in caught] == [__file__, __file__]
    assert caught[0].lineno != caught[1].lineno
    assert _warn._warned_once   # remembered for the rest of the process


@pytest.fixture(scope="module")
def torch_shows():
    """What torch shows for every case, in one fresh process (its once-memory is per process; no
    two cases share a message)."""
    script = ("import json, re, sys, warnings, torch\n"
              "answers = {}\n"
              "for case, source in json.loads(sys.argv[1]).items():\n"
              "    with warnings.catch_warnings(record=True) as caught:\n"
              "        warnings.simplefilter('always')\n"
              "        exec(compile(source, '<program>', 'exec'), {'torch': torch})\n"
              "    answers[case] = [(w.category.__name__, re.sub(r' \\(Triggered internally at .*\\)$', '', "
              "str(w.message), flags=re.S)) for w in caught]\n"
              "print(json.dumps(answers))\n")
    sources = json.dumps({case: source for case, (source, _) in CASES.items()})
    out = subprocess.run([sys.executable, "-c", script, sources], capture_output=True, text=True, check=True)
    answers = json.loads(out.stdout.strip().splitlines()[-1])
    return {case: [tuple(pair) for pair in shown] for case, shown in answers.items()}


@needs_torch
@pytest.mark.parametrize("case", CASES)
def test_words_and_count_are_torchs(case, torch_shows):
    assert fresh_gradviz(CASES[case][0]) == torch_shows[case]


# -- NumPy's floating-point warnings never reach the learner: torch computes inf and nan silently ----------
SILENT = """
x = torch.tensor([3e38, 3e38])
print(x.sum(), x * 10, x.mean(), x.prod(), x.cumsum(0), x - x * 10)
print(torch.tensor([float('inf')]) - torch.tensor([float('inf')]), torch.tensor([]).mean())
print(torch.tensor([[3e38]]) @ torch.tensor([[3e38]]), torch.tensor([3e38]).half(), torch.tensor([1e20]).int().dtype)
y = torch.tensor([3e38, 1.], requires_grad=True)
(y * 10 + torch.tensor([100., 0.]).exp()).sum().backward()
print(y.grad)
"""


def _run(module: str, program: str) -> subprocess.CompletedProcess:
    source = f"import {module} as torch\n" + program
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, timeout=120)


@needs_torch
def test_numpy_floating_warnings_stay_quiet_as_torch():
    ours, theirs = _run("gradviz", SILENT), _run("torch", SILENT)
    assert theirs.stderr == "" and ours.stderr == ""
    assert ours.stdout.replace("dtype=torch.float16", "") == theirs.stdout.replace("dtype=torch.float16", "")


def test_the_learners_own_numpy_still_warns():
    program = "import numpy as np\nprint(np.float32(3e38) * np.float32(10))"
    result = _run("gradviz", program)
    assert "RuntimeWarning: overflow encountered in scalar multiply" in result.stderr


# the learner's own filters set after import (warnings as errors, or pytest's reset per test) drop gradviz's
# filter: the backward still meets inf · 0 silently, as torch's does
AFTER_RESET = """
import warnings
warnings.simplefilter("error")
a = torch.tensor([[0.0, 0.0, 0.0], [-1.5, 1.0, 0.5]], dtype=torch.float64, requires_grad=True)
y = a.norm(dim=1) + a.norm(p=1.5, dim=1) + a.norm(p=0.5, dim=1)
(g,) = torch.autograd.grad(y.sum(), a, create_graph=True)
g.sum().backward()
x = torch.tensor([[[float('inf'), 1.0, 2.0]]], requires_grad=True)
w = torch.tensor([[[0.0, 1.0]]], requires_grad=True)
torch.nn.functional.conv1d(x, w).sum().backward()
print(a.grad, x.grad, w.grad)
"""


@needs_torch
def test_a_backward_is_quiet_after_the_filters_are_reset():
    ours, theirs = _run("gradviz", AFTER_RESET), _run("torch", AFTER_RESET)
    assert theirs.stderr == "" and ours.stderr == ""
    assert ours.stdout == theirs.stdout
