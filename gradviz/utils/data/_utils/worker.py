"""torch.utils.data._utils.worker: what a dataset asks about the worker loading it."""
from __future__ import annotations


def get_worker_info():
    """torch's answer in the main process, None: every gradviz loader loads in the calling process,
    so an IterableDataset that shards its items by worker yields them all, as under num_workers=0."""
    return None
