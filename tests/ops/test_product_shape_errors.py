"""The shape errors of the products (mm, matmul and @, bmm, mv, addmm, baddbmm, linear, tensordot)
in PyTorch 2.13's words exactly: no prefix, no hint appended."""
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch


def _z(t, *shape):
    return t.zeros(*shape)


CASES = {
    "mm": lambda t: t.mm(_z(t, 2, 3), _z(t, 4, 5)),
    "mm_self_1d": lambda t: t.mm(_z(t, 3), _z(t, 3, 2)),
    "mm_mat2_1d": lambda t: t.mm(_z(t, 2, 3), _z(t, 3)),
    "mm_both_1d": lambda t: t.mm(_z(t, 3), _z(t, 3)),
    "matmul": lambda t: t.matmul(_z(t, 2, 3), _z(t, 4, 5)),
    "matmul_operator": lambda t: _z(t, 2, 3) @ _z(t, 4, 5),
    "matmul_vector_matrix": lambda t: t.matmul(_z(t, 4), _z(t, 2, 3)),
    "matmul_matrix_vector": lambda t: t.matmul(_z(t, 2, 3), _z(t, 4)),
    "matmul_vectors": lambda t: t.matmul(_z(t, 4), _z(t, 3)),
    "matmul_batched": lambda t: t.matmul(_z(t, 5, 2, 3), _z(t, 5, 4, 5)),
    "matmul_batches_differ": lambda t: t.matmul(_z(t, 5, 2, 3), _z(t, 4, 3, 5)),
    "matmul_batch_vector": lambda t: t.matmul(_z(t, 2, 3, 4), _z(t, 5)),
    "matmul_vector_batch": lambda t: t.matmul(_z(t, 5), _z(t, 2, 3, 4)),
    "bmm": lambda t: t.bmm(_z(t, 5, 2, 3), _z(t, 5, 4, 5)),
    "bmm_batches": lambda t: t.bmm(_z(t, 5, 2, 3), _z(t, 4, 3, 5)),
    "bmm_batch1_2d": lambda t: t.bmm(_z(t, 2, 3), _z(t, 3, 5)),
    "bmm_batch2_2d": lambda t: t.bmm(_z(t, 2, 3, 4), _z(t, 4, 5)),
    "mv": lambda t: t.mv(_z(t, 2, 3), _z(t, 4)),
    "mv_vec_2d": lambda t: t.mv(_z(t, 2, 3), _z(t, 4, 1)),
    "mv_mat_3d": lambda t: t.mv(_z(t, 2, 3, 1), _z(t, 3)),
    "mv_mat_1d": lambda t: t.mv(_z(t, 3), _z(t, 3)),
    "addmm": lambda t: t.addmm(_z(t, 2, 5), _z(t, 2, 3), _z(t, 4, 5)),
    "addmm_mat1_1d": lambda t: t.addmm(_z(t, 2, 5), _z(t, 3), _z(t, 3, 5)),
    "addmm_mat2_1d": lambda t: t.addmm(_z(t, 2, 5), _z(t, 2, 3), _z(t, 3)),
    "baddbmm": lambda t: t.baddbmm(_z(t, 5, 2, 5), _z(t, 5, 2, 3), _z(t, 4, 3, 5)),
    "linear": lambda t: t.nn.functional.linear(_z(t, 2, 3), _z(t, 5, 4)),
    "linear_bias": lambda t: t.nn.functional.linear(_z(t, 2, 3), _z(t, 5, 4), _z(t, 5)),
    "linear_1d": lambda t: t.nn.functional.linear(_z(t, 3), _z(t, 5, 4)),
    "linear_batched": lambda t: t.nn.functional.linear(_z(t, 7, 2, 3), _z(t, 5, 4), _z(t, 5)),
    "Linear": lambda t: t.nn.Linear(4, 5)(_z(t, 2, 3)),
    "tensordot_int": lambda t: t.tensordot(_z(t, 2, 3), _z(t, 4, 5), dims=1),
    "tensordot_two": lambda t: t.tensordot(_z(t, 2, 3, 4), _z(t, 3, 5, 6), dims=2),
    "tensordot_lists": lambda t: t.tensordot(_z(t, 2, 3), _z(t, 4, 5), dims=([-1], [-2])),
}


@needs_torch
@pytest.mark.parametrize("name", CASES)
def test_product_shape_errors_are_torchs_words(name):
    seen = []
    for lib in (gradviz, real_torch):
        with pytest.raises(Exception) as info:
            CASES[name](lib)
        seen.append((type(info.value).__name__, str(info.value)))
    assert seen[0] == seen[1]
