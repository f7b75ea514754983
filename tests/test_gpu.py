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


# -- layers: convolution, pooling, attention and the GPT example on the GPU --------------------------
def _conv_pool(x, w, b):
    F = torch.nn.functional
    y = F.conv2d(x, w, b, stride=2, padding=1, groups=2)
    y = F.max_pool2d(y.relu(), 2, ceil_mode=True) + F.avg_pool2d(y, 2, ceil_mode=True)
    return F.interpolate(y, scale_factor=2, mode="bilinear").sum() + F.adaptive_avg_pool2d(y, 3).sum()


def _attention(q, k, v):
    F = torch.nn.functional
    causal = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    masked = F.scaled_dot_product_attention(q, k, v, attn_mask=torch.ones(4, 4, dtype=torch.bool,
                                                                           device=q.device).tril())
    return (causal * masked).sum()


@pytest.mark.parametrize("program, shapes", [(_conv_pool, [(2, 4, 9, 8), (6, 2, 3, 3), (6,)]),
                                             (_attention, [(2, 2, 4, 8), (2, 2, 4, 8), (2, 2, 4, 8)])],
                         ids=["conv_pool", "attention"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gpu_layers_match_cpu(program, shapes, dtype):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = {}
    for device in ("cpu", "cuda"):
        leaves = [torch.tensor(a, device=device, requires_grad=True) for a in arrays]
        program(*leaves).backward()
        grads[device] = [leaf.grad.cpu().numpy() for leaf in leaves]
    tol = dict(rtol=1e-10, atol=1e-12) if dtype == "float64" else dict(rtol=1e-4, atol=1e-5)
    for cpu, gpu in zip(grads["cpu"], grads["cuda"]):
        np.testing.assert_allclose(cpu, gpu, **tol)


def test_gpu_gpt_step_matches_cpu():
    import pathlib
    import types
    source = (pathlib.Path(__file__).resolve().parents[1] / "examples" / "gpt.py").read_text()
    mod = types.ModuleType("gpt_example")
    exec(compile(source, "examples/gpt.py", "exec", dont_inherit=True), mod.__dict__)
    chars, encode, _ = mod.encoder(mod.TEXT)
    x = np.array([encode(mod.TEXT[:8]), encode(mod.TEXT[8:16])])
    y = np.array([encode(mod.TEXT[1:9]), encode(mod.TEXT[9:17])])
    losses = {}
    for device in ("cpu", "cuda"):
        torch.manual_seed(0)
        model = mod.GPT(mod.GPTConfig(vocab_size=len(chars), block_size=8, n_layer=1, n_head=2, n_embd=16))
        model.to(device)
        optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-2, betas=(0.9, 0.95))
        trace = []
        for _ in range(3):
            _, loss = model(torch.tensor(x, device=device), torch.tensor(y, device=device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            trace.append(loss.item())
        losses[device] = trace
    np.testing.assert_allclose(losses["cuda"], losses["cpu"], rtol=1e-5)
