"""A recorded torch node's constants and attribute texts are made when a view first reads them, not
when the Trace is made: the Trace completed node by node, whatever happened to torch's graph and
tensors in between (its backward freed the graph, the parameters and saved tensors were written in
place), is the Trace completed at once, on the four models of benchmarks/peers.py."""
import copy
import pickle

import pytest

torch = pytest.importorskip("torch")

from gradviz.records import NodeRecord, PendingNodeRecord  # noqa: E402
from gradviz.torch_bridge import record_torch, trace_from_torch  # noqa: E402
from tests.support.torch_models import MODELS  # noqa: E402

pytestmark = pytest.mark.torch


def _pending(trace) -> list:
    return [n for n in trace.nodes if "_complete" in vars(n)]


def _read_previews(trace) -> None:
    """Read every value the Trace shows but the nodes' constants and attribute texts (its previews
    hold their tensors until read), so that a later write can reach those alone."""
    previews = []
    for n in trace.nodes:
        previews += [n.value, n.grad, *n.in_values]
    for s in trace.steps:
        previews += [*s.grad_in, *(f.grad for f in s.flows)]
        previews += [p for a in s.accumulations for p in (a.contribution, a.total, a.before)]
    for p in previews:
        if p is not None:
            p.values, p.stats


@pytest.mark.parametrize("name", list(MODELS))
def test_nodes_completed_one_by_one_after_torch_moved_on_equal_the_trace_completed_at_once(name):
    case = MODELS[name]()
    loss = case.loss()
    at_once = record_torch(loss, model=case.model).run().to_json()
    later = record_torch(loss, model=case.model).run()
    ops = [n for n in later.nodes if n.kind == "op"]   # the Trace made: its nodes' numbers not yet
    assert len(_pending(later)) > len(ops) // 2   # (a fused node, or one gradviz has no record of, is made whole)
    _read_previews(later)
    assert _pending(later)
    loss.backward()   # frees every tensor the nodes saved
    with torch.no_grad():
        for p in case.model.parameters():
            p.add_(1.0)   # as an optimizer's step: the saved weights' versions move
    for n in ops[::2]:    # a view shows some nodes first
        n.attrs
    assert later.to_json() == at_once and not _pending(later)


@pytest.mark.parametrize("name", list(MODELS))
def test_the_graph_drawn_without_a_backward_is_made_whole_at_once(name):
    case = MODELS[name]()
    loss = case.loss()
    at_once = trace_from_torch(loss, model=case.model).to_json()
    later = trace_from_torch(loss, model=case.model)   # nothing frozen: a node read later could not be read alike
    assert not _pending(later)
    loss.backward()
    assert later.to_json() == at_once


def test_a_saved_number_written_in_place_after_the_trace_was_made_shows_its_value_when_made():
    w = torch.nn.Parameter(torch.ones(3))
    scale = torch.tensor(2.0)   # needs no gradient: mul saves it as a number
    x = torch.randn(4, 3, requires_grad=True)
    trace = record_torch((torch.softmax(x, -1) * w * scale).sum(), names={"w": w, "x": x}).run()
    assert trace.nodes and _pending(trace)
    scale.fill_(5.0)   # after the Trace was made, before the node was shown
    mul = [n for n in trace.nodes if n.name == "MulBackward0"][-1]
    assert dict(mul.attrs)["other"] == "2.0"
    softmax = next(n for n in trace.nodes if n.name == "SoftmaxBackward0")
    assert dict(softmax.constants)["dim"] == 1 and dict(softmax.attrs)["dim"] == "1"


def test_a_pending_node_copies_pickles_and_compares_as_its_plain_record():
    case = MODELS["mlp"]()
    trace = record_torch(case.loss(), model=case.model).run()
    node = _pending(trace)[0]
    for plain in (pickle.loads(pickle.dumps(node)), copy.copy(node), copy.deepcopy(node)):
        assert type(plain) is NodeRecord and plain == node and node == plain
    assert isinstance(node, PendingNodeRecord) and "_complete" not in vars(node)   # completed by the copies
