"""torch.backends: the switches PyTorch gives its compute libraries (cuDNN, cuBLAS, Metal), as
tutorials set and read them.

gradviz computes with NumPy on the CPU and CuPy on a GPU, and uses none of those libraries
directly, so every flag here can be set and read back (with torch's type checks) and changes no
result; `is_available()` / `is_built()` say honestly what gradviz has.
"""
from . import cuda, cudnn, mps  # noqa: F401
