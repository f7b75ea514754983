"""A value written beside an edge stays inside the stage: lesson 6's stepper, as wide as a JupyterLab
output at 1280×720, wrote ∂L/∂z = [[0.2242, 0.6095, -0.864, 0.03034]] past the stage's right edge
while the camera fitted the graph alone."""
import pytest

import gradviz as torch
from tests.support.browser_support import chromium

pytestmark = pytest.mark.browser
F = torch.nn.functional

OUTSIDE = """r => { const s = r.querySelector('.gv-stage').getBoundingClientRect(), out = [];
  for (const t of r.querySelectorAll('.gv-stage svg g.gv-labels text')) {
    const b = t.getBoundingClientRect();
    if (b.width && (b.left < s.left - 1 || b.right > s.right + 1)) out.push(t.textContent);
  } return out; }"""


@pytest.mark.parametrize("size", [(1280, 720), (1400, 900)])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_edge_label_of_lesson_6_is_inside_the_stage(size, scheme, tmp_path):
    z = torch.tensor([[1.0, 2.0, 0.5, -1.0]], requires_grad=True)
    y = torch.tensor([2])
    loss = F.cross_entropy(z, y)
    anim = torch.animate(loss, names={"z": z, "loss": loss})
    path = tmp_path / "lesson6.html"
    # the output area JupyterLab gives a cell at this window width (the file browser open)
    path.write_text(f'<!doctype html><meta charset=utf-8><body style="margin:0"><div style="margin-left:380px;'
                    f'width:{size[0] - 460}px">{anim._repr_html_()}</div>', encoding="utf-8")
    with chromium(size) as context:
        page = context.new_page()
        page.emulate_media(reduced_motion="reduce", color_scheme=scheme)
        page.goto(path.as_uri())
        root = page.locator(".gv-player").first
        root.wait_for()
        for k in range(len(anim.frames)):
            root.evaluate(f"r => r.__gv.go({k}, false)")
            assert root.evaluate(OUTSIDE) == [], (k, anim.frames[k].title)
        page.close()
