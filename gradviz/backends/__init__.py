"""torch.backends: the switches PyTorch gives its compute libraries (cuDNN, cuBLAS, Metal), as
tutorials set and read them.

gradviz computes with NumPy on the CPU and CuPy on a GPU, and uses none of those libraries
directly, so every flag here can be set and read back (with torch's type checks) and changes no
result; `is_available()` / `is_built()` say honestly what gradviz has.
"""
class _Flag:
    """A module attribute that takes only a bool, with torch's message for anything else."""

    def __init__(self, default: bool, setter: str):
        self.value, self.setter = default, setter

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, module, owner=None):
        return self.value if module is not None else self

    def __set__(self, module, value):
        if not isinstance(value, bool):
            raise RuntimeError(f"{self.setter} expects a bool, but got {type(value).__name__}")
        self.value = value


from . import cuda, cudnn, mps  # noqa: E402,F401  (cudnn reads _Flag)
