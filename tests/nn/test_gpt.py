"""examples/gpt.py, unchanged but for its imports, against PyTorch, and the blitz LeNet.

The example's source runs twice: as written (gradviz) and with its three import lines
pointed at torch. Both models start from torch's weights; 20 AdamW steps on the same
batches give the same losses to float32 tolerance, with either attention (the fused
scaled_dot_product_attention or masked_fill + softmax). The 60-minute blitz's "Neural
Networks" LeNet runs the same way. The GPT's graph draws folded by module.
"""
import pathlib
import types

import numpy as np
import pytest
from tests.support.parity import needs_torch, real_torch as torch

import gradviz

SOURCE = (pathlib.Path(__file__).resolve().parents[2] / "examples" / "gpt.py").read_text()
IMPORTS = {"import gradviz as torch": "import torch",
           "import gradviz.nn as nn": "import torch.nn as nn",
           "from gradviz.nn import functional as F": "from torch.nn import functional as F"}


def load(lib):
    """The example as a module, with `torch` meaning gradviz (as written) or PyTorch."""
    source = SOURCE
    if lib == "torch":
        for ours, theirs in IMPORTS.items():
            assert source.count(ours) == 1
            source = source.replace(ours, theirs)
    module = types.ModuleType(f"gpt_{lib}")
    exec(compile(source, f"examples/gpt.py ({lib})", "exec", dont_inherit=True), module.__dict__)
    return module


def test_the_example_differs_from_pytorch_only_in_its_imports():
    lines = [line for line in SOURCE.splitlines() if "gradviz" in line]
    assert lines == list(IMPORTS)


def same_weights(theirs, ours):
    mine = dict(ours.named_parameters())
    assert [n for n, _ in theirs.named_parameters()] == list(mine)
    for name, p in theirs.named_parameters():
        np.testing.assert_array_equal(mine[name].detach().numpy(), p.detach().numpy(), err_msg=name)


def copy_weights(theirs, ours):
    mine = dict(ours.named_parameters())
    names = [n for n, _ in theirs.named_parameters()]
    assert names == list(mine)
    for name, p in theirs.named_parameters():
        mine[name]._data[...] = p.detach().numpy()


def batches(data, block, batch, steps):
    rng = np.random.default_rng(0)
    for _ in range(steps):
        ix = rng.integers(0, len(data) - block, batch)
        yield (np.stack([data[i:i + block] for i in ix]), np.stack([data[i + 1:i + 1 + block] for i in ix]))


def train(mod, lib, model, data, steps=20):
    optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-2, betas=(0.9, 0.95))
    losses = []
    for x, y in batches(data, model.config.block_size, 4, steps):
        _, loss = model(lib.tensor(x), lib.tensor(y))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


@needs_torch
@pytest.mark.parametrize("flash", [True, False], ids=["sdpa", "masked_fill"])
def test_gpt_trains_as_torch_does(flash):
    ours_mod, theirs_mod = load("gradviz"), load("torch")
    chars, encode, _ = ours_mod.encoder(ours_mod.TEXT)
    data = np.array(encode(ours_mod.TEXT), dtype=np.int64)
    kwargs = dict(vocab_size=len(chars), block_size=8, n_layer=2, n_head=2, n_embd=16, flash=flash)
    torch.manual_seed(0)
    theirs = theirs_mod.GPT(theirs_mod.GPTConfig(**kwargs))
    gradviz.manual_seed(0)
    ours = ours_mod.GPT(ours_mod.GPTConfig(**kwargs))
    same_weights(theirs, ours)   # the same seed draws the same initial weights
    assert ours.transformer.wte.weight is ours.lm_head.weight        # tied, as in torch
    theirs_losses = train(theirs_mod, torch, theirs, data)
    ours_losses = train(ours_mod, gradviz, ours, data)
    np.testing.assert_allclose(ours_losses, theirs_losses, rtol=2e-5, atol=2e-5)
    assert ours_losses[-1] < ours_losses[0] - 0.5                     # it learns
    final = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        a, b = p.detach().numpy(), final[name].detach().numpy()
        if name.endswith("c_attn.bias"):
            # the key bias shifts every score of a row alike, which softmax ignores: its gradient is
            # rounding noise, which Adam's normalization turns into full-size steps in both libraries
            a, b = np.delete(a, np.s_[16:32]), np.delete(b, np.s_[16:32])
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=2e-5, err_msg=name)


@needs_torch
def test_gpt_generates_the_same_text_from_the_same_seed():
    """@torch.no_grad() sampling with topk and multinomial: the same seed gives the same tokens."""
    texts = []
    for lib, mod in ((torch, load("torch")), (gradviz, load("gradviz"))):
        chars, encode, decode = mod.encoder(mod.TEXT)
        lib.manual_seed(7)
        model = mod.GPT(mod.GPTConfig(vocab_size=len(chars), block_size=8, n_layer=1, n_head=2, n_embd=16))
        model.eval()
        out = model.generate(lib.tensor([encode("Fi")]), max_new_tokens=12, top_k=5)
        assert tuple(out.shape) == (1, 14) and out.grad_fn is None and not out.requires_grad
        texts.append(decode(out[0].tolist()))
    assert texts[0] == texts[1] and texts[1].startswith("Fi")


def test_gpt_graph_draws_folded_by_module():
    mod = load("gradviz")
    chars, encode, _ = mod.encoder(mod.TEXT)
    model = mod.GPT(mod.GPTConfig(vocab_size=len(chars), block_size=8, n_layer=2, n_head=2, n_embd=16))
    x = gradviz.tensor([encode(mod.TEXT[:8])])
    y = gradviz.tensor([encode(mod.TEXT[1:9])])
    _, loss = model(x, y)
    from gradviz.render import plan
    from gradviz.tracing import build_trace
    trace = build_trace((loss,), dict(model.named_parameters()))
    scopes = {n.scope for n in trace.nodes}
    blocks = [("GPT", f"{i} (Block)") for i in range(2)]
    assert {("GPT", "wte (Embedding)"), ("GPT", "wpe (Embedding)"), ("GPT", "ln_f (LayerNorm)"),
            ("GPT", "lm_head (Linear)")} | set(blocks) <= scopes
    assert blocks[0] + ("attn (CausalSelfAttention)", "c_attn (Linear)") in scopes
    names = {n.name for n in trace.nodes if n.kind == "op"}
    assert {"ScaledDotProductFlashAttentionForCpuBackward0", "NativeLayerNormBackward0", "GeluBackward0",
            "EmbeddingBackward0", "NllLossBackward0"} <= names
    # one block folded into one box: every node drawn in its scope goes with it
    folded = plan(trace, collapse="0 (Block)")
    (group,) = folded.groups
    inside = {n.id for n in trace.nodes if n.scope[:2] == blocks[0]}
    assert group.title == "0 (Block)" and inside <= set(group.members)
    assert not any(n.id in group.members for n in trace.nodes if n.scope[:2] == blocks[1])


# -- the 60-minute blitz: "Neural Networks" ----------------------------------------------------------
BLITZ = '''
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):

    def __init__(self):
        super(Net, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, input):
        # Convolution layer C1: 1 input image channel, 6 output channels, 5x5 square convolution,
        # it uses RELU activation function, and outputs a Tensor with size (N, 6, 28, 28), where N is the batch
        c1 = F.relu(self.conv1(input))
        # Subsampling layer S2: 2x2 grid, purely functional, outputs a (N, 6, 14, 14) Tensor
        s2 = F.max_pool2d(c1, (2, 2))
        # Convolution layer C3: 6 input channels, 16 output channels, 5x5 square convolution,
        # it uses RELU activation function, and outputs a (N, 16, 10, 10) Tensor
        c3 = F.relu(self.conv2(s2))
        # Subsampling layer S4: 2x2 grid, purely functional, outputs a (N, 16, 5, 5) Tensor
        s4 = F.max_pool2d(c3, 2)
        # Flatten operation: purely functional, outputs a (N, 400) Tensor
        s4 = torch.flatten(s4, 1)
        # Fully connected layer F5: (N, 400) Tensor input, and outputs a (N, 120) Tensor
        f5 = F.relu(self.fc1(s4))
        # Fully connected layer F6: (N, 120) Tensor input, and outputs a (N, 84) Tensor
        f6 = F.relu(self.fc2(f5))
        # Gaussian layer OUTPUT: (N, 84) Tensor input, and outputs a (N, 10) Tensor
        output = self.fc3(f6)
        return output


net = Net()
print(net)
params = list(net.parameters())
print(len(params))
print(params[0].size())  # conv1's .weight
'''


def blitz(lib):
    namespace = {"torch": lib, "__name__": "blitz"}
    source = BLITZ if lib is torch else BLITZ.replace("import torch.nn", "import gradviz.nn")
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "blitz", "exec"), namespace)
    return namespace["net"], out.getvalue()


@needs_torch
def test_blitz_lenet_prints_trains_and_differentiates_as_torch():
    torch.manual_seed(0)
    theirs, printed_t = blitz(torch)
    ours, printed_g = blitz(gradviz)
    assert printed_g == printed_t
    copy_weights(theirs, ours)
    image = np.random.default_rng(0).standard_normal((1, 1, 32, 32)).astype(np.float32)
    target = np.random.default_rng(1).standard_normal((1, 10)).astype(np.float32)
    results = []
    for lib, net in ((torch, theirs), (gradviz, ours)):
        optimizer = lib.optim.SGD(net.parameters(), lr=0.01)
        losses = []
        for _ in range(3):   # the page's loop: zero_grad, loss, backward, step
            optimizer.zero_grad()
            output = net(lib.tensor(image))
            loss = lib.nn.MSELoss()(output, lib.tensor(target))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        # the page walks loss.grad_fn, then next_functions[0][0] twice
        first = loss.grad_fn.next_functions[0][0]
        names = [loss.grad_fn.name(), first.name(), first.next_functions[0][0].name()]
        results.append((losses, names, net.conv1.bias.grad.numpy()))
    (lt, nt, gt), (lg, ng, gg) = results
    assert ng == nt == ["MseLossBackward0", "AddmmBackward0", "torch::autograd::AccumulateGrad"]
    np.testing.assert_allclose(lg, lt, rtol=1e-5)
    np.testing.assert_allclose(gg, gt, rtol=1e-4, atol=1e-6)
