"""gradviz on a GPU (CuPy) beside gradviz on the CPU and PyTorch on the GPU, side by side in one run.

  python benchmarks/gpu.py [--rounds N]

1. The MLP training step of engine.py (784-512-512-10, float32) at batch 256 and at batch 8,192.
2. The GPT training step of engine.py (examples/gpt.py, AdamW).

Times are wall-clock medians of interleaved rounds; each GPU step ends with a synchronize, so
queued kernels count. The CPU contenders run NumPy's and PyTorch's default thread counts.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

import gradviz
from engine import BATCH, SIZES, _optional, _params, _race, make_gpt_step, make_step


def _synced(step, sync):
    def run(*args):
        step(*args)
        sync()
    return run


def _mlp(batch: int, torch) -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], batch)
    base = _params(rng)
    contenders = {}
    for device in ("cpu", "cuda"):
        params = [gradviz.tensor(p, device=device, requires_grad=True) for p in base]
        step = make_step(gradviz)
        contenders[f"gradviz ({device})"] = (
            _synced(step, gradviz.cuda.synchronize) if device == "cuda" else step,
            params, gradviz.tensor(x, device=device), gradviz.tensor(y, device=device))
    if torch is not None and torch.cuda.is_available():
        params = [torch.tensor(p, device="cuda", requires_grad=True) for p in base]
        contenders["torch (cuda)"] = (_synced(make_step(torch), torch.cuda.synchronize), params,
                                      torch.tensor(x, device="cuda"), torch.tensor(y, device="cuda"))
    return contenders


def _gpt(torch) -> dict:
    contenders = {}
    for device in ("cpu", "cuda"):
        gradviz.set_default_device(device)
        try:
            step = make_gpt_step("gradviz", gradviz)
        finally:
            gradviz.set_default_device(None)
        contenders[f"gradviz ({device})"] = (_synced(step, gradviz.cuda.synchronize) if device == "cuda" else step,)
    if torch is not None and torch.cuda.is_available():
        torch.set_default_device("cuda")
        try:
            step = make_gpt_step("torch", torch)
        finally:
            torch.set_default_device(None)
        contenders["torch (cuda)"] = (_synced(step, torch.cuda.synchronize),)
    return contenders


def _report(title: str, times: dict) -> None:
    print(f"\n{title}")
    base = times["gradviz (cpu)"]
    for name, t in times.items():
        print(f"  {name:16s} {t * 1e3:9.2f} ms   {base / t:6.2f}x faster than gradviz (cpu)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    if not gradviz.cuda.is_available():
        raise SystemExit("no CUDA GPU visible to CuPy")
    torch = _optional("torch")
    for batch in (BATCH, 8192):
        _report(f"MLP training step, batch {batch}, {'-'.join(map(str, SIZES))}, float32",
                _race(_mlp(batch, torch), args.rounds, clock=time.perf_counter))
    _report("GPT training step (examples/gpt.py, batch 16), AdamW",
            _race(_gpt(torch), args.rounds, clock=time.perf_counter))


if __name__ == "__main__":
    main()
