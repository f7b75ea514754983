"""arange, linspace and logspace to torch's last bit; the default device and torch.accelerator."""
import numpy as np
import pytest

import gradviz as gv


def bits_equal(a, b) -> bool:
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# -- recorded from torch 2.13 ------------------------------------------------------------------------
def test_d2l_arange_crosses_zero_where_torch_does():
    x = gv.arange(-8.0, 8.0, 0.1)
    # torch's vectorised kernel rounds each 8-lane base to float32 and adds k * 0.1 in doubles,
    # so the 81st value is 4.44e-16 (not −1.49e-8) and 80 values are positive (not 79)
    assert bits_equal(x[78:83], np.array([-0.20000001788139343, -0.10000000894069672, 4.440892098500626e-16,
                                          0.10000000149011612, 0.20000000298023224], dtype=np.float32))
    assert (x > 0).sum().item() == 80
    assert bits_equal(x[-3:], np.array([7.699999809265137, 7.799999713897705, 7.899999618530273], dtype=np.float32))
    assert gv.arange(0, 1, 0.1, dtype=gv.float64).tolist() == [
        0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001, 0.7000000000000001, 0.8, 0.9]


def test_linspace_and_logspace_recorded():
    assert bits_equal(gv.linspace(0, 1, 7), np.array([0.0, 0.1666666716337204, 0.3333333432674408, 0.5,
                                                      0.6666666269302368, 0.8333333134651184, 1.0], dtype=np.float32))
    assert bits_equal(gv.logspace(0, 2, 5), np.array([1.0, 3.1622776985168457, 10.0, 31.62277603149414, 100.0],
                                                     dtype=np.float32))
    assert gv.linspace(-3.7, 10, 6, dtype=gv.int32).tolist() == [-3, 0, 2, 4, 7, 10]
    assert gv.linspace(2, 5, 1).tolist() == [2.0] and gv.linspace(0, 1, 0).shape == (0,)


def test_range_errors():
    with pytest.raises(RuntimeError, match="step must be nonzero"):
        gv.arange(0, 10, 0)
    with pytest.raises(RuntimeError, match="unsupported range: 0 -> inf"):
        gv.arange(0, float("inf"))
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent with step sign"):
        gv.arange(5, 0, 1)
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        gv.linspace(0, 1, -1)


def test_default_device_and_device_context():
    assert repr(gv.get_default_device()) == "device(type='cpu')"
    with gv.device("cpu") as d:
        assert d == gv.device("cpu") and gv.zeros(2).device == gv.device("cpu")
        assert gv.get_default_device() == gv.device("cpu")
    gv.set_default_device("cpu")
    try:
        assert gv.tensor([1.0]).device.type == "cpu" and gv.rand(2).device.type == "cpu"
    finally:
        gv.set_default_device(None)
    with gv.device("cuda"):
        assert repr(gv.get_default_device()) == "device(type='cuda', index=0)"
    assert gv.get_default_device() == gv.device("cpu")


def test_accelerator_reports_what_cupy_sees():
    if gv.cuda.is_available():
        assert gv.accelerator.current_accelerator() == gv.device("cuda")
        assert gv.accelerator.device_count() >= 1 and gv.accelerator.current_device_index() == 0
    else:
        assert not gv.accelerator.is_available() and gv.accelerator.current_accelerator() is None
        assert gv.accelerator.device_count() == 0
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available."):
            gv.accelerator.current_device_index()


# -- against torch -----------------------------------------------------------------------------------
ARANGES = [(-8.0, 8.0, 0.1), (0, 1, 0.01), (0.0, 10.0, 0.3), (-3.2, 7.7, 0.013), (0, 5, 0.1), (0.0, 1.0, 1 / 3),
           (2.5, -3.5, -0.7), (1, 100000, 1.7), (0, 40000, 0.5), (0, 10, 1), (3, 100, 7), (0, 5.5, 1.5),
           (-7, 7, 2), (10, -10, -3)]


def _outcome(fn):
    try:
        return fn().numpy()
    except (RuntimeError, ValueError) as err:
        return type(err).__name__, str(err)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [None, "float32", "float64", "int64", "int32"])
def test_arange_matches_torch(dtype):
    torch = pytest.importorskip("torch")
    gdt, tdt = (getattr(gv, dtype), getattr(torch, dtype)) if dtype else (None, None)
    for a, b, s in ARANGES:
        mine = _outcome(lambda: gv.arange(a, b, s, dtype=gdt))
        theirs = _outcome(lambda: torch.arange(a, b, s, dtype=tdt))
        if isinstance(theirs, tuple):
            assert mine == theirs, (a, b, s)
        else:
            assert bits_equal(mine, theirs), (a, b, s)
    assert bits_equal(gv.arange(7), torch.arange(7)) and bits_equal(gv.arange(7.0), torch.arange(7.0))


@pytest.mark.torch
@pytest.mark.parametrize("dtype", [None, "float64", "int64", "int32"])
def test_linspace_logspace_match_torch(dtype):
    torch = pytest.importorskip("torch")
    gdt, tdt = (getattr(gv, dtype), getattr(torch, dtype)) if dtype else (None, None)
    for a, b, n in [(0, 1, 7), (-5, 5, 100), (0, 1, 2), (0, 1, 1), (0, 1, 0), (-3.3, 17.1, 1001), (0, 2 * np.pi, 50),
                    (1e-3, 1, 33), (-1, 1, 5), (0.1, 0.9, 123457), (0, 10, 4), (-3.7, 10, 6)]:
        assert bits_equal(gv.linspace(a, b, n, dtype=gdt), torch.linspace(a, b, n, dtype=tdt)), (a, b, n)
        for base in (10.0, 2.0, 0.5):
            assert bits_equal(gv.logspace(a, b, n, base=base, dtype=gdt),
                              torch.logspace(a, b, n, base=base, dtype=tdt)), (a, b, n, base)


# -- torch.range: deprecated, but still in older course material --------------------------------
RANGE_ARGS = [(1, 4), (0, 1, 0.1), (0.5, 7.3, 0.7), (-3, 3, 0.3), (0, 10, 1 / 3), (1e6, 1e6 + 5, 0.1), (5, 5),
              (4, 1, -1)]


@pytest.mark.parametrize("args", RANGE_ARGS, ids=str)
def test_range_includes_its_end_as_torch(args):
    torch = pytest.importorskip("torch")
    with pytest.warns(UserWarning, match="torch.range is deprecated") as ours:
        x = gv.range(*args)
    with pytest.warns(UserWarning) as theirs:
        y = torch.range(*args)
    assert bits_equal(x, y.numpy())
    assert str(ours[0].message) == str(theirs[0].message)


def test_range_dtype_grad_and_errors_as_torch():
    torch = pytest.importorskip("torch")
    for kwargs in ({"dtype": "int64"}, {"dtype": "float64"}, {"requires_grad": True}):
        with pytest.warns(UserWarning):
            ours = gv.range(0, 3, **{k: getattr(gv, v) if k == "dtype" else v for k, v in kwargs.items()})
        with pytest.warns(UserWarning):
            theirs = torch.range(0, 3, **{k: getattr(torch, v) if k == "dtype" else v for k, v in kwargs.items()})
        assert str(ours) == str(theirs)
    for args in ((0, 5, -1), (0, 5, 0)):
        with pytest.raises(RuntimeError) as theirs, pytest.warns(UserWarning):
            torch.range(*args)
        with pytest.raises(RuntimeError, match=str(theirs.value)), pytest.warns(UserWarning):
            gv.range(*args)
    with pytest.raises(TypeError, match='range\\(\\) missing 1 required positional arguments: "end"'):
        gv.range(3)   # end is required (and no warning comes first), as in torch
