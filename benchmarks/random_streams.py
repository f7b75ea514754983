"""Random-number throughput: gradviz's torch-exact streams next to torch's own CPU kernels.

  python benchmarks/random_streams.py [--rounds N] [--size N]

Each draw is timed from a fresh manual_seed; medians of the rounds are printed in milliseconds,
with torch's time beside when torch is installed. gradviz reproduces torch's bits with array
operations (the float32 normal evaluates torch's AVX2 polynomials with fused multiply-adds
emulated in doubles), so it is slower than torch's C++ but linear in the size.
"""
from __future__ import annotations

import argparse
import statistics
import time

import gradviz

CASES = {
    "rand float32": lambda m, n: m.rand(n),
    "randn float32": lambda m, n: m.randn(n),
    "randn float64": lambda m, n: m.randn(n, dtype=m.float64),
    "uniform_(-1, 1) float32": lambda m, n: m.empty(n).uniform_(-1, 1),
    "randint(0, 10)": lambda m, n: m.randint(0, 10, (n,)),
    "bernoulli(0.5) (dropout mask)": lambda m, n: m.empty(n).bernoulli_(0.5),
    "randperm(n // 10)": lambda m, n: m.randperm(n // 10),
    "Linear(1000, 1000) init": lambda m, n: m.nn.Linear(1000, 1000),
}


def median_ms(module, case, size: int, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        module.manual_seed(0)
        start = time.perf_counter()
        case(module, size)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", type=int, default=1_000_000)
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    print(f"{'draw of ' + format(args.size, ','):34} {'gradviz ms':>11} {'torch ms':>9}")
    for name, case in CASES.items():
        ours = median_ms(gradviz, case, args.size, args.rounds)
        theirs = f"{median_ms(torch, case, args.size, args.rounds):9.1f}" if torch else f"{'-':>9}"
        print(f"{name:34} {ours:11.1f} {theirs}")


if __name__ == "__main__":
    main()
