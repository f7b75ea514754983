"""torch.utils.data: datasets, batching, collation, shuffling and splits, against torch."""
import collections

import numpy as np
import pytest

import gradviz
from gradviz.utils import data

from tests.support.parity import needs_torch, real_torch as torch

if torch is not None:
    import torch.utils.data  # noqa: F401  (torch.utils.data is a submodule torch does not import itself)


def _both(fn):
    """fn(module) under gradviz and under torch."""
    return fn(gradviz), fn(torch)


def _plain(x):
    """A batch as nested Python values with dtype names, comparable across the two libraries."""
    if hasattr(x, "tolist") and hasattr(x, "dtype"):
        return ("tensor", str(x.dtype).replace("gradviz", "torch"), tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x).__name__, [_plain(v) for v in x]
    return x


class Squares:
    """A dataset written the tutorials' way (a Dataset subclass with __len__ and __getitem__)."""

    @staticmethod
    def build(mod, as_dict=False):
        class SquaresDataset(mod.utils.data.Dataset):
            def __len__(self):
                return 7

            def __getitem__(self, i):
                x = mod.tensor([float(i), float(i) ** 2])
                if as_dict:
                    return {"x": x, "label": i % 3, "name": f"s{i}", "w": 0.5 * i}
                return x, i % 3
        return SquaresDataset()


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (7, True), (10, False)])
@pytest.mark.parametrize("as_dict", [False, True])
def test_batches_and_collation_match_torch(batch_size, drop_last, as_dict):
    def batches(mod):
        loader = mod.utils.data.DataLoader(Squares.build(mod, as_dict), batch_size=batch_size, drop_last=drop_last)
        return len(loader), [_plain(b) for b in loader]
    ours, theirs = _both(batches)
    assert ours == theirs


@needs_torch
@pytest.mark.torch
def test_tensor_dataset_and_subset_match_torch():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10) % 2

    def run(mod):
        ds = mod.utils.data.TensorDataset(mod.tensor(x), mod.tensor(y))
        sub = mod.utils.data.Subset(ds, [9, 0, 4, 4])
        loader = mod.utils.data.DataLoader(sub, batch_size=3)
        unbatched = mod.utils.data.DataLoader(ds, batch_size=None)
        return (len(ds), _plain(ds[3]), _plain(ds[2:4]), len(sub), [_plain(b) for b in loader],
                _plain(next(iter(unbatched))), _plain(list(ds + sub)[-1]))
    ours, theirs = _both(run)
    assert ours == theirs
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        data.TensorDataset(gradviz.zeros(3), gradviz.zeros(4))


@needs_torch
@pytest.mark.torch
def test_collate_of_numpy_and_namedtuples_matches_torch():
    Point = collections.namedtuple("Point", "x y")
    samples = [Point(np.float32(i), np.array([i, 2 * i])) for i in range(3)]
    strings = [("a", True, 1.5), ("b", False, 2.5)]

    def run(mod):
        from torch.utils.data import default_collate as torch_collate
        collate = data.default_collate if mod is gradviz else torch_collate
        p = collate(samples)
        return type(p).__name__, _plain(p.x), _plain(p.y), _plain(collate(strings))
    ours, theirs = _both(run)
    assert ours == theirs
    with pytest.raises(RuntimeError, match="each element in list of batch should be of equal size"):
        data.default_collate([[1, 2], [3]])


@needs_torch
@pytest.mark.torch
@pytest.mark.parametrize("with_generator", [False, True])
def test_shuffled_order_and_random_stream_match_torch(with_generator):
    """Same seed, same batches: a pass draws a base seed, a shuffling pass without a generator
    seeds its own from the default stream, then randperm; what is drawn after matches too."""
    def run(mod):
        mod.manual_seed(3)
        g = mod.Generator().manual_seed(11) if with_generator else None
        ds = mod.utils.data.TensorDataset(mod.arange(10))
        loader = mod.utils.data.DataLoader(ds, batch_size=4, shuffle=True, generator=g)
        plain = mod.utils.data.DataLoader(ds, batch_size=5)
        epochs = [[b[0].tolist() for b in loader] for _ in range(2)] + [[b[0].tolist() for b in plain]]
        with_replacement = list(mod.utils.data.RandomSampler(ds, replacement=True, num_samples=40, generator=g))
        split = [list(s.indices) for s in mod.utils.data.random_split(range(10), [0.3, 0.7], generator=g)]
        return epochs, with_replacement, split, mod.rand(3).tolist()
    ours, theirs = run(gradviz), run(torch)
    assert ours == theirs
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        data.DataLoader(data.TensorDataset(gradviz.arange(3)), shuffle=True,
                        sampler=data.SequentialSampler(range(3)))


@needs_torch
@pytest.mark.torch
def test_weighted_sampler_balances_classes_as_torch_draws():
    """A WeightedRandomSampler (one weight per sample, the inverse of its class's count) in a
    DataLoader: the same indices and batches as torch's, with replacement and without, with a
    generator and from the default stream, and its errors."""
    def run(mod):
        mod.manual_seed(5)
        labels = mod.tensor([0] * 8 + [1] * 2)
        weights = (1.0 / mod.bincount(labels).float())[labels]
        ds = mod.utils.data.TensorDataset(mod.arange(10), labels)
        sampler = mod.utils.data.WeightedRandomSampler(weights, num_samples=20)
        batches = [b[1].tolist() for b in mod.utils.data.DataLoader(ds, batch_size=5, sampler=sampler)]
        g = mod.Generator().manual_seed(2)
        without = list(mod.utils.data.WeightedRandomSampler([0.9, 0.4, 0.05, 0.2, 0.3, 0.1], 5, replacement=False,
                                                            generator=g))
        errors = []
        for args in (([1.0], 0), ([1.0], 2, 1), ([[1.0]], 2)):
            try:
                mod.utils.data.WeightedRandomSampler(*args)
            except ValueError as e:
                errors.append(str(e))
        return batches, without, len(sampler), errors, mod.rand(2).tolist()
    ours, theirs = run(gradviz), run(torch)
    assert ours == theirs
    assert len(ours[3]) == 3


@needs_torch
@pytest.mark.torch
def test_random_split_sizes_and_errors_match_torch():
    def run(mod):
        ds = mod.utils.data.TensorDataset(mod.arange(10))
        parts = mod.utils.data.random_split(ds, [0.5, 0.3, 0.2])
        odd = mod.utils.data.random_split(range(7), [0.5, 0.5])
        return [len(p) for p in parts], [len(p) for p in odd]
    ours, theirs = _both(run)
    assert ours == theirs
    parts = data.random_split(range(10), [3, 7])
    assert sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    for mod in (gradviz, torch):
        with pytest.raises(ValueError, match="Sum of input lengths does not equal the length of the input dataset!"):
            mod.utils.data.random_split(range(5), [2, 2])


@needs_torch
@pytest.mark.torch
def test_training_loop_with_loader_optimizer_and_scheduler_matches_torch():
    """A 'Learn the Basics' loop: DataLoader + model + loss + SGD + StepLR, losses against torch."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 3)).astype(np.float32)
    y = (x @ np.array([1.0, -2.0, 0.5], dtype=np.float32) > 0).astype(np.int64)
    w = rng.standard_normal((2, 3)).astype(np.float32) * 0.3
    b = np.zeros(2, dtype=np.float32)

    def train(mod):
        model = mod.nn.Linear(3, 2)
        with mod.no_grad():
            model.weight.copy_(mod.tensor(w))
            model.bias.copy_(mod.tensor(b))
        loader = mod.utils.data.DataLoader(mod.utils.data.TensorDataset(mod.tensor(x), mod.tensor(y)), batch_size=5)
        opt = mod.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
        sched = mod.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        loss_fn = mod.nn.CrossEntropyLoss()
        losses = []
        for _ in range(3):
            for xb, yb in loader:
                loss = loss_fn(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            sched.step()
        return losses
    ours, theirs = _both(train)
    np.testing.assert_allclose(ours, theirs, rtol=2e-5)
