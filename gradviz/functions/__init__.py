"""The public functions (gradviz.exp, gradviz.matmul, ...): Tensor-level code that checks arguments
the way torch does and runs the op records of gradviz.ops on Tensors (through autograd's apply).

One module here per module of gradviz.ops, by the same name: ops/<m>.py holds the records (forward,
VJP, formulas, JVP kind, exposure; arrays only), functions/<m>.py the functions that call them
(hand-written ones marked @public; gradviz.functions.declared makes the rest from their records).
Importing this package also registers what the records' upper layer adds to them (Tensor-mode VJPs)."""
from . import attention, conv, loss, nnops, pool  # noqa: F401  (the nn functions' modules, registered too)
from . import counting, index, linalg, pointwise, reduce, search, shape  # noqa: F401
from .declared import exposed as _exposed

globals().update(_exposed())   # the functions the op records and @public functions declare: gradviz.NAME

# `from .functions import *` (gradviz/__init__.py) takes the functions, never the modules here,
# whose names (linalg, ...) are also gradviz's own namespaces
__all__ = [name for name, value in list(globals().items())
           if not name.startswith("_") and type(value) is not type(attention) and name != "annotations"]
