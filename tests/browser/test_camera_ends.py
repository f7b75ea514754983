"""The camera frames both ends of the running node's edges, or says which it leaves out.

On every backward step of the three browser-test programs (a Barlow-style loss, an MLP with
cross-entropy, the doubling loop), at 1280×720 and 1400×900, every node at the other end of an
edge of the running node (those it sends gradient to, and those that sent it gradient) is inside
the graph's viewport, or a visible note in the viewport names it.
"""
import pytest

from tests.support.browser_support import chromium, open_player
from tests.support.player_programs import PROGRAMS, animation

pytestmark = pytest.mark.browser

ENDS = """([root, ks]) => {
  const data = JSON.parse(root.querySelector('script.gv-data').textContent);
  const stage = root.querySelector('.gv-stage');
  const els = {};
  stage.querySelectorAll('g.node[id], g.edge[id]').forEach(g => { els[g.id] = g; });
  const touching = {};
  for (const g of Object.values(els)) {
    const t = g.querySelector(':scope > title'), m = t && /^(.*?)->(.*)$/.exec(t.textContent);
    if (!m || !els[m[1]] || !els[m[2]]) continue;
    (touching[m[1]] = touching[m[1]] || []).push(m[2]);
    (touching[m[2]] = touching[m[2]] || []).push(m[1]);
  }
  return ks.map(k => {
    root.__gv.go(k);
    const s = stage.getBoundingClientRect(), note = root.querySelector('.gv-offscreen');
    const noted = note && !note.hidden && note.getBoundingClientRect().height > 0 ? note.textContent : '';
    const node = data.frames[k].n, missing = [];
    for (const n of touching[node] || []) {
      const b = els[n].getBoundingClientRect();
      const inside = b.left >= s.left - 1 && b.right <= s.right + 1 && b.top >= s.top - 1 && b.bottom <= s.bottom + 1;
      const name = els[n].querySelector('text').textContent.trim();
      if (!inside && !noted.includes(name)) missing.push(name);
    }
    return {frame: k, node, ends: (touching[node] || []).length, missing, noted};
  });
}"""


@pytest.fixture(scope="module")
def players(tmp_path_factory):
    out = tmp_path_factory.mktemp("players")
    return {name: animation(name).save(out / f"{name}.html") for name in PROGRAMS}


@pytest.mark.parametrize("viewport", [(1280, 720), (1400, 900)], ids=["1280x720", "1400x900"])
def test_both_ends_of_the_running_nodes_edges_are_shown_or_named(players, viewport):
    with chromium(viewport) as context:
        for name, path in players.items():
            page, root = open_player(context, path)
            backward = root.evaluate("r => JSON.parse(r.querySelector('script.gv-data').textContent).frames"
                                     ".map((f, k) => f.t.startsWith('backward') ? k : -1).filter(k => k >= 0)")
            assert backward, name
            seen = page.evaluate(ENDS, [root.element_handle(), backward])
            for step in seen:
                assert step["ends"] >= 1, (name, step)
                assert not step["missing"], f"{name} at {viewport}: {step}"
            page.close()
