"""torch.backends.cuda: the CUDA switches. gradviz's CUDA device is CuPy, so `is_built()` says
whether CuPy can be imported. `matmul.allow_tf32` and the reduced-precision flags can be set and
read back with torch's defaults and type checks, and change nothing: CuPy's float32 matmuls run
in float32 (TF32 only if CuPy's own CUPY_TF32=1 is set in the environment)."""
from .. import backend


def is_built() -> bool:
    """Can gradviz run on CUDA at all (is CuPy installed)? A GPU may still be missing: see
    gradviz.cuda.is_available()."""
    try:
        backend.cupy()
    except RuntimeError:
        return False
    return True


def _reduction(value, name: str) -> tuple:
    """torch's parsing of allow_{fp16,bf16}_reduced_precision_reduction: a bool, or one or two bools."""
    def ensure_bool(obj, which: str) -> bool:
        if isinstance(obj, bool):
            return obj
        raise TypeError(f"{name} expects a bool for {which}, but got {type(obj)!r}")
    if isinstance(value, bool):
        return value, True
    if isinstance(value, (list, tuple)):
        if not value:
            raise TypeError(f"{name} expects at least one boolean argument")
        if len(value) > 2:
            raise TypeError(f"{name} expects at most two boolean arguments")
        reduced = ensure_bool(value[0], "allow_reduced_precision")
        return (reduced, True) if len(value) == 1 else (reduced, ensure_bool(value[1], "allow_splitk"))
    raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)!r}")


class cuBLASModule:  # noqa: N801  (torch's name)
    """torch.backends.cuda.matmul: cuBLAS's flags, kept and read back (gradviz calls no cuBLAS itself)."""

    def __init__(self):
        object.__setattr__(self, "_flags", {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": (True, True),
                                            "allow_bf16_reduced_precision_reduction": (True, True),
                                            "allow_fp16_accumulation": False})

    def __getattr__(self, name):
        flags = self._flags
        if name in ("allow_tf32", "allow_fp16_accumulation"):
            return flags[name]
        for kind in ("fp16", "bf16"):
            key = f"allow_{kind}_reduced_precision_reduction"
            if name == key:
                return flags[key][0]
            if name == key + "_split_k":
                return flags[key][1]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        flags = self._flags
        if name in ("allow_tf32", "allow_fp16_accumulation"):
            if not isinstance(value, bool):
                setter = "set_allow_tf32_cublas" if name == "allow_tf32" else "set_allow_fp16_accumulation_cublas"
                raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")
            flags[name] = value
        elif name in ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction"):
            flags[name] = _reduction(value, name)
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()
