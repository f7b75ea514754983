"""The Stepper steps a forward-mode animation: the same frames as the saved player, one per Next."""
import pytest

import gradviz

pytest.importorskip("anywidget")


def test_stepper_steps_the_recorded_forward_frames():
    def f(x, w):
        h = x.sin() * w
        return h.sum()

    anim = gradviz.animate_jvp(f, (gradviz.tensor([0.5, 1.0]), gradviz.tensor([2.0, -1.0])),
                               (gradviz.tensor([1.0, 0.0]), gradviz.tensor([0.0, 1.0])))
    s = anim.stepper()
    assert s.position == 0 and len(s.frames) == 1 and not s.finished and s.total == len(anim.frames)
    assert "forward mode: arrows point the way the tangent flows" in s.markup and "backward: arrows" not in s.markup
    s.next()
    assert s.position == 1 and s.frames[1] == anim.frames[1].to_json()
    assert "forward mode 1/3 · sin" in s.panel()
    s.run_to_end()
    assert s.finished and s.position == len(anim.frames) - 1 and s.frames == [f.to_json() for f in anim.frames]
    assert len(s.recorded) == len(s.steps) == 3
    s.prev()
    assert s.position == len(anim.frames) - 2
    s._on_msg(s, {"go": 1}, [])            # the browser asks for a frame
    assert s.position == 1
    s.reset()
    assert s.position == 0 and len(s.frames) == 1 and s.now == ""
