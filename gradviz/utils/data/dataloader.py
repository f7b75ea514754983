"""torch.utils.data.dataloader: the DataLoader.

Loading runs in the calling process (num_workers only names torch's option); the batches,
their order, their collation and the random numbers drawn are torch's: each pass over a
loader draws a base seed, and a shuffling pass without a generator seeds its own from the
default stream, then draws randperm(n, generator=g), so the same seed gives the same order.
"""
from __future__ import annotations

import math
from typing import Callable, Iterator

from ._utils.collate import default_collate, default_convert
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _draw_seed


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

