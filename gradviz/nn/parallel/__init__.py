"""gradviz.nn.parallel: DataParallel, named as torch.nn.parallel."""
from .data_parallel import DataParallel  # noqa: F401
