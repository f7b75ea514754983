"""Engine overhead, measured side by side in one run (medians of interleaved rounds).

  python benchmarks/engine.py [--rounds N] [--clock cpu|wall]

1. An MLP training step (batch 256, 784-512-512-10, float32): gradviz vs the same
   step written by hand in NumPy, vs PyTorch CPU and HIPS autograd when installed.
2. A chain of 1,000 ops on 4-element tensors, forward + backward, µs per op,
   vs PyTorch eager, and vs its floor: the same chain on the least engine Python
   can be (bare_engine.py, micrograd's design on NumPy).
3. The event bus when nobody listens: the cost of its guard, as a share of (2).
4. A LeNet-5 training step (batch 64, 1×28×28, SGD) vs PyTorch CPU.
5. The small GPT of examples/gpt.py, one AdamW training step, vs PyTorch CPU.

Every contender runs on one thread: PyTorch by set_num_threads(1), NumPy's BLAS by the
thread variables below, set before NumPy loads. Times are the CPU time of that thread
(--clock cpu, the default), so other processes on a shared machine do not count; --clock
wall measures elapsed time.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import time
import types

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import gradviz  # noqa: E402

import bare_engine  # noqa: E402  (beside this file)

BATCH, SIZES, LR = 256, (784, 512, 512, 10), 0.01


def _params(rng):
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        params.append((rng.uniform(-1, 1, (fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32))
        params.append(np.zeros(fan_out, dtype=np.float32))
    return params


# -- 1. the MLP step, four ways -----------------------------------------------------
def numpy_step(params, x, y):
    """Forward, softmax cross-entropy, backward and SGD, by hand."""
    w1, b1, w2, b2, w3, b3 = params
    z1 = x @ w1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ w2 + b2
    h2 = np.maximum(z2, 0)
    logits = h2 @ w3 + b3
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -logp[np.arange(len(y)), y].mean()
    g = np.exp(logp)
    g[np.arange(len(y)), y] -= 1
    g /= len(y)
    gw3, gb3 = h2.T @ g, g.sum(0)
    g = (g @ w3.T) * (z2 > 0)
    gw2, gb2 = h1.T @ g, g.sum(0)
    g = (g @ w2.T) * (z1 > 0)
    gw1, gb1 = x.T @ g, g.sum(0)
    for p, gp in zip(params, (gw1, gb1, gw2, gb2, gw3, gb3)):
        p -= LR * gp
    return loss


def make_step(lib):
    """The MLP step, written once for gradviz and PyTorch (lib is either: they spell it alike)."""
    def step(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        h = (x @ w1 + b1).relu()
        h = (h @ w2 + b2).relu()
        loss = lib.nn.functional.cross_entropy(h @ w3 + b3, y)
        loss.backward()
        with lib.no_grad():
            for p in params:
                p -= LR * p.grad
                p.grad = None
        return loss
    return step


def make_autograd_step():
    import autograd
    import autograd.numpy as anp

    def loss_fn(params, x, y):
        w1, b1, w2, b2, w3, b3 = params
        h = anp.maximum(anp.dot(x, w1) + b1, 0)
        h = anp.maximum(anp.dot(h, w2) + b2, 0)
        logits = anp.dot(h, w3) + b3
        shifted = logits - anp.max(logits, axis=1, keepdims=True)
        logp = shifted - anp.log(anp.sum(anp.exp(shifted), axis=1, keepdims=True))
        return -anp.mean(logp[anp.arange(len(y)), y])
    grad_fn = autograd.grad(loss_fn)

    def step(params, x, y):
        grads = grad_fn(params, x, y)
        for p, g in zip(params, grads):
            p -= LR * g
    return step


def _optional(name):
    try:
        return __import__(name)
    except ImportError:
        return None


def bench_mlp(rounds: int) -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = rng.integers(0, SIZES[-1], BATCH)
    base = _params(rng)
    contenders = {
        "numpy (by hand)": (numpy_step, [p.copy() for p in base], x, y),
        "gradviz": (make_step(gradviz), [gradviz.tensor(p, requires_grad=True) for p in base], gradviz.tensor(x),
                    gradviz.tensor(y)),
    }
    torch = _optional("torch")
    if torch is not None:
        torch.set_num_threads(1)
        contenders["torch (CPU)"] = (make_step(torch), [torch.tensor(p, requires_grad=True) for p in base],
                                     torch.tensor(x), torch.tensor(y))
    if _optional("autograd") is not None:
        contenders["autograd (HIPS)"] = (make_autograd_step(), [p.copy() for p in base], x, y)
    return _race(contenders, rounds)


CLOCK = {"cpu": time.thread_time, "wall": time.perf_counter}
_clock = CLOCK["cpu"]


def _race(contenders: dict, rounds: int, repeat: int = 1, clock=None) -> dict:
    """Interleave the contenders round by round so machine noise hits them alike (timed by `clock`,
    default the --clock chosen)."""
    clock = clock or _clock
    times = {name: [] for name in contenders}
    for fn, *args in contenders.values():
        fn(*args)   # warm up
    for _ in range(rounds):
        for name, (fn, *args) in contenders.items():
            start = clock()
            for _ in range(repeat):
                fn(*args)
            times[name].append((clock() - start) / repeat)
    return {name: statistics.median(ts) for name, ts in times.items()}


# -- 2. a chain of 1,000 tiny ops -------------------------------------------------------
CHAIN = 1000


def make_chain(lib):
    c = lib.tensor([1.001, 0.999, 1.0, 1.002])

    def run(x):
        y = x
        for i in range(CHAIN // 2):
            y = y * c
            y = y + c
        y.sum().backward()
        x.grad = None
    return run


def bench_chain(rounds: int) -> dict:
    contenders = {"gradviz": (make_chain(gradviz), gradviz.ones(4, requires_grad=True)),
                  "bare Python engine": (make_chain(bare_engine), bare_engine.ones(4, requires_grad=True))}
    torch = _optional("torch")
    if torch is not None:
        contenders["torch (eager)"] = (make_chain(torch), torch.ones(4, requires_grad=True))
    return _race(contenders, rounds)


# -- 3. the cost of the event guard when nobody listens ----------------------------------------
def bench_event_guard(rounds: int) -> float:
    """Seconds for the guards one chain evaluates (one per op, one per backward step)."""
    from gradviz import events

    def guards():
        for _ in range(2 * CHAIN):
            if events._listeners:
                pass
    return _race({"guard": (guards,)}, rounds, repeat=5)["guard"]


# -- 4. LeNet-5 ---------------------------------------------------------------------------------
def make_lenet(lib):
    nn = lib.nn
    net = nn.Sequential(nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(6, 16, 5), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                        nn.Linear(84, 10))
    optimizer = lib.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)

    def step(x, y):
        optimizer.zero_grad()
        loss = lib.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        optimizer.step()
    return step


def _torch_one_thread():
    torch = _optional("torch")
    if torch is not None:
        torch.set_num_threads(1)
    return torch


def bench_lenet(rounds: int) -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    contenders = {"gradviz": (make_lenet(gradviz), gradviz.tensor(x), gradviz.tensor(y))}
    torch = _torch_one_thread()
    if torch is not None:
        contenders["torch (CPU)"] = (make_lenet(torch), torch.tensor(x), torch.tensor(y))
    return _race(contenders, rounds)


# -- 5. the small GPT -----------------------------------------------------------------------------
GPT_SOURCE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "gpt.py"
GPT_SIZES = dict(block_size=32, n_layer=2, n_head=2, n_embd=32)


def load_gpt(lib_name: str):
    """examples/gpt.py as a module; for PyTorch with its three import lines pointed at torch."""
    source = GPT_SOURCE.read_text()
    if lib_name == "torch":
        source = source.replace("import gradviz as torch", "import torch").replace(
            "import gradviz.nn as nn", "import torch.nn as nn").replace(
            "from gradviz.nn import functional as F", "from torch.nn import functional as F")
    module = types.ModuleType(f"gpt_{lib_name}")
    exec(compile(source, str(GPT_SOURCE), "exec", dont_inherit=True), module.__dict__)
    return module


def make_gpt_step(lib_name: str, lib):
    mod = load_gpt(lib_name)
    chars, encode, _ = mod.encoder(mod.TEXT)
    model = mod.GPT(mod.GPTConfig(vocab_size=len(chars), **GPT_SIZES))
    optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=3e-3, betas=(0.9, 0.99))
    data = np.array(encode(mod.TEXT), dtype=np.int64)
    ix = np.random.default_rng(0).integers(0, len(data) - GPT_SIZES["block_size"], 16)
    block = GPT_SIZES["block_size"]
    x = lib.tensor(np.stack([data[i:i + block] for i in ix]))
    y = lib.tensor(np.stack([data[i + 1:i + 1 + block] for i in ix]))

    def step():
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return step


def bench_gpt(rounds: int) -> dict:
    contenders = {"gradviz": (make_gpt_step("gradviz", gradviz),)}
    torch = _torch_one_thread()
    if torch is not None:
        contenders["torch (CPU)"] = (make_gpt_step("torch", torch),)
    return _race(contenders, rounds)


def _versus_torch(title: str, times: dict) -> None:
    print(f"\n{title}")
    for name, t in times.items():
        print(f"  {name:18s} {t * 1e3:8.2f} ms")
    if "torch (CPU)" in times:
        print(f"  gradviz / torch: {times['gradviz'] / times['torch (CPU)']:.2f}x")


# -- the cost of source tracking (on in notebooks and in `gradviz render|animate`) ---------------
def bench_source_tracking(rounds: int) -> dict:
    """The chain with source tracking off and on: each op then walks to the user's frame."""
    from gradviz import code_lines
    run = make_chain(gradviz)

    def tracked(x):
        code_lines.set_source_tracking(True)
        try:
            run(x)
        finally:
            code_lines.set_source_tracking(False)
    x = gradviz.ones(4, requires_grad=True)
    return _race({"off": (run, x), "on": (tracked, x)}, rounds)


def bench_leaf_tracking(rounds: int) -> dict:
    """CHAIN leaves made with requires_grad=True, source tracking off and on (each keeps its line)."""
    from gradviz import code_lines

    def make():
        return [gradviz.ones(4, requires_grad=True) for _ in range(CHAIN)]

    def tracked():
        code_lines.set_source_tracking(True)
        try:
            return make()
        finally:
            code_lines.set_source_tracking(False)
    return _race({"off": (make,), "on": (tracked,)}, rounds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--clock", choices=sorted(CLOCK), default="cpu",
                        help="cpu: this thread's CPU time (default); wall: elapsed time")
    args = parser.parse_args()
    global _clock
    _clock = CLOCK[args.clock]

    mlp = bench_mlp(args.rounds)
    ref = mlp["numpy (by hand)"]
    print(f"MLP training step, batch {BATCH}, {'-'.join(map(str, SIZES))}, float32 "
          f"(median of {args.rounds} interleaved rounds)")
    for name, t in mlp.items():
        print(f"  {name:18s} {t * 1e3:8.2f} ms   {t / ref:5.2f}x numpy")
    if "autograd (HIPS)" in mlp:
        print(f"  gradviz / autograd: {mlp['gradviz'] / mlp['autograd (HIPS)']:.2f}x")

    chain = bench_chain(args.rounds)
    print(f"\nChain of {CHAIN} ops on 4-element tensors, forward + backward")
    for name, t in chain.items():
        print(f"  {name:18s} {t / CHAIN * 1e6:8.2f} µs/op")
    if "torch (eager)" in chain:
        print(f"  gradviz / torch: {chain['gradviz'] / chain['torch (eager)']:.2f}x   "
              f"(bare Python engine / torch: {chain['bare Python engine'] / chain['torch (eager)']:.2f}x)")

    guard = bench_event_guard(args.rounds)
    print(f"\nEvent guard with no listener: {guard * 1e6:.1f} µs per chain = "
          f"{guard / chain['gradviz'] * 100:.2f}% of the chain's time")

    tracking = bench_source_tracking(args.rounds)
    print(f"\nSource tracking: {(tracking['on'] - tracking['off']) / CHAIN * 1e6:.2f} µs per op "
          f"({tracking['on'] / tracking['off']:.2f}x the chain with it off)")
    leaves = bench_leaf_tracking(args.rounds)
    print(f"  and {(leaves['on'] - leaves['off']) / CHAIN * 1e6:.2f} µs per leaf made with requires_grad=True "
          f"({leaves['off'] / CHAIN * 1e6:.2f} µs with it off)")

    _versus_torch("LeNet-5 training step, batch 64, 1x28x28, float32, SGD with momentum", bench_lenet(args.rounds))
    sizes = ", ".join(f"{k}={v}" for k, v in GPT_SIZES.items())
    _versus_torch(f"GPT training step (examples/gpt.py, {sizes}, batch 16), AdamW", bench_gpt(args.rounds))


if __name__ == "__main__":
    main()
