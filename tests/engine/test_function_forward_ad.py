"""A custom autograd.Function under forward AD, as torch's: its forward runs without tangents, its
jvp(ctx, *input tangents) gives the outputs' tangents (save_for_forward, materialized zeros or None,
None for a non-tensor argument), and a Function without jvp, or a jvp returning the wrong count or
size, is refused in torch's words. A module with full backward hooks passes its inputs through
such a Function, so it is refused under forward AD too, as in torch."""
import warnings

import pytest

from tests.support.parity import needs_torch, real_torch, same_output

pytestmark = [pytest.mark.torch, needs_torch]


@pytest.fixture(autouse=True, scope="module")
def torch_forward_ad_loaded():
    """torch's first forward-AD call in a process imports modules that warn about torch.jit.script:
    made once here, so the comparisons see only what the programs themselves warn."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with real_torch.autograd.forward_ad.dual_level():
            real_torch.autograd.forward_ad.make_dual(real_torch.ones(1), real_torch.ones(1)).sin()

FUNCTIONS = """
fwAD = torch.autograd.forward_ad
class NoJvp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def backward(ctx, g):
        return g * 2
class Two(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.save_for_forward(x)
        ctx.k = k
        return x * k, x.sin()
    @staticmethod
    def jvp(ctx, xt, kt):
        print("jvp args", xt, kt)
        x, = ctx.saved_tensors
        return xt * ctx.k, xt * x.cos()
class WrongCount(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def jvp(ctx, xt):
        return xt, xt
class WrongShape(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2
    @staticmethod
    def jvp(ctx, xt):
        return xt[:1]
class Unmaterialized(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.set_materialize_grads(False)
        return x * y
    @staticmethod
    def jvp(ctx, xt, yt):
        print("tangents", xt, yt)
        return xt * 3
class Materialized(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        return x * y
    @staticmethod
    def jvp(ctx, xt, yt):
        print("tangents", xt, yt)
        return xt + yt
x = torch.tensor([1., 2.], dtype=torch.float64)
"""


def test_jvp_gives_the_tangents_and_errors_are_torchs():
    same_output(FUNCTIONS, """
    with fwAD.dual_level():
        d = fwAD.make_dual(x, torch.ones(2, dtype=torch.float64))
        for f in [lambda: NoJvp.apply(d), lambda: Two.apply(d, 3.0), lambda: WrongCount.apply(d),
                  lambda: WrongShape.apply(d), lambda: Unmaterialized.apply(d, x), lambda: Materialized.apply(d, x),
                  lambda: NoJvp.apply(x)]:
            try:
                out = f()
                print([fwAD.unpack_dual(o) for o in (out if isinstance(out, tuple) else (out,))])
            except (RuntimeError, NotImplementedError) as e:
                print(type(e).__name__, e)
    """)


def test_jvp_runs_with_grad_mode_and_its_tangent_is_differentiable():
    same_output(FUNCTIONS, """
    r = torch.ones(2, dtype=torch.float64, requires_grad=True)
    with fwAD.dual_level():
        out = Two.apply(fwAD.make_dual(r * 1, torch.ones(2, dtype=torch.float64)), 2.0)
        print(out, [fwAD.unpack_dual(o).tangent for o in out])
        fwAD.unpack_dual(out[1]).tangent.sum().backward()
    print(r.grad)
    print(torch.autograd.gradcheck(lambda t: Two.apply(t, 2.0)[1], (r,), check_forward_ad=True,
                                   check_backward_ad=False, check_undefined_grad=False, check_batched_grad=False))
    """)


def test_a_module_with_a_full_backward_hook_refuses_forward_ad():
    same_output("""
    m = torch.nn.Linear(2, 2)
    m.register_full_backward_hook(lambda *a: None)
    with torch.autograd.forward_ad.dual_level():
        d = torch.autograd.forward_ad.make_dual(torch.ones(2), torch.ones(2))
        try:
            m(d)
        except NotImplementedError as e:
            print(e)
    """)
