"""Whole programs on device "cuda" give what they give on the CPU: losses, gradients, layers,
optimizers and the GPT example. "cuda" is the strict stand-in for CuPy on every machine and CuPy
itself where it sees a GPU (the cuda_namespace fixture in conftest.py)."""
import numpy as np
import pytest

import gradviz as torch

pytestmark = pytest.mark.usefixtures("cuda_namespace")


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
    source = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "gpt.py").read_text()
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


# -- layers with parameters, built on the device (device=) or moved there (.to) ----------------------
def _layers(device):
    nn = torch.nn
    torch.manual_seed(0)
    return nn.ModuleDict({
        "lstm": nn.LSTM(4, 5, num_layers=2, batch_first=True, bidirectional=True, device=device),
        "gru": nn.GRU(4, 5, device=device),
        "rnn": nn.RNNCell(4, 5, device=device),
        "attention": nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True, batch_first=True,
                                           device=device),
        "norm": nn.BatchNorm1d(4, device=device),
        "embed": nn.Embedding(7, 4, padding_idx=0, device=device),
        "head": nn.Linear(10, 7, device=device),
    })


def _layers_loss(layers, tokens, targets):
    F = torch.nn.functional
    x = layers["embed"](tokens)                                     # (2, 3, 4)
    x = layers["norm"](x.transpose(1, 2)).transpose(1, 2)
    a, _ = layers["attention"](x, x, x, need_weights=False)
    h, _ = layers["lstm"](x + a)                                    # (2, 3, 10)
    g, _ = layers["gru"](x.transpose(0, 1))
    c = layers["rnn"](x[:, -1])
    logits = layers["head"](h) + (g.transpose(0, 1).sum() + c.sum()) * 0.01
    return F.cross_entropy(logits.reshape(-1, 7), targets.reshape(-1), ignore_index=0)


def test_layers_and_an_optimizer_on_the_device_match_the_cpu():
    tokens, targets = np.array([[1, 2, 3], [4, 5, 0]]), np.array([[2, 3, 4], [5, 0, 6]])
    results = {}
    saved = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)   # float32 sums in another order would part Adam's paths
    try:
        for device in ("cpu", "cuda"):
            layers = _layers(device)
            assert {p.device.type for p in layers.parameters()} == {device}
            optimizer = torch.optim.AdamW(layers.parameters(), lr=1e-2)
            losses = []
            for _ in range(3):
                x, y = torch.tensor(tokens, device=device), torch.tensor(targets, device=device)
                loss = _layers_loss(layers, x, y)
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(layers.parameters(), 1.0)
                optimizer.step()
                losses.append(loss.item())
            results[device] = losses, [p.detach().cpu().numpy() for p in layers.parameters()]
    finally:
        torch.set_default_dtype(saved)
    np.testing.assert_allclose(results["cuda"][0], results["cpu"][0], rtol=1e-10)
    for gpu, cpu in zip(results["cuda"][1], results["cpu"][1]):
        np.testing.assert_allclose(gpu, cpu, rtol=1e-8, atol=1e-10)


def test_tensors_on_two_devices_are_torchs_error():
    on_gpu, on_cpu = torch.ones(3, device="cuda", requires_grad=True), torch.ones(3)
    for op in (lambda: on_gpu + on_cpu, lambda: on_cpu * on_gpu, lambda: torch.mm(on_cpu[None], on_gpu[:, None])):
        with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least "
                                               "two devices, (cuda:0 and cpu|cpu and cuda:0)!"):
            op()


# -- the pictures of a run on the device: the same recorded numbers as on the CPU --------------------
def _same_record(cpu, gpu, path="trace"):
    """Two Trace JSONs alike but for the device's name, and numbers to rounding."""
    if isinstance(cpu, dict):
        assert cpu.keys() == gpu.keys(), path
        for k in cpu:
            _same_record(cpu[k], gpu[k], f"{path}.{k}")
    elif isinstance(cpu, list):
        assert len(cpu) == len(gpu), path
        for i, (c, g) in enumerate(zip(cpu, gpu)):
            _same_record(c, g, f"{path}[{i}]")
    elif isinstance(cpu, float) and isinstance(gpu, float):
        assert np.isclose(cpu, gpu, rtol=1e-6, atol=1e-9, equal_nan=True), (path, cpu, gpu)
    elif isinstance(cpu, str) and isinstance(gpu, str):
        assert cpu == gpu.replace("cuda:0", "cpu").replace("cuda", "cpu"), (path, cpu, gpu)
    else:
        assert cpu == gpu, (path, cpu, gpu)


def test_the_pictures_of_a_device_run_show_the_cpu_run():
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((8, 4)) for _ in range(2)]
    traces, jacobians = {}, {}
    for device in ("cpu", "cuda"):
        z1, z2 = (torch.tensor(a, device=device, requires_grad=True) for a in arrays)
        loss = _barlow(z1, z2)
        traces[device] = torch.animate(loss, names={"z1": z1, "z2": z2, "loss": loss}).trace.to_json()
        assert z1.grad is None   # recording leaves .grad alone on every device
        assert "<svg" in torch.draw(loss).svg()
        view = torch.jacobian_view(lambda z: (z * z).sum(0), z1)
        jacobians[device] = view.matrix, [got for _, got, _ in view.products]
    _same_record(traces["cpu"], traces["cuda"])
    np.testing.assert_allclose(jacobians["cuda"][0], jacobians["cpu"][0], rtol=1e-12)
    for gpu, cpu in zip(jacobians["cuda"][1], jacobians["cpu"][1]):   # the real backward(v) beside vᵀJ
        np.testing.assert_allclose(gpu, cpu, rtol=1e-12)


def test_a_seed_on_another_device_is_torchs_error():
    x = torch.ones(3, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError, match="invalid gradient at index 0 - expected device cuda:0 but got cpu"):
        (x * 2).backward(torch.ones(3))
