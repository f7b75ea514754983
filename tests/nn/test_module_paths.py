"""torch's module paths under gradviz: each nn layer and each utils.data name lives in the module
torch defines it in (torch.nn.modules.rnn.LSTM -> gradviz.nn.modules.rnn.LSTM), so imports by
those paths work and a model saved whole names its classes where torch's does."""
from __future__ import annotations

import importlib
import io

import pytest

import gradviz
from tests.support.parity import needs_torch, real_torch as torch

pytestmark = needs_torch


def _gradviz_path(torch_module: str) -> str:
    return "gradviz" + torch_module[len("torch"):]


def _public_classes(module):
    return [name for name in dir(module) if name[0].isupper() and isinstance(getattr(module, name), type)]


@pytest.mark.parametrize("name", _public_classes(gradviz.nn))
def test_every_nn_class_lives_where_torchs_does(name):
    ours, theirs = getattr(gradviz.nn, name), getattr(torch.nn, name)
    assert ours.__module__ == _gradviz_path(theirs.__module__)
    assert getattr(importlib.import_module(ours.__module__), name) is ours


@pytest.mark.parametrize("name", [n for n in dir(gradviz.utils.data) if not n.startswith("_")
                                  and callable(getattr(gradviz.utils.data, n))])
def test_every_utils_data_name_lives_where_torchs_does(name):
    ours, theirs = getattr(gradviz.utils.data, name), getattr(torch.utils.data, name)
    assert ours.__module__ == _gradviz_path(theirs.__module__)


def test_imports_by_torchs_module_paths():
    from gradviz.nn.modules.activation import MultiheadAttention, ReLU
    from gradviz.nn.modules.container import Sequential
    from gradviz.nn.modules.rnn import LSTM
    from gradviz.nn.parameter import Parameter
    from gradviz.utils.data._utils.collate import default_collate
    from gradviz.utils.data.dataloader import DataLoader
    from gradviz.utils.data.dataset import TensorDataset
    from gradviz.utils.data.sampler import RandomSampler
    assert (LSTM, Sequential, ReLU, MultiheadAttention, Parameter) == (
        gradviz.nn.LSTM, gradviz.nn.Sequential, gradviz.nn.ReLU, gradviz.nn.MultiheadAttention, gradviz.nn.Parameter)
    assert (DataLoader, TensorDataset, RandomSampler, default_collate) == (
        gradviz.utils.data.DataLoader, gradviz.utils.data.TensorDataset, gradviz.utils.data.RandomSampler,
        gradviz.utils.data.default_collate)


def _build(mod):
    nn = mod.nn
    return nn.ModuleDict({"embed": nn.Embedding(10, 4), "lstm": nn.LSTM(4, 5, batch_first=True),
                          "head": nn.Sequential(nn.Linear(5, 3), nn.ReLU(), nn.Dropout(0.1), nn.LayerNorm(3))})


def test_a_model_saved_whole_names_torchs_module_paths():
    """pickle records a class as (__module__, __qualname__): the modules' and the parameters'."""
    def classes(mod):
        model = _build(mod)
        return {f"{type(o).__module__}.{type(o).__qualname__}" for o in (*model.modules(), *model.parameters())}

    assert classes(gradviz) == {_gradviz_path(n) for n in classes(torch)}


def test_a_model_saved_whole_loads_back_with_its_classes():
    buffer = io.BytesIO()
    model = _build(gradviz)
    gradviz.save(model, buffer)
    buffer.seek(0)
    loaded = gradviz.load(buffer, weights_only=False)
    assert type(loaded["lstm"]) is gradviz.nn.modules.rnn.LSTM
    assert repr(loaded) == repr(model)
    for (name, a), (_, b) in zip(model.state_dict().items(), loaded.state_dict().items()):
        assert gradviz.equal(a, b), name
