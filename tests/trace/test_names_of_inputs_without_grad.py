"""A tensor that needs no gradient (an input batch, a target, a mask) has no edge in the graph, but
the learner named it: every formula that reads it writes that name, not a made-up t₁."""
import gradviz as torch
import gradviz.nn.functional as F
from gradviz.tracing import Trace, build_trace


def test_an_input_batch_is_written_with_the_learners_name():
    W = torch.randn(3, 4, requires_grad=True)
    x = torch.randn(2, 4)
    target = torch.tensor([0, 2])
    logits = x @ W.T
    loss = F.cross_entropy(logits, target)
    names = {"W": W, "x": x, "logits": logits, "loss": loss}
    trace = build_trace((loss,), names)
    (mm,) = [n for n in trace.nodes if n.name == "MmBackward0"]
    assert mm.in_names[0] == "x"
    assert Trace.from_json(trace.to_json()).nodes[trace.nodes.index(mm)].in_names == mm.in_names
    assert "logits = x t₁" in torch.draw(loss, names=names).source


def test_draw_reads_the_name_from_the_calling_code():
    W = torch.randn(3, 4, requires_grad=True)
    batch = torch.randn(2, 4)
    out = (batch @ W.T).sum()
    assert "= batch t₁" in torch.draw(out).source
