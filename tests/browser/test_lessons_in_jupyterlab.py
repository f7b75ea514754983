"""The four newest lessons in a real JupyterLab, light and dark, at 1280×720: Run All runs every cell
with no error, each exercise left as `...` says it has no answer yet and each solution is confirmed,
and the page does not scroll sideways. (tests/test_notebooks.py runs them with nbclient and checks what
they print; this is what a learner sees.)"""
import shutil
from pathlib import Path

import pytest

from tests.browser.test_jupyter import answer_dialogs, jupyter_server, start_kernel
from tests.support.browser_support import chromium, require_browser

pytestmark = pytest.mark.browser

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("1[5-8]_*.ipynb"))


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_new_lessons_run_all_in_jupyterlab(theme, tmp_path):
    require_browser()
    pytest.importorskip("jupyterlab")
    assert len(NOTEBOOKS) == 4
    root = tmp_path / "root"
    root.mkdir()
    for nb in NOTEBOOKS:
        shutil.copy(nb, root)
    every_cell = {"@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"}}   # all cells in the page
    with jupyter_server(tmp_path, root, theme=theme, settings_more=every_cell) as url, \
            chromium((1280, 720)) as browser:
        for nb in NOTEBOOKS:
            start_kernel(url, nb.name)
            page = browser.new_page()
            errors = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            # ?reset: a fresh workspace, or JupyterLab reopens the notebooks before it in tabs of their own, one
            # of which may hold the focus that Run All acts on (its cells ran, this one's stayed [ ])
            page.goto(f"{url}/lab/tree/{nb.name}?reset")
            idle = page.locator(".jp-StatusBar-TextItem", has_text="Python 3 (ipykernel) | Idle")
            idle.wait_for(timeout=90_000)
            # a Run All clicked while the kernel's connection is still coming up can be dropped: on a
            # loaded machine, one that has started nothing within a minute is clicked again
            for attempt in range(2):
                answer_dialogs(page)
                page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
                page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
                try:
                    page.locator(".jp-CodeCell .jp-InputPrompt", has_text="[1]").first.wait_for(timeout=60_000)
                    break
                except Exception:   # noqa: BLE001 - playwright's TimeoutError: try the menu once more
                    if attempt == 1:
                        raise
            last = page.locator(".jp-Cell").last
            # every cell has run: no prompt waits ([*]) and the last cell whose input shows has its number
            # (a solution's input is collapsed, its prompt empty)
            page.wait_for_function("""() => {
                const p = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].map(e => e.textContent)
                    .filter(t => t.trim());
                return p.length && !p.some(t => t.includes('*')) && /\\[\\d+\\]/.test(p[p.length - 1]); }""",
                                   timeout=120_000)
            idle.wait_for(timeout=120_000)
            outputs = page.eval_on_selector_all(".jp-OutputArea-output", "els => els.map(e => e.innerText)")
            text = "\n".join(outputs)
            assert "Traceback" not in text, (nb.name, text[text.index("Traceback"):][:2000])
            assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
            assert text.count("no answer yet") >= 2 and text.count("✓") >= 2, (nb.name, text[:2000])
            assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
            assert last.count() and errors == [], (nb.name, errors)
            page.close()
