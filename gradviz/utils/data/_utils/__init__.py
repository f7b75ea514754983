"""torch.utils.data._utils: the DataLoader's helpers (collation)."""
from . import collate  # noqa: F401
