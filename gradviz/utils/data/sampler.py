"""torch.utils.data.sampler: the orders a DataLoader draws indices in, and the batches of them."""
from __future__ import annotations

from typing import Iterator, Sequence

from ... import creation, dtypes
from ...random import Generator


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


class WeightedRandomSampler(Sampler):
    """Indices drawn by multinomial with the given weights (class balancing), with replacement or not."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True, generator=None) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        weights = creation.as_tensor(weights, dtype=dtypes.float64)
        if weights.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(weights.shape)}")
        self.weights, self.num_samples, self.replacement, self.generator = weights, num_samples, replacement, generator

    def __iter__(self) -> Iterator[int]:
        yield from self.weights.multinomial(self.num_samples, self.replacement, generator=self.generator).tolist()

    def __len__(self) -> int:
        return self.num_samples


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
