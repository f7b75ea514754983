"""The tutorial notebooks run top to bottom in a fresh kernel and show what they promise.

Each notebook in notebooks/ is executed once with nbclient, in a temporary working
directory, by a kernel that is this interpreter (so it imports the gradviz of this
checkout) registered under a kernelspec in a temporary Jupyter data directory.
Nothing is written outside tmp dirs. The notebooks are stored without outputs.
"""
from __future__ import annotations

import ast
import json
import os
import re
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from gradviz.render import latex

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
SVG = "image/svg+xml"
HTML = "text/html"
WIDGET = "application/vnd.jupyter.widget-view+json"


# -- a kernel that is this interpreter, and a Jupyter that writes only to tmp ---------------
@pytest.fixture(scope="module")
def jupyter_env(tmp_path_factory):
    root = tmp_path_factory.mktemp("jupyter")
    data_dir = root / "data"
    spec_dir = data_dir / "kernels" / "python3"
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (gradviz tests)",
        "language": "python",
        "metadata": {"debugger": False},
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    env = {
        "JUPYTER_DATA_DIR": str(data_dir),
        "JUPYTER_PATH": str(data_dir),
        "JUPYTER_CONFIG_DIR": str(root / "config"),
        "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
        "IPYTHONDIR": str(root / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        mp.setenv("HOME", str(root / "home"))
        (root / "home").mkdir()
        yield root


def execute(path: Path, workdir: Path):
    """Run every cell of the notebook at `path` in a fresh kernel, with `workdir` as its cwd,
    with a probe after each exercise's solution (see `with_probes`)."""
    nb = with_probes(nbformat.read(path, as_version=4))
    client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                     resources={"metadata": {"path": str(workdir)}})
    client.execute(cwd=str(workdir))
    return nb


@pytest.fixture(scope="module")
def run_notebook(jupyter_env, tmp_path_factory):
    """Run the notebooks one after another in the background (each in its own kernel); a call
    waits for one to finish and returns the executed copy, or raises the cell error it stopped
    at. One kernel at a time: several kernels competing for two cores made runs flaky."""
    pool = ThreadPoolExecutor(max_workers=1)
    futures = {path.name: pool.submit(execute, path, tmp_path_factory.mktemp(path.stem)) for path in PATHS}

    def run(path: Path):
        return futures[path.name].result()
    yield run
    pool.shutdown(wait=True, cancel_futures=True)


# -- exercises: tagged cells, and a probe that tries each checker on a wrong answer ------------
def tags(cell) -> list:
    return cell.get("metadata", {}).get("tags", [])


def exercise_pairs(nb) -> list:
    """(exercise cell, the cell right after it) for every cell tagged `exercise`."""
    return [(cell, nb.cells[i + 1] if i + 1 < len(nb.cells) else None)
            for i, cell in enumerate(nb.cells) if "exercise" in tags(cell)]


def check_call(cell) -> ast.Call:
    """The check a cell ends with: its last statement, a call of a gradviz.exercises checker."""
    last = ast.parse(cell.source).body[-1]
    if not (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
            and isinstance(last.value.func, ast.Name) and last.value.func.id.startswith("check")):
        raise AssertionError(f"an exercise cell must end with a check(...) call:\n{cell.source}")
    return last.value


# Defined in the kernel before the first cell: each answer made six ways. `_gradviz_wrong` moves one
# number (or changes a string or choice, a formula's result, the first formula of a dict of them);
# `_gradviz_variant` makes the others: a wrong shape, the right numbers as a list, None, and a formula
# that asks autograd instead of computing by hand.
WRONG = """
def _gradviz_wrong(answer):
    import numpy as _np
    if isinstance(answer, dict):
        first = next(iter(answer))
        return {**answer, first: _gradviz_wrong(answer[first])}
    if isinstance(answer, (list, tuple)) and answer and hasattr(answer[0], "shape"):
        return [_gradviz_wrong(answer[0]), *answer[1:]]   # several gradients: the first one moved
    if callable(answer):
        return lambda *args, _f=answer: _gradviz_wrong(_f(*args))
    if isinstance(answer, str):
        return answer + "?"
    if isinstance(answer, bool):
        return not answer
    moved = _np.array(answer.detach().cpu().numpy() if hasattr(answer, "detach") else answer, dtype=float)
    moved.flat[0] += 1 + abs(moved.flat[0])
    return moved


def _gradviz_kind(answer):
    if isinstance(answer, dict):
        return _gradviz_kind(next(iter(answer.values())))
    return "function" if callable(answer) else "text" if isinstance(answer, (str, bool)) else "number"


def _gradviz_variant(answer, how):
    import numpy as _np
    if isinstance(answer, dict):
        first = next(iter(answer))
        return {**answer, first: _gradviz_variant(answer[first], how)}
    if how == "autograd":
        import gradviz as _gv

        def _asks_autograd(*args):
            found = [a for a in args if isinstance(a, _gv.Tensor)]
            t = (found[0] if found else _gv.ones(1)).detach().requires_grad_()
            return _gv.autograd.grad((t * t).sum(), t)[0]
        return _asks_autograd
    if isinstance(answer, (list, tuple)) and answer and hasattr(answer[0], "shape"):
        return [_gradviz_variant(answer[0], how), *answer[1:]]
    if callable(answer):
        return lambda *args, _f=answer: _gradviz_variant(_f(*args), how)
    if how == "none":
        return None
    plain = _np.array(answer.detach().cpu().numpy() if hasattr(answer, "detach") else answer, dtype=float)
    if how == "shape":
        return _np.concatenate([plain.ravel(), [0.0]])
    return plain.tolist() if how == "list" else plain


def _gradviz_order_variant(answer, how):
    # an order of nodes: reversed, one node short, a tuple, None, or asking autograd
    if how == "wrong":
        return lambda root: list(answer(root))[::-1]
    if how == "shape":
        return lambda root: list(answer(root))[:-1]
    if how == "list":
        return lambda root: tuple(answer(root))
    return _gradviz_variant(answer, how)


def _gradviz_probe(k, checker, check, answer):
    kind = _gradviz_kind(answer)
    hows = ["right", "wrong"] + (["shape", "list", "ndarray"] if kind != "text" else []) + ["none"] + \\
        (["autograd"] if kind == "function" else [])
    if checker == "check_order":
        hows.remove("ndarray")
    for how in hows:
        if how == "right":
            given = answer
        elif checker == "check_order":
            given = _gradviz_order_variant(answer, how)
        else:
            given = _gradviz_wrong(answer) if how == "wrong" else _gradviz_variant(answer, how)
        verdict = check(given)
        print(f"exercise-probe {k} {how}: {bool(verdict)} :: " + " ".join(str(verdict).split())[:400])
"""
PROBE = re.compile(r"exercise-probe (\d+) (\w+): (True|False) :: (.*)")


def with_probes(nb):
    """The notebook with, after each solution cell, a cell that runs the solution's check again on the
    right answer and on the other five ways of answering, printing each verdict and its message
    (checking changes no state)."""
    cells, k = [nbformat.v4.new_code_cell(WRONG)], 0
    for cell in nb.cells:
        cells.append(cell)
        if "solution" in tags(cell):
            call = check_call(cell)
            given = ast.Call(call.func, [ast.Name("_given")] + call.args[1:], call.keywords)
            cells.append(nbformat.v4.new_code_cell(
                f"_gradviz_probe({k}, {call.func.id!r}, lambda _given: {ast.unparse(given)}, {ast.unparse(call.args[0])})"))
            k += 1
    for cell in cells:
        cell.pop("id", None)
    nb.cells = cells
    nb.nbformat_minor = 4     # cells without ids
    return nb


def probes(nb) -> dict:
    """exercise number -> {way of answering: (verdict, message)}."""
    found: dict = {}
    for k, how, verdict, message in PROBE.findall(all_text(nb)):
        found.setdefault(int(k), {})[how] = (verdict == "True", message)
    return found


# what each way of answering must get, by checker: (verdict, words its message must hold)
EXPECTED_WAYS = {
    "right": (True, "✓"),
    "wrong": (False, "✗"),
    "shape": (False, "has shape"),
    "list": (True, "✓"),
    "ndarray": (True, "✓"),
    "none": (False, "your answer is None: did your function return a value?"),
    "autograd": (False, "this exercise asks you to compute it by hand"),
}


# -- reading outputs --------------------------------------------------------------------------
def code_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code"]


def text_of(output) -> str:
    if output.output_type == "stream":
        return output.text
    if output.output_type in ("execute_result", "display_data"):
        return output.get("data", {}).get("text/plain", "")
    return ""


def all_text(nb) -> str:
    """Every cell's printed text; a stream a kernel sent in several chunks is joined back first."""
    cells = []
    for c in code_cells(nb):
        parts = []
        for o in c.outputs:
            if o.output_type == "stream" and parts and parts[-1][0] == "stream":
                parts[-1] = ("stream", parts[-1][1] + o.text)
            else:
                parts.append((o.output_type, text_of(o)))
        cells.append("\n".join(text for _, text in parts))
    return "\n".join(cells)


def cell_text(cell) -> str:
    return all_text(nbformat.from_dict({"cells": [cell]}))


def mime_outputs(nb, mime: str) -> list:
    return [o["data"][mime] for c in code_cells(nb) for o in c.outputs
            if o.output_type in ("execute_result", "display_data") and mime in o.get("data", {})]


def last_line(cell) -> str:
    lines = [ln for ln in cell.source.strip().splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return lines[-1].strip() if lines else ""


def cells_ending_with(nb, pattern: str) -> list:
    return [c for c in code_cells(nb) if re.match(pattern, last_line(c))]


def has_mime(cell, mime: str) -> bool:
    return any(mime in o.get("data", {}) for o in cell.outputs if o.output_type in ("execute_result", "display_data"))


# Warnings a notebook shows on purpose (to explain them), by notebook.
EXPECTED_STDERR = {
    "01_tensors_and_grad_fn": ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed",),
}


# -- every notebook ---------------------------------------------------------------------------
def test_there_are_tutorials():
    assert len(PATHS) >= 12, f"expected the course's notebooks in {NOTEBOOKS}"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_stored_clean(path):
    """Valid nbformat v4, saved without outputs or execution counts (small, reviewable diffs)."""
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.nbformat == 4
    assert nb.cells[0].cell_type == "markdown" and nb.cells[0].source.startswith("# "), "open with a title"
    for cell in code_cells(nb):
        assert cell.outputs == [] and cell.execution_count is None, f"stored with outputs: {cell.source[:60]!r}"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_runs_top_to_bottom(path, run_notebook):
    nb = run_notebook(path)
    for cell in code_cells(nb):
        for out in cell.outputs:
            assert out.output_type != "error", f"{path.name}: {out.get('ename')}: {out.get('evalue')}"
            if out.output_type == "stream" and out.name == "stderr":
                expected = EXPECTED_STDERR.get(path.stem, ())
                assert any(e in out.text for e in expected), \
                    f"{path.name} wrote to stderr:\n{out.text}\nin cell:\n{cell.source}"
    # Every cell that ends by drawing shows an inline SVG diagram.
    for cell in cells_ending_with(nb, r"(torch|gradviz)\.(draw|make_dot)\("):
        assert has_mime(cell, SVG), f"{path.name}: no SVG from\n{cell.source}"
        svg = next(o["data"][SVG] for o in cell.outputs if SVG in o.get("data", {}))
        assert "<svg" in svg and "</svg>" in svg
    # Every cell that ends with an animation plays it inline.
    for cell in cells_ending_with(nb, r"(torch|gradviz)\.animate\("):
        assert has_mime(cell, HTML), f"{path.name}: no HTML player from\n{cell.source}"
    # The notebook wrote nothing next to itself.
    assert not list(NOTEBOOKS.glob("*.svg")) and not list(NOTEBOOKS.glob("*.html"))


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_exercises_are_tagged(path):
    """At least two exercises, each followed by its collapsed solution, both ending with the same
    check; the exercise leaves its answer as `...` for the learner."""
    nb = nbformat.read(path, as_version=4)
    pairs = exercise_pairs(nb)
    assert len(pairs) >= 2, f"{path.name}: {len(pairs)} exercise cells"
    for exercise, solution in pairs:
        assert exercise.cell_type == "code" and "..." in exercise.source, exercise.source
        assert solution is not None and solution.cell_type == "code" and "solution" in tags(solution), \
            f"{path.name}: no solution cell right after\n{exercise.source}"
        assert solution.metadata.get("jupyter", {}).get("source_hidden") is True, "solutions are collapsed"
        assert "..." not in solution.source
        assert ast.dump(check_call(exercise)) == ast.dump(check_call(solution)), \
            f"{path.name}: the exercise and its solution check different things\n{exercise.source}"
    solutions = [c for c in nb.cells if "solution" in tags(c)]
    assert len(solutions) == len(pairs), f"{path.name}: a solution cell without its exercise"


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_exercise_checkers_tell_wrong_from_right(path, run_notebook):
    """Run top to bottom: each exercise, left as `...`, says it has no answer yet; its solution is
    confirmed; and its checker, run again on a wrong answer, rejects it."""
    nb = run_notebook(path)
    for exercise, solution in exercise_pairs(nb):
        asked = cell_text(exercise)
        assert "✗" in asked and "no answer yet" in asked, f"{path.name}: {asked}"
        shown = cell_text(solution)
        assert "✓" in shown and "✗" not in shown, f"{path.name}: the solution is not confirmed\n{solution.source}"
    found = probes(nb)
    assert sorted(found) == list(range(len(exercise_pairs(nb))))
    for (_, solution), k in zip(exercise_pairs(nb), sorted(found)):
        checker = check_call(solution).func.id
        for how, (verdict, message) in found[k].items():
            want, words = EXPECTED_WAYS[how]
            if checker == "check_choice" and how == "none":
                want, words = False, "is not one of the choices"
            if checker == "check_order" and how == "shape":
                want, words = False, "is missing"
            assert verdict == want and words in message, \
                f"{path.name}, exercise {k + 1} answered {how}: {verdict} {message}"
        if checker == "check_function" or "autograd" in found[k]:   # a formula, written by hand
            assert "autograd" in found[k] and "shape" in found[k] and "none" in found[k], \
                f"{path.name}, exercise {k + 1}: a formula is answered the six ways"


# -- what each notebook must show -------------------------------------------------------------
def executed(run_notebook, stem: str):
    path = NOTEBOOKS / f"{stem}.ipynb"
    if not path.exists():
        pytest.fail(f"missing notebook {path.name}")
    return run_notebook(path)


def panel_text(player: str) -> str:
    """The words and numbers of every step panel of a saved player (its frames' HTML, tags removed)."""
    data = json.loads(re.search(r'<script type="application/json" class="gv-data">(.*?)</script>', player, re.S).group(1))
    from gradviz.player.pack import unpack     # the saved frames are packed: rebuild the panels
    return " ".join(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", f["h"])) for f in unpack(data["frames"]))


def player_data(player: str) -> dict:
    """The frames (panels unpacked, as the player's script rebuilds them) and code-line keys a saved player reads."""
    from gradviz.player.pack import unpack
    data = json.loads(re.search(r'<script type="application/json" class="gv-data">(.*?)</script>', player, re.S).group(1))
    return {**data, "frames": unpack(data["frames"])}


def code_lines(player: str) -> dict:
    """The code panel of a saved player: line key -> the line's text."""
    return {k: re.sub(r"<[^>]+>", "", t).strip() for k, t in
            re.findall(r'<span class="gv-line[^"]*" data-line="([^"]+)"><span class="gv-ln">\d+</span>(.*?)</span>',
                       player)}


def highlighted(player: str) -> list:
    """(frame title, the code line highlighted at that frame or None) for every frame."""
    data, lines = player_data(player), code_lines(player)
    return [(f["t"], lines.get(data["lines"].get(f["n"] or ""))) for f in data["frames"]]


def players(nb) -> list:
    return [h for h in mime_outputs(nb, HTML) if "gv-player" in h and "<svg" in h and "gv-next" in h]


def test_01_tensors_and_grad_fn(run_notebook):
    nb = executed(run_notebook, "01_tensors_and_grad_fn")
    text = all_text(nb)
    assert "tensor([ 0.,  3., 12., 27., 48.])" in text
    assert "grad_fn: <MulBackward0" in text
    assert re.search(r"is_leaf:\s*True", text) and re.search(r"is_leaf:\s*False", text)
    assert "x.grad = tensor(2.)" in text
    stderr = "".join(o.text for c in code_cells(nb) for o in c.outputs
                     if o.output_type == "stream" and o.name == "stderr")
    assert "not a leaf Tensor is being accessed" in stderr, "the warning the notebook explains"
    assert "requires_grad inside no_grad: False" in text
    assert "after a second backward: tensor([ 0.,  6., 24., 54., 96.])" in text
    svgs = mime_outputs(nb, SVG)
    assert len(svgs) >= 3
    assert "MulBackward0" in svgs[0] and "AccumulateGrad" in svgs[0]
    assert "not computed yet" in svgs[0] and "not computed yet" not in svgs[1]
    assert "PowBackward0" in svgs[-1] and "SumBackward0" in svgs[-1]
    assert "z = x ⊙ y" in svgs[0] and "z = x ⊙ y" in svgs[1], "the tensor y drawn as the tensor it is, before and after"
    assert "directly access saved tensors after they have already been freed" in text, "backward freed _saved_other"
    assert "= 2x" in svgs[2], "the Python number of x * 2 drawn as the number"


def test_02_vector_jacobian_products(run_notebook):
    nb = executed(run_notebook, "02_vector_jacobian_products")
    text = all_text(nb)
    assert "grad can be implicitly created only for scalar outputs" in text
    assert "which is M itself, since y_j = Σ_i x_i M[i, j]: True" in text
    assert "[1, 1] gives the sum of [1, 0] and [0, 1]: True" in text
    assert "Trying to backward through the graph a second time" in text
    assert "x.grad == v * 2**k: True" in text
    jacobians = [h for h in mime_outputs(nb, HTML) if "gv-jview" in h]
    assert jacobians and "equal" in jacobians[0] and "DIFFERENT" not in jacobians[0]
    chain = mime_outputs(nb, SVG)
    # torch.manual_seed(0); torch.randn(3) is [1.5410, -0.2934, -2.1788] (norm 2.68), so nine doublings
    assert "y = x * 2**9 = tensor([  788.9900,  -150.2356, -1115.5402], grad_fn=<MulBackward0>)" in text
    assert chain and chain[0].count("MulBackward0") >= 9, "the doubling loop's chain of MulBackward0"


def test_03_watching_backward(run_notebook):
    nb = executed(run_notebook, "03_watching_backward")
    text = all_text(nb)
    assert len(players(nb)) == 3, "three animations play inline"
    assert "DiagonalBackward0" in players(nb)[0]
    assert "5.0 = 3.0 + 2.0" in panel_text(players(nb)[1]), "the running sum of a fan-out: its total, then the tensors added up"
    assert "halve" in players(nb)[2], "the hook that fired"
    # what the markdown says the learner sees in the animations
    barlow, fan_out, hooked = (player_data(p)["frames"] for p in players(nb))
    assert "<math" in barlow[0]["h"], "formulas typeset as MathML"
    lit = dict(highlighted(players(nb)[0]))
    assert any(line == "loss = -torch.diagonal(c).sum()" for line in lit.values()), "the code panel highlights the cell's line"
    assert lit["backward 12/12 · AccumulateGrad"] == "z1 = torch.randn(N, D, requires_grad=True)", "an AccumulateGrad: its leaf's line"
    div = next(f["h"] for f in barlow if "DivBackward0" in f["t"] and f["t"].startswith("backward"))
    assert "<mn>4</mn>" in div, "the constant of `/ N` in the formula"
    # the cell rebinds z1 (the leaf, then the standardized batch): its two values read z1₁ and z1₂
    z1 = next(f["h"] for f in barlow if "AccumulateGrad" in f["t"] and "z1₁.grad" in f["h"])
    assert any("z1₂" in latex.text(f["h"]) for f in barlow), "the standardized batch, the second value of z1"
    writes = z1[z1.index("gv-write"):]
    assert writes.count('<table class="gv-grid">') == 4, "z1.grad drawn as three gradients added together, and the total"
    assert any(s == "pending" for f in barlow for s in f["c"].values()), "amber: received gradient, not yet run"
    assert [f["t"] for f in fan_out if "running sum" in f["h"]] == ["backward 2/4 · MulBackward0", "backward 3/4 · MulBackward0"]
    assert [f["t"] for f in hooked if "halve" in f["h"]] == ["backward 2/5 · AddBackward0"]
    widgets = mime_outputs(nb, WIDGET)
    assert widgets and widgets[0].get("model_id"), "the stepper widget is displayed"
    assert text.count("matches autograd.grad: True") == 3
    assert "z2.grad is written: True" in text and "z1.grad so far: None" in text
    assert "a.grad = tensor(2.)" in text and "a.grad = tensor(5.)" in text
    assert "bias.grad = tensor([2., 2., 2.])" in text
    assert any("Σ over axis 0" in svg for svg in mime_outputs(nb, SVG))


def test_04_models_and_scopes(run_notebook):
    nb = executed(run_notebook, "04_models_and_scopes")
    svgs = mime_outputs(nb, SVG)
    assert len(svgs) == 3
    assert 'class="cluster' in svgs[0] and "hidden (Linear)" in svgs[0] and "hidden.weight" in svgs[0]
    assert "drawn as one box" in svgs[1]
    assert "nodes hidden" in svgs[2] and "sum of 60 gradients" in svgs[2]
    assert len(players(nb)) == 1
    assert "loss went down: True" in all_text(nb)
    player = players(nb)[0]
    hidden = next(re.sub(r"<[^>]+>", " ", f["h"]) for f in player_data(player)["frames"] if "hidden (Linear)" in f["t"])
    assert "4 engine steps" in hidden and "ReluBackward0" in hidden, "a folded layer runs as one step"
    assert re.search(r"hidden\.bias\.grad\s*\(8,\)", hidden) and re.search(r"hidden\.weight\.grad\s*\(8, 4\)", hidden)
    lit = highlighted(player)
    assert [line for title, line in lit if "NllLoss" in title or "LogSoftmax" in title] == ["loss = F.cross_entropy(logits, y)"] * 2
    assert [line for title, line in lit if "Relu" in title] == ["return self.out(torch.relu(self.hidden(x)))"]
    assert [line for title, line in lit if "(Linear)" in title] == ["return self.out(torch.relu(self.hidden(x)))"] * 2, \
        "a folded layer's step lights the line that made the ops inside it"


def test_05_pytorch_bridge(run_notebook):
    nb = executed(run_notebook, "05_pytorch_bridge")
    text = all_text(nb)
    try:
        import torch  # noqa: F401
    except ImportError:
        assert "PyTorch available: False" in text
        assert any("PyTorch is not installed" in md for md in mime_outputs(nb, "text/markdown"))
        return
    assert "PyTorch available: True" in text
    assert "same nodes in the same order: True" in text
    assert "same gradient as gradviz: True" in text
    svgs = mime_outputs(nb, SVG)
    assert len(svgs) == 2 and "DiagonalBackward0" in svgs[0] and 'class="cluster' in svgs[1]
    assert len(players(nb)) == 1


def test_05_without_pytorch(jupyter_env, tmp_path):
    """Where PyTorch is missing, notebook 5 says so in a markdown output and runs on."""
    blocker = tmp_path / "no_torch" / "torch"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text('raise ImportError("No module named \'torch\'")\n')
    env = dict(os.environ)   # this kernel alone: the other notebooks' kernels keep torch
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(blocker.parent), env.get("PYTHONPATH")]))
    nb = nbformat.read(NOTEBOOKS / "05_pytorch_bridge.ipynb", as_version=4)
    workdir = tmp_path / "work"
    workdir.mkdir()
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(workdir)}}).execute(cwd=str(workdir), env=env)
    assert "PyTorch available: False" in all_text(nb)
    assert any("PyTorch is not installed" in md for md in mime_outputs(nb, "text/markdown"))
    assert not mime_outputs(nb, SVG)
    assert not [o for c in code_cells(nb) for o in c.outputs if o.output_type == "error"]


# -- the lessons after the first five: what their text says the outputs show -------------------
def test_06_softmax_cross_entropy(run_notebook):
    nb = executed(run_notebook, "06_softmax_cross_entropy")
    text = all_text(nb)
    assert "= -log p[0, 2]: True" in text
    assert "✗ p − y, without the 1/N: 12 of 12 values differ" in text, "the mistake the text shows"
    assert "✓ (p − y) / N: right (all 12 values)" in text
    assert "same gradient as the fused node: True" in text
    assert mime_outputs(nb, WIDGET), "the stepper the exercises step"
    player = players(nb)[0]
    assert "NllLossBackward0" in player and "LogSoftmaxBackward0" in player
    assert "gv-grid" in next(h for h in mime_outputs(nb, HTML) if "without the 1/N" in h), "the grid of differences"


def test_07_backprop_by_hand(run_notebook):
    nb = executed(run_notebook, "07_backprop_by_hand")
    text = all_text(nb)
    for line in ("4 of 4 right", "5 of 5 right", "9 of 9 right", "3 of 3 right"):
        assert line in text, line
    assert "the same output as the op-by-op version: True" in text
    b1 = re.search(r"b1\.grad = tensor\(\[([^\]]*)\]\)", text).group(1)
    assert all(abs(float(v)) < 1e-6 for v in b1.split(",")), "b1.grad is zero up to rounding"
    assert "NativeBatchNormBackward0" in players(nb)[1]


def test_08_convolution_backward(run_notebook):
    nb = executed(run_notebook, "08_convolution_backward")
    text = all_text(nb)
    assert "input gradient, full correlation with the flipped kernel: True" in text
    assert "weight gradient, input correlated with the gradient: True" in text
    assert "ConvolutionBackward0" in players(nb)[0]


def test_09_recurrence_through_time(run_notebook):
    nb = executed(run_notebook, "09_recurrence_through_time")
    text = all_text(nb)
    grads = [float(g) for g in re.findall(r"step \d: dL/dx_\d = (\S+)", text)]
    assert len(grads) == 8 and grads == sorted(grads), "the gradient shrinks going back in time"
    assert grads[-1] / grads[0] > 1e5, "over a hundred thousand times less at the first step"
    assert "first / last = 1.5**7: True" in text
    vanishing, exploding = (player_data(p) for p in players(nb))
    # the group of nodes each time step runs is read from the recording, as the player steps it
    group = re.search(r"each time step runs (\d+) nodes: (.*)", text)
    ran = [re.search(r"· (\w+)", f["t"]).group(1) for f in vanishing["frames"] if f["t"].startswith("backward")]
    assert group and group[2].split(" → ") == ran[:int(group[1])] == ran[int(group[1]):2 * int(group[1])]
    assert "SelectBackward0" in group[2]
    assert "triple" not in "".join(c.source for c in nb.cells if c.cell_type == "markdown"), "no group named by hand"
    widths = [w for f in vanishing["frames"] for w in f.get("w", {}).values()]
    assert min(widths) < max(widths), "edge widths tell the sizes apart"
    w_panel = next(f["h"] for f in vanishing["frames"] if "w.grad" in f["h"] and "AccumulateGrad" in f["t"])
    assert "w is used 8 times" in re.sub(r"<[^>]+>", "", w_panel)
    # the player, which shows every dL/dx_t and w's sum, comes after the exercises that ask for them
    cells = code_cells(nb)
    first_player = next(i for i, c in enumerate(cells) if players(nbformat.from_dict({"cells": [c]})))
    solution_3 = next(i for i, c in enumerate(cells) if c.source.startswith("# Solution 3"))
    assert first_player > solution_3, "the vanishing player is shown after exercises 1-3"
    assert all("step " not in cell_text(c) for c in cells[:first_player]), "no dL/dx_t printed before it"


def test_10_attention_and_gpt(run_notebook):
    nb = executed(run_notebook, "10_attention_and_gpt")
    text = all_text(nb)
    assert "parameters: 1872" in text
    head, modules, block0 = players(nb)
    titles = [f["t"] for f in player_data(modules)["frames"]]
    order = [next(i for i, t in enumerate(titles) if name in t)
             for name in ("lm_head (Linear)", "ln_f (LayerNorm)", "1 (Block)", "0 (Block)", "wpe (Embedding)")]
    assert order == sorted(order), "the modules run in reverse"
    for name in ("MaskedFillBackward0", "SoftmaxBackward0", "BmmBackward0", "TransposeBackward0"):
        assert name in block0, name
    norms = re.search(r"row norms: tensor\(\[([^\]]*)\]\)", text).group(1).split(",")
    assert [float(v) for v in norms[4:]] == [0.0, 0.0] and all(float(v) > 0 for v in norms[:4])


def test_11_forward_and_reverse_mode(run_notebook):
    nb = executed(run_notebook, "11_forward_and_reverse_mode")
    text = all_text(nb)
    assert "forward mode: 3 JVP passes" in text and "reverse mode: 2 VJP passes" in text
    assert "the same Jacobian: True" in text and "jacfwd and jacrev agree: True" in text
    assert "J e0 = tensor([2., 9.])" in text
    assert "animate_jvp's result, (f(x), J e0): (tensor([2.1411, 9.0000]), tensor([2., 9.]))" in text
    jvp_player, race = players(nb)
    steps = [f["t"] for f in player_data(jvp_player)["frames"]]
    assert steps[0] == "forward mode: the tangents" and steps[-1] == "forward mode 11/11 · stack"
    passes = [f["t"] for f in player_data(race)["frames"]]
    assert [t.split(" · ")[0] for t in passes] == ["forward pass 1/3", "forward pass 2/3", "forward pass 3/3",
                                                   "backward pass 1/2", "backward pass 2/2"]


def test_12_higher_order_gradients(run_notebook):
    nb = executed(run_notebook, "12_higher_order_gradients")
    text = all_text(nb)
    assert "dy/dx = tensor(12., grad_fn=<MulBackward0>)" in text
    assert "requires_grad: False" in text
    assert "the same as hessian(f) @ v: True" in text and "the same as autograd.functional.hvp: True" in text
    assert "H v (forward over reverse) = tensor([5., 8.])" in text
    svg = mime_outputs(nb, SVG)[0]
    assert all(name in svg for name in ("PowBackward0", "MulBackward1", "MulBackward0"))
    assert "dy_dx = t₃ ⊙ t₂" in svg, "the text's reading of the node the first backward made"


def test_13_custom_function_and_gradcheck(run_notebook):
    nb = executed(run_notebook, "13_custom_function_and_gradcheck")
    text = all_text(nb)
    assert "grad_fn=<MySoftplusBackward>" in text and "gradcheck: True" in text
    assert "GradcheckError: Jacobian mismatch for output 0 with respect to input 0" in text
    assert "MySoftplusBackward" in players(nb)[1]


def test_14_views_inplace_and_versions(run_notebook):
    nb = executed(run_notebook, "14_views_inplace_and_versions")
    text = all_text(nb)
    assert "a._version = 1" in text
    assert ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            "[torch.FloatTensor [3]], which is output 0 of Mul, is at version 1; expected version 0 instead.") in text
    assert "a leaf Variable that requires grad is being used in an in-place operation." in text
    assert "versions, shared by the view and its base: 1 1" in text
    saved = mime_outputs(nb, SVG)[:2]
    assert all("result" in s and "self" in s for s in saved), "the saved tensors drawn"
    assert "[0.7311, 0.8808, 0.9526]" in saved[0] and "[1.462, 1.762, 1.905]" in saved[1], "a's saved values, then doubled"
    assert "CopySlices" in mime_outputs(nb, SVG)[2]


def test_there_are_eighteen_lessons():
    assert len(PATHS) >= 18 and [p.stem[:2] for p in PATHS[:18]] == [f"{k:02d}" for k in range(1, 19)]


def test_15_your_own_backward_loop(run_notebook):
    nb = executed(run_notebook, "15_your_own_backward_loop")
    text = all_text(nb)
    assert "✓ your order: a valid order on all 4 graphs" in text
    assert "✓ your backward: right on all 4 cases" in text
    assert "the leaf of AccumulateGrad is x: True" in text
    mine = re.search(r"yours: +(\[.*\])", text).group(1)
    engine = re.search(r"engine: +(\[.*\])", text).group(1)
    assert mine == engine and "CosBackward0', 'SinBackward0" in engine, "the text's claim on the diamond's order"
    assert "W.grad by your loop equals the engine's: True" in text
    assert "MulBackward0" in mime_outputs(nb, SVG)[0]


def test_16_backprop_a_whole_network(run_notebook):
    nb = executed(run_notebook, "16_backprop_a_whole_network")
    text = all_text(nb)
    assert "{'setosa': 50, 'versicolor': 50, 'virginica': 50}" in text
    assert "✓ dlogits: right on all 3 cases" in text and "✓ your gradients: right on all 3 cases" in text
    assert "the two runs agree at every step: True" in text
    db1 = re.search(r"db1 = tensor\(\[([^\]]*)\]\)", text).group(1).split(",")
    assert len(db1) == 8 and all(abs(float(v)) < 1e-6 for v in db1), "db1 is zero up to rounding, as the text says"
    start, yours, engines = map(float, re.search(r"loss: (\S+) -> (\S+) \(yours\), (\S+) \(the engine's\)", text).groups())
    assert yours < start / 4 and abs(yours - engines) < 1e-4, "training with the learner's gradients works"
    assert float(re.search(r"training accuracy with your gradients: (\S+)", text).group(1)) > 0.9
    curve = mime_outputs(nb, SVG)[-1]
    assert curve.count("<polyline") == 2 and "your gradients" in curve and "the engine" in curve
    assert not any(".backward()" in c.source for c in nb.cells if "solution" in tags(c)), "no backward in the answers"


def test_17_gates_and_shapes(run_notebook):
    nb = executed(run_notebook, "17_gates_and_shapes")
    text = all_text(nb)
    assert "x > y: tensor([ True, False,  True])" in text, "the routing the solution reads"
    assert "✓ x.grad: right (all 3 values)" in text
    assert "✓ dL/dW: right on all 3 cases" in text and "✓ dL/dX: right on all 3 cases" in text
    from gradviz.exercises import check
    assert "it looks transposed" in str(check([[0.0] * 3] * 2, [[0.0] * 2] * 3, "dL/dW")), "as the text promises"


def test_18_stable_softmax_and_logsumexp(run_notebook):
    nb = executed(run_notebook, "18_stable_softmax_and_logsumexp")
    text = all_text(nb)
    assert "naive log-sum-exp: tensor([   inf, 5.0068])" in text and "naive softmax: tensor([nan, nan, nan])" in text
    assert "torch.logsumexp: tensor([1002.4076,    5.0068])" in text
    assert "✓ logsumexp: right on all 3 cases" in text and "✓ ∂ logsumexp / ∂z: right on all 3 cases" in text
    assert "✓ the VJP of LogSoftmaxBackward0 (logp) → zl: right (all 6 values)" in text
    assert "LogSoftmaxBackward0" in players(nb)[0]
