"""The tutorial notebooks run top to bottom in a fresh kernel and show what they promise.

Each notebook in notebooks/ is executed once with nbclient, in a temporary working
directory, by a kernel that is this interpreter (so it imports the gradviz of this
checkout) registered under a kernelspec in a temporary Jupyter data directory.
Nothing is written outside tmp dirs. The notebooks are stored without outputs.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

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


_executed: dict = {}


@pytest.fixture(scope="module")
def run_notebook(jupyter_env, tmp_path_factory):
    """Execute a notebook once per test session; later calls return the executed copy."""
    def run(path: Path):
        if path.name not in _executed:
            nb = nbformat.read(path, as_version=4)
            workdir = tmp_path_factory.mktemp(path.stem)
            client = nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                                             resources={"metadata": {"path": str(workdir)}})
            client.execute(cwd=str(workdir))
            _executed[path.name] = (nb, workdir)
        return _executed[path.name]
    return run


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
    return "\n".join(text_of(o) for c in code_cells(nb) for o in c.outputs)


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


# -- every notebook ---------------------------------------------------------------------------
def test_there_are_tutorials():
    assert len(PATHS) >= 4, f"expected the tutorial notebooks in {NOTEBOOKS}"


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
    nb, workdir = run_notebook(path)
    for cell in code_cells(nb):
        for out in cell.outputs:
            assert out.output_type != "error", f"{path.name}: {out.get('ename')}: {out.get('evalue')}"
            if out.output_type == "stream":
                assert out.name == "stdout", f"{path.name} wrote to stderr:\n{out.text}\nin cell:\n{cell.source}"
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


# -- what each notebook must show -------------------------------------------------------------
def executed(run_notebook, stem: str):
    path = NOTEBOOKS / f"{stem}.ipynb"
    if not path.exists():
        pytest.fail(f"missing notebook {path.name}")
    return run_notebook(path)[0]


def test_01_tensors_and_grad_fn(run_notebook):
    nb = executed(run_notebook, "01_tensors_and_grad_fn")
    text = all_text(nb)
    assert "tensor([ 0.,  3., 12., 27., 48.])" in text
    assert "<MulBackward0" in text
    assert re.search(r"is_leaf\s*[:=]\s*True", text) and re.search(r"is_leaf\s*[:=]\s*False", text)
    assert "requires_grad inside no_grad: False" in text
    assert len(mime_outputs(nb, SVG)) >= 2
    assert any("MulBackward0" in svg for svg in mime_outputs(nb, SVG))


def test_02_vector_jacobian_products(run_notebook):
    nb = executed(run_notebook, "02_vector_jacobian_products")
    text = all_text(nb)
    assert "grad can be implicitly created only for scalar outputs" in text
    assert "[1, 1] gives the sum of [1, 0] and [0, 1]: True" in text
    assert "x.grad == v * 2**k: True" in text
    assert "Trying to backward through the graph a second time" in text
    assert mime_outputs(nb, SVG) or mime_outputs(nb, HTML)


def test_03_watching_backward(run_notebook):
    nb = executed(run_notebook, "03_watching_backward")
    text = all_text(nb)
    players = mime_outputs(nb, HTML)
    assert players and any("<svg" in html for html in players), "the animation plays inline"
    assert mime_outputs(nb, WIDGET), "the stepper widget is displayed"
    assert "a.grad = 2.0 + 3.0 = 5.0" in text.replace("tensor(", "").replace(")", "") or "5." in text
    assert "AccumulateGrad" in text


def test_04_models_and_scopes(run_notebook):
    nb = executed(run_notebook, "04_models_and_scopes")
    svgs = mime_outputs(nb, SVG)
    assert len(svgs) >= 2
    assert any("cluster" in svg for svg in svgs), "module scopes are drawn as clusters"
    assert "loss went down: True" in all_text(nb)


def test_05_pytorch_bridge(run_notebook):
    nb = executed(run_notebook, "05_pytorch_bridge")
    text = all_text(nb)
    try:
        import torch  # noqa: F401
    except ImportError:
        assert "PyTorch is not installed" in "\n".join(mime_outputs(nb, "text/markdown")) + text
        return
    assert mime_outputs(nb, SVG)
    assert "same gradient as gradviz: True" in text
