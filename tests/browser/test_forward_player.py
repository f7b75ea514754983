"""The forward-mode player and the forward-versus-reverse view in Chromium at 1280×720 and 1400×900.

As for the backward player: every frame's active node is inside the graph's viewport, on screen,
with nothing over its centre and its text at least 10 CSS px; the page never scrolls sideways; text
contrast is at least 4.5:1 in light, dark and inline with JupyterLab Dark's colours; the page makes
no request beyond its own file; Next steps and says what it shows.
"""
import re

import pytest

import gradviz
from tests.browser.test_camera import open_player
from tests.support.browser_support import chromium
from tests.support.player_checks import CONTRAST, JUPYTERLAB_DARK, SEE_STEPS

pytestmark = pytest.mark.browser


def mlp_layer(x, w, b):
    h = (x @ w + b).tanh()
    s = h.sigmoid() * h
    return s.sum(dim=1)


def jvp_player():
    x = gradviz.tensor([[0.5, -1.0, 2.0], [0.1, 0.3, -0.2]])
    w = gradviz.tensor([[0.2, -0.5], [0.4, 0.1], [-0.3, 0.6]])
    b = gradviz.tensor([0.1, -0.2])
    tangents = (gradviz.ones_like(x), gradviz.zeros_like(w), gradviz.tensor([1.0, 0.0]))
    return gradviz.animate_jvp(mlp_layer, (x, w, b), tangents)


def race_view():
    W = gradviz.tensor([[0.5, 0.3, -0.4], [0.2, 0.0, 0.6]])

    def f(x):
        h = (W @ x).tanh()
        return h * 2
    return gradviz.forward_vs_reverse(f, gradviz.tensor([0.5, -1.0, 2.0]))


def hvp_player():
    def f(x):
        h = x.sin().tanh()
        return h.sum()
    return gradviz.animate_hvp(f, gradviz.tensor([0.5, -1.0]), gradviz.tensor([1.0, 0.0]))


def double_backward():
    x = gradviz.tensor([0.5, -1.0], requires_grad=True)
    (g,) = gradviz.autograd.grad(x.sin().tanh().sum(), x, create_graph=True)
    return gradviz.animate(g.sum())


BUILDS = (("jvp", jvp_player), ("race", race_view), ("hvp", hvp_player), ("double", double_backward))
FRAMES = {"jvp": 7, "race": 5, "hvp": 7, "double": 13}   # the seed and 6 ops; 3 + 2 passes; 6 ops; 6 + 7 steps


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    out = tmp_path_factory.mktemp("forward")
    return {name: (build().save(out / f"{name}.html"), len(build().frames)) for name, build in BUILDS}


@pytest.mark.parametrize("viewport", [(1280, 720), (1400, 900)], ids=["1280x720", "1400x900"])
def test_every_frame_is_on_screen_and_legible(pages, viewport):
    with chromium(viewport) as context:
        for name, (path, frames) in pages.items():
            page, root, requests, errors = open_player(context, path)
            n = root.evaluate("r => r.__gv.length()")
            assert n == frames == FRAMES[name], name
            for seen in page.evaluate(SEE_STEPS, [root.element_handle(), list(range(n))]):
                where = f"{name} at {viewport}: {seen}"
                assert seen["node"], where
                assert seen["inStage"] and seen["onScreen"], where
                assert seen["unobstructed"], where
                assert seen["textPx"] >= 10, where
                assert not seen["sideways"], where
            # the tangent (the gradient) is written on the edges it runs along
            root.evaluate(f"r => r.__gv.go({n - 1})")
            labels = root.evaluate("r => [...r.querySelectorAll('.gv-stage g.gv-labels text')].map(t => t.textContent)")
            assert labels and all(t.startswith("[") or t.startswith("seed") or t[0] in "-0123456789" for t in labels)
            assert root.locator(".gv-key").inner_text().startswith("backward" if name == "double" else "forward")
            assert not errors, errors
            assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
            page.close()


def test_next_steps_and_narrates(pages):
    with chromium((1280, 720)) as context:
        page, root, _, errors = open_player(context, pages["jvp"][0])
        page.keyboard.press("ArrowRight")
        assert root.get_attribute("data-frame") == "1"
        assert root.locator(".gv-title").inner_text() == "forward mode 1/6 · mm"
        said = root.locator(".gv-live").text_content()
        assert said.startswith("forward mode: ")
        # the running op's edges carry the tangent with the forward arrowhead showing
        shown = root.evaluate("""r => [...r.querySelectorAll('.gv-stage g.edge.gv-carrying')].map(g =>
            getComputedStyle(g.querySelector(':scope > polygon:not(.gv-back)')).visibility)""")
        assert shown and set(shown) == {"visible"}
        assert not errors, errors


def test_the_counter_and_the_panel_number_each_frame_alike(pages):
    """The seed frame comes before the first op: "forward 0 of 6", then "forward k of 6" beside the panel's
    "forward mode k/6 · op"; an animation with forward and backward frames (forward_vs_reverse's passes, a
    double backward) counts each phase from 1."""
    with chromium((1280, 720)) as context:
        for name in ("jvp", "hvp", "race", "double"):
            page, root, _, errors = open_player(context, pages[name][0])
            n = root.evaluate("r => r.__gv.length()")
            for k in range(n):
                root.evaluate(f"r => r.__gv.go({k})")
                count = root.locator(".gv-count").inner_text()
                title = root.locator(".gv-title").inner_text()
                # a node the first backward built (create_graph) is titled so, and counted so: by its pass
                numbered = re.match(r"(forward|backward|\w+ backward \(create_graph\))(?: mode| pass)? (\d+)/(\d+) ",
                                    title)
                if numbered is None:
                    assert (name, k, count) == (name, 0, "forward 0 of 6"), title
                else:
                    assert count == f"{numbered[1]} {numbered[2]} of {numbered[3]}", (name, k, title)
            assert not errors, errors
            page.close()


def test_text_contrast_is_at_least_4_5_in_light_dark_and_jupyterlab_dark(pages, tmp_path):
    for name, build in BUILDS:
        lab = tmp_path / f"lab-dark-{name}.html"
        lab.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{JUPYTERLAB_DARK}</style>"
                       f"</head><body data-jp-theme-light='false'>{build()._repr_html_()}</body></html>",
                       encoding="utf-8")
        with chromium((1280, 720)) as context:
            for scheme, path in (("light", pages[name][0]), ("dark", pages[name][0]), ("light", lab)):
                page, root, _, errors = open_player(context, path, scheme)
                n = root.evaluate("r => r.__gv.length()")
                for k in (0, n // 2, n - 1):
                    root.evaluate(f"r => r.__gv.go({k})")
                    worst = root.evaluate(CONTRAST)
                    assert worst[0]["ratio"] >= 4.5, (name, path.name, scheme, k, worst)
                assert not errors, errors
                page.close()
