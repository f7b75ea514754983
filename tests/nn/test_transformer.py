"""nn.Transformer and its encoder/decoder layers and stacks against torch: constructors, printing,
state_dict names and order, initialization from the same seed, the warnings torch gives, and
outputs and gradients from the same weights (eval mode, with and without masks)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradviz
from gradviz.nn.modules import transformer as gradviz_transformer
from tests.support.parity import needs_torch, real_torch as torch, same_output

pytestmark = needs_torch


def test_construction_printing_and_state_dict_follow_torch():
    out = same_output("""
    torch.manual_seed(0)
    model = torch.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=16)
    print(model)
    print([(k, tuple(v.shape)) for k, v in model.state_dict().items()])
    print(sum(p.sum() for p in model.parameters()), model.d_model, model.nhead, model.batch_first)
    print(model.generate_square_subsequent_mask(4), torch.nn.Transformer.generate_square_subsequent_mask(2))
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, activation=torch.nn.GELU(), bias=False)
    print(layer, layer.activation_relu_or_gelu, list(layer.state_dict()))
    enc = torch.nn.TransformerEncoder(layer, 3, norm=torch.nn.LayerNorm(8))
    print(enc.layers[0].linear1.weight.sum() == enc.layers[2].linear1.weight.sum(), enc.use_nested_tensor)
    print(torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(8, 4, 8, norm_first=True), 1))
    print(torch.nn.TransformerEncoderLayer(4, 2, activation="gelu").activation_relu_or_gelu)
    try:
        torch.nn.TransformerEncoderLayer(4, 2, activation="tanh")
    except RuntimeError as e:
        print(e)
    model.eval()
    src, tgt = torch.randn(5, 3, 8), torch.randn(4, 3, 8)
    for bad in ((src, tgt[:, :2]), (src[..., :4], tgt[..., :4])):
        try:
            model(*bad)
        except RuntimeError as e:
            print(e)
    out = model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(4))
    print(out.shape, out.grad_fn.name(), out[0, 0])
    """)
    assert "TransformerEncoderLayer(" in out and "NonDynamicallyQuantizableLinear" in out


def test_warnings_about_the_inference_fast_path_are_torchs():
    same_output("""
    for layer in (torch.nn.TransformerEncoderLayer(4, 2, 8),
                  torch.nn.TransformerEncoderLayer(4, 1, 8, batch_first=True),
                  torch.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True, norm_first=True),
                  torch.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True, activation=torch.tanh),
                  torch.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True)):
        torch.nn.TransformerEncoder(layer, 1)
    torch.nn.TransformerEncoder(torch.nn.TransformerEncoderLayer(4, 2, 8), 1, enable_nested_tensor=False)
    layer = torch.nn.TransformerEncoderLayer(4, 2, 8, batch_first=True)
    layer(torch.randn(2, 3, 4), src_mask=torch.zeros(3, 3), src_key_padding_mask=torch.zeros(2, 3, dtype=torch.bool))
    """)


def _copy_weights(theirs, ours):
    ours.load_state_dict({k: gradviz.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})


def _run(model, make, inputs, kwargs, grad):
    xs = [make(a) for a in inputs]
    if grad:
        for x in xs:
            x.requires_grad_(True)
        out = model(*xs, **kwargs)
        (out * make(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)))).sum().backward()
        return out.detach().numpy(), [x.grad.numpy() for x in xs]
    with (torch if make is torch.tensor else gradviz).no_grad():
        return model(*xs, **kwargs).numpy(), []


RNG = np.random.default_rng(4)
SRC, TGT = RNG.standard_normal((3, 5, 8), dtype=np.float32), RNG.standard_normal((3, 4, 8), dtype=np.float32)
PAD = np.array([[False] * 3 + [True] * 2, [False] * 5, [False] * 4 + [True]])


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
@pytest.mark.parametrize("name,build,inputs,kwargs", [
    ("encoder_layer", lambda t: t.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), [SRC], {}),
    ("encoder_layer_seq_first_gelu_norm_first", lambda t: t.nn.TransformerEncoderLayer(
        8, 4, 16, activation="gelu", norm_first=True), [SRC], {}),
    ("encoder_padding", lambda t: t.nn.TransformerEncoder(t.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2,
                                                          t.nn.LayerNorm(8)), [SRC], {"src_key_padding_mask": PAD}),
    ("encoder_causal", lambda t: t.nn.TransformerEncoder(t.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2),
     [SRC], {"mask": "causal5", "is_causal": True}),
    ("decoder_no_bias", lambda t: t.nn.TransformerDecoder(t.nn.TransformerDecoderLayer(
        8, 2, 16, batch_first=True, bias=False), 2), [TGT, SRC], {"tgt_mask": "causal4",
                                                                  "memory_key_padding_mask": PAD}),
    ("transformer", lambda t: t.nn.Transformer(8, 2, 2, 2, 16, batch_first=True), [SRC, TGT],
     {"tgt_mask": "causal4", "src_key_padding_mask": PAD}),
    ("transformer_norm_first", lambda t: t.nn.Transformer(8, 2, 1, 1, 16, norm_first=True),
     [np.ascontiguousarray(SRC.swapaxes(0, 1)), np.ascontiguousarray(TGT.swapaxes(0, 1))], {}),
])
def test_same_weights_give_torchs_outputs(name, build, inputs, kwargs, grad):
    """Eval mode from torch's weights: torch's fused inference kernels (no_grad) and its composite
    path (with grad) against gradviz's one composite path."""
    results = []
    for lib, make in ((torch, torch.tensor), (gradviz, gradviz.tensor)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = build(lib)
            if lib is torch:
                theirs = model
            else:
                _copy_weights(theirs, model)
            model.eval()
            args = {k: (lib.nn.Transformer.generate_square_subsequent_mask(int(v[-1])) if isinstance(v, str)
                        else make(v)) for k, v in kwargs.items()}
            results.append(_run(model, make, inputs, args, grad))
    (theirs_out, theirs_grads), (ours_out, ours_grads) = results
    np.testing.assert_allclose(ours_out, theirs_out, rtol=1e-4, atol=2e-5)
    for a, b in zip(ours_grads, theirs_grads):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=2e-5)


def test_the_nested_tensor_warning_is_given_once(monkeypatch):
    monkeypatch.setattr(gradviz_transformer, "_nested_warned", False)
    encoder = gradviz.nn.TransformerEncoder(gradviz.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 1).eval()
    with warnings.catch_warnings(record=True) as caught, gradviz.no_grad():
        warnings.simplefilter("always")
        for _ in range(2):
            out = encoder(gradviz.tensor(SRC), src_key_padding_mask=gradviz.tensor(PAD))
    assert [str(w.message) for w in caught] == [gradviz_transformer._NESTED_PROTOTYPE]
    assert float(out[0, 3:].abs().sum()) == 0.0   # torch's nested path leaves the padded positions zero


def test_a_language_model_that_subclasses_transformer():
    """The shape of PyTorch's word-language-model example: a Transformer subclass that replaces its
    decoder with a Linear and runs only the encoder, with a positional-encoding buffer."""
    same_output("""
    import math
    nn, F = torch.nn, torch.nn.functional

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=50):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            pe = torch.zeros(max_len, d_model)
            position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
            pe[:, 0::2] = torch.sin(position * div_term)
            pe[:, 1::2] = torch.cos(position * div_term)
            self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

        def forward(self, x):
            return self.dropout(x + self.pe[:x.size(0), :])

    class TransformerModel(nn.Transformer):
        def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
            super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers)
            self.src_mask = None
            self.pos_encoder = PositionalEncoding(ninp, dropout)
            self.input_emb = nn.Embedding(ntoken, ninp)
            self.ninp = ninp
            self.decoder = nn.Linear(ninp, ntoken)
            nn.init.uniform_(self.input_emb.weight, -0.1, 0.1)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

        def forward(self, src):
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = torch.log(torch.tril(torch.ones(len(src), len(src))))
            src = self.pos_encoder(self.input_emb(src) * math.sqrt(self.ninp))
            return F.log_softmax(self.decoder(self.encoder(src, mask=self.src_mask)), dim=-1)

    torch.manual_seed(0)
    model = TransformerModel(20, 8, 2, 16, 2, dropout=0.0)
    print(model.src_mask, sum(p.numel() for p in model.parameters()))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    data = torch.randint(0, 20, (6, 3))
    for step in range(3):
        optimizer.zero_grad()
        out = model(data[:-1])
        loss = F.nll_loss(out.view(-1, 20), data[1:].reshape(-1))
        loss.backward()
        optimizer.step()
        print(step, round(loss.item(), 4))
    print(model.src_mask)
    """)
