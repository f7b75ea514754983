"""Functions torch writes in C++ from smaller ops record those ops in torch's order, so a graph,
its values and its gradients are torch's: linalg.matrix_power (a clone for n = 1, never the input
itself), linalg.multi_dot and chain_matmul (torch's cheapest parenthesization, viewed to the
output's shape), repeat_interleave with a number of repeats (unsqueeze, expand, clone, view), and
trapezoid with a spacing (Σ y − (y₀ + yₙ) · ½, times dx)."""
import textwrap

from tests.support.parity import gradviz_output, needs_torch, torch_output

pytestmark = needs_torch

TREE = """
def tree(fn):
    if fn is None:
        return "None"
    if "AccumulateGrad" in fn.name():
        return "A"
    return fn.name() + "(" + ",".join(tree(f) for f, _ in fn.next_functions) + ")"
"""


def same(source: str) -> str:
    source = TREE + textwrap.dedent(source)
    ours, theirs = gradviz_output(source), torch_output(source)
    assert ours == theirs
    return ours[0]


def test_matrix_power_in_torchs_steps_and_never_the_input_itself():
    text = same("""
        A = torch.tensor([[1.0, 2.0], [3.0, 4.5]], dtype=torch.float64, requires_grad=True)
        for n in (0, 1, 2, 3, 4, 5, 6, 7, -1, -2, -3):
            P = torch.linalg.matrix_power(A, n)
            P.sum().backward()
            print(n, tree(P.grad_fn), P, A.grad)
            A.grad = None
        B = torch.matrix_power(A.detach(), 1)
        B[0, 0] = 100
        print(B is A, A[0, 0].item())
        print(torch.linalg.matrix_power(torch.ones(2, 3, 3), 0))
    """)
    assert "1 CloneBackward0(A)" in text and "False 1.0" in text


def test_multi_dot_in_torchs_order():
    text = same("""
        torch.manual_seed(0)
        A = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
        B = torch.randn(3, 5, dtype=torch.float64, requires_grad=True)
        C = torch.randn(5, 2, dtype=torch.float64, requires_grad=True)
        D = torch.randn(2, 6, dtype=torch.float64, requires_grad=True)
        u = torch.randn(4, dtype=torch.float64, requires_grad=True)
        w = torch.randn(6, dtype=torch.float64, requires_grad=True)
        for ts in ([A, B], [A, B, C], [A.T, A, B], [A, B, C, D], [u, A, B, C, D, w], [u, A], [C.T, B.T, A.T, u],
                   [A, B, C, D, D.T, C.T]):
            r = torch.linalg.multi_dot(ts)
            print(r.shape, tree(r.grad_fn), torch.allclose(r, torch.linalg.multi_dot([t.detach() for t in ts])))
        r = torch.chain_matmul(A, B, C)
        print(tree(r.grad_fn), tree(torch.chain_matmul(A).grad_fn))
        try:
            torch.chain_matmul(A, u)
        except RuntimeError as e:
            print(e)
    """)
    assert "ViewBackward0(MmBackward0(A,MmBackward0(A,A)))" in text


def test_repeat_interleave_by_a_number_expands_where_by_a_tensor_it_indexes():
    same("""
        a = torch.arange(6.).reshape(2, 3).requires_grad_()
        for args, kw in [((2,), {"dim": 0}), ((3,), {"dim": 1}), ((2,), {}), ((2,), {"dim": -1}), ((0,), {"dim": 0}),
                         ((torch.tensor(2),), {"dim": 0}), ((torch.tensor([1, 2]),), {"dim": 0})]:
            r = a.repeat_interleave(*args, **kw)
            (r * torch.arange(float(r.numel())).reshape(r.shape)).sum().backward()
            print(r.shape, tree(r.grad_fn), r.tolist(), a.grad)
            a.grad = None
        print(tree(a.t().repeat_interleave(2).grad_fn), torch.repeat_interleave(torch.tensor(5.), 3))
        for bad in (lambda: a.repeat_interleave(-1), lambda: a.repeat_interleave(2, dim=0, output_size=3)):
            try:
                bad()
            except RuntimeError as e:
                print(e)
        print(a.repeat_interleave(2, dim=0, output_size=4).shape)
    """)


def test_trapezoid_with_a_spacing_is_torchs_formula():
    same("""
        y = torch.tensor([[1., 2., 4., 7.], [0.5, -1., 3., 2.]], requires_grad=True)
        for kw in [{}, {"dx": 0.5}, {"dim": 0}, {"dx": 2, "dim": 0}]:
            r = torch.trapezoid(y, **kw)
            r.sum().backward()
            print(r, tree(r.grad_fn), y.grad)
            y.grad = None
        print(torch.trapz(y, dx=0.25), torch.trapezoid(y[:, :1]), torch.trapezoid(y[:, :0]))
        print(torch.trapezoid(torch.tensor([1, 2, 4])), torch.trapezoid(torch.tensor([1, 2, 4]), dx=2))
        r = torch.trapezoid(y, torch.tensor([0., 1., 3., 4.]))
        print(r, tree(r.grad_fn), torch.cumulative_trapezoid(y, dx=0.5))
    """)
