"""The front end every player runs (the saved HTML player, the Stepper widget, the Jacobian view):
the files of gradviz/player/assets, the one stylesheet and the one script."""
from __future__ import annotations

import functools
from pathlib import Path

from ..render.diagram import camera_script
from ..render.theme import css as theme_css

ASSETS = Path(__file__).with_name("assets")


@functools.lru_cache(maxsize=None)
def asset(name: str) -> str:
    """The text of a file in gradviz/player/assets (shared by the HTML player and the widget)."""
    return (ASSETS / name).read_text(encoding="utf-8")


def stylesheet() -> str:
    """The theme's colour variables and the player's rules: the one stylesheet of every player."""
    return theme_css() + asset("player.css") + asset("forward.css") + asset("predict.css")


def script() -> str:
    """The player's script: the camera (with its pan/zoom library), then the player and its predict
    mode (one text, shared by every front end)."""
    return camera_script() + asset("player.js") + asset("predict.js")
