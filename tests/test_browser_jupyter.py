"""gradviz.step() in a real JupyterLab: run the notebook, click Next twice, watch backward move.

The server runs on 127.0.0.1 with no token, a temporary root dir and temporary
HOME / IPYTHONDIR / JUPYTER_* dirs, and is stopped by its PID at the end.
"""
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from browser_support import chromium, require_browser

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = """\
import gradviz
a = gradviz.tensor([1.0, 2.0], requires_grad=True)
b = gradviz.tensor([3.0, 4.0], requires_grad=True)
a.name, b.name = "a", "b"
loss = (a * b).sum()
stepper = gradviz.step(loss)
stepper
"""
ANIMATION = """\
x = gradviz.tensor([1.0, -1.0], requires_grad=True)
gradviz.animate((x * x).sum(), forward=False)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def jupyter_lab(tmp_path):
    require_browser()
    pytest.importorskip("jupyterlab")
    pytest.importorskip("ipywidgets")
    root = tmp_path / "root"
    root.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(NOTEBOOK), nbformat.v4.new_code_cell(ANIMATION)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, root / "stepper.ipynb")
    env = dict(os.environ)
    for var in ("HOME", "IPYTHONDIR", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR"):
        path = tmp_path / var.lower()
        path.mkdir()
        env[var] = str(path)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    port = free_port()
    log = open(tmp_path / "jupyter.log", "wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip", "127.0.0.1", f"--port={port}",
         "--ServerApp.token=", "--ServerApp.password=", "--allow-root", f"--ServerApp.root_dir={root}",
         "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    pytest.fail("jupyter lab did not start:\n" + (tmp_path / "jupyter.log").read_text()[-3000:])
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()             # by its own PID; it shuts its kernels down on the way out
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)
        log.close()


def _stepper_state(page) -> dict:
    return page.evaluate("""() => {
        const out = document.querySelector('.jp-OutputArea-output .gv-stepper');
        if (!out) return null;
        const active = [...out.querySelectorAll('g.node.gv-active')].map(g => g.id);
        const panel = out.querySelector('.gv-stepper-panel');
        return {active, panel: panel ? panel.innerText : ''};
    }""")


def _wait_for_panel(page, text: str) -> None:
    page.wait_for_function("""text => {
        const p = document.querySelector('.jp-OutputArea-output .gv-stepper-panel');
        return p && p.innerText.includes(text);
    }""", arg=text, timeout=30_000)


def test_step_in_jupyterlab_runs_backward_one_click_at_a_time(jupyter_lab, tmp_path):
    with chromium() as browser:
        page = browser.new_page()
        page.goto(f"{jupyter_lab}/lab/tree/stepper.ipynb")
        page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle").wait_for(timeout=90_000)
        page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
        page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
        next_button = page.locator(".jp-OutputArea-output .widget-button", has_text="Next")
        next_button.wait_for(timeout=60_000)
        _wait_for_panel(page, "Press Next")
        before = _stepper_state(page)
        assert before["active"] == []

        next_button.click()
        _wait_for_panel(page, "backward 1")
        first = _stepper_state(page)
        assert len(first["active"]) == 1
        assert "SumBackward0" in first["panel"]

        next_button.click()
        _wait_for_panel(page, "backward 2")
        second = _stepper_state(page)
        page.screenshot(path=str(tmp_path / "jupyter-stepper.png"), full_page=True)
        assert len(second["active"]) == 1 and second["active"] != first["active"]
        panel = " ".join(second["panel"].split())
        assert "MulBackward0" in panel
        assert "[3.0, 4.0]" in panel        # grad_a = ḡ ⊙ b flows to a
        assert "[1.0, 2.0]" in panel        # grad_b = ḡ ⊙ a flows to b
        assert "a.grad = None" in panel     # the engine is paused before AccumulateGrad ran
        assert (tmp_path / "jupyter-stepper.png").stat().st_size > 0

        # the HTML player of gradviz.animate() runs in the output area on its own script
        player = page.locator(".jp-OutputArea-output .gv-player")
        player.wait_for(timeout=30_000)
        assert player.get_attribute("data-frame") == "0"
        player.locator(".gv-next").click()
        assert player.get_attribute("data-frame") == "1"
        assert "MulBackward0" in player.locator(".gv-title").inner_text()
