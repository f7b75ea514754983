"""The site `make site` builds, opened in Chromium: every page loads with no script error and no
request leaving it, every notebook has its page, every player on it steps without a kernel, and
exercises' solutions come folded.

The site is built once per test run into a temporary folder, by the same Sphinx command as
`make site`; the notebooks' outputs are cached in build/site-cache, so a second run (or a run
after `make site`) executes only the notebooks, or the gradviz code, that changed.
"""
from __future__ import annotations

import importlib
import inspect
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.browser_support import chromium, require_browser

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LOCAL = ("file:", "data:", "blob:", "about:")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_nb")
    pytest.importorskip("sphinx_book_theme")
    require_browser()
    tmp = tmp_path_factory.mktemp("site")
    home = tmp / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), IPYTHONDIR=str(tmp / "ipython"), JUPYTER_PLATFORM_DIRS="1",
               JUPYTER_CONFIG_DIR=str(tmp / "jupyter-config"), JUPYTER_DATA_DIR=str(tmp / "jupyter-data"),
               JUPYTER_RUNTIME_DIR=str(tmp / "jupyter-runtime"), PYDEVD_DISABLE_FILE_VALIDATION="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    out = tmp / "html" / "site"
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-c", "docs", "-d", str(tmp / "doctrees"), "-q",
         ".", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (out.parent / "build-warnings.txt").write_text(build.stderr)
    return out


def pages(site: Path) -> list:
    return sorted(p for p in site.rglob("*.html") if not {"_static", "_sources"} & set(p.parts))


@pytest.fixture(scope="module")
def browser():
    with chromium((1280, 720)) as context:
        yield context


def open_page(browser, path: Path, scheme: str = "light"):
    """The page, loaded, with the requests that left it and its script errors."""
    page = browser.new_page()
    page.emulate_media(color_scheme=scheme)
    outside, errors = [], []
    page.on("request", lambda r: None if r.url.startswith(LOCAL) else outside.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(path.as_uri(), wait_until="load")
    page.wait_for_load_state("networkidle")
    return page, outside, errors


def test_every_notebook_has_a_page_named_after_it(site):
    assert (site / "index.html").is_file()
    built = {p.name for p in pages(site)}
    assert NOTEBOOKS
    missing = [nb.name for nb in NOTEBOOKS if f"{nb.stem}.html" not in built]
    assert missing == []


def test_every_page_opens_with_no_error_and_no_request_leaving_it(site, browser):
    found = pages(site)
    assert len(found) >= len(NOTEBOOKS) + 4        # home, API, ops, the notebooks' index, ...
    problems = {}
    for path in found:
        page, outside, errors = open_page(browser, path)
        if outside or errors:
            problems[str(path.relative_to(site))] = (outside, errors)
        page.close()
    assert problems == {}


def test_the_home_page_leads_to_the_course_and_the_references(site, browser):
    page, _, _ = open_page(browser, site / "index.html")
    assert page.url.endswith("/docs/index.html")       # site/index.html leads to the home page
    nav = page.eval_on_selector_all(".bd-sidenav a", "els => els.map(a => a.getAttribute('href'))")
    for nb in NOTEBOOKS:
        assert any(href.endswith(f"{nb.stem}.html") for href in nav), nb.stem
    for name in ("api.html", "ops.html"):
        assert any(href.endswith(name) for href in nav), name
    page.close()


def test_the_api_reference_is_generated_from_the_docstrings(site):
    html = (site / "docs" / "api.html").read_text(encoding="utf-8")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html))
    documented = re.findall(r"\.\. auto(?:function|class):: (\S+)", (ROOT / "docs" / "api.md").read_text())
    assert "gradviz.draw" in documented and "gradviz.animate" in documented
    for name in documented:
        assert f'id="{name}"' in html, name
        module, _, attr = name.rpartition(".")
        doc = inspect.getdoc(getattr(importlib.import_module(module), attr))
        words = re.findall(r"\w+", doc)[:5]                 # its first words, whatever markup is between
        assert re.search(r"\W+".join(words), text), (name, words)


def test_the_theme_follows_the_readers_colour_scheme(site, browser):
    for scheme in ("light", "dark"):
        page, _, _ = open_page(browser, site / "docs" / "index.html", scheme)
        assert page.evaluate("document.documentElement.dataset.theme") == scheme
        page.close()


def test_every_player_on_the_site_steps_without_a_kernel(site, browser):
    stepped = 0
    for path in pages(site):
        if 'class="gv-root gv-player' not in path.read_text(encoding="utf-8"):
            continue
        page, _, errors = open_page(browser, path)
        players = page.locator(".gv-player")
        assert players.count() > 0, path.name
        for i in range(players.count()):
            player = players.nth(i)
            player.scroll_into_view_if_needed()
            count = player.locator(".gv-count")
            before, frame = count.text_content(), player.get_attribute("data-frame")
            player.locator(".gv-next").click()
            assert count.text_content() != before, (path.name, i)
            assert int(player.get_attribute("data-frame")) == int(frame) + 1
            stepped += 1
        assert errors == [], path.name
        page.close()
    assert stepped > 0


def test_a_widget_that_needs_a_kernel_is_replaced_by_a_note(site):
    with_widget = [nb for nb in NOTEBOOKS if re.search(r"\b(torch|gradviz)\.step\(", nb.read_text(encoding="utf-8"))]
    for path in pages(site):
        html = path.read_text(encoding="utf-8")
        assert "&lt;gradviz.Stepper" not in html, path.name      # not the widget's Python repr
        assert "application/vnd.jupyter.widget-state+json" not in html, path.name
    if not with_widget:
        pytest.skip("no notebook shows the Stepper")
    for nb in with_widget:
        page = next(p for p in pages(site) if p.name == f"{nb.stem}.html")
        assert 'class="live-widget' in page.read_text(encoding="utf-8"), nb.stem


def test_every_link_in_the_sources_resolves(site):
    """A link in the README, docs/ or a notebook to a page or file that is not there (Sphinx warns and
    drops the link, so no page shows it broken)."""
    warnings = (site.parent / "build-warnings.txt").read_text()
    unresolved = [line for line in warnings.splitlines()
                  if re.search(r"xref_missing|undefined label|unknown document|Unknown source document", line)]
    assert unresolved == []


def test_every_link_between_pages_leads_to_a_file_of_the_site(site):
    broken = []
    for path in pages(site):
        for href in re.findall(r'(?:href|src)="([^"#?]+)[^"]*"', path.read_text(encoding="utf-8")):
            if href.startswith(("http:", "https:", "mailto:", "data:")):
                continue
            if not (path.parent / href).exists():
                broken.append((str(path.relative_to(site)), href))
    assert broken == []


def test_solutions_come_folded_under_their_exercises(site):
    folded = 0
    for nb in NOTEBOOKS:
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        solutions = sum(1 for c in cells if c["cell_type"] == "code" and "".join(c["source"]).strip()
                        and "solution" in c.get("metadata", {}).get("tags", []))
        page = next(p for p in pages(site) if p.name == f"{nb.stem}.html").read_text(encoding="utf-8")
        assert page.count(">Show the solution</p>") == solutions, nb.stem
        folded += solutions
    if not folded:
        pytest.skip("no notebook has a code cell tagged `solution` yet")


def test_the_build_has_no_docutils_error_and_no_glob_matching_nothing(site):
    warnings = (site.parent / "build-warnings.txt").read_text()
    problems = [line for line in warnings.splitlines()
                if "ERROR" in line or "CRITICAL" in line or "docutils" in line
                or "toctree glob pattern" in line or "Unexpected indentation" in line
                or "isn't included in any toctree" in line]
    assert problems == []


def test_lesson_5_runs_against_pytorch(site):
    pytest.importorskip("torch")
    html = (site / "notebooks" / "05_pytorch_bridge.html").read_text(encoding="utf-8")
    assert "PyTorch available: True" in html, "the build ran it with PyTorch"
    assert html.count("<svg") >= 2 and 'class="gv-root gv-player' in html, "its diagrams and players"


def test_the_home_page_diagram_is_inline_and_readable(site, browser):
    html = (site / "docs" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<div class="gv-inline-svg"[^>]*><svg\b', html) and "barlow.svg" not in html
    for scheme in ("light", "dark"):
        page, _, _ = open_page(browser, site / "docs" / "index.html", scheme)
        sizes = page.eval_on_selector_all(".gv-inline-svg svg text",
                                          "els => els.map(e => e.getBoundingClientRect().height)")
        assert sizes and min(sizes) >= 9, f"labels {min(sizes):.1f} px high"
        thumbs = page.eval_on_selector_all(".bd-content table img", "els => els.map(e => e.getBoundingClientRect().width)")
        assert thumbs and min(thumbs) >= 600, f"player screenshots {thumbs} px wide"
        page.close()
