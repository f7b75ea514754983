"""An 8-wide grid of four-digit numbers fits the step panel at 1280×720: the grids in a running-sum
row (a tied weight's .grad after EmbeddingBackward0 sends its part) are set at the grids' own size, not the row's
larger text, so none is cut at the panel's right edge; and a player in a page's column (the course site's,
960 px wide at 1280×720) keeps its panel wide enough for an MLP's (6, 8) gradients."""
import re

import pytest

import gradviz as torch
from tests.support.browser_support import chromium, open_player

pytestmark = pytest.mark.browser

# grids (a heatmap's table of every number aside) whose box ends right of their own box or the panel's
CUT = """(root) => {
  const panel = root.querySelector('.gv-panel'), right = panel.getBoundingClientRect().left + panel.clientWidth;
  return [...panel.querySelectorAll('span.gv-tensor')].filter(s => s.scrollWidth > s.clientWidth + 1
    || s.getBoundingClientRect().right > right + 1).map(s => s.textContent.slice(0, 40));
}"""


def test_an_embeddings_grids_fit_the_panel(tmp_path):
    torch.manual_seed(0)
    wte = torch.nn.Embedding(8, 8)
    idx = torch.tensor([1, 2, 5, 2])
    # the weight used twice, as a GPT's is by its lm_head: its .grad a running sum of numbers like -0.01962
    loss = (wte(idx) * torch.randn(4, 8) * 0.03).sum() + (wte.weight * torch.randn(8, 8) * 0.03).sum()
    anim = torch.animate(loss, names={"wte": wte})
    step = next(k for k, f in enumerate(anim.frames) if f.title.startswith("backward") and "EmbeddingBackward0" in f.title)
    assert "gv-running" in anim.frames[step].text
    path = anim.save(tmp_path / "embedding.html")
    with chromium((1280, 720)) as context:
        _, root = open_player(context, path)
        root.evaluate(f"r => r.__gv.go({step}, false)")
        assert root.evaluate("r => r.querySelectorAll('.gv-panel tr.gv-running table.gv-grid').length") >= 2
        assert root.evaluate(CUT) == []


def test_eight_columns_of_ten_character_numbers_fit_the_panel(tmp_path):
    torch.manual_seed(0)
    a = torch.randn(4, 8, requires_grad=True)
    loss = (a.view(32) * torch.randn(32) * 0.001).sum()   # a gradient of numbers like -0.0009205
    anim = torch.animate(loss, names={"a": a})
    step = next(k for k, f in enumerate(anim.frames) if f.title.startswith("backward") and "ViewBackward0" in f.title)
    assert "e-4<" in anim.frames[step].text and "e-04<" not in anim.frames[step].text   # -0.0006136 as -6.136e-4
    path = anim.save(tmp_path / "view.html")
    for size in ((1280, 720), (1400, 900)):
        with chromium(size) as context:
            _, root = open_player(context, path)
            root.evaluate(f"r => r.__gv.go({step}, false)")
            assert root.evaluate(CUT) == []
            sizes = root.evaluate("r => [...r.querySelectorAll('.gv-panel table.gv-grid td')]"
                                  ".map(td => parseFloat(getComputedStyle(td).fontSize))")
            assert sizes and min(sizes) >= 10, (size, min(sizes))


def test_an_mlps_grids_fit_a_player_in_a_pages_column(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    loss = torch.nn.functional.cross_entropy(model(torch.randn(6, 4)), torch.tensor([0, 1, 2, 0, 1, 2]))
    anim = torch.animate(loss, names=model, forward=False)
    # rows of eight numbers, some of nine characters (-0.006864)
    assert any(re.search(r"<tr>(<td[^>]*>[^<]{9}</td>|<td[^>]*>[^<]*</td>){8}</tr>", f.text) for f in anim.frames)
    # the column of the course site's pages (sphinx-book-theme) at each window size
    for size, column in (((1280, 720), 960), ((1400, 900), 1056)):
        path = tmp_path / f"column-{column}.html"
        path.write_text(f"<!DOCTYPE html><html><head><meta charset='utf-8'></head><body style='margin: 0'>"
                        f"<div style='width: {column}px'>{anim._repr_html_()}</div></body></html>", encoding="utf-8")
        with chromium(size) as context:
            _, root = open_player(context, path)
            for k in range(len(anim.frames)):
                root.evaluate(f"r => r.__gv.go({k}, false)")
                assert root.evaluate(CUT) == [], (size, anim.frames[k].title)


def test_a_heatmaps_numbers_are_never_broken_across_lines(tmp_path):
    """A big gradient's caption, "(4, 6, 128, 64) from -0.0001336 to 0.0001924, mean 7.722e-08", wraps
    between words in a narrow panel, never inside a number (Chromium breaks 7.722e-08 after its "-")."""
    torch.manual_seed(0)
    x = torch.randn(4, 6, 128, 64, requires_grad=True)
    loss = (x * (torch.randn(4, 6, 128, 64) * 1e-4)).sum()
    anim = torch.animate(loss, names={"x": x}, forward=False)
    step = next(k for k, f in enumerate(anim.frames) if "MulBackward0" in f.title)
    assert re.search(r'mean <span class="gv-num">-?[\d.]+e-\d+</span>', anim.frames[step].text)
    path = anim.save(tmp_path / "heatmap.html")
    for size in ((1024, 768), (1280, 720), (1400, 900)):
        with chromium(size) as context:
            _, root = open_player(context, path)
            root.evaluate(f"r => r.__gv.go({step}, false)")
            numbers = root.evaluate("r => [...r.querySelectorAll('.gv-panel .gv-num')]"
                                    ".map(n => [n.textContent, n.getClientRects().length])")
            assert numbers and all(lines == 1 for _, lines in numbers), (size, numbers)
