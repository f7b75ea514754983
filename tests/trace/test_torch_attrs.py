"""torch's saved attributes as torch means them: a node's constants read by the bridge equal the
ones gradviz records for the same call, for every node of the op table's parity rows (the rows
whose grad_fn graph is checked against torch's), and on the four models' node types."""
import warnings

import pytest

torch = pytest.importorskip("torch")

import gradviz  # noqa: E402
from gradviz.render import draw  # noqa: E402
from gradviz.render.formula import Formula, Graph  # noqa: E402
from gradviz.torch_bridge import trace_from_torch  # noqa: E402
from gradviz.tracing import build_trace  # noqa: E402
from tests.ops.cases import select  # noqa: E402
from tests.support.op_inputs import requires_grad, rng_for, sample  # noqa: E402

pytestmark = pytest.mark.torch

# Where torch's node genuinely says something else than gradviz's record of the call:
# (node, constant) -> why. Every other constant torch saves must equal gradviz's.
DIFFERENT = {
    **{(n, "dim"): "a reduction of a 0-d tensor: torch saves dim (0,), gradviz records no dim"
       for n in ("SumBackward1", "MeanBackward1", "AmaxBackward0", "AminBackward0", "LinalgVectorNormBackward0",
                 "LogsumexpBackward0", "ProdBackward1")},
    ("VarBackward0", "dim"): "torch keeps the dims in the order given, gradviz sorts them",
    ("StdBackward0", "dim"): "torch keeps the dims in the order given, gradviz sorts them",
    ("SqueezeBackward4", "dim"): "gradviz records squeeze's dim unwrapped (-1)",
    ("SqueezeBackward1", "dim"): "gradviz records squeeze's dim unwrapped (-2)",
    ("ConvolutionBackward0", "padding"): "padding='valid': torch saves [0] for every dim",
    **{(n, k): "torch runs the 1-d pool as a 2-d one: its node's arguments are 2-d"
       for n in ("MaxPool2DWithIndicesBackward0", "AvgPool2DBackward0", "AdaptiveAvgPool2DBackward0")
       for k in ("kernel_size", "stride", "padding", "dilation", "output_size")},
}
# a row whose torch graph makes the same slices in another order, with the same node names
OTHER_ORDER = {"sorting/diff", "sorting/diff_append"}


def inputs_of(case):
    if case.group == "unary":
        return [((3, 4), case.inputs[0])]
    if case.group == "binary":
        return [((3, 4), case.inputs[0]), ((4,), case.inputs[1])]
    return list(case.inputs)


def outputs(t, case, arrays, flags):
    xs = [t.tensor(a, dtype=t.float64, requires_grad=f) for a, f in zip(arrays, flags)]
    out = case.fn(t, *xs)
    return [o for o in (out if isinstance(out, (tuple, list)) else [out]) if o.requires_grad]


CASES = [c for c in select("parity") if c.graph == "whole" and c.id not in OTHER_ORDER]


@pytest.mark.filterwarnings("ignore")
def test_every_constant_torch_saves_is_the_one_gradviz_records():
    conflicts, checked, reordered = [], set(), []
    for case in CASES:
        rng = rng_for(case.id)
        specs = inputs_of(case)
        arrays, flags = [sample(s, rng) for s in specs], [requires_grad(s) for s in specs]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs, ours = outputs(torch, case, arrays, flags), outputs(gradviz, case, arrays, flags)
        if not theirs:
            continue
        t_ops = [n for n in trace_from_torch(*theirs).nodes if n.kind == "op"]
        g_ops = [n for n in build_trace(ours).nodes if n.kind == "op"]
        if [n.name for n in t_ops] != [n.name for n in g_ops]:   # the same nodes, made in another order
            reordered.append(case.id)
            continue
        for tn, gn in zip(t_ops, g_ops):
            checked.add(tn.name)
            mine = dict(gn.constants)
            for key, value in tn.constants:
                if key in mine and mine[key] != value and (tn.name, key) not in DIFFERENT:
                    conflicts.append(f"{case.id}: {tn.name} {key}={value!r}, gradviz {mine[key]!r}")
                assert "18446744073709551" not in repr(value), (case.id, tn.name, key)
            for key, text in tn.attrs:
                assert "18446744073709551" not in text, (case.id, tn.name, key)
    assert not conflicts, "\n".join(conflicts)
    assert len(checked) > 120 and len(reordered) < 10, reordered   # node types the table meets


def test_negative_dims_are_wrapped_with_the_ndim_they_count_in():
    x = torch.randn(2, 3, 4, requires_grad=True)
    cases = {"SoftmaxBackward0": (x.softmax(-1), dict(dim=2)), "MeanBackward1": (x.mean((-1, -2)), dict(dim=[2, 1])),
             "UnsqueezeBackward0": (x.unsqueeze(-1), dict(dim=3)), "TransposeBackward0": (x.transpose(-2, -1),
                                                                                            dict(dim0=1, dim1=2)),
             "SelectBackward0": (x.select(-1, -1), dict(dim=2, index=3)),
             "SliceBackward0": (x[:, 1:], dict(dim=1, start=1, end=3, step=1)),
             "StackBackward0": (torch.stack([x, x], -1), {}), "CatBackward0": (torch.cat([x, x], -1), {})}
    for name, (y, expected) in cases.items():
        node = next(n for n in trace_from_torch(y.sum()).nodes if n.name == name)
        assert {k: v for k, v in node.constants if k in expected} == expected, name
        attrs = dict(node.attrs)
        assert "dim" not in attrs or not attrs["dim"].lstrip("(").startswith("-"), (name, attrs)
        assert all("18446744073709551" not in text for text in attrs.values()), (name, attrs)
    stack = next(n for n in trace_from_torch(torch.stack([x, x], -1).sum()).nodes if n.name == "StackBackward0")
    assert dict(stack.attrs)["dim"] == "3"   # stack's dim counts in its output


def test_a_view_reads_with_the_size_it_made():
    x = torch.randn(2, 3, 4, requires_grad=True)
    trace = trace_from_torch(x.view(6, 4).expand(2, 6, 4).reshape(-1).sum())
    view = next(n for n in trace.nodes if n.name == "ViewBackward0")
    assert dict(view.constants)["size"] == [6, 4] and dict(view.attrs)["size"] == "(6, 4)"
    expand = next(n for n in trace.nodes if n.name == "ExpandBackward0")
    assert dict(expand.constants)["size"] == [2, 6, 4]
    source = draw(trace).source
    assert "view(t₁, (6, 4))" in source and "18446744073709551" not in source


def test_enums_read_as_their_names():
    x = torch.randn(4, 3, requires_grad=True)
    loss = torch.nn.functional.mse_loss(x, torch.zeros(4, 3), reduction="sum")
    node = next(n for n in trace_from_torch(loss).nodes if n.name == "MseLossBackward0")
    assert dict(node.constants)["reduction"] == "sum"


def test_a_64_element_weight_shows_its_data_cell():
    # 64 elements keep their values (an 8×8 grid in the panel); the label, which prints up to 16,
    # shows their min, mean and max: the data cell is never empty
    torch.manual_seed(0)
    layer = torch.nn.Linear(8, 8)
    loss = layer(torch.randn(2, 8)).sum()
    trace = trace_from_torch(loss, model=layer)
    weight = next(n for n in trace.nodes if n.name == "weight")
    assert weight.value.values.shape == (8, 8) and weight.value.stats is not None
    w = layer.weight.detach().double().numpy()
    assert weight.value.stats == pytest.approx((w.min(), w.mean(), w.max()), rel=1e-6)
    source = draw(trace).source
    label = next(line for line in source.splitlines() if "weight" in line and "label=" in line)
    assert f"min {w.min():.3g}" in label and f"max {w.max():.3g}" in label


@pytest.mark.parametrize("cut, name, headline, vjp", [
    (lambda x: x.chunk(3, 1), "SplitBackward0", "t₁, t₂, t₃ = split(x, (2, 2, 2))", "cat(ḡ₁, ḡ₂, …) along dim 1"),
    (lambda x: x.split([2, 4], 1), "SplitWithSizesBackward0", "t₁, t₂ = split(x, (2, 4))", "cat(ḡ₁, ḡ₂, …) along dim 1"),
    (lambda x: x.unbind(0), "UnbindBackward0", "t₁, t₂, t₃ = unbind(x, 0)", "stack(ḡ₁, ḡ₂, …) along dim 0"),
])
def test_a_split_says_its_outputs_gradients_are_joined_not_summed(cut, name, headline, vjp):
    # nn.GRU's gates, a packed sequence's steps, attention's q, k, v: one node, several outputs
    x = torch.randn(3, 6, requires_grad=True)
    pieces = cut(x)
    loss = sum((p * (i + 1)).sum() for i, p in enumerate(pieces))
    trace = trace_from_torch(loss, params={"x": x})
    node = next(n for n in trace.nodes if n.name == name)
    formula = Formula(Graph(trace), node)
    assert formula.headline() == headline
    assert formula.vjp_text(0) == f"∂L/∂x = {vjp}"
    label = next(line for line in draw(trace).source.splitlines() if f"id={node.id} " in line)
    assert "ḡ₁ +" not in label   # each output is used once: nothing is summed


class ScaleThenAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, k, b):
        ctx.k = k
        return a * k + b

    @staticmethod
    def backward(ctx, g):
        return g * ctx.k, None, g


class ScaleThenAddHere(gradviz.autograd.Function):
    forward, backward = ScaleThenAdd.forward, ScaleThenAdd.backward


@pytest.mark.parametrize("lib, fn", [(torch, ScaleThenAdd), (gradviz, ScaleThenAddHere)])
def test_a_custom_function_says_it_runs_user_code_and_which_gradient_backward_returns(lib, fn):
    y = lib.randn(2)
    x = lib.randn(2, requires_grad=True)
    z = fn.apply(y, 3.0, x)   # x is forward's third argument: backward's [2], in input slot 1
    loss = z.sum()
    names = {"x": x, "z": z}
    trace = trace_from_torch(loss, params=names) if lib is torch else build_trace([loss], names=names)
    node = next(n for n in trace.nodes if n.name == f"{fn.__name__}Backward")
    formula = Formula(Graph(trace), node)
    # the learner's own call, in the symbols every other node uses (not the record's letters c, a, b):
    # y, which needs no gradient and has no name here, is numbered as any unnamed tensor
    said = f"z = {fn.__name__}.apply(t₂, …, x)  (user code)"
    assert formula.headline() == said
    assert formula.forward() == f'<span class="gv-formula">{said}</span>'
    assert formula.headline_length() == len(said)
    assert formula.vjp_text(1) == f"∂L/∂x = {fn.__name__}.backward(ctx, ḡ)[2]  (user code)"
    assert said.replace("  ", " \\ ") in draw(trace).source


@pytest.mark.parametrize("reduction, headline, vjp", [
    ("mean", "t₁ = 1/N Σ (p − t₂)²", "(2ḡ (p − t₂))/N"),
    ("sum", "t₁ = Σ (p − t₂)²", "2ḡ (p − t₂)"),
    ("none", "t₁ = (p − t₂)²", "2ḡ (p − t₂)"),
])
def test_a_loss_reads_as_its_reduction_says(reduction, headline, vjp):
    # a VAE's BCE and KL are summed: no 1/N in what it computes, nor in its gradient
    for lib, build in ((torch, trace_from_torch), (gradviz, None)):
        p = lib.rand(3, requires_grad=True)
        loss = lib.nn.functional.mse_loss(p, lib.rand(3), reduction=reduction)
        trace = build(loss, params={"p": p}) if build else build_trace([loss], names={"p": p})
        node = next(n for n in trace.nodes if n.name == "MseLossBackward0")
        formula = Formula(Graph(trace), node)
        assert (formula.headline(), formula.vjp_text(0)) == (headline, f"∂L/∂p = {vjp}"), lib.__name__
