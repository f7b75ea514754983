"""PyTorch's own error inputs (its OpInfo database) run through every op gradviz exposes.

Each entry of torch's `op_db` that gradviz exposes and that has error inputs (bad arguments, each
an ErrorInput naming the exception and a pattern of PyTorch's message) is called on each of them,
converted to gradviz (tensors that share memory in torch's sample share it in gradviz's): gradviz
must raise the same exception (or a subclass, as torch's own is) with a message that torch's pattern
finds, and leave every tensor it was given as it was (values, shape and version: an op that refuses
writes nothing first). Where the pattern is torch's catch-all (any Exception), gradviz must raise
the built-in type torch raises. An error input that torch 2.13 itself does not raise as it says on
the CPU (torch's suite skips it there) is not gradviz's to match. The error inputs run in torch's
order, each converted before torch's call, as a call may change tensors the next ones share (a
resized out=). Each entry with an in-place form (x.add_) runs it too: where torch's refuses, so
must gradviz's, leaving x as it was. What does not pass is listed in KNOWN, each with its reason.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("expecttest")   # torch's testing package imports it

import gradviz  # noqa: E402
from tests.support.opinfo import convert, entry_id, gradviz_op  # noqa: E402
from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402

pytestmark = pytest.mark.torch


def _torch_tensors(e) -> list:
    s = e.sample_input
    return [t for t in (s.input, *s.args, *s.kwargs.values())
            for t in (t if isinstance(t, (list, tuple)) else (t,)) if isinstance(t, torch.Tensor)]


def _complex(e) -> bool:
    return any(t.is_complex() for t in _torch_tensors(e))


def _over_64_dims(e) -> bool:
    return any(t.ndim > 64 for t in _torch_tensors(e))


def _self_not_a_tensor(e) -> bool:
    return not isinstance(e.sample_input.input, torch.Tensor)


def _same_storage(a, b) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def _out(e) -> bool:
    return "out" in e.sample_input.kwargs


_NO_COMPLEX = "a complex tensor: gradviz has no complex dtype, so it cannot be given the input torch refuses"
_NUMPY_DIMS = ("a 65-dim tensor: a NumPy array holds at most 64 dims, so gradviz cannot be given the input "
               "torch refuses ('only tensors with up to 64 dims are supported')")
_DESCRIPTOR = ("the method called on a Python int (torch.Tensor.__radd__(2, t)): torch's method is a C descriptor "
               "that refuses a self that is no Tensor; called on an int, the method is int's own (2 .__radd__) "
               "and never reaches gradviz")
_NO_OUT = "gradviz's {} takes no out= (TypeError: unexpected keyword argument 'out')"

# name or name.variant -> (why gradviz does not match torch, which error inputs: a predicate of the
# ErrorInput, or None for all of them)
KNOWN: dict[str, tuple] = {
    **{name: (_DESCRIPTOR, _self_not_a_tensor) for name in ("__radd__", "__rmul__", "__rand__", "__ror__", "__rxor__")},
    **{name: (_NO_COMPLEX, _complex) for name in ("masked_fill", "nn.functional.conv1d", "nn.functional.conv2d",
                                                  "nn.functional.conv3d")},
    **{name: (_NUMPY_DIMS, _over_64_dims) for name in ("aminmax", "amax", "amin")},
    **{name: (_NO_OUT.format(name), _out) for name in ("arange", "multinomial", "bernoulli")},
    "gather": ("an out= smaller than the result, a view of the index's memory: torch resizes it within that memory "
               "(into the index's elements, which it then refuses as overlapping), gradviz gives the resized out "
               "new memory", lambda e: _out(e) and _same_storage(e.sample_input.kwargs["out"], e.sample_input.args[1])),
}


def _tensors(obj) -> list:
    """The gradviz tensors in a converted sample, each once."""
    if isinstance(obj, gradviz.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _tensors(o)]
    if isinstance(obj, dict):
        return _tensors(list(obj.values()))
    return []


def _state(tensors) -> list:
    return [(t.detach().numpy().copy(), t._version) for t in tensors]


def _builtin(cls: type) -> type:
    """The built-in exception class torch's error is or derives from (torch's LinAlgError: RuntimeError)."""
    return next(c for c in cls.__mro__ if c.__module__ == "builtins")


def torch_raises(info, error_input) -> type | None:
    """The exception torch 2.13 raises on the error input as its ErrorInput says (None: it does not)."""
    s = error_input.sample_input
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            info(s.input, *s.args, **s.kwargs)
        except error_input.error_type as exc:
            return type(exc) if re.search(error_input.error_regex, str(exc)) else None
        except Exception:   # another error than the ErrorInput names: torch's suite skips this one here
            return None
    return None


def gradviz_sample(error_input):
    """The error input's sample as gradviz values, its tensors sharing memory as torch's do; or the
    reason gradviz cannot hold it (AssertionError)."""
    s = error_input.sample_input
    memo, leaves = {}, []
    try:
        return (convert(s.input, leaves, memo=memo), convert(tuple(s.args), leaves, memo=memo),
                convert(dict(s.kwargs), leaves, memo=memo))
    except (TypeError, ValueError) as exc:   # a complex tensor (no gradviz dtype), over 64 dims (NumPy's limit)
        return AssertionError(f"the error input cannot be given to gradviz: {exc}")


def raised_leaving_all(call, sample, expected: type) -> Exception:
    """What call(input, *args, **kwargs) on the gradviz sample raised; it must raise, and leave every
    tensor it was given as it was (values, shape, version)."""
    g_input, g_args, g_kwargs = sample
    given = list({id(t): t for t in _tensors([g_input, g_args, g_kwargs])}.values())
    before = _state(given)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = call(g_input, *g_args, **g_kwargs)
        except Exception as exc:
            error = exc
        else:
            raise AssertionError(f"no error (torch: {expected.__name__}); returned {type(out).__name__}")
    for t, (values, version) in zip(given, before):
        assert t.shape == values.shape and np.array_equal(t.detach().numpy(), values, equal_nan=True), \
            f"raised {type(error).__name__}: {error!s:.200} after changing a tensor it was given"
        assert t._version == version, f"raised {type(error).__name__}: {error!s:.200} after bumping a tensor's version"
    return error


def check(fn, sample, error_input, expected: type) -> None:
    """gradviz raises on the error input as torch does, and changes none of the tensors it was given."""
    if isinstance(sample, AssertionError):
        raise sample
    error = raised_leaving_all(fn, sample, expected)
    wanted = _builtin(expected) if error_input.error_type is Exception else error_input.error_type
    assert isinstance(error, wanted), f"{type(error).__name__}: {error} (torch: {wanted.__name__})"
    assert re.search(error_input.error_regex, str(error)), \
        f"{type(error).__name__}: {error!s:.300} (torch's pattern: {error_input.error_regex!r})"


def _error_inputs(info) -> list:
    return list(info.error_inputs("cpu"))


CASES = [(info, fn) for info in op_db if info.error_inputs_func is not None and (fn := gradviz_op(info)) is not None]


@pytest.mark.parametrize("info,fn", CASES, ids=[entry_id(info) for info, _ in CASES])
def test_opinfo_error_inputs(info, fn):
    reason, known = KNOWN.get(entry_id(info), (None, lambda e: False))
    failures, excused = [], 0
    for error_input in _error_inputs(info):
        sample = gradviz_sample(error_input)   # first: torch's call may change the sample (a resized out=),
        expected = torch_raises(info, error_input)   # and its next error inputs meet the change, as in torch's test
        if expected is None:
            continue
        try:
            check(fn, sample, error_input, expected)
        except AssertionError as exc:   # collect every failing error input: one op, one report
            if known is None or known(error_input):
                excused += 1
                continue
            s = error_input.sample_input
            failures.append(f"{s.summary() if hasattr(s, 'summary') else s!r}\n  {str(exc)[:400]}")
    assert not failures, f"{len(failures)} error input(s) fail:\n" + "\n".join(failures[:4])
    if excused:
        pytest.xfail(f"{excused} error input(s): {reason}")


IN_PLACE = [(info, fn) for info, fn in CASES if info.inplace_variant is not None
            and not info.name.startswith("nn.") and callable(getattr(gradviz.Tensor, info.name + "_", None))]


@pytest.mark.parametrize("info,fn", IN_PLACE, ids=[entry_id(info) for info, _ in IN_PLACE])
def test_opinfo_error_inputs_in_place(info, fn):
    """The in-place form (x.add_(...)) of each error input torch's in-place form refuses: gradviz refuses it
    too, with torch's built-in exception type, and leaves x and every other tensor as they were."""
    failures = []
    for error_input in _error_inputs(info):
        sample = gradviz_sample(error_input)
        if isinstance(sample, AssertionError) or not isinstance(sample[0], gradviz.Tensor):
            continue   # KNOWN's reasons: no gradviz input to write into
        s = error_input.sample_input
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                info.inplace_variant(s.input, *s.args, **s.kwargs)
                continue   # torch writes it: the values are test_opinfo.py's to compare
            except Exception as exc:
                expected = type(exc)
        try:
            error = raised_leaving_all(lambda x, *a, **k: getattr(x, info.name + "_")(*a, **k), sample, expected)
            assert isinstance(error, _builtin(expected)), f"{type(error).__name__}: {error} (torch: {expected.__name__})"
        except AssertionError as exc:
            failures.append(f"{s.summary() if hasattr(s, 'summary') else s!r}\n  {str(exc)[:400]}")
    assert not failures, f"{len(failures)} in-place error input(s) fail:\n" + "\n".join(failures[:4])


def test_known_exceptions_name_real_entries():
    """Every documented exception names an op_db entry with error inputs that gradviz exposes."""
    ids = {entry_id(info) for info, _ in CASES}
    assert set(KNOWN) <= ids, set(KNOWN) - ids
