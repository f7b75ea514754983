"""The player's script rebuilds the packed frames of a saved page exactly (gradviz/player/pack.py):
every panel in the browser equals the panel Python built, also past characters that JavaScript
counts as two (UTF-16 surrogate pairs)."""
from __future__ import annotations

import pytest

import gradviz as torch
from gradviz.player import animate

from tests.support.browser_support import chromium

pytestmark = pytest.mark.browser


def test_the_browser_unpacks_the_frames_python_built(tmp_path):
    x = torch.randn(3, requires_grad=True)
    y = x
    for _ in range(12):
        y = y * 1.25
    loss = y.sum()
    # a name beyond U+FFFF puts surrogate pairs into every panel
    anim = animate(loss, names={"𝔼x": x, "loss": loss}, forward=True, max_nodes=None)
    path = anim.save(tmp_path / "chain.html")
    assert '"H":' in path.read_text(encoding="utf-8")
    want = [f.to_json() for f in anim.frames]
    assert any("𝔼x" in f["h"] for f in want)
    with chromium((1280, 720)) as context:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.as_uri())
        root = page.locator(".gv-player")
        root.wait_for()
        got = root.evaluate("r => r.__gv.frames()")
        assert len(got) == len(want)
        for k, (g, w) in enumerate(zip(got, want)):
            assert g == w, k
        # and the panel on screen is the frame's: step to the end and compare the text shown
        page.keyboard.press("End")
        shown = root.locator(".gv-text").inner_html()
        assert shown == root.evaluate("r => { const d = document.createElement('div'); "
                                      "d.innerHTML = r.__gv.frames()[r.__gv.length() - 1].h; return d.innerHTML; }")
        assert not errors, errors
