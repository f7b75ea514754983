"""A player opens framed on readable text: the whole graph only where its text is 10 CSS px or
more at that size, else the first step's neighbourhood (a backward-only replay of a big graph)."""
import pytest

import gradviz as torch
from tests.support.browser_support import chromium
from tests.support.player_checks import SEE_STEP

pytestmark = pytest.mark.browser


def test_a_big_graph_opens_on_its_first_step(tmp_path):
    x = torch.randn(4, 6, requires_grad=True)
    h = x
    for _ in range(6):
        h = torch.tanh(h * 1.5 + 0.1)
    loss = h.sum()
    path = torch.animate(loss, names={"x": x, "loss": loss}, forward=False).save(tmp_path / "big.html")
    small = torch.tensor([1.0, 2.0], requires_grad=True)
    tiny = torch.animate((small * 2).sum(), forward=False).save(tmp_path / "small.html")
    with chromium((1280, 720)) as context:
        page = context.new_page()
        page.emulate_media(reduced_motion="reduce")
        for file, whole in ((path, False), (tiny, True)):
            page.goto(file.as_uri())
            root = page.locator(".gv-player").first
            root.wait_for()
            seen = root.evaluate(SEE_STEP)
            assert seen["textPx"] >= 10 and seen["inStage"], (file.name, seen)
            fits = root.evaluate("""r => { const s = r.querySelector('.gv-stage').getBoundingClientRect();
              return [...r.querySelectorAll('.gv-stage g.node')].every(g => { const b = g.getBoundingClientRect();
                return b.left >= s.left - 1 && b.right <= s.right + 1 && b.top >= s.top - 1 && b.bottom <= s.bottom + 1; }); }""")
            assert fits == whole, file.name
        page.close()
