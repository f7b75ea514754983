"""Step through backward: animations of the chain rule and of VJP propagation.

Public API:
  animate(*tensors, gradient=None, names=None, model=None, forward=True, ...) -> Animation
      a recorded run as a self-contained HTML player (.save("x.html"), .save("x.gif"), inline in notebooks)
  step(*tensors, gradient=None, names=None, model=None, ...) -> Stepper
      a notebook widget (the same player) whose Next runs the real backward one node at a time
  Both take gradviz tensors or real torch tensors (recorded through origins.record: one Recording
  of gradviz's engine or of torch's); animate also takes a recorded Trace.
  animate_jvp(func, primals, tangents) -> Animation (.result: jvp's (output, jvp_out))
      forward mode op by op: the tangent flowing forward and each op's JVP; record_forward() records
      other forward-mode code (autograd.functional.jvp/hvp, forward_ad dual tensors) the same way
  animate_hvp(func, inputs, v) -> Animation (.result: hvp's (output, Hv))
      a Hessian-vector product end to end: forward over reverse, the gradient's ops boxed apart
  forward_vs_reverse(f, x) -> JacobianRace
      the Jacobian built both ways on one graph: n forward passes (columns) against m backward passes (rows)
  jacobian_view(f, x, vs=None) -> JacobianView
      the Jacobian of a small function, row by row from one-hot backward passes, and vᵀJ = backward(v)

Modules: frames (Trace -> frames), explain (the step panel), mathtext (values and MathML),
jacobian (one-hot VJPs), forward (forward-mode frames and panel), stage (restyling the laid-out SVG by id), html (Animation),
gif (GIF export), widget (Stepper); assets/ holds the stylesheet, the camera and the player script that
the saved player, the notebook player and the Stepper share (front_end.py reads them; colours come from
render/theme.py).
"""
from .frames import Frame, build_frames, state_at  # noqa: F401
from .html import Animation, animate  # noqa: F401
from .jacobian import JacobianView, jacobian_view, local_jacobians  # noqa: F401
from .forward import ForwardAnimation, animate_hvp, animate_jvp, record_forward  # noqa: F401
from .race import JacobianRace, forward_vs_reverse  # noqa: F401

__all__ = ["animate", "Animation", "step", "Stepper", "jacobian_view", "JacobianView", "local_jacobians",
           "Frame", "build_frames", "state_at", "animate_jvp", "animate_hvp", "record_forward", "ForwardAnimation",
           "forward_vs_reverse", "JacobianRace"]


def __getattr__(name):
    # the widget needs anywidget; importing it only on use keeps animate() free of that dependency
    if name in ("step", "Stepper"):
        from . import widget
        return getattr(widget, name)
    raise AttributeError(f"module 'gradviz.player' has no attribute '{name}'")
