"""A real PyTorch model's player shows the learner's code: at every frame the highlighted line is the
one the Trace says made the node at work (an MLP and a small CNN, recorded under record_forward), and
at a folded box's frames the lines that made the ops inside, light at 1280x720 and dark at 1400x900."""
import pytest

from gradviz.player import codeview
from tests.support.browser_support import chromium, open_player
from tests.support.player_checks import SEE_STEP

torch = pytest.importorskip("torch")

import gradviz  # noqa: E402
from gradviz.torch_bridge import record_forward  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.torch]
nn, F = torch.nn, torch.nn.functional


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 6), nn.Linear(6, 3)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        return self.fc2(h)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.fc = nn.Linear(2 * 3 * 3, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return self.fc(x.flatten(1))


def players(tmp_path) -> list:
    """(path, Trace) of each model's saved player, its forward recorded with lines."""
    torch.manual_seed(0)
    made = []
    for model, x in ((MLP(), torch.randn(5, 4)), (CNN(), torch.randn(2, 1, 8, 8))):
        y = torch.tensor([0, 1, 2, 0, 1][:len(x)])
        with record_forward(model):
            loss = F.cross_entropy(model(x), y)
        animation = gradviz.animate(loss, model=model, max_nodes=None)
        made.append((animation.save(tmp_path / f"{type(model).__name__}.html"), animation.trace))
    return made


LIT = """(root) => { const el = root.querySelector('.gv-code .gv-current');
  return el ? {key: el.dataset.line, text: el.textContent, node: root.dataset.node,
               keys: [...root.querySelectorAll('.gv-code .gv-current')].map(e => e.dataset.line),
               visible: (() => { const c = root.querySelector('.gv-code').getBoundingClientRect(), r = el.getBoundingClientRect();
                                 return r.top >= c.top - 1 && r.bottom <= c.bottom + 1; })()} : {node: root.dataset.node}; }"""


@pytest.mark.parametrize("size, scheme", [((1280, 720), "light"), ((1400, 900), "dark")])
def test_a_folded_boxs_frames_highlight_the_lines_that_made_its_ops(tmp_path, size, scheme):
    torch.manual_seed(0)
    model = CNN()
    with record_forward(model):
        loss = F.cross_entropy(model(torch.randn(2, 1, 8, 8)), torch.tensor([0, 1]))
    animation = gradviz.animate(loss, model=model, collapse="conv (Conv2d)")
    path, trace = animation.save(tmp_path / "folded.html"), animation.trace
    members = animation.inside.members
    assert members, "the conv module is drawn as one box"
    with chromium(size) as context:
        page, root = open_player(context, path)
        page.emulate_media(reduced_motion="reduce", color_scheme=scheme)
        seen = set()
        for k in range(root.evaluate("r => r.__gv.length()")):
            root.evaluate("(r, k) => r.__gv.go(k)", k)
            lit = root.evaluate(LIT)
            if lit["node"] not in members:
                continue
            made = {n.id: n for n in trace.nodes}
            ops = [made[i] for i in members[lit["node"]] if made[i].kind == "op" and made[i].source is not None]
            expected = sorted({codeview.line_keys(trace)[n.id] for n in ops})
            assert sorted(lit["keys"]) == expected and lit["visible"], (k, lit)   # the box's ops' lines, in sight
            seen.add(lit["node"])
        assert seen == set(members)
        page.close()


@pytest.mark.parametrize("size, scheme", [((1280, 720), "light"), ((1400, 900), "dark")])
def test_every_frame_highlights_the_line_that_made_its_node(tmp_path, size, scheme):
    with chromium(size) as context:
        page = context.new_page()
        page.emulate_media(reduced_motion="reduce", color_scheme=scheme)
        for path, trace in players(tmp_path):
            keys, index = codeview.line_keys(trace), {n.id: n for n in trace.nodes}
            assert keys, path.name
            page.goto(path.as_uri())
            root = page.locator(".gv-player").first
            root.wait_for()
            frames = root.evaluate("r => r.__gv.length()")
            lit_nodes = set()
            for k in range(frames):
                root.evaluate("(r, k) => r.__gv.go(k)", k)
                lit = root.evaluate(LIT)
                node = index.get(lit["node"])
                if node is None or node.source is None:
                    assert "key" not in lit, (path.name, k, lit)     # no line is made up
                    continue
                assert lit["key"] == keys[node.id], (path.name, k, lit)
                assert lit["text"].endswith(node.source[2]) and lit["visible"], (path.name, k, lit)
                assert not root.evaluate(SEE_STEP)["sideways"]
                lit_nodes.add(node.id)
            assert lit_nodes == set(keys), path.name     # every node with a line was shown with it
        page.close()
