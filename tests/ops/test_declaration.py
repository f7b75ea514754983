"""An op is declared once: a record with its exposure, in a module of its own, is all it takes for the
op to be gradviz.NAME (with out=), Tensor.NAME, a row of docs/ops.md (its Unicode derived from the
record's LaTeX) and, with its one row in tests/ops/cases.py, a case of the gradcheck table."""
import importlib
import sys

import numpy as np

import gradviz
from gradviz import reference
from gradviz.functions import declared
from gradviz.ops import registry
from tests.ops.cases import section
from tests.ops.test_registry import _differentiable, _reached

SOURCE = r'''
from gradviz.ops.op import Exposure, Op

CUBE_IT = Op("cube_it", "CubeItBackward0", r"$c = $0^3", lambda xp, a: a * a * a,
             vjp=(lambda xp, g, c, a: 3 * g * a * a,), vjp_latex=(r"3 \bar{g} \odot $0^2",), saves=("self",),
             jvp="pointwise", expose=Exposure("cube_it", out=True, make="unary_float"))
'''

V = np.array([[0.3, -1.6, 0.7], [1.4, -0.45, 2.1]])


def test_a_record_with_its_exposure_is_everywhere(tmp_path, monkeypatch):
    (tmp_path / "throwaway_ops.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("throwaway_ops")
    try:
        assert gradviz.declare_ops(module) == ["cube_it"]
        x = gradviz.tensor(V, requires_grad=True)
        y = gradviz.cube_it(x)
        assert y.grad_fn.name() == "CubeItBackward0"
        np.testing.assert_allclose(x.cube_it().detach().numpy(), V ** 3)
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 3 * V ** 2)
        out = gradviz.empty(2, 3, dtype=gradviz.float64)
        assert gradviz.cube_it(x.detach(), out=out) is out
        np.testing.assert_allclose(out.numpy(), V ** 3)
        assert gradviz.cube_it(gradviz.tensor([2])).dtype == gradviz.float32   # an integer input becomes float

        assert "| `CUBE_IT` | CubeItBackward0 | c = a³ | self: 3ḡ ⊙ a² | `Tensor.cube_it`, `gradviz.cube_it` |" \
            in reference.markdown()

        # the one test row an op adds to tests/ops/cases.py, which the registry's coverage check reads
        rows = section("function", ("gradcheck", "parity"), [("cube_it", lambda t, x: t.cube_it(x), [V])])
        assert "throwaway_ops.CUBE_IT" in _differentiable()
        assert rows[0].runs("gradcheck") and id(module.CUBE_IT) in _reached(rows)
        assert gradviz.autograd.gradcheck(gradviz.cube_it, (gradviz.tensor(V, requires_grad=True),))
        assert gradviz.autograd.forward_ad.rule_kind(module.CUBE_IT) == "pointwise"
    finally:
        registry.discard(module)
        declared._made.pop(module.CUBE_IT, None)
        for space in (gradviz, gradviz.functions, gradviz.Tensor):
            if "cube_it" in vars(space):
                delattr(space, "cube_it")
        sys.modules.pop("throwaway_ops", None)
    assert not hasattr(gradviz, "cube_it") and "CubeItBackward0" not in reference.markdown()
