"""The tutorials' code, run with `import gradviz as torch`, prints what PyTorch prints.

Each snippet is the tutorial's code with only the import changed (random inputs are
written out, so both libraries see the same numbers). It runs under gradviz and, where
PyTorch is installed, under PyTorch too, and the printed text must be identical. The
golden strings are PyTorch 2.13's output, so the tests still mean something without it.
"""
import textwrap

import numpy as np
import pytest

import gradviz
from tests.support.parity import gradviz_output, needs_torch, torch_output

SNIPPETS = {
    "pow_sum": (
        """
        t = torch.arange(5).float()
        t.requires_grad_()
        t.pow(3).sum().backward()
        print(repr(t.grad))
        """,
        "tensor([ 0.,  3., 12., 27., 48.])\n",
    ),
    "doubling_loop": (
        """
        x = torch.tensor([0.3, -1.2, 0.7], requires_grad=True)
        y = x * 2
        k = 1
        while y.data.norm() < 1000:
            y = y * 2
            k += 1
        print(y)
        v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
        y.backward(v)
        print(x.grad)
        print(k, torch.equal(x.grad, v * 2 ** k))
        """,
        "tensor([  307.2000, -1228.8000,   716.8000], grad_fn=<MulBackward0>)\n"
        "tensor([1.0240e+02, 1.0240e+03, 1.0240e-01])\n"
        "10 True\n",
    ),
    "mm_retain_graph": (
        """
        x = torch.tensor([[1.0, 2.0]], requires_grad=True)
        M = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
        y = torch.mm(x, M)
        print(y)
        y.backward(torch.FloatTensor([[1, 0]]), retain_graph=True)
        first = x.grad.clone()
        print(x.grad)
        x.grad.data.zero_()
        y.backward(torch.FloatTensor([[0, 1]]), retain_graph=True)
        second = x.grad.clone()
        print(x.grad)
        x.grad.data.zero_()
        y.backward(torch.FloatTensor([[1, 1]]))
        print(x.grad)
        print(torch.equal(x.grad, first + second))
        """,
        "tensor([[ 7., 10.]], grad_fn=<MmBackward0>)\n"
        "tensor([[1., 3.]])\n"
        "tensor([[2., 4.]])\n"
        "tensor([[3., 7.]])\n"
        "True\n",
    ),
    "barlow_twins_loss": (
        """
        z1 = torch.tensor([[1.0, 2.0, 0.5], [3.0, -1.0, 2.0], [0.0, 4.0, 1.0], [2.0, 2.0, -3.0]],
                          requires_grad=True)
        z2 = torch.tensor([[0.5, 1.0, 2.0], [1.0, 0.0, -1.0], [2.0, 3.0, 1.0], [-1.0, 1.0, 0.0]],
                          requires_grad=True)
        N = 4
        a = (z1 - z1.mean(0)) / z1.std(0)
        c = a.T @ z2 / N
        loss = -torch.diagonal(c).sum()
        print(c)
        print(loss)
        loss.backward()
        print(z1.grad)
        print(z2.grad)
        """,
        "tensor([[-0.4357, -0.8714, -0.7746],\n"
        "        [ 0.1971,  0.8792,  0.6670],\n"
        "        [ 0.7975, -0.0144, -0.0287]], grad_fn=<DivBackward0>)\n"
        "tensor(-0.4147, grad_fn=<NegBackward0>)\n"
        "tensor([[ 0.0678,  0.0476, -0.1732],\n"
        "        [-0.2033, -0.0380,  0.1686],\n"
        "        [-0.1356, -0.0571, -0.0593],\n"
        "        [ 0.2711,  0.0476,  0.0638]])\n"
        "tensor([[ 0.0968, -0.0303, -0.0431],\n"
        "        [-0.2905,  0.3335, -0.2156],\n"
        "        [ 0.2905, -0.2729, -0.1006],\n"
        "        [-0.0968, -0.0303,  0.3593]])\n",
    ),
    "leaf_attributes": (
        """
        x = torch.tensor(1.0, requires_grad=True)
        y = torch.tensor(2.0)
        z = x * y
        for name, t in (("x", x), ("y", y), ("z", z)):
            print(name, t.data, t.requires_grad, t.grad, t.grad_fn, t.is_leaf)
        with torch.no_grad():
            y = x * 2
        print(y.requires_grad, y)
        z.backward()
        print(x.grad, y.grad, z.grad_fn.next_functions[1])
        """,
        "x tensor(1.) True None None True\n"
        "y tensor(2.) False None None True\n"
        "z tensor(2.) True None <MulBackward0 object at 0x…> False\n"
        "False tensor(2.)\n"
        "tensor(2.) None (None, 0)\n",
    ),
    "variable": (
        """
        Variable = torch.autograd.Variable
        x = Variable(torch.ones(2, 2), requires_grad=True)
        y = x + 2
        z = y * y * 3
        out = z.mean()
        print(x)
        print(y)
        print(z, out)
        out.backward()
        print(x.grad)
        """,
        "tensor([[1., 1.],\n        [1., 1.]], requires_grad=True)\n"
        "tensor([[3., 3.],\n        [3., 3.]], grad_fn=<AddBackward0>)\n"
        "tensor([[27., 27.],\n        [27., 27.]], grad_fn=<MulBackward0>) tensor(27., grad_fn=<MeanBackward0>)\n"
        "tensor([[4.5000, 4.5000],\n        [4.5000, 4.5000]])\n",
    ),
    "grad_fn_chain": (
        """
        x = torch.ones(2, 2, requires_grad=True)
        y = x + 2
        z = y * y * 3
        out = z.mean()
        fn = out.grad_fn
        while fn is not None:
            print(type(fn).__name__ if fn.name().startswith("torch::") else fn.name(),
                  [(n.name() if n is not None else None, i) for n, i in fn.next_functions])
            fn = fn.next_functions[0][0] if fn.next_functions else None
        """,
        "MeanBackward0 [('MulBackward0', 0)]\n"
        "MulBackward0 [('MulBackward0', 0), (None, 0)]\n"
        "MulBackward0 [('AddBackward0', 0), ('AddBackward0', 0)]\n"
        "AddBackward0 [('torch::autograd::AccumulateGrad', 0), (None, 0)]\n"
        "AccumulateGrad []\n",
    ),
    "sgd_step": (
        """
        w = torch.tensor([0.5, -0.25], requires_grad=True)
        xs = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]])
        ys = torch.tensor([1.0, 0.0, 2.0])
        for step in range(3):
            loss = ((xs @ w - ys) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
            w.grad.zero_()
            print(step, loss, w)
        """,
        "0 tensor(2.5260, grad_fn=<MeanBackward0>) tensor([0.2792, 0.0625], requires_grad=True)\n"
        "1 tensor(1.4338, grad_fn=<MeanBackward0>) tensor([0.2249, 0.2546], requires_grad=True)\n"
        "2 tensor(1.1152, grad_fn=<MeanBackward0>) tensor([0.2173, 0.3767], requires_grad=True)\n",
    ),
    "second_derivative": (
        """
        x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (x ** 3).sum()
        (g,) = torch.autograd.grad(y, x, create_graph=True)
        print(g)
        (h,) = torch.autograd.grad(g.sum(), x)
        print(h)
        """,
        "tensor([ 3., 12., 27.], grad_fn=<MulBackward0>)\n"
        "tensor([ 6., 12., 18.])\n",
    ),
}


def _source(name: str) -> str:
    return textwrap.dedent(SNIPPETS[name][0])


@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippet_prints_pytorchs_output(name):
    printed, _ = gradviz_output(_source(name))
    assert printed == SNIPPETS[name][1]


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_snippet_prints_what_torch_prints(name):
    assert gradviz_output(_source(name))[0] == torch_output(_source(name))[0]


def test_doubling_loop_with_random_start_is_v_times_power_of_two():
    torch = gradviz
    x = torch.randn(3, requires_grad=True)
    y = x * 2
    k = 1
    while y.data.norm() < 1000:
        y = y * 2
        k += 1
    v = torch.tensor([0.1, 1.0, 0.0001], dtype=torch.float)
    y.backward(v)
    np.testing.assert_array_equal(x.grad.numpy(), (v * 2 ** k).numpy())
    assert 2 ** k * float(x.data.norm()) >= 1000 > 2 ** (k - 1) * float(x.data.norm())


def test_non_leaf_grad_access_warns_like_torch():
    source = _source("leaf_attributes")
    _, warned = gradviz_output(source)
    assert len(warned) == 1
    assert warned[0].startswith("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                                "Its .grad attribute won't be populated during autograd.backward().")


@needs_torch
@pytest.mark.torch
def test_non_leaf_grad_warning_text_is_torchs():
    source = _source("leaf_attributes")
    assert gradviz_output(source)[1] == torch_output(source)[1]


def test_variable_import():
    from gradviz.autograd import Variable
    v = Variable(gradviz.tensor([1.0, 2.0]), requires_grad=True)
    assert v.is_leaf and v.requires_grad and type(v) is gradviz.Tensor
    w = Variable(gradviz.tensor([1, 2]))
    assert not w.requires_grad and w.dtype is gradviz.int64


def test_no_grad_in_tutorial_form():
    torch = gradviz
    x = torch.tensor(1.0, requires_grad=True)
    with torch.no_grad():
        y = x * 2
    assert y.requires_grad is False and y.grad_fn is None and y.is_leaf
    assert repr(y) == "tensor(2.)"
