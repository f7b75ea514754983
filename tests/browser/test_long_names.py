"""Long variable names in a small window: the step panel's prose wraps inside the panel instead of
running off its right edge (800×600, every frame)."""
import pytest

import gradviz as torch
from tests.support.browser_support import chromium, open_player

pytestmark = pytest.mark.browser

# Words of the panel's prose (not its MathML or grids) whose box ends right of the panel's text column
OVERFLOWING = """(root) => {
  const panel = root.querySelector('.gv-panel'), box = panel.getBoundingClientRect();
  const right = box.left + panel.clientWidth, out = [];
  const walk = document.createTreeWalker(panel, NodeFilter.SHOW_TEXT);
  for (let t = walk.nextNode(); t; t = walk.nextNode()) {
    if (!t.textContent.trim() || t.parentElement.closest('math, table.gv-grid, .gv-code, details')) continue;
    const range = document.createRange();
    range.selectNodeContents(t);
    if ([...range.getClientRects()].some(r => r.right > right + 1)) out.push(t.textContent.slice(0, 60));
  }
  return out;
}"""


def test_long_names_wrap_in_the_panel(tmp_path):
    the_very_long_input_tensor_name = torch.tensor([1.0, 2.0], requires_grad=True)
    another_extremely_long_weight_name = torch.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    loss = ((another_extremely_long_weight_name @ the_very_long_input_tensor_name) ** 2).sum()
    anim = torch.animate(loss)
    path = anim.save(tmp_path / "long.html")
    assert "another_extremely_long_weight_name" in path.read_text()
    with chromium((800, 600)) as context:
        _, root = open_player(context, path)
        for k in range(len(anim.frames)):
            root.evaluate(f"r => r.__gv.go({k}, false)")
            assert root.evaluate(OVERFLOWING) == [], k
