"""Shared by the op tests: the shapes every op is checked on, value domains that keep each
op where it is smooth (log on positives, abs away from 0, max on distinct values), and a
library-neutral listing of a grad_fn graph (gradviz and torch print the same rows)."""
import zlib
from collections import deque

import numpy as np

SHAPES = [(), (4,), (3, 4), (1, 4)]
BROADCAST_PAIRS = [((3, 4), (4,)), ((4,), (3, 4)), ((3, 1), (1, 4)), ((1, 4), (3, 4)), ((3, 4), (1, 4)),
                   ((), (3, 4)), ((3, 4), ()), ((4,), (3, 1)), ((2, 1, 4), (3, 1))]
PAIRS = [(s, s) for s in SHAPES] + BROADCAST_PAIRS


def _away(rng, shape):
    """|x| in [0.2, 2) with a random sign: far from the kink at 0."""
    return rng.uniform(0.2, 2.0, shape) * rng.choice([-1.0, 1.0], shape)


def _distinct(rng, shape):
    """Values at least 0.1 apart (no ties for max/min, no |x| ties for the inf-norm)."""
    n = int(np.prod(shape, dtype=int))
    mags = rng.permutation(np.linspace(0.3, 0.3 + 0.1 * (n - 1), n)) if n else np.zeros(0)
    return (mags * rng.choice([-1.0, 1.0], n)).reshape(shape)


DOMAINS = {
    "real": lambda rng, s: rng.standard_normal(s),
    "pos": lambda rng, s: rng.uniform(0.5, 2.0, s),
    "unit": lambda rng, s: rng.uniform(-0.9, 0.9, s),
    "gt-1": lambda rng, s: rng.uniform(-0.5, 2.0, s),
    "away": _away,
    "distinct": _distinct,
}


def rng_for(text: str) -> np.random.Generator:
    """A generator seeded by a test's own text, so every case has fixed, distinct data."""
    return np.random.default_rng(zlib.crc32(text.encode()))


def sample(spec, rng) -> np.ndarray:
    """float64 data from (shape, domain[, requires_grad]) or from a fixed array."""
    if isinstance(spec, np.ndarray):
        return spec.astype(np.float64)
    shape, domain = spec[0], spec[1]
    return np.asarray(DOMAINS[domain](rng, shape), dtype=np.float64)


def requires_grad(spec) -> bool:
    return isinstance(spec, np.ndarray) or len(spec) < 3 or bool(spec[2])


def graph_of(root, leaves) -> list:
    """The grad_fn graph reachable from `root`, in breadth-first order: one row per node,
    (name, ((index of the next node or None, input_nr), ...)). AccumulateGrad rows name the leaf."""
    if root is None:
        return []
    index, order, queue = {id(root): 0}, [root], deque([root])
    while queue:
        node = queue.popleft()
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in index:
                index[id(nxt)] = len(order)
                order.append(nxt)
                queue.append(nxt)
    rows = []
    for node in order:
        name = node.name().replace("torch::autograd::", "")
        if name == "AccumulateGrad":
            name += f"[x{next(i for i, x in enumerate(leaves) if x is node.variable)}]"
        rows.append((name, tuple((None if n is None else index[id(n)], nr) for n, nr in node.next_functions)))
    return rows
