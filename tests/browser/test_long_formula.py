"""A long formula in the step panel wraps after its `=` and between its terms instead of running past
the panel's edge: a VAE's summed binary cross-entropy at 1280×720 and a CNN's convolutions, on the gradviz
and the torch path; a term still too wide scrolls in its own box, with a shade at the edge it hides."""
import io

import pytest
from PIL import Image

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


# Each <math> of the panel that runs past the edge of the box it is seen in (its own scrolling box, or
# the panel): [(px past, text)]; and whether the panel itself scrolls sideways
CUT = """r => { const p = r.querySelector('.gv-panel'), out = [];
  if (p.scrollWidth > p.clientWidth + 1) out.push(['panel', p.scrollWidth - p.clientWidth]);
  p.querySelectorAll('math').forEach(m => { const box = m.closest('.gv-mathwide') || p, b = box.getBoundingClientRect(),
    right = b.left + box.clientLeft + box.clientWidth, mr = m.getBoundingClientRect();
    if (mr.width && mr.right > right + 0.5) out.push([Math.round(mr.right - right), m.textContent.slice(0, 40)]); });
  return out; }"""


def cnn(lib, weight_name=None):
    """A small CNN's loss: gradviz's own nn.Conv2d or a torch model, named by `model=` (model.0.weight),
    or with its first convolution's weight given a long name."""
    torch = gv if lib == "gradviz" else pytest.importorskip("torch")
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 2, 3, stride=2), nn.Flatten(),
                          nn.Linear(18, 3))
    loss = nn.functional.cross_entropy(model(torch.randn(2, 1, 8, 8)), torch.tensor([0, 2]))
    if weight_name is None:
        return gv.animate(loss, model=model)
    return gv.animate(loss, names={weight_name: model[0].weight, "bias": model[0].bias, "loss": loss})


@pytest.mark.parametrize("lib", ["gradviz", "torch"])
@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)], ids=["1280x720", "1024x768"])
def test_a_convolutions_index_form_wraps_between_its_terms(lib, size, tmp_path):
    """y[n, o, p] = model.2.bias[o] + Σ model.2.weight[o, i, k] x[n, i, sp + dk − q] is wider than the
    panel: it wraps before its + and every formula of a convolution's step is seen whole."""
    anim = cnn(lib)
    path = anim.save(tmp_path / "cnn.html")
    conv = [i for i, f in enumerate(anim.frames) if "ConvolutionBackward0" in f.title]
    assert len(conv) == 4
    with chromium(size) as context:
        page, root = open_player(context, path)
        for k in conv:
            root.evaluate(f"r => r.__gv.go({k}, false)")
            assert root.evaluate(CUT) == [], k
        page.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_term_wider_than_the_panel_scrolls_in_its_box_with_a_shade(scheme, tmp_path):
    """A term too wide for the panel at 1024×768 (a long parameter name) scrolls in its own box, and a shade
    at the box's edge shows which side more of it is hidden on: the right at first, the left at the end."""
    anim = cnn("gradviz", weight_name="encoder.stage1.block0.conv.weight")
    path = anim.save(tmp_path / "wide.html")
    k = next(i for i, f in enumerate(anim.frames) if "ConvolutionBackward0" in f.title)
    with chromium((1024, 768)) as context:
        page, root = open_player(context, path)
        page.emulate_media(color_scheme=scheme)
        root.evaluate(f"r => r.__gv.go({k}, false)")
        box = page.locator(".gv-panel .gv-mathwide", has_text="encoder.stage1.block0.conv.weight[").first
        assert box.evaluate("b => b.scrollWidth > b.clientWidth + 10")
        # its text hidden (the formula and the punctuation after it): what is left is the box's own paint
        box.evaluate("b => { b.style.color = 'transparent'; b.querySelectorAll('math').forEach(m => { m.style.visibility = 'hidden'; }); }")

        def edges():
            im = Image.open(io.BytesIO(box.screenshot())).convert("RGB")
            y = im.height // 2
            return im.getpixel((1, y)), im.getpixel((im.width // 2, y)), im.getpixel((im.width - 2, y))
        left, middle, right = edges()
        assert left == middle and right != middle, (left, middle, right)
        box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
        left, middle, right = edges()
        assert left != middle and right == middle, (left, middle, right)
        page.close()
