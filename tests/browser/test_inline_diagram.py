"""A diagram inline in a notebook output never sets its text below 10 CSS px.

draw()'s HTML, as a notebook shows it, in an output area as wide as JupyterLab gives one at 1280
and 1400 px windows: every label the view shows is at least 10 CSS px (a drawing too big for that
opens on its start, to be panned), and a small diagram grows to use the width it is given.
"""
import html

import pytest

import gradviz as torch
from tests.support.browser_support import chromium

pytestmark = pytest.mark.browser

TEXT_PX = """root => {
  const stage = root.querySelector('.gv-stage'), s = stage.getBoundingClientRect(), sizes = [];
  for (const t of root.querySelectorAll('svg text')) {
    const r = t.getBoundingClientRect(), b = t.getBBox();
    if (!b.height || r.right < s.left || r.left > s.right || r.bottom < s.top || r.top > s.bottom) continue;
    sizes.push(parseFloat(t.getAttribute('font-size')) * r.height / b.height);
  }
  return {smallest: Math.min(...sizes), shown: sizes.length, stageWidth: s.width,
          outputWidth: root.parentElement.getBoundingClientRect().width};
}"""


def diagrams():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 2
    while y.norm() < 1000:
        y = y * 2
    loop = {"x": x, "y": y}
    z1 = torch.randn(6, 3, requires_grad=True)
    z2 = torch.randn(6, 3, requires_grad=True)
    c = ((z1 - z1.mean(0)) / z1.std(0)).T @ z2 / 6
    loss = -torch.diagonal(c).sum()
    small = x.pow(3).sum()
    return {"doubling": torch.draw(y, names=loop, show_values=False),
            "doubling, left to right": torch.draw(y, names=loop, rankdir="LR", show_values=False),
            "barlow": torch.draw(loss, names={"z1": z1, "z2": z2, "loss": loss}),
            "small": torch.draw(small, names={"x": x})}


@pytest.mark.parametrize("width", [1280, 1400])
def test_inline_diagram_text_is_at_least_10px(width, tmp_path):
    with chromium((width, 800)) as context:
        page = context.new_page()
        for name, diagram in diagrams().items():
            # a notebook output: the window less JupyterLab's side bar and the cell's prompt
            path = tmp_path / f"{width}.html"
            path.write_text(f"<!doctype html><meta charset=utf-8><title>{html.escape(name)}</title>"
                            f'<body style="margin:0"><div style="margin-left:180px;width:{width - 220}px">'
                            f"{diagram._repr_html_()}</div>", encoding="utf-8")
            page.goto(path.as_uri())
            root = page.locator(".gv-diagram").first
            root.wait_for()
            seen = root.evaluate(TEXT_PX)
            assert seen["shown"] > 0 and seen["smallest"] >= 9.99, (name, width, seen)
            if name == "small":   # a small drawing uses the width it is given (up to 1.6×)
                assert seen["smallest"] > 10.5, (name, width, seen)
        page.close()


WHOLE = """root => {
  const s = root.querySelector('.gv-stage').getBoundingClientRect(), cut = [];
  for (const n of root.querySelectorAll('svg g.node')) {
    const r = n.getBoundingClientRect();
    if (r.top < s.top - 0.5 || r.bottom > s.bottom + 0.5 || r.left < s.left - 0.5 || r.right > s.right + 0.5)
      cut.push(n.id);
  }
  return {cut, nodes: root.querySelectorAll('svg g.node').length, stageHeight: s.height};
}"""


@pytest.mark.parametrize("size", [(1280, 720), (1400, 900)])
def test_a_tall_diagram_shows_whole_without_panning(size, tmp_path):
    """The doubling loop's chain (notebook 2) is taller than the window: it is shown whole at its drawn
    size, its last y in view once the page is scrolled, not clipped by the stage to be panned to."""
    diagram = diagrams()["doubling"]
    with chromium(size) as context:
        page = context.new_page()
        path = tmp_path / "tall.html"
        path.write_text(f'<!doctype html><meta charset=utf-8><body style="margin:0"><div style="margin-left:180px;'
                        f'width:{size[0] - 220}px">{diagram._repr_html_()}</div>', encoding="utf-8")
        page.goto(path.as_uri())
        root = page.locator(".gv-diagram").first
        root.wait_for()
        seen = root.evaluate(WHOLE)
        assert seen["nodes"] > 10 and not seen["cut"], seen
        assert seen["stageHeight"] > 0.8 * 720, seen   # taller than the stage once let it be (80% of 720 px)
        assert root.evaluate(TEXT_PX)["smallest"] >= 9.99
        page.close()
