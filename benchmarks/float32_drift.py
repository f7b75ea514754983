"""Float32 drift in long training loops: how far gradviz's curves are from PyTorch's, next to how
far PyTorch's own float32 curve is from float64, and whether computing float32 reductions and
transcendental functions in float64 (then rounding) brings gradviz closer, at what cost.

  python benchmarks/float32_drift.py [--rounds N]

Two loops, both in float32: the RMSprop cubic fit of sin(x) over 2,000 steps (PyTorch's
"learning PyTorch with examples"), and a 2-16-16-1 tanh MLP trained by Adam for 500 steps. Each
runs under PyTorch (float32 and float64, one thread), under gradviz, and under gradviz with
NumPy's float32 sum, mean, exp, tanh and sqrt replaced by float64 ones rounded to float32
("wide"). The cost is the median of interleaved rounds of the gradviz loop, plain against wide.
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import statistics
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import gradviz  # noqa: E402

WIDENED = ("sum", "mean", "exp", "tanh", "sqrt")


@contextlib.contextmanager
def wide():
    """NumPy's float32 sum, mean, exp, tanh and sqrt computed in float64 and rounded to float32."""
    from gradviz.ops.core import NUMPY   # the rules' namespace holds its own copy of NumPy's names
    saved = {name: getattr(np, name) for name in WIDENED}

    def widen(fn):
        def call(a, *args, **kwargs):
            if isinstance(a, np.ndarray) and a.dtype == np.float32 and "out" not in kwargs:
                return np.asarray(fn(a.astype(np.float64), *args, **kwargs)).astype(np.float32)
            return fn(a, *args, **kwargs)
        return call
    for name, fn in saved.items():
        setattr(np, name, widen(fn))
        setattr(NUMPY, name, widen(fn))
    try:
        yield
    finally:
        for name, fn in saved.items():
            setattr(np, name, fn)
            setattr(NUMPY, name, fn)


def rmsprop_fit(torch, dtype, steps=2000):
    x = torch.linspace(-math.pi, math.pi, 2000, dtype=dtype)
    y = torch.sin(x)
    xx = x.unsqueeze(-1).pow(torch.tensor([1, 2, 3]))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 1), torch.nn.Flatten(0, 1)).to(dtype)
    loss_fn = torch.nn.MSELoss(reduction="sum")
    opt = torch.optim.RMSprop(model.parameters(), lr=1e-3)
    curve = []
    for _ in range(steps):
        loss = loss_fn(model(xx), y)
        curve.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return np.array(curve)


def mlp_fit(torch, dtype, steps=500):
    torch.manual_seed(0)
    x = (torch.rand(256, 2) * 4 - 2).to(dtype)   # the same draws for either dtype
    y = (x[:, :1] * x[:, 1:]).sin()
    model = torch.nn.Sequential(torch.nn.Linear(2, 16), torch.nn.Tanh(), torch.nn.Linear(16, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 1)).to(dtype)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    curve = []
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        curve.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return np.array(curve)


def relative(a, b) -> str:
    """The median and the final relative difference of two loss curves."""
    r = np.abs(a - b) / np.abs(b)
    return f"median {np.median(r):.1e}, final {r[-1]:.1e}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    import torch
    torch.set_num_threads(1)
    for name, loop in (("RMSprop cubic fit, 2,000 steps", rmsprop_fit), ("tanh MLP + Adam, 500 steps", mlp_fit)):
        t32, t64 = loop(torch, torch.float32), loop(torch, torch.float64)
        torch.set_num_threads(2)
        t32_2 = loop(torch, torch.float32)   # the same program on two threads: torch's own bits move
        torch.set_num_threads(1)
        g32 = loop(gradviz, gradviz.float32)
        with wide():
            w32 = loop(gradviz, gradviz.float32)
        print(f"{name}: relative difference of the loss curves")
        print(f"  torch float32 vs torch float64 (torch's own rounding)  {relative(t32, t64)}")
        print(f"  torch float32, 2 threads vs 1 thread                    {relative(t32_2, t32)}")
        print(f"  gradviz float32 vs torch float32                        {relative(g32, t32)}")
        print(f"  gradviz wide float32 vs torch float32                   {relative(w32, t32)}")
        print(f"  gradviz float32 vs torch float64                        {relative(g32, t64)}")
        print(f"  gradviz wide float32 vs torch float64                   {relative(w32, t64)}")
        print(f"  final loss: torch32 {t32[-1]:.7g}  torch64 {t64[-1]:.7g}  gradviz {g32[-1]:.7g}  wide {w32[-1]:.7g}")
        plain, widened = [], []
        for _ in range(args.rounds):   # interleaved, so drifts in machine load hit both alike
            start = time.process_time()
            loop(gradviz, gradviz.float32, 300)
            plain.append(time.process_time() - start)
            with wide():
                start = time.process_time()
                loop(gradviz, gradviz.float32, 300)
                widened.append(time.process_time() - start)
        p, w = statistics.median(plain), statistics.median(widened)
        print(f"  300 steps: plain {p * 1e3:.0f} ms, wide {w * 1e3:.0f} ms ({(w / p - 1) * 100:+.0f}%, median of "
              f"{args.rounds} interleaved rounds)")


if __name__ == "__main__":
    main()
