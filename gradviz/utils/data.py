"""gradviz.utils.data: datasets, samplers, collation and the DataLoader, named as torch.utils.data.

Loading runs in the calling process (num_workers only names torch's option); the batches,
their order, their collation and the random numbers drawn are torch's: each pass over a
loader draws a base seed, and a shuffling pass without a generator seeds its own from the
default stream, then draws randperm(n, generator=g), so the same seed gives the same order.
"""
from __future__ import annotations

import bisect
import collections.abc
import math
import re
import warnings
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .. import creation, dtypes
from ..functions import stack
from ..random import Generator
from ..tensor import Tensor


class Dataset:
    """A map-style dataset: __getitem__(index) and usually __len__."""

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset that is a stream: __iter__ yields the samples."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset):
    """Sample i is (t[i] for each tensor): the tensors share their first dimension."""

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


class Subset(Dataset):
    """The samples of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Datasets one after another."""

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]).tolist())

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx: int):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        which = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[which - 1] if which > 0 else 0
        return self.datasets[which][idx - start]


def random_split(dataset: Dataset, lengths: Sequence, generator=None) -> list[Subset]:
    """Split into non-overlapping Subsets of the given lengths (or fractions of the length)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        n = len(dataset)
        sizes = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(sizes)):   # the remainder goes round-robin from the first subset
            sizes[i % len(sizes)] += 1
        for i, length in enumerate(sizes):
            if length == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
        lengths = sizes
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = creation.randperm(sum(lengths), generator=generator).tolist()
    subsets, offset = [], 0
    for length in lengths:
        offset += length
        subsets.append(Subset(dataset, indices[offset - length:offset]))
    return subsets


def _draw_seed(generator) -> int:
    """torch's seed draw: torch.empty((), dtype=torch.int64).random_(generator=generator).item()."""
    return int(creation.empty((), dtype=dtypes.int64).random_(generator=generator).item())


# -- samplers: iterables of indices (or of lists of indices) -----------------------------------------
class Sampler:
    def __init__(self, data_source=None) -> None:
        pass

    def __iter__(self) -> Iterator:
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh permutation (randperm) of the indices at each pass."""

    def __init__(self, data_source, replacement: bool = False, num_samples: int | None = None,
                 generator=None) -> None:
        self.data_source, self.replacement, self._num_samples, self.generator = (data_source, replacement,
                                                                                 num_samples, generator)
        if not isinstance(self.replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n = len(self.data_source)
        g = self.generator
        if g is None:   # torch seeds a private generator from the default stream at each pass
            g = Generator().manual_seed(_draw_seed(None))
        if self.replacement:
            for _ in range(self.num_samples // 32):
                yield from creation.randint(0, n, (32,), dtype=dtypes.int64, generator=g).tolist()
            yield from creation.randint(0, n, (self.num_samples % 32,), dtype=dtypes.int64, generator=g).tolist()
        else:
            for _ in range(self.num_samples // n):
                yield from creation.randperm(n, generator=g).tolist()
            yield from creation.randperm(n, generator=g).tolist()[:self.num_samples % n]

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    def __init__(self, indices: Sequence[int], generator=None) -> None:
        self.indices, self.generator = indices, generator

    def __iter__(self) -> Iterator[int]:
        for i in creation.randperm(len(self.indices), generator=self.generator).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """Groups a sampler's indices into lists of batch_size (the last one shorter unless drop_last)."""

    def __init__(self, sampler, batch_size: int, drop_last: bool) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list = []
        for idx in self.sampler:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


# -- collation ---------------------------------------------------------------------------------------
_NOT_COLLATABLE = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
_STRING_ARRAY = re.compile(r"[SaUO]")


def default_collate(batch: list) -> Any:
    """Stack a list of samples into a batch, recursing into tuples, lists and dicts as torch does."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if type(elem).__module__ == "numpy" and type(elem).__name__ not in ("str_", "string_"):
        if type(elem).__name__ in ("ndarray", "memmap"):
            if _STRING_ARRAY.search(elem.dtype.str) is not None:
                raise TypeError(_NOT_COLLATABLE.format(elem.dtype))
            return default_collate([creation.as_tensor(b) for b in batch])
        if elem.shape == ():
            return creation.as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return creation.tensor(batch)
    if isinstance(elem, float):
        return creation.tensor(batch, dtype=dtypes.float64)
    if isinstance(elem, int):
        return creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated) if type(elem) is not dict else collated
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):   # a namedtuple
        return type(elem)(*(default_collate(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        if isinstance(elem, tuple):
            return [default_collate(samples) for samples in transposed]
        try:
            return type(elem)([default_collate(samples) for samples in transposed])
        except TypeError:
            return [default_collate(samples) for samples in transposed]
    raise TypeError(_NOT_COLLATABLE.format(type(elem)))


def default_convert(data: Any) -> Any:
    """Without batching: NumPy arrays become tensors, containers are converted inside."""
    if isinstance(data, np.ndarray) and _STRING_ARRAY.search(data.dtype.str) is None:
        return creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return {key: default_convert(v) for key, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data


class DataLoader:
    """Iterates a dataset in batches: indices from a sampler, samples collated by collate_fn."""

    def __init__(self, dataset: Dataset, batch_size: int | None = 1, shuffle: bool | None = None, sampler=None,
                 batch_sampler=None, num_workers: int = 0, collate_fn: Callable | None = None,
                 pin_memory: bool = False, drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers: bool = False, pin_memory_device: str = "", in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable "
                             "multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        self.dataset, self.num_workers, self.pin_memory, self.timeout = dataset, num_workers, pin_memory, timeout
        self.worker_init_fn, self.generator, self.prefetch_factor = worker_init_fn, generator, prefetch_factor
        self.persistent_workers = persistent_workers
        iterable = isinstance(dataset, IterableDataset)
        if iterable:
            if shuffle not in (False, None):
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                 f"shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                 f"sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, but "
                                 f"got batch_sampler={batch_sampler}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with "
                             "drop_last")
        if sampler is None and not iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self._iterable = iterable
        if collate_fn is None:
            collate_fn = default_collate if batch_size is not None or batch_sampler is not None else default_convert
        self.collate_fn = collate_fn

    def __iter__(self) -> Iterator:
        indices = iter(self.batch_sampler if self.batch_sampler is not None else self.sampler) \
            if not self._iterable else None
        self._base_seed = _draw_seed(self.generator)   # torch draws it for its workers, even with none
        return self._batches(indices)

    def _batches(self, indices) -> Iterator:
        dataset, collate = self.dataset, self.collate_fn
        if self._iterable:
            stream = iter(dataset)
            if self.batch_size is None:
                yield from (collate(sample) for sample in stream)
                return
            while True:
                batch = [s for _, s in zip(range(self.batch_size), stream)]
                if not batch or (self.drop_last and len(batch) < self.batch_size):
                    return
                yield collate(batch)
        elif self.batch_sampler is None:
            for index in indices:
                yield collate(dataset[index])
        else:
            for batch in indices:
                yield collate([dataset[i] for i in batch])

    def __len__(self) -> int:
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
            return n
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)
