"""gradviz.utils.hooks, named as torch.utils.hooks: the handle every register_*hook returns."""
from ..autograd.hooks import RemovableHandle

__all__ = ["RemovableHandle"]
