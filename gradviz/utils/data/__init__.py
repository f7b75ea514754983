"""gradviz.utils.data: datasets, samplers, collation and the DataLoader, named as torch.utils.data
and laid out in the same modules (dataset, sampler, dataloader, _utils.collate)."""
from ._utils.collate import default_collate, default_convert  # noqa: F401
from ._utils.worker import get_worker_info  # noqa: F401
from .dataloader import DataLoader  # noqa: F401
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split  # noqa: F401
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,  # noqa: F401
                      WeightedRandomSampler)
