"""Views and in-place writes through them, as PyTorch: indexing, slicing, transposes, view,
expand and friends share their base's memory and version counter; an in-place op through a
view of a tensor in the graph rebases the base's history (CopySlices) and the view's
grad_fn (AsStridedBackward0); writes PyTorch refuses are refused in its words.

Each snippet prints values, gradients, grad_fn names and errors; it runs on gradviz and,
when installed, on PyTorch 2.13, and both must print the same. The golden tests below
pin the issue's examples without PyTorch.
"""
import textwrap

import numpy as np
import pytest
from tests.support.parity import gradviz_output, needs_torch, torch_output

import gradviz as torch
from gradviz.autograd.views import geometry, view_index

# a helper every snippet may use: print an error's type and message instead of raising
PRELUDE = '''
def attempt(f):
    try:
        f()
        print("ok")
    except Exception as e:
        print(type(e).__name__ + ":", str(e).split("\\n")[0])

def names(node, depth=3):
    """The grad_fn chain below node, as nested names."""
    if node is None or depth == 0:
        return None
    return (node.name().split("::")[-1], [names(n, depth - 1) for n, _ in node.next_functions])
'''

SNIPPETS = {
    # -- the examples ----------------------------------------------------------------
    "select_writes_the_base": """
        b = torch.zeros(3); b[1].add_(2.); b[0].fill_(5.); print(b)
    """,
    "view_sees_writes_to_its_base": """
        b = torch.zeros(3); e = b[1]; b.add_(1.); print(e.item(), e._version, b._version, e._base is b)
    """,
    "mul_through_a_select_of_a_non_leaf": """
        x = torch.ones(3, requires_grad=True); y = x * 1; y[0].mul_(5); y.sum().backward()
        print(x.grad, y, names(y.grad_fn))
    """,
    "leaf_view_in_place_raises": """
        x = torch.ones(3, requires_grad=True)
        attempt(lambda: x[0].mul_(2)); attempt(lambda: x[:2].zero_()); attempt(lambda: x.t().add_(1))
        print(x, x._version)
    """,
    "expand_then_in_place": """
        b = torch.zeros(3)
        attempt(lambda: b.expand(2, 3).add_(1)); attempt(lambda: b.expand(2, 3).mul_(torch.ones(2, 3)))
        attempt(lambda: b.expand(2, 3).copy_(torch.ones(2, 3)))
        print(b)
        b.expand(2, 3).fill_(4); print(b); b.expand(2, 3).zero_(); print(b)
        b.expand(1, 3).add_(1); print(b, b._version)
        w = torch.ones(3, requires_grad=True)
        attempt(lambda: torch.zeros(3).expand(2, 3).add_(w))
    """,
    "slice_and_transpose_of_a_non_leaf": """
        x = torch.arange(6.).view(2, 3).requires_grad_()
        y = x * 1; y[:1].mul_(3); (y * torch.arange(6.).view(2, 3)).sum().backward(); print(x.grad, y)
        x.grad = None
        y = x * 1; y.T.mul_(2); (y * torch.arange(6.).view(2, 3)).sum().backward(); print(x.grad, names(y.grad_fn))
        x.grad = None
        y = x * 1; y[:, 1:].exp_(); y.sum().backward(); print(x.grad)
        x.grad = None
        y = x * 1; y[1].pow_(2); y.sum().backward(); print(x.grad)
    """,
    "makemore_dC_ix_plus_equals": """
        C = torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6], [0.7, 0.8], [0.9, 1.0]], requires_grad=True)
        W = torch.tensor([[1., 2.], [3., 4.], [5., 6.], [7., 8.], [9., 10.]])
        d = torch.tensor([[[1., -1.], [2., 0.5]], [[3., 1.5], [-2., 4.]]], requires_grad=True)
        Xb = torch.tensor([[1, 3], [1, 0]])
        dC = C * 2
        for k in range(2):
            for j in range(2):
                ix = Xb[k, j]
                dC[ix] += d[k, j]
        print(dC, names(dC.grad_fn, 2))
        (dC * W).sum().backward()
        print(C.grad, d.grad)
    """,
    # -- what is a view ------------------------------------------------------------------------
    "which_results_are_views": """
        x = torch.arange(12.).view(3, 4).clone()
        for name, f in [("select", lambda t: t[1]), ("slice", lambda t: t[:, 1:3]), ("none", lambda t: t[None]),
                        ("ellipsis", lambda t: t[...]), ("t", lambda t: t.t()), ("T", lambda t: t.T),
                        ("view", lambda t: t.view(12)), ("reshape", lambda t: t.reshape(2, 6)),
                        ("flatten", lambda t: t.flatten()), ("unsqueeze", lambda t: t.unsqueeze(0)),
                        ("squeeze", lambda t: t[None].squeeze(0)), ("permute", lambda t: t.permute(1, 0)),
                        ("transpose", lambda t: t.transpose(0, 1)), ("expand", lambda t: t[:1].expand(3, 4)),
                        ("narrow", lambda t: t.narrow(1, 1, 2)), ("diagonal", lambda t: t.diagonal()),
                        ("movedim", lambda t: t.movedim(0, 1)), ("unbind", lambda t: t.unbind(1)[2]),
                        ("split", lambda t: t.split(2, 1)[1]), ("chunk", lambda t: t.chunk(2)[0]),
                        ("index", lambda t: t[[0, 2]]), ("mask", lambda t: t[t > 5]), ("clone", lambda t: t.clone()),
                        ("contiguous_T", lambda t: t.T.contiguous()), ("detach", lambda t: t.detach()),
                        ("data", lambda t: t.data), ("flip", lambda t: t.flip(0))]:
            v = f(x)
            print(name, v._is_view(), v._base is x)
    """,
    "views_write_through_without_grad": """
        x = torch.zeros(3, 4)
        x[1].fill_(1); x[:, 2].add_(2); x.t()[0].sub_(1); x.view(12)[11].mul_(0).add_(7)
        x.diagonal().add_(10); x.narrow(0, 2, 1).div_(2); x.unbind(0)[0][3] = 5
        x.split(2, 1)[1].mul_(3); x[None][0, 0, 1] = -1; x.permute(1, 0)[3, 2] = 9
        print(x, x._version)
    """,
    "view_of_a_view_has_the_root_as_base": """
        x = torch.arange(12., requires_grad=True)
        y = x * 1
        v = y.view(3, 4)[1:, ::2]
        print(v._base is y, v._version, y._version)
        v.mul_(10)
        print(v._base is y, v._version, y._version, names(v.grad_fn, 2), names(y.grad_fn, 2))
        (y * torch.arange(12.)).sum().backward(); print(x.grad)
    """,
    # -- regeneration of a view's grad_fn ---------------------------------------------------------
    "a_view_follows_a_write_to_its_base": """
        x = torch.ones(4, requires_grad=True)
        y = x * 1; e = y[1]; a = y[2:]
        print(names(e.grad_fn))
        y.mul_(torch.tensor([1., 2., 3., 4.]))
        print(names(e.grad_fn), e._version, e, a.requires_grad)
        (e * 5 + a.sum()).backward(); print(x.grad)
    """,
    "a_view_follows_a_write_to_another_view": """
        x = torch.ones(4, requires_grad=True)
        y = x * 1; a = y[:2]; b = y[1:]
        a.mul_(3)
        print(names(b.grad_fn), b, b._version)
        (b * torch.tensor([1., 2., 3.])).sum().backward(); print(x.grad)
    """,
    "expand_of_a_rewritten_base_sums_its_gradient": """
        x = torch.ones(3, requires_grad=True); y = x * 1; e = y.expand(2, 3); y.mul_(2)
        print(names(e.grad_fn)); (e * torch.arange(6.).view(2, 3)).sum().backward(); print(x.grad)
    """,
    "view_of_a_leaf_modified_under_no_grad": """
        p = torch.ones(3, requires_grad=True); v = p[:2]
        with torch.no_grad():
            p.mul_(2)
        print(names(v.grad_fn), v); (v * 1).sum().backward(); print(p.grad)
    """,
    "base_without_grad_written_with_a_grad_operand": """
        b = torch.zeros(3); w = torch.tensor(2., requires_grad=True); rest = b[1:]
        b[0].add_(1); b[0].mul_(w)
        print(b.requires_grad, names(b.grad_fn), rest.requires_grad, names(rest.grad_fn))
        b[1].add_(w); b.sum().backward(); print(w.grad, b)
    """,
    "two_operand_write_through_a_view": """
        x = torch.ones(3, requires_grad=True); w = torch.full((2,), 3., requires_grad=True)
        y = x * 1; y[1:].mul_(w); print(names(y.grad_fn))
        (y * torch.tensor([1., 2., 3.])).sum().backward(); print(x.grad, w.grad)
        x.grad = None; w.grad = None
        y = x * 2; y[:2].copy_(w * w); (y * torch.tensor([1., 2., 3.])).sum().backward(); print(x.grad, w.grad)
    """,
    "setitem_records_as_torch": """
        x = torch.ones(2, 3, requires_grad=True)
        for key in [slice(None), Ellipsis, (0, [1, 2]), ([0, 1],), (slice(None), 1), None, (0,), (torch.tensor(1),)]:
            for value in (5.0, torch.tensor(5.0, requires_grad=True)):
                y = x * 1
                y[key] = value
                print(key, names(y.grad_fn, 2))
        y = x * 1; y[0] = torch.tensor([7., 8., 9.], requires_grad=True); print(names(y.grad_fn, 2))
        y.sum().backward(); print(x.grad)
        attempt(lambda: x.__setitem__(0, 1.)); attempt(lambda: x.__setitem__([0], 1.))
    """,
    "retain_grad_follows_the_base": """
        x = torch.ones(3, requires_grad=True); y = x * 2; y.retain_grad()
        y[0].mul_(3); (y * torch.tensor([1., 2., 3.])).sum().backward(); print(y.grad, x.grad, y.retains_grad)
    """,
    "retain_grad_and_hooks_of_a_view": """
        x = torch.ones(3, requires_grad=True); y = x * 2; v = y[1:]; v.retain_grad(); v.mul_(3)
        (y * torch.tensor([1., 2., 3.])).sum().backward(); print(v.grad, v.retains_grad, x.grad)
        x = torch.ones(3, requires_grad=True); y = x * 2; v = y[1:]; v.retain_grad(); y.mul_(3)
        (v * torch.tensor([2., 3.])).sum().backward(); print(v.grad, x.grad)
        x = torch.ones(3, requires_grad=True); y = x * 2; v = y[1:]; seen = []
        v.register_hook(lambda g: seen.append(g)); v.mul_(3)
        (y * torch.tensor([1., 2., 3.])).sum().backward(); print(seen, x.grad)
        attempt(lambda: v.detach_()); attempt(lambda: torch.zeros(3)[1:].detach_())
    """,
    "double_backward_through_copy_slices": """
        x = torch.tensor([1., 2., 3.], requires_grad=True)
        y = x * x; y[1:].mul_(x[:2])
        (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)
        print(g); g.sum().backward(); print(x.grad)
    """,
    # -- what PyTorch refuses ------------------------------------------------------------------
    "multi_output_views_refuse_in_place": """
        x = torch.ones(4, requires_grad=True); y = x * 1
        a, b = y.split(2); attempt(lambda: a.mul_(2))
        u = y.unbind()[0]; attempt(lambda: u.add_(1))
        c = y.chunk(2)[1]; attempt(lambda: c.zero_())
        y.mul_(2); attempt(lambda: a.grad_fn); attempt(lambda: (a * 1).sum().backward())
        p, q = torch.zeros(4).split(2); p.mul_(2); print(p)
    """,
    "no_grad_views_refuse_grad_writes": """
        x = torch.ones(3, requires_grad=True); y = x * 1
        with torch.no_grad():
            v = y[:2]
        attempt(lambda: v.mul_(2)); print(v.requires_grad, v.grad_fn)
        y.mul_(2); attempt(lambda: v.grad_fn)
        b = torch.zeros(3)
        with torch.no_grad():
            u = b[0]
        attempt(lambda: u.mul_(torch.tensor(2., requires_grad=True)))
        with torch.no_grad():
            u.mul_(2); v.add_(1)
        print(b, y.detach())
    """,
    "saved_views_written_later_fail_in_backward": """
        x = torch.ones(3, requires_grad=True); w = torch.ones((), requires_grad=True)
        y = x * 1; z = y[0] * w; y.mul_(2)
        attempt(lambda: z.backward())
        y = x * 2; y.mul_(y); attempt(lambda: y.sum().backward())
        y = x * 1; e = y[1:].exp_(); y.mul_(2); attempt(lambda: y.sum().backward())
    """,
}


def _source(name: str) -> str:
    return PRELUDE + textwrap.dedent(SNIPPETS[name])


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_matches_torch(name):
    ours, our_warnings = gradviz_output(_source(name))
    theirs, _ = torch_output(_source(name))
    assert ours == theirs


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippet_runs(name):
    """Every snippet runs on gradviz alone (the comparison above needs PyTorch)."""
    out, _ = gradviz_output(_source(name))
    assert out


# -- the examples, pinned without PyTorch -------------------------------------------------
def test_select_is_a_view_of_its_base():
    b = torch.zeros(3)
    b[1].add_(2.0)
    b[0].fill_(5.0)
    assert b.tolist() == [5.0, 2.0, 0.0]
    e = b[1]
    b.add_(1.0)
    assert e.item() == 3.0 and e._base is b and e._version == b._version == 3


def test_write_through_a_view_of_a_non_leaf_gives_torchs_gradient():
    x = torch.ones(3, requires_grad=True)
    y = x * 1
    y[0].mul_(5)
    y.sum().backward()
    assert x.grad.tolist() == [5.0, 1.0, 1.0]
    assert y.grad_fn.name() == "torch::autograd::CopySlices"
    assert y.grad_fn.next_functions[0][0].name() == "MulBackward0"


def test_view_of_a_leaf_and_expanded_writes_raise_torchs_errors():
    x = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable that requires grad is being used in an "
                                           "in-place operation.$"):
        x[0].mul_(2)
    b = torch.zeros(3)
    with pytest.raises(RuntimeError, match="^unsupported operation: more than one element of the written-to tensor "
                                           "refers to a single memory location"):
        b.expand(2, 3).add_(1)
    assert x.tolist() == [1.0, 1.0, 1.0] and b.tolist() == [0.0, 0.0, 0.0] and x._version == 0


def test_makemore_pattern_after_dC_joined_a_graph():
    C = torch.tensor([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6]], dtype=torch.float64, requires_grad=True)
    d = torch.tensor([[1.0, -1.0], [2.0, 0.5], [3.0, 1.5]], dtype=torch.float64, requires_grad=True)
    ix = torch.tensor([1, 2, 1])
    dC = C * 2
    for k in range(3):
        dC[ix[k]] += d[k]
    weights = torch.arange(6.0, dtype=torch.float64).view(3, 2)
    (dC * weights).sum().backward()
    np.testing.assert_allclose(dC.detach().numpy(), [[0.2, 0.4], [4.6, 1.3], [3.0, 1.7]])
    np.testing.assert_allclose(C.grad.numpy(), 2 * weights.numpy())
    np.testing.assert_allclose(d.grad.numpy(), weights.numpy()[[1, 2, 1]])


def test_copy_slices_against_finite_differences():
    def f(a, w):
        y = a * a
        y[1:, ::2].mul_(w)
        y.t()[0].sin_()
        return y

    a = torch.tensor(np.linspace(-1, 1, 12).reshape(3, 4), dtype=torch.float64, requires_grad=True)
    w = torch.tensor(np.linspace(0.5, 2, 4).reshape(2, 2), dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(f, (a, w))
    # second order: CopySlices' own VJP is recorded with create_graph=True
    def first(a, w):
        with torch.enable_grad():   # gradcheck runs its finite differences under no_grad
            return torch.autograd.grad((f(a, w) ** 2).sum(), (a, w), create_graph=True)

    assert torch.autograd.gradcheck(first, (a, w))


def test_view_index_reads_any_layout():
    base = np.arange(24.0).reshape(4, 6).T          # a non-contiguous base (Fortran order)
    for view in (base[1:, ::2], base[::-1][2], base.T[1:3], np.broadcast_to(base[:1], (3, 4)), base[..., None]):
        idx = view_index(geometry(base, view))
        np.testing.assert_array_equal(base.reshape(-1)[idx], view)
