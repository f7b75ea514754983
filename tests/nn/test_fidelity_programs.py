"""The "from scratch" programs of tests/support/programs, run under PyTorch 2.13 and under gradviz
with only their imports changed, print the same lines (numbers within float32 tolerance).
docs/fidelity.md is their table; the three below print what PyTorch prints except for the
inherent difference named here, whose size is pinned."""
from __future__ import annotations

import pytest

from tests.support import fidelity
from tests.support.parity import needs_torch

# program -> (why it differs, the noise threshold or relative size the difference stays within)
INHERENT = {
    "state_dict": ("the momentum buffer of a bias followed by BatchNorm holds a gradient that is "
                   "mathematically 0: rounding noise below 1e-7, printed with its own sign and padding", 1e-7),
    "rmsprop_poly": ("2,000 RMSprop steps amplify float32 rounding (PyTorch's own loss moves as much "
                     "between 1 and 2 threads)", 2e-2),
    "makemore_mlp": ("300 SGD steps at lr 0.1 through saturated tanh units (W1 not scaled, as in the lecture) "
                     "amplify the last bit of tanh and of the BLAS sums from step 4 on (PyTorch's own losses move "
                     "4.5e-3 under ATEN_CPU_CAPABILITY=default)", 1e-2),
}


@needs_torch
@pytest.mark.parametrize("name", [n for n in fidelity.program_names() if n not in INHERENT])
def test_program_prints_what_torch_prints(name):
    ours, theirs = fidelity.run(name, "gradviz"), fidelity.run(name, "torch")
    assert fidelity.differences(ours, theirs) == []


@needs_torch
def test_rounding_noise_on_a_zero_gradient_is_the_only_difference():
    ours, theirs = fidelity.run("state_dict", "gradviz"), fidelity.run("state_dict", "torch")
    assert fidelity.differences(ours, theirs, noise=INHERENT["state_dict"][1]) == []


@needs_torch
def test_long_rmsprop_fit_drifts_within_torchs_own_variation():
    ours, theirs = fidelity.run("rmsprop_poly", "gradviz"), fidelity.run("rmsprop_poly", "torch")
    losses = [line for line in zip(ours.splitlines(), theirs.splitlines()) if not line[0].startswith("Result")]
    assert fidelity.differences("\n".join(a for a, _ in losses), "\n".join(b for _, b in losses),
                                rtol=INHERENT["rmsprop_poly"][1]) == []


@needs_torch
def test_makemore_mlp_agrees_before_training_and_drifts_within_torchs_own_variation():
    ours, theirs = fidelity.run("makemore_mlp", "gradviz"), fidelity.run("makemore_mlp", "torch")
    start = theirs.splitlines().index(next(line for line in theirs.splitlines() if line.startswith("0 ")))
    before = ["\n".join(text.splitlines()[:start]) for text in (ours, theirs)]
    assert fidelity.differences(*before) == []
    assert fidelity.differences(ours, theirs, rtol=INHERENT["makemore_mlp"][1]) == []


def test_a_dotted_name_under_the_package_reads_as_torchs_and_nothing_else_does():
    """<class 'gradviz.Tensor'> is torch's <class 'torch.Tensor'>; a class under another path is not."""
    assert fidelity.differences("<class 'gradviz.Tensor'> gradviz", "<class 'torch.Tensor'> gradviz") == []
    assert fidelity.differences("<gradviz.nn.hooks.RemovableHandle object at 0x1>",
                                "<torch.utils.hooks.RemovableHandle object at 0x2>") != []
