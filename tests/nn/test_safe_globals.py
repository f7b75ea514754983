"""gradviz.serialization.add_safe_globals / safe_globals / get_unsafe_globals_in_checkpoint: a
weights-only load (the default, as torch's since 2.6) of a whole pickled Module allows exactly the
listed classes and refuses the rest in torch's words."""
import io
import pickle

import pytest

import gradviz
from gradviz import serialization
from tests.support.parity import needs_torch, real_torch


@pytest.fixture(autouse=True)
def _clear():
    serialization.clear_safe_globals()
    yield
    serialization.clear_safe_globals()


def _saved(t):
    buffer = io.BytesIO()
    t.save(t.nn.Sequential(t.nn.Linear(2, 2), t.nn.ReLU()), buffer)
    buffer.seek(0)
    return buffer


def _refusal(t, allowed=None) -> str:
    buffer = _saved(t)
    with pytest.raises(pickle.UnpicklingError) as error:
        if allowed is None:
            t.load(buffer)
        else:
            with t.serialization.safe_globals(allowed(t)):
                t.load(buffer)
    return str(error.value)


@needs_torch
@pytest.mark.parametrize("allowed", [None, lambda t: [t.nn.Sequential, t.nn.Linear]], ids=["none", "two of three"])
def test_the_refusal_is_torchs(allowed):
    """The same words, the same global named first; the API it names is the package's own."""
    ours, theirs = _refusal(gradviz, allowed), _refusal(real_torch, allowed)
    ours_line = next(line for line in ours.splitlines() if "WeightsUnpickler error" in line)
    theirs_line = next(line for line in theirs.splitlines() if "WeightsUnpickler error" in line)
    assert ours_line == theirs_line.replace("torch.", "gradviz.")
    assert ours.startswith(theirs.split("(1)")[0]) and ours.endswith(theirs.splitlines()[-1])


def test_allowed_classes_load_and_the_list_is_restored():
    buffer = _saved(gradviz)
    classes = [gradviz.nn.Sequential, gradviz.nn.Linear, gradviz.nn.ReLU]
    with serialization.safe_globals(classes):
        assert serialization.get_safe_globals() == classes
        model = gradviz.load(buffer)
    assert serialization.get_safe_globals() == []
    assert isinstance(model, gradviz.nn.Sequential) and isinstance(model[0], gradviz.nn.Linear)
    assert model(gradviz.ones(1, 2)).shape == (1, 2)
    serialization.add_safe_globals(classes)
    buffer.seek(0)
    assert isinstance(gradviz.load(buffer), gradviz.nn.Sequential)
    serialization.clear_safe_globals()
    buffer.seek(0)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL gradviz.nn.modules.container"):
        gradviz.load(buffer)


def test_an_entry_may_name_its_global():
    buffer = io.BytesIO()
    gradviz.save(gradviz.nn.ReLU(), buffer)
    buffer.seek(0)
    with serialization.safe_globals([(gradviz.nn.ReLU, "gradviz.nn.modules.activation.ReLU")]):
        assert isinstance(gradviz.load(buffer), gradviz.nn.ReLU)


@needs_torch
def test_unsafe_globals_listed_as_torch():
    ours = serialization.get_unsafe_globals_in_checkpoint(_saved(gradviz))
    theirs = real_torch.serialization.get_unsafe_globals_in_checkpoint(_saved(real_torch))
    assert sorted(ours) == sorted(name.replace("torch.", "gradviz.") for name in theirs)
    serialization.add_safe_globals([gradviz.nn.ReLU])
    assert "gradviz.nn.modules.activation.ReLU" not in serialization.get_unsafe_globals_in_checkpoint(_saved(gradviz))
