"""ForwardStepper: the notebook Stepper over a recorded forward-mode animation.

Forward mode cannot pause inside `func` (the tangents are computed while it runs), so the
stepper steps through what was recorded: Next asks Python for the next op's frame, the same
frames the saved player shows, in the same front end (the Stepper's script and stylesheet);
Prev replays, Reset starts again from the tangents.
"""
from __future__ import annotations

import os

import anywidget

from . import codeview
from .html import _uids, markup, with_key
from .widget import Stepper


class ForwardStepper(Stepper):
    """The Stepper's controls over a ForwardAnimation (animate_jvp, animate_hvp, record_forward)."""

    def __init__(self, animation):
        anywidget.AnyWidget.__init__(self)     # Stepper.__init__ records a backward: none here
        self.animation = animation
        self.trace = animation.trace
        self.stage = animation.stage
        first = animation.frames[0]
        uid = f"gv-stepper-{os.getpid()}-{next(_uids)}"
        with self.hold_sync():
            self.markup = with_key(markup(uid, self.stage.render(animation.state(0), first.labels), 1, first.title,
                                          first.text, code=codeview.listing(self.trace)), animation.legend)
            self.lines = codeview.line_keys(self.trace)
            self.mid = {k: [round(x, 1), round(y, 1), 1 if left else 0]
                        for k, (x, y, left) in self.stage.place().items()}
            self.interval = animation.interval_ms
            self.zero = animation.seeded
        self.on_msg(self._on_msg)
        self._start()

    def _start(self) -> None:
        self._frames_json = [self.animation.frames[0].to_json()]
        self._expected = len(self.animation.frames) - 1
        self._is_finished = len(self.animation.frames) == 1
        self._publish(0)

    def _advance(self, refold: bool = True) -> bool:
        k = len(self._frames_json)
        if k >= len(self.animation.frames):
            self._is_finished = True
            return False
        self._frames_json.append(self.animation.frames[k].to_json())
        self._is_finished = k + 1 == len(self.animation.frames)
        return True

    def _refold(self) -> None:
        """Nothing to fold: the frames are the animation's, published as they are."""

    def reset(self) -> "ForwardStepper":
        self._start()
        return self

    @property
    def steps(self) -> list:
        return self.trace.tangents

    @property
    def recorded(self) -> list:
        """The frames sent so far after the first (frame k of the player is recorded[k - 1])."""
        return self.animation.frames[1:len(self._frames_json)]

    def _grads_now(self) -> str:
        return ""   # forward mode writes no .grad

    def __repr__(self) -> str:
        return f"<gradviz.ForwardStepper: step {self.position} of {len(self.animation.frames) - 1}>"
