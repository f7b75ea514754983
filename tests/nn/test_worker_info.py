"""utils.data.get_worker_info() and Tensor.is_cpu as torch's: the docs' IterableDataset that shards
its range by worker loads the same items here (gradviz loads in the calling process, where torch's
answer is None)."""
import math

import gradviz
from tests.support.parity import needs_torch, real_torch

pytestmark = needs_torch


def load(torch) -> list:
    data = torch.utils.data

    class Range(data.IterableDataset):
        def __init__(self, start, end):
            super().__init__()
            self.start, self.end = start, end

        def __iter__(self):
            info = data.get_worker_info()
            if info is None:
                return iter(range(self.start, self.end))
            per_worker = int(math.ceil((self.end - self.start) / float(info.num_workers)))
            start = self.start + info.id * per_worker
            return iter(range(start, min(start + per_worker, self.end)))

    loaded = [b.tolist() for b in data.DataLoader(Range(3, 7), batch_size=2)]
    return [loaded, data.get_worker_info(), torch.ones(1).is_cpu, torch.zeros(2, 2).T.is_cpu]


def test_worker_info_and_is_cpu_match_torch():
    assert load(gradviz) == load(real_torch)
