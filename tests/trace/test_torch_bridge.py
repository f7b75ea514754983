"""The torch bridge against gradviz itself: one program, run once with real PyTorch and once
with gradviz from the same values, must give the same Trace (node names, kinds and order,
edges and slots, backward step order, gradients); where torch's graph genuinely differs
the bridge must show torch's, not gradviz's."""
import sys
from contextlib import contextmanager

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import gradviz as gv  # noqa: E402
from gradviz import code_lines  # noqa: E402
from gradviz.torch_bridge import record_forward, record_torch_backward, trace_from_torch  # noqa: E402
from gradviz.tracing import build_trace, record_backward  # noqa: E402
from tests.ops.cases import barlow_loss  # noqa: E402

pytestmark = [
    pytest.mark.torch,
    # build_trace reads .grad of gradviz's non-leaf outputs, which warns exactly as torch does
    pytest.mark.filterwarnings("ignore:The .grad attribute of a Tensor that is not a leaf Tensor:UserWarning"),
]

rng = np.random.default_rng(7)


@contextmanager
def lines_tracked():
    """gradviz's nodes keep the line that made them, as torch's do under record_forward."""
    was = code_lines.source_tracking()
    code_lines.set_source_tracking(True)
    try:
        yield
    finally:
        code_lines.set_source_tracking(was)


# -- the programs, written once for both libraries (T is torch or gradviz) ------------------
barlow = barlow_loss   # the Barlow Twins loss of the op case table


def fan_out(T, a):
    b = a + a
    return (b * b).sum()


def broadcasting(T, a, b, c):
    return ((a * b + c) / (b * b + 1)).sum()


def created_out_of_walk_order(T, a, b):
    # creation order (exp a, exp b, mul) is not the depth-first order from the root (exp b first)
    x = a.exp()
    y = b.exp()
    return (y * x).sum()


def mixed(T, a, b):
    h = T.tanh(a @ b.T).relu()
    p = h.softmax(1)
    return (p * h.sigmoid()).mean() + h.max(1)[0].sum() + T.cat([h, a[:, :2]], 1).std()


def views_and_indexing(T, a):
    v = a.view(12).mul(2).reshape(4, 3)
    return (v[1] * v[:, 2].sum()).sum() + a.t().clone().norm() + a.unsqueeze(0).expand(2, 3, 4).sum()


PROGRAMS = {
    "barlow": (barlow, [(5, 3), (5, 3)]),
    "fan_out": (fan_out, [(3,)]),
    "broadcasting": (broadcasting, [(3, 4), (4,), (1, 4)]),
    "creation_order": (created_out_of_walk_order, [(2, 2), (2, 2)]),
    "mixed": (mixed, [(3, 4), (3, 4)]),
    "views": (views_and_indexing, [(3, 4)]),
}


def both(program, shapes):
    arrays = [rng.standard_normal(s) for s in shapes]
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    gg = [gv.tensor(a, requires_grad=True) for a in arrays]
    return (program(torch, *tt), {f"x{i}": t for i, t in enumerate(tt)},
            program(gv, *gg), {f"x{i}": t for i, t in enumerate(gg)})


# -- comparing Traces --------------------------------------------------------------------
def nodes_of(trace):
    return [(n.id, n.kind, n.name) for n in trace.nodes]


def edges_of(trace):
    return [(e.id, e.src, e.dst, e.slot, e.shape) for e in trace.edges]


def same_preview(a, b):
    if a is None or b is None:
        return a is None and b is None
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.values is not None or b.values is not None:
        return a.values is not None and b.values is not None and np.allclose(a.values, b.values)
    if a.stats is not None or b.stats is not None:
        return a.stats is not None and b.stats is not None and np.allclose(a.stats, b.stats)
    return True


def assert_same_structure(t, g):
    assert nodes_of(t) == nodes_of(g)
    assert edges_of(t) == edges_of(g)
    assert t.roots == g.roots
    assert t.forward == g.forward


def assert_same_steps(t, g):
    assert [s.node for s in t.steps] == [s.node for s in g.steps]
    for ts, gs in zip(t.steps, g.steps):
        assert ts.index == gs.index
        assert len(ts.grad_in) == len(gs.grad_in)
        assert all(same_preview(a, b) for a, b in zip(ts.grad_in, gs.grad_in)), ts.node
        assert [(e, axes) for e, _, axes in ts.flows] == [(e, axes) for e, _, axes in gs.flows], ts.node
        assert all(same_preview(a, b) for (_, a, _), (_, b, _) in zip(ts.flows, gs.flows)), ts.node
        assert [a.node for a in ts.accumulations] == [a.node for a in gs.accumulations]
        for a, b in zip(ts.accumulations, gs.accumulations):
            assert same_preview(a.contribution, b.contribution)
            assert same_preview(a.total, b.total)
            assert same_preview(a.before, b.before)


# -- structure ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", PROGRAMS)
def test_graph_matches_build_trace(name):
    program, shapes = PROGRAMS[name]
    tl, tnames, gl, gnames = both(program, shapes)
    t = trace_from_torch(tl, params=tnames)
    g = build_trace([gl], gnames)
    assert_same_structure(t, g)
    for tn, gn in zip(t.nodes, g.nodes):
        assert tn.formula == gn.formula and tn.vjp_formulas == gn.vjp_formulas, tn.name
        if tn.kind in ("leaf", "output"):
            assert same_preview(tn.value, gn.value)
            assert tn.grad is None and gn.grad is None   # "not computed yet", not zeros
        if tn.kind == "op":
            assert tn.value is not None and tn.value.shape == gn.value.shape and tn.value.dtype == gn.value.dtype


def test_barlow_nodes_read_like_the_tutorial():
    tl, tnames, _, _ = both(barlow, [(5, 3), (5, 3)])
    t = trace_from_torch(tl, params=tnames)
    assert [n.name for n in t.nodes] == [
        "x0", "AccumulateGrad", "MeanBackward1", "SubBackward0", "StdBackward0", "DivBackward0",
        "x1", "AccumulateGrad", "MeanBackward1", "SubBackward0", "StdBackward0", "DivBackward0",
        "PermuteBackward0", "MmBackward0", "DivBackward0", "DiagonalBackward0", "SumBackward0",
        "NegBackward0", "t₁₄"]   # the unnamed loss: the symbol its grad_fn gave it (t₁ ... t₁₄ in creation order)
    assert [n.kind for n in t.nodes][:2] == ["leaf", "accumulate"] and t.nodes[-1].kind == "output"
    mm = t.edges_into("n13")
    assert [(e.src, e.slot, e.shape) for e in mm] == [("n12", 0, (3, 5)), ("n11", 1, (5, 3))]


def test_fan_out_is_two_edges_and_one_accumulation():
    tl, tnames, gl, gnames = both(lambda T, a: a + a, [(3,)])
    t = record_torch_backward(tl, gradient=torch.ones(3, dtype=torch.float64), params=tnames)
    g = record_backward([gl], gv.ones(3, dtype=gv.float64), names=gnames)
    assert_same_structure(t, g)
    assert_same_steps(t, g)
    assert [(e.src, e.dst, e.slot) for e in t.edges_into("n2")] == [("n1", "n2", 0), ("n1", "n2", 1)]
    acc = t.steps[-1]
    assert acc.node == "n1" and acc.flows == ()
    (write,) = acc.accumulations
    assert write.node == "n0" and write.before is None
    assert np.allclose(write.total.values, 2.0) and np.allclose(t.node("n0").grad.values, 2.0)


def test_ids_are_stable_across_walks():
    tl, tnames, _, _ = both(mixed, [(3, 4), (3, 4)])
    first, second = trace_from_torch(tl, params=tnames), trace_from_torch(tl, params=tnames)
    assert nodes_of(first) == nodes_of(second) and edges_of(first) == edges_of(second)


def test_deep_chain_needs_no_recursion():
    x = torch.ones((), requires_grad=True)
    y = x
    for _ in range(20000):
        y = y * 1.0
    t = trace_from_torch(y)
    assert len(t.nodes) == 20003 and [n.name for n in t.nodes[:3]] == ["t₁", "AccumulateGrad", "MulBackward0"]
    assert t.nodes[-1].name == t.nodes[-2].out_names[0] == "t₂₀₀₀₁"   # every tensor numbered, none shared


# -- backward, step by step -----------------------------------------------------------------
@pytest.mark.parametrize("name", PROGRAMS)
def test_recorded_backward_matches_gradviz(name):
    program, shapes = PROGRAMS[name]
    tl, tnames, gl, gnames = both(program, shapes)
    t = record_torch_backward(tl, params=tnames)
    g = record_backward([gl], names=gnames)
    assert_same_structure(t, g)
    assert_same_steps(t, g)
    for tn, gn in zip(t.nodes, g.nodes):
        if tn.kind == "leaf":
            assert same_preview(tn.grad, gn.grad) and tn.grad is not None
    # the hooks are gone: another backward adds no steps
    tl.backward()
    assert len(t.steps) == len(g.steps)


def test_broadcast_sums_are_marked():
    tl, tnames, gl, gnames = both(lambda T, a, b, c: (a * b + c).sum(), [(3, 4), (4,), (1, 4)])
    t = record_torch_backward(tl, params=tnames)
    g = record_backward([gl], names=gnames)
    assert_same_steps(t, g)
    edges = {e.id: e for e in t.edges}
    sent = {(t.node(edges[e].dst).name, edges[e].slot): (ax, p.shape) for s in t.steps for e, p, ax in s.flows}
    assert sent[("MulBackward0", 0)] == ((), (3, 4))
    assert sent[("MulBackward0", 1)] == ((0,), (4,))          # b (4,) was broadcast over the rows
    assert sent[("AddBackward0", 0)] == ((), (3, 4))
    assert sent[("AddBackward0", 1)] == ((0,), (1, 4))        # c (1, 4) too
    assert sent[("SumBackward0", 0)] == ((), (3, 4))          # a reduction's gradient is not a broadcast sum


def test_multiple_roots_with_gradients_and_retained_output():
    a_np, b_np = rng.standard_normal((2, 3)), rng.standard_normal(3)
    ta, tb = torch.tensor(a_np, requires_grad=True), torch.tensor(b_np, requires_grad=True)
    ga, gb = gv.tensor(a_np, requires_grad=True), gv.tensor(b_np, requires_grad=True)
    seeds = [rng.standard_normal((2, 3)), rng.standard_normal(())]
    tu, tv = ta * tb, (ta.exp() + tb).sum()
    gu, gv_ = ga * gb, (ga.exp() + gb).sum()
    tu.retain_grad()
    gu.retain_grad()
    t = record_torch_backward(tu, tv, gradient=[torch.tensor(s) for s in seeds], params={"a": ta, "b": tb, "u": tu})
    g = record_backward([gu, gv_], [gv.tensor(s) for s in seeds], names={"a": ga, "b": gb, "u": gu})
    assert_same_structure(t, g)
    assert_same_steps(t, g)
    out = t.node(t.roots[0])
    assert out.name == "u" and np.allclose(out.grad.values, seeds[0])
    retained = [a for s in t.steps for a in s.accumulations if a.node == out.id]
    assert len(retained) == 1 and retained[0].before is None


def test_accumulating_into_an_existing_grad():
    x_np = rng.standard_normal(4)
    tx, gx = torch.tensor(x_np, requires_grad=True), gv.tensor(x_np, requires_grad=True)
    (tx * 3).sum().backward()
    (gx * 3).sum().backward()
    t = record_torch_backward((tx * tx).sum(), params={"x": tx})
    g = record_backward([(gx * gx).sum()], names={"x": gx})
    assert_same_steps(t, g)
    (write,) = t.steps[-1].accumulations
    assert np.allclose(write.before.values, 3.0) and np.allclose(write.total.values, 3.0 + 2 * x_np)


# -- an nn.Module model, with module scopes and op values ------------------------------------
def mlp_pair():
    w1, b1 = rng.standard_normal((5, 3)), rng.standard_normal(5)
    w2, b2 = rng.standard_normal((2, 5)), rng.standard_normal(2)
    x, y = rng.standard_normal((4, 3)), np.array([0, 1, 1, 0])

    def mlp_class(T):
        # named MLP in both: gradviz scopes a module by its class name, torch models too
        class MLP(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1, self.act, self.fc2 = T.nn.Linear(3, 5), T.nn.ReLU(), T.nn.Linear(5, 2)

            def forward(self, x):
                return self.fc2(self.act(self.fc1(x)))
        return MLP

    tm, gm = mlp_class(torch)().double(), mlp_class(gv)()
    with torch.no_grad():
        for layer, w, b in ((tm.fc1, w1, b1), (tm.fc2, w2, b2)):
            layer.weight.copy_(torch.tensor(w))
            layer.bias.copy_(torch.tensor(b))
    for layer, w, b in ((gm.fc1, w1, b1), (gm.fc2, w2, b2)):
        layer.weight = gv.nn.Parameter(gv.tensor(w))
        layer.bias = gv.nn.Parameter(gv.tensor(b))
    return tm, gm, x, y


def mlp_loss(T, model, x, y):
    return T.nn.functional.cross_entropy(model(T.tensor(x)), T.tensor(y))


def mlp_traces():
    """The MLP pair's cross-entropy backward, recorded in each library: (torch's Trace, gradviz's),
    each node with the line that made it (the same lines in both)."""
    tm, gm, x, y = mlp_pair()
    with record_forward(tm) as rec:
        tl = mlp_loss(torch, tm, x, y)
    with lines_tracked():
        gl = mlp_loss(gv, gm, x, y)
    t = record_torch_backward(tl, params=dict(tm.named_parameters()), forward=rec)
    g = record_backward([gl], names=dict(gm.named_parameters()))
    return t, g


def test_mlp_matches_with_scopes_and_values():
    t, g = mlp_traces()
    assert_same_structure(t, g)
    assert_same_steps(t, g)
    assert [n.name for n in t.nodes if n.kind != "accumulate"] == [
        "fc1.weight", "TBackward0", "fc1.bias", "AddmmBackward0", "ReluBackward0", "fc2.weight", "TBackward0",
        "fc2.bias", "AddmmBackward0", "LogSoftmaxBackward0", "NllLossBackward0", "t₇"]
    assert [n.scope for n in t.nodes] == [n.scope for n in g.nodes]
    # each torch node knows the learner's line that made it, the line gradviz's own node knows
    assert [n.source for n in t.nodes] == [n.source for n in g.nodes]
    assert {n.source[2] for n in t.nodes if n.kind == "op"} == {
        "return self.fc2(self.act(self.fc1(x)))", "return T.nn.functional.cross_entropy(model(T.tensor(x)), T.tensor(y))"}
    assert t.code == g.code
    assert t.node("n5").scope == ("MLP", "fc1 (Linear)") and t.node("n6").scope == ("MLP", "act (ReLU)")
    assert t.node("n13").scope == ()   # cross_entropy ran outside the model
    # every op's value is known except weight.t() inside nn.Linear: torch makes that node in
    # C++ (F.linear), where no Python hook sees its output and the node saves nothing
    unknown = [tn.name for tn in t.nodes if tn.kind == "op" and tn.value.values is None and tn.value.stats is None]
    assert unknown == ["TBackward0", "TBackward0"]
    for tn, gn in zip(t.nodes, g.nodes):
        if tn.kind in ("op", "leaf", "output") and tn.name not in unknown:
            assert same_preview(tn.value, gn.value), tn.name
        if tn.kind == "leaf":
            assert same_preview(tn.grad, gn.grad)
    # the bias of a batched Linear is broadcast over the batch: its gradient is summed over axis 0
    bias_flow = [ax for s in t.steps for e, _, ax in s.flows if e == t.edges_into("n5")[0].id]
    assert bias_flow == [(0,)]


def test_record_forward_scope_and_old_nodes():
    x = torch.ones(3, requires_grad=True)
    before = x * 2                      # made before recording: never claimed
    with record_forward() as rec:
        with rec.scope("encoder"):
            h = (before + 1).exp()
        out = h.sum()
    t = trace_from_torch(out, forward=rec)
    scopes = {n.name: n.scope for n in t.nodes if n.kind == "op"}
    assert scopes == {"MulBackward0": (), "AddBackward0": ("encoder",), "ExpBackward0": ("encoder",),
                      "SumBackward0": ()}
    add = next(n for n in t.nodes if n.name == "AddBackward0")
    assert np.allclose(add.value.values, 3.0)


def test_record_forward_removes_its_hooks():
    tm, _, x, _ = mlp_pair()
    with record_forward(tm) as rec:
        tm(torch.tensor(x))
    seen = len(rec.scopes)
    tm(torch.tensor(x)).sum()
    assert len(rec.scopes) == seen
    assert not tm._forward_hooks and not tm._forward_pre_hooks and not tm.fc1._forward_hooks


def test_diagram_is_the_one_gradviz_draws():
    # values aside (torch does not keep every op's output), the DOT is the same, clusters included
    tl, tnames, gl, gnames = both(barlow, [(5, 3), (5, 3)])
    hide = dict(show_values=False, show_grads=False)
    torch_dot = gv.draw(trace_from_torch(tl, params=tnames), **hide).source
    assert torch_dot == gv.draw(build_trace([gl], gnames), **hide).source
    t, g = mlp_traces()
    source = gv.draw(t, **hide).source
    assert source == gv.draw(g, **hide).source
    assert "fc1 (Linear)" in source and "act (ReLU)" in source


def test_player_frames_are_the_ones_gradviz_plays():
    from gradviz.player.frames import FrameBuilder
    arrays = [rng.standard_normal((5, 3)) for _ in range(2)]
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    gg = [gv.tensor(a, requires_grad=True) for a in arrays]
    with record_forward() as rec:
        tl = barlow(torch, *tt)
    t = record_torch_backward(tl, params={"z1": tt[0], "z2": tt[1]}, forward=rec)
    with lines_tracked():   # the names the lines give (c = z1.T @ z2 / N) in both
        gl = barlow(gv, *gg)
    g = record_backward([gl], names={"z1": gg[0], "z2": gg[1]})
    ft, fg = FrameBuilder(t, False).build(True), FrameBuilder(g, False).build(True)
    assert [(f.phase, f.node, f.changes, f.title) for f in ft] == [(f.phase, f.node, f.changes, f.title) for f in fg]
    # with the forward recorded, every op shows its value in the forward frames, as gradviz's do
    assert all(n.value.values is not None for n in t.nodes if n.kind == "op")


# -- saved tensors -------------------------------------------------------------------------
def test_show_saved_matches_build_trace():
    def program(T, a, b):
        return (a * b).exp().tanh().sum() + (a.relu() / b).pow(2).sigmoid().sum()
    tl, tnames, gl, gnames = both(program, [(2, 3), (2, 3)])
    t = trace_from_torch(tl, params=tnames, show_saved=True)
    g = build_trace([gl], gnames, show_saved=True)
    assert_same_structure(t, g)
    saved = [(n.id, n.name) for n in t.nodes if n.kind == "saved"]
    assert saved == [(n.id, n.name) for n in g.nodes if n.kind == "saved"]
    assert [(t.node(e.dst).name, t.node(e.src).name) for e in t.edges if e.slot == -1] == [
        ("MulBackward0", "self"), ("MulBackward0", "other"), ("ExpBackward0", "result"), ("TanhBackward0", "result"),
        ("ReluBackward0", "result"), ("DivBackward0", "self"), ("DivBackward0", "other"), ("PowBackward0", "self"),
        ("SigmoidBackward0", "result")]
    for tn, gn in zip(t.nodes, g.nodes):
        if tn.kind == "saved":
            assert same_preview(tn.value, gn.value)


def test_saved_tensors_gone_after_a_freeing_backward():
    a = torch.randn(3, requires_grad=True)
    loss = (a * a).exp().sum()
    assert any(n.kind == "saved" for n in trace_from_torch(loss, show_saved=True).nodes)
    record_torch_backward(loss, retain_graph=False)
    t = trace_from_torch(loss, show_saved=True)
    assert not any(n.kind == "saved" for n in t.nodes)
    assert all(n.value is not None for n in t.nodes if n.kind == "op")   # shapes survive freeing


def test_custom_function_node():
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = torch.ones(3, requires_grad=True)
    t = record_torch_backward(Double.apply(x).sum(), params={"x": x}, show_saved=True)
    assert [(n.kind, n.name) for n in t.nodes] == [
        ("leaf", "x"), ("accumulate", "AccumulateGrad"), ("op", "DoubleBackward"), ("op", "SumBackward0"),
        ("saved", "saved_tensors[0]"), ("output", "t₂")]
    assert [t.node(s.node).name for s in t.steps] == ["SumBackward0", "DoubleBackward", "AccumulateGrad"]
    assert np.allclose(t.node("n0").grad.values, 2.0)


# -- where torch's graph is not gradviz's: the bridge shows torch's ----------------------------
def test_batched_matmul_is_torch_decomposition():
    # torch's matmul is a composite: a 3-D @ 2-D product records view + mm + view, not one
    # matmul node; the bridge shows the nodes torch's engine will run
    c = torch.randn(2, 3, 4, requires_grad=True)
    w = torch.randn(5, 4, requires_grad=True)
    t = record_torch_backward((c @ w.T).sum(), params={"c": c, "w": w})
    assert [n.name for n in t.nodes if n.kind == "op"] == [
        "PermuteBackward0", "ViewBackward0", "MmBackward0", "UnsafeViewBackward0", "SumBackward0"]
    assert [e.shape for e in t.edges_into(t.nodes[-2].id)] == [(2, 3, 5)]
    expected = (torch.ones(2, 3, 5) @ w).detach().numpy()
    assert c.grad is None                     # recording leaves .grad as it was
    assert [n.name for n in t.nodes if n.kind == "leaf"] == ["w", "c"]   # w.T ran before the product
    leaf_c = next(n for n in t.nodes if n.name == "c")
    assert np.allclose(leaf_c.grad.values, expected)


def test_saved_tensors_are_the_ones_torch_kept():
    # torch saves what the formula needs for the inputs that require grad: x / y with only x
    # requiring grad keeps y alone, where gradviz's DivBackward0 always keeps both
    x_np, y_np = rng.standard_normal(3), rng.standard_normal(3)
    t = trace_from_torch(torch.tensor(x_np, requires_grad=True) / torch.tensor(y_np), show_saved=True)
    assert [n.name for n in t.nodes if n.kind == "saved"] == ["other"]
    assert np.allclose(t.nodes[-2].value.values, y_np)
    g = build_trace([gv.tensor(x_np, requires_grad=True) / gv.tensor(y_np)], show_saved=True)
    assert [n.name for n in g.nodes if n.kind == "saved"] == ["self", "other"]


def test_leaf_root_and_roots_without_grad():
    x = torch.ones(2, requires_grad=True)
    assert [n.kind for n in trace_from_torch(x, torch.zeros(3)).nodes] == ["leaf", "accumulate", "output"]
    t = record_torch_backward(x, gradient=torch.full((2,), 5.0))
    assert [(n.kind, n.name) for n in t.nodes] == [("leaf", "t₁"), ("accumulate", "AccumulateGrad"), ("output", "t₁")]
    assert [s.node for s in t.steps] == ["n1"] and np.allclose(t.node("n0").grad.values, 5.0)


def test_large_tensors_get_a_summary():
    x = torch.arange(100.0, requires_grad=True)
    t = trace_from_torch((x * 2).sum())
    leaf = t.node("n0")
    assert leaf.value.values is None and leaf.value.stats == (0.0, 49.5, 99.0)
    assert leaf.value.shape == (100,) and leaf.value.dtype == "float32" and leaf.value.device == "cpu"


def test_rejects_non_tensors():
    with pytest.raises(TypeError, match="torch.Tensor"):
        trace_from_torch(gv.ones(2))


def test_missing_torch_names_the_pinned_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)   # what `import torch` sees when it is absent
    with pytest.raises(ImportError, match=r"pip install torch==2\.13\.0"):
        trace_from_torch(object())
    with pytest.raises(ImportError, match=r"pip install torch==2\.13\.0"):
        with record_forward():
            pass
