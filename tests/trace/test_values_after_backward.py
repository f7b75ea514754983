"""A diagram drawn again after backward() shows the values it showed before, where the learner's
own variables still hold them: the released node's output is read from the tensor that is it."""
import gradviz as torch
from gradviz.tracing import build_trace


def _values(trace) -> dict:
    return {n.id: (None if n.value is None or n.value.values is None else n.value.values.tolist())
            for n in trace.nodes if n.kind == "op"}


def test_a_named_output_keeps_its_value_after_backward():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = y.exp().sum()
    names = {"x": x, "y": y, "z": z}
    before = _values(build_trace((z,), names))
    z.backward()
    after = _values(build_trace((z,), names))
    ops = {n.id: n for n in build_trace((z,), names).nodes if n.kind == "op"}
    for node_id, values in before.items():
        if ops[node_id].out_names[:1] in (("y",), ("z",)):
            assert after[node_id] == values and values is not None, ops[node_id].name
        else:   # exp's output: no variable holds it, and backward let go of it, as PyTorch does
            assert after[node_id] is None


def test_a_variable_written_in_place_since_shows_no_stale_value():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    z = (y * y).sum()
    z.backward()
    with torch.no_grad():
        y.add_(1)   # the node's output was [3, 6]; the variable now holds [4, 7]
    trace = build_trace((z,), {"x": x, "y": y, "z": z})
    (mul,) = [n for n in trace.nodes if n.kind == "op" and n.out_names[:1] == ("y",)]
    assert mul.value is None or mul.value.values is None
