"""The whole op suite on a second array namespace gives what it gives on NumPy.

Every op of torch's OpInfo database that gradviz exposes (see test_opinfo.py) runs on a bounded
subset of its float64 samples twice: on the CPU (NumPy) and on device "cuda", and the two must give
the same outputs, the same gradients, and outputs that stay on the device. Device "cuda" is either

- the strict stand-in (tests/support/strict_namespace.py): NumPy underneath, CuPy's manners on top. It
  refuses implicit conversion to NumPy, NumPy arrays mixed into its calls and every NumPy function
  or method CuPy lacks, so a NumPy-only call that slipped past gradviz.backend fails here, on any
  machine; or
- real CuPy, where CuPy and a CUDA GPU exist (marked gpu).

What the CPU itself gets wrong is test_opinfo.py's business: a sample that fails on the CPU is
skipped here.
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")

import gradviz  # noqa: E402
from tests.ops.test_opinfo import CASES, _convert, _flat, _id, _samples  # noqa: E402

pytestmark = pytest.mark.torch

MAX_SAMPLES = 12      # per op: the strict run covers every op on every push, so keep it bounded
RTOL = ATOL = 1e-7


def _run(fn, sample, device):
    """Forward, then backward with a cotangent fixed by the sample: (outputs, gradients) as gradviz values."""
    gradviz.manual_seed(0)   # random ops draw the same values on every device
    pairs = []   # (torch leaf, gradviz leaf)
    args = _convert(tuple(sample.args), pairs, device)
    kwargs = _convert(dict(sample.kwargs), pairs, device)
    out = fn(_convert(sample.input, pairs, device), *args, **kwargs)
    leaves = [leaf for _, leaf in pairs]
    outs = [y for y in _flat(out) if isinstance(y, gradviz.Tensor) and y.requires_grad and y.is_floating_point()]
    if not leaves or not outs:
        return out, []
    rng = np.random.default_rng(zlib.crc32(repr(sample).encode()))
    cotangents = [gradviz.from_numpy(rng.standard_normal(tuple(y.shape))).to(y.dtype).to(device) for y in outs]
    return out, list(gradviz.autograd.grad(outs, leaves, cotangents, allow_unused=True))


def _compare(what, cpu, dev, values: bool):
    c, d = _flat(cpu), _flat(dev)
    assert len(c) == len(d), f"{what}: {len(c)} on the CPU, {len(d)} on the device"
    for i, (x, y) in enumerate(zip(c, d)):
        if not isinstance(x, gradviz.Tensor):
            assert not isinstance(y, gradviz.Tensor), f"{what}[{i}]: a Tensor on the device only"
            if values and x is not None:
                np.testing.assert_array_equal(np.asarray(y), np.asarray(x), err_msg=f"{what}[{i}]")
            continue
        assert isinstance(y, gradviz.Tensor), f"{what}[{i}]: {type(y).__name__} on the device, a Tensor on the CPU"
        assert y.device.type == "cuda", f"{what}[{i}]: the result is on {y.device}"
        assert (y.shape, y.dtype) == (x.shape, x.dtype), f"{what}[{i}]: {y.shape} {y.dtype}, CPU {x.shape} {x.dtype}"
        if values:
            xa, ya = x.detach().numpy(), y.detach().cpu().numpy()
            np.testing.assert_allclose(ya, xa, rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=f"{what}[{i}]")


def check_sample(info, fn, sample) -> None:
    """Run one sample on the CPU and on the device; raise where they differ. A sample the CPU
    cannot run is skipped (test_opinfo.py reports those)."""
    try:
        cpu = _run(fn, sample, "cpu")
    except Exception:
        return
    values = info.name not in ("empty", "empty_like", "new_empty", "empty_strided")   # random draws too
    dev = _run(fn, sample, "cuda")
    _compare("output", cpu[0], dev[0], values)
    _compare("grad", cpu[1], dev[1], values)


def spread(samples: list) -> list:
    return samples[::-(-len(samples) // MAX_SAMPLES)]


@pytest.mark.parametrize("info,fn", CASES, ids=[_id(info) for info, _ in CASES])
def test_op_on_device_matches_cpu(cuda_namespace, info, fn):
    failures = []
    for sample in spread(_samples(info)):
        try:
            check_sample(info, fn, sample)
        except Exception as exc:   # one op, one report
            failures.append(f"{sample.summary() if hasattr(sample, 'summary') else sample!r}\n  "
                            f"{type(exc).__name__}: {str(exc)[:400]}")
    assert not failures, f"{len(failures)} sample(s) fail on the device:\n" + "\n".join(failures[:4])


def test_moving_between_devices_is_differentiable(cuda_namespace):
    """x.to(device) records ToCopyBackward0, whose VJP moves the gradient back: the gradients are
    those of the same program on one device (finite differences and PyTorch check that one)."""
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal(4)

    def program(x, w, moves: bool):
        h = (x.to("cuda") if moves else x) * (w.to("cuda") if moves else w)
        h = h.tanh().sum(1)
        return (h.to("cpu") if moves else h).pow(2).sum()

    grads = []
    for moves in (True, False):
        x, w = gradviz.tensor(a, requires_grad=True), gradviz.tensor(b, requires_grad=True)
        loss = program(x, w, moves)
        g = gradviz.autograd.grad(loss, (x, w), create_graph=True)
        assert all(t.device.type == "cpu" for t in g)
        gg = gradviz.autograd.grad(sum(t.sum() for t in g), (x, w))   # the moves are recorded in graph mode too
        grads.append([t.detach().numpy() for t in (*g, *gg)])
        if moves:
            moved = x.to("cuda")
            assert moved.grad_fn.name() == "ToCopyBackward0" and moved.device.type == "cuda"
            assert gradviz.autograd.gradcheck(lambda x, w: program(x, w, True), (x, w))
    for ours, plain in zip(*grads):
        np.testing.assert_allclose(ours, plain, rtol=1e-12, atol=1e-15)
