"""torch.compile for programs written for PyTorch 2: the same wrapper, names and errors as torch's,
and the model's own numbers (gradviz runs it eagerly, as torch's "eager" backend does).

torch's side runs in a child process: importing torch._dynamo changes torch's process-wide state (it
turns off torch.distributions' argument validation, which later tests compare against).
"""
import json
import subprocess
import sys

import pytest

import gradviz

pytest.importorskip("torch")

PROGRAM = r'''
import json, sys
import_lib = sys.argv[1]
lib = __import__(import_lib)


def module_case():
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    c = lib.compile(m)
    loss = c(lib.ones(5, 3)).pow(2).sum()
    loss.backward()
    return [type(c).__name__, repr(c), list(dict(c.named_parameters())), list(c.state_dict()), c._orig_mod is m,
            c.training, loss.item(), m[0].weight.grad.flatten().tolist()]


def function_case():
    @lib.compile
    def f(x):
        return x.sin() * 2

    g = lib.compile(lambda x: x + 1, backend="eager")
    return [f.__name__, f(lib.arange(3.0)).tolist(), g(lib.ones(2)).tolist(), lib.compile(disable=True)(f) is f]


def errors():
    out = []
    for model, kwargs in [(3, {}), (None, {"backend": "foo"}), (None, {"mode": "bogus"}),
                          (None, {"mode": "default", "options": {"a": 1}})]:
        try:
            lib.compile(model if model is not None else lib.nn.Linear(2, 2), **kwargs)
            out.append(None)
        except Exception as e:
            out.append([str(e), isinstance(e, RuntimeError)])
    return out


def namespace():
    c = lib.compiler
    f = len
    return [c.is_compiling(), c.list_backends(), sorted(b for b in c.list_backends(exclude_tags=())
                                                        if not b.endswith("TESTING_ONLY")),
            c.disable(f)([1, 2]) == 2 and c.disable()(f)([1]) == 1, c.reset() is None]


print(json.dumps({"module": module_case(), "function": function_case(), "errors": errors(),
                  "namespace": namespace()}))
'''


@pytest.fixture(scope="module")
def results():
    def run(lib):
        done = subprocess.run([sys.executable, "-c", PROGRAM, lib], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.strip().splitlines()[-1])
    return run("torch"), run("gradviz")


def test_a_compiled_module_is_wrapped_as_torch_wraps_it(results):
    t, g = (r["module"] for r in results)
    assert t[:6] == g[:6]     # OptimizedModule, its repr, _orig_mod.weight, ... as torch names them
    assert g[6] == pytest.approx(t[6], rel=1e-6) and g[7] == pytest.approx(t[7], rel=1e-5)


def test_a_compiled_function_keeps_its_name_and_computes_its_values(results):
    t, g = (r["function"] for r in results)
    assert t[0] == g[0] and t[2:] == g[2:] and g[1] == pytest.approx(t[1], rel=1e-6)


def test_bad_arguments_get_torchs_errors(results):
    t, g = (r["errors"] for r in results)
    assert None not in t and g == t


def test_the_compiler_namespace_answers_as_torchs(results):
    t, g = (r["namespace"] for r in results)
    assert g == t


def test_compiling_leaves_the_model_itself_as_it_was():
    m = gradviz.nn.Linear(2, 3)
    c = gradviz.compile(m)
    assert c.weight is m.weight and c.in_features == 2 and type(m) is gradviz.nn.Linear
