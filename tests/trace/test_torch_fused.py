"""Fused nodes explained and unrolled: nn.LSTM on CPU is one MkldnnRnnLayerBackward0 node; its panel
says what it fused (time steps, gates, inputs, outputs), and unroll=True records the same LSTM cell
by cell and step by step, with every gradient equal to what torch's fused node gives."""
import threading

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
    assert formula.headline() == "t₄ = LSTM(t₃) over T = 6 steps"                  # a short diagram label
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


def test_animate_unrolls_the_lstm_it_is_given():
    import gradviz
    case = make_lstm()
    animation = gradviz.animate(case.loss(), model=case.model, unroll=True)
    names = [n.name for n in animation.trace.nodes]
    assert "MkldnnRnnLayerBackward0" not in names and names.count("SigmoidBackward0") == 18
    assert len(animation.steps) == len(animation.trace.steps) > 100


def test_the_stepper_steps_the_unrolled_lstm_and_leaves_torchs_gradients():
    """step(loss, unroll=True): Next runs one node of the unrolled cells; halfway the LSTM's weights
    hold part of their gradient, at the end exactly what torch's fused node gives them; closing
    leaves no thread and no hook on either graph."""
    import gradviz
    case = make_lstm()
    loss = case.loss()
    params = dict(case.model.named_parameters())
    expected = dict(zip(params, torch.autograd.grad(loss, list(params.values()), retain_graph=True)))
    stepper = gradviz.step(loss, model=case.model, unroll=True, max_nodes=None)   # unfolded: a node per Next
    names = [n.name for n in stepper.trace.nodes]
    assert "MkldnnRnnLayerBackward0" not in names and names.count("SigmoidBackward0") == 18
    unrolled_root = stepper.recording._session.roots[0]
    while not any(p.grad is not None for p in params.values()):
        stepper.next()
    assert not stepper.recording.finished and stepper.position < len(stepper.trace.nodes)
    stepper.run_to_end()
    lstm = {k for k in params if k.startswith(("lstm.", "embedding."))}
    for name in lstm:   # the fused node's gradients, through the unrolled cells
        torch.testing.assert_close(params[name].grad, expected[name], rtol=1e-4, atol=1e-6)
    assert all(params[k].grad is None for k in params if k not in lstm)   # the head is stood in for by ḡ
    shown = {stepper.trace.node(a.node).name: a.total for s in stepper.trace.steps for a in s.accumulations}
    for name in lstm:   # and what the stepper shows of them is those gradients
        g = expected[name].numpy().astype(np.float64)
        assert np.allclose(shown[name].stats, (g.min(), g.mean(), g.max()), rtol=1e-4, atol=1e-6), name
    stepper.close()
    assert not [t for t in threading.enumerate() if t.name == "gradviz torch backward"]
    case.model.zero_grad(set_to_none=True)
    loss.backward(retain_graph=True)   # a hook left on torch's graph would raise here (its worker is stopped)
    unrolled_root.backward()           # and on the unrolled cells' graph (which shares the embedding's node)
    assert all(p.grad is not None for p in params.values())
