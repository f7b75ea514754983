"""Fused nodes explained and unrolled: nn.LSTM on CPU is one MkldnnRnnLayerBackward0 node; its panel
says what it fused (time steps, gates, inputs, outputs), and unroll=True records the same LSTM cell
by cell and step by step, with every gradient equal to what torch's fused node gives."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradviz.previews import block_means  # noqa: E402
from gradviz.render.formula import Formula, Graph  # noqa: E402
from gradviz.torch_bridge import record_torch  # noqa: E402
from tests.support.torch_models import make_lstm  # noqa: E402

pytestmark = pytest.mark.torch


def fused_node(trace):
    return next(n for n in trace.nodes if n.name == "MkldnnRnnLayerBackward0")


def test_the_fused_lstm_node_says_what_it_fused():
    case = make_lstm()
    trace = record_torch(case.loss(), model=case.model).run()
    node = fused_node(trace)
    formula = Formula(Graph(trace), node)
    text = formula.forward_text()
    assert "LSTM" in text and "T = 6 steps" in text and "(i, f, g, o)" in text
    assert "lstm.weight_ih_l0 xₜ" in text and "lstm.weight_hh_l0 hₜ₋₁" in text   # its inputs by name
    assert "one node for 6 steps × 4 gates" in text and "h_T, c_T" in text          # and what it returns
    assert formula.headline() == "t₄ = LSTM (t₃) over T = 6 steps"                  # a short diagram label
    assert dict(node.attrs)["fused"] == "6 time steps × 4 gates (i, f, g, o) of an LSTM layer (16 → 32, batch 3) in one node"
    vjps = [formula.vjp_text(slot) for slot in range(5)]
    assert "backward through time" in vjps[0] and vjps[1].endswith("Σ over steps t of ĝ_t x_tᵀ")
    step = next(s for s in trace.steps if s.node == node.id)
    assert len(step.grad_in) == 3 and step.grad_in[0].shape == (6, 3, 32)   # ḡ of y, h_T, c_T


def test_unroll_records_the_lstm_cell_by_cell_with_torchs_gradients():
    case = make_lstm()
    loss = case.loss()
    params = dict(case.model.named_parameters())
    expected = dict(zip(params, torch.autograd.grad(loss, list(params.values()), retain_graph=True)))
    trace = record_torch(loss, model=case.model, unroll=True).run()
    names = [n.name for n in trace.nodes]
    assert "MkldnnRnnLayerBackward0" not in names
    steps = {n.scope[-1] for n in trace.nodes if n.kind == "op" and n.scope[:2] == ("LSTMClassifier", "lstm (LSTM)")}
    assert {f"step {t}" for t in range(1, 7)} <= steps                   # one cluster per time step
    assert names.count("SigmoidBackward0") == 6 * 3 and names.count("TanhBackward0") == 6 * 2
    leaves = {n.name: n for n in trace.nodes if n.kind == "leaf"}
    # the LSTM's weights, and upstream the embedding, get exactly torch's gradients
    assert set(leaves) == {"embedding.weight", "lstm.weight_ih_l0", "lstm.weight_hh_l0", "lstm.bias_ih_l0",
                           "lstm.bias_hh_l0"}
    for name, node in leaves.items():
        g = expected[name].numpy().astype(np.float64)
        assert np.allclose(node.grad.stats, (g.min(), g.mean(), g.max()), rtol=1e-4, atol=1e-6), name
        assert np.allclose(node.grad.thumb, block_means(g), rtol=1e-4, atol=1e-6), name
    assert all(p.grad is None for p in params.values())                  # .grad put back


def test_unroll_on_a_graph_without_a_recurrent_node_says_so():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(ValueError, match="no fused recurrent node"):
        record_torch((x * 2).sum(), unroll=True)
