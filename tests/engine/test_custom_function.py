"""Custom autograd Functions: the official tutorials' Functions run under gradviz and under
torch, with the same values, gradients, grad_fn names and errors; double backward and
gradgradcheck; the node draws and animates as <Name>Backward running user code."""
import html
import math
import re

import numpy as np
import pytest

import gradviz
from gradviz.autograd.function import once_differentiable as gv_once

from tests.support.parity import needs_torch, real_torch as torch, same_output

pytestmark = [pytest.mark.torch, needs_torch]


def functions(mod):
    """The tutorials' Functions, defined against `mod` (gradviz or torch) exactly as written there."""
    once = gv_once if mod is gradviz else __import__("torch.autograd.function").autograd.function.once_differentiable
    Function = mod.autograd.Function

    class LegendrePolynomial3(Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    class Exp(Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            result, = ctx.saved_tensors
            return grad_output * result

    class LinearFunction(Function):
        @staticmethod
        def forward(input, weight, bias):
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def setup_context(ctx, inputs, output):
            input, weight, bias = inputs
            ctx.save_for_backward(input, weight, bias)

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0)
            return grad_input, grad_weight, grad_bias

    class MulConstant(Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None

    class MyCube(Function):
        @staticmethod
        def forward(ctx, x):
            result = x ** 3
            dx = 3 * x ** 2
            ctx.save_for_backward(x, dx)
            return result, dx

        @staticmethod
        def backward(ctx, grad_output, grad_dx):
            x, dx = ctx.saved_tensors
            result = grad_output * dx + grad_dx * 6 * x
            return result

    class Sort(Function):
        @staticmethod
        def forward(ctx, x):
            values, indices = x.sort()
            ctx.mark_non_differentiable(indices)
            ctx.save_for_backward(indices)
            return values, indices

        @staticmethod
        def backward(ctx, g1, g2):
            indices, = ctx.saved_tensors
            grad_input = mod.zeros_like(g1)
            grad_input[indices] = g1
            return grad_input

    class SimpleFunc(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return x.clone(), x.clone()

        @staticmethod
        @once
        def backward(ctx, g1, g2):
            x, = ctx.saved_tensors
            grad_input = mod.zeros_like(x)
            if g1 is not None:
                grad_input += g1
            if g2 is not None:
                grad_input += g2 * 2
            return grad_input

    return dict(LegendrePolynomial3=LegendrePolynomial3, Exp=Exp, LinearFunction=LinearFunction,
                MulConstant=MulConstant, MyCube=MyCube, Sort=Sort, SimpleFunc=SimpleFunc)


def _np(t):
    return t.detach().numpy()


def test_legendre_tutorial_training_matches_torch():
    """The 'Learning PyTorch with Examples' program (fewer steps), losses and coefficients."""
    def train(mod):
        P3 = functions(mod)["LegendrePolynomial3"].apply
        x = mod.linspace(-math.pi, math.pi, 2000, dtype=mod.float64)
        y = mod.sin(x)
        a = mod.full((), 0.0, dtype=mod.float64, requires_grad=True)
        b = mod.full((), -1.0, dtype=mod.float64, requires_grad=True)
        c = mod.full((), 0.0, dtype=mod.float64, requires_grad=True)
        d = mod.full((), 0.3, dtype=mod.float64, requires_grad=True)
        learning_rate = 5e-6
        losses, names = [], []
        for t in range(300):
            y_pred = a + b * P3(c + d * x)
            loss = (y_pred - y).pow(2).sum()
            if t % 50 == 49:
                losses.append(loss.item())
            loss.backward()
            names.append(type(y_pred.grad_fn.next_functions[1][0].next_functions[1][0]).__name__)
            with mod.no_grad():
                for p in (a, b, c, d):
                    p -= learning_rate * p.grad
                    p.grad = None
        return losses, [p.item() for p in (a, b, c, d)], set(names)
    ours, theirs = train(gradviz), train(torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12, atol=1e-15)   # a and c stay ~0
    assert ours[2] == theirs[2] == {"LegendrePolynomial3Backward"}


@pytest.mark.parametrize("name", ["Exp", "LegendrePolynomial3"])
def test_values_gradients_and_names_match_torch(name):
    data = np.array([[0.5, -1.0, 2.0], [0.0, 1.5, -0.25]])
    results = []
    for mod in (gradviz, torch):
        x = mod.tensor(data, requires_grad=True)
        y = functions(mod)[name].apply(x)
        (y * mod.tensor(data + 1)).sum().backward()
        results.append((_np(y), _np(x.grad), y.grad_fn.name(), type(y.grad_fn).__name__, repr(y)))
    ours, theirs = results
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-14)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-14)
    assert ours[2:] == theirs[2:]
    assert ours[2] == f"{name}Backward"


def test_grad_fn_is_the_ctx_and_prints_as_torch():
    results = []
    for mod in (gradviz, torch):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = functions(mod)["Exp"].apply(x)
        node = y.grad_fn
        results.append((str(type(node)), re.sub("0x[0-9a-f]+", "0x", repr(node)), node.needs_input_grad,
                        [_np(t) for t in node.saved_tensors], node.saved_tensors[0].grad_fn is node,
                        type(node.next_functions[0][0]).__name__))
    ours, theirs = results
    assert ours[:3] == theirs[:3]
    np.testing.assert_allclose(ours[3][0], theirs[3][0])
    assert ours[4:] == theirs[4:] == (True, "AccumulateGrad")


def test_linear_function_with_setup_context_matches_torch_and_gradchecks():
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in ((4, 3), (2, 3), (2,))]
    results = []
    for mod in (gradviz, torch):
        lin = functions(mod)["LinearFunction"].apply
        inp, w, b = (mod.tensor(a, requires_grad=True) for a in arrays)
        out = lin(inp, w, b)
        out.pow(2).sum().backward()
        assert mod.autograd.gradcheck(lin, (inp, w, b), eps=1e-6, atol=1e-4)
        no_bias = lin(inp.detach(), w, None)
        results.append([_np(out), _np(inp.grad), _np(w.grad), _np(b.grad), _np(no_bias),
                        out.grad_fn.name(), no_bias.grad_fn.next_functions[0][0]])
    for a, b in zip(*results):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-13)
        else:
            assert a == b


def test_non_tensor_arguments_and_needs_input_grad():
    results = []
    for mod in (gradviz, torch):
        x = mod.tensor([1.0, -2.0], requires_grad=True)
        y = functions(mod)["MulConstant"].apply(x, 5.5)
        y.sum().backward()
        results.append((_np(y).tolist(), _np(x.grad).tolist(), len(y.grad_fn.next_functions),
                        y.grad_fn.needs_input_grad, y.grad_fn.constant))
        with mod.no_grad():
            assert functions(mod)["MulConstant"].apply(x, 2.0).grad_fn is None
        assert functions(mod)["MulConstant"].apply(x.detach(), 2.0).grad_fn is None
    assert results[0] == results[1]


def test_double_backward_through_a_function_and_gradgradcheck():
    """The 'Double Backward with Custom Functions' tutorial: MyCube returns dx too, and its
    backward is written in differentiable ops, so grad of grad runs through it."""
    data = np.array([[0.2, 0.9, -0.4], [1.3, -0.7, 0.5]])
    results = []
    for mod in (gradviz, torch):
        MyCube = functions(mod)["MyCube"]

        def my_cube(x):
            result, dx = MyCube.apply(x)
            return result
        x = mod.tensor(data, requires_grad=True)
        assert mod.autograd.gradcheck(my_cube, (x,))
        assert mod.autograd.gradgradcheck(my_cube, (x,))
        g, = mod.autograd.grad(my_cube(x).sum(), x, create_graph=True)
        gg, = mod.autograd.grad(g.sum(), x)
        results.append((_np(g), _np(gg), g.grad_fn.name()))
    np.testing.assert_allclose(results[0][0], 3 * data ** 2)
    np.testing.assert_allclose(results[0][1], 6 * data)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-14)
    assert results[0][2] == results[1][2]


def test_exp_double_backward_uses_the_saved_output():
    results = []
    for mod in (gradviz, torch):
        x = mod.tensor([0.5, 1.0], dtype=mod.float64, requires_grad=True)
        y = functions(mod)["Exp"].apply(x)
        g, = mod.autograd.grad(y.sum(), x, create_graph=True)
        gg, = mod.autograd.grad(g.sum(), x)
        results.append((_np(g), _np(gg), g.grad_fn.name()))
        assert mod.autograd.gradgradcheck(functions(mod)["Exp"].apply, (x,))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-15)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-15)
    assert results[0][2] == results[1][2] == "MulBackward0"


def test_mark_non_differentiable_and_materialize_grads():
    results = []
    for mod in (gradviz, torch):
        x = mod.tensor([3.0, 1.0, 2.0], requires_grad=True)
        values, indices = functions(mod)["Sort"].apply(x)
        (values * mod.tensor([1.0, 10.0, 100.0])).sum().backward()
        a, b = functions(mod)["SimpleFunc"].apply(x)
        x.grad = None
        a.sum().backward(retain_graph=True)   # g2 is None, not zeros: set_materialize_grads(False)
        only_a = _np(x.grad).tolist()
        x.grad = None
        (a + b).sum().backward()
        results.append((values.requires_grad, indices.requires_grad, indices.grad_fn, _np(indices).tolist(),
                        only_a, _np(x.grad).tolist()))
    assert results[0] == results[1]
    assert results[0][4] == [1.0, 1.0, 1.0] and results[0][5] == [3.0, 3.0, 3.0]


def test_once_differentiable_refuses_a_second_derivative():
    messages, nodes = [], []
    for mod in (gradviz, torch):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        a, _ = functions(mod)["SimpleFunc"].apply(x)
        seed = mod.ones(2, requires_grad=True)
        g, = mod.autograd.grad(a, x, seed, create_graph=True)
        assert g.requires_grad and _np(g).tolist() == [1.0, 1.0]
        # the gradient's node is torch's C++ Error node, over a fresh leaf
        nodes.append((type(g.grad_fn).__name__, g.grad_fn.name(),
                      [type(n).__name__ for n, _ in g.grad_fn.next_functions]))
        with pytest.raises(RuntimeError) as err:
            g.sum().backward()
        messages.append(str(err.value))
    assert messages[0] == messages[1] == \
        "trying to differentiate twice a function that was marked with @once_differentiable"
    assert nodes[0] == nodes[1] == ("Error", "torch::autograd::Error", ["AccumulateGrad"])


def _error(fn):
    try:
        fn()
    except Exception as e:   # noqa: BLE001  (the type and message are what is compared)
        return type(e).__name__, str(e)
    return None


def _bad(mod, returns, forward_args=1):
    class Bad(mod.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            return args[0] * 2

        @staticmethod
        def backward(ctx, g):
            return returns(g)
    x = mod.tensor([1.0, 2.0], requires_grad=True)
    return lambda: Bad.apply(x, *([3.0] * (forward_args - 1))).sum().backward()


@pytest.mark.parametrize("returns,forward_args", [
    (lambda g: g, 2),                   # too few gradients
    (lambda g: (g, g), 2),              # a gradient for a non-tensor input
    (lambda g: (g, g), 1),              # too many gradients (not None)
    (lambda g: g[:1], 1),               # a gradient of the wrong shape
    (lambda g: (g, None, None), 1),     # extra Nones are allowed
])
def test_backward_return_errors_match_torch(returns, forward_args):
    assert _error(_bad(gradviz, returns, forward_args)) == _error(_bad(torch, returns, forward_args))


def test_saved_tensor_errors_match_torch():
    def freed(mod):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = functions(mod)["Exp"].apply(x)
        y.sum().backward()
        return y.grad_fn.saved_tensors

    def modified_output(mod):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = functions(mod)["Exp"].apply(x)
        y.add_(1)
        y.sum().backward()

    def modified_input(mod):
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = functions(mod)["LegendrePolynomial3"].apply(x)
        with mod.no_grad():
            x.mul_(2)
        y.sum().backward()

    def not_a_tensor(mod):
        class Saves(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x

        Saves.apply(mod.ones(2, requires_grad=True))

    def no_backward(mod):
        class NoBackward(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
        NoBackward.apply(mod.ones(2, requires_grad=True)).sum().backward()

    def no_forward(mod):
        class NoForward(mod.autograd.Function):
            pass
        NoForward.apply(mod.ones(2))

    for case in (freed, modified_output, modified_input, no_backward, no_forward):
        assert _error(lambda: case(gradviz)) == _error(lambda: case(torch)), case.__name__
    assert _error(lambda: not_a_tensor(gradviz))[0] == _error(lambda: not_a_tensor(torch))[0] == "TypeError"


def test_a_function_without_saved_tensors_backwards_twice():
    x = gradviz.tensor([1.0, 2.0], requires_grad=True)
    y = functions(gradviz)["MulConstant"].apply(x, 2.0)
    y.sum().backward()
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_returning_an_input_gives_a_new_tensor():
    results = []
    for mod in (gradviz, torch):
        class Identity(mod.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return 2 * g
        x = mod.tensor([1.0, 2.0], requires_grad=True)
        y = Identity.apply(x)
        y.sum().backward()
        results.append((y is x, y.grad_fn.name(), _np(x.grad).tolist()))
    assert results[0] == results[1] == (False, "IdentityBackward", [2.0, 2.0])


# -- drawn and animated ------------------------------------------------------------------------------
def test_function_node_draws_and_animates_as_user_code():
    from gradviz.player import animate
    x = gradviz.tensor([0.5, 1.0], requires_grad=True)
    x.name = "x"
    F = functions(gradviz)
    loss = F["LegendrePolynomial3"].apply(F["Exp"].apply(x) * 2).sum()
    anim = animate(loss, forward=False)
    trace = anim.trace
    names = [n.name for n in trace.nodes if n.kind == "op"]
    assert sorted(names) == ["ExpBackward", "LegendrePolynomial3Backward", "MulBackward0", "SumBackward0"]
    node = next(n for n in trace.nodes if n.name == "ExpBackward")
    assert node.formula == "c = Exp.apply(a)  (user code)"   # the record's letters; views write x
    assert node.vjp_formulas == ("Exp.backward(ctx, ḡ)[0]  (user code)",)
    frame = next(f for f in anim.frames if f.node and anim.trace.node(f.node).name == "ExpBackward")
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", frame.text)))
    assert "usercode" in text.replace(" ", "") and "Exp.backward(ctx,ḡ)[0]" in text.replace(" ", "")
    assert f"{node.out_names[0]} = Exp.apply(x)" in text   # the learner's x, as every other node writes it
    # the animation ran the user's backward and put .grad back; a real backward gives P3'(2eˣ)·2eˣ
    assert x.grad is None
    loss.backward()
    e = np.exp([0.5, 1.0])
    np.testing.assert_allclose(x.grad.numpy(), 1.5 * (5 * (2 * e) ** 2 - 1) * 2 * e, rtol=1e-6)


def test_mark_dirty_rebases_the_input_as_torch():
    results = []
    for mod in (gradviz, torch):
        class AddOne(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2

        class Forgets(mod.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g
        a = mod.tensor([1.0, 2.0], requires_grad=True)
        b = a * 3
        c = AddOne.apply(b)
        row = [c is b, c.tolist(), c.grad_fn.name(), b._version, c.grad_fn.next_functions[0][0].name()]
        c.sum().backward()
        row.append(a.grad.tolist())
        row.append(_error(lambda: AddOne.apply(a)))
        row.append(_error(lambda: Forgets.apply(a * 1)))
        d = a.detach().clone()
        row.append((AddOne.apply(d) is d, d.tolist(), d._version))
        results.append(row)
    assert results[0] == results[1]


def _gradcheck_failures(mod) -> list:
    """What gradcheck says about a Function whose backward doubles one gradient."""
    class WrongOtherGrad(mod.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y

        @staticmethod
        def backward(ctx, g):
            x, y = ctx.saved_tensors
            return g * y, g * x * 2

    free = mod.tensor([1., 2.], dtype=mod.float64)
    x = mod.tensor([1., 2.], dtype=mod.float64, requires_grad=True)
    y = mod.tensor([3., 4.], dtype=mod.float64, requires_grad=True)
    said = []
    for inputs in ((free, y), (x, y)):
        with pytest.raises(RuntimeError) as caught:
            mod.autograd.gradcheck(WrongOtherGrad.apply, inputs)
        said.append((type(caught.value).__name__, str(caught.value)))
    said.append(mod.autograd.gradcheck(WrongOtherGrad.apply, (x, y), raise_exception=False))
    with pytest.warns(UserWarning, match=r"Input #0 requires gradient and is not a double precision"):
        said.append(mod.autograd.gradcheck(lambda t: t * 2, (mod.ones(2, requires_grad=True),), eps=1e-3, atol=1e-2))
    return said


def test_gradcheck_reports_the_jacobians_as_torch_does():
    said = _gradcheck_failures(gradviz)
    jacobians = ("numerical:tensor([[1.0000, 0.0000],\n        [0.0000, 2.0000]], dtype=torch.float64)\n"
                 "analytical:tensor([[2., 0.],\n        [0., 4.]], dtype=torch.float64)\n")
    assert said == [("GradcheckError", "Jacobian mismatch for output 0 with respect to input 0,\n" + jacobians),
                    ("GradcheckError", "Jacobian mismatch for output 0 with respect to input 1,\n" + jacobians),
                    False, True]
    if torch is not None:
        assert _gradcheck_failures(torch) == said


def test_custom_function_outputs_that_are_views_refuse_inplace_writes():
    same_output("""
    class Id(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x
        @staticmethod
        def backward(ctx, g):
            return g
    class ViewOf(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x[1:]
        @staticmethod
        def backward(ctx, g):
            return torch.cat([torch.zeros(1, dtype=g.dtype), g])
    for F in (Id, ViewOf):
        a = torch.ones(3, requires_grad=True)
        b = a * 2
        c = F.apply(b)
        print(c._is_view(), c._base is b, c.grad_fn.name())
        try:
            c.mul_(2)
        except RuntimeError as e:
            print(e)
        d = F.apply(b)[:1]
        try:
            d.add_(1)
        except RuntimeError as e:
            print(e)
        (F.apply(b).clone().mul_(2)).sum().backward()
        print(a.grad)
    """)


def test_a_forward_that_calls_numpy_runs_under_func_grad_as_in_torch():
    """The "Extending torch.func with autograd.Function" tutorial's NumpySort: its forward calls .numpy()
    on an input that requires grad, which torch allows under no_grad (a Function's forward runs so)."""
    same_output("""
    import numpy as np
    class NumpyTake(torch.autograd.Function):
        @staticmethod
        def forward(x, ind, ind_inv, dim):
            return torch.tensor(np.take_along_axis(x.numpy(), ind.numpy(), dim))
        @staticmethod
        def setup_context(ctx, inputs, output):
            x, ind, ind_inv, dim = inputs
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim
        @staticmethod
        def backward(ctx, grad_output):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None, None, None
    class NumpySort(torch.autograd.Function):
        @staticmethod
        def forward(x, dim):
            ind = np.argsort(x.numpy(), axis=dim)
            ind_inv = np.argsort(ind, axis=dim)
            return (torch.tensor(np.take_along_axis(x.numpy(), ind, axis=dim)), torch.tensor(ind),
                    torch.tensor(ind_inv))
        @staticmethod
        def setup_context(ctx, inputs, output):
            x, dim = inputs
            _, ind, ind_inv = output
            ctx.mark_non_differentiable(ind, ind_inv)
            ctx.save_for_backward(ind, ind_inv)
            ctx.dim = dim
        @staticmethod
        def backward(ctx, grad_output, _0, _1):
            ind, ind_inv = ctx.saved_tensors
            return NumpyTake.apply(grad_output, ind_inv, ind, ctx.dim), None
    x = torch.tensor([[0.3, -1.0, 2.0], [1.5, 0.5, -0.5]], requires_grad=True)
    print(NumpySort.apply(x, -1)[0])
    print(torch.func.grad(lambda t: (NumpySort.apply(t, -1)[0] * torch.arange(3.0)).sum())(x.detach()))
    NumpySort.apply(x, -1)[0].backward(torch.arange(6.0).view(2, 3))
    print(x.grad)
    with torch.no_grad():
        print(x.numpy())
    try:
        x.numpy()
    except RuntimeError as e:
        print(e)
    """)
