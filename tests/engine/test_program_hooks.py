"""What programs see of autograd's hooks and functional API, as torch 2.13 shows it: a saved
tensor unpacked through saved_tensors_hooks is a new tensor object over the same memory and
history, register_multi_grad_hook calls back with a list, and jvp(create_graph=True) is torch's
double-backward trick, so its result's graph is torch's."""
import numpy as np
import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch, same_output

pytestmark = needs_torch


def test_saved_tensors_hooks_unpack_a_new_object():
    same_output("""
        x = torch.ones(2, requires_grad=True)
        seen = []
        with torch.autograd.graph.saved_tensors_hooks(lambda v: seen.append(v is x) or v, lambda v: v):
            y = x * x
        s = y.grad_fn._saved_self
        print(seen, s is x, s.is_leaf, s.requires_grad, s.grad_fn, s._version)
        (s * 3).sum().backward()
        print(x.grad, s.grad)
        a = x * 2
        with torch.autograd.graph.saved_tensors_hooks(lambda v: v, lambda v: v):
            b = a * a
        print(b.grad_fn._saved_self is a, type(b.grad_fn._saved_self.grad_fn).__name__, b.grad_fn._saved_self)
        print((x * x).grad_fn._saved_self is x)
        with torch.autograd.graph.saved_tensors_hooks(lambda v: v, lambda v: v):
            e = x.exp()
        print(e.grad_fn._saved_result is e, e.grad_fn._saved_result.grad_fn.name())
    """)


def test_multi_grad_hook_gets_a_list():
    same_output("""
        p, q = torch.ones(2, requires_grad=True), torch.ones(3, requires_grad=True)
        got = []
        torch.autograd.graph.register_multi_grad_hook((p, q), lambda grads: got.append(grads))
        ((p * 2).sum() + (q * 3).sum()).backward()
        print(type(got[0]).__name__, got)
        r = torch.ones(2, requires_grad=True)
        torch.autograd.graph.register_multi_grad_hook((p, r), lambda grads: got.append(grads))
        (p * 4).sum().backward()
        print(type(got[-1]).__name__, got[-1])
    """)


def _jvp(t, func, inputs, v):
    inputs = tuple(t.tensor(a, dtype=t.float64, requires_grad=True) for a in inputs)
    v = tuple(t.tensor(a, dtype=t.float64) for a in v)
    out, tangent = t.autograd.functional.jvp(func(t), inputs if len(inputs) > 1 else inputs[0],
                                             v if len(v) > 1 else v[0], create_graph=True)
    outs = out if isinstance(out, tuple) else (out,)
    tangents = tangent if isinstance(tangent, tuple) else (tangent,)
    sum(u.sum() for u in tangents).backward()
    return ([type(u.grad_fn).__name__ for u in tangents], [type(o.grad_fn).__name__ for o in outs],
            [u.detach().numpy() for u in tangents], [x.grad.numpy() for x in inputs])


CASES = [
    ("sum over dim 1", lambda t: lambda a: (a.sin() * a).sum(dim=1), [np.arange(6.).reshape(2, 3) / 5],
     [np.ones((2, 3))]),
    ("mean over dims", lambda t: lambda a: (a * a).mean(dim=(0, 2)), [np.arange(24.).reshape(2, 3, 4) / 7],
     [np.cos(np.arange(24.)).reshape(2, 3, 4)]),
    ("two inputs, two outputs", lambda t: lambda a, b: (a * b, a.exp()), [np.ones(3) / 3, np.arange(3.)],
     [np.ones(3), np.full(3, 2.0)]),
    ("unsqueeze", lambda t: lambda a: (a.unsqueeze(1) * a.unsqueeze(1)).sum(1), [np.arange(3.) / 4], [np.ones(3)]),
]


@pytest.mark.parametrize("name,func,inputs,v", CASES, ids=[c[0] for c in CASES])
def test_jvp_with_create_graph_is_torchs_double_backward(name, func, inputs, v):
    ours, theirs = _jvp(gradviz, func, inputs, v), _jvp(real_torch, func, inputs, v)
    assert ours[:2] == theirs[:2]
    for a, b in zip(ours[2] + ours[3], theirs[2] + theirs[3]):
        np.testing.assert_allclose(a, b, rtol=1e-13)


def test_variable_is_a_class_of_tensors():
    same_output("""
        Variable = torch.autograd.Variable
        v = Variable(torch.ones(2), requires_grad=True)
        print(v, isinstance(v, Variable), isinstance(torch.ones(1), Variable), isinstance([1.], Variable))
        print(Variable(torch.ones(2)).requires_grad, Variable(torch.ones(2, requires_grad=True) * 2).grad_fn)
        (v * 3).sum().backward()
        print(v.grad)
        try:
            Variable([1., 2.])
        except TypeError as e:
            print(e)
    """)


def test_a_post_accumulate_grad_hook_must_return_none_as_in_torch():
    same_output("""
    f = torch.zeros(2, requires_grad=True)
    f.register_post_accumulate_grad_hook(lambda p: p.grad.mul_(0.5))
    try:
        (f + 1).sum().backward()
    except RuntimeError as err:
        print(err)
    g = torch.zeros(2, requires_grad=True)
    g.register_post_accumulate_grad_hook(lambda p: print("seen", p.grad))
    (g * 3).sum().backward()
    print(g.grad)
    """)


def test_every_hook_returns_the_one_removable_handle_of_utils_hooks():
    """A tensor's, a node's, a module's and a post-accumulate hook all return torch.utils.hooks'
    RemovableHandle (a notebook cell ending in register_forward_hook(...) shows it), each with its
    own id, and it works as a context manager."""
    text = same_output("""
        RemovableHandle = torch.utils.hooks.RemovableHandle
        x = torch.ones(2, requires_grad=True)
        y = x * 2
        m = torch.nn.Linear(2, 1)
        handles = [x.register_hook(lambda g: g), y.register_hook(lambda g: g),
                   y.grad_fn.register_hook(lambda gi, go: None), y.grad_fn.register_prehook(lambda go: None),
                   x.register_post_accumulate_grad_hook(lambda t: None), m.register_forward_hook(lambda *a: None),
                   m.register_full_backward_hook(lambda *a: None)]
        print({type(h) for h in handles} == {RemovableHandle}, type(handles[0]).__module__.split(".", 1)[1])
        print(len({h.id for h in handles}), [b.id - a.id > 0 for a, b in zip(handles, handles[1:])])
        with m.register_forward_pre_hook(lambda mod, args: print("pre")):
            m(x)
        m(x)
        print(type(handles[0].hooks_dict_ref()).__name__)
    """)
    assert text.startswith("True utils.hooks\n7 ")
    assert repr(gradviz.ones(1, requires_grad=True).register_hook(lambda g: g)).startswith(
        "<gradviz.utils.hooks.RemovableHandle object at")


def test_removing_a_hook_removes_its_own_registration_of_a_function_registered_twice():
    """Hooks f, g, f: removing the third handle leaves f then g (torch keys a hook by its handle),
    not g then f."""
    text = same_output("""
        double, plus_one = (lambda g: g * 2), (lambda g: g + 1)
        for remove in (0, 2):
            x = torch.tensor([1.0], requires_grad=True)
            y = x * 1
            handles = [y.register_hook(double), y.register_hook(plus_one), y.register_hook(double)]
            handles[remove].remove()
            handles[remove].remove()   # a second remove does nothing
            y.backward()
            print(remove, x.grad)
    """)
    assert text == "0 tensor([4.])\n2 tensor([3.])\n"


def _say_hook(module, args, output):
    print("hook")


def test_a_module_with_a_hook_deep_copies_and_pickles_with_its_handle():
    """A handle pickles and deep-copies with the table it removes from (torch's __getstate__): the copy's
    handle removes the copy's hook only."""
    import copy
    import pickle
    for t in (real_torch, gradviz):
        m = t.nn.Linear(2, 1)
        h = m.register_forward_hook(_say_hook)
        m2, h2 = copy.deepcopy((m, h))
        m3, h3 = pickle.loads(pickle.dumps((m, h)))
        h2.remove()
        h3.remove()
        assert not m2._forward_hooks and not m3._forward_hooks and len(m._forward_hooks) == 1
        assert h3.id == h.id
