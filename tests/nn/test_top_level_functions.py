"""The functions torch has at top level (torch.conv1d, torch.pdist, ...) that gradviz implements under
nn.functional: exposed as gradviz.NAME where torch's top-level signature (its ATen schema, `self` read
as `input`) is the functional's own, and with torch's own signature where it is not (torch.celu has
no inplace=); values, gradients and nodes as PyTorch's."""
import inspect
import re

import numpy as np
import pytest

import gradviz
import gradviz.nn.functional as GF
from tests.support.parity import needs_torch, real_torch, same_output

# functionals whose signature is torch's but that live outside gradviz.functions (declared nowhere)
NOT_DECLARED = {"cosine_similarity": "gradviz/nn/functional.py", "rms_norm": "gradviz/nn/functional_layers.py"}


def _schema_params(name):
    """The positional parameter names of each of torch's ATen schemas for `name`."""
    found = []
    for schema in real_torch._C._jit_get_schemas_for_operator(f"aten::{name}"):
        if schema.overload_name == "out":
            continue
        names = [a.name for a in schema.arguments if not a.kwarg_only]
        found.append(["input" if n == "self" else n for n in names])
    return found


def _candidates():
    """torch's top-level functions that gradviz.nn.functional has too."""
    return sorted(n for n in dir(real_torch) if not n.startswith("_") and callable(getattr(real_torch, n))
                  and inspect.isfunction(getattr(GF, n, None)) and n not in ("tensor",)) if real_torch else []


@needs_torch
@pytest.mark.parametrize("name", _candidates())
def test_top_level_where_torchs_signature_is_the_functionals(name):
    ours = list(inspect.signature(getattr(GF, name)).parameters)
    same = ours in _schema_params(name)
    if name in NOT_DECLARED:
        pytest.skip(f"defined in {NOT_DECLARED[name]}, outside the declared functions")
    if hasattr(gradviz, name) and getattr(gradviz, name).__name__ == getattr(GF, name).__name__:
        top = list(inspect.signature(getattr(gradviz, name)).parameters)
        assert top in _schema_params(name) or not _schema_params(name), \
            f"gradviz.{name} exposed, torch's signature differs"
    else:
        assert not same, f"torch.{name} has nn.functional.{name}'s signature: declare it @public"


rng = np.random.default_rng(0)
CASES = {   # name -> (arrays, call on (lib, *tensors)); float64, every input requires grad
    "conv1d": ([rng.standard_normal((2, 3, 7)), rng.standard_normal((4, 3, 3)), rng.standard_normal(4)],
               lambda t, x, w, b: t.conv1d(x, w, b, 2, 1)),
    "conv2d": ([rng.standard_normal((1, 2, 5, 5)), rng.standard_normal((3, 2, 3, 3))],
               lambda t, x, w: t.conv2d(x, w, None, 1, 1, 1, 1)),
    "conv3d": ([rng.standard_normal((1, 2, 4, 4, 4)), rng.standard_normal((2, 2, 2, 2, 2))],
               lambda t, x, w: t.conv3d(x, w)),
    "conv_transpose1d": ([rng.standard_normal((2, 3, 5)), rng.standard_normal((3, 2, 3))],
                         lambda t, x, w: t.conv_transpose1d(x, w, None, 2, 1, 1)),
    "conv_transpose2d": ([rng.standard_normal((1, 2, 4, 4)), rng.standard_normal((2, 3, 3, 3))],
                         lambda t, x, w: t.conv_transpose2d(x, w, stride=2)),
    "conv_transpose3d": ([rng.standard_normal((1, 2, 3, 3, 3)), rng.standard_normal((2, 1, 2, 2, 2))],
                         lambda t, x, w: t.conv_transpose3d(x, w)),
    "bilinear": ([rng.standard_normal((4, 3)), rng.standard_normal((4, 2)), rng.standard_normal((5, 3, 2))],
                 lambda t, a, b, w: t.bilinear(a, b, w)),
    "pdist": ([rng.standard_normal((4, 3))], lambda t, x: t.pdist(x, 3)),
    "pairwise_distance": ([rng.standard_normal((4, 3)), rng.standard_normal((4, 3))],
                          lambda t, a, b: t.pairwise_distance(a, b, keepdim=True)),
    "prelu": ([rng.standard_normal((2, 3, 4)), rng.uniform(0.1, 0.5, 3)], lambda t, x, w: t.prelu(x, w)),
    "hardshrink": ([rng.standard_normal((3, 4))], lambda t, x: t.hardshrink(x, 0.3)),
    "pixel_shuffle": ([rng.standard_normal((1, 8, 2, 3))], lambda t, x: t.pixel_shuffle(x, 2)),
    "pixel_unshuffle": ([rng.standard_normal((1, 2, 4, 6))], lambda t, x: t.pixel_unshuffle(x, 2)),
    "adaptive_avg_pool1d": ([rng.standard_normal((2, 3, 7))], lambda t, x: t.adaptive_avg_pool1d(x, 3)),
    "avg_pool1d": ([rng.standard_normal((2, 3, 8))], lambda t, x: t.avg_pool1d(x, 3, 2, 1)),
    "max_pool1d": ([rng.standard_normal((2, 3, 8))], lambda t, x: t.max_pool1d(x, 3, 2, 1)),
    "dropout": ([rng.standard_normal((3, 4))], lambda t, x: t.dropout(x * 2, 0.3, False)),
    "max_pool2d": ([rng.standard_normal((1, 2, 5, 5))], lambda t, x: t.max_pool2d(x, 2)),
    "max_pool3d": ([rng.standard_normal((1, 1, 4, 4, 4))], lambda t, x: t.max_pool3d(x, 2, 1, 0, 1, True)),
}


@needs_torch
@pytest.mark.parametrize("name", CASES)
def test_top_level_functions_match_torch(name):
    arrays, call = CASES[name]
    seen = []
    for lib in (gradviz, real_torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        out = call(lib, *xs)
        grads = lib.autograd.grad((out * out).sum(), xs)
        seen.append((out.detach().numpy(), [g.numpy() for g in grads], type(out.grad_fn).__name__))
    (ours, our_grads, our_node), (theirs, their_grads, their_node) = seen
    np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    if name != "bilinear":   # gradviz's bilinear (F.bilinear too) ends in SumBackward1, PyTorch's in ViewBackward0
        assert our_node == their_node


def test_top_level_functions_are_declared_not_listed():
    """Exposed through @public (gradviz.functions.declared), so the op reference names them."""
    from gradviz.functions.declared import exposed
    table = exposed()
    for name in CASES:
        assert table[name] is getattr(gradviz.functions, name)
        # torch has no Tensor.conv1d, but has Tensor.prelu and Tensor.hardshrink
        assert hasattr(gradviz.Tensor, name) == (name in ("prelu", "hardshrink"))


@needs_torch
def test_unravel_index_as_torch_functional_computes_it():
    """The coordinates of an argmax (torch.unravel_index(x.argmax(), x.shape)), out-of-range indices
    wrapped as torch wraps them, and torch's refusals."""
    same_output("""
        x = torch.tensor([[1., 9.], [3., 4.]])
        print(torch.unravel_index(x.argmax(), x.shape), torch.unravel_index(torch.tensor([4, 1]), (3, 2)))
        print(torch.unravel_index(torch.tensor(6), (2, 3)), torch.unravel_index(torch.tensor(-1), (2, 3)))
        print(torch.unravel_index(torch.tensor([[1, 2]]), (2, 3)), torch.unravel_index(torch.tensor(3), 4))
        print(torch.unravel_index(torch.tensor([1234, 5678]), (10, 10, 10, 10)))
        for bad in (lambda: torch.unravel_index(torch.tensor(1.5), (2, 3)), lambda: torch.unravel_index(torch.tensor(1), (2, -3)),
                    lambda: torch.unravel_index(torch.tensor(1), (2, 3.0)), lambda: torch.unravel_index(torch.tensor(1), 2.0)):
            try:
                bad()
            except (TypeError, ValueError) as e:
                print(type(e).__name__, e)
    """)
