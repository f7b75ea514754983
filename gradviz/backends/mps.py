"""torch.backends.mps: Apple's Metal GPUs. gradviz runs on NumPy (CPU) and CuPy (CUDA) only, so
there is no MPS device: both answers are False, on any machine."""


def is_built() -> bool:
    """Is gradviz built with MPS support? No: its GPU arrays are CuPy's (CUDA)."""
    return False


def is_available() -> bool:
    """Can tensors be put on device "mps"? Never in gradviz."""
    return False
