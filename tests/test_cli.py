"""The `gradviz` command: render a script's tensor to a file, and the demo of the tutorials' examples."""
from __future__ import annotations

import json
import os
import pathlib
import runpy
import shutil
import subprocess
import sys
import textwrap

import pytest
from tests.render.test_render import dot_edges, dot_nodes, fill, svg_groups, svg_text, text, titled

from gradviz import cli
from gradviz.examples import EXAMPLES
from gradviz.player import animate, codeview
from gradviz.render import backends

SCRIPT = textwrap.dedent("""
    import gradviz as torch
    torch.manual_seed(0)
    w = torch.randn(3, requires_grad=True)
    b = torch.tensor(0.5, requires_grad=True)
    x = torch.ones(2, 3)
    loss = ((x * w).sum(1) + b).pow(2).mean()
    plain = torch.ones(2)
""")


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "model.py"
    path.write_text(SCRIPT)
    return path


def test_render_writes_an_svg_named_from_the_script(script, tmp_path, capsys):
    out = tmp_path / "graph.svg"
    assert cli.main(["render", str(script), "--var", "loss", "-o", str(out)]) == 0
    svg = out.read_text()
    groups = svg_groups(svg)
    # w, b and their AccumulateGrads; Mul, Sum, Add, Pow, Mean; the output loss
    assert sum(1 for c in groups.values() if c.startswith("node")) == 10
    words = svg_text(svg).splitlines()
    assert "w" in words and "b" in words and "loss" in words       # the script's variable names
    assert "MulBackward0" in words and "MeanBackward0" in words
    assert "wrote" in capsys.readouterr().out


def test_render_options_reach_the_diagram(script, tmp_path):
    out = tmp_path / "graph.dot"
    assert cli.main(["render", str(script), "--var", "loss", "-o", str(out), "--lr", "--show-saved"]) == 0
    source = out.read_text()
    assert "rankdir=LR" in source
    nodes = dot_nodes(source)
    saved = [n for n in nodes if fill(nodes, n) == "orange"]
    assert saved and all(text(nodes, n).split("\n")[0] in ("self", "other", "result") for n in saved)
    assert len(titled(nodes, "PowBackward0")) == 1 and len(dot_edges(source)) > len(nodes) - 2


def test_render_names_the_tensors_it_could_draw(script, tmp_path, capsys):
    assert cli.main(["render", str(script), "--var", "missing", "-o", str(tmp_path / "g.svg")]) == 2
    err = capsys.readouterr().err
    assert "defines no tensor named 'missing'" in err and "b, loss, w" in err
    assert cli.main(["render", str(script), "--var", "plain", "-o", str(tmp_path / "g.svg")]) == 2
    assert "does not require grad" in capsys.readouterr().err
    assert not (tmp_path / "g.svg").exists()
    assert cli.main(["render", str(tmp_path / "nope.py")]) == 2


def test_render_png_without_system_dot_fails_helpfully(script, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(backends.ENV_VAR, "wasm")
    assert cli.main(["render", str(script), "-o", str(tmp_path / "g.png")]) == 1
    assert "apt-get install graphviz" in capsys.readouterr().err
    assert not (tmp_path / "g.png").exists()


def test_demo_renders_every_example(tmp_path):
    out = tmp_path / "demo"
    assert cli.main(["demo", "-o", str(out)]) == 0
    for name in EXAMPLES:
        svg = (out / f"{name}.svg").read_text()
        assert "node leaf" in svg_groups(svg).values()
        if shutil.which("dot"):
            assert (out / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
    words = svg_text((out / "pow.svg").read_text()).splitlines()
    assert "[3.0, 12.0, 27.0]" in words            # t.grad = 3t², recorded by the demo's backward
    doubling = svg_text((out / "doubling.svg").read_text())
    assert doubling.count("MulBackward0") >= 8
    player = (out / "mm-backward.html").read_text()
    assert "MmBackward0" in player and 'id="n0"' in player   # the step-by-step player, one file


def test_animate_writes_a_player_for_a_scripts_tensor(script, tmp_path):
    out = tmp_path / "loss.html"
    assert cli.main(["animate", str(script), "-o", str(out)]) == 0
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<svg" in page and "http" not in page.split("<svg")[0]
    assert cli.main(["animate", str(script), "--var", "missing", "-o", str(out)]) == 2


def test_demo_with_wasm_writes_svg_and_player_but_no_png(tmp_path, monkeypatch):
    monkeypatch.setenv(backends.ENV_VAR, "wasm")
    assert cli.main(["demo", "-o", str(tmp_path), "--only", "mm"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mm-backward.html", "mm.svg"]
    assert "MmBackward0" in svg_text((tmp_path / "mm.svg").read_text()).splitlines()
    assert cli.main(["demo", "-o", str(tmp_path), "--only", "nonsense"]) == 2


@pytest.mark.parametrize("module", ["gradviz", "gradviz.cli"])
def test_the_module_runs_as_a_command(script, tmp_path, module):
    out = tmp_path / "g.svg"
    done = subprocess.run([sys.executable, "-m", module, "render", str(script), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert svg_groups(out.read_text())["n0"] == "node leaf"


# -- real scripts: the backward they run, whatever their shape --------------------------------------
TORCH_MODEL = """
import torch
from torch import nn
import torch.nn.functional as F

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))
"""

GRADVIZ_MODEL = TORCH_MODEL.replace("import torch\n", "import gradviz as torch\n").replace(
    "from torch import nn", "from gradviz import nn").replace("import torch.nn.functional as F", "F = torch.nn.functional")

MODULE_LEVEL = """
torch.manual_seed(0)
model = Net()
x, y = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])
loss = F.cross_entropy(model(x), y)
print("loss", round(loss.item(), 4))
loss.backward()
print("after backward")
"""

SHAPES = {
    "module level": MODULE_LEVEL,
    # the same lines as a function's, run from the __main__ guard
    "main()": "\ndef main():" + textwrap.indent(MODULE_LEVEL, "    ") + '\nif __name__ == "__main__":\n    main()\n',
    "training loop": """
def train(steps):
    torch.manual_seed(0)
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])
    for step in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        print("step", step, "loss", round(loss.item(), 4))
        loss.backward()
        opt.step()
    print("trained")

if __name__ == "__main__":
    train(3)
""",
}


@pytest.mark.torch
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("lib", ["torch", "gradviz"])
def test_render_records_the_backward_a_script_runs(tmp_path, capsys, shape, lib):
    if lib == "torch":
        pytest.importorskip("torch")
    path = tmp_path / "train.py"
    path.write_text((TORCH_MODEL if lib == "torch" else GRADVIZ_MODEL) + SHAPES[shape])
    out = tmp_path / "g.dot"
    assert cli.main(["render", str(path), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "loss" in printed.splitlines()[0]                              # the script's own output, kept
    assert "after backward" not in printed and "trained" not in printed   # stopped once recorded
    assert "recorded backward call 1 (backward() at train.py:" in printed
    source = out.read_text()
    for name in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias", "loss", "NllLossBackward0"):
        assert name in source, name                                        # parameter names found without help
    assert "grad" in source                                                # the recorded gradients are drawn


@pytest.mark.torch
@pytest.mark.parametrize("lib", ["torch", "gradviz"])
def test_the_nth_backward_of_a_training_loop_and_finish(tmp_path, capsys, lib):
    if lib == "torch":
        pytest.importorskip("torch")
    path = tmp_path / "train.py"
    path.write_text((TORCH_MODEL if lib == "torch" else GRADVIZ_MODEL) + SHAPES["training loop"])
    out = tmp_path / "loss.html"
    assert cli.main(["animate", str(path), "--call", "2", "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "step 1 loss" in printed and "step 2" not in printed and "recorded backward call 2" in printed
    assert "<svg" in out.read_text()
    assert cli.main(["render", str(path), "--call", "3", "--finish", "-o", str(tmp_path / "g.svg")]) == 0
    printed = capsys.readouterr().out
    assert "trained" in printed and "recorded backward call 3" in printed
    assert cli.main(["render", str(path), "--call", "4", "-o", str(tmp_path / "g.svg")]) == 2
    err = capsys.readouterr().err
    assert "--call 4 asks for the 4th backward" in err and "it started 3" in err and "choose --call 1 to 3" in err


@pytest.mark.torch
@pytest.mark.parametrize("shape, argv", [("main()", []), ("training loop", ["--call", "2", "--finish"])])
def test_a_torch_scripts_nodes_carry_the_lines_that_made_them(tmp_path, capsys, monkeypatch, shape, argv):
    torch = pytest.importorskip("torch")
    path = tmp_path / "train.py"
    path.write_text(TORCH_MODEL + SHAPES[shape].replace('print("trained")', 'print("trained", torch._C._len_torch_function_stack())'))
    drawn = []
    monkeypatch.setattr(cli, "animate", lambda trace, **kw: drawn.append(trace) or animate(trace, **kw))
    assert cli.main(["animate", str(path), "-o", str(tmp_path / "loss.html"), *argv]) == 0
    script = path.read_text().splitlines()
    made = {n.name: n.source for n in drawn[0].nodes if n.kind == "op"}
    assert all(file == str(path) and text == script[line - 1].strip() for file, line, text in made.values())
    assert {name: text for name, (_, _, text) in made.items()} == {
        "TBackward0": "return self.fc2(torch.relu(self.fc1(x)))", "AddmmBackward0": "return self.fc2(torch.relu(self.fc1(x)))",
        "ReluBackward0": "return self.fc2(torch.relu(self.fc1(x)))", "LogSoftmaxBackward0": "loss = F.cross_entropy(model(x), y)",
        "NllLossBackward0": "loss = F.cross_entropy(model(x), y)"}
    # a parameter's line is the module that made it (its initialisation wrote it in place there)
    leaves = {n.name: n.source[2] for n in drawn[0].nodes if n.kind == "leaf"}
    assert leaves == {"fc1.weight": "self.fc1 = nn.Linear(4, 8)", "fc1.bias": "self.fc1 = nn.Linear(4, 8)",
                      "fc2.weight": "self.fc2 = nn.Linear(8, 3)", "fc2.bias": "self.fc2 = nn.Linear(8, 3)"}
    assert f'"lines":{json.dumps(codeview.line_keys(drawn[0]), separators=(",", ":"))}' in (tmp_path / "loss.html").read_text()
    assert torch._C._len_torch_function_stack() == 0            # nothing left watching torch
    if argv:   # --finish: the script ran on to its end, its forwards after the recorded one unwatched
        assert "trained 0" in capsys.readouterr().out


@pytest.mark.torch
def test_a_torch_script_that_fails_midway_leaves_nothing_watching(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    path = tmp_path / "fails.py"
    path.write_text("import torch\ndef main():\n    w = torch.ones(2, requires_grad=True)\n"
                    "    return (w * 2) @ torch.ones(3)\nmain()\n")
    assert cli.main(["render", str(path)]) == 1
    assert 'fails.py", line 4, in main' in capsys.readouterr().err
    assert torch._C._len_torch_function_stack() == 0


def test_a_script_that_never_calls_backward_is_told_what_to_do(tmp_path, capsys):
    path = tmp_path / "forward.py"
    path.write_text("import gradviz as torch\nx = torch.ones(2, requires_grad=True)\ny = (x * 2).sum()\n")
    assert cli.main(["render", str(path), "-o", str(tmp_path / "g.svg")]) == 2
    err = capsys.readouterr().err
    assert "never started a backward" in err and "Call loss.backward() in the script" in err
    assert "--var NAME" in err and "(tensors that require grad: x, y)" in err
    assert cli.main(["render", str(path), "--var", "y", "-o", str(tmp_path / "g.svg")]) == 0
    assert "no backward() call was seen" in capsys.readouterr().err   # the globals' tensor is drawn, saying so


def test_a_syntax_error_is_pythons_message(tmp_path, capsys):
    path = tmp_path / "broken.py"
    path.write_text("import gradviz as torch\ndef main(:\n    pass\n")
    assert cli.main(["animate", str(path)]) == 1
    err = capsys.readouterr().err
    assert "SyntaxError" in err and "broken.py" in err and "line 2" in err
    assert "gradviz/cli" not in err and "runpy" not in err


def test_the_scripts_own_error_shows_the_scripts_frames(tmp_path, capsys):
    path = tmp_path / "fails.py"
    path.write_text("import gradviz as torch\ndef main():\n    return torch.ones(2) @ torch.ones(3)\nmain()\n")
    assert cli.main(["render", str(path)]) == 1
    err = capsys.readouterr().err
    assert 'fails.py", line 3, in main' in err and "RuntimeError" in err and "runpy" not in err


LSTM_SCRIPT = """
import torch
from torch import nn

class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)
        self.lstm = nn.LSTM(4, 5)
        self.head = nn.Linear(5, 3)

    def forward(self, tokens):
        out, _ = self.lstm(self.embedding(tokens))
        return self.head(out[-1])

def main():
    torch.manual_seed(0)
    model = Classifier()
    tokens, labels = torch.randint(0, 10, (3, 2)), torch.tensor([0, 2])
    loss = nn.functional.cross_entropy(model(tokens), labels)
    loss.backward()

if __name__ == "__main__":
    main()
"""


@pytest.mark.torch
def test_animate_unroll_records_the_lstm_a_script_runs_cell_by_cell(tmp_path, capsys):
    pytest.importorskip("torch")
    path = tmp_path / "rnn.py"
    path.write_text(LSTM_SCRIPT)
    fused, unrolled = tmp_path / "fused.html", tmp_path / "unrolled.html"
    assert cli.main(["animate", str(path), "-o", str(fused)]) == 0
    assert cli.main(["animate", str(path), "--unroll", "-o", str(unrolled)]) == 0
    # the backward the unrolling runs itself is no call of the script's
    assert capsys.readouterr().out.count("recorded backward call 1 (backward() at rnn.py:") == 2
    assert "MkldnnRnnLayerBackward0" in fused.read_text() and "SigmoidBackward0" not in fused.read_text()
    page = unrolled.read_text()
    assert "MkldnnRnnLayerBackward0" not in page and "SigmoidBackward0" in page and "step 3" in page
    plain = tmp_path / "plain.py"
    plain.write_text(TORCH_MODEL + MODULE_LEVEL)
    capsys.readouterr()
    assert cli.main(["animate", str(plain), "--unroll", "-o", str(tmp_path / "p.html")]) == 2
    err = capsys.readouterr().err
    assert "gradviz animate: unroll=True: the graph has no fused recurrent node" in err and "Traceback" not in err


INPUTS_SCRIPT = """
torch.manual_seed(0)
model = Net()
x = torch.randn(5, 4, requires_grad=True)
out = model(x).sum()
(gx,) = torch.autograd.grad(out, x, retain_graph=True)
print("gx", tuple(gx.shape))
out.backward(inputs=[model.fc2.weight])
print("done")
"""


@pytest.mark.torch
@pytest.mark.parametrize("lib", ["torch", "gradviz"])
@pytest.mark.parametrize("call, ran", [
    (1, ["AddmmBackward0", "AddmmBackward0", "ReluBackward0", "SumBackward0"]),   # x's AccumulateGrad never runs
    (2, ["AccumulateGrad", "AddmmBackward0", "SumBackward0", "TBackward0"]),        # fc2.weight's alone runs
])
def test_autograd_grad_and_backward_inputs_record_the_nodes_they_run(tmp_path, lib, call, ran):
    if lib == "torch":
        pytest.importorskip("torch")
    from gradviz.cli.script import BackwardCatcher, run_script
    path = tmp_path / "partial.py"
    path.write_text((TORCH_MODEL if lib == "torch" else GRADVIZ_MODEL) + INPUTS_SCRIPT)
    catcher = BackwardCatcher(call)
    run_script(path, catcher)
    trace = catcher.caught.trace
    assert sorted(trace.node(s.node).name for s in trace.steps) == ran
    written = [trace.node(a.node).name for s in trace.steps for a in s.accumulations]
    assert written == ([] if call == 1 else ["fc2.weight"])


# -- torch caught however it is imported: the script, a module it imports, importlib ---------------
# A fresh Python runs the command (torch not imported yet, as under `gradviz render`) and reports
# the Trace it drew, and what it left of sys.meta_path and torch afterwards.
DRIVER = """
import json, sys
from gradviz import cli
meta_path, drawn = list(sys.meta_path), []
def spy(view):
    def drawing(trace, *args, **kwargs):
        drawn.append(trace)
        return view(trace, *args, **kwargs)
    return drawing
cli.draw, cli.animate = spy(cli.draw), spy(cli.animate)
report = {"rc": cli.main(sys.argv[1:]), "meta_path": sys.meta_path == meta_path, "torch": "torch" in sys.modules}
if report["torch"]:
    import torch
    report["modules"] = [f.__module__ for f in (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad)]
    report["loader"] = [type(torch.__loader__).__name__, torch.__spec__.loader is torch.__loader__]
    report["modes"] = torch._C._len_torch_function_stack()
if drawn:
    trace = drawn[0]
    report["loss"] = float(trace.node(trace.roots[0]).value.values)
    report["names"] = [n.name for n in trace.nodes]
    report["lines"] = sorted({n.source[2] for n in trace.nodes if n.source is not None})
print("REPORT " + json.dumps(report))
"""

REPO = str(pathlib.Path(__file__).resolve().parent.parent)


def run_fresh(tmp_path, *argv) -> tuple[dict, str, str]:
    """`gradviz ARGV` in a fresh Python: (its report, the script's own output, stderr)."""
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(driver), *argv], capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    printed, _, report = done.stdout.rpartition("REPORT ")
    assert report, done.stderr
    return json.loads(report), printed, done.stderr


def assert_left_as_found(report):
    assert report["meta_path"]                                   # the import hook is gone
    assert report["modules"] == ["torch._tensor", "torch.autograd", "torch.autograd"]   # torch's own functions
    assert report["loader"] == ["SourceFileLoader", True]        # torch keeps its own loader
    assert report["modes"] == 0                                  # the watch over its forward is gone


@pytest.mark.torch
def test_torch_imported_beside_another_module_is_caught(tmp_path):
    pytest.importorskip("torch")
    path = tmp_path / "train.py"
    imports = "import torch\nfrom torch import nn\nimport torch.nn.functional as F\n"
    assert imports in TORCH_MODEL
    path.write_text(TORCH_MODEL.replace(imports, "import sys, torch\nnn, F = torch.nn, torch.nn.functional\n")
                    + MODULE_LEVEL)
    report, printed, err = run_fresh(tmp_path, "render", str(path), "-o", str(tmp_path / "g.dot"))
    assert report["rc"] == 0, err
    assert "recorded backward call 1 (backward() at train.py:" in printed and "after backward" not in printed
    assert printed.startswith("loss ") and report["loss"] == pytest.approx(float(printed.split()[1]), abs=1e-4)
    assert {"fc1.weight", "fc2.bias", "NllLossBackward0"} <= set(report["names"])
    assert report["lines"] == ["loss = F.cross_entropy(model(x), y)", "return self.fc2(torch.relu(self.fc1(x)))",
                               "self.fc1 = nn.Linear(4, 8)", "self.fc2 = nn.Linear(8, 3)"]   # the last two: the parameters'
    assert_left_as_found(report)


HELPER = """
import torch
from torch import nn

def train(steps, losses=None):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    for step in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        print("step", step)
        if losses is not None:
            losses.append(loss.item())
        loss.backward()
        opt.step()
"""


@pytest.mark.torch
def test_torch_used_only_by_a_module_the_script_imports(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    (tmp_path / "helper_model.py").write_text(HELPER)
    path = tmp_path / "train.py"
    path.write_text("from helper_model import train\n\nif __name__ == '__main__':\n    train(3)\n")
    report, printed, err = run_fresh(tmp_path, "render", str(path), "--call", "2", "-o", str(tmp_path / "g.dot"))
    assert report["rc"] == 0, err
    assert "step 1" in printed and "step 2" not in printed
    assert "recorded backward call 2 (backward() at helper_model.py:" in printed
    losses = []   # the same loop, run by torch here
    runpy.run_path(str(tmp_path / "helper_model.py"))["train"](3, losses)
    assert losses[0] != losses[1] and report["loss"] == losses[1]   # the second iteration's loss, not the first's
    assert {"weight", "bias", "AddmmBackward0", "MeanBackward0", "loss"} <= set(report["names"])
    assert_left_as_found(report)
    # more calls than the loop makes: said, with how many it made (torch imported here already)
    capsys.readouterr()
    try:
        assert cli.main(["render", str(path), "--call", "5", "-o", str(tmp_path / "h.dot")]) == 2
    finally:
        sys.modules.pop("helper_model", None)
    out, err = capsys.readouterr()
    assert "step 2" in out and not (tmp_path / "h.dot").exists()
    assert "--call 5 asks for the 5th backward" in err and "it started 3" in err and "choose --call 1 to 3" in err
    assert torch.Tensor.backward.__module__ == "torch._tensor"


@pytest.mark.torch
def test_torch_imported_by_importlib_inside_a_function(tmp_path):
    pytest.importorskip("torch")
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent("""
        import importlib

        def main():
            torch = importlib.import_module("torch")
            torch.manual_seed(0)
            w = torch.randn(3, requires_grad=True)
            grad_of, = torch.autograd.grad((w * w).sum(), w)
            print("grad", grad_of.tolist())

        if __name__ == "__main__":
            main()
    """))
    report, printed, err = run_fresh(tmp_path, "animate", str(path), "-o", str(tmp_path / "g.html"))
    assert report["rc"] == 0, err
    assert "recorded backward call 1 (autograd.grad() at train.py:8)" in printed and "grad [" not in printed
    assert "SumBackward0" in report["names"] and "MulBackward0" in report["names"]
    assert (tmp_path / "g.html").read_text().startswith("<!DOCTYPE html>")
    assert_left_as_found(report)


def test_a_gradviz_script_runs_without_torch(script, tmp_path):
    report, printed, err = run_fresh(tmp_path, "render", str(script), "-o", str(tmp_path / "g.svg"))
    assert report["rc"] == 0, err
    assert not report["torch"] and report["meta_path"]       # torch never imported for a gradviz script
    assert "no backward() call was seen" in err and "'loss' (--var loss)" in err


@pytest.mark.torch
def test_a_torch_script_that_never_calls_backward_says_what_it_draws(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    path = tmp_path / "forward.py"
    path.write_text("import torch\nw = torch.ones(2, requires_grad=True)\nloss = (w * 3).sum()\nprint('forward only')\n")
    originals = torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad
    meta_path = list(sys.meta_path)
    assert cli.main(["render", str(path), "-o", str(tmp_path / "g.dot")]) == 0
    out, err = capsys.readouterr()
    assert "forward only" in out and "wrote" in out
    assert f"no backward() call was seen while {path} ran" in err and "'loss' (--var loss)" in err
    assert "--call N" in err and "call loss.backward() in it" in err
    assert "MulBackward0" in (tmp_path / "g.dot").read_text()
    assert cli.main(["render", str(path), "--call", "2", "-o", str(tmp_path / "h.dot")]) == 2
    err = capsys.readouterr().err
    assert "--call 2 asks for the second backward" in err and "it started none" in err
    assert not (tmp_path / "h.dot").exists()
    assert (torch.Tensor.backward, torch.autograd.backward, torch.autograd.grad) == originals
    assert sys.meta_path == meta_path
