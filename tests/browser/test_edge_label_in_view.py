"""A value written beside an edge stays inside the stage: lesson 6's stepper, as wide as a JupyterLab
output at 1280×720, wrote ∂L/∂z = [[0.2242, 0.6095, -0.864, 0.03034]] past the stage's right edge
while the camera fitted the graph alone. And a box's title or the graph's legend that the view shows is
shown whole: a TransformerEncoderLayer's "norm2 (LayerNorm)" read "Norm)" in one camera position, and
lesson 12's "the gradient's graph (create_graph=True)" lost its end."""
import pytest

import gradviz as torch
from tests.support.browser_support import chromium, open_player

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


# the boxes' titles and the graph's legend that the stage shows part of, cut at its left or right
CAPTIONS_CUT = """r => { const s = r.querySelector('.gv-stage').getBoundingClientRect(), out = [];
  for (const t of r.querySelectorAll('.gv-stage g.cluster > text, .gv-stage g.graph > text')) {
    const b = t.getBoundingClientRect();
    if (b.width && b.bottom > s.top && b.top < s.bottom && b.right > s.left && b.left < s.right
        && (b.left < s.left - 1 || b.right > s.right + 1)) out.push(t.textContent);
  } return out; }"""


def test_every_caption_the_stage_shows_is_whole(tmp_path):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, dropout=0.0, batch_first=True)
    encoder = torch.animate(layer(torch.randn(1, 3, 8)).sum(), names=layer, forward=False)
    p = torch.tensor([1.0, 2.0], requires_grad=True)        # lesson 12's Hessian-vector product
    (grad_f,) = torch.autograd.grad(p[0] ** 2 * p[1] + p[1] ** 3, p, create_graph=True)
    hvp = torch.animate((grad_f * torch.tensor([1.0, 0.5])).sum(), names={"p": p, "grad_f": grad_f}, forward=False)
    for size in ((1280, 720), (1400, 900)):
        with chromium(size) as context:
            for name, anim in (("encoder", encoder), ("hvp", hvp)):
                page, root = open_player(context, anim.save(tmp_path / f"{name}.html"))
                assert root.evaluate("r => r.querySelectorAll('.gv-stage g.cluster > text').length") >= 1
                for k in range(len(anim.frames)):
                    root.evaluate(f"r => r.__gv.go({k}, false)")
                    assert root.evaluate(CAPTIONS_CUT) == [], (name, size, k, anim.frames[k].title)
                page.close()
