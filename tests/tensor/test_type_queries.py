"""torch's questions about dtypes and tensors (finfo, iinfo, result_type, promote_types, can_cast,
is_floating_point, is_complex, is_signed, is_nonzero, is_same_size) and the small Tensor
attributes learners' programs read (nbytes, itemsize, H, mH, adjoint, short, get_device, ...),
each printed as torch 2.13 prints it."""
import pytest

from tests.support.parity import needs_torch, same_output

pytestmark = needs_torch


def test_finfo_and_iinfo():
    same_output("""
        for d in (torch.float16, torch.float32, torch.float64, None):
            f = torch.finfo(d) if d is not None else torch.finfo()
            print(f, f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.resolution, f.dtype)
        for d in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
            i = torch.iinfo(d)
            print(i, i.bits, i.max, i.min, i.dtype)
        for bad in ("torch.finfo(torch.int64)", "torch.iinfo(torch.float32)", "torch.iinfo(torch.bool)"):
            try:
                eval(bad)
            except TypeError as e:
                print(e)
        x = torch.ones(3)
        print(x.clamp(max=torch.finfo(x.dtype).max), torch.finfo(x.dtype).eps * 2)
    """)


def test_dtype_and_tensor_questions():
    same_output("""
        a, b = torch.ones(2), torch.ones(2, dtype=torch.int64)
        print(torch.result_type(a, 1.0), torch.result_type(b, 2.5), torch.result_type(1, 2), torch.result_type(b, a))
        print(torch.promote_types(torch.int32, torch.float32), torch.promote_types(torch.uint8, torch.int8))
        print(torch.can_cast(torch.float64, torch.int32), torch.can_cast(torch.int32, torch.float64),
              torch.can_cast(torch.bool, torch.int8), torch.can_cast(torch.int8, torch.bool))
        print(torch.is_floating_point(a), torch.is_floating_point(b), torch.is_complex(a), a.is_complex())
        print(torch.is_signed(torch.ones(1, dtype=torch.uint8)), b.is_signed(), a.is_signed())
        print(torch.is_nonzero(torch.tensor([1.])), torch.tensor(0).is_nonzero(), a.is_same_size(b),
              torch.is_same_size(a, torch.ones(3)))
        for bad in (torch.tensor([]), torch.ones(2)):
            try:
                torch.is_nonzero(bad)
            except RuntimeError as e:
                print(e)
    """)


def test_small_tensor_attributes():
    same_output("""
        x = torch.arange(6.).reshape(2, 3)
        print(x.nbytes, x.itemsize, x.H, x.mH, x.adjoint(), torch.ones(2, 3, 4).mH.shape, x.is_inference())
        print(x.short(), x.byte(), x.char(), x.get_device(), x.isclose(x + 1e-9), x.cov(), x.corrcoef())
        print(x.hardshrink(2.5), x.prelu(torch.tensor([0.5])))
        try:
            torch.ones(3).H
        except RuntimeError as e:
            print(e)
        print(torch.tensor(2.).H)
        print(torch.cosine_similarity(x, x + 1), torch.rms_norm(x, (3,)))
    """)


def test_isin_asarray_and_scalar_tensor():
    same_output("""
        import numpy as np
        print(torch.isin(torch.tensor([1, 2, 3, 4]), torch.tensor([2, 4])), torch.isin(torch.tensor([1., 2.]), 2.),
              torch.isin(3, torch.tensor([1, 3])), torch.isin(torch.tensor([1, 2]), torch.tensor([2]), invert=True))
        try:
            torch.isin([1, 2], torch.tensor([1]))
        except TypeError as e:
            print(str(e).splitlines()[0])
        a = np.ones(3)
        shared, copied = torch.asarray(a), torch.asarray(a, copy=True)
        a[0] = 5
        print(shared, copied, torch.asarray([1, 2]), torch.asarray([1., 2.]), torch.asarray(3.5),
              torch.asarray(a, dtype=torch.float32), torch.asarray([1., 2.], requires_grad=True))
        print(torch.scalar_tensor(3), torch.scalar_tensor(3, dtype=torch.int64), torch.scalar_tensor(True))
    """)


def test_the_legacy_new():
    same_output("""
        x = torch.ones(2, dtype=torch.float64)
        print(x.new(2, 3).shape, x.new(2, 3).dtype, x.new([1, 2]), x.new(), x.new((2, 3)),
              x.new(torch.Size([2, 3])).shape, torch.ones(2, dtype=torch.int64).new([1.7]), x.new(4).zero_())
        try:
            x.new(2.5)
        except TypeError as e:
            print(e)
    """)


@needs_torch
def test_the_kind_queries_code_written_for_torch_asks_read_as_torchs_for_a_dense_real_tensor():
    """A hand-written optimizer's `if grad.is_sparse: raise ...` and similar checks run unchanged."""
    same_output("""
        t = torch.ones(2)
        print(t.is_sparse, t.is_sparse_csr, t.is_quantized, t.is_meta, t.is_nested, t.is_mkldnn, t.is_mps, t.is_xpu,
              t.is_xla, t.is_ipu, t.is_vulkan, t.is_mtia, t.is_maia, t.is_conj(), t.is_neg(), t.is_pinned())
        print(t.conj() is t, t.resolve_conj() is t, t.resolve_neg() is t, t.real is t)
        try:
            t.imag
        except RuntimeError as e:
            print(e)
    """)


def test_like_functions_take_memory_format_as_torchs_own_adam_passes_it():
    """torch.zeros_like(p, memory_format=torch.preserve_format), from torch's Adam that courses copy; a random
    *_like keeps a transposed input's memory order unless contiguous_format is asked for."""
    same_output("""
        torch.manual_seed(0)
        p = torch.ones(2, 3)
        print(torch.zeros_like(p, memory_format=torch.preserve_format), torch.ones_like(p, memory_format=torch.contiguous_format))
        print(torch.empty_like(p, memory_format=torch.preserve_format).shape, torch.full_like(p, 2, memory_format=torch.preserve_format))
        q = torch.zeros(3, 4).t()
        print(torch.rand_like(q), torch.rand_like(q, memory_format=torch.contiguous_format))
        print(torch.randn_like(q, memory_format=torch.preserve_format), torch.randint_like(q, 5, memory_format=torch.contiguous_format))
        try:
            torch.zeros_like(p, memory_format=torch.channels_last)
        except RuntimeError as e:
            print(e)
    """)
