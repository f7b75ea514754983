"""`make assets`: screenshots of the saved player at three steps, in light and dark, into assets/.

  python tests/player_screenshots.py [OUT_DIR]

The Barlow-style loss of player_programs at 1280×720 in headless Chromium: backward's first
step, a step in the middle and the last step, each in the light and the dark scheme
(assets/player-<scheme>-<k>.png). The README shows them.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from browser_support import chromium
from player_programs import animation

OUT = Path(__file__).resolve().parents[1] / "assets"


def main(out: Path = OUT) -> list:
    out.mkdir(parents=True, exist_ok=True)
    anim = animation("barlow", forward=False)
    n = len(anim.frames)
    picks = {"first": 0, "middle": n // 2, "last": n - 1}
    written = []
    with tempfile.TemporaryDirectory() as tmp, chromium((1280, 720)) as context:
        path = anim.save(Path(tmp) / "barlow.html")
        for scheme in ("light", "dark"):
            page = context.new_page()
            page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
            page.goto(path.as_uri())
            root = page.locator(".gv-player")
            root.wait_for()
            for label, k in picks.items():
                root.evaluate(f"r => r.__gv.go({k})")
                page.wait_for_timeout(150)
                target = out / f"player-{scheme}-{label}.png"
                page.screenshot(path=str(target))
                written.append(target)
            page.close()
    return written


if __name__ == "__main__":
    for p in main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT):
        print(p)
