"""gradviz.utils: helpers named as torch.utils (data loading, activation checkpointing, hook handles)."""
from . import checkpoint, data, hooks  # noqa: F401
