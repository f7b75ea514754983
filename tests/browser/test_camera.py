"""The saved player in Chromium at 1280×720 and 1400×900: every backward step is on screen and legible.

For three programs (a Barlow-style loss, an MLP with cross-entropy, the doubling loop) every
backward frame must show its active node inside the graph's viewport, with nothing over its
centre and its text at least 10 CSS px, an AccumulateGrad's written .grad must be in the panel
without scrolling it, and the page must never scroll sideways. Text contrast
is at least 4.5:1 in light, in dark (prefers-color-scheme) and inline in a page with JupyterLab
Dark's colours. The page makes no request beyond its own file.
"""
import pytest

import gradviz as torch
from tests.support.browser_support import chromium
from tests.support.player_checks import CONTRAST, JUPYTERLAB_DARK, SEE_STEP, SEE_STEPS, settle
from tests.support.player_programs import PROGRAMS, animation, program

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def players(tmp_path_factory):
    out = tmp_path_factory.mktemp("players")
    return {name: animation(name).save(out / f"{name}.html") for name in PROGRAMS}


def open_player(context, path, scheme="light"):
    page = context.new_page()
    requests, errors = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
    page.goto(path.as_uri())
    root = page.locator(".gv-player").first
    root.wait_for()
    return page, root, requests, errors


DRAWN_FITS = """r => {
  const s = r.querySelector('.gv-stage').getBoundingClientRect();
  const drawn = [...r.querySelectorAll('.gv-stage g.node')].filter(g => !g.classList.contains('gv-hidden'));
  return drawn.length > 0 && drawn.every(g => { const b = g.getBoundingClientRect();
    return b.left >= s.left - 1 && b.right <= s.right + 1 && b.top >= s.top - 1 && b.bottom <= s.bottom + 1; });
}"""


@pytest.mark.parametrize("viewport", [(1280, 720), (1400, 900)], ids=["1280x720", "1400x900"])
def test_every_backward_step_is_on_screen_and_legible(players, viewport):
    with chromium(viewport) as context:
        for name, path in players.items():
            page, root, requests, errors = open_player(context, path)
            titles = root.evaluate("r => JSON.parse(r.querySelector('script.gv-data').textContent).frames.map(f => f.t)")
            backward = [k for k, t in enumerate(titles) if t.startswith("backward")]
            assert backward, name
            # on load everything drawn fits: the whole graph, or while forward is building it, the part
            # drawn so far, no smaller than the graph's own size
            assert root.evaluate(DRAWN_FITS), name
            for seen in page.evaluate(SEE_STEPS, [root.element_handle(), backward]):
                where = f"{name} at {viewport}: {seen}"
                assert seen["node"] and seen["frame"] in backward, where
                assert seen["inStage"] and seen["onScreen"], where
                assert seen["unobstructed"], where
                assert seen["textPx"] >= 10, where
                assert not seen["sideways"], where
                # an AccumulateGrad's written .grad, read without scrolling the panel
                assert seen["keyInView"] is (True if titles[seen["frame"]].endswith("AccumulateGrad") else None), where
            # the controls: exact count, Next disabled at the end
            # counted by phase, as the Stepper counts: the last of the backward frames
            assert root.locator(".gv-count").inner_text() == f"backward {len(backward)} of {len(backward)}"
            assert root.locator(".gv-next").is_disabled()
            assert not errors, errors
            assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
            page.close()


def test_keys_work_without_a_click_and_the_camera_obeys_the_learner(players):
    with chromium((1280, 720)) as context:
        page, root, _, errors = open_player(context, players["doubling"])
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowRight")
        assert root.get_attribute("data-frame") == "2"
        said = root.locator(".gv-live").text_content()
        assert said and said == root.evaluate("r => JSON.parse(r.querySelector('script.gv-data').textContent).frames[2].s")
        # the learner zooms: the camera stops following until "follow" is pressed
        box = root.locator(".gv-stage").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(0, 400)
        zoomed = root.evaluate("r => r.__gv.camera.view()")
        assert root.locator(".gv-follow").get_attribute("aria-pressed") == "false"
        page.keyboard.press("ArrowRight")
        assert root.evaluate("r => r.__gv.camera.view()") == zoomed
        root.locator(".gv-follow").click()
        settle(page, root)
        assert root.locator(".gv-follow").get_attribute("aria-pressed") == "true"
        assert root.evaluate(SEE_STEP)["textPx"] >= 10
        # drag pans; the fit button shows everything
        page.mouse.move(box["x"] + 200, box["y"] + 200)
        page.mouse.down()
        page.mouse.move(box["x"] + 260, box["y"] + 120, steps=4)
        page.mouse.up()
        moved = root.evaluate("r => r.__gv.camera.view()")
        assert moved["cx"] != zoomed["cx"] or moved["cy"] != zoomed["cy"]
        root.locator(".gv-fit").click()
        settle(page, root)
        assert root.evaluate(DRAWN_FITS)
        # narration for screen readers, and reset
        assert root.locator(".gv-live").get_attribute("aria-live") == "polite"
        assert root.locator(".gv-live").inner_text().strip()
        root.locator(".gv-reset").click()
        assert root.get_attribute("data-frame") == "0"
        assert not errors, errors


def test_text_contrast_is_at_least_4_5_in_light_dark_and_jupyterlab_dark(players, tmp_path):
    fragment = animation("mlp")._repr_html_()
    lab = tmp_path / "lab-dark.html"
    lab.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{JUPYTERLAB_DARK}</style>"
                   f"</head><body data-jp-theme-light='false'>{fragment}</body></html>", encoding="utf-8")
    with chromium((1280, 720)) as context:
        for scheme, path in (("light", players["mlp"]), ("dark", players["mlp"]), ("light", lab)):
            page, root, _, errors = open_player(context, path, scheme)
            n = root.evaluate("r => r.__gv.length()")
            for k in (0, n // 2, n - 1):
                root.evaluate(f"r => r.__gv.go({k})")
                worst = root.evaluate(CONTRAST)
                assert worst[0]["ratio"] >= 4.5, (path.name, scheme, k, worst)
            if path == lab:          # the page's own dark colours reached the player
                assert root.evaluate("r => getComputedStyle(r).backgroundColor") == "rgb(17, 17, 17)"
            assert not errors, errors
            page.close()


def test_a_diagram_inline_stays_in_its_container_readable_and_zooms_with_ctrl_wheel(tmp_path):
    tensors, names, _ = program("doubling")
    wide = torch.draw(*tensors, names=names, rankdir="LR")     # the doubling loop laid out sideways: wide
    path = tmp_path / "diagram.html"
    path.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body style='margin:0'>"
                    f"<div style='width:600px'>{wide._repr_html_()}</div></body></html>", encoding="utf-8")
    with chromium((1280, 720)) as context:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.emulate_media(color_scheme="dark", reduced_motion="reduce")
        page.goto(path.as_uri())
        root = page.locator(".gv-diagram")
        sizes = root.evaluate("r => { const s = r.querySelector('.gv-stage').getBoundingClientRect();"
                              " const d = document.scrollingElement; return [s.width, d.scrollWidth, d.clientWidth]; }")
        assert sizes[0] <= 600 and sizes[1] <= sizes[2], sizes
        # too wide to fit 600 px with 10 px text: it opens on its start at its drawn size, to be panned
        assert root.evaluate("r => r.__gv.camera.view().s") >= 1
        before = root.evaluate("r => r.__gv.camera.view().s")
        box = root.locator(".gv-stage").bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.wheel(0, -300)                         # a plain wheel scrolls the page, not the diagram
        assert root.evaluate("r => r.__gv.camera.view().s") == before
        page.keyboard.down("Control")
        page.mouse.wheel(0, -300)
        page.keyboard.up("Control")
        assert root.evaluate("r => r.__gv.camera.view().s") > before
        # drawn with the default theme it follows the dark scheme
        assert root.evaluate("r => getComputedStyle(r.querySelector('g.graph > polygon')).fill") == "rgb(30, 30, 30)"
        assert not errors, errors
