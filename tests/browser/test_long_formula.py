"""A long formula at the top of the step panel wraps after its `=` instead of running past the panel's
edge: a VAE's summed binary cross-entropy at 1280×720, on the gradviz and the torch path."""
import pytest

import gradviz as gv
from tests.support.browser_support import chromium, open_player

pytestmark = pytest.mark.browser

PAST_EDGE = """r => { const p = r.querySelector('.gv-panel'), right = p.getBoundingClientRect().right, out = [];
  p.querySelectorAll('.gv-head math').forEach(m => { const b = m.getBoundingClientRect();
    if (b.width && b.right > right + 0.5) out.push(Math.round(b.right - right)); });
  return out; }"""


def summed_bce(lib):
    torch = gv if lib == "gradviz" else pytest.importorskip("torch")
    F = torch.nn.functional
    torch.manual_seed(0)
    x = torch.randn(4, 6, requires_grad=True)
    t = (torch.rand(4, 6) > 0.5).float()
    loss = F.binary_cross_entropy(torch.sigmoid(x), t, reduction="sum")
    return gv.animate(loss, names={"x": x, "t": t, "loss": loss})


@pytest.mark.parametrize("lib", ["gradviz", "torch"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_long_formula_wraps_inside_the_panel(lib, scheme, tmp_path):
    anim = summed_bce(lib)
    path = anim.save(tmp_path / "bce.html")
    k = next(i for i, f in enumerate(anim.frames) if f.phase == "backward" and "BinaryCrossEntropy" in f.title)
    with chromium((1280, 720)) as context:
        page, root = open_player(context, path)
        page.emulate_media(color_scheme=scheme)
        root.evaluate(f"r => r.__gv.go({k}, false)")
        assert root.evaluate(PAST_EDGE) == []
        page.close()
