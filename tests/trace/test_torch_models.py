"""The torch bridge on four real models (a 2-layer MLP, ResNet-18 at 1×3×64×64, a nanoGPT-style
GPT with tied embeddings, Embedding -> nn.LSTM -> Linear): node names are torch's own walk,
every gradient shown is param.grad, the stepper paused halfway leaves .grad as torch has it
then, names and clusters come from the model, negative dims and view sizes read as torch means."""
from collections import Counter

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gradviz.previews import block_means  # noqa: E402
from gradviz.render import draw  # noqa: E402
from gradviz.torch_bridge import record_torch  # noqa: E402
from tests.support.torch_models import MODELS, torch_walk  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(scope="module", params=list(MODELS))
def recorded(request):
    """One model, its loss, the recorded backward and torch's own gradients (each computed once)."""
    case = MODELS[request.param]()
    loss = case.loss()
    trace = record_torch(loss, model=case.model, caller={"loss": loss}).run()
    grads = dict(zip(dict(case.model.named_parameters()), torch.autograd.grad(
        loss, list(dict(case.model.named_parameters()).values()), retain_graph=True)))
    return request.param, case, loss, trace, grads


def same_as(preview, grad) -> bool:
    g = grad.detach().numpy().astype(np.float64)
    if preview.values is not None:
        return np.allclose(preview.values, g, rtol=1e-5, atol=1e-7)
    return (np.allclose(preview.stats, (g.min(), g.mean(), g.max()), rtol=1e-4, atol=1e-7)
            and np.allclose(preview.thumb, block_means(g), rtol=1e-4, atol=1e-6))


def test_node_names_are_torchs_walk(recorded):
    _, _, loss, trace, _ = recorded
    shown = Counter(n.name for n in trace.nodes if n.kind in ("op", "accumulate"))
    assert shown == torch_walk(loss)
    assert len(trace.steps) == sum(shown.values())   # every node ran once


def test_every_gradient_shown_is_param_grad(recorded):
    name, case, _, trace, grads = recorded
    leaves = {n.name: n for n in trace.nodes if n.kind == "leaf"}
    assert set(leaves) == set(grads)   # named as named_parameters() names them (a tied weight once)
    for pname, grad in grads.items():
        assert same_as(leaves[pname].grad, grad), (name, pname)
    for step in trace.steps:           # and each write's total, when it was written
        for acc in step.accumulations:
            leaf = trace.node(acc.node)
            assert acc.total is leaf.grad or same_as(acc.total, grads[leaf.name])
    assert all(p.grad is None for p in case.model.parameters())   # recording changed no .grad


def test_the_loss_is_named_by_the_callers_variable(recorded):
    _, _, _, trace, _ = recorded
    assert trace.node(trace.roots[0]).name == "loss"


def test_stepper_halfway_leaves_grad_as_torch_has_it(recorded):
    name, case, loss, trace, grads = recorded
    params = dict(case.model.named_parameters())
    with record_torch(loss, model=case.model) as rec:
        for _ in range(len(trace.steps) // 2):
            rec.step()
        written = {rec.trace.node(a.node).name for s in rec.trace.steps for a in s.accumulations}
        assert written and written != set(params)
        now = rec.grads_now()
        ids = {n.name: n.id for n in rec.trace.nodes if n.kind == "leaf"}
        for pname, p in params.items():
            if pname in written:   # its AccumulateGrad ran: torch wrote the whole gradient
                assert p.grad is not None and torch.allclose(p.grad, grads[pname], rtol=1e-5, atol=1e-7)
                assert same_as(now[ids[pname]], p.grad)
            else:
                assert p.grad is None and now[ids[pname]] is None, (name, pname)
    assert all(p.grad is None for p in params.values())


def test_clusters_come_from_the_model(recorded):
    name, _, _, trace, _ = recorded
    scopes = {n.scope for n in trace.nodes if n.kind == "op" and n.scope}
    expected = {"mlp": ("MLP", "fc1 (Linear)"), "resnet18": ("ResNet", "layer1 (Sequential)", "0 (BasicBlock)",
                                                                 "conv1 (Conv2d)"),
                "gpt": ("GPT", "transformer (ModuleDict)", "h (ModuleList)", "0 (Block)",
                        "attn (CausalSelfAttention)", "c_attn (Linear)"), "lstm": ("LSTMClassifier", "lstm (LSTM)")}
    assert expected[name] in scopes


def test_negative_dims_and_view_sizes_in_labels(recorded):
    name, _, _, trace, _ = recorded
    if name not in ("gpt", "resnet18"):
        pytest.skip("the MLP and the LSTM classifier take no dim=-1 and no view")
    source = draw(trace, max_nodes=0).source
    assert "18446744073709551" not in source
    ops = {n.name: n for n in trace.nodes if n.kind == "op"}
    if name == "gpt":   # softmax(att, dim=-1) over a (B, heads, T, T) tensor
        assert dict(ops["SoftmaxBackward0"].constants)["dim"] == 3
        view = next(n for n in trace.nodes if n.name == "ViewBackward0")
        assert dict(view.constants)["size"] == list(view.value.shape)
    else:               # flatten(avgpool(x), 1) is a view to (1, 512)
        assert dict(ops["ViewBackward0"].constants)["size"] == [1, 512]
        assert "(1, 512)" in source


def test_each_model_is_drawn_folded_by_default(recorded):
    # the inferred clusters are one piece per module, so folding a module into one box lays out
    # (a cluster with holes made Graphviz lose an edge on ResNet-18's folded layer4)
    _, _, _, trace, _ = recorded
    svg = draw(trace).svg()
    assert "<svg" in svg and svg.rstrip().endswith("</svg>")
