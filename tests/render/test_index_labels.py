"""An indexing node's label says where it reads or writes as Python writes it: `x[1:4]`, `x[:, ::2]`,
`c[:, idx] += src`, from the node's own dim, slice and shape, on gradviz's engine and on torch's
(whose SliceBackward0 keeps x[1:]'s end as 2⁶³ − 1 and a negative start as it was given)."""
from __future__ import annotations

import pytest

import gradviz
from gradviz.render.formula import along, slice_text


def _loss(lib):
    lib.manual_seed(0)
    x = lib.randn(6, 4, requires_grad=True)
    idx = lib.tensor([0, 2])
    parts = [x[1:4], x[:, :3], x[::2], x[-3:], x[:, :3:2], x[2:-1][:, 1:],
             lib.zeros(6, 4).index_add(1, idx, x[:, :2]), x.index_fill(0, idx, 0.0),
             lib.zeros(6, 4).index_copy(0, idx, x[:2])]
    return sum(p.sum() for p in parts), x


@pytest.mark.parametrize("lib", ["gradviz", "torch"])
def test_slices_and_index_writes_read_as_python_writes_them(lib):
    loss, x = _loss(pytest.importorskip("torch") if lib == "torch" else gradviz)
    source = gradviz.draw(loss, names={"x": x}).source
    for want in ("= x[1:4]", "= x[:, :3]", "= x[::2]", "= x[3:]", "= x[:, :3:2]", "[:, 1:]",
                 "[:, idx] += ", "[idx] = 0" if lib == "gradviz" else "[idx] = v"):   # torch saves no fill value
        assert want in source, (lib, want)
    assert "start:end" not in source and "…, idx" not in source and "9223372036854775807" not in source


def test_along_and_slice_text():
    assert along(1, 3, "i") == r":,\, i" and along(-1, 3, "i") == r":,\, :,\, i"
    assert along(-2, None, "i") == r"\dots,\, i,\, :" and along(0, None, "i") == "i"
    assert slice_text(1, 2 ** 63 - 1, 1, 6) == "1{:}" and slice_text(-3, 2 ** 63 - 1, 1, 6) == "3{:}"
    assert slice_text(0, 6, 2, 6) == "{:}{:}2" and slice_text(0, 3, 1, None) == "{:}3"
    assert slice_text(1, 2 ** 63 - 1, 1, None) == "1{:}"


@pytest.mark.parametrize("lib", ["gradviz", "torch"])
def test_select_and_index_select_read_as_python_writes_them(lib):
    module = pytest.importorskip("torch") if lib == "torch" else gradviz
    x = module.randn(3, 4, 5, requires_grad=True)
    loss = x[:, 2].sum() + x[1].sum() + x[..., -1].sum() + x.index_select(2, module.tensor([0, 3])).sum()
    source = gradviz.draw(loss, names={"x": x}).source
    for want in ("= x[:, 2]", "= x[1]", "= x[:, :, 4]", "= x[:, :, idx]"):
        assert want in source, (lib, want)
    assert "along dim" not in source
