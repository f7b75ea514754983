"""Torch's CPU random streams, bit for bit: recorded values (no torch needed) and a sweep against
PyTorch over seeds, dtypes and the sizes where torch's kernels switch algorithm."""
import hashlib

import numpy as np
import pytest

import gradviz as gv
import gradviz.nn as gnn
from gradviz import libm
from gradviz import random as R


def bits_equal(a, b) -> bool:
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def f32(values):
    return np.array(values, dtype=np.float32)


# -- recorded from torch 2.13 (CPU, x86 AVX2), so the claims hold without torch installed ----------
def test_recorded_seed0_streams():
    gv.manual_seed(0)
    assert bits_equal(gv.randn(3), f32([1.5409960746765137, -0.293428897857666, -2.1787893772125244]))
    gv.manual_seed(0)
    assert bits_equal(gv.rand(3), f32([0.49625658988952637, 0.7682217955589294, 0.08847743272781372]))
    gv.manual_seed(0)
    assert bits_equal(gv.randn(3, dtype=gv.float64),
                      np.array([1.5409961082440433, -0.2934289057609464, -2.1787893820745574]))
    gv.manual_seed(0)      # 20 float32 values: the 16-wide Box-Muller with torch's AVX2 polynomials
    assert bits_equal(gv.randn(20), f32([
        -1.1258398294448853, -1.152360200881958, -0.2505785822868347, -0.4338788092136383, 0.5988394618034363,
        -1.5550950765609741, -0.3413603901863098, 1.85300612449646, 0.46809640526771545, -0.1577124446630478,
        1.4436601400375366, 0.26604941487312317, 1.3893661499023438, 1.586334228515625, 0.946298360824585,
        -0.843676745891571, 0.9318265914916992, 1.2590092420578003, 2.0049805641174316, 0.05373690277338028]))
    gv.manual_seed(0)
    assert bits_equal(gv.randn(17, dtype=gv.float64), np.array([
        -2.310411800234176, -0.6332746088675096, -1.2609246557194385, -0.726951062065411, -0.019964750907762653,
        0.2102998901016947, 0.17718935139366584, -0.830510051008449, 0.23871805816817063, -0.2426793824588577,
        -0.7730112772958181, -1.5951814880783068, -0.6870036940435463, 1.4880743158106724, -0.4484158047114511,
        -0.8910030351707375, 0.6748575435940039]))


def test_recorded_integers_permutations_and_layers():
    gv.manual_seed(0)
    assert gv.randint(0, 10, (8,)).tolist() == [4, 9, 3, 0, 3, 9, 7, 3]
    gv.manual_seed(0)
    assert gv.randint(0, 2 ** 40, (3,)).tolist() == [741280623151, 506137267392, 291447657211]
    gv.manual_seed(0)
    assert gv.randperm(10).tolist() == [4, 1, 7, 5, 3, 9, 0, 8, 6, 2]
    gv.manual_seed(0)
    lin = gnn.Linear(3, 2)
    assert bits_equal(lin.weight, f32([[-0.004322517663240433, 0.3097158372402191, -0.4751853346824646],
                                       [-0.4248946011066437, -0.2223689705133438, 0.15482072532176971]]))
    assert bits_equal(lin.bias, f32([-0.011439144611358643, 0.45777493715286255]))
    gv.manual_seed(0)
    assert gv.nn.functional.dropout(gv.ones(8), 0.5).tolist() == [0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0, 2.0]
    gv.manual_seed(0)
    assert gv.bernoulli(gv.full((8,), 0.3)).tolist() == [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    gv.manual_seed(0)
    probs = gv.tensor([0.1, 0.2, 0.3, 0.4])
    assert gv.multinomial(probs, 4).tolist() == [2, 1, 3, 0]
    assert gv.multinomial(probs, 6, True).tolist() == [3, 3, 1, 2, 2, 1]


def test_recorded_generator_and_state_bytes():
    g = gv.Generator()
    assert g.initial_seed() == 67280421310721
    assert bits_equal(gv.rand(2, generator=g), f32([0.267295241355896, 0.8725283145904541]))
    gv.manual_seed(0)
    state = gv.get_rng_state()
    assert state.dtype is gv.uint8 and tuple(state.shape) == (5056,)
    assert hashlib.sha256(state.numpy().tobytes()).hexdigest() == \
        "1ccf17250133dec5e96478acd63e13d728d0dbbabb30389415a302c6f872f81f"
    gv.randn(5)          # leaves a cached second Box-Muller value in the state
    assert hashlib.sha256(gv.get_rng_state().numpy().tobytes()).hexdigest() == \
        "3d9bb8ca5dee2d3e5a8efad18fd09f85c53e5a8b6f82aaf0b02dc37c9c20f497"


# -- the generator API ---------------------------------------------------------------------------
def test_state_round_trip_and_generators_are_independent():
    gv.manual_seed(3)
    gv.randn(5)
    saved = gv.get_rng_state()
    first = gv.randn(40)
    gv.set_rng_state(saved)
    assert bits_equal(gv.randn(40), first)
    g1, g2 = gv.Generator().manual_seed(1), gv.Generator().manual_seed(1)
    a = gv.rand(7, generator=g1)
    gv.rand(100)                      # the default generator does not disturb g2
    assert bits_equal(gv.rand(7, generator=g2), a)
    with gv.random.fork_rng():
        gv.rand(3)
    assert bits_equal(gv.get_rng_state(), gv.get_rng_state())


def test_seed_and_initial_seed():
    assert gv.manual_seed(-5).initial_seed() == 2 ** 64 - 5
    s = gv.seed()
    assert gv.initial_seed() == s and 0 <= s < 2 ** 64
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        gv.manual_seed(2 ** 64)


def test_errors_in_torchs_words():
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056 but found the input RNG "
                                           "state size to be 10"):
        gv.set_rng_state(gv.zeros(10, dtype=gv.uint8))
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        gv.set_rng_state(gv.zeros(5056))
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        gv.set_rng_state(gv.zeros(5056, dtype=gv.uint8))
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to', but got from=5 >= to=5"):
        gv.randint(5, 5, (3,))
    with pytest.raises(NotImplementedError, match="\"check_uniform_bounds\" not implemented for 'Long'"):
        gv.rand(3, dtype=gv.int64)
    with pytest.raises(RuntimeError, match=r"uniform_ expects to return a \[from, to\) range, but found from=3 > to=1"):
        gv.zeros(3).uniform_(3, 1)
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        gv.zeros(3).normal_(0, -1)
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\], but got p=1.5"):
        gv.zeros(3).bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="exponential_ expects lambda > 0.0, but found lambda=0"):
        gv.zeros(3).exponential_(0)
    with pytest.raises(RuntimeError, match="cannot sample n_sample > prob_dist.size"):
        gv.multinomial(gv.ones(3), 4)


def test_unusual_engine_states_are_drawn_as_torch_would():
    g = gv.Generator().manual_seed(11)
    ref = gv.Generator().manual_seed(11)
    state = g.get_state().numpy().copy()
    state[8:12] = np.frombuffer(np.int32(100).tobytes(), np.uint8)     # left = 100
    state[16:24] = np.frombuffer(np.uint64(7).tobytes(), np.uint8)     # next = 7
    g.set_state(gv.tensor(state))
    words = g._u32(700)
    # torch reads state[7:106] (left − 1 words), then regenerates the block
    ref_state = R._seeded_state(11)
    assert np.array_equal(words[:99], R._temper(ref_state[7:106]))
    assert np.array_equal(words[99:], R._temper(R._twist(ref_state))[:601])


def test_array_twist_matches_the_c_engine():
    g = gv.Generator().manual_seed(123)
    state = R._seeded_state(123)
    expected = []
    for _ in range(3):
        state = R._twist(state)
        expected.append(R._temper(state))
    assert np.array_equal(g._u32(3 * 624), np.concatenate(expected))


def test_fused_multiply_add_is_rounded_once():
    # 1 + 2**-24 is a float32 tie; the fused product-sum breaks it by the tiny addend
    a = np.array([1 + 2.0 ** -23], dtype=np.float32)
    fused = libm.fma32(a, np.float32(1 + 2.0 ** -23), np.float32(-1 - 2.0 ** -22))
    assert fused[0] == np.float32(2.0 ** -46)
    # (1 + 2⁻²³)(2⁻²⁴ − 2⁻⁴⁷) + (1 + 2⁻²³) lies just below a float32 tie that the double sum hits
    # exactly; one rounding keeps 1 + 2⁻²³, two would round the tie to even (1 + 2⁻²²)
    a = np.array([1 + 2.0 ** -23], dtype=np.float32)
    tie = libm.fma32(a, np.float32(2.0 ** -24 - 2.0 ** -47), np.float32(1 + 2.0 ** -23))
    assert tie[0] == np.float32(1 + 2.0 ** -23)
    assert libm.fma32(np.array([-0.0], dtype=np.float32), np.float32(3), 0.0)[0] == 0 and \
        not np.signbit(libm.fma32(np.array([-0.0], dtype=np.float32), np.float32(3), 0.0)[0])
    x = np.array([0.1, 1 / 3, 2.0 ** 0.5])
    exact = [float(__import__("fractions").Fraction(v) * __import__("fractions").Fraction(3.7)
                   + __import__("fractions").Fraction(-0.25)) for v in x]
    assert libm.fma64(x, 3.7, -0.25).tolist() == exact


# -- against torch ------------------------------------------------------------------------------------
SIZES = [1, 2, 3, 15, 16, 17, 31, 32, 33, 100, 624, 625, 1000, 4099]


@pytest.mark.torch
@pytest.mark.parametrize("seed", [0, 1, 42, 2 ** 32 + 7, 67280421310721, 2 ** 64 - 1])
def test_streams_match_torch(seed):
    torch = pytest.importorskip("torch")
    g, tg = gv.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
    for n in SIZES:
        for dt, tdt in ((gv.float32, torch.float32), (gv.float64, torch.float64)):
            assert bits_equal(gv.rand(n, dtype=dt, generator=g), torch.rand(n, dtype=tdt, generator=tg))
            assert bits_equal(gv.randn(n, dtype=dt, generator=g), torch.randn(n, dtype=tdt, generator=tg)), (n, dt)
            assert bits_equal(gv.empty(n, dtype=dt).uniform_(-2.5, 0.75, generator=g),
                              torch.empty(n, dtype=tdt).uniform_(-2.5, 0.75, generator=tg)), (n, dt)
            assert bits_equal(gv.empty(n, dtype=dt).normal_(0.5, 0.02, generator=g),
                              torch.empty(n, dtype=tdt).normal_(0.5, 0.02, generator=tg)), (n, dt)
            assert bits_equal(gv.empty(n, dtype=dt).exponential_(1.5, generator=g),
                              torch.empty(n, dtype=tdt).exponential_(1.5, generator=tg))
        assert bits_equal(gv.randn(n, dtype=gv.float16, generator=g), torch.randn(n, dtype=torch.float16, generator=tg))
        assert bits_equal(gv.randint(-3, 10, (n,), generator=g), torch.randint(-3, 10, (n,), generator=tg))
        assert bits_equal(gv.randint(0, 2 ** 28, (n,), generator=g), torch.randint(0, 2 ** 28, (n,), generator=tg))
        assert bits_equal(gv.randperm(n, generator=g), torch.randperm(n, generator=tg))
        assert bits_equal(g.get_state(), tg.get_state()), n


@pytest.mark.torch
@pytest.mark.parametrize("seed", [0, 5, 99])
def test_large_draws_match_torch(seed):
    torch = pytest.importorskip("torch")
    gv.manual_seed(seed)
    torch.manual_seed(seed)
    for dt, tdt in ((gv.float32, torch.float32), (gv.float64, torch.float64)):
        assert bits_equal(gv.randn(300, 337, dtype=dt), torch.randn(300, 337, dtype=tdt))
        assert bits_equal(gv.empty(50000, dtype=dt).normal_(-1.25, 3.5), torch.empty(50000, dtype=tdt).normal_(-1.25, 3.5))
        assert bits_equal(gv.rand(100003, dtype=dt), torch.rand(100003, dtype=tdt))
    assert bits_equal(gv.randperm(60000), torch.randperm(60000))
    assert bits_equal(gv.get_rng_state(), torch.get_rng_state())


@pytest.mark.torch
def test_bernoulli_multinomial_and_random_match_torch():
    torch = pytest.importorskip("torch")
    for seed in range(4):
        gv.manual_seed(seed)
        torch.manual_seed(seed)
        for dt, tdt in ((gv.float32, torch.float32), (gv.float64, torch.float64)):
            p = np.random.RandomState(seed).rand(6, 50).astype(dt.np)
            assert bits_equal(gv.bernoulli(gv.tensor(p)), torch.bernoulli(torch.tensor(p)))
            assert bits_equal(gv.bernoulli(gv.tensor(p), 0.25), torch.bernoulli(torch.tensor(p), 0.25))
            assert bits_equal(gv.zeros(50, dtype=dt).bernoulli_(gv.tensor(p[0])),
                              torch.zeros(50, dtype=tdt).bernoulli_(torch.tensor(p[0])))
            for k, rep in ((1, False), (1, True), (7, False), (50, False), (9, True), (200, True)):
                assert bits_equal(gv.multinomial(gv.tensor(p), k, rep), torch.multinomial(torch.tensor(p), k, rep))
            assert bits_equal(gv.multinomial(gv.tensor(p[0]), 3), torch.multinomial(torch.tensor(p[0]), 3))
        for gdt, tdt in ((gv.int64, torch.int64), (gv.int32, torch.int32), (gv.uint8, torch.uint8),
                         (gv.bool, torch.bool), (gv.float32, torch.float32), (gv.float64, torch.float64)):
            assert bits_equal(gv.empty(9, dtype=gdt).random_(), torch.empty(9, dtype=tdt).random_())
        assert bits_equal(gv.empty(9).random_(7), torch.empty(9).random_(7))
        assert bits_equal(gv.empty(9, dtype=gv.int64).random_(-4, 2 ** 33),
                          torch.empty(9, dtype=torch.int64).random_(-4, 2 ** 33))
        assert bits_equal(gv.get_rng_state(), torch.get_rng_state())


@pytest.mark.torch
def test_layout_tensors_and_likes_match_torch():
    torch = pytest.importorskip("torch")
    gv.manual_seed(2)
    torch.manual_seed(2)
    w, tw = gv.empty(20, 33), torch.empty(20, 33)
    assert bits_equal(w.t().normal_(), tw.t().normal_())              # non-contiguous: the scalar path
    assert bits_equal(w.t().uniform_(-1, 1), tw.t().uniform_(-1, 1))  # filled in memory order
    assert bits_equal(gv.rand_like(w.t()), torch.rand_like(tw.t()))
    assert bits_equal(gv.randn_like(w), torch.randn_like(tw))
    assert bits_equal(gv.randint_like(w, 3, 9), torch.randint_like(tw, 3, 9))
    assert bits_equal(gv.normal(gv.zeros(3, 20) + 1, 2.0), torch.normal(torch.zeros(3, 20) + 1, 2.0))
    assert bits_equal(gv.normal(1.5, gv.ones(20) * 2), torch.normal(1.5, torch.ones(20) * 2))
    assert bits_equal(gv.normal(gv.ones(20), gv.ones(4, 20) * 3), torch.normal(torch.ones(20), torch.ones(4, 20) * 3))
    assert bits_equal(gv.normal(2.0, 3.0, (4, 5)), torch.normal(2.0, 3.0, (4, 5)))
    # an expanded input (stride 0) is not dense: the result is contiguous and filled row by row
    p, tp = gv.tensor([0.1, 0.9, 0.5]), torch.tensor([0.1, 0.9, 0.5])
    assert bits_equal(gv.bernoulli(p.expand(4, 3)), torch.bernoulli(tp.expand(4, 3)))
    assert gv.rand_like(p.expand(4, 3)).stride() == torch.rand_like(tp.expand(4, 3)).stride() == (3, 1)
    assert bits_equal(gv.randn_like(gv.ones(5, 1).expand(5, 4)), torch.randn_like(torch.ones(5, 1).expand(5, 4)))
    g, tg = gv.Generator().manual_seed(1), torch.Generator().manual_seed(1)
    assert bits_equal(gv.randn_like(w, generator=g), torch.randn_like(tw, generator=tg))
    assert bits_equal(gv.get_rng_state(), torch.get_rng_state())


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_modules_init_and_dropout_match_torch(dtype):
    torch = pytest.importorskip("torch")
    gdt, tdt = getattr(gv, dtype), getattr(torch, dtype)
    for seed in (0, 3):
        gv.manual_seed(seed)
        torch.manual_seed(seed)
        for shape in ((3, 2), (784, 128), (10, 1)):
            a, b = gnn.Linear(*shape, dtype=gdt), torch.nn.Linear(*shape, dtype=tdt)
            assert bits_equal(a.weight, b.weight) and bits_equal(a.bias, b.bias)
        assert bits_equal(gnn.Embedding(27, 10, dtype=gdt).weight, torch.nn.Embedding(27, 10, dtype=tdt).weight)
        w, tw = gv.empty(64, 3, 5, dtype=gdt), torch.empty(64, 3, 5, dtype=tdt)
        for name, kwargs in (("uniform_", {"a": -0.3, "b": 0.7}), ("normal_", {"mean": 0.1, "std": 0.02}),
                             ("kaiming_uniform_", {}), ("kaiming_normal_", {"mode": "fan_out"}),
                             ("kaiming_uniform_", {"a": 5 ** 0.5}), ("xavier_uniform_", {"gain": 2.0}),
                             ("xavier_normal_", {})):
            assert bits_equal(getattr(gnn.init, name)(w, **kwargs), getattr(torch.nn.init, name)(tw, **kwargs)), name
        x, tx = gv.randn(40, 30, dtype=gdt), torch.randn(40, 30, dtype=tdt)
        for p in (0.1, 0.5, 0.9):
            assert bits_equal(gv.nn.functional.dropout(x, p), torch.nn.functional.dropout(tx, p))
        drop, tdrop = gnn.Dropout(0.2), torch.nn.Dropout(0.2)
        assert bits_equal(drop(x.t()), tdrop(tx.t()))
        assert bits_equal(gv.get_rng_state(), torch.get_rng_state())


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rrelu_draws_torchs_slopes_and_leaves_the_stream_in_step(dtype):
    """rrelu in training draws one double per entry ≤ 0 (none for the others, NaN included), in element
    order, from bounds rounded to the kernel's precision; a transposed input is read in its own order."""
    torch = pytest.importorskip("torch")
    gdt, tdt = getattr(gv, dtype), getattr(torch, dtype)
    for seed in (0, 11):
        gv.manual_seed(seed)
        torch.manual_seed(seed)
        x, tx = gv.randn(9, 7, dtype=gdt), torch.randn(9, 7, dtype=tdt)
        x[2, 3], tx[2, 3] = float("nan"), float("nan")
        for lower, upper in ((1 / 8, 1 / 3), (0.1, 0.3), (0.25, 0.25)):
            assert bits_equal(gv.nn.functional.rrelu(x.t(), lower, upper, training=True),
                              torch.nn.functional.rrelu(tx.t(), lower, upper, training=True))
        m, tm = gnn.RReLU(0.05, 0.5), torch.nn.RReLU(0.05, 0.5)
        assert repr(m) == repr(tm) and bits_equal(m(x), tm(tx))
        m.eval(), tm.eval()
        assert bits_equal(m(x), tm(tx))                                  # eval draws nothing
        assert bits_equal(gv.rrelu_(x * 1, training=True), torch.rrelu_(tx * 1, training=True))
        g, tg = gv.Generator().manual_seed(4), torch.Generator().manual_seed(4)
        assert bits_equal(gv.rrelu(x, training=True, generator=g), torch.rrelu(tx, training=True, generator=tg))
        assert bits_equal(gv.rand(3), torch.rand(3))
        assert bits_equal(gv.get_rng_state(), torch.get_rng_state())


@pytest.mark.torch
def test_states_cross_between_torch_and_gradviz():
    torch = pytest.importorskip("torch")
    torch.manual_seed(8)
    torch.randn(7, dtype=torch.float64)                                 # a cached normal in the state
    gv.set_rng_state(gv.tensor(torch.get_rng_state().numpy()))
    assert bits_equal(gv.randn(5), torch.randn(5))
    torch.set_rng_state(torch.from_numpy(gv.get_rng_state().numpy().copy()))
    assert bits_equal(gv.rand(700), torch.rand(700))


@pytest.mark.torch
def test_dropout_graph_is_torchs_cpu_graph():
    torch = pytest.importorskip("torch")
    gv.manual_seed(4)
    torch.manual_seed(4)
    x, tx = gv.ones(4, requires_grad=True), torch.ones(4, requires_grad=True)
    y, ty = gv.nn.functional.dropout(x, 0.5), torch.nn.functional.dropout(tx, 0.5)
    assert y.grad_fn.name() == ty.grad_fn.name() == "MulBackward0"
    assert gv.nn.functional.dropout(x, 0.0) is x
    y.sum().backward()
    ty.sum().backward()
    assert bits_equal(x.grad, tx.grad)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_other_distributions_match_torch(dtype):
    torch = pytest.importorskip("torch")
    gdt, tdt = getattr(gv, dtype), getattr(torch, dtype)
    for seed in range(3):
        gv.manual_seed(seed)
        torch.manual_seed(seed)
        for n in (1, 5, 17, 1000):
            for name, args in (("cauchy_", (0.5, 2.0)), ("log_normal_", (0.1, 0.5)), ("log_normal_", ()),
                               ("geometric_", (0.3,)), ("uniform_", (-1.0, 3.0)), ("exponential_", (0.5,))):
                mine = getattr(gv.empty(n, dtype=gdt), name)(*args)
                assert bits_equal(mine, getattr(torch.empty(n, dtype=tdt), name)(*args)), (name, n)
        assert bits_equal(gv.empty(9, dtype=gv.int64).geometric_(0.2), torch.empty(9, dtype=torch.int64).geometric_(0.2))
        assert bits_equal(gv.get_rng_state(), torch.get_rng_state())


def test_cuda_seeding_leaves_the_cpu_stream_alone():
    gv.manual_seed(1)
    before = gv.get_rng_state()
    gv.cuda.manual_seed(5)
    gv.cuda.manual_seed_all(5)
    assert bits_equal(gv.get_rng_state(), before)


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,args", [((10,), ()), ((64, 9), (0.0, 0.02)), ((37,), (0.0, 1.0, -1.0, 3.0)),
                                        ((500,), (0.0, 1.0, 2.0, 4.0)), ((1000,), (0.5, 0.02, -0.04, 0.04))])
def test_trunc_normal_draws_torchs_values_and_leaves_the_stream_in_step(dtype, shape, args):
    """Both of torch's samplers: normal draws redrawn outside [a, b] (wide bounds), and uniform
    proposals with a density test (narrow bounds or bounds off the mean)."""
    import warnings
    torch = pytest.importorskip("torch")
    for seed in (0, 3, 17):
        gv.manual_seed(seed)
        torch.manual_seed(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = gnn.init.trunc_normal_(gv.empty(*shape, dtype=getattr(gv, dtype)), *args)
            theirs = torch.nn.init.trunc_normal_(torch.empty(*shape, dtype=getattr(torch, dtype)), *args)
        assert np.array_equal(ours.numpy(), theirs.numpy())
        assert np.array_equal(gv.randn(5).numpy(), torch.randn(5).numpy())


def test_trunc_normal_stays_inside_its_bounds_and_warns_far_from_the_mean():
    x = gnn.init.trunc_normal_(gv.empty(2000), mean=0.0, std=1.0, a=-0.5, b=1.5)
    assert float(x.min()) >= -0.5 and float(x.max()) <= 1.5 and x.grad_fn is None
    with pytest.warns(UserWarning, match="mean is more than 2 std from"):
        gnn.init.trunc_normal_(gv.empty(10), mean=5.0, std=1.0, a=-1.0, b=1.0)
