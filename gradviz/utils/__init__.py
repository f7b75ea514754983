"""gradviz.utils: helpers named as torch.utils (data loading, activation checkpointing)."""
from . import checkpoint, data  # noqa: F401
