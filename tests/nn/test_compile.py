"""torch.compile for programs written for PyTorch 2: the same wrapper, names and errors as torch's,
and the model's own numbers (gradviz runs it eagerly, as torch's "eager" backend does)."""
import pytest

import gradviz

torch = pytest.importorskip("torch")


def _both(make):
    """make(lib) run under torch and under gradviz."""
    return make(torch), make(gradviz)


def test_a_compiled_module_is_wrapped_as_torch_wraps_it():
    def make(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
        c = lib.compile(m)
        x = lib.ones(5, 3)
        loss = c(x).pow(2).sum()
        loss.backward()
        return (type(c).__name__, repr(c), list(dict(c.named_parameters())), list(c.state_dict()), c._orig_mod is m,
                c.training, loss.item(), m[0].weight.grad.flatten().tolist())
    t, g = _both(make)
    assert t[:6] == g[:6]
    assert t[6] == pytest.approx(g[6], rel=1e-6) and g[7] == pytest.approx(t[7], rel=1e-5)


def test_a_compiled_function_keeps_its_name_and_computes_its_values():
    def make(lib):
        @lib.compile
        def f(x):
            return x.sin() * 2

        g = lib.compile(lambda x: x + 1, backend="eager")
        return f.__name__, f(lib.arange(3.0)).tolist(), g(lib.ones(2)).tolist(), lib.compile(disable=True)(f) is f
    t, g = _both(make)
    assert t[0] == g[0] and t[2:] == g[2:] and g[1] == pytest.approx(t[1], rel=1e-6)


@pytest.mark.parametrize("args,kwargs", [((3,), {}), ((None,), {"backend": "foo"}), ((None,), {"mode": "bogus"}),
                                         ((None,), {"mode": "default", "options": {"a": 1}})])
def test_bad_arguments_get_torchs_errors(args, kwargs):
    model = args[0] if args[0] is not None else None
    with pytest.raises(Exception) as want:
        torch.compile(model if model is not None else torch.nn.Linear(2, 2), **kwargs)
    with pytest.raises(Exception) as got:
        gradviz.compile(model if model is not None else gradviz.nn.Linear(2, 2), **kwargs)
    assert str(got.value) == str(want.value)
    assert isinstance(got.value, RuntimeError) == isinstance(want.value, RuntimeError)


def test_the_compiler_namespace_answers_as_torchs():
    assert gradviz.compiler.is_compiling() is torch.compiler.is_compiling() is False
    assert gradviz.compiler.list_backends() == torch.compiler.list_backends()
    # every backend a program may name (torch's own test-only ones left out)
    assert set(gradviz.compiler.list_backends(exclude_tags=())) == \
        {b for b in torch.compiler.list_backends(exclude_tags=()) if not b.endswith("TESTING_ONLY")}
    f = lambda x: x   # noqa: E731
    assert gradviz.compiler.disable(f) is f and gradviz.compiler.disable()(f) is f
    assert gradviz.compiler.reset() is None
