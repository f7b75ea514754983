"""Torch's CPU random streams, bit for bit.

Owns the Mersenne Twister of torch's CPU generator (`at::mt19937`: 32-bit seeding from the
low word of the seed, 53-bit doubles from two draws), `Generator` and the default generator
(seeded from the OS at import, as torch's is), its byte state (the 5056-byte layout of
`torch.get_rng_state()`, so states round-trip between the two), and the sampling algorithms of
torch's CPU kernels: uniform, normal (scalar Box-Muller with a cached second value below 16
elements; a 16-wide Box-Muller fill at 16 and above, in float32 with the AVX2 polynomials
torch's x86 build uses, and the fused multiply-adds its compiler emits), integers,
permutations, Bernoulli, exponential, Cauchy, log-normal, geometric and multinomial.
The words come from NumPy's MT19937 (the same recurrence, in C) and every transformation is an
array operation; only randperm's swaps and multinomial's rows loop in Python.
"""
from __future__ import annotations

import math
import os

import numpy as np

from . import libm
from ._args import type_name
from .backend import device as as_device
from .tensor import Tensor

DEFAULT_SEED = 67280421310721       # torch.Generator()'s seed (c10's default_rng_seed_val)
_N, _M = 624, 397
_MATRIX_A = np.uint32(0x9908B0DF)
_U32 = np.uint32

# The byte layout of torch's CPUGeneratorImplState (legacy POD + float cache), 5056 bytes.
_STATE = np.dtype({
    "names": ["seed", "left", "seeded", "next", "state", "normal_x", "normal_y", "normal_rho",
              "normal_is_valid", "next_float_normal", "next_float_normal_valid"],
    "formats": ["<u8", "<i4", "<i4", "<u8", ("<u8", (_N,)), "<f8", "<f8", "<f8", "<i4", "<f4", "u1"],
    "offsets": [0, 8, 12, 16, 24, 5016, 5024, 5032, 5040, 5048, 5052],
    "itemsize": 5056,
})


def _twist(s: np.ndarray) -> np.ndarray:
    """The next 624 words: mt19937's recurrence, in the three chunks whose inputs are ready."""
    def tw(u, v):
        return (((u & _U32(0x80000000)) | (v & _U32(0x7FFFFFFF))) >> _U32(1)) ^ np.where(v & _U32(1), _MATRIX_A,
                                                                                           _U32(0))
    new = np.empty_like(s)
    new[:227] = s[397:] ^ tw(s[:227], s[1:228])
    new[227:454] = new[:227] ^ tw(s[227:454], s[228:455])
    new[454:623] = new[227:396] ^ tw(s[454:623], s[455:624])
    new[623] = new[396] ^ tw(s[623:624], new[0:1])[0]
    return new


def _temper(y: np.ndarray) -> np.ndarray:
    y = y ^ (y >> _U32(11))
    y = y ^ ((y << _U32(7)) & _U32(0x9D2C5680))
    y = y ^ ((y << _U32(15)) & _U32(0xEFC60000))
    return y ^ (y >> _U32(18))


def _seeded_state(seed: int) -> np.ndarray:
    state = [seed & 0xFFFFFFFF]
    for j in range(1, _N):
        prev = state[-1]
        state.append((1812433253 * (prev ^ (prev >> 30)) + j) & 0xFFFFFFFF)
    return np.array(state, dtype=np.uint32)


class Generator:
    """torch.Generator: a Mersenne Twister with torch's seeding, state bytes and normal cache."""

    def __init__(self, device="cpu") -> None:
        self.device = as_device(device)
        self._set_seed(DEFAULT_SEED)

    # -- torch's public API -------------------------------------------------------------
    def manual_seed(self, seed) -> "Generator":
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):   # torch.manual_seed casts; this does not
            raise RuntimeError(f"manual_seed expected a long, but got {type_name(seed)}")
        self._set_seed(_seed_value(seed))
        return self

    def seed(self) -> int:
        s = int.from_bytes(os.urandom(8), "little")
        self._set_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self):
        state, left, nxt = self._engine_state()
        rec = np.zeros((), dtype=_STATE)
        rec["seed"], rec["left"], rec["seeded"], rec["next"] = self._seed, left, 1, nxt
        rec["state"] = state
        if self._double_cache is not None:
            rec["normal_is_valid"], rec["normal_y"] = 1, self._double_cache
        if self._float_cache is not None:
            rec["next_float_normal_valid"], rec["next_float_normal"] = 1, self._float_cache
        return Tensor._make(np.frombuffer(rec.tobytes(), dtype=np.uint8).copy())

    def set_state(self, new_state) -> "Generator":
        if not isinstance(new_state, Tensor):
            raise TypeError(f"expected a torch.ByteTensor, but got {type(new_state).__name__}")
        arr = np.ascontiguousarray(new_state.__array__())
        if arr.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if arr.size != _STATE.itemsize:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE.itemsize} but found the input "
                               f"RNG state size to be {arr.size}")
        rec = np.frombuffer(arr.tobytes(), dtype=_STATE)[0]
        left, nxt = int(rec["left"]), int(rec["next"]) & 0xFFFFFFFF
        if not (rec["seeded"] & 0xFF and 0 < left <= _N and nxt <= _N):
            raise RuntimeError("Invalid mt19937 state")
        self._seed = int(rec["seed"])
        self._load(rec["state"].astype(np.uint32), left, nxt)     # torch keeps the low 32 bits of each word
        self._double_cache = float(rec["normal_y"]) if rec["normal_is_valid"] else None
        self._float_cache = float(rec["next_float_normal"]) if rec["next_float_normal_valid"] else None
        return self

    def clone_state(self) -> "Generator":
        g = Generator(self.device)
        return g.set_state(self.get_state())

    def __repr__(self) -> str:
        return f"<torch._C.Generator object at {hex(id(self))}>"

    # -- the engine -------------------------------------------------------------------------
    # torch's engine counts `left` down to a regeneration and reads state[next]; NumPy's
    # MT19937 runs the same recurrence and tempering in C with a position `pos` (regenerate at
    # 624). Every state torch reaches has left + next == 625 (or left == 1 right after seeding),
    # which maps to pos = next (pos = 624 when left == 1); any other state set by hand is drawn
    # with the array twist below until it regenerates.
    def _set_seed(self, seed: int) -> None:
        self._seed = seed
        self._load(_seeded_state(seed), 1, 0)
        self._double_cache = None
        self._float_cache = None

    def _load(self, state: np.ndarray, left: int, nxt: int) -> None:
        self._bits = np.random.MT19937(0)
        if left == 1 or left + nxt == _N + 1:
            self._bits.state = {"bit_generator": "MT19937",
                                "state": {"key": state, "pos": _N if left == 1 else nxt}}
            self._odd = None
            self._parked_next = nxt if left == 1 else None   # pos 624 hides torch's `next` until a draw
        else:
            self._odd = [state.copy(), left, nxt]

    def _engine_state(self):
        if self._odd is not None:
            state, left, nxt = self._odd
            return state, left, nxt
        st = self._bits.state["state"]
        pos = int(st["pos"])
        left, nxt = (1, _N if self._parked_next is None else self._parked_next) if pos == _N else (_N + 1 - pos, pos)
        return st["key"], left, nxt

    def _u32(self, n: int) -> np.ndarray:
        """The next n 32-bit outputs of mt19937, in order."""
        if self._odd is None:
            if n:
                self._parked_next = None
            return self._bits.random_raw(n).astype(np.uint32)
        state, left, nxt = self._odd
        k = min(n, left - 1)
        head = _temper(state[nxt:nxt + k])
        if k == n:
            self._odd = [state, left - k, nxt + k]
            return head
        self._load(_twist(state), _N + 1, 0)     # regenerated: back to the ordinary cycle
        return np.concatenate([head, self._u32(n - k)])

    def _u64(self, n: int) -> np.ndarray:
        """random64(): two 32-bit draws, the first as the high word."""
        w = self._u32(2 * n).astype(np.uint64)
        return (w[0::2] << np.uint64(32)) | w[1::2]

def _seed_value(seed) -> int:
    seed = int(seed)
    if not -(1 << 63) <= seed < (1 << 64):
        raise ValueError("Overflow when unpacking long long")
    return seed & 0xFFFFFFFFFFFFFFFF


default_generator = Generator()
default_generator.seed()             # torch seeds its default CPU generator from the OS


def _gen(generator) -> Generator:
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator, but got {type(generator).__name__}")
    return generator


def manual_seed(seed) -> Generator:
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


# -- uniform ------------------------------------------------------------------------------
def _opmath(np_dtype) -> type:
    """The precision torch samples in: double for float64, float otherwise (half included)."""
    return np.float64 if np.dtype(np_dtype) == np.float64 else np.float32


def _unit(g: Generator, n: int, np_dtype) -> np.ndarray:
    """uniform_real_distribution(0, 1): the low 53 bits of a 64-bit draw for doubles, else the
    low 24 bits of one 32-bit draw, scaled to [0, 1)."""
    if _opmath(np_dtype) is np.float64:
        return (g._u64(n) & np.uint64((1 << 53) - 1)).astype(np.float64) * (2.0 ** -53)
    return (g._u32(n) & _U32((1 << 24) - 1)).astype(np.float32) * np.float32(2.0 ** -24)


def uniform(g: Generator, n: int, np_dtype, low: float = 0.0, high: float = 1.0) -> np.ndarray:
    """uniform_(low, high): fma(x, high - low, low) in the sampling precision, cast to the dtype; a
    value the cast rounds up to `high` becomes `low`, as torch's kernel clamps it."""
    np_dtype = np.dtype(np_dtype)
    work = _opmath(np_dtype)
    a, b = work(low), work(high)
    x = _unit(g, n, np_dtype)
    out = libm.fma(x, b - a, a, work).astype(np_dtype, copy=False)   # the build contracts to an FMA
    top = np_dtype.type(high)
    return np.where(out == top, np_dtype.type(low), out) if (out == top).any() else out


def uniform_real64(g: Generator, n: int, low: float, high: float) -> np.ndarray:
    """n draws of at::uniform_real_distribution<double>(low, high) as rrelu's kernel takes them one at a
    time: x·(high − low) + low in doubles, rounded twice (that loop is not fused to an FMA)."""
    return _unit(g, n, np.float64) * (high - low) + low


# -- normal -------------------------------------------------------------------------------
_TWO_PI = 2.0 * math.pi


def _narrow(values: np.ndarray, np_dtype) -> np.ndarray:
    """static_cast from double: c10::Half converts through float, so half rounds twice."""
    if np.dtype(np_dtype) == np.float16:
        values = values.astype(np.float32)
    return values.astype(np_dtype)


def _normal_scalar(g: Generator, n: int, mean: float, std: float) -> np.ndarray:
    """normal_distribution<double>, one value at a time: Box-Muller pairs, the sine cached."""
    vals = []
    if n and g._double_cache is not None:
        vals.append(np.array([g._double_cache]))
        g._double_cache = None
    rest = n - (1 if vals else 0)
    if rest > 0:
        pairs = (rest + 1) // 2
        u = _unit(g, 2 * pairs, np.float64)
        u1, u2 = u[0::2], u[1::2]
        r = np.sqrt(-2.0 * libm.log1p(-u2))
        theta = _TWO_PI * u1
        both = np.empty(2 * pairs)
        both[0::2], both[1::2] = r * libm.cos(theta), r * libm.sin(theta)
        if rest % 2:
            g._double_cache = float(both[-1])
        vals.append(both[:rest])
    z = np.concatenate(vals) if vals else np.empty(0)
    return libm.fma64(z, std, mean)


def _box_muller16_f64(d: np.ndarray, mean: float, std: float) -> np.ndarray:
    u1, u2 = 1.0 - d[:, :8], d[:, 8:]
    radius = np.sqrt(-2.0 * libm.log(u1))
    theta = _TWO_PI * u2
    return np.concatenate([libm.fma64(radius * libm.cos(theta), std, mean), libm.fma64(radius * libm.sin(theta), std, mean)],
                          axis=1)


# avx_mathfun's log256_ps and sincos256_ps (Cephes polynomials), op for op in float32.
_f = np.float32
_LOG_P = [_f(c) for c in (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
                          -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)]


def _fma_n(a, b, c) -> np.ndarray:
    """libm.fma32 for the polynomial steps below, whose values never fall below float32's normal range."""
    return libm.fma32(a, b, c, tiny=False)


def _log256(x: np.ndarray) -> np.ndarray:
    x = np.maximum(x, np.array(0x00800000, dtype=np.int32).view(np.float32))
    bits = x.view(np.int32)
    e = ((bits >> 23) - 0x7F).astype(np.float32) + _f(1)
    x = ((bits & ~0x7F800000) | np.array(0.5, dtype=np.float32).view(np.int32)).view(np.float32)
    mask = x < _f(0.707106781186547524)
    x = (x - _f(1)) + np.where(mask, x, _f(0))
    e = e - np.where(mask, _f(1), _f(0))
    z = x * x
    y = _fma_n(_LOG_P[0], x, _LOG_P[1])         # the compiler fuses each multiply-add (Horner)
    for c in _LOG_P[2:]:
        y = _fma_n(y, x, c)
    y = y * x
    y = _fma_n(y, z, e * _f(-2.12194440e-4))
    y = y - z * _f(0.5)                          # exact product: fused or not, the same
    return (x + y) + e * _f(0.693359375)         # e * q2 is exact too


def _sincos256(x: np.ndarray):
    sign_sin = x.view(np.int32) & np.int32(-0x80000000)
    x = np.abs(x)
    j = ((x * _f(1.27323954473516)).astype(np.int32) + 1) & ~1
    y = j.astype(np.float32)
    swap_sin = (j & 4) << 29
    poly = (j & 2) == 0
    x = _fma_n(y, _f(-0.78515625), x)
    x = _fma_n(y, _f(-2.4187564849853515625e-4), x)
    x = _fma_n(y, _f(-3.77489497744594108e-8), x)
    sign_cos = (~(j - 2) & 4) << 29
    sign_sin = sign_sin ^ swap_sin
    z = x * x
    yc = _fma_n(_fma_n(_f(2.443315711809948E-005), z, _f(-1.388731625493765E-003)), z, _f(4.166664568298827E-002))
    yc = _fma_n(yc * z, z, -(z * _f(0.5))) + _f(1)
    ys = _fma_n(_fma_n(_f(-1.9515295891E-4), z, _f(8.3321608736E-3)), z, _f(-1.6666654611E-1))
    ys = _fma_n(ys * z, x, x)
    ysin2 = np.where(poly, ys, _f(0))
    ysin1 = np.where(poly, _f(0), yc)
    s = (ysin1 + ysin2).view(np.int32) ^ sign_sin
    c = ((yc - ysin1) + (ys - ysin2)).view(np.int32) ^ sign_cos
    return s.view(np.float32), c.view(np.float32)


def _box_muller16_f32(d: np.ndarray, mean: float, std: float) -> np.ndarray:
    u1, u2 = _f(1) - d[:, :8], d[:, 8:]
    radius = np.sqrt(_f(-2) * _log256(u1))
    theta = _f(_TWO_PI) * u2
    s, c = _sincos256(theta)
    m, sd = np.float32(mean), np.float32(std)
    return np.concatenate([libm.fma32(radius * c, sd, m), libm.fma32(radius * s, sd, m)], axis=1)


def normal(g: Generator, n: int, np_dtype, mean: float = 0.0, std: float = 1.0, contiguous: bool = True):
    """normal_(mean, std): the 16-wide fill for 16+ contiguous elements, else the scalar path."""
    np_dtype = np.dtype(np_dtype)
    if n < 16 or not contiguous:
        return _narrow(_normal_scalar(g, n, mean, std), np_dtype)
    tail = n % 16
    full = n - tail
    work = _opmath(np_dtype)
    fill = _box_muller16_f64 if work is np.float64 else _box_muller16_f32
    # float and double draw all n uniforms into the output first; half draws 16 per block
    # into a float buffer. Either way a ragged end redraws 16 and recomputes the last 16.
    u = _unit(g, (n if work is np_dtype.type else full) + (16 if tail else 0), np_dtype)
    data = np.empty(n, dtype=work)
    data[:full] = fill(u[:full].reshape(-1, 16), mean, std).ravel()
    if tail:
        data[n - 16:] = fill(u[-16:].reshape(1, 16), mean, std).ravel()
    return data.astype(np_dtype, copy=False)


# -- integers, permutations ----------------------------------------------------------------
def integers(g: Generator, n: int, low: int, high: int) -> np.ndarray:
    """random_(low, high): (draw % range) + low, one 32-bit draw below 2**28 values, else 64-bit."""
    span = high - low
    if span >= 1 << 28:
        r = g._u64(n) % np.uint64(span)
    else:
        r = (g._u32(n) % _U32(span)).astype(np.uint64)
    return (r.astype(np.int64) + np.int64(low)) if low >= 0 or span < 1 << 63 else \
        (r + np.uint64(low & 0xFFFFFFFFFFFFFFFF)).astype(np.int64)


def permutation(g: Generator, n: int) -> np.ndarray:
    """randperm(n): torch's Fisher-Yates from the front (one 32-bit draw per swap); 64-bit draws,
    inside-out, from n >= 2**32 / 20."""
    if n < 0xFFFFFFFF // 20:
        if n <= 1:
            return np.arange(n, dtype=np.int64)
        z = (g._u32(n - 1).astype(np.int64) % np.arange(n, 1, -1, dtype=np.int64)) + np.arange(n - 1)
        r = list(range(n))
        for i, k in enumerate(z.tolist()):
            r[i], r[k] = r[k], r[i]
        return np.array(r, dtype=np.int64)
    zs = (g._u64(n) % np.arange(1, n + 1, dtype=np.uint64)).tolist()
    r = [0] * n
    for i, k in enumerate(zs):
        r[i] = r[k]
        r[k] = i
    return np.array(r, dtype=np.int64)


# -- Bernoulli, exponential, multinomial ---------------------------------------------------
def bernoulli_tensor(g: Generator, p: np.ndarray) -> np.ndarray:
    """bernoulli_(p tensor): a float draw per element below p, a double draw when p is float64."""
    flat = np.ascontiguousarray(p).ravel()
    if flat.dtype == np.float64:
        return _unit(g, flat.size, np.float64) < flat
    return _unit(g, flat.size, np.float32) < flat.astype(np.float32)


def bernoulli_scalar(g: Generator, n: int, p: float) -> np.ndarray:
    """bernoulli_(p float): one double draw per element below p (torch's non-MKL kernel)."""
    return _unit(g, n, np.float64) < p


def exponential(g: Generator, n: int, np_dtype, lambd: float = 1.0) -> np.ndarray:
    """exponential_(lambd): -1/lambd * log1p(-u) in doubles, then the tensor's dtype."""
    return _narrow(-1.0 / lambd * libm.log1p(-_unit(g, n, np.float64)), np_dtype)


def multinomial(g: Generator, probs: np.ndarray, num_samples: int, replacement: bool) -> np.ndarray:
    """torch.multinomial on 2-D probs: argmax/top-k of p / Exp(1) without replacement (or for one
    sample), else a binary search of the normalised cumulative sum per double draw."""
    rows, k = probs.shape
    if not replacement or num_samples == 1:
        q = exponential(g, probs.size, probs.dtype).reshape(probs.shape)
        q = probs / q
        if num_samples == 1:
            return np.argmax(q, axis=-1)[:, None].astype(np.int64)
        order = np.argsort(-q, axis=-1, kind="stable")
        return order[:, :num_samples].astype(np.int64)
    out = np.empty((rows, num_samples), dtype=np.int64)
    acc = np.float32 if probs.dtype == np.float16 else probs.dtype.type    # half accumulates in float
    for i in range(rows):
        cum = np.cumsum(probs[i], dtype=acc)               # sequential sums, as torch's loop
        cum = (cum / cum[-1]).astype(acc)
        cum[-1] = acc(1)
        u = _unit(g, num_samples, np.float64)
        out[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return out


def random_bits(g: Generator, n: int, np_dtype) -> np.ndarray:
    """random_() with no bounds: a draw modulo the dtype's largest exact integer + 1 (64-bit draws for
    int64 and float64, bit 0 for bool)."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype == np.bool_:
        return (g._u32(n) & _U32(1)).astype(np.bool_)
    if np_dtype.kind == "f":
        digits = {2: 11, 4: 24, 8: 53}[np_dtype.itemsize]
        draws = g._u64(n) if np_dtype == np.float64 else g._u32(n).astype(np.uint64)
        return (draws % np.uint64((1 << digits) + 1)).astype(np_dtype)
    top = np.uint64(int(np.iinfo(np_dtype).max) + 1)
    draws = g._u64(n) if np_dtype == np.int64 else g._u32(n).astype(np.uint64)
    return (draws % top).astype(np_dtype)


# -- filling arrays in torch's element order ----------------------------------------------
def memory_order(arr) -> tuple:
    """The axis order in which torch's TensorIterator walks a tensor: by stride, largest first,
    so a transposed or permuted tensor is filled in the order of its memory."""
    strides = arr.strides
    return tuple(sorted(range(arr.ndim), key=lambda d: -abs(strides[d])))


def in_memory_order(arr, values: np.ndarray) -> np.ndarray:
    """`values` (in torch's draw order) laid out with arr's shape, element k going to the k-th
    element of arr's memory."""
    order = memory_order(arr)
    return values.reshape([arr.shape[d] for d in order]).transpose(np.argsort(order))


def is_contiguous(arr) -> bool:
    return bool(arr.flags.c_contiguous)


class fork_rng:
    """torch.random.fork_rng: restore the default generator's state on exit."""

    def __init__(self, devices=None, enabled: bool = True, device_type: str = "cuda") -> None:
        self.enabled = enabled

    def __enter__(self):
        if self.enabled:
            self._saved = default_generator.get_state()
        return self

    def __exit__(self, *exc) -> None:
        if self.enabled:
            default_generator.set_state(self._saved)


def cauchy(g: Generator, n: int, np_dtype, median: float = 0.0, sigma: float = 1.0) -> np.ndarray:
    """cauchy_(median, sigma): median + sigma * tan(pi * (u - 1/2)) in doubles, u kept off 0 and 1."""
    eps = np.finfo(np.float64).eps
    u = np.clip(_unit(g, n, np.float64), eps, 1 - eps)
    return _narrow(libm.fma64(libm.tan(math.pi * (u - 0.5)), sigma, median), np_dtype)


def log_normal(g: Generator, n: int, np_dtype, mean: float = 1.0, std: float = 2.0) -> np.ndarray:
    """log_normal_(mean, std): exp of the scalar Box-Muller normal (its cache included)."""
    return _narrow(libm.exp(_normal_scalar(g, n, mean, std)), np_dtype)


def geometric(g: Generator, n: int, np_dtype, p: float) -> np.ndarray:
    """geometric_(p): ceil(log(u) / log1p(-p)) in doubles."""
    with np.errstate(divide="ignore"):
        return _narrow(np.ceil(libm.log(_unit(g, n, np.float64)) / math.log1p(-p)), np_dtype)
