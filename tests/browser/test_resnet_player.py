"""A real PyTorch ResNet-18 (64×64, `model=`) in the saved player, its blocks opened in place: the banner
naming the opened box never covers the running node, and every step inside a block is readable in a
1024×768 window, where the stage is about 515 px wide."""
import pytest

import gradviz
from tests.support.browser_support import chromium, open_player
from tests.support.player_checks import SEE_STEP

pytestmark = pytest.mark.browser

SIZES = [(1280, 720), (1400, 900), (1024, 768)]

# the running node's box and the banner's, in the stage on screen (an opened box's)
UNDER_BANNER = """r => { const st = r.querySelector('.gv-stage.gv-inset:not([hidden])'),
  g = st.querySelector('g[id="' + r.dataset.node + '"]'), b = st.querySelector('.gv-inset-title').getBoundingClientRect();
  if (!g) return null;
  const n = g.getBoundingClientRect();
  return n.right > b.left && n.left < b.right && n.bottom > b.top && n.top < b.bottom; }"""


@pytest.fixture(scope="module")
def resnet(tmp_path_factory):
    pytest.importorskip("torch")
    from tests.support.torch_models import make_resnet18
    case = make_resnet18()
    anim = gradviz.animate(case.loss(), model=case.model)
    path = anim.save(tmp_path_factory.mktemp("resnet") / "resnet.html")
    # layer1's two blocks and layer2's first (with its downsample), in forward and in backward
    blocks = [i for i, f in enumerate(anim.frames) if f.inner and f.node in anim.inside.boxes
              and anim.inside.boxes[f.node]["title"].endswith("(BasicBlock)")]
    return anim, path, blocks[:3] + blocks[-3:]


def steps_inside(root, k):
    """Open the box of frame k and yield after each of its steps, in order (the camera comes from the
    step before, as when a learner steps)."""
    root.evaluate(f"r => {{ r.__gv.go({k}, false); r.__gv.open(0); }}")
    n = root.evaluate("r => r.__gv.opened().length")
    for j in range(n):
        if j:
            root.evaluate("r => r.__gv.next()")
        yield j
    root.evaluate("r => r.__gv.close()")


@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_the_opened_banner_never_covers_the_running_node(resnet, size):
    anim, path, blocks = resnet
    with chromium(size) as context:
        page, root = open_player(context, path)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        for k in blocks:
            for j in steps_inside(root, k):
                assert root.evaluate(UNDER_BANNER) is False, (k, j, root.evaluate("r => r.dataset.node"))
        assert errors == []


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_step_inside_a_block_is_readable_in_a_small_window(resnet, scheme):
    """A BatchNorm node names its parameters (layer1.0.bn1.weight): its label wraps between the formula's
    terms, so the running node fits the 515-px stage at a readable size."""
    anim, path, blocks = resnet
    with chromium((1024, 768)) as context:
        page, root = open_player(context, path)
        page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        batchnorms = 0
        for k in blocks:
            for j in steps_inside(root, k):
                seen = root.evaluate(SEE_STEP)
                assert seen["inStage"] and seen["onScreen"] and seen["unobstructed"] and not seen["sideways"], (k, j, seen)
                assert seen["textPx"] >= 10, (k, j, seen)
                batchnorms += "NativeBatchNormBackward0" in root.evaluate("r => r.querySelector('.gv-title').textContent")
        assert batchnorms >= 8
        assert errors == []
