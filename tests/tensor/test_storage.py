"""Tensor.storage(), untyped_storage() and data_ptr() against torch's: the same memory (a view's is its
base's), the same elements, writes that reach the tensor, the same print (but the class's module,
gradviz.storage where torch's is torch.storage) and torch's one deprecation warning."""
import contextlib
import io
import warnings

import pytest

import gradviz
from gradviz import _warn
from tests.support.parity import needs_torch, real_torch

pytestmark = needs_torch


def program(torch) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        a = torch.arange(18)
        print(a.view(3, 3, 2).storage().size(), a.storage())
        s = a.view(2, 9)[1].storage()
        print(len(s), s.dtype, s.device, s[2], s[-1], s.tolist()[:4], s.nbytes(), s.element_size(), list(s)[:3])
        s[0] = 100
        print(a[:3], a.view(3, 6)[1:].storage()[0])
        b = torch.tensor([[1.5, 2.25], [3.0, 4.0]]).t()
        print(b.storage(), b.untyped_storage().nbytes(), len(b.untyped_storage()))
        print(b.data_ptr() == b.storage().data_ptr(), b[1].data_ptr() - b.data_ptr(), b[:, 1].data_ptr() - b.data_ptr())
        print(torch.tensor([True, False]).storage(), torch.zeros(0).storage())
        print(torch.tensor([1, 2], dtype=torch.int32).untyped_storage(), a.untyped_storage()[1:3].tolist())
        with pytest.raises(RuntimeError, match=r"^slices are only supported in UntypedStorage.__getitem__$"):
            a.storage()[1:3]
    return out.getvalue()


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_storage_matches_torch():
    theirs = program(real_torch).replace("torch.storage.", "gradviz.storage.")
    assert program(gradviz) == theirs


def test_typed_storage_warns_once_as_torch():
    _warn._warned_once.discard(gradviz.storage._REMOVAL)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        gradviz.arange(3).storage()
        gradviz.arange(3).storage()
        gradviz.arange(3).untyped_storage()
    assert [str(w.message) for w in said] == [gradviz.storage._REMOVAL]
    assert said[0].filename == __file__
