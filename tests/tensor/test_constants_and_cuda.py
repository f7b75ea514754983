"""The module-level constants and torch.cuda's queries, as a CPU build of torch 2.13 answers them."""
from __future__ import annotations

import math
import warnings

import pytest

import gradviz as gv
from tests.support.parity import needs_torch, real_torch

CONSTANTS = ("inf", "nan", "pi", "e", "newaxis")


@pytest.mark.parametrize("name", CONSTANTS)
def test_constants_are_torchs(name):
    value = getattr(gv, name)
    expected = {"inf": math.inf, "pi": math.pi, "e": math.e, "newaxis": None}
    if name == "nan":
        assert isinstance(value, float) and math.isnan(value)
    else:
        assert value == expected[name] and type(value) is type(expected[name])
    if real_torch is not None:
        theirs = getattr(real_torch, name)
        assert type(value) is type(theirs) and repr(value) == repr(theirs)


def test_constants_in_an_attention_mask():
    scores = gv.zeros(3, 3)
    mask = gv.triu(gv.ones(3, 3, dtype=gv.bool), diagonal=1)
    weights = gv.softmax(scores.masked_fill(mask, -gv.inf), dim=-1)
    assert weights[0].tolist() == [1.0, 0.0, 0.0]
    assert gv.ones(2, 3)[:, gv.newaxis].shape == (2, 1, 3)


QUERIES = ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "memory_stats", "empty_cache", "is_initialized", "memory_cached", "max_memory_cached")
FAILING = ("reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
           "reset_accumulated_memory_stats", "current_device", "get_device_name", "mem_get_info")


def _outcome(module, name, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("returns", repr(getattr(module.cuda, name)(*args)))
        except Exception as exc:  # noqa: BLE001  (the error is the answer being compared)
            result = ("raises", type(exc).__name__, str(exc))
    return result, [(w.category.__name__, str(w.message)) for w in caught]


@pytest.mark.skipif(gv.cuda.is_available(), reason="a GPU answers from CuPy's pool")
@pytest.mark.parametrize("name", QUERIES + FAILING)
def test_cuda_memory_queries_answer_as_a_cpu_build(name):
    result, warned = _outcome(gv, name)
    if name in QUERIES:
        assert result[0] == "returns"
    else:
        assert result[0] == "raises"
    if real_torch is not None and not real_torch.cuda.is_available():
        assert (result, warned) == _outcome(real_torch, name)


@needs_torch
@pytest.mark.skipif(gv.cuda.is_available(), reason="a GPU answers from CuPy's pool")
@pytest.mark.parametrize("device", [0, "cuda", "cuda:1", None])
def test_cuda_memory_counters_take_a_device(device):
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved", "max_memory_reserved"):
        assert getattr(gv.cuda, name)(device) == getattr(real_torch.cuda, name)(device) == 0


def test_cuda_is_a_module_with_torchs_names():
    import gradviz.cuda as cuda_module
    assert gv.cuda is cuda_module
    assert gv.cuda.device_count() == (0 if not gv.cuda.is_available() else gv.cuda.device_count())
    gv.cuda.manual_seed(1)
    gv.cuda.manual_seed_all(1)
