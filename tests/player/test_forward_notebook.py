"""In a Jupyter kernel the forward-mode player shows inline (its own HTML, no kernel needed to play)
and its Stepper is a widget."""
from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("anywidget")

from tests.test_notebooks import HTML, WIDGET, jupyter_env  # noqa: E402,F401  (the fixture: a Jupyter in tmp)

REPO = Path(__file__).resolve().parents[2]
CELLS = [
    f"import sys\nsys.path.insert(0, {str(REPO)!r})\nimport gradviz",
    "def f(x, w):\n    h = x.sin() * w\n    return h.sum()\n\n"
    "anim = gradviz.animate_jvp(f, (gradviz.tensor([0.5, 1.0]), gradviz.tensor([2.0, -1.0])),\n"
    "                           (gradviz.tensor([1.0, 0.0]), gradviz.tensor([0.0, 1.0])))\nanim",
    "anim.stepper()",
    "gradviz.forward_vs_reverse(lambda x: (x * x).tanh(), gradviz.tensor([0.5, -1.0]))",
]


def test_inline_player_and_stepper(jupyter_env, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in CELLS]
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute(cwd=str(tmp_path))
    player, stepper, race = (nb.cells[k].outputs for k in (1, 2, 3))
    html = player[0]["data"][HTML]
    assert 'class="gv-root gv-player"' in html and "forward mode 1/3 · sin" in html and "gv-data" in html
    assert WIDGET in stepper[0]["data"]
    assert "forward pass 1/2 · column 0" in race[0]["data"][HTML]
