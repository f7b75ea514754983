"""The line that created a leaf: with source tracking on, a leaf made by the learner's code (a factory
with requires_grad=True, requires_grad_(), an nn.Parameter in a module's __init__) keeps that line,
and its AccumulateGrad step points at it in the Trace and in the player's code panel."""
import gc
import json

import pytest

import gradviz as torch
import gradviz.nn as nn
from gradviz import code_lines
from gradviz.player import codeview
from gradviz.player.html import animate
from gradviz.tracing import Trace, build_trace

with open(__file__, encoding="utf-8") as _f:
    _LINES = [line.strip() for line in _f]


def line_of(text: str) -> int:
    """The number of the one line of this file whose code is `text`."""
    found = [k + 1 for k, line in enumerate(_LINES) if line == text]
    assert len(found) == 1, text
    return found[0]


@pytest.fixture
def tracking():
    code_lines.set_source_tracking(True)
    yield
    code_lines.set_source_tracking(False)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x * self.scale)


def program():
    x = torch.randn(3, requires_grad=True)
    t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.zeros(3).requires_grad_()
    net = Scaled()
    loss = net(x * t + w).sum()
    return loss, {"x": x, "t": t, "w": w, "scale": net.scale, "fc.weight": net.fc.weight, "fc.bias": net.fc.bias}


CREATED = {"x": "x = torch.randn(3, requires_grad=True)",
           "t": "t = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)",
           "w": "w = torch.zeros(3).requires_grad_()",
           "scale": "self.scale = nn.Parameter(torch.ones(3))",
           "fc.weight": "self.fc = nn.Linear(3, 2)", "fc.bias": "self.fc = nn.Linear(3, 2)"}


def _accumulate_of(trace: Trace, leaf_id: str):
    edge = next(e for e in trace.edges if e.src == leaf_id)
    return trace.node(edge.dst)


def test_leaves_and_their_accumulate_grad_keep_the_line_that_made_them(tracking):
    loss, leaves = program()
    trace = build_trace((loss,), leaves)
    by_name = {n.name: n for n in trace.nodes if n.kind == "leaf"}
    assert set(by_name) == set(CREATED)
    for name, text in CREATED.items():
        leaf = by_name[name]
        assert leaf.source == (__file__, line_of(text), text), name
        acc = _accumulate_of(trace, leaf.id)
        assert acc.kind == "accumulate" and acc.source == leaf.source
    # the code block the Trace keeps runs from the first of those lines to the last
    first, lines = trace.code[__file__]
    assert first == line_of(CREATED["scale"]) and CREATED["t"] in [line.strip() for line in lines]


def test_the_player_highlights_the_creation_line_on_the_leafs_accumulate_grad_step(tracking):
    loss, leaves = program()
    anim = animate(loss, names=leaves, forward=False)
    lines = anim.data()["lines"]
    listing = codeview.listing(anim.trace)
    steps = [f for f in anim.frames if f.node is not None and anim.trace.node(f.node).kind == "accumulate"]
    assert len(steps) == len(CREATED)
    seen = set()
    for frame in steps:
        leaf = next(anim.trace.node(e.src) for e in anim.trace.edges if e.dst == frame.node)
        key = lines[frame.node]
        assert key == f"0:{line_of(CREATED[leaf.name])}"
        assert f'data-line="{key}"' in listing and f'gv-made" data-line="{key}"' in listing
        seen.add(leaf.name)
    assert seen == set(CREATED)
    json.dumps(anim.data())                     # the player's data stays plain JSON


def test_a_saved_trace_keeps_the_leaf_lines(tracking):
    loss, leaves = program()
    trace = build_trace((loss,), leaves)
    back = Trace.from_json(json.loads(json.dumps(trace.to_json())))
    assert [n.source for n in back.nodes] == [n.source for n in trace.nodes]


def test_the_first_line_that_made_a_leaf_is_kept(tracking):
    a = torch.ones(2, requires_grad=True)
    a.requires_grad_()                          # already a leaf that requires grad: not its creation
    assert code_lines.leaf_source_of(a)[1] == line_of("a = torch.ones(2, requires_grad=True)")


def test_without_tracking_no_line_is_kept():
    b = torch.ones(2, requires_grad=True)
    trace = build_trace(((b * 2).sum(),), {"b": b})
    assert all(n.source is None for n in trace.nodes)


def test_a_leaf_that_goes_takes_its_line_with_it(tracking):
    c = torch.ones(2, requires_grad=True)
    key = id(c)
    assert key in code_lines._leaf_sources
    del c
    gc.collect()
    assert key not in code_lines._leaf_sources


def test_a_tensor_that_never_requires_grad_keeps_nothing(tracking):
    d = torch.ones(2)
    e = d * 2
    assert code_lines.leaf_source_of(d) is None and code_lines.leaf_source_of(e) is None


def test_a_custom_functions_node_keeps_the_line_that_called_apply(tracking):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x ** 2 * g

    w = torch.ones(2, requires_grad=True)
    y = Cube.apply(w)
    assert code_lines.source_of(y.grad_fn)[1] == line_of("y = Cube.apply(w)")
