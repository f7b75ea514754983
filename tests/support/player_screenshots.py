"""`make assets`: screenshots of the saved player, in light and dark, into assets/.

  python tests/support/player_screenshots.py [OUT_DIR]

At 1280×720 in headless Chromium, each program run from a file with source tracking on (as in a
notebook), so the learner's code is listed beside the graph:
  first, middle, last  the Barlow-style loss of player_programs: backward's first step, one in the
                       middle and the last one
  matrix               the MLP's MmBackward0 step that sends (6, 3) and (5, 6) gradients: grids
  running              a tensor used three times: its running sum drawn as grids added together
  code                 a forward step: the line that made the node is highlighted in the code panel
  jvp                  forward mode (animate_jvp): a layer's tanh pushing its tangent, ḣ = J ȧ with numbers
  race                 forward versus reverse: the first backward pass filling row 0 after 3 forward passes
(assets/player-<scheme>-<name>.png). The README shows them, and the diagram under its first
code block (assets/barlow.svg), drawn by running that block as the README prints it.
"""
from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

from tests.support.browser_support import chromium
from tests.support.player_programs import tracked_animation

OUT = Path(__file__).resolve().parents[2] / "assets"


def picks(folder: Path) -> list:
    """[(name, animation, frame index)] of every screenshot."""
    barlow = tracked_animation("barlow", folder, forward=False)
    n = len(barlow.frames)
    mlp = tracked_animation("mlp", folder)
    fanout = tracked_animation("fanout", folder)

    def node(anim, f):
        return anim.trace.node(f.node)

    matrix = next(f.index for f in mlp.frames if f.phase == "backward" and node(mlp, f).name == "MmBackward0"
                  and "W2" in f.text)
    running = next(f.index for f in fanout.frames if "gv-running" in f.text and "all its consumers" in f.text)
    code = next(f.index for f in fanout.frames if f.phase == "forward"
                and node(fanout, f).source[2].startswith("loss"))
    jvp, race = forward_programs(folder)
    tanh = next(f.index for f in jvp.frames if f.node and jvp.trace.node(f.node).name == "tanh")
    return [("first", barlow, 0), ("middle", barlow, n // 2), ("last", barlow, n - 1),
            ("matrix", mlp, matrix), ("running", fanout, running), ("code", fanout, code),
            ("jvp", jvp, tanh), ("race", race, 3)]


FORWARD = """import gradviz as torch


def layer(x, w, b):
    h = (x @ w + b).tanh()
    s = h.sigmoid() * h
    return s.sum(dim=1)


x = torch.tensor([[0.5, -1.0, 2.0], [0.1, 0.3, -0.2]])
w = torch.tensor([[0.2, -0.5], [0.4, 0.1], [-0.3, 0.6]])
b = torch.tensor([0.1, -0.2])
jvp = torch.animate_jvp(layer, (x, w, b), (torch.ones_like(x), torch.zeros_like(w), torch.tensor([1.0, 0.0])))

W = torch.tensor([[0.5, 0.3, -0.4], [0.2, 0.0, 0.6]])


def f(x):
    h = (W @ x).tanh()
    return h * 2


race = torch.forward_vs_reverse(f, torch.tensor([0.5, -1.0, 2.0]))
"""


def forward_programs(folder: Path) -> tuple:
    """(the animate_jvp player, the forward_vs_reverse view) of FORWARD, run from a file so the code
    panel lists it."""
    import runpy
    path = Path(folder) / "forward.py"
    path.write_text(FORWARD, encoding="utf-8")
    scope = runpy.run_path(str(path))
    return scope["jvp"], scope["race"]


def readme_diagram(out: Path) -> Path:
    """assets/barlow.svg: the README's first code block run up to its draw() line, then drawn."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", readme, re.DOTALL).group(1)
    code = block[:block.index("torch.draw(")]
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    target = out / "barlow.svg"
    scope["torch"].draw(scope["loss"], names=scope["names"]).save(target)
    return target


def main(out: Path = OUT) -> list:
    out.mkdir(parents=True, exist_ok=True)
    written = [readme_diagram(out)]
    with tempfile.TemporaryDirectory() as tmp, chromium((1280, 720)) as context:
        shots = picks(Path(tmp))
        pages = {}
        for _, anim, _ in shots:
            if id(anim) not in pages:
                pages[id(anim)] = anim.save(Path(tmp) / f"player-{len(pages)}.html")
        for scheme in ("light", "dark"):
            for name, anim, k in shots:
                page = context.new_page()
                page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
                page.goto(pages[id(anim)].as_uri())
                root = page.locator(".gv-player")
                root.wait_for()
                root.evaluate(f"r => r.__gv.go({k})")
                page.wait_for_timeout(150)
                target = out / f"player-{scheme}-{name}.png"
                page.screenshot(path=str(target))
                written.append(target)
                page.close()
    return written


if __name__ == "__main__":
    for p in main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT):
        print(p)
