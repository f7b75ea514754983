"""The learner's line behind each torch node: record_forward keeps it in each node's metadata, anomaly
mode's traceback stands in where it was on, and the code panel and tooltips of any view of the graph
show it; the Trace is where every shown line comes from."""
import html
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import gradviz  # noqa: E402
from gradviz.player import codeview  # noqa: E402
from gradviz.torch_bridge import record_forward, record_torch, trace_from_torch  # noqa: E402
from gradviz.torch_bridge import lines  # noqa: E402
from gradviz.torch_bridge.lines import KEY, LineWatch, line_of  # noqa: E402
from tests.support.torch_models import make_lstm  # noqa: E402

pytestmark = pytest.mark.torch
nn, F = torch.nn, torch.nn.functional
HERE = str(Path(__file__))


def line_marked(tag: str) -> tuple:
    """(this file, line, text) of the line of this file that ends with `# <tag>`."""
    for number, text in enumerate(Path(HERE).read_text().splitlines(), start=1):
        if text.endswith(f"# {tag}"):
            return HERE, number, text.strip()
    raise LookupError(tag)


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 8), nn.Linear(8, 3)

    def forward(self, x):
        h = torch.relu(self.fc1(x))  # hidden
        return self.fc2(h)  # logits


def mlp_data():
    torch.manual_seed(0)
    return MLP(), torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])


def made_by(trace) -> dict:
    """op node name, in creation order -> the tag of the line that made it."""
    tags = {}
    for node in trace.nodes:
        if node.kind == "op":
            tag = re.search(r"# (\w+)$", node.source[2]) if node.source else None
            tags.setdefault(node.name, []).append(tag[1] if tag else node.source)
    return tags


MLP_LINES = {"TBackward0": ["hidden", "logits"], "AddmmBackward0": ["hidden", "logits"], "ReluBackward0": ["hidden"],
             "LogSoftmaxBackward0": ["loss"], "NllLossBackward0": ["loss"], "MulBackward0": ["penalty"],
             "SumBackward0": ["penalty"], "AddBackward0": ["total"]}


def mlp_forward(model, x, y):
    loss = F.cross_entropy(model(x), y)  # loss
    penalty = (model.fc2.weight * 0.01).sum()  # penalty
    return loss + penalty  # total


def test_record_forward_keeps_the_line_that_made_each_node():
    model, x, y = mlp_data()
    with record_forward(model) as rec:
        total = mlp_forward(model, x, y)
    # a Module's ops: the line of its forward; a functional call's (cross_entropy's two nodes): its line
    trace = record_torch(total, model=model).run()   # after the block, without the record: the nodes keep it
    assert made_by(trace) == MLP_LINES
    assert trace.node("n5").source == line_marked("hidden")
    assert [n.source for n in trace.nodes if n.kind != "op"] == [None] * sum(n.kind != "op" for n in trace.nodes)
    # the block of code around them, from the first line to the last, read from the file
    first, lines = trace.code[HERE]
    assert first == line_marked("hidden")[1] and lines[-1].strip() == line_marked("total")[2]
    # the same with the record given (trace_from_torch and record_torch read the same nodes)
    assert made_by(trace_from_torch(total, model=model, forward=rec)) == MLP_LINES


def test_the_player_shows_the_lines_the_trace_holds(tmp_path):
    model, x, y = mlp_data()
    with record_forward(model):
        total = mlp_forward(model, x, y)
    animation = gradviz.animate(total, model=model)
    trace = animation.trace
    page = animation.html()
    shown = json.loads(re.search(r'"lines":(\{[^}]*\})', page)[1])
    assert shown == codeview.line_keys(trace) and len(shown) == sum(n.kind == "op" for n in trace.nodes)
    listing = codeview.listing(trace)
    assert listing in page
    for node in trace.nodes:   # each node's line key marks the listing's line with its text
        if node.source is not None:
            key = shown[node.id]
            text = re.search(rf'data-line="{key}"><span class="gv-ln">{node.source[1]}</span>([^<]*)</span>', listing)[1]
            assert text.strip() == node.source[2].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    # the diagram's tooltips name the same lines
    svg = html.unescape(gradviz.draw(trace).svg())
    for tag in ("hidden", "logits", "loss", "penalty", "total"):
        _, number, text = line_marked(tag)
        assert f"test_torch_lines.py:{number}: {text}</title>" in svg


def test_nodes_made_before_the_block_get_no_line():
    x = torch.ones(3, requires_grad=True)
    before = x * 2
    with record_forward():
        out = (before + 1).sum()  # after
    trace = trace_from_torch(out)
    assert made_by(trace) == {"MulBackward0": [None], "AddBackward0": ["after"], "SumBackward0": ["after"]}


def test_without_record_forward_or_anomaly_mode_no_line_is_made_up():
    model, x, y = mlp_data()
    total = mlp_forward(model, x, y)
    trace = record_torch(total, model=model).run()
    assert all(n.source is None for n in trace.nodes) and not trace.code
    assert '"lines":{}' in gradviz.animate(total, model=model).html()


def test_anomaly_mode_gives_the_line_from_the_traceback_torch_keeps():
    model, x, y = mlp_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # anomaly mode warns that it slows things down
        with torch.autograd.set_detect_anomaly(True):
            total = mlp_forward(model, x, y)
    # torch 2.13 keeps traceback.format_stack's strings, outermost first, torch's own frames last
    assert isinstance(total.grad_fn.metadata["traceback_"], list) and KEY not in total.grad_fn.metadata
    linear = total.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]   # fc2's, under the loss
    assert type(linear).__name__ == "AddmmBackward0" and "linear.py" in linear.metadata["traceback_"][-1]
    assert line_of(linear) == line_marked("logits")   # the last frame of the learner's, not torch's
    assert made_by(record_torch(total, model=model).run()) == MLP_LINES


def test_a_watched_line_comes_before_anomaly_modes():
    model, x, y = mlp_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.set_detect_anomaly(True), record_forward(model):
            total = mlp_forward(model, x, y)
    assert "traceback_" in total.grad_fn.metadata and line_of(total.grad_fn) == line_marked("total")


def test_unrolled_cells_carry_the_line_that_called_the_lstm():
    case = make_lstm()
    with record_forward(case.model):
        loss = case.loss()
    fused = made_by(record_torch(loss, model=case.model).run())
    lstm_line = fused["MkldnnRnnLayerBackward0"]
    trace = record_torch(loss, model=case.model, unroll=True).run()
    cells = [n for n in trace.nodes if n.kind == "op" and "step 1" in " ".join(n.scope)]
    assert cells and {n.source for n in cells} == set(lstm_line)
    assert "out, _ = self.lstm(self.embedding(tokens))" in lstm_line[0][2]
    # L = Σ ⟨output, ḡ⟩ stands in for the head and the loss: no line of the learner's made it
    standing_in = [n for n in trace.nodes if n.kind == "op" and "the gradient the fused node received" in n.scope]
    assert standing_in and all(n.source is None for n in standing_in)


def test_the_command_lines_watch_steps_aside_for_the_scripts_own_modes():
    class Own(torch.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))  # own mode
    x = torch.ones(2, requires_grad=True)
    watch, own = LineWatch(), Own()
    watch.start()
    own.__enter__()
    y = (x * 3).sum()
    watch.stop()   # taken off from under the script's own mode, which stays
    assert torch._C._len_torch_function_stack() == 1 and torch._C._get_function_stack_at(0) is own
    z = (x * 3).sum()
    own.__exit__(None, None, None)
    assert torch._C._len_torch_function_stack() == 0
    # the innermost frame outside torch and gradviz that made y: the script's own mode, which called it
    assert line_of(y.grad_fn) == line_marked("own mode") and line_of(z.grad_fn) is None


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g


class Squares(nn.Module):
    def forward(self, x):
        return Square.apply(x)


def test_a_custom_functions_node_gets_a_line_only_where_one_was_seen_making_it():
    x = torch.ones(3, requires_grad=True)
    with record_forward():
        y = Square.apply(x)
        total = y.sum()  # sum
    # apply runs no torch call a mode sees: no line, never the line of the call that used it next
    assert line_of(y.grad_fn) is None and line_of(total.grad_fn) == line_marked("sum")
    model = Squares()
    with record_forward(model):
        y = model(x)  # module call
    assert line_of(y.grad_fn) == line_marked("module call")   # the module's hook saw it made there


COMPILED = """
import torch, torch.nn as nn, torch.nn.functional as F
model = torch.compile(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)), backend="eager")
for step in range(2):
    loss = F.cross_entropy(model(torch.randn(5, 4)), torch.tensor([0, 1, 2, 0, 1]))
    loss.backward()
"""


def test_a_compiled_model_under_the_command_line_gets_the_line_calling_it(tmp_path):
    """torch.compile runs the model as code torch.fx generates (`<eval_with_key>.N`) and traces the
    watch's own calls: the nodes get the learner's line that called the model, and dynamo says
    nothing of the watch (it warned of every call it could not trace)."""
    script = tmp_path / "train.py"
    script.write_text(COMPILED)
    done = subprocess.run([sys.executable, "-m", "gradviz", "animate", str(script), "--call", "2", "-o",
                           str(tmp_path / "out.html")], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(Path(gradviz.__file__).parents[1])})
    assert done.returncode == 0, done.stderr
    assert "Dynamo" not in done.stderr and "lines.py" not in done.stderr, done.stderr
    page = (tmp_path / "out.html").read_text()
    assert "eval_with_key" not in page and 'gv-file">train.py' in page


def test_a_leaf_gets_the_line_that_made_it_require_grad():
    watch = LineWatch()
    watch.start()
    try:
        w = torch.zeros(3, requires_grad=True)  # made
        b = torch.ones(3)
        b.requires_grad_()  # asked
        layer = nn.Linear(3, 1)  # layer
        before = torch.ones(3)
        out = layer(w * b + before).sum()
    finally:
        watch.stop()
    loose = torch.ones(3, requires_grad=True)   # made while no watch was on: no line is made up
    trace = trace_from_torch(out + loose.sum(), params={"w": w, "b": b, "loose": loose, **dict(layer.named_parameters())})
    leaves = {n.name: n.source for n in trace.nodes if n.kind == "leaf"}
    assert leaves["w"] == line_marked("made") and leaves["b"] == line_marked("asked")
    assert leaves["weight"] == leaves["bias"] == line_marked("layer") and leaves["loose"] is None
    layer.weight.data.zero_()   # a later write keeps the line of the making
    assert lines.leaf_line(layer.weight) == line_marked("layer")
    del w
    assert not any(ref() is None for ref, _ in lines._LEAF_LINES.values())   # a leaf gone takes its line along
