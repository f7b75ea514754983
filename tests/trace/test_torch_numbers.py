"""The numbers a call gave that its torch node does not keep (the 1 of x + 1): a watched forward keeps
them in the node's metadata, and the bridge's labels then read what gradviz's own labels read."""
import math

import pytest

torch = pytest.importorskip("torch")

import gradviz  # noqa: E402
from gradviz.torch_bridge import record_forward, trace_from_torch  # noqa: E402
from gradviz.torch_bridge.lines import LineWatch  # noqa: E402
from gradviz.tracing import build_trace  # noqa: E402

pytestmark = pytest.mark.torch

PROGRAMS = {
    "x + 1": lambda t, x, m, c: x + 1,
    "1 + x": lambda t, x, m, c: 1 + x,
    "x - 0.5": lambda t, x, m, c: x - 0.5,
    "1 - x": lambda t, x, m, c: 1 - x,
    "add alpha": lambda t, x, m, c: t.add(x, 1, alpha=2),
    "add other=": lambda t, x, m, c: t.add(x, other=3),
    "where other": lambda t, x, m, c: t.where(m, x, 0.0),
    "where self": lambda t, x, m, c: t.where(m, 2.0, x),
    "masked_fill -inf": lambda t, x, m, c: x.masked_fill(m, -math.inf),
    "var + eps": lambda t, x, m, c: t.sqrt(x.var() + 1e-5),
    "sub_": lambda t, x, m, c: (x * 1).sub_(4),
    "layer_norm eps": lambda t, x, m, c: t.nn.functional.layer_norm(x.view(1, 3), (3,), eps=0.5),
}
GIVEN = ("other", "value", "eps")   # the numbers these calls give by name, which their torch nodes do not save


def run(lib, program):
    x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
    m, c = lib.tensor([True, False, True]), lib.tensor([5.0, 6.0, 7.0])
    return program(lib, x, m, c).sum()


def constants(trace) -> list:
    return [(n.name, dict(n.constants)) for n in trace.nodes if n.kind == "op"]


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_watched_forward_gives_the_numbers_gradviz_records(name):
    with record_forward():
        loss = run(torch, PROGRAMS[name])
    theirs, ours = constants(trace_from_torch(loss)), constants(build_trace([run(gradviz, PROGRAMS[name])]))
    assert [n for n, _ in theirs] == [n for n, _ in ours]
    for (node, seen), (_, recorded) in zip(theirs, ours):
        given = {k: v for k, v in recorded.items() if (k.isdigit() or k in GIVEN) and v is not None}   # inputs by slot
        # (gradviz keeps a wrapped number in the tensor's dtype: 1e-5 as float32's 9.99999975e-06)
        assert {k: seen.get(k) for k in given} == pytest.approx(given, rel=1e-6), node


def test_the_command_lines_watch_keeps_them_too():
    watch = LineWatch()
    watch.start()
    try:
        loss = run(torch, PROGRAMS["var + eps"])
    finally:
        watch.stop()
    add = next(c for n, c in constants(trace_from_torch(loss)) if n == "AddBackward0")
    assert add["1"] == 1e-5


def test_an_unwatched_graph_invents_no_number():
    loss = run(torch, PROGRAMS["x + 1"])
    add = next(c for n, c in constants(trace_from_torch(loss)) if n == "AddBackward0")
    assert "1" not in add   # torch did not keep it and nothing watched the call: a symbol stays


def test_a_tensor_that_needs_no_gradient_is_not_given_a_numbers_place():
    with record_forward():   # lerp(x, c, 0.3): the node saves the weight, not c, and the call's one number is the weight
        loss = torch.lerp(torch.ones(3, requires_grad=True), torch.full((3,), 5.0), 0.3).sum()
    lerp = next(c for n, c in constants(trace_from_torch(loss)) if n == "LerpBackward0")
    assert lerp.get("weight") == pytest.approx(0.3) and "1" not in lerp


def test_a_call_that_made_several_nodes_keeps_none():
    with record_forward():   # normalize's norm, clamp_min, expand and div: its eps belongs to no one node
        loss = torch.nn.functional.normalize(torch.ones(2, 3, requires_grad=True), eps=0.5).sum()
    nodes = _nodes(loss.grad_fn)
    assert len(nodes) > 3 and all("gradviz_numbers" not in fn.metadata for fn in nodes)


def _nodes(fn, seen=None):
    seen = set() if seen is None else seen
    if fn is None or fn in seen:
        return seen
    seen.add(fn)
    for nxt, _ in fn.next_functions:
        _nodes(nxt, seen)
    return seen
