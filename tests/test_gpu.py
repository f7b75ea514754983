"""The same programs on CuPy and NumPy give the same gradients (runs only where a CUDA GPU and CuPy exist)."""
import numpy as np
import pytest

import gradviz as torch

cupy = pytest.importorskip("cupy", reason="CuPy is not installed (pip install 'gradviz[gpu]' on a CUDA machine)")
pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device visible to CuPy")]


def _barlow(z1, z2):
    n = z1.shape[0]
    a = (z1 - z1.mean(0)) / z1.std(0)
    b = (z2 - z2.mean(0)) / z2.std(0)
    return -torch.diagonal(a.T @ b / n).sum()


def _mlp(x, w1, w2, y):
    h = (x @ w1).relu()
    return torch.nn.functional.cross_entropy(h @ w2, y)


@pytest.mark.parametrize("program, shapes", [(_barlow, [(8, 4), (8, 4)]), (_mlp, [(5, 3), (3, 6), (6, 4)])])
def test_gpu_gradients_match_cpu(program, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes]
    extra = [torch.tensor([0, 1, 2, 3, 0])] if program is _mlp else []
    grads = {}
    for device in ("cpu", "cuda"):
        leaves = [torch.tensor(a, device=device, requires_grad=True) for a in arrays]
        args = leaves + [e.to(device) for e in extra]
        loss = program(*args)
        loss.backward()
        assert loss.device.type == device
        grads[device] = [leaf.grad.cpu().numpy() for leaf in leaves]
    for cpu, gpu in zip(grads["cpu"], grads["cuda"]):
        np.testing.assert_allclose(cpu, gpu, rtol=1e-10, atol=1e-12)
