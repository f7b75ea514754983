"""gradviz: PyTorch's autograd in miniature, made visible.

`import gradviz as torch` runs PyTorch-style autograd code on NumPy (or CuPy) and
prints the same numbers; the engine's events feed diagrams and step-by-step
animations of backward.
"""
import importlib as _importlib
import math as _math

from . import tensor_methods as _tensor_methods  # noqa: F401  (binds Tensor's methods: x.exp(), x.backward(), ...)
from . import autograd, code_lines, events  # noqa: F401
from .autograd import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from .autograd import is_inference_mode_enabled  # noqa: F401
from .autograd.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: F401
from .backend import device, get_default_device, set_default_device  # noqa: F401
from . import accelerator, cuda  # noqa: F401
from . import amp  # noqa: F401  (torch.amp: GradScaler, autocast)
from .amp import autocast, is_autocast_enabled  # noqa: F401

cuda.amp = amp.cuda_amp   # torch.cuda.amp: the deprecated CUDA forms of torch.amp
from .creation import ByteTensor, CharTensor, HalfTensor, ShortTensor  # noqa: F401
from .creation import (BoolTensor, DoubleTensor, FloatTensor, IntTensor, LongTensor, arange, as_tensor,  # noqa: F401
                       empty, empty_like, eye, from_numpy, full, full_like, linspace, manual_seed, ones, ones_like,
                       rand, rand_like, randint, randn, randn_like, seed, tensor, zeros, zeros_like,
                       bernoulli, normal, randint_like, randperm)
from .creation import asarray, logspace, multinomial, scalar_tensor  # noqa: F401
from .creation import inclusive_range as range  # noqa: F401,A001  (torch.range, deprecated)
from . import random  # noqa: F401
from .random import (Generator, default_generator, get_rng_state, initial_seed,  # noqa: F401
                     set_rng_state)
from .dtypes import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format  # noqa: F401
from .dtypes import finfo, iinfo, layout, strided  # noqa: F401
from .dtypes import (Size, bfloat16, bool_ as bool, dtype, float16, float32, float64, get_default_dtype, int8,  # noqa: F401
                     int16, int32, int64, set_default_dtype, uint8)
from .functions import *  # noqa: F401,F403
from .functions import abs, all, any, max, min, pow, round, sum  # noqa: F401  (shadow the builtins, as torch does)
from . import functions as _functions
from .functions import declared as _declared
from .ops import registry as _registry
from ._tensor_str import set_printoptions  # noqa: F401
from .scope import scope  # noqa: F401
from .serialization import load, save  # noqa: F401
from .settings import (are_deterministic_algorithms_enabled, get_float32_matmul_precision,  # noqa: F401
                       get_num_threads, is_deterministic_algorithms_warn_only_enabled,
                       set_float32_matmul_precision, set_num_threads, use_deterministic_algorithms)
from .code_lines import set_source_tracking  # noqa: F401
from .tensor import Tensor  # noqa: F401

half, float, double, short, int, long = float16, float32, float64, int16, int32, int64  # noqa: A001

# torch's constants are Python floats (math's), and newaxis is None, as in NumPy
inf, nan, pi, e = _math.inf, _math.nan, _math.pi, _math.e
newaxis = None

__version__ = "0.1.0"

if code_lines.in_notebook():   # in a notebook, every node remembers the line of the cell that made it
    set_source_tracking(True)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


# The visual layers load on first use, so `import gradviz` stays as light as the engine.
_LAZY = {
    "make_dot": "render", "draw": "render", "Diagram": "render", "render_backend": "render",
    "animate": "player", "Animation": "player", "step": "player", "Stepper": "player",
    "jacobian_view": "player", "animate_jvp": "player", "record_forward": "player",
    "forward_vs_reverse": "player", "animate_hvp": "player",
    "nn": None, "optim": None, "tracing": None, "torch_bridge": None, "utils": None,
    "func": None, "backends": None, "testing": None, "distributions": None, "compiler": None,
    "compile": "compiler",
    # torch's top-level forms of functions of torch.nn.functional (the same signatures)
    "cosine_similarity": "nn.functional", "rms_norm": "nn.functional",
}


def __getattr__(name):
    if name in _LAZY:
        module = _LAZY[name]
        if module is None:
            return _importlib.import_module(f"{__name__}.{name}")
        return getattr(_importlib.import_module(f"{__name__}.{module}"), name)
    raise AttributeError(f"module 'gradviz' has no attribute '{name}'")


def declare_ops(module) -> list:
    """Add the op records of `module` (a module outside gradviz.ops) to the registry and expose each
    as its record declares (gradviz.NAME, Tensor.NAME, out=), as the records of gradviz.ops are at
    import. Returns the names added. A record in gradviz.ops itself needs no call."""
    _registry.add(module)
    added = []
    for name, fn in _declared.exposed().items():
        if name in globals():
            continue
        setattr(_functions, name, fn)
        globals()[name] = fn
        if name in fn.__exposure__.methods:
            setattr(Tensor, name, _declared.as_method(fn))
        added.append(name)
    return added

from . import linalg  # noqa: E402,F401  (torch.linalg)
from . import special  # noqa: E402,F401  (torch.special)
